/* The sampling kernel of one iteration, written once for the built-in
 * integrands (compiled by nvcc into kernels.cu, the module) and for users' own
 * (compiled at run time by NVRTC with the user's code: gpu/jit.cu).  It
 * includes nothing NVRTC lacks: strata's own host/device headers only; the
 * limits STRATA_MAX_* come from strata.h under nvcc and as -D options under
 * NVRTC, so they cannot drift apart.
 *
 * Work split: every thread takes chunks of `chunk` consecutive global sample
 * indices, whatever hypercubes they fall in, so VEGAS+'s uneven allocation
 * costs no divergence; a thread finds its hypercube by binary search on the
 * allocation's prefix sums and walks forward.  Sums of a hypercube are kept
 * in registers and added to global memory when the thread leaves it. */
#ifndef STRATA_SAMPLE_KERNEL_CUH
#define STRATA_SAMPLE_KERNEL_CUH
#include "chanmix.h"
#include "hcube.h"
#include "hostdev.h"
#include "maplookup.h"
#include "philox.h"
#include "qmc_points.h"
#include "strata/table.h"

#if !defined(STRATA_MAX_DIM) || !defined(STRATA_MAX_PARAMS) || !defined(STRATA_MAX_COMP)
#error "sample_kernel.cuh needs STRATA_MAX_DIM, STRATA_MAX_PARAMS and STRATA_MAX_COMP"
#endif

namespace strata_k {

/* Threads of a sampling block: an adapting block's map sums in shared
 * memory (96 KB for 8 x 1000 cells) let two blocks share an SM, and 512
 * threads each keep twice the warps in flight that 256 did (doc/design.md,
 * "Sampling blocks of 512 threads"). */
constexpr int kThreads = 512;
/* Consecutive samples a thread takes: more amortise the hypercube search
 * per chunk, fewer keep small iterations spread over the whole GPU; half
 * of kSmallChunk where chunks of kSmallChunk would leave threads that the
 * GPU holds at once idle (gpu/sample.cu's shape). */
constexpr int kSmallChunk = 16, kLargeChunk = 64;
constexpr long long kLargeChunkFrom = 100000000;
/* An iteration too small to fill the GPU in chunks of kSmallChunk whose
 * kernel the last one's cost per sample puts at this many seconds or more
 * takes one sample a thread (gpu/sample.cu's shape): its integrand is dear
 * enough that a hypercube search and a flush a sample cost little beside
 * the warps it gains. */
constexpr double kWideFromS = 0.5e-3;
/* Threads of a block of that wide launch: its blocks all last about as long
 * (one sample each thread), and halves of the usual block even out the
 * last wave (doc/design.md, "Sampling blocks of 512 threads"). */
constexpr int kWideThreads = 256;
constexpr unsigned long long kNoBad = ~0ULL;

/* What an adapting iteration queued before the host has read the record
 * of the one before (gpu/ahead.cu) takes from that one's allocation and
 * estimate, on the device: the new allocation's samples, and the shift
 * and map scale that estimate gives by the plan's rules (src/sumscale.h). */
struct AheadArgs {
  long long total;
  double shift, map_scale;
};

struct KernelArgs {
  const double *edges;       /* naxes x (ninc + 1) */
  const long long *start;    /* nhcube + 1 */
  double *s1, *s2;           /* nhcube */
  double *wsum;              /* dim x ninc */
  unsigned long long *wcnt;  /* dim x ninc */
  unsigned long long *bad;   /* first sample with a non-finite value */
  double lower[STRATA_MAX_DIM], width[STRATA_MAX_DIM];
  double params[STRATA_MAX_PARAMS];
  int dim, ninc, axis_stride; /* axis_stride 0: one map for all axes */
  int group;                 /* the map's resolution ninc is every group-th stored edge */
  int M;
  double invM;
  long long h0, h1, first, total;
  long long nh_uniform;      /* > 0: every hypercube has this many samples */
  long long even_q, even_rem; /* even_q > 0: the even allocation (hcube.h), no search */
  unsigned long long seed;
  uint32_t rk[20];           /* the seed's Philox round keys (strata_philox_round_keys) */
  unsigned int iteration;
  int ubits;                 /* the plan's bits a coordinate (philox.h) */
  double ushift[STRATA_MAX_DIM]; /* and each axis's grid shift (strata_uniform_shifts) */
  double shift;
  double map_scale;          /* the plan's (src/plan.h) */
  int shared_acc;            /* map sums in shared memory */
  int chunk;                 /* samples per chunk */
  /* QMC iterations: N = 2^log2n points per randomization */
  const unsigned long long *qdirs;   /* sobol: nrand x dim x 64 */
  const unsigned long long *qdshift; /* sobol: nrand x dim */
  const double *qshift;              /* lattice: nrand x dim */
  unsigned int qz[STRATA_MAX_DIM];   /* lattice generator */
  int log2n;
  /* Extended integrands: their tables (device copies), and with ncomp > 1
   * the per-hypercube component sums (see src/plan.h). */
  const strata_table *tables;
  double *c1, *c2;
  double cshift[STRATA_MAX_COMP];
  int adapt_comp;            /* -1: the sum of the components' magnitudes */
  /* Frozen iterations: each increment's left edge and width in x, dim x
   * ninc (xmap_kernel), and the factor ninc^dim of the Jacobian. */
  const double2 *xmap;
  double jscale;
  /* The peak search's weights (kPhiloxTop): sample i's |J f| N / (n_h
   * nhcube), the weight |f| / g of the map alone, into wtop[i - first]. */
  double *wtop;
  double wper;               /* N / nhcube */
  /* With the peak search's channels (kPhiloxTop, src/channels.h): each
   * value becomes f alpha_0 g_map / g, its weight |f| vol / g, and chW[c]
   * adds up (alpha_c g_c / g) (f vol / g)^2 over the samples (the plan's
   * chsum); vol the box's volume, chN the iteration's points, all
   * channels', nhcube the hypercubes. */
  const strata_channels *chan;
  double *chW;
  double vol, chN, nhcube;
  /* Or NULL: an adapting kernel's total, shift and map_scale from there
   * instead (gpu/ahead.cu).  Read where used: held in registers from the
   * kernel's start they stay live through its loop, and the adapting
   * kernels took more than the 64 registers that let two blocks share an
   * SM; and last: among the other fields it moved them, and the frozen
   * kernels' registers grew too (nvcc 13.0, sm_90). */
  const AheadArgs *ahead;
};

/* Where sample points come from: kPhiloxTop draws kPhilox's points and
 * also keeps every sample's weight for the peak search (src/khat.h);
 * kPhiloxPacked draws them with the packed width of the kernel's
 * dimension (philox.h), a frozen iteration's, whose fields are then
 * constant shifts.  Kernels of any dimension (D = 0) and the search's
 * read the plan's width at run time. */
enum { kPhilox = 0, kSobol = 1, kLattice = 2, kPhiloxTop = 3, kPhiloxPacked = 4 };

__device__ __forceinline__ long long find_hcube(const KernelArgs &a, long long i)
{
  if (a.nh_uniform > 0) return i / a.nh_uniform; /* (start[h] = h nh_uniform) */
  if (a.even_q > 0) return strata_even_find(i, a.even_q, a.even_rem);
  long long lo = a.h0, hi = a.h1 - 1;
  while (lo < hi) {
    long long mid = lo + (hi - lo + 1) / 2;
    if (__ldg(a.start + mid) <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* A hypercube's first sample. */
__device__ __forceinline__ long long hcube_begin(const KernelArgs &a, long long h)
{
  if (a.nh_uniform > 0) return h * a.nh_uniform;
  if (a.even_q > 0) return strata_even_start(h, a.even_q, a.even_rem);
  return __ldg(a.start + h);
}

__device__ __forceinline__ long long hcube_end(const KernelArgs &a, long long h)
{
  return hcube_begin(a, h + 1);
}

/* y in (0,1) on axis d through the map, as strata_map_apply. */
__device__ __forceinline__ void map_axis(const KernelArgs &a, int d, double y, double *x,
                                         int *inc, double &jac)
{
  inc[d] = strata_map_axis(a.edges + (size_t)d * a.axis_stride, a.ninc, a.group, a.lower[d],
                           a.width[d], y, &x[d], &jac);
}

/* Frozen iterations: t = y ninc on axis d through the tabulated map.  The
 * same point and Jacobian as map_axis up to rounding, in one 16-byte load
 * and two multiply-adds instead of two loads and seven operations (the
 * map cannot change while the kernel runs, so the table is made once). */
__device__ __forceinline__ void map_frozen(const KernelArgs &a, int d, double t, double *x,
                                           double &jac)
{
  int i = (int)t;
  if (i >= a.ninc) i = a.ninc - 1;
  /* (32-bit offset: one wide multiply-add makes the address, where a
   * 64-bit one took four instructions an axis; dim ninc < 2^31.) */
  const double2 c = __ldg(a.xmap + (unsigned)(d * a.ninc + i));
  x[d] = fma(t - i, c.y, c.x);
  jac *= c.y;
}

/* Philox block b of sample i: Philox4x32-10 (philox.h) under the counter
 * layout there, its round keys read from the kernel's arguments rather
 * than added anew for every block, which took a share of the sampling
 * loop's instructions. */
__device__ __forceinline__ uint4 draw_block(const KernelArgs &a, int b, long long i)
{
  uint32_t c[4];
  strata_philox_counter(c, b, a.iteration, (unsigned long long)i);
  strata_philox4x32_10_keyed(c, a.rk);
  return make_uint4(c[0], c[1], c[2], c[3]);
}

/* Philox blocks 0 .. nb - 1 of sample i into w[4b .. 4b + 3]. */
__device__ __forceinline__ void draw_blocks(const KernelArgs &a, uint32_t *w, int nb, long long i)
{
  for (int b = 0; b < nb; b++) {
    const uint4 r = draw_block(a, b, i);
    w[4 * b] = r.x;
    w[4 * b + 1] = r.y;
    w[4 * b + 2] = r.z;
    w[4 * b + 3] = r.w;
  }
}

/* The same for a constant number of blocks, their rounds side by side:
 * each round key is read once for all of them and dies there, where drawn
 * one after another the keys would stay in registers from the first block
 * to the last, and fewer blocks would fit an SM. */
template <int NB>
__device__ __forceinline__ void draw_blocks_fixed(const KernelArgs &a, uint32_t *w, long long i)
{
  uint32_t c[NB][4];
#pragma unroll
  for (int b = 0; b < NB; b++) strata_philox_counter(c[b], b, a.iteration, (unsigned long long)i);
#pragma unroll
  for (int r = 0; r < 10; r++)
#pragma unroll
    for (int b = 0; b < NB; b++) strata_philox_round(c[b], a.rk[2 * r], a.rk[2 * r + 1]);
#pragma unroll
  for (int b = 0; b < NB; b++)
#pragma unroll
    for (int j = 0; j < 4; j++) w[4 * b + j] = c[b][j];
}

/* The sums a thread keeps for its current hypercube: J f - shift and its
 * square, then with NC > 1 the NC components and their NC(NC+1)/2
 * products.  One array, so that flushing and the warp reduction treat all
 * alike and the scalar case (NS = 2) compiles to what it always was. */
template <int NC> struct Sums {
  static constexpr int NS = NC > 1 ? 2 + NC + NC * (NC + 1) / 2 : 2;
};

template <int NC>
__device__ __forceinline__ double *sum_target(const KernelArgs &a, long long h, int s)
{
  constexpr int NP = NC * (NC + 1) / 2;
  if (s == 0) return a.s1 + h;
  if (s == 1) return a.s2 + h;
  if (s < 2 + NC) return a.c1 + h * NC + (s - 2);
  return a.c2 + h * NP + (s - 2 - NC);
}

template <int NC>
__device__ __forceinline__ void flush(const KernelArgs &a, long long h, double *acc)
{
#pragma unroll
  for (int s = 0; s < Sums<NC>::NS; s++) {
    atomicAdd(sum_target<NC>(a, h, s), acc[s]);
    acc[s] = 0.0;
  }
}

/* D > 0: the dimension is known at compile time, so the per-axis arrays live
 * in registers; D = 0: any dimension up to STRATA_MAX_DIM, arrays in local
 * memory.  PTS: where the points come from (kPhilox, kSobol, kLattice,
 * kPhiloxTop, kPhiloxPacked).  F:
 * the integrand, a type with a static __device__ eval(x, dim, params,
 * tables, out) writing NC values. */
template <class F, int D, bool ADAPT, int PTS, int NC>
__global__ void __launch_bounds__(kThreads) sample_kernel(const KernelArgs a)
{
  constexpr int NS = Sums<NC>::NS;
  constexpr bool TOP = PTS == kPhiloxTop,
                 PHILOX = PTS == kPhilox || TOP || PTS == kPhiloxPacked;
  constexpr int MAXD = D > 0 ? D : STRATA_MAX_DIM;
  const int dim = D > 0 ? D : a.dim;
  const int ninc = a.ninc;
  extern __shared__ double smem[];
  double *sw = smem;
  unsigned int *sc = reinterpret_cast<unsigned int *>(smem + (ADAPT && a.shared_acc ? dim * ninc : 0));
  if (ADAPT && a.shared_acc) {
    for (int c = threadIdx.x; c < dim * ninc; c += blockDim.x) {
      sw[c] = 0.0;
      sc[c] = 0u;
    }
    __syncthreads();
  }
  const long long total = ADAPT && a.ahead ? a.ahead->total : a.total;
  const long long nchunk = (total + a.chunk - 1) / a.chunk;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const int lane = threadIdx.x & 31;
  /* The loop runs warp by warp, so every lane of a warp makes the same
   * number of trips and the warp can combine its sums below. */
  for (long long base = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < nchunk;
       base += stride) {
    const long long c = base + lane;
    const bool valid = c < nchunk;
    long long i = a.first + c * a.chunk;
    const long long iend = valid ? min(i + a.chunk, a.first + total) : i;
    long long h = valid ? find_hcube(a, i) : -1, hend = valid ? hcube_end(a, h) : 0;
    long long hbeg = TOP && valid ? hcube_begin(a, h) : 0;
    int k[MAXD];
    /* Philox points take the plan's bits a coordinate (philox.h): a
     * constant where the dimension is (32, or with kPhiloxPacked the
     * packed width), the plan's in the kernels of any dimension and in the
     * search's (a user's have the dimension built in), whose adapting
     * iterations draw 32. */
    constexpr int PB = D > 0 ? STRATA_UNIFORM_PACKED_BITS(D) : 32;
    constexpr bool PACKED = PTS == kPhiloxPacked && D > 0 && PB < 32;
    constexpr bool RUNTIME_BITS = !ADAPT && (D == 0 || TOP);
    const int ubits = PACKED ? PB : RUNTIME_BITS ? a.ubits : 32;
    const double ustep = 1.0 / (double)(1ULL << ubits);
    /* Where a field's grid sits on axis d: the plan's shift where the
     * width may be packed, the midpoints (the 32-bit kernels') else. */
    auto grid_shift = [&](int d) -> double {
      return PACKED || RUNTIME_BITS ? a.ushift[d] : 0.5;
    };
    /* Frozen Philox points: where the hypercube starts on each axis, in
     * units of increments (t = kt + v ninc / (M 2^ubits)). */
    constexpr bool FROZEN_PHILOX = !ADAPT && PHILOX;
    double kt[FROZEN_PHILOX ? MAXD : 1];
    const double tscale = (double)ninc * a.invM;
    if (valid) {
      strata_hcube_coords(h, dim, a.M, k);
      if constexpr (FROZEN_PHILOX)
#pragma unroll
        for (int d = 0; d < MAXD; d++)
          if (d < dim) kt[d] = (k[d] + grid_shift(d) * ustep) * tscale;
    }
    double acc[NS];
#pragma unroll
    for (int s = 0; s < NS; s++) acc[s] = 0.0;
    double chw[TOP ? STRATA_MAX_CHANNELS + 2 : 1];
    const int nch = TOP && a.chan ? strata_chan_count(a.chan) : 0;
    for (int c = 0; c < nch; c++) chw[c] = 0.0;
    unsigned long long sx[PTS == kSobol ? MAXD : 1];
    long long qnext = -1;
    for (; i < iend; i++) {
      if (i >= hend) {
        flush<NC>(a, h, acc);
        h++;
        if constexpr (TOP) hbeg = hend;
        hend = hcube_end(a, h);
        strata_hcube_next(k, dim, a.M);
        if constexpr (FROZEN_PHILOX)
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim) kt[d] = (k[d] + grid_shift(d) * ustep) * tscale;
      }
      double x[MAXD];
      int inc[MAXD];
      double jac = 1.0;
      if constexpr (PHILOX) {
        /* Coordinate d of the point from its uniform's bits v. */
        auto place = [&](int d, uint32_t v) {
          if constexpr (FROZEN_PHILOX)
            map_frozen(a, d, fma((double)v, tscale * ustep, kt[d]), x, jac);
          else
            map_axis(a, d, (k[d] + ((double)v * ustep + 0.5 * ustep)) * a.invM, x, inc, jac);
        };
        constexpr int NB = (MAXD + 3) / 4;
        if constexpr (PACKED) {
          constexpr int NBP = (PB * D + 127) / 128;
          uint32_t w[4 * NBP];
          draw_blocks_fixed<NBP>(a, w, i);
#pragma unroll
          for (int d = 0; d < D; d++) place(d, strata_uniform_field(w, d, PB));
        } else if (RUNTIME_BITS && ubits != 32) {
          uint32_t w[4 * NB];
          draw_blocks(a, w, strata_uniform_blocks(dim, ubits), i);
          for (int d = 0; d < dim; d++) place(d, strata_uniform_field(w, d, ubits));
        } else {
          /* 32 bits a coordinate: each block's four words as they come. */
#pragma unroll
          for (int b = 0; b < NB; b++) {
            if (4 * b >= dim) break;
            const uint4 r = draw_block(a, b, i);
            const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
            for (int j = 0; j < 4; j++)
              if (4 * b + j < dim && 4 * b + j < MAXD) place(4 * b + j, w[j]);
          }
        }
      } else {
        const long long r = i >> a.log2n;
        const unsigned long long j = (unsigned long long)i & ((1ULL << a.log2n) - 1);
        if constexpr (PTS == kSobol) {
          const unsigned long long *v = a.qdirs + (size_t)r * dim * 64;
          if (i != qnext || j == 0) {
#pragma unroll
            for (int d = 0; d < MAXD; d++)
              if (d < dim)
                sx[d] = __ldg(a.qdshift + r * dim + d) ^
                        strata_sobol_digits(reinterpret_cast<const uint64_t *>(v + 64 * d), j);
          } else {
            const int bit = strata_sobol_step(j);
#pragma unroll
            for (int d = 0; d < MAXD; d++)
              if (d < dim) sx[d] ^= __ldg(v + 64 * d + bit);
          }
          qnext = i + 1;
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim) {
              if constexpr (!ADAPT)
                map_frozen(a, d, strata_qmc_unit(sx[d]) * ninc, x, jac);
              else
                map_axis(a, d, strata_qmc_unit(sx[d]), x, inc, jac);
            }
        } else {
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim) {
              const double y = strata_lattice_coord(j, a.qz[d], a.log2n, __ldg(a.qshift + r * dim + d));
              if constexpr (!ADAPT)
                map_frozen(a, d, y * ninc, x, jac);
              else
                map_axis(a, d, y, x, inc, jac);
            }
        }
      }
      if constexpr (!ADAPT) jac *= a.jscale;
      double out[NC];
      F::eval(x, dim, a.params, a.tables, out);
      bool finite = true;
      double fx = out[0];
#pragma unroll
      for (int c = 0; c < NC; c++) finite = finite && isfinite(out[c]);
      if (!finite) {
        atomicMin(a.bad, (unsigned long long)i);
        continue;
      }
      if constexpr (NC > 1) {
        if (a.adapt_comp >= 0) {
          fx = out[a.adapt_comp];
        } else {
          fx = 0.0;
#pragma unroll
          for (int c = 0; c < NC; c++) fx += fabs(out[c]);
        }
        double dc[NC];
#pragma unroll
        for (int c = 0; c < NC; c++) {
          dc[c] = jac * out[c] - a.cshift[c];
          acc[2 + c] += dc[c];
        }
        int p = 2 + NC;
#pragma unroll
        for (int c = 0; c < NC; c++)
#pragma unroll
          for (int e = c; e < NC; e++) acc[p++] += dc[c] * dc[e];
      }
      if constexpr (TOP) {
        const double nh = (double)(hend - hbeg);
        if (nch) {
          double z[MAXD], part[STRATA_MAX_CHANNELS + 2];
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim) z[d] = (x[d] - a.lower[d]) / a.width[d];
          const double gm = nh * a.nhcube * a.vol / (a.chN * jac);
          const double g = gm + strata_chan_parts(a.chan, z, part);
          const double w = fabs(fx) * a.vol / g, w2 = w * w;
          chw[0] += gm / g * w2;
          for (int c = 1; c < nch; c++) chw[c] += part[c] / g * w2;
          a.wtop[i - a.first] = w;
          fx *= gm / g;
        } else {
          a.wtop[i - a.first] = fabs(jac * fx) * a.wper / nh;
        }
      }
      const double wgt = jac * fx, dw = wgt - (ADAPT && a.ahead ? a.ahead->shift : a.shift);
      acc[0] += dw;
      acc[1] += dw * dw;
      if (ADAPT) {
        const double ws = wgt * (ADAPT && a.ahead ? a.ahead->map_scale : a.map_scale),
                     w2 = ws * ws;
#pragma unroll
        for (int d = 0; d < MAXD; d++)
          if (d < dim) {
            const int cell = d * ninc + inc[d];
            if (a.shared_acc) {
              atomicAdd(sw + cell, w2);
              atomicAdd(sc + cell, 1u);
            } else {
              atomicAdd(a.wsum + cell, w2);
              atomicAdd(a.wcnt + cell, 1ULL);
            }
          }
      }
    }
    /* Neighbouring lanes took neighbouring chunks and mostly end in the same
     * hypercube: add their sums within the warp (segments of equal h are
     * runs of lanes) and let one lane per hypercube touch global memory.
     * Under VEGAS+ most samples crowd into few hypercubes, and one atomic per
     * lane there would serialise. */
    __syncwarp();
    const unsigned peers = __match_any_sync(0xffffffffu, (unsigned long long)h);
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const bool take = lane + off < 32 && ((peers >> (lane + off)) & 1u);
#pragma unroll
      for (int s = 0; s < NS; s++) {
        const double o = __shfl_down_sync(0xffffffffu, acc[s], off);
        if (take) acc[s] += o;
      }
    }
    if (valid && lane == __ffs(peers) - 1) flush<NC>(a, h, acc);
    /* The channels' sums: a warp's added up, one atomic per channel. */
    for (int c = 0; c < nch; c++) {
      double v = chw[c];
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
      if (lane == 0 && v != 0.0) atomicAdd(a.chW + c, v);
      chw[c] = 0.0;
    }
  }
  if (ADAPT && a.shared_acc) {
    __syncthreads();
    for (int c = threadIdx.x; c < dim * ninc; c += blockDim.x)
      if (sc[c]) {
        atomicAdd(a.wsum + c, sw[c]);
        atomicAdd(a.wcnt + c, (unsigned long long)sc[c]);
      }
  }
}

} // namespace strata_k
#endif
