/* What an iteration takes from an earlier estimate (host and device): the
 * shift of its sums and the map's scale.  The plan applies these rules
 * (plan.c); a device that starts the next adapting iteration before the
 * host has read this one's estimate applies them to it there
 * (gpu/ahead.cu), and the host takes that iteration only where the values
 * are the same. */
#ifndef STRATA_SUMSCALE_H
#define STRATA_SUMSCALE_H
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "hostdev.h"

/* The shift of the sums from an estimate I with error sigma
 * (doc/design.md, "The shift of the sums"): I where sigma is below a tenth
 * of it, else 0: a wild estimate (early iterations of a peaked integrand)
 * would only add rounding. */
STRATA_HD double strata_sum_shift(double I, double sigma)
{
  return sigma < 0.1 * fabs(I) ? I : 0.0;
}

/* The map learns from (J f)^2, which underflows to 0 below |J f| = 1.5e-162:
 * fB's first iterations often see only values like 1e-181, and a map
 * trained on zeros never moves towards the peak (doc/design.md, "The map's
 * scale").  After an estimate m of the adapting quantity that small, J f
 * is scaled by the power of two that brings m * neval, about its largest
 * sample, near 1.  A power of two scales exactly, and the map only reads
 * the weights' ratios. */
STRATA_HD double strata_map_scale(double m, int64_t neval)
{
  if (!(m > 0.0) || m >= sqrt(DBL_MIN)) return 1.0;
  const int e = -(ilogb(m) + ilogb((double)neval));
  return ldexp(1.0, e > 1000 ? 1000 : e);
}
#endif
