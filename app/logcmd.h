/* `strata log FILE.h5 [--csv]`: a convergence log as the table the run
 * printed, or as CSV. */
#ifndef STRATA_LOGCMD_H
#define STRATA_LOGCMD_H

/* argv[0] is "log".  Returns the exit status: 0, 1 (a file that cannot be
 * read as a strata log) or 2 (usage). */
int strata_log_command(int argc, char **argv);
#endif
