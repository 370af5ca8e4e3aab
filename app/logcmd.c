#include "logcmd.h"

#include <getopt.h>
#include <stdio.h>

#include "strata/log.h"
#include "strata/strata.h"

static const char usage[] =
    "Usage: strata log FILE.h5 [--csv]\n"
    "\n"
    "Prints a convergence log written by strata run (run.log = FILE.h5): the\n"
    "iteration table and, for a finished run, the summary, exactly as the run\n"
    "printed them; with --csv one line per iteration with every column of the\n"
    "log at full precision (a vector integrand's components, their covariances\n"
    "included; nan where the table prints -).  The log may be read while the\n"
    "run writes it.\n";

int strata_log_command(int argc, char **argv)
{
  static const struct option opts[] = {
      {"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  int csv = 0, c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "ch", opts, NULL)) != -1) {
    switch (c) {
    case 'c': csv = 1; break;
    case 'h': fputs(usage, stdout); return 0;
    default: fprintf(stderr, "strata: bad option for log (try 'strata log --help')\n"); return 2;
    }
  }
  if (argc - optind != 1) {
    fprintf(stderr, "strata: log takes one FILE.h5 (try 'strata log --help')\n");
    return 2;
  }
  if (strata_log_print(argv[optind], csv, stdout) != STRATA_OK) {
    fprintf(stderr, "strata: %s\n", strata_last_error());
    return 1;
  }
  return 0;
}
