/* The module: every kernel of the CUDA backend, compiled here once.
 *
 * The sampling kernel, sample_kernel<F, D, ADAPT, PTS, NC> (sample_kernel.cuh),
 * is instantiated for every combination the built-in integrands can ask
 * for; each template parameter buys the kernel something a run-time
 * argument would cost it on every sample:
 *
 *   F      the integrand (10 built-ins): its body is compiled into the
 *          kernel, inlined, with no indirect call per sample and registers
 *          allocated across it.  Users' integrands get the same through
 *          NVRTC (jit.cu), one instantiation when a run needs it.
 *   D      the dimension, 5, 6, 8 or 9 (the benchmark suite's), or 0 for
 *          any: with D known the per-axis arrays (hypercube coordinates,
 *          point, increments, QMC state) live in registers and the axis
 *          loops unroll; D = 0 keeps them in local memory.  bench_gpu's
 *          throughput table has a row for the generic kernel
 *          (STRATA_CUDA_GENERIC=1 selects it for every dimension).
 *   ADAPT  adapting iterations add the map's training sums (in shared
 *          memory, whose size the launch sets) and look points up in the
 *          edges; frozen ones do neither and read the map's table in x
 *          (xmap_kernel).  One kernel for both would carry the adapting
 *          path's registers and shared memory into every frozen iteration.
 *   PTS    where points come from: Philox, Sobol' or a lattice.  QMC points
 *          only ever go through a frozen map, so adapting kernels take
 *          Philox alone: 1 adapting and 3 frozen variants.
 *   NC     the components of a vector integrand: 1 for the built-ins
 *          (vector integrands are users' own, compiled by NVRTC).
 *
 * So 10 integrands x 5 dimensions x 4 (adapt, point set) = 200 sampling
 * kernels, 20 generic ones that keep the peak search's weights, 10 of the
 * search's evaluator (eval_kernel.cuh) and 10 of its channels
 * (channel_kernel.cuh), beside
 * estimate_vec_kernel for 2 .. STRATA_MAX_COMP components, the kernels of
 * adapt.cuh and exchange.cuh, and CUB's scans.  All sit in this one module,
 * which strata_cuda_prepare loads while the job is read, so that the first
 * iteration loads nothing but the kernel it launches. */
#include <cub/cub.cuh>

#include "integrands_fn.h"
#include "kernels.cuh"
#include "adapt.cuh"
#include "exchange.cuh"

namespace {

using namespace strata_k;

/* The built-in integrands as the kernel template takes them. */
#define STRATA_BUILTIN_FUNCTOR(T, fn)                                                      \
  struct T {                                                                               \
    static __device__ __forceinline__ void eval(const double *x, int dim, const double *p, \
                                                const strata_table *, double *out)         \
    {                                                                                      \
      out[0] = fn(x, dim, p);                                                              \
    }                                                                                      \
  };
STRATA_BUILTIN_FUNCTOR(F1, strata_f1_fn)
STRATA_BUILTIN_FUNCTOR(F2, strata_f2_fn)
STRATA_BUILTIN_FUNCTOR(F3, strata_f3_fn)
STRATA_BUILTIN_FUNCTOR(F4, strata_f4_fn)
STRATA_BUILTIN_FUNCTOR(F5, strata_f5_fn)
STRATA_BUILTIN_FUNCTOR(F6, strata_f6_fn)
STRATA_BUILTIN_FUNCTOR(FA, strata_fA_fn)
STRATA_BUILTIN_FUNCTOR(FB, strata_fB_fn)
STRATA_BUILTIN_FUNCTOR(RA, strata_ra_fn)
STRATA_BUILTIN_FUNCTOR(MC, strata_mc_fn)
#undef STRATA_BUILTIN_FUNCTOR

/* Dimensions with a kernel of their own (registers instead of local memory);
 * others use the generic one.  Chosen for the benchmark suite: 5, 6, 8, 9. */
template <class F, bool ADAPT, int PTS>
kernel_fn pick_dim(int dim)
{
  switch (dim) {
  case 5: return sample_kernel<F, 5, ADAPT, PTS, 1>;
  case 6: return sample_kernel<F, 6, ADAPT, PTS, 1>;
  case 8: return sample_kernel<F, 8, ADAPT, PTS, 1>;
  case 9: return sample_kernel<F, 9, ADAPT, PTS, 1>;
  default: return sample_kernel<F, 0, ADAPT, PTS, 1>;
  }
}

/* Frozen iterations with packed uniforms (philox.h): their own kernels
 * where the dimension packs (5, 6 and 9 of pick_dim's), else the generic
 * one, which reads the width from its arguments. */
template <class F>
kernel_fn pick_packed(int dim)
{
  switch (dim) {
  case 5: return sample_kernel<F, 5, false, kPhiloxPacked, 1>;
  case 6: return sample_kernel<F, 6, false, kPhiloxPacked, 1>;
  case 9: return sample_kernel<F, 9, false, kPhiloxPacked, 1>;
  default: return sample_kernel<F, 0, false, kPhilox, 1>;
  }
}

/* Adapting iterations always draw pseudo-random points (QMC points only
 * ever go through a frozen map).  The peak search's kernels, which keep
 * every weight, are the generic ones: a run that searches spends its
 * time in the search and the integrand, and 100 more kernels here would
 * cost every build. */
template <class F>
kernel_fn pick_points(int dim, bool adapt, int pts)
{
  if (pts == kPhiloxTop)
    return adapt ? sample_kernel<F, 0, true, kPhiloxTop, 1> : sample_kernel<F, 0, false, kPhiloxTop, 1>;
  if (adapt) return pick_dim<F, true, kPhilox>(dim);
  switch (pts) {
  case kSobol: return pick_dim<F, false, kSobol>(dim);
  case kLattice: return pick_dim<F, false, kLattice>(dim);
  case kPhiloxPacked: return pick_packed<F>(dim);
  default: return pick_dim<F, false, kPhilox>(dim);
  }
}

template <class F> struct functor {
  using type = F;
};

/* What a kernel of built-in integrand id is made from: pick(functor<F>())
 * with F its functor, or nullptr for no built-in. */
template <class R, class Pick>
R with_builtin(int id, Pick pick)
{
  switch (id) {
  case STRATA_ID_F1: return pick(functor<F1>());
  case STRATA_ID_F2: return pick(functor<F2>());
  case STRATA_ID_F3: return pick(functor<F3>());
  case STRATA_ID_F4: return pick(functor<F4>());
  case STRATA_ID_F5: return pick(functor<F5>());
  case STRATA_ID_F6: return pick(functor<F6>());
  case STRATA_ID_FA: return pick(functor<FA>());
  case STRATA_ID_FB: return pick(functor<FB>());
  case STRATA_ID_ROOS_ARNOLD: return pick(functor<RA>());
  case STRATA_ID_MOROKOFF_CAFLISCH: return pick(functor<MC>());
  default: return nullptr;
  }
}

} // namespace

namespace strata_k {

kernel_fn builtin_kernel(int id, int dim, int generic, bool adapt, int pts)
{
  if (generic) dim = 0;
  return with_builtin<kernel_fn>(id, [&](auto f) {
    return pick_points<typename decltype(f)::type>(dim, adapt, pts);
  });
}

eval_fn builtin_eval_kernel(int id)
{
  return with_builtin<eval_fn>(id, [](auto f) -> eval_fn {
    return eval_kernel<typename decltype(f)::type, 1>;
  });
}

channel_fn builtin_channel_kernel(int id)
{
  return with_builtin<channel_fn>(id, [](auto f) -> channel_fn {
    return channel_kernel<typename decltype(f)::type, 1>;
  });
}

int builtin_id(strata_fn f)
{
  for (size_t i = 0; strata_builtin_at(i); i++)
    if (strata_builtin_at(i)->f == f) return (int)i;
  return -1;
}

void launch_estimate_vec(unsigned blocks, cudaStream_t q, const EstimateArgs &a)
{
  launch_estimate_vec_from<2>(blocks, q, a);
}

cudaError_t sort_weights(void *tmp, size_t &bytes, const double *keys, double *keys_out,
                         const long long *vals, long long *vals_out, int64_t n, cudaStream_t q)
{
  return cub::DeviceRadixSort::SortPairsDescending(tmp, bytes, keys, keys_out, vals, vals_out,
                                                   n, 0, 64, q);
}

__global__ void indices_kernel(long long *vals, long long first, long long n)
{
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride)
    vals[j] = first + j;
}

void launch_indices(long long *vals, long long first, long long n, unsigned blocks,
                    cudaStream_t q)
{
  indices_kernel<<<blocks, 256, 0, q>>>(vals, first, n);
}

/* (Asking for one kernel's attributes loads the module.) */
void load_module()
{
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, estimate_kernel);
}

} // namespace strata_k
