/* Pieces of the command line that decide how a job runs. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H
#include "backend.h"
#include "comm.h"
#include "job.h"

/* The backend the job asks for; auto says what it picked when verbose. */
int strata_cli_backend(const strata_job *job, strata_comm *comm, int verbose,
                       strata_backend **out);
/* Prints "strata: MSG" (with the rank in a multi-rank job) and returns the
 * exit status 1; in a multi-rank job it ends all ranks, since the others may
 * be waiting for this one. */
int strata_cli_fail(strata_comm *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#endif
