/* The arithmetic of the map's refinement, written once for the host
 * (map.c) and the device (gpu/adapt.cuh): the same smoothing, damping and
 * placing of edges, with only the sums (sequential on the host, a block
 * scan on the device) left to each. */
#ifndef STRATA_MAPREFINE_H
#define STRATA_MAPREFINE_H
#include "hostdev.h"
#include "powfrac.h"

/* Lepage's smoothing of the average weights a[] of n increments: what the
 * refinement distributes the edges by, before damping. */
STRATA_HD double strata_map_smooth(const double *a, int n, int i)
{
  if (i == 0) return (7.0 * a[0] + a[1]) / 8.0;
  if (i == n - 1) return (a[n - 2] + 7.0 * a[n - 1]) / 8.0;
  return (a[i - 1] + 6.0 * a[i] + a[i + 1]) / 8.0;
}

/* An increment's average weight from fewer samples than this is noise
 * (from none, no weight at all): such an increment keeps its width.  In the
 * smoothing it counts with the average of the axis's measured increments,
 * and its damped weight is their average too, which places as many new
 * increments over it as it is old ones.  Without the rule an increment that
 * no sample reached read as weight 0, and the map shrank it to nothing. */
#define STRATA_MAP_MIN_SAMPLES 2

/* An increment whose samples all read 0 beside one whose samples did not
 * may still hold a sliver of what its neighbour holds: a step (f6) or the
 * edge of where a peak underflows can lie inside it, where its samples
 * missed.  Read as 0 its share is too small, the new increment over it
 * reaches into that neighbour in every refinement, and the map creeps into
 * the integrand's support, each step leaving a wider sliver that few
 * samples reach: estimates low, with errors that cannot see it (f6 in d=3
 * at 1e4 samples: 9 of 100 runs claimed convergence beyond 4 sigma).  It
 * counts instead with its neighbour's weight, or the axis's average abar
 * of the measured increments where that is less, so that a region of
 * zeros beside a peak is kept at an average increment's density, not the
 * peak's.  a[] and trusted[] as in the refinement; other increments keep
 * their weight. */
STRATA_HD double strata_map_unseen(const double *a, const double *trusted, int n, int i,
                                   double abar)
{
  if (!(trusted[i] > 0.0) || a[i] != 0.0) return a[i];
  double m = 0.0;
  if (i > 0 && trusted[i - 1] > 0.0 && a[i - 1] > m) m = a[i - 1];
  if (i < n - 1 && trusted[i + 1] > 0.0 && a[i + 1] > m) m = a[i + 1];
  return m < abar ? m : abar;
}

/* An integrand that underflows to exactly 0 over most of the box (fB, a
 * 9-D gaussian of width 0.01) gives weight to the few increments one lucky
 * sample hit and none to the rest; with a zero share there the map would
 * collapse onto that sample and creep towards the peak over dozens of
 * iterations.  Treating a zero share as the smallest a double shows keeps,
 * after the damping, about 1/25 of an increment's usual density there
 * (alpha 0.5): the map still narrows fast but never abandons a region. */
#define STRATA_MAP_SHARE_FLOOR 1e-300

/* Lepage's damping of an increment's share s of the smoothed weight:
 * ((1 - s) / ln(1/s))^alpha compresses the range so that one noisy
 * iteration cannot collapse the map. */
STRATA_HD double strata_map_damp(double s, double alpha)
{
  if (s < STRATA_MAP_SHARE_FLOOR) s = STRATA_MAP_SHARE_FLOOR;
  if (s >= 1.0) return 1.0; /* the limit of (1-s)/ln(1/s) as s -> 1 */
  return strata_powfrac((1.0 - s) / log(1.0 / s), alpha);
}

/* The first increment j whose damped weight r[j] reaches the target
 * (k / n of the total) when added to the weight before it, pre[j] (the
 * exclusive prefix sums of r); j stops at n - 1.  A binary search, so that
 * every new edge can be placed on its own. */
STRATA_HD int strata_map_find(const double *pre, const double *r, int n, double target)
{
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (pre[mid] + r[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The new edge where the target falls inside increment j of the old map,
 * by linear interpolation of the damped weight across it.  The old map's
 * edges are every stride-th of e[] (map.h). */
STRATA_HD double strata_map_edge(const double *e, int stride, const double *pre, const double *r,
                                 int j, double target)
{
  double frac = r[j] > 0.0 ? (target - pre[j]) / r[j] : 0.0;
  if (frac > 1.0) frac = 1.0;
  if (frac < 0.0) frac = 0.0;
  const double e0 = e[j * stride];
  return e0 + frac * (e[(j + 1) * stride] - e0);
}

/* Edge k of a map of ng groups of group increments each, from the ng + 1
 * edges of the groups: inside a group the increments are of equal width,
 * so the map is one of ng increments, and a split of every increment in
 * two changes no point but by rounding. */
STRATA_HD double strata_map_subdivide(const double *eg, int group, int k)
{
  const int i = k / group, m = k - i * group;
  if (m == 0) return eg[i];
  return eg[i] + (double)m / group * (eg[i + 1] - eg[i]);
}

/* Rounding could in principle tie two new edges; a zero-width increment
 * would give J = 0 for its samples, so the edges are kept strictly
 * increasing.  0, or -1 when that would push the last edge past 1. */
STRATA_HD int strata_map_repair(double *enew, int n)
{
  for (int k = 1; k <= n; k++)
    if (!(enew[k] > enew[k - 1])) enew[k] = nextafter(enew[k - 1], 2.0);
  if (enew[n] > 1.0) return -1;
  enew[n] = 1.0;
  return 0;
}
#endif
