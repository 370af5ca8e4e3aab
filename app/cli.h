/* What the command line decides with the ranks: agreeing on errors and exit
 * statuses, the job's integrand. */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H
#include "job.h"
#include "world.h"

/* What strata_cli_agree returns besides 0 (go on) and exit statuses 1 and 2. */
#define STRATA_CLI_DONE 10     /* --help or --print-job: printed, exit 0 */
#define STRATA_CLI_STOPPED 100 /* + the signal that arrived before the run */
/* A status of this rank alone: another rank's failure (STRATA_EPEER from a
 * collective call), which that rank reports. */
#define STRATA_CLI_FOLLOWS 11

/* Every rank's status made every rank's, at each point where a rank may
 * have failed alone (a file only it could not read, a value only it was
 * given): status is this rank's exit status (0: it can go on), with its
 * message in app_message().  Returns 0 when every rank can go on;
 * otherwise the lowest failing rank printed its message, once for the job,
 * naming itself when the others did not fail (and all_acted: every rank
 * tried what failed), and every rank gets its status.  A stop signal
 * received before the run is a status that outranks errors
 * (STRATA_CLI_STOPPED + sig): what it interrupted failed because of it. */
int strata_cli_agree(strata_world *w, int status, int all_acted);
/* The status of a collective library call's outcome rc, for strata_cli_agree. */
int strata_cli_status(int rc);
/* A user integrand (integrand = file:PATH or inline): reads its source and
 * loads its tables, on this rank alone, and sets pr->source.  A no-op for
 * built-ins.  Errors are this rank's: agree on them. */
int strata_cli_integrand_load(const strata_job *job, strata_problem *pr, strata_source **src,
                              strata_table_set **tables);
/* Compiles it for the CPU (rank 0 first, then the others find it in the
 * cache) and completes pr.  Agreed: returns like strata_cli_agree. */
int strata_cli_integrand_build(strata_world *w, int verbose, strata_problem *pr,
                               strata_source *src);
void strata_cli_integrand_free(strata_source *src, strata_table_set *tables);
/* Prints "strata: MSG" (with the rank in a multi-rank job) and returns the
 * exit status 1; in a multi-rank job it ends all ranks, since the others may
 * be waiting for this one. */
int strata_cli_fail(strata_world *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
