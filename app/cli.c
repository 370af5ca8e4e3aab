#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message.h"
#include "stop.h"

int strata_cli_fail(strata_world *w, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  strata_stop_guard_exit(NULL);
  if (w->size > 1) {
    fprintf(stderr, "strata: rank %d: %s\n", w->rank, msg);
    fflush(stderr);
    strata_world_abort(w, 1);
  }
  fprintf(stderr, "strata: %s\n", msg);
  return 1;
}

int strata_cli_status(int rc)
{
  if (rc == STRATA_OK) return 0;
  if (rc == STRATA_EPEER) return STRATA_CLI_FOLLOWS;
  app_take_error(rc);
  return 1;
}

/* The speaker's pass: 0 a stop, 1 an error of its own, 2 --help or
 * --print-job, 3 following another rank's error (none spoke: the last
 * resort, never expected). */
static int pass_of(int st)
{
  if (st > STRATA_CLI_STOPPED) return 0;
  if (st > 0 && st < STRATA_CLI_DONE) return 1;
  if (st == STRATA_CLI_DONE) return 2;
  if (st == STRATA_CLI_FOLLOWS) return 3;
  return -1;
}

int strata_cli_agree(strata_world *w, int status, int all_acted)
{
  /* Every rank's status, so that every rank knows which one speaks and
   * leaves with the same exit status: the lowest rank that was stopped,
   * else the lowest with an error, else one that is done. */
  const int n = w->size;
  /* A signal also makes what it interrupted fail (a compile it ended):
   * the stop is the news, not that failure. */
  if (strata_stop_requested()) status = STRATA_CLI_STOPPED + strata_stop_requested();
  int *all = calloc((size_t)n, sizeof *all);
  if (!all || strata_world_allgather(w, status, all) != 0) {
    const char *why = all ? "communication failed" : "out of memory";
    free(all);
    /* Where the others may be waiting in the gather: end them all. */
    return strata_cli_fail(w, "cannot agree with the other ranks (%s)", why);
  }
  int speaker = -1, failed = 0, any = 0;
  for (int pass = 0; pass < 4 && speaker < 0; pass++)
    for (int r = 0; r < n && speaker < 0; r++)
      if (pass_of(all[r]) == pass) speaker = r;
  for (int r = 0; r < n; r++) {
    any += all[r] != 0;
    failed += all[r] != 0 && all[r] != STRATA_CLI_FOLLOWS;
  }
  int agreed = speaker < 0 ? 0 : all[speaker];
  free(all);
  if (speaker < 0) return 0;
  if (agreed > STRATA_CLI_STOPPED) return agreed;
  if (agreed == STRATA_CLI_DONE) {
    /* --help or --print-job on some ranks only: the others cannot run alone. */
    if (any == n && failed == n) return STRATA_CLI_DONE;
    if (w->rank == speaker)
      fprintf(stderr, "strata: rank %d: --help and --print-job end the run, given to some ranks "
              "only\n", speaker);
    return 2;
  }
  if (agreed == STRATA_CLI_FOLLOWS) agreed = 1;
  if (w->rank == speaker) {
    if (n > 1 && all_acted && failed < n)
      fprintf(stderr, "strata: rank %d: %s\n", speaker, app_message());
    else
      fprintf(stderr, "strata: %s\n", app_message());
    fflush(stderr);
  }
  return agreed;
}

int strata_cli_integrand_load(const strata_job *job, strata_problem *pr, strata_source **srcp,
                              strata_table_set **tables)
{
  *srcp = NULL;
  *tables = NULL;
  if (!strata_job_user_integrand(job)) return STRATA_OK;
  int extended = pr->ncomp > 1 || job->tables[0] || job->form == STRATA_FORM_EXTENDED;
  strata_source *src = NULL;
  int rc;
  if (!strcmp(job->integrand, "inline")) {
    char shown[STRATA_JOB_PATH_MAX + 32];
    snprintf(shown, sizeof shown, "%s: integral.body", job->source);
    rc = strata_source_from_body(job->body, shown, extended, pr->ncomp, &src);
    if (rc != STRATA_OK) return app_take_error(rc);
  } else {
    char path[STRATA_JOB_PATH_MAX];
    strata_job_path(job, job->integrand + 5, path, sizeof path);
    rc = strata_source_from_file(path, path, job->function, extended, pr->ncomp, &src);
    if (rc != STRATA_OK)
      return app_error(rc, "%s: integral.integrand = %s: %s", job->source, job->integrand,
                       strata_last_error());
  }
  /* The job's tables, loaded on every rank (each reads the files itself: no
   * broadcast of data through the communicator), named in the source. */
  if (job->tables[0]) {
    char where[STRATA_JOB_PATH_MAX + 32], dir[STRATA_JOB_PATH_MAX];
    snprintf(where, sizeof where, "%s: integral.tables", job->source);
    strata_job_dir(job, dir, sizeof dir);
    rc = strata_tables_read(job->tables, dir, where, tables);
    if (rc == STRATA_OK) rc = strata_problem_set_tables(pr, src, *tables);
    if (rc != STRATA_OK) {
      app_take_error(rc);
      strata_source_free(src);
      strata_tables_free(*tables);
      *tables = NULL;
      return rc;
    }
  }
  /* The definition the ranks compare hashes the code and the tables. */
  pr->source = src;
  *srcp = src;
  return STRATA_OK;
}

int strata_cli_integrand_build(strata_world *w, int verbose, strata_problem *pr,
                               strata_source *src)
{
  /* Every rank takes part in every agreement, with code to build or not:
   * ranks given different jobs (a built-in here, user code there) must
   * meet in the same collectives until the integrator tells them apart.
   * Rank 0 compiles alone first: a job of many ranks then compiles once
   * and the others load the result from the cache (or, on a node that does
   * not share the cache directory, compile their own). */
  int rc = w->rank == 0 && src ? strata_source_build(src, verbose) : STRATA_OK;
  int st = strata_cli_agree(w, strata_cli_status(rc), 0);
  if (st != 0) return st;
  if (w->rank != 0 && src) rc = strata_source_build(src, 0);
  st = strata_cli_agree(w, strata_cli_status(rc), 1);
  if (st != 0 || !src) return st;
  if (verbose && w->rank == 0) {
    char line[4400];
    strata_source_describe(src, line, sizeof line);
    fprintf(stderr, "strata: %s\n", line);
  }
  /* Built: this only completes pr. */
  rc = strata_problem_set_source(pr, src);
  return rc == STRATA_OK ? 0 : strata_cli_fail(w, "%s", strata_last_error());
}

void strata_cli_integrand_free(strata_source *src, strata_table_set *tables)
{
  strata_tables_free(tables);
  strata_source_free(src);
}
