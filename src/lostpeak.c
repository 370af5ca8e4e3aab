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

double strata_lost_z_family(int ncomp)
{
  if (ncomp <= 8) return STRATA_LOST_Z;
  /* The upper tail P(Z > z) = erfc(z / sqrt 2) / 2, decreasing: bisection. */
  const double want = erfc(STRATA_LOST_Z / sqrt(2.0)) * 8.0 / ncomp;
  double lo = STRATA_LOST_Z, hi = STRATA_LOST_Z + 10.0;
  for (int i = 0; i < 60; i++) {
    const double mid = 0.5 * (lo + hi);
    if (erfc(mid / sqrt(2.0)) > want) lo = mid;
    else hi = mid;
  }
  return hi;
}

/* A map that is a product of one map per axis and has lost a peak carries
 * no trace of it: a third peak between two that the map follows lies in a
 * valley of every axis's map, and a second peak beside the one it follows
 * in the tail of every axis, so its share of the samples is the product of
 * d small densities, and neither the estimates nor their errors show it.
 * The stratification is what keeps sampling there: every hypercube gets at
 * least two samples in every iteration wherever the map put its density,
 * and the allocation follows any variance they find.  Gaussians of width
 * 0.1 on the diagonal of the unit cube in d = 8 (doc/design.md, "The
 * stratification's floor"): two
 * peaks are lost with one hypercube per axis and found with two; three
 * peaks are lost with two per axis (the middle one sits on the corner that
 * all hypercubes share) and found with three, at the smallest neval that
 * gives three (4 * 3^8 samples) as at four times that.  So a claim needs
 * STRATA_GUARD_STRATA hypercubes per axis where the cap on their number
 * allows them; the neval that gives them is the stratification's own rule,
 * neval / 4 hypercubes (strat.c), at 3^dim of them.  In one dimension the
 * map is the stratification (doc/algorithm.md, "One dimension"). */
#define STRATA_GUARD_STRATA 3

double strata_lost_thin(int dim, int m, int64_t max_nhcube)
{
  if (dim < 2 || m >= STRATA_GUARD_STRATA) return 0.0;
  const double cells = pow((double)STRATA_GUARD_STRATA, dim);
  if (cells > (double)max_nhcube) return 0.0;
  return 4.0 * cells;
}
