#include "lostpeak.h"

#include <math.h>

/* A map that lost a peak keeps sampling one part of the integrand, and its
 * iterations agree with each other on that part's value with small errors.
 * Only iterations made before it settled, on a map that still spread its
 * samples, can have seen the rest: they read above the average.  Each
 * left-out iteration k gives z_k = (|I_k| - |A|) / sqrt(s_k^2 + sA^2); their
 * sum over sqrt(n) is near N(0, 1) when every iteration estimates the same
 * value with honest errors.  Iterations that fell short of a peak read
 * low, so only a rise counts, and it counts against the claim when it
 * passes STRATA_LOST_Z: the threshold that kept false alarms at or below
 * 2% on the coverage rows at neval >= 1e5 (doc/algorithm.md). */
#define STRATA_LOST_Z 3.0
#define STRATA_LOST_ROUNDING 1e-12

int strata_lost_check(const double *I, const double *s, const int *itn, int n, double A,
                      double sA, strata_lost *out)
{
  out->z = 0.0;
  out->itn = 0;
  out->integral = out->sigma = 0.0;
  double sum = 0.0, top = -INFINITY;
  int m = 0;
  for (int k = 0; k < n; k++) {
    /* Estimates equal to rounding are equal (a constant integrand's
     * iterations differ by 1e-16 with errors of 1e-17). */
    const double e = fmax(hypot(s[k], sA), STRATA_LOST_ROUNDING * fabs(A));
    if (!(e > 0.0) || !isfinite(I[k])) continue;
    const double z = (fabs(I[k]) - fabs(A)) / e;
    if (!isfinite(z)) continue;
    sum += z;
    m++;
    if (z > top) {
      top = z;
      out->itn = itn[k];
      out->integral = I[k];
      out->sigma = s[k];
    }
  }
  if (m == 0) return 0;
  out->z = sum / sqrt((double)m);
  return out->z > STRATA_LOST_Z;
}
