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
