#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

#ifdef HAVE_CUDA
#include "backend_cuda.h"
#endif

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
