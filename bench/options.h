/* Values of the benchmarks' command-line options (getopt_long's optarg):
 * the whole argument must be the value, inside the option's range, or the
 * program ends with one line naming the option and the value, exit
 * status 2. */
#ifndef STRATA_BENCH_OPTIONS_H
#define STRATA_BENCH_OPTIONS_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

/* Ends the program over the current option's value: "PROG: --NAME VALUE:
 * WHY". */
static inline _Noreturn void refuse_opt(const char *prog, const char *name, const char *why)
{
  fprintf(stderr, "%s: --%s %s: %s\n", prog, name, optarg, why);
  exit(2);
}

/* The current option's value as a number in [lo, hi] (so not NaN, not an
 * infinity unless hi is one); want says what it must be. */
static inline double number_opt(const char *prog, const char *name, double lo, double hi,
                                const char *want)
{
  char *end;
  double v = strtod(optarg, &end);
  if (end == optarg || *end != '\0' || !(v >= lo && v <= hi)) refuse_opt(prog, name, want);
  return v;
}

/* The current option's value as a whole number in base 10 in [lo, hi]. */
static inline long whole_opt(const char *prog, const char *name, long lo, long hi)
{
  char *end;
  long v = strtol(optarg, &end, 10);
  if (end == optarg || *end != '\0' || v < lo || v > hi) {
    char want[64];
    snprintf(want, sizeof want, "a whole number in %ld..%ld", lo, hi);
    refuse_opt(prog, name, want);
  }
  return v;
}

#endif
