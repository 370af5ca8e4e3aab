#include "cli.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend_choice.h"
#include "ranks.h"
#include "error.h"
#include "jobdef.h"
#include "stop.h"
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

int strata_cli_backend(const strata_job *job, const strata_problem *pr, strata_comm *comm,
                       int verbose, strata_backend **out)
{
  strata_backend_kind kind = !strcmp(job->backend, "cuda")  ? STRATA_BACKEND_CUDA
                             : !strcmp(job->backend, "cpu") ? STRATA_BACKEND_CPU
                                                            : STRATA_BACKEND_AUTO;
  const char *why = "";
  int rc = strata_backend_choose(pr, job->p.nthreads, kind, comm, out, &why);
  if (rc != STRATA_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: run.backend = %s: %s", job->source, job->backend,
             strata_last_error());
    return strata_error(STRATA_EBACKEND, "%s", msg);
  }
  if (!verbose) return STRATA_OK;
  char host[256];
  strata_comm_where(comm, host, sizeof host);
#ifdef HAVE_CUDA
  if (!strcmp((*out)->name, "cuda")) {
    char gpu[512];
    strata_cuda_describe(*out, gpu, sizeof gpu);
    fprintf(stderr, "strata: rank %d of %d on %s: backend cuda%s, %s\n", comm->rank,
            comm->size, host, kind == STRATA_BACKEND_AUTO ? " (auto)" : "", gpu);
    return STRATA_OK;
  }
#endif
  /* The CPUs this rank may run on: a launcher that binds a rank to fewer
   * cores than it has threads (srun without --cpus-per-task since Slurm
   * 22.05) shows here. */
  int threads = job->p.nthreads, cpus = 0;
#ifdef _OPENMP
  if (threads == 0) threads = omp_get_max_threads();
#endif
  /* With OMP_PLACES the runtime has bound this thread to one place
   * already: the places hold what the rank was given. */
#ifdef _OPENMP
  for (int pl = 0; pl < omp_get_num_places(); pl++) cpus += omp_get_place_num_procs(pl);
#endif
  cpu_set_t set;
  if (cpus == 0 && sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  fprintf(stderr, "strata: rank %d of %d on %s: backend cpu%s, %d thread%s on %d CPU%s\n",
          comm->rank, comm->size, host, why, threads, threads == 1 ? "" : "s", cpus,
          cpus == 1 ? "" : "s");
  return STRATA_OK;
}

int strata_cli_peers(strata_comm *comm, strata_backend *be, int verbose, const char **how,
                     double *setup_s)
{
  *how = NULL;
  *setup_s = 0.0;
  if (comm->size < 2) return STRATA_OK;
  /* All ranks or none: a rank of a mixed job (auto on a node without a GPU)
   * exchanges through the host as CPU ranks do. */
  double ncuda = strcmp(be->name, "cuda") ? 0.0 : 1.0;
  if (comm->allreduce_sum(comm, &ncuda, 1) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot agree on the ranks' backends", comm->rank);
  if (ncuda != comm->size) return STRATA_OK;
#ifdef HAVE_CUDA
  static char path[160];
  const char *want = getenv("STRATA_NCCL");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = strata_cuda_attach_peers(be, comm, !(want && !strcmp(want, "0")), path, sizeof path);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != STRATA_OK) return rc;
  *how = path;
  *setup_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (verbose)
    fprintf(stderr, "strata: rank %d of %d: exchange %s (set up in %.3f s)\n", comm->rank,
            comm->size, path, *setup_s);
  return STRATA_OK;
#else
  (void)verbose;
  return STRATA_OK;
#endif
}

int strata_cli_fail(strata_comm *comm, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  strata_stop_guard_exit(NULL);
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
  rc = strata_source_set_tables(src, strata_tables_names(*tables), n,
                                strata_tables_hash(*tables));
  pr->tables = strata_tables_array(*tables);
  pr->ntables = n;
  return rc;
}

int strata_cli_agree(strata_comm *comm, int status, int all_acted)
{
  /* Every rank's status, so that every rank knows which one speaks and
   * leaves with the same exit status: the lowest rank that was stopped,
   * else the lowest with an error, else one that is done. */
  const int n = comm->size;
  /* A signal also makes what it interrupted fail (a compile it ended):
   * the stop is the news, not that failure. */
  if (strata_stop_requested()) status = STRATA_CLI_STOPPED + strata_stop_requested();
  double mine = status, *all = &mine;
  double *buf = NULL;
  if (n > 1) {
    buf = calloc((size_t)n, sizeof(double));
    int64_t *off = malloc(sizeof(int64_t) * ((size_t)n + 1));
    int ok = buf && off;
    if (ok) {
      for (int r = 0; r <= n; r++) off[r] = r;
      buf[comm->rank] = status;
      ok = comm->allgather(comm, buf, off) == 0;
    }
    free(off);
    if (!ok) {
      const char *why = buf ? "communication failed" : "out of memory";
      free(buf);
      /* Where the others may be waiting in the gather: end them all. */
      return strata_cli_fail(comm, "cannot agree with the other ranks (%s)", why);
    }
    all = buf;
  }
  int speaker = -1, failed = 0;
  for (int pass = 0; pass < 3 && speaker < 0; pass++)
    for (int r = 0; r < n && speaker < 0; r++) {
      int st = (int)all[r];
      if (pass == 0 ? st > STRATA_CLI_STOPPED
                    : pass == 1 ? st > 0 && st < STRATA_CLI_DONE : st == STRATA_CLI_DONE)
        speaker = r;
    }
  for (int r = 0; r < n; r++) failed += all[r] != 0;
  int agreed = speaker < 0 ? 0 : (int)all[speaker];
  free(buf);
  if (speaker < 0) return 0;
  if (agreed > STRATA_CLI_STOPPED) return agreed;
  if (agreed == STRATA_CLI_DONE) {
    /* --help or --print-job on some ranks only: the others cannot run alone. */
    if (failed == n) return STRATA_CLI_DONE;
    if (comm->rank == speaker)
      fprintf(stderr, "strata: rank %d: --help and --print-job end the run, given to some ranks "
              "only\n", speaker);
    return 2;
  }
  if (comm->rank == speaker) {
    if (n > 1 && all_acted && failed < n)
      fprintf(stderr, "strata: rank %d: %s\n", speaker, strata_last_error());
    else
      fprintf(stderr, "strata: %s\n", strata_last_error());
    fflush(stderr);
  }
  return agreed;
}

int strata_cli_same_job(strata_comm *comm, const strata_job *job, const strata_problem *pr)
{
  int rc = strata_ranks_same_job(comm, pr, &job->p, job->check_ranks, job->source);
  if (rc == STRATA_ECOMM) return strata_cli_fail(comm, "cannot receive rank 0's job definition");
  return strata_cli_agree(comm, rc == STRATA_OK ? 0 : 1, 1);
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
  if (rc != STRATA_OK) {
    strata_source_free(src);
    strata_tables_free(*tables);
    *tables = NULL;
    return rc;
  }
  /* The definition (strata_cli_same_job) hashes the code and the tables. */
  pr->source = src;
  *srcp = src;
  return STRATA_OK;
}

int strata_cli_integrand_build(strata_comm *comm, int verbose, strata_problem *pr,
                               strata_source *src)
{
  if (!src) return 0;
  /* Rank 0 compiles alone first: a job of many ranks then compiles once
   * and the others load the result from the cache (or, on a node that does
   * not share the cache directory, compile their own). */
  int rc = comm->rank == 0 ? strata_source_build_cpu(src, verbose) : STRATA_OK;
  int st = strata_cli_agree(comm, rc != STRATA_OK, 0);
  if (st != 0) return st;
  if (comm->rank != 0) rc = strata_source_build_cpu(src, 0);
  st = strata_cli_agree(comm, rc != STRATA_OK, 1);
  if (st != 0) return st;
  if (verbose && comm->rank == 0)
    fprintf(stderr, "strata: integrand %s from %s: %s for the CPU in %.3f s\n", src->function,
            src->origin, src->cpu_cached ? "loaded from the cache" : "compiled", src->cpu_build_s);
  pr->f = src->f;
  pr->fv = src->fv;
  return 0;
}

void strata_cli_integrand_free(strata_source *src, strata_table_set *tables)
{
  strata_tables_free(tables);
  strata_source_free(src);
}
