#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "backend_choice.h"

#include <stddef.h>

#include "error.h"
#ifdef HAVE_CUDA
#include "backend_cuda.h"
#endif

#ifdef HAVE_CUDA
/* Built-ins and sources run on the GPU; a function pointer of the
 * caller's does not. */
static int gpu_can_run(const strata_problem *pr)
{
  if (pr->source) return 1;
  for (size_t i = 0; pr->f && strata_builtin_at(i); i++)
    if (strata_builtin_at(i)->f == pr->f) return 1;
  return 0;
}
#endif

int strata_backend_choose(const strata_problem *pr, int nthreads, strata_backend_kind kind,
                          const strata_comm *comm, strata_backend **out, const char **why)
{
  *out = NULL;
  const char *because = "";
  if ((unsigned)kind > STRATA_BACKEND_CUDA)
    return strata_error(STRATA_EINVAL, "backend %d: must be auto, cpu or cuda", (int)kind);
#ifdef HAVE_CUDA
  int ngpu = kind != STRATA_BACKEND_CPU ? strata_cuda_device_count() : 0;
  if (kind == STRATA_BACKEND_CUDA ||
      (kind == STRATA_BACKEND_AUTO && ngpu > 0 && gpu_can_run(pr))) {
    if (!gpu_can_run(pr))
      return strata_error(STRATA_EBACKEND, "backend cuda: runs built-in integrands and sources "
                          "(strata_problem_set_source), not a function of the caller's");
    /* Ranks on a node share its GPUs round-robin; under Slurm's
     * --gpus-per-task each rank sees only its own, device 0. */
    *out = strata_backend_cuda_new(ngpu > 0 ? comm->local_rank % ngpu : 0);
    if (why) *why = "";
    return *out ? STRATA_OK : STRATA_EBACKEND;
  }
  because = ngpu > 0 ? " (auto: the integrand is a function of the caller's)"
                     : " (auto: no CUDA device visible)";
#else
  (void)pr;
  (void)comm;
  if (kind == STRATA_BACKEND_CUDA)
    return strata_error(STRATA_EBACKEND, "backend cuda: this strata was built without CUDA "
                        "(configure --with-cuda)");
  because = " (auto: built without CUDA)";
#endif
  if (why) *why = kind == STRATA_BACKEND_AUTO ? because : "";
  *out = strata_backend_cpu_new(nthreads);
  return *out ? STRATA_OK : strata_error(STRATA_ENOMEM, "out of memory");
}
