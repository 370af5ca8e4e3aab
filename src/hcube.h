/* Hypercubes: their integer coordinates and the even allocation's
 * layout, written once for the host and the sampling kernels (NVRTC
 * compiles it too). */
#ifndef STRATA_HCUBE_H
#define STRATA_HCUBE_H
#include "hostdev.h"

STRATA_HD void strata_hcube_coords(long long h, int dim, int M, int *k)
{
  for (int d = 0; d < dim; d++) {
    k[d] = (int)(h % M);
    h /= M;
  }
}

/* The coordinates of hypercube h + 1 from those of h: counting in base M,
 * the digits strata_hcube_coords finds by division, which on a GPU is a
 * long run of instructions for each of the dim digits. */
STRATA_HD void strata_hcube_next(int *k, int dim, int M)
{
  /* A loop of fixed length, which a kernel of known dimension unrolls and
   * so keeps k in registers. */
  int carry = 1;
  for (int d = 0; d < dim; d++)
    if (carry) {
      if (++k[d] == M) k[d] = 0;
      else carry = 0;
    }
}

/* Merged pairs.  Along the first axis hypercubes k_0 = 2j and 2j + 1
 * form a pair (the last of a row stays alone where M is odd); an
 * allocation may give a pair whose shares are both next to none its 2
 * samples together: the first hypercube holds them, drawn over the pair's
 * width, and the second holds none (strat.h).  Only with
 * STRATA_HCUBE_PAIRS_MIN_M hypercubes per axis or more: a merged region
 * then keeps 3 strata per axis, the fewest that find a peak the map has
 * lost (src/lostpeak.c, STRATA_GUARD_STRATA), where a pair of 2 or 4
 * would leave 1 or 2.  The span of hypercube h with n samples, whose
 * neighbour h + 1 along the first axis has n_next (read only where k_0 +
 * 1 < M): its width along the first axis in hypercubes, 2 for the first
 * of a merged pair, 1 for any other that holds samples, 0 for the empty
 * second of a pair. */
#define STRATA_HCUBE_PAIRS_MIN_M 6

STRATA_HD int strata_hcube_pairs_next(int k0, int M)
{
  return M >= STRATA_HCUBE_PAIRS_MIN_M && k0 % 2 == 0 && k0 + 1 < M;
}

STRATA_HD int strata_hcube_span(int k0, int M, long long n, long long n_next)
{
  if (n == 0) return 0;
  return strata_hcube_pairs_next(k0, M) && n_next == 0 ? 2 : 1;
}

/* The even allocation (strat.h): q samples in every hypercube and one more
 * in the first rem.  Hypercube h's first sample, and the hypercube that
 * holds sample i: no search. */
STRATA_HD long long strata_even_start(long long h, long long q, long long rem)
{
  return h * q + (h < rem ? h : rem);
}

STRATA_HD long long strata_even_find(long long i, long long q, long long rem)
{
  const long long big = rem * (q + 1);
  return i < big ? i / (q + 1) : rem + (i - big) / q;
}
#endif
