/* The peak search's channels on the device (src/channels.h): one thread
 * block per block of a channel's points, one thread per point.  Each point
 * is drawn (src/chanmix.h), evaluated where it falls inside the cube,
 * and valued f vol alpha_c / g, g the whole mixture's density there, the
 * map's included; a block's values give its sums (points, mean, sum of
 * squared deviations) as the CPU backend's block does, and its weights go
 * to the channels' sums and the list of the largest.  Written once for
 * the built-in integrands (kernels.cu) and for users' own (NVRTC, jit.cu);
 * it includes nothing NVRTC lacks. */
#ifndef STRATA_CHANNEL_KERNEL_CUH
#define STRATA_CHANNEL_KERNEL_CUH
#include "sample_kernel.cuh"

namespace strata_k {

/* A channel block is one thread block. */
constexpr int kChannelThreads = STRATA_CHANNEL_BLOCK;

struct ChannelArgs {
  long long chb0;            /* the first of this rank's blocks */
  double *sums;              /* per block of this rank: points, mean, sum of squared deviations */
  double *wtop;              /* per point of this rank's blocks (256 a block): its weight, -1 */
  long long *wtop_index;     /* where there is none, and its global sample index */
  unsigned long long *bad;   /* the first point whose value is not finite (its global index) */
};

/* alpha_0 g_map(z): the map's inverse at z, its Jacobian and hypercube, as
 * the CPU backend's (strata_backend_map_density). */
__device__ __forceinline__ double map_density(const KernelArgs &a, const double *z)
{
  const int ninc = a.ninc, G = a.group, M = a.M;
  double jz = 1.0;
  long long h = 0, stride = 1;
  for (int d = 0; d < a.dim; d++, stride *= M) {
    if (!(z[d] > 0.0 && z[d] < 1.0)) return 0.0;
    const double *e = a.edges + (size_t)d * a.axis_stride;
    int lo = 0, hi = ninc;
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (__ldg(e + mid * G) <= z[d]) lo = mid;
      else hi = mid;
    }
    const double e0 = __ldg(e + lo * G), du = __ldg(e + (lo + 1) * G) - e0;
    const double y = (lo + (z[d] - e0) / du) / ninc;
    jz *= ninc * du;
    const int k = (int)(y * M);
    h += (long long)(k < M ? k : M - 1) * stride;
  }
  const double nh = (double)(hcube_end(a, h) - hcube_begin(a, h));
  return nh * a.nhcube / (a.chN * jz);
}

/* A block's sum of v over its threads, in shared memory s (kChannelThreads). */
__device__ __forceinline__ double block_sum(double v, double *s)
{
  s[threadIdx.x] = v;
  __syncthreads();
  for (int half = kChannelThreads / 2; half > 0; half >>= 1) {
    if ((int)threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  const double sum = s[0];
  __syncthreads();
  return sum;
}

template <class F, int NC>
__global__ void __launch_bounds__(kChannelThreads) channel_kernel(const KernelArgs a, const ChannelArgs c)
{
  __shared__ double s[kChannelThreads];
  const strata_channels *ch = a.chan;
  const long long b = c.chb0 + blockIdx.x, slot = (long long)blockIdx.x * kChannelThreads + threadIdx.x;
  int k;
  int64_t j0, j1;
  strata_chan_block(ch, b, &k, &j0, &j1);
  const long long j = j0 + threadIdx.x;
  const bool real = j < j1;
  double z[STRATA_MAX_DIM], v = 0.0, w = -1.0, gm = 0.0, g = 1.0, part[STRATA_MAX_CHANNELS + 2];
  bool in = false;
  if (real) {
    in = strata_chan_point(ch, a.seed, a.iteration, k, j, z);
    double f = 0.0;
    if (in) {
      double x[STRATA_MAX_DIM], out[NC];
      for (int d = 0; d < a.dim; d++) x[d] = __dadd_rn(a.lower[d], __dmul_rn(a.width[d], z[d]));
      F::eval(x, a.dim, a.params, a.tables, out);
      f = out[0];
      if (!isfinite(f)) atomicMin(c.bad, (unsigned long long)strata_chan_index(ch, k, j));
    }
    gm = map_density(a, z);
    g = gm + strata_chan_parts(ch, z, part);
    const double share = (double)ch->n[k] / (double)ch->N;
    v = f * a.vol * share / g;
    if (in) w = fabs(f) * a.vol / g;
  }
  c.wtop[slot] = w;
  c.wtop_index[slot] = real ? (long long)strata_chan_index(ch, k, j) : -1;
  const double n = (double)(j1 - j0);
  const double mean = block_sum(v, s) / n;
  const double d = real ? v - mean : 0.0;
  const double m2 = block_sum(d * d, s);
  if (threadIdx.x == 0) {
    c.sums[3 * blockIdx.x] = n;
    c.sums[3 * blockIdx.x + 1] = mean;
    c.sums[3 * blockIdx.x + 2] = m2;
  }
  const int nch = strata_chan_count(ch);
  const double w2 = in ? w * w : 0.0;
  for (int q = 0; q < nch; q++) {
    const double t = block_sum(in ? (q == 0 ? gm : part[q]) / g * w2 : 0.0, s);
    if (threadIdx.x == 0 && t != 0.0) atomicAdd(a.chW + q, t);
  }
}

} // namespace strata_k
#endif
