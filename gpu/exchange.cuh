/* The kernels around the GPU ranks' exchange (comm/peers_cuda.h) in a stratified
 * iteration.  Each rank samples its share of the iteration's samples,
 * which may begin or end inside a hypercube; such a hypercube's sums are
 * partial on each of the ranks that share it.  So every rank forms the
 * estimate and the levels of the hypercubes it holds whole, and puts into
 * one buffer of doubles what the ranks then sum:
 *
 *   [0, P)            its part of the estimate (P = 2, or a vector
 *                     integrand's components and covariance)
 *   [P, P + 2S)       the sums of each shared hypercube it samples a part
 *                     of, in the slot of the split point inside it
 *                     (S = ranks - 1 split points)
 *   [T0, T0 + R)      its largest level, in its own slot (T0 = P + 2S)
 *   [M0, M0 + 2C)     adapting: the map sums and counts (C cells)
 *
 * After the sum every rank finishes the shared hypercubes itself, from
 * identical sums, so that all hold the same estimate and levels.  The
 * levels of whole hypercubes travel in two bytes each: a level is an
 * integer, and relative to its rank's largest it needs 12 bits to place
 * it among the 4096 bins the allocation reads (shares.h); farther below
 * is no share at all. */
#ifndef STRATA_GPU_EXCHANGE_CUH
#define STRATA_GPU_EXCHANGE_CUH
#include "adapt.cuh"

namespace strata_k {

constexpr unsigned short kNoLevel = 0xffff;

/* What this rank sends: its part, its partial hypercubes' sums (cleared
 * behind the read, as the estimate clears the others), its largest level
 * and, adapting, its map sums.  The buffer is zero where it writes nothing. */
__global__ void __launch_bounds__(kAdaptThreads) pack_kernel(const ExchangeArgs a, bool adapt)
{
  const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t == 0) {
    const double *part = a.npart == 2 ? a.rec->part : a.rec->vpart;
    for (int i = 0; i < a.npart; i++) a.x[i] = part[i];
    a.x[a.tmax_at() + a.rank] = (double)a.rec->tmax;
    for (int j = 0; j < a.nmine; j++) {
      const long long h = a.mine[j].h;
      a.x[a.npart + 2 * a.mine[j].slot] = a.s1[h];
      a.x[a.npart + 2 * a.mine[j].slot + 1] = a.s2[h];
      a.s1[h] = 0.0;
      a.s2[h] = 0.0;
    }
  }
  if (!adapt) return;
  for (long long c = t; c < a.ncell; c += (long long)gridDim.x * blockDim.x) {
    a.x[a.map_at() + c] = a.wsum[c];
    a.x[a.map_at() + a.ncell + c] = (double)a.wcnt[c];
  }
}

/* This rank's levels of its whole hypercubes, relative to its largest. */
__global__ void __launch_bounds__(kAdaptThreads) pack_levels_kernel(const ExchangeArgs a)
{
  const int tmax = a.rec->tmax;
  for (long long h = a.whole0 + blockIdx.x * (long long)blockDim.x + threadIdx.x; h < a.whole1;
       h += (long long)gridDim.x * blockDim.x) {
    const double t = a.level[h];
    const double rel = (double)tmax - t;
    a.lv16[h] = t > -INFINITY && rel < (double)kNoLevel ? (unsigned short)rel : kNoLevel;
  }
}

/* Every rank's levels back from two bytes, each relative to its rank's
 * largest (in the summed buffer). */
__global__ void __launch_bounds__(kAdaptThreads) unpack_levels_kernel(const ExchangeArgs a)
{
  for (long long h = blockIdx.x * (long long)blockDim.x + threadIdx.x; h < a.nhcube;
       h += (long long)gridDim.x * blockDim.x) {
    int lo = 0, hi = a.nrank - 1; /* the last rank whose whole hypercubes start at or before h */
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (a.seg[mid] <= h) lo = mid;
      else hi = mid - 1;
    }
    if (h < a.seg[lo] || h >= a.seg[a.nrank + lo]) continue; /* shared: finish_kernel's */
    const unsigned short v = a.lv16[h];
    a.level[h] = v == kNoLevel ? -INFINITY : a.x[a.tmax_at() + lo] - (double)v;
  }
}

/* The map sums back where the refinement reads them. */
__global__ void __launch_bounds__(kAdaptThreads) unpack_map_kernel(const ExchangeArgs a)
{
  for (long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x; c < a.ncell;
       c += (long long)gridDim.x * blockDim.x) {
    a.wsum[c] = a.x[a.map_at() + c];
    a.wcnt[c] = (unsigned long long)a.x[a.map_at() + a.ncell + c];
  }
}

/* The shared hypercubes' terms of the estimate and their levels, from the
 * summed buffer, as estimate_kernel forms them; the estimate into the
 * record, with the largest level of all.  One thread: a few hypercubes. */
__global__ void finish_kernel(const ExchangeArgs a)
{
  double part[sizeof(IterRecord::vpart) / sizeof(double)];
  for (int i = 0; i < a.npart; i++) part[i] = a.x[i];
  int tmax = INT_MIN;
  for (int r = 0; r < a.nrank; r++) {
    const int t = (int)a.x[a.tmax_at() + r];
    if (t > tmax) tmax = t;
  }
  for (int j = 0; j < a.nshared; j++) {
    const SharedHcube &sh = a.shared[j];
    const double n = (double)sh.n, S1 = a.x[a.npart + 2 * sh.slot],
                 S2 = a.x[a.npart + 2 * sh.slot + 1];
    const double m = S1 / n, v = (S2 - S1 * m) / (n * (n - 1.0));
    if (!isfinite(m) || !isfinite(v)) {
      if (sh.h < a.rec->bad_h) a.rec->bad_h = sh.h;
      continue;
    }
    part[0] += a.V * m + a.shift * a.V;
    if (v > 0.0) part[1] += a.V * a.V * v;
    if (a.level) {
      const double t = strata_share_level(strata_share_var(S1, S2, n), a.slope);
      a.level[sh.h] = t;
      if (t > -INFINITY && (int)t > tmax) tmax = (int)t;
    }
  }
  double *out = a.npart == 2 ? a.rec->part : a.rec->vpart;
  for (int i = 0; i < a.npart; i++) out[i] = part[i];
  a.rec->tmax = tmax;
}

/* Where the next iteration's samples split among nsplit ranks, as
 * strata_strat_split finds them on the host, in its layout: the
 * hypercubes holding the split points, the points, and those hypercubes'
 * starts and ends (k = 0 .. nsplit each). */
__global__ void split_samples_kernel(const long long *start, long long nhcube,
                                     const IterRecord *rec, int nsplit, int whole,
                                     long long *out)
{
  const long long N = rec->total, R = nsplit;
  for (int k = threadIdx.x; k <= nsplit; k += blockDim.x) {
    const long long p = N / R * k + N % R * k / R;
    long long h;
    if (k == nsplit) {
      h = nhcube;
    } else {
      long long lo = 0, hi = nhcube;
      while (lo < hi) { /* the first hypercube starting after p (whole: at or after) */
        const long long mid = lo + (hi - lo) / 2;
        if (whole ? start[mid] < p : start[mid] <= p) lo = mid + 1;
        else hi = mid;
      }
      h = whole ? lo : lo - 1;
    }
    const long long hs = start[h], he = h < nhcube ? start[h + 1] : N;
    out[k] = h;
    out[R + 1 + k] = whole || k == nsplit ? hs : p;
    out[2 * (R + 1) + k] = hs;
    out[3 * (R + 1) + k] = he;
  }
}

} // namespace strata_k
#endif
