/* The peak search's evaluator on the device (src/backend.h's eval): the
 * integrand at given points of the unit cube, mapped linearly onto the
 * problem's box, and the magnitude of the value that adapts the map.
 * Written once for the built-in integrands (compiled by nvcc into
 * kernels.cu) and for users' own (compiled by NVRTC beside their sampling
 * kernels: gpu/jit.cu), with the functors the sampling kernel takes; like
 * sample_kernel.cuh it includes nothing NVRTC lacks.
 *
 * The search's batches are small (a few gradients' stencils) and each
 * point is costly where a search pays, so one thread takes one point,
 * with the dimension a run-time argument: no per-dimension kernels. */
#ifndef STRATA_EVAL_KERNEL_CUH
#define STRATA_EVAL_KERNEL_CUH
#include "strata/table.h"

#if !defined(STRATA_MAX_DIM) || !defined(STRATA_MAX_PARAMS) || !defined(STRATA_MAX_COMP)
#error "eval_kernel.cuh needs STRATA_MAX_DIM, STRATA_MAX_PARAMS and STRATA_MAX_COMP"
#endif

namespace strata_k {

constexpr int kEvalThreads = 128;

struct EvalArgs {
  const double *y;           /* n x dim, in the unit cube */
  double *f;                 /* n */
  long long n;
  double lower[STRATA_MAX_DIM], width[STRATA_MAX_DIM];
  double params[STRATA_MAX_PARAMS];
  const strata_table *tables;
  int dim;
  int adapt_comp;            /* -1: the sum of the components' magnitudes */
};

/* F: the integrand, as sample_kernel's (a static __device__ eval(x, dim,
 * params, tables, out) writing NC values).  Values that are not finite
 * pass through: the search decides what they mean. */
template <class F, int NC>
__global__ void __launch_bounds__(kEvalThreads) eval_kernel(const EvalArgs a)
{
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += stride) {
    double x[STRATA_MAX_DIM], out[NC];
    const double *y = a.y + i * a.dim;
    /* Rounded as the host's lower + width y, with no fused multiply-add,
     * so that both backends evaluate the same x. */
    for (int d = 0; d < a.dim; d++) x[d] = __dadd_rn(a.lower[d], __dmul_rn(a.width[d], y[d]));
    F::eval(x, a.dim, a.params, a.tables, out);
    double m = 0.0;
    if (NC == 1) {
      m = fabs(out[0]);
    } else if (a.adapt_comp >= 0) {
      m = fabs(out[a.adapt_comp]);
    } else {
#pragma unroll
      for (int c = 0; c < NC; c++) m += fabs(out[c]);
    }
    a.f[i] = m;
  }
}

} // namespace strata_k
#endif
