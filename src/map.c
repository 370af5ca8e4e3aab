#include "map.h"
#include "maprefine.h"
#include "stamp.h"
#include "strat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int strata_map_base_ninc(int ninc, int64_t neval, int dim, int64_t max_nhcube)
{
  if (dim == 1) return 1;
  int64_t n = neval / STRATA_MAP_SAMPLES_PER_INC;
  if (n > STRATA_MAP_COARSE_INC) {
    n = neval / STRATA_MAP_SAMPLES_PER_FINE_INC;
    if (n < STRATA_MAP_COARSE_INC) n = STRATA_MAP_COARSE_INC;
  }
  const int64_t m = strata_strat_hcubes_per_axis(dim, neval, max_nhcube);
  if (m > 1 && n < 2 * m) n = 2 * m;
  return n >= ninc ? ninc : n > 1 ? (int)n : 1;
}

double strata_map_split_floor(int dim)
{
  return STRATA_MAP_SPLIT_FLOOR * exp2((dim - 2) / 3.0);
}

int strata_map_max_splits(int base, int64_t neval, int dim, int maxinc)
{
  if (base <= 1) return 0;
  const double fine = floor((double)neval / strata_map_split_floor(dim));
  int j = 0;
  while ((int64_t)base << (j + 1) <= maxinc && (double)((int64_t)base << (j + 1)) <= fine) j++;
  return j;
}

int strata_map_splits_at(int itn, int maxsplits)
{
  if (itn < STRATA_MAP_SPLIT_FIRST) return 0;
  const int j = (itn - STRATA_MAP_SPLIT_FIRST) / STRATA_MAP_SPLIT_EVERY + 1;
  return j < maxsplits ? j : maxsplits;
}

int strata_map_ninc_for(int ninc, int64_t neval, int dim, int64_t max_nhcube, int split)
{
  const int base = strata_map_base_ninc(ninc, neval, dim, max_nhcube);
  return split ? base << strata_map_max_splits(base, neval, dim, ninc) : base;
}

int strata_map_group_for(int n, int base, int splits)
{
  if (base < 1 || n % base) return 1; /* a map not stored this way refines as it is */
  const int g = n / base >> splits;
  return g > 1 ? g : 1;
}

int strata_map_edges_bad_axis(const double *edges, int naxes, int ninc)
{
  for (int a = 0; a < naxes; a++) {
    const double *e = edges + (size_t)a * (size_t)(ninc + 1);
    int ok = e[0] == 0.0 && e[ninc] == 1.0;
    for (int i = 0; ok && i < ninc; i++) ok = e[i + 1] > e[i];
    if (!ok) return a + 1;
  }
  return 0;
}

strata_map *strata_map_alloc(int dim, int ninc, int shared)
{
  strata_map *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->dim = dim;
  g->ninc = ninc;
  g->shared = shared;
  g->group = 1;
  g->edges = malloc(sizeof(double) * (size_t)strata_map_naxes(g) * (size_t)(ninc + 1));
  if (!g->edges) {
    free(g);
    return NULL;
  }
  return g;
}

void strata_map_free(strata_map *g)
{
  if (!g) return;
  free(g->edges);
  free(g->scratch);
  free(g);
}

void strata_map_init(strata_map *g, const double *lower, const double *upper)
{
  for (int d = 0; d < g->dim; d++) {
    g->lower[d] = lower[d];
    g->width[d] = upper[d] - lower[d];
  }
  for (int a = 0; a < strata_map_naxes(g); a++) {
    double *e = g->edges + (size_t)a * (size_t)(g->ninc + 1);
    for (int i = 0; i <= g->ninc; i++) e[i] = (double)i / g->ninc;
  }
  g->generation = strata_stamp_next();
}

int strata_map_copy(strata_map *dst, const strata_map *src)
{
  if (dst->dim != src->dim || dst->ninc != src->ninc || dst->shared != src->shared)
    return -1;
  memcpy(dst->lower, src->lower, sizeof dst->lower);
  memcpy(dst->width, src->width, sizeof dst->width);
  memcpy(dst->edges, src->edges,
         sizeof(double) * (size_t)strata_map_naxes(src) * (size_t)(src->ninc + 1));
  dst->group = src->group;
  dst->generation = strata_stamp_next();
  return 0;
}

/* One axis of n stored increments whose map is every group-th edge (nc =
 * n / group increments): a[] the average weight per increment of the map,
 * trusted[] 1 where it comes from enough samples (STRATA_MAP_MIN_SAMPLES)
 * and 0 where not; at least one is.  Scratch s, r of nc each, enew of nc +
 * 1 and, with groups, fine of n + 1; trusted[] is overwritten by the
 * prefix sums.  Up to the new edges of the map (enew, repaired) these are
 * the operations of a map stored with nc increments; the edges between are
 * then spaced evenly.  The GPU's refinement (gpu/adapt.cuh) does the same
 * with block-wide sums in place of the loops. */
static void refine_axis(double *e, int n, int group, double *a, double *trusted, double alpha,
                        double *s, double *r, double *enew, double *fine)
{
  const int nc = n / group;
  if (nc == 1) return;
  double *pre = trusted;
  double asum = 0.0, nt = 0.0;
  for (int i = 0; i < nc; i++)
    if (trusted[i] > 0.0) {
      asum += a[i];
      nt += 1.0;
    }
  const double abar = asum / nt;
  /* s[] holds the weights of increments that read 0 until the smoothing. */
  for (int i = 0; i < nc; i++) s[i] = strata_map_unseen(a, trusted, nc, i, abar);
  for (int i = 0; i < nc; i++) a[i] = trusted[i] > 0.0 ? s[i] : abar;
  double ssum = 0.0;
  for (int i = 0; i < nc; i++) {
    s[i] = strata_map_smooth(a, nc, i);
    ssum += s[i];
  }
  if (!(ssum > 0.0) || !isfinite(ssum)) return;
  double rt = 0.0;
  for (int i = 0; i < nc; i++) {
    r[i] = strata_map_damp(s[i] / ssum, alpha);
    if (trusted[i] > 0.0) rt += r[i];
  }
  double rsum = 0.0;
  for (int i = 0; i < nc; i++) {
    if (!(trusted[i] > 0.0)) r[i] = rt / nt;
    pre[i] = rsum;
    rsum += r[i];
  }
  if (!(rsum > 0.0)) return;
  const double per = rsum / nc;
  enew[0] = 0.0;
  for (int k = 1; k < nc; k++) {
    const double target = k * per;
    enew[k] = strata_map_edge(e, group, pre, r, strata_map_find(pre, r, nc, target), target);
  }
  enew[nc] = 1.0;
  if (strata_map_repair(enew, nc) != 0) return; /* cannot repair: keep the old map */
  double *out = enew;
  if (group > 1) {
    for (int k = 0; k <= n; k++) fine[k] = strata_map_subdivide(enew, group, k);
    /* Even spacing inside a group of a few ulps could tie two edges. */
    if (strata_map_repair(fine, n) != 0) return;
    out = fine;
  }
  memcpy(e, out, sizeof(double) * (size_t)(n + 1));
}

void strata_map_refine(strata_map *g, const double *wsum, const double *count,
                        double alpha)
{
  if (alpha == 0.0) return;
  const int n = g->ninc, group = g->group, nc = strata_map_res(g);
  /* Kept between calls: a fresh allocation of this size is fresh pages,
   * and faulting them in cost more than the refinement. */
  const size_t per = 6 * (size_t)n + 2;
  if (!g->scratch && !(g->scratch = malloc(sizeof(double) * (size_t)strata_map_naxes(g) * per)))
    return; /* the map stays as it is: still correct, only less tuned */
  double *buf = g->scratch;
  /* Axes are independent; each gets its own slice of the scratch space. */
  const int naxes = strata_map_naxes(g);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (naxes > 1 && (int64_t)naxes * nc > 65536)
#endif
  for (int ax = 0; ax < naxes; ax++) {
    double *a = buf + (size_t)ax * per, *s = a + n, *r = a + 2 * n, *trusted = a + 3 * n,
           *enew = a + 4 * n, *fine = enew + n + 1;
    int any = 0;
    for (int i = 0; i < nc; i++) {
      double w = 0.0, c = 0.0;
      if (g->shared) {
        for (int d = 0; d < g->dim; d++) {
          w += wsum[(size_t)d * nc + i];
          c += count[(size_t)d * nc + i];
        }
      } else {
        w = wsum[(size_t)ax * nc + i];
        c = count[(size_t)ax * nc + i];
      }
      trusted[i] = c >= STRATA_MAP_MIN_SAMPLES;
      a[i] = trusted[i] > 0.0 ? w / c : 0.0;
      if (a[i] > 0.0) any = 1;
    }
    if (any)
      refine_axis(g->edges + (size_t)ax * (size_t)(n + 1), n, group, a, trusted, alpha, s, r,
                  enew, fine);
  }
  g->generation = strata_stamp_next();
}
