#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "table.h"
#include "usercode.h"

#ifdef HAVE_CUDA
#include "backend_cuda.h"
#endif

void strata_cli_prepare_backend(const strata_job *job, const strata_comm *comm)
{
#ifdef HAVE_CUDA
  if (strcmp(job->backend, "cpu")) strata_cuda_prepare(comm->local_rank);
#else
  (void)job;
  (void)comm;
#endif
}

int strata_cli_backend(const strata_job *job, strata_comm *comm, int verbose,
                       strata_backend **out)
{
  *out = NULL;
  const char *why = "";
#ifdef HAVE_CUDA
  int ngpu = strcmp(job->backend, "cpu") ? strata_cuda_device_count() : 0;
  if (!strcmp(job->backend, "cuda") || (!strcmp(job->backend, "auto") && ngpu > 0)) {
    /* Ranks on a node share its GPUs round-robin; under Slurm's
     * --gpus-per-task each rank sees only its own, device 0. */
    int dev = ngpu > 0 ? comm->local_rank % ngpu : 0;
    *out = strata_backend_cuda_new(dev);
    if (!*out) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s: run.backend = %s: %s", job->source, job->backend,
               strata_last_error());
      return strata_error(STRATA_EBACKEND, "%s", msg);
    }
    if (verbose) {
      char host[256], gpu[512];
      strata_comm_where(comm, host, sizeof host);
      strata_cuda_describe(*out, gpu, sizeof gpu);
      fprintf(stderr, "strata: rank %d of %d on %s: backend cuda%s, %s\n", comm->rank,
              comm->size, host, !strcmp(job->backend, "auto") ? " (auto)" : "", gpu);
    }
    return STRATA_OK;
  }
  why = " (auto: no CUDA device visible)";
#else
  if (!strcmp(job->backend, "cuda"))
    return strata_error(STRATA_EBACKEND, "%s: run.backend = cuda: this strata was built "
                        "without CUDA (configure --with-cuda)", job->source);
  why = " (auto: built without CUDA)";
#endif
  if (verbose) {
    char host[256];
    strata_comm_where(comm, host, sizeof host);
    fprintf(stderr, "strata: rank %d of %d on %s: backend cpu%s\n", comm->rank, comm->size,
            host, !strcmp(job->backend, "auto") ? why : "");
  }
  *out = strata_backend_cpu_new(job->p.nthreads);
  return *out ? STRATA_OK : STRATA_ENOMEM;
}

int strata_cli_fail(strata_comm *comm, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (comm->size > 1) {
    fprintf(stderr, "strata: rank %d: %s\n", comm->rank, msg);
    fflush(stderr);
    strata_comm_abort(comm, 1);
  }
  fprintf(stderr, "strata: %s\n", msg);
  return 1;
}

/* The job's tables, loaded on every rank (each reads the files itself: no
 * broadcast of data through the communicator), named in the source. */
static int strata_cli_tables(const strata_job *job, strata_source *src, strata_problem *pr,
                             strata_table_set **tables)
{
  if (!job->tables[0]) return STRATA_OK;
  static strata_table_spec spec[STRATA_MAX_TABLES];
  char where[STRATA_PATH_MAX + 32];
  snprintf(where, sizeof where, "%s: integral.tables", job->source);
  int n = 0;
  int rc = strata_tables_parse(job->tables, spec, STRATA_MAX_TABLES, &n, where);
  for (int i = 0; rc == STRATA_OK && i < n; i++) {
    char path[STRATA_PATH_MAX];
    strata_job_path(job, spec[i].file, path, sizeof path);
    snprintf(spec[i].file, sizeof spec[i].file, "%s", path);
  }
  if (rc == STRATA_OK) rc = strata_tables_load(spec, n, tables);
  if (rc != STRATA_OK) {
    char msg[2 * STRATA_PATH_MAX];
    snprintf(msg, sizeof msg, "%s", strata_last_error());
    if (strncmp(msg, where, strlen(where)))
      return strata_error(rc, "%s: %s", where, msg);
    return rc;
  }
  rc = strata_source_set_tables(src, strata_tables_names(*tables), n);
  src->tables_hash = strata_tables_hash(*tables);
  pr->tables = strata_tables_array(*tables);
  pr->ntables = n;
  return rc;
}

/* Rank 0's status reaches every rank; then every rank's failure does. */
static int agree(strata_comm *comm, int failed)
{
  double f = failed ? 1.0 : 0.0;
  if (comm->size > 1 && comm->allreduce_sum(comm, &f, 1) != STRATA_OK) return 1;
  return f > 0.0;
}

static int build_source(const strata_job *job, strata_comm *comm, int verbose,
                        strata_source *src)
{
  /* Rank 0 compiles alone first: a job of many ranks then compiles once
   * and the others load the result from the cache (or, on a node that does
   * not share the cache directory, compile their own). */
  int rc = comm->rank == 0 ? strata_source_build_cpu(src, verbose) : STRATA_OK;
  if (agree(comm, rc != STRATA_OK)) {
    if (comm->rank != 0) strata_error(STRATA_EINVAL, "rank 0 could not compile %s", src->origin);
    return rc != STRATA_OK ? rc : STRATA_EINVAL;
  }
  if (comm->rank != 0) rc = strata_source_build_cpu(src, 0);
  if (agree(comm, rc != STRATA_OK)) {
    if (rc != STRATA_OK) fprintf(stderr, "strata: rank %d: %s\n", comm->rank, strata_last_error());
    return strata_error(STRATA_EINVAL, "%s: a rank could not build the integrand (see above)",
                        job->source);
  }
  if (verbose && comm->rank == 0)
    fprintf(stderr, "strata: integrand %s from %s: %s for the CPU in %.3f s\n", src->function,
            src->origin, src->cpu_cached ? "loaded from the cache" : "compiled", src->cpu_build_s);
  return STRATA_OK;
}

int strata_cli_integrand(const strata_job *job, strata_comm *comm, int verbose,
                         strata_problem *pr, strata_source **srcp, strata_table_set **tables)
{
  *srcp = NULL;
  *tables = NULL;
  if (!strata_job_user_integrand(job)) return STRATA_OK;
  int extended = pr->ncomp > 1 || job->tables[0] || job->form == STRATA_FORM_EXTENDED;
  strata_source *src = NULL;
  int rc;
  if (!strcmp(job->integrand, "inline")) {
    char shown[STRATA_PATH_MAX + 32];
    snprintf(shown, sizeof shown, "%s: integral.body", job->source);
    rc = strata_source_from_body(job->body, shown, extended, pr->ncomp, &src);
  } else {
    char path[STRATA_PATH_MAX];
    strata_job_path(job, job->integrand + 5, path, sizeof path);
    rc = strata_source_from_file(path, path, job->function, extended, pr->ncomp, &src);
    if (rc != STRATA_OK) {
      char msg[2 * STRATA_PATH_MAX];
      snprintf(msg, sizeof msg, "%s: integral.integrand = %s: %s", job->source, job->integrand,
               strata_last_error());
      return strata_error(rc, "%s", msg);
    }
  }
  if (rc == STRATA_OK) rc = strata_cli_tables(job, src, pr, tables);
  if (rc == STRATA_OK) rc = build_source(job, comm, verbose, src);
  if (rc != STRATA_OK) {
    strata_source_free(src);
    return rc;
  }
  pr->f = src->f;
  pr->fv = src->fv;
  pr->source = src;
  *srcp = src;
  return STRATA_OK;
}

void strata_cli_integrand_free(strata_source *src, strata_table_set *tables)
{
  strata_tables_free(tables);
  strata_source_free(src);
}
