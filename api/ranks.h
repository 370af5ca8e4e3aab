/* What every rank must agree on before a run: the same job. */
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
#endif
