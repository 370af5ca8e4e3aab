/* Which backend a run gets, the same for the program (run.backend) and the
 * public integrator (strata_backend_kind). */
#ifndef STRATA_BACKEND_CHOICE_H
#define STRATA_BACKEND_CHOICE_H
#include "backend.h"
#include "comm.h"
#include "strata/strata.h"

/* A backend of kind for the problem pr on this rank: cuda where asked, or
 * for auto where a device is visible and the integrand can run there
 * (built-ins and sources, not a function of the caller's); else the CPU's
 * nthreads threads.  Ranks on a node share its GPUs round-robin.  *why
 * (may be NULL) receives, for auto on the CPU, the reason in parentheses,
 * else "".  An error's message begins "backend cuda: " (or the kind
 * refused): the program puts its key in front. */
int strata_backend_choose(const strata_problem *pr, int nthreads, strata_backend_kind kind,
                          const strata_comm *comm, strata_backend **out, const char **why);
/* With -v (strata_settings.verbose): this rank's line on stderr, its host
 * and backend (the GPU, or the threads and the CPUs it may use, with why
 * from strata_backend_choose). */
void strata_backend_say(const strata_backend *be, int nthreads, strata_backend_kind kind,
                        const strata_comm *comm, const char *host, const char *why);
#endif
