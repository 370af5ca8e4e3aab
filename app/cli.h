/* Pieces of the command line that decide how a job runs. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H
#include "backend.h"
#include "comm.h"
#include "job.h"
#include "world.h"

/* Starts what the backend will need and takes long to make (a GPU's
 * context) in the background, so that it overlaps compiling the integrand
 * and opening files. */
void strata_cli_prepare_backend(const strata_job *job, const strata_comm *comm);
/* The backend run.backend asks for, for the problem pr (the library's
 * choice, strata_backend_choose); verbose says what it picked. */
int strata_cli_backend(const strata_job *job, const strata_problem *pr, strata_comm *comm,
                       int verbose, strata_backend **out);
/* Several ranks, every one on a GPU: their devices' exchange (NCCL unless
 * STRATA_NCCL=0 or built without it).  Collective; call it only once every
 * rank has its backend.  *how and *setup_s say which path and what its
 * set-up took (NULL and 0 when there is none). */
int strata_cli_peers(strata_comm *comm, strata_backend *be, int verbose, const char **how,
                     double *setup_s);
struct strata_source;
struct strata_table_set;

/* What strata_cli_agree returns besides 0 (go on) and exit statuses 1 and 2. */
#define STRATA_CLI_DONE 10     /* --help or --print-job: printed, exit 0 */
#define STRATA_CLI_STOPPED 100 /* + the signal that arrived before the run */

/* Every rank's status made every rank's, at each point where a rank may
 * have failed alone (a file only it could not read, a value only it was
 * given): status is this rank's exit status (0: it can go on), with its
 * message in strata_last_error().  Returns 0 when every rank can go on;
 * otherwise the lowest failing rank printed its message, once for the job,
 * naming itself when the others did not fail (and all_acted: every rank
 * tried what failed), and every rank gets its status.  A stop signal
 * received before the run is a status that outranks errors
 * (STRATA_CLI_STOPPED + sig): what it interrupted failed because of it. */
int strata_cli_agree(strata_comm *comm, int status, int all_acted);
/* Every rank runs the job of rank 0: its definition (strata_jobdef_text,
 * which hashes user code and tables) and check_ranks, or every rank stops
 * with one message naming the first rank that differs and the first key.
 * Agreed like strata_cli_agree. */
int strata_cli_same_job(strata_comm *comm, const strata_job *job, const strata_problem *pr);
/* A user integrand (integrand = file:PATH or inline): reads its source and
 * loads its tables, on this rank alone, and sets pr->source.  A no-op for
 * built-ins.  Errors are this rank's: agree on them. */
int strata_cli_integrand_load(const strata_job *job, strata_problem *pr,
                              struct strata_source **src, struct strata_table_set **tables);
/* Compiles it for the CPU (rank 0 first, then the others find it in the
 * cache) and completes pr.  Agreed: returns like strata_cli_agree. */
int strata_cli_integrand_build(strata_comm *comm, int verbose, strata_problem *pr,
                               struct strata_source *src);
void strata_cli_integrand_free(struct strata_source *src, struct strata_table_set *tables);
/* Prints "strata: MSG" (with the rank in a multi-rank job) and returns the
 * exit status 1; in a multi-rank job it ends all ranks, since the others may
 * be waiting for this one. */
int strata_cli_fail(strata_comm *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
