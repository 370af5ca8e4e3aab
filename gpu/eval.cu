/* The peak search's evaluator on the device (src/backend.h's eval): the
 * batch of points goes over, eval_kernel (eval_kernel.cuh) of the run's
 * integrand maps and evaluates them, the magnitudes come back.  The
 * integrand is the one the sampling runs: a built-in's kernel from the
 * module, or a user's from the NVRTC program of its sampling kernels, so
 * that the search sees the values the samples see. */
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

int find_search_kernel(cuda_state *st, const strata_problem *pr, bool channels, const void **k)
{
  const int id = pr->f ? builtin_id(pr->f) : -1;
  if (id >= 0) {
    *k = channels ? (const void *)builtin_channel_kernel(id) : (const void *)builtin_eval_kernel(id);
    return STRATA_OK;
  }
  if (!pr->source) return no_device_version(pr);
  if (!st->jit && !(st->jit = strata_jit_new(st->device)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  return channels ? strata_jit_channel_kernel(st->jit, pr->source, pr->dim, k)
                  : strata_jit_eval_kernel(st->jit, pr->source, pr->dim, k);
}

int cuda_eval(strata_backend *b, const strata_problem *pr, int64_t n, const double *y, double *f)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  if (n <= 0) return STRATA_OK;
  cudaError_t e = cudaSetDevice(st->device);
  if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", st->device);
  /* A frozen iteration in flight (frozen.cu) may read the tables that
   * pr's would replace: it is finished first, and dropped, as sampling
   * another problem drops it. */
  if (st->next.on && !tables_current(st, pr)) {
    int drc = drop_next(st);
    if (drc != STRATA_OK) return drc;
  }
  const void *k = nullptr;
  int rc = find_search_kernel(st, pr, false, &k);
  if (rc != STRATA_OK) return rc;
  cudaStream_t q = st->stream;
  rc = upload_tables(st, pr, q);
  if (rc != STRATA_OK) return rc;
  const int dim = pr->dim;
  const size_t ny = (size_t)n * (size_t)dim;
  if (!st->eval_y.reserve(ny) || !st->eval_f.reserve((size_t)n))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the peak search's %lld "
                        "points", st->device, (long long)n);
  EvalArgs a;
  memset(&a, 0, sizeof a);
  a.y = st->eval_y.p;
  a.f = st->eval_f.p;
  a.n = n;
  /* The width rounded as the CPU's evaluator rounds it (upper - lower). */
  for (int d = 0; d < dim; d++) {
    a.lower[d] = pr->lower[d];
    a.width[d] = pr->upper[d] - pr->lower[d];
  }
  for (int i = 0; i < pr->nparams; i++) a.params[i] = pr->params[i];
  a.tables = pr->ntables ? st->tables.p : nullptr;
  a.dim = dim;
  a.adapt_comp = pr->adapt_comp;
  void *args[] = {&a};
  const long long blocks = grid_for(n, kEvalThreads, st->nsm);
  /* The host's arrays are pageable: each copy is done with them when it
   * returns, and the last one when the values are in f. */
  e = cudaMemcpyAsync(st->eval_y.p, y, ny * sizeof(double), cudaMemcpyHostToDevice, q);
  if (e == cudaSuccess)
    e = cudaLaunchKernel(k, dim3((unsigned)blocks), dim3(kEvalThreads), args, 0, q);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(f, st->eval_f.p, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "the peak search's evaluation", st->device);
  return STRATA_OK;
}

} // namespace strata_cuda
