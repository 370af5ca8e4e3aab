/* How the ranks agree: on a job before it runs, and on every outcome that
 * one rank may meet alone.  The one place where the library's collective
 * calls make a failure every rank's, so that no rank waits for another in
 * a collective it will never reach (the program's own usage errors, before
 * any integrator exists, are app/cli.c's). */
#ifndef STRATA_RANKS_H
#define STRATA_RANKS_H
#include "comm.h"
#include "strata/strata.h"

/* Whether this rank runs rank 0's job: its definition (strata_jobdef_text,
 * which hashes user code and tables), the keys that only decide when to
 * stop, and check_ranks.  Collective.  An error names name (the job file,
 * or the library's caller) and the first key that differs, with both
 * values; STRATA_ECOMM where rank 0's definition did not arrive.  Every
 * rank gets its own outcome: the caller agrees on them. */
int strata_ranks_same_job(strata_comm *comm, const strata_problem *pr, const strata_params *p,
                          int check_ranks, const char *name);

/* Any rank's failure made every rank's: a rank returns its own rc, the
 * ranks that did not fail STRATA_EPEER (their message says how many others
 * failed), and all STRATA_ECOMM where the sum itself failed. */
int strata_ranks_agree(strata_comm *comm, int rc);
/* Rank 0's outcome rc (what only rank 0 can know: its files) made every
 * rank's, with its message, and in the same sum a count every rank adds
 * to (count may be NULL).  The other ranks' message points to rank 0's
 * unless with_message.  *lost (may be NULL) is set when the ranks could
 * not be reached (STRATA_ECOMM, this rank's alone). */
int strata_ranks_follow_root(strata_comm *comm, int rc, double *count, int with_message,
                             int *lost);
#endif
