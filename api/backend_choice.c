#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "backend_choice.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend_cpu.h"
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
  /* The GPU's kernels keep a hypercube's sums of every pair of components
   * in registers, for up to STRATA_MAX_COMP of them. */
  const int many = pr->ncomp > STRATA_MAX_COMP;
  if (kind == STRATA_BACKEND_CUDA && many)
    return strata_error(STRATA_EBACKEND, "backend cuda: takes ncomp up to %d, not %d (backend "
                        "cpu takes up to %d)", STRATA_MAX_COMP, pr->ncomp, STRATA_MAX_NCOMP);
#ifdef HAVE_CUDA
  int ngpu = kind != STRATA_BACKEND_CPU && !many ? strata_cuda_device_count() : 0;
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
  because = many ? " (auto: ncomp above the GPU's limit)"
            : ngpu > 0 ? " (auto: the integrand is a function of the caller's)"
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

void strata_backend_prepare(strata_backend_kind kind, const strata_comm *comm)
{
#ifdef HAVE_CUDA
  if ((unsigned)kind <= STRATA_BACKEND_CUDA && kind != STRATA_BACKEND_CPU)
    strata_cuda_prepare(comm ? comm->local_rank : 0);
#else
  (void)kind;
  (void)comm;
#endif
}

void strata_backend_say(const strata_backend *be, int nthreads, strata_backend_kind kind,
                        const strata_comm *comm, const char *host, const char *why)
{
#ifdef HAVE_CUDA
  if (!strcmp(be->name, "cuda")) {
    char gpu[512];
    strata_cuda_describe(be, gpu, sizeof gpu);
    fprintf(stderr, "strata: rank %d of %d on %s: backend cuda%s, %s\n", comm->rank,
            comm->size, host, kind == STRATA_BACKEND_AUTO ? " (auto)" : "", gpu);
    return;
  }
#else
  (void)be;
  (void)kind;
#endif
  /* The CPUs this rank may run on: a launcher that binds a rank to fewer
   * cores than it has threads (srun without --cpus-per-task since Slurm
   * 22.05) shows here. */
  int threads = nthreads, cpus = 0;
#ifdef _OPENMP
  if (threads == 0) threads = omp_get_max_threads();
  /* With OMP_PLACES the runtime has bound this thread to one place
   * already: the places hold what the rank was given. */
  for (int pl = 0; pl < omp_get_num_places(); pl++) cpus += omp_get_place_num_procs(pl);
#endif
  cpu_set_t set;
  if (cpus == 0 && sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  fprintf(stderr, "strata: rank %d of %d on %s: backend cpu%s, %d thread%s on %d CPU%s\n",
          comm->rank, comm->size, host, why ? why : "", threads, threads == 1 ? "" : "s", cpus,
          cpus == 1 ? "" : "s");
}
