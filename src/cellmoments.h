/* One cell's moments for a vector integrand, written once for the host's
 * estimate (estimate.c) and the device's (gpu/adapt.cuh). */
#ifndef STRATA_CELLMOMENTS_H
#define STRATA_CELLMOMENTS_H
#include <math.h>

#include "hostdev.h"

/* The cell's (or one pooled set's) means m and covariance terms from the
 * sums over n points of nc components: S1 their sums, S2 the sums of their
 * products for pairs a <= b, packed row by row; v[p] = (S2_p - S1_a m_b) /
 * (n (n - 1)).  (Two divisions per cell where (S2_p/n - m_a m_b)/(n - 1)
 * took three: at 262144 hypercubes a third of the estimate's time.)
 * 1 when every one is finite. */
STRATA_HD int strata_cell_moments(int nc, const double *S1, const double *S2, double n,
                                  double *m, double *v)
{
  int ok = 1;
  const double nn1 = n * (n - 1.0);
  for (int c = 0; c < nc; c++) {
    m[c] = S1[c] / n;
    ok = ok && isfinite(m[c]);
  }
  for (int a = 0, p = 0; a < nc; a++)
    for (int b = a; b < nc; b++, p++) {
      v[p] = (S2[p] - S1[a] * m[b]) / nn1;
      ok = ok && isfinite(v[p]);
    }
  return ok;
}

/* Which components' variances in v are positive: a variance that rounding
 * made negative counts as 0, and then so do that component's covariances
 * in this cell, so that the sum stays positive semi-definite. */
STRATA_HD void strata_cell_positive(int nc, const double *v, int *pd)
{
  for (int a = 0, p = 0; a < nc; a++) {
    pd[a] = v[p] > 0.0;
    p += nc - a;
  }
}
#endif
