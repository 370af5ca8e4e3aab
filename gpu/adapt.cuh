/* What follows the sampling kernel in an iteration, on the device: the
 * stratified estimate, the VEGAS+ shares and allocation, and the map's
 * refinement.  The arithmetic is the host's (src/shares.h, src/maprefine.h);
 * only the sums are a GPU's: block reductions and scans (CUB) instead of
 * loops.  Sums of the allocation are integers, so the counts are the
 * host's to the sample; the estimate and the map's sums are doubles, added
 * in another order than the host's, so they agree to rounding. */
#ifndef STRATA_ADAPT_CUH
#define STRATA_ADAPT_CUH
#include <cooperative_groups.h>
#include <cub/cub.cuh>

#include "cellmoments.h"
#include "kernels.cuh"
#include "maprefine.h"
#include "shares.h"
#include "strat.h"
#include "sumscale.h"

namespace strata_k {

/* strata_strat's first, even allocation, written on the device. */
__global__ void __launch_bounds__(kAdaptThreads)
    even_start_kernel(long long *start, long long nhcube, long long q, long long rem)
{
  for (long long h = blockIdx.x * (long long)blockDim.x + threadIdx.x; h <= nhcube;
       h += (long long)gridDim.x * blockDim.x)
    start[h] = strata_even_start(h, q, rem);
}

/* The table of the map in x that frozen iterations read (map_frozen): per
 * axis and increment, its left edge and width. */
__global__ void __launch_bounds__(kAdaptThreads) xmap_kernel(double2 *xmap, const KernelArgs a)
{
  const long long n = (long long)a.dim * a.ninc;
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < n;
       c += (long long)gridDim.x * blockDim.x) {
    const int d = (int)(c / a.ninc), i = (int)(c % a.ninc);
    const double *e = a.edges + (size_t)d * a.axis_stride, e0 = e[i * a.group];
    xmap[c] = make_double2(a.lower[d] + a.width[d] * e0, a.width[d] * (e[(i + 1) * a.group] - e0));
  }
}

__device__ __forceinline__ double hcube_n(const long long *start, long long nh_uniform, long long h)
{
  return nh_uniform > 0 ? (double)nh_uniform : (double)(__ldg(start + h + 1) - __ldg(start + h));
}

/* The terms of strata_estimate_part, the levels of strata_strat_levels and
 * their maximum, over the hypercubes a.h0 + first + k stride of a block of
 * T threads. */
template <int T>
__device__ void estimate_cells(const EstimateArgs &a, long long first, long long stride)
{
  typedef cub::BlockReduce<double, T> Reduce;
  __shared__ typename Reduce::TempStorage t1, t2;
  double sI = 0.0, sv = 0.0;
  int tmax = INT_MIN;
  for (long long h = a.h0 + first; h < a.h1; h += stride) {
    const double n = hcube_n(a.start, a.nh_uniform, h), S1 = a.s1[h], S2 = a.s2[h];
    const double m = S1 / n, v = (S2 - S1 * m) / (n * (n - 1.0));
    if (!isfinite(m) || !isfinite(v)) {
      atomicMin(&a.rec->bad_h, h);
      continue;
    }
    sI += a.V * m; /* the shift's share is added once, below (estimate.c) */
    if (v > 0.0) sv += a.V * a.V * v;
    if (a.level) {
      const double t = strata_share_level(strata_share_var(S1, S2, n), a.slope);
      a.level[h] = t;
      if (t > -INFINITY && (int)t > tmax) tmax = (int)t;
    }
    a.s1[h] = 0.0;
    a.s2[h] = 0.0;
  }
  const double bI = Reduce(t1).Sum(sI), bv = Reduce(t2).Sum(sv);
  if (a.level) {
    if (tmax > INT_MIN) atomicMax(&a.rec->tmax, tmax);
  }
  if (threadIdx.x == 0) {
    atomicAdd(&a.rec->part[0], bI);
    atomicAdd(&a.rec->part[1], bv);
    if (blockIdx.x == 0) atomicAdd(&a.rec->part[0], a.shift * ((double)(a.h1 - a.h0) / (double)a.nhcube));
  }
}

__global__ void __launch_bounds__(kAdaptThreads) estimate_kernel(const EstimateArgs a)
{
  estimate_cells<kAdaptThreads>(a, blockIdx.x * (long long)blockDim.x + threadIdx.x,
                                (long long)gridDim.x * blockDim.x);
}

/* strata_estimate_part's terms for a vector integrand (estimate.c's
 * stratified and add_cov, with cellmoments.h): each component's V m and, where
 * both variances of a pair are positive, V^2 of its covariance, summed into
 * the record's vpart.  estimate_kernel meanwhile does the quantity that
 * adapts, whose sums and levels the allocation follows. */
template <int NC>
__global__ void __launch_bounds__(kAdaptThreads) estimate_vec_kernel(const EstimateArgs a)
{
  /* (One kernel per component count: the cell's moments and the thread's
   * sums stay in registers.) */
  constexpr int nc = NC, np = NC * (NC + 1) / 2;
  __shared__ double acc[nc + np];
  for (int j = threadIdx.x; j < nc + np; j += blockDim.x) acc[j] = 0.0;
  __syncthreads();
  double sI[nc], sc[np], m[nc], v[np];
  for (int c = 0; c < nc; c++) sI[c] = 0.0;
  for (int p = 0; p < np; p++) sc[p] = 0.0;
  for (long long h = a.h0 + blockIdx.x * (long long)blockDim.x + threadIdx.x; h < a.h1;
       h += (long long)gridDim.x * blockDim.x) {
    const double n = hcube_n(a.start, a.nh_uniform, h);
    double *S1 = a.c1 + h * nc, *S2 = a.c2 + h * np;
    if (!strata_cell_moments(nc, S1, S2, n, m, v)) {
      atomicMin(&a.rec->bad_h, h);
      continue;
    }
    for (int c = 0; c < nc; c++) S1[c] = 0.0;
    for (int p = 0; p < np; p++) S2[p] = 0.0;
    for (int c = 0; c < nc; c++) sI[c] += a.V * m[c];
    int pd[nc];
    strata_cell_positive(nc, v, pd);
    for (int x = 0, p = 0; x < nc; x++)
      for (int y = x; y < nc; y++, p++)
        if (pd[x] && pd[y]) sc[p] += a.V * a.V * v[p];
  }
  /* A warp's threads add their terms among themselves first: 256 threads
   * adding into the same few shared doubles wait on one another. */
  typedef cub::WarpReduce<double> WarpSum;
  __shared__ typename WarpSum::TempStorage ws[kAdaptThreads / 32];
  const int warp = threadIdx.x / 32;
#pragma unroll
  for (int j = 0; j < nc + np; j++) {
    const double t = WarpSum(ws[warp]).Sum(j < nc ? sI[j] : sc[j - nc]);
    if (threadIdx.x % 32 == 0) atomicAdd(&acc[j], t);
    __syncwarp(); /* (before the storage serves the next sum) */
  }
  __syncthreads();
  for (int j = threadIdx.x; j < nc + np; j += blockDim.x) {
    double t = acc[j];
    /* (The shifts' share once, as estimate.c adds it.) */
    if (blockIdx.x == 0 && j < nc) t += a.cshift[j] * ((double)(a.h1 - a.h0) / (double)a.nhcube);
    atomicAdd(&a.rec->vpart[j], t);
  }
}

/* estimate_vec_kernel for a.nc components (2 .. STRATA_MAX_COMP). */
template <int NC>
void launch_estimate_vec_from(unsigned blocks, cudaStream_t q, const EstimateArgs &a)
{
  if (a.nc == NC) estimate_vec_kernel<NC><<<blocks, kAdaptThreads, 0, q>>>(a);
  else if constexpr (NC < STRATA_MAX_COMP) launch_estimate_vec_from<NC + 1>(blocks, q, a);
}

/* Nothing to reallocate from: an overflow (the run stops) or no share at
 * all (the allocation stays, as on the host). */
__device__ __forceinline__ bool alloc_idle(const IterRecord *rec)
{
  return rec->bad != kNoBad || rec->bad_h != LLONG_MAX || rec->tmax == INT_MIN;
}

/* strata_strat_cut with every bin tested at once: bin b is the cut when it
 * is the first non-empty bin that is not pinned given all bins below it
 * pinned, which prefix sums over the bins give each thread.  Every thread
 * of the block gets it. */
template <int T>
__device__ strata_share_cut share_cut(const AllocArgs &a, const double *step)
{
  constexpr int PER = STRATA_SHARE_BINS / T;
  typedef cub::BlockScan<unsigned long long, T> Scan;
  typedef cub::BlockReduce<int, T> Reduce;
  __shared__ typename Scan::TempStorage ts;
  __shared__ typename Reduce::TempStorage tr;
  __shared__ unsigned long long dtot;
  __shared__ int s_cut;
  __shared__ strata_share_cut s_out;
  unsigned long long cnt[PER], pbefore[PER], dbefore[PER];
  for (int i = 0; i < PER; i++) cnt[i] = a.hist[threadIdx.x * PER + i];
  const long long nzero = (long long)a.hist[STRATA_SHARE_BINS];
  Scan(ts).ExclusiveSum(cnt, pbefore);
  __syncthreads();
  unsigned long long total;
  for (int i = 0; i < PER; i++)
    dbefore[i] = cnt[i] * strata_share_of_bin(threadIdx.x * PER + i, step);
  Scan(ts).ExclusiveSum(dbefore, dbefore, total); /* (in place) */
  if (threadIdx.x == 0) dtot = total;
  __syncthreads();
  int first = STRATA_SHARE_BINS;
  for (int i = 0; i < PER; i++) {
    const int b = threadIdx.x * PER + i;
    const long long left = a.neval - 2 * (nzero + (long long)pbefore[i]);
    if (cnt[i] && b < first &&
        !strata_share_pinned(strata_share_of_bin(b, step), dtot - dbefore[i], left))
      first = b;
  }
  const int cut = Reduce(tr).Reduce(first, [](int x, int y) { return x < y ? x : y; });
  if (threadIdx.x == 0) s_cut = cut;
  __syncthreads();
  /* The thread holding the cut's bin knows what is pinned below it. */
  for (int i = 0; i < PER; i++) {
    const int b = threadIdx.x * PER + i;
    if (b == s_cut || (s_cut == STRATA_SHARE_BINS && b == STRATA_SHARE_BINS - 1)) {
      const bool all = s_cut == STRATA_SHARE_BINS;
      const unsigned long long dpin = all ? dtot : dbefore[i];
      const long long pinned = nzero + (long long)(all ? pbefore[i] + cnt[i] : pbefore[i]);
      strata_share_cut c;
      c.cut = s_cut;
      c.dfree = dtot - dpin;
      c.left = a.neval - 2 * pinned;
      c.per = c.dfree ? (double)c.left / (double)c.dfree : 0.0;
      s_out = c;
    }
  }
  __syncthreads();
  const strata_share_cut out = s_out;
  __syncthreads(); /* every thread has read it: the next call may reuse it */
  return out;
}

__device__ __forceinline__ int free_bin(const AllocArgs &a, long long h, double tmax, int cut)
{
  const int b = strata_share_bin(a.level[h], tmax);
  return b >= cut ? b : -1;
}

/* The inclusive prefix sums of value(h) over h in [lo, hi), each handed
 * with its h to store(h, sum), and their total, by one block of T threads in
 * tiles of T x IPT consecutive hypercubes. */
template <int T, int IPT, typename Value, typename Store>
__device__ unsigned long long block_range_scan(long long lo, long long hi, Value value,
                                               Store store)
{
  typedef cub::BlockScan<unsigned long long, T> Scan;
  __shared__ typename Scan::TempStorage ts;
  unsigned long long carry = 0;
  for (long long base = lo; base < hi; base += (long long)T * IPT) {
    unsigned long long v[IPT], tile;
    const long long h0 = base + (long long)threadIdx.x * IPT;
#pragma unroll
    for (int i = 0; i < IPT; i++) v[i] = h0 + i < hi ? value(h0 + i) : 0ull;
    Scan(ts).InclusiveSum(v, v, tile);
#pragma unroll
    for (int i = 0; i < IPT; i++)
      if (h0 + i < hi) store(h0 + i, carry + v[i]);
    carry += tile;
    __syncthreads(); /* (before the storage serves the next tile) */
  }
  return carry;
}

/* The sum of v over a block of T threads, in every thread. */
template <int T, typename V>
__device__ V block_sum(V v)
{
  typedef cub::BlockReduce<V, T> Reduce;
  __shared__ typename Reduce::TempStorage tr;
  __shared__ V total;
  const V s = Reduce(tr).Sum(v);
  if (threadIdx.x == 0) total = s;
  __syncthreads();
  const V t = total;
  __syncthreads(); /* every thread has read it: the next call may reuse both */
  return t;
}

/* The sum of x[0..n) by one block. */
template <int T>
__device__ unsigned long long block_sum_of(const unsigned long long *x, long long n)
{
  unsigned long long v = 0;
  for (long long j = threadIdx.x; j < n; j += T) v += x[j];
  return block_sum<T>(v);
}

/* Block 0's copy of the finished record into post, page-locked host
 * memory that the device writes directly, where given: the host reads it
 * once the stream is done, with no copy queued behind the kernel (a
 * copy's round trip is several microseconds of a short iteration).  The
 * record's words as the device holds them now, past the L1 cache. */
__device__ void post_record(const IterRecord *rec, IterRecord *post)
{
  __syncthreads(); /* (thread 0's last word) */
  if (!post) return;
  const volatile unsigned long long *from = (const volatile unsigned long long *)rec;
  unsigned long long *to = (unsigned long long *)post;
  for (int i = threadIdx.x; i < (int)(sizeof(IterRecord) / 8); i += blockDim.x) to[i] = from[i];
}

/* Block 0's end of the allocation: the total into the record and, where
 * the next iteration is queued ahead (a.reset, gpu/ahead.cu), that one's
 * record set to its start and what it takes from this one: the total, and
 * the shift and map scale that this estimate gives by the plan's rules
 * (src/sumscale.h, as src/plan.c applies them for one rank); then the record
 * posted.  The estimate's sums are read past the L1 cache, as post_record
 * reads them. */
__device__ void finish_record(const AllocArgs &a, IterRecord *rec, long long total)
{
  if (threadIdx.x == 0) {
    rec->total = total;
    if (a.reset) {
      const volatile double *part = rec->part;
      const double I = part[0];
      rec->next.total = total;
      rec->next.shift = strata_sum_shift(I, sqrt(part[1]));
      rec->next.map_scale = strata_map_scale(fabs(I), a.neval);
      init_record(a.reset);
    }
  }
  post_record(rec, a.post);
}

/* The new allocation from the levels of every hypercube (and the
 * record's tmax), with_estimate after estimate_kernel's work, in one
 * cooperative kernel: the histogram of the levels, the cut, the free
 * hypercubes' shares and their prefix sums, the counts and theirs into
 * start + 1, and their total into the record.  As a chain of kernels each
 * of these steps spent a few microseconds starting and draining the grid
 * for less work than that, most of an iteration's time beyond the
 * sampling at 1e6 samples (doc/design.md, "The allocation in one
 * kernel").  The grid waits for itself between the steps that read what
 * every block wrote; each block owns a contiguous range of hypercubes,
 * scans it, and adds the totals of the blocks before it (btot: 2 per
 * block); every block finds the same cut from the histogram, which block
 * 0 clears once all have read it.  Sums of integers: the counts are the
 * host's to the sample. */
__global__ void __launch_bounds__(kReallocThreads, 2)
    reallocate_kernel(const EstimateArgs ea, const AllocArgs a, int with_estimate)
{
  constexpr int T = kReallocThreads, IPT = 4;
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const long long G = gridDim.x, b = blockIdx.x;
  unsigned long long *btot = a.btot;
  if (with_estimate) {
    estimate_cells<T>(ea, b * T + threadIdx.x, G * T);
    grid.sync();
  }
  IterRecord *rec = a.rec;
  if (alloc_idle(rec)) { /* the old counts stay */
    if (b == 0) finish_record(a, rec, a.start[a.nhcube]);
    return;
  }
  const double tmax = (double)rec->tmax;
  __shared__ double step[STRATA_SHARE_STEPS];
  for (int i = threadIdx.x; i < STRATA_SHARE_STEPS; i += T) step[i] = a.step[i];
  {
    __shared__ unsigned int bins[STRATA_SHARE_BINS + 1];
    for (int i = threadIdx.x; i <= STRATA_SHARE_BINS; i += T) bins[i] = 0u;
    __syncthreads();
    for (long long h = b * T + threadIdx.x; h < a.nhcube; h += G * T) {
      const int bin = strata_share_bin(a.level[h], tmax);
      atomicAdd(&bins[bin < 0 ? STRATA_SHARE_BINS : bin], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i <= STRATA_SHARE_BINS; i += T)
      if (bins[i]) atomicAdd(&a.hist[i], (unsigned long long)bins[i]);
  }
  grid.sync();
  const strata_share_cut c = share_cut<T>(a, step);
  const long long per = (a.nhcube + G - 1) / G, lo = b * per < a.nhcube ? b * per : a.nhcube,
                  hi = lo + per < a.nhcube ? lo + per : a.nhcube;
  const unsigned long long dsum = block_range_scan<T, IPT>(
      lo, hi,
      [&](long long h) { return strata_share_of_bin(free_bin(a, h, tmax, c.cut), step); },
      [&](long long h, unsigned long long v) { a.dshare[h] = v; });
  if (threadIdx.x == 0) btot[b] = dsum;
  grid.sync();
  if (b == 0) /* every block has read the histogram */
    for (int i = threadIdx.x; i <= STRATA_SHARE_BINS; i += T) a.hist[i] = 0ull;
  const unsigned long long doff = block_sum_of<T>(btot, b);
  const unsigned long long nsum = block_range_scan<T, IPT>(
      lo, hi,
      [&](long long h) {
        const int bin = free_bin(a, h, tmax, c.cut);
        return (unsigned long long)(bin < 0 ? 2
                                            : strata_share_count(doff + a.dshare[h],
                                                                 strata_share_of_bin(bin, step),
                                                                 c.dfree, c.left, c.per));
      },
      [&](long long h, unsigned long long v) { a.count[h] = (long long)v; });
  if (threadIdx.x == 0) btot[G + b] = nsum;
  grid.sync();
  const long long noff = (long long)block_sum_of<T>(btot + G, b);
  for (long long h = lo + threadIdx.x; h < hi; h += T) a.start[h + 1] = noff + a.count[h];
  if (b == 0) {
    finish_record(a, rec, (long long)block_sum_of<T>(btot + G, G));
  }
}

/* The exclusive prefix sums of x[0..n) into pre, and their total, by one
 * block in tiles of its width. */
template <int T>
__device__ double block_exclusive_sum(const double *x, double *pre, int n)
{
  typedef cub::BlockScan<double, T> Scan;
  __shared__ typename Scan::TempStorage ts;
  __shared__ double carry;
  if (threadIdx.x == 0) carry = 0.0;
  __syncthreads();
  for (int base = 0; base < n; base += T) {
    const int i = base + threadIdx.x;
    double v = i < n ? x[i] : 0.0, out, tile;
    Scan(ts).ExclusiveSum(v, out, tile);
    if (i < n) pre[i] = carry + out;
    __syncthreads();
    if (threadIdx.x == 0) carry += tile;
    __syncthreads();
  }
  return carry;
}

/* Whether the block's new edges e[0..n] increase, mended in order where
 * not, as the host does (strata_map_repair; rare): 0 where they cannot be,
 * and the map stays as it was. */
__device__ bool edges_mended(double *e, int n)
{
  __shared__ int ok;
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  for (int k = 1 + threadIdx.x; k <= n; k += blockDim.x)
    if (!(e[k] > e[k - 1])) ok = 0;
  __syncthreads();
  if (!ok) {
    if (threadIdx.x == 0) ok = strata_map_repair(e, n) == 0 ? 2 : 0;
    __syncthreads();
  }
  const bool mended = ok != 0;
  __syncthreads(); /* every thread has read it: the next call may reuse it */
  return mended;
}

/* The refinement's arrays per axis: in shared memory up to this many
 * increments (the binary searches then read no global memory), else in the
 * global scratch. */
constexpr int kRefineSharedInc = 1536;

/* strata_map_refine, one block per axis: the map's nc = ninc / group
 * increments (every group-th stored edge) refined from their sums, laid
 * out dim x nc, by the operations of a map stored with nc increments; the
 * stored edges between then spaced evenly (group 1: every increment on its
 * own). */
__global__ void __launch_bounds__(kRefineThreads) refine_kernel(const RefineArgs a)
{
  /* (Beside the estimate: an overflow it finds ends the run anyway.) */
  if (a.rec->bad != kNoBad) return;
  const int n = a.ninc, ax = blockIdx.x, ndims = a.shared ? a.dim : 1, G = a.group,
            nc = n / G;
  double *e = a.edges + (size_t)ax * (n + 1);
  __shared__ double sh[3 * kRefineSharedInc];
  double *w, *r, *pre;
  if (n <= kRefineSharedInc) {
    w = sh;
    r = sh + kRefineSharedInc;
    pre = sh + 2 * kRefineSharedInc;
  } else {
    w = a.scratch + (size_t)ax * 4 * (n + 1);
    r = w + (n + 1);
    pre = r + (n + 1);
  }
  double *enew = a.scratch + (size_t)ax * 4 * (n + 1) + 3 * (size_t)(n + 1);
  __shared__ int any;
  if (threadIdx.x == 0) any = 0;
  __syncthreads();
  /* pre[] holds whether each increment's weight is trusted until the scan
   * (map.c's refine_axis). */
  double asum = 0.0, nt = 0.0;
  for (int i = threadIdx.x; i < nc; i += blockDim.x) {
    double ws = 0.0, c = 0.0;
    for (int d = 0; d < ndims; d++) {
      const size_t cell = (size_t)(a.shared ? d : ax) * nc + i;
      ws += a.wsum[cell];
      c += a.wcnt ? (double)a.wcnt[cell] : a.wcount[cell];
      a.wsum[cell] = 0.0;
      if (a.wcnt) a.wcnt[cell] = 0ull;
    }
    pre[i] = c >= STRATA_MAP_MIN_SAMPLES;
    w[i] = pre[i] > 0.0 ? ws / c : 0.0;
    if (w[i] > 0.0) any = 1;
    if (pre[i] > 0.0) {
      asum += w[i];
      nt += 1.0;
    }
  }
  __syncthreads();
  if (!any || nc == 1) return;
  nt = block_sum<kRefineThreads>(nt);
  const double abar = block_sum<kRefineThreads>(asum) / nt;
  /* r[] holds the weights of increments that read 0 until the smoothing. */
  for (int i = threadIdx.x; i < nc; i += blockDim.x)
    r[i] = strata_map_unseen(w, pre, nc, i, abar);
  __syncthreads();
  for (int i = threadIdx.x; i < nc; i += blockDim.x) w[i] = pre[i] > 0.0 ? r[i] : abar;
  __syncthreads();
  double part = 0.0;
  for (int i = threadIdx.x; i < nc; i += blockDim.x) {
    r[i] = strata_map_smooth(w, nc, i); /* the smoothed weights, for now */
    part += r[i];
  }
  const double ssum = block_sum<kRefineThreads>(part);
  if (!(ssum > 0.0) || !isfinite(ssum)) return;
  double rt = 0.0;
  for (int i = threadIdx.x; i < nc; i += blockDim.x) {
    r[i] = strata_map_damp(r[i] / ssum, a.alpha);
    if (pre[i] > 0.0) rt += r[i];
  }
  if (nt < nc) {
    const double rbar = block_sum<kRefineThreads>(rt) / nt;
    for (int i = threadIdx.x; i < nc; i += blockDim.x)
      if (!(pre[i] > 0.0)) r[i] = rbar;
  }
  __syncthreads();
  const double rsum = block_exclusive_sum<kRefineThreads>(r, pre, nc);
  if (!(rsum > 0.0)) return;
  const double per = rsum / nc;
  for (int k = 1 + threadIdx.x; k < nc; k += blockDim.x) {
    const double target = k * per;
    enew[k] = strata_map_edge(e, G, pre, r, strata_map_find(pre, r, nc, target), target);
  }
  if (threadIdx.x == 0) {
    enew[0] = 0.0;
    enew[nc] = 1.0;
  }
  __syncthreads();
  if (!edges_mended(enew, nc)) return;
  /* With groups the n + 1 stored edges go to w[], free now (in shared
   * memory with n = kRefineSharedInc its last one is r[0], free too). */
  double *out = enew;
  if (G > 1) {
    for (int k = threadIdx.x; k <= n; k += blockDim.x) w[k] = strata_map_subdivide(enew, G, k);
    out = w;
    __syncthreads();
    if (!edges_mended(out, n)) return;
  }
  for (int k = threadIdx.x; k <= n; k += blockDim.x) e[k] = out[k];
}

} // namespace strata_k
#endif
