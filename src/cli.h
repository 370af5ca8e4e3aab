/* Pieces of the command line that decide how a job runs. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H
#include "backend.h"
#include "comm.h"
#include "job.h"

/* The backend the job asks for; auto says what it picked when verbose. */
/* Starts what the backend will need and takes long to make (a GPU's
 * context) in the background, so that it overlaps compiling the integrand
 * and opening files. */
void strata_cli_prepare_backend(const strata_job *job, const strata_comm *comm);
int strata_cli_backend(const strata_job *job, strata_comm *comm, int verbose,
                       strata_backend **out);
struct strata_source;
struct strata_table_set;
/* A user integrand (integrand = file:PATH or inline): compiles it for the
 * CPU (rank 0 first, then the others find it in the cache), loads its
 * tables, and completes pr.  A no-op for built-ins.  Errors are agreed:
 * every rank returns the failure, rank 0 holds the message. */
int strata_cli_integrand(const strata_job *job, strata_comm *comm, int verbose,
                         strata_problem *pr, struct strata_source **src,
                         struct strata_table_set **tables);
void strata_cli_integrand_free(struct strata_source *src, struct strata_table_set *tables);
/* Prints "strata: MSG" (with the rank in a multi-rank job) and returns the
 * exit status 1; in a multi-rank job it ends all ranks, since the others may
 * be waiting for this one. */
int strata_cli_fail(strata_comm *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
