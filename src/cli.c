#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int strata_cli_check_unsupported(const strata_job *job)
{
  if (job->log[0])
    return strata_error(STRATA_EINVAL, "%s: run.log = '%s': HDF5 convergence logs are not "
                        "available in this version of strata", job->source, job->log);
  if (job->checkpoint[0])
    return strata_error(STRATA_EINVAL, "%s: run.checkpoint = '%s': checkpoints are not "
                        "available in this version of strata", job->source, job->checkpoint);
  return STRATA_OK;
}

int strata_cli_backend(const strata_job *job, strata_comm *comm, int verbose,
                       strata_backend **out)
{
  *out = NULL;
  if (!strcmp(job->backend, "cuda"))
    return strata_error(STRATA_EBACKEND, "%s: run.backend = cuda: this strata was built "
                        "without CUDA (configure --with-cuda)", job->source);
  if (verbose) {
    char host[256];
    strata_comm_where(comm, host, sizeof host);
    fprintf(stderr, "strata: backend %s%s, rank %d of %d on %s\n", "cpu",
            !strcmp(job->backend, "auto") ? " (auto: built without CUDA)" : "", comm->rank,
            comm->size, host);
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
