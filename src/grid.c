#include "grid.h"
#include "powfrac.h"
#include "stamp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

strata_grid *strata_grid_alloc(int dim, int ninc, int shared)
{
  strata_grid *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->dim = dim;
  g->ninc = ninc;
  g->shared = shared;
  g->edges = malloc(sizeof(double) * (size_t)strata_grid_naxes(g) * (size_t)(ninc + 1));
  if (!g->edges) {
    free(g);
    return NULL;
  }
  return g;
}

void strata_grid_free(strata_grid *g)
{
  if (!g) return;
  free(g->edges);
  free(g->scratch);
  free(g);
}

void strata_grid_init(strata_grid *g, const double *lower, const double *upper)
{
  for (int d = 0; d < g->dim; d++) {
    g->lower[d] = lower[d];
    g->width[d] = upper[d] - lower[d];
  }
  for (int a = 0; a < strata_grid_naxes(g); a++) {
    double *e = g->edges + (size_t)a * (size_t)(g->ninc + 1);
    for (int i = 0; i <= g->ninc; i++) e[i] = (double)i / g->ninc;
  }
  g->generation = strata_stamp_next();
}

int strata_grid_copy(strata_grid *dst, const strata_grid *src)
{
  if (dst->dim != src->dim || dst->ninc != src->ninc || dst->shared != src->shared)
    return -1;
  memcpy(dst->lower, src->lower, sizeof dst->lower);
  memcpy(dst->width, src->width, sizeof dst->width);
  memcpy(dst->edges, src->edges,
         sizeof(double) * (size_t)strata_grid_naxes(src) * (size_t)(src->ninc + 1));
  dst->generation = strata_stamp_next();
  return 0;
}

/* An integrand that underflows to exactly 0 over most of the box (fB, a
 * 9-D gaussian of width 0.01) gives weight to the few increments one lucky
 * sample hit and none to the rest; with r = 0 there the map would collapse
 * onto that sample and creep towards the peak over dozens of iterations.
 * Treating a zero share as the smallest a double shows keeps, after the
 * logarithmic damping, about 1/25 of an increment's usual density there
 * (alpha 0.5): the map still narrows fast but never abandons a region. */
#define STRATA_GRID_SHARE_FLOOR 1e-300

/* Lepage's damping: compresses the range of the smoothed weights so that one
 * noisy iteration cannot collapse the map. */
static double damp(double s, double alpha)
{
  if (s <= 0.0) return 0.0;
  if (s >= 1.0) return 1.0; /* limit of (1-s)/ln(1/s) as s -> 1 */
  return strata_powfrac((1.0 - s) / log(1.0 / s), alpha);
}

static void refine_axis(double *e, int n, const double *a, double alpha,
                        double *s, double *r, double *enew)
{
  if (n == 1) return;
  s[0] = (7.0 * a[0] + a[1]) / 8.0;
  for (int i = 1; i < n - 1; i++) s[i] = (a[i - 1] + 6.0 * a[i] + a[i + 1]) / 8.0;
  s[n - 1] = (a[n - 2] + 7.0 * a[n - 1]) / 8.0;
  double ssum = 0.0;
  for (int i = 0; i < n; i++) ssum += s[i];
  if (!(ssum > 0.0) || !isfinite(ssum)) return;
  double rsum = 0.0;
  for (int i = 0; i < n; i++) {
    double si = s[i] / ssum;
    if (si < STRATA_GRID_SHARE_FLOOR) si = STRATA_GRID_SHARE_FLOOR;
    r[i] = damp(si, alpha);
    rsum += r[i];
  }
  if (!(rsum > 0.0)) return;
  double per = rsum / n, acc = 0.0;
  int j = 0;
  enew[0] = 0.0;
  for (int k = 1; k < n; k++) {
    double target = k * per;
    while (j < n - 1 && acc + r[j] < target) acc += r[j++];
    double frac = r[j] > 0.0 ? (target - acc) / r[j] : 0.0;
    if (frac > 1.0) frac = 1.0;
    if (frac < 0.0) frac = 0.0;
    enew[k] = e[j] + frac * (e[j + 1] - e[j]);
  }
  enew[n] = 1.0;
  /* Rounding could in principle tie two edges; a zero-width increment would
   * give J = 0 for its samples, so keep the edges strictly increasing. */
  for (int k = 1; k <= n; k++)
    if (!(enew[k] > enew[k - 1])) enew[k] = nextafter(enew[k - 1], 2.0);
  if (enew[n] > 1.0) return; /* cannot repair: keep the old map */
  enew[n] = 1.0;
  memcpy(e, enew, sizeof(double) * (size_t)(n + 1));
}

void strata_grid_refine(strata_grid *g, const double *wsum, const double *count,
                        double alpha)
{
  if (alpha == 0.0) return;
  const int n = g->ninc;
  /* Kept between calls: a fresh allocation of this size is fresh pages,
   * and faulting them in cost more than the refinement. */
  if (!g->scratch &&
      !(g->scratch = malloc(sizeof(double) * (size_t)strata_grid_naxes(g) * (size_t)(4 * n + 1))))
    return; /* the map stays as it is: still correct, only less tuned */
  double *buf = g->scratch;
  /* Axes are independent; each gets its own slice of the scratch space. */
  const int naxes = strata_grid_naxes(g);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (naxes > 1 && (int64_t)naxes * n > 65536)
#endif
  for (int ax = 0; ax < naxes; ax++) {
    double *a = buf + (size_t)ax * (4 * (size_t)n + 1), *s = a + n, *r = a + 2 * n,
           *enew = a + 3 * n;
    int any = 0;
    for (int i = 0; i < n; i++) {
      double w = 0.0, c = 0.0;
      if (g->shared) {
        for (int d = 0; d < g->dim; d++) {
          w += wsum[(size_t)d * n + i];
          c += count[(size_t)d * n + i];
        }
      } else {
        w = wsum[(size_t)ax * n + i];
        c = count[(size_t)ax * n + i];
      }
      a[i] = c > 0.0 ? w / c : 0.0;
      if (a[i] > 0.0) any = 1;
    }
    if (any)
      refine_axis(g->edges + (size_t)ax * (size_t)(n + 1), n, a, alpha, s, r, enew);
  }
  g->generation = strata_stamp_next();
}
