#include "strat.h"
#include "ladder.h"
#include "shares.h"
#include "stamp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"

static int64_t ipow_capped(int64_t m, int dim, int64_t cap)
{
  int64_t r = 1;
  for (int d = 0; d < dim; d++) {
    if (r > cap / m) return cap + 1;
    r *= m;
  }
  return r;
}

int strata_strat_per_axis(int dim, int64_t budget, int64_t max_nhcube)
{
  if (budget < 1) budget = 1;
  if (max_nhcube < budget) budget = max_nhcube;
  int64_t m = (int64_t)floor(pow((double)budget, 1.0 / dim));
  if (m < 1) m = 1;
  /* pow() may land one off either way; settle it in integers. */
  while (m > 1 && ipow_capped(m, dim, budget) > budget) m--;
  while (ipow_capped(m + 1, dim, budget) <= budget) m++;
  return (int)m;
}

int strata_strat_hcubes_per_axis(int dim, int64_t neval, int64_t max_nhcube)
{
  return strata_strat_per_axis(dim, neval / 4, max_nhcube);
}

/* M per axis, ncell cells, counts not yet set. */
static strata_strat *alloc_layout(int dim, int M, int64_t ncell, int64_t neval)
{
  strata_strat *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->dim = dim;
  s->neval = neval;
  s->M = M;
  s->nhcube = ncell;
  s->nh = malloc(sizeof(int64_t) * (size_t)ncell);
  s->start = malloc(sizeof(int64_t) * (size_t)(ncell + 1));
  if (!s->nh || !s->start) {
    strata_strat_free(s);
    return NULL;
  }
  return s;
}

static void init_even(strata_strat *s);

/* What reallocating needs, allocated now, so that no rank can fail to
 * reallocate where the others succeed and part from them: 0, or -1 with
 * s freed. */
static int alloc_shares(strata_strat *s)
{
  if (!strata_strat_moves(s)) return 0;
  s->hist = malloc(sizeof(uint64_t) * STRATA_SHARE_BINS);
  s->ladder = malloc(sizeof *s->ladder);
  if (!s->hist || !s->ladder || strata_ladder_init(s->ladder, 0.5 * s->beta) != 0) {
    strata_strat_free(s);
    return -1;
  }
  return 0;
}

strata_strat *strata_strat_alloc(int dim, int64_t neval, int64_t max_nhcube,
                                 double beta, int adaptive)
{
  strata_strat *s = strata_strat_alloc_even(dim, neval, max_nhcube, beta, adaptive);
  if (s) strata_strat_materialize(s);
  return s;
}

strata_strat *strata_strat_alloc_even(int dim, int64_t neval, int64_t max_nhcube,
                                      double beta, int adaptive)
{
  int M = strata_strat_hcubes_per_axis(dim, neval, max_nhcube);
  strata_strat *s = alloc_layout(dim, M, ipow_capped(M, dim, INT64_MAX / 2), neval);
  if (!s) return NULL;
  s->beta = beta;
  s->adaptive = adaptive;
  if (alloc_shares(s) != 0) return NULL;
  init_even(s);
  return s;
}

static void prefix(strata_strat *s);

strata_strat *strata_strat_alloc_cells(int dim, int64_t ncell, int64_t neval)
{
  strata_strat *s = alloc_layout(dim, 1, ncell, neval);
  if (!s) return NULL;
  int64_t q = neval / ncell, rem = neval % ncell;
  for (int64_t h = 0; h < ncell; h++) s->nh[h] = q + (h < rem ? 1 : 0);
  prefix(s);
  return s;
}

void strata_strat_free(strata_strat *s)
{
  if (!s) return;
  free(s->nh);
  free(s->start);
  free(s->level);
  free(s->hist);
  free(s->ladder);
  free(s);
}

static void prefix(strata_strat *s)
{
  s->start[0] = 0;
  for (int64_t h = 0; h < s->nhcube; h++) s->start[h + 1] = s->start[h] + s->nh[h];
  s->total = s->start[s->nhcube];
  s->even = 0;
  s->generation = strata_stamp_next();
}

/* The first allocation: every hypercube q = neval / nhcube samples, and
 * for vegas+ the remainder one by one to the first ones, so the total is
 * exactly neval; at least 2 each. */
static void even_counts(const strata_strat *s, int64_t *q, int64_t *rem)
{
  *q = s->neval / s->nhcube;
  *rem = s->adaptive ? s->neval % s->nhcube : 0;
}

void strata_strat_init(strata_strat *s)
{
  int64_t q, rem;
  even_counts(s, &q, &rem);
  for (int64_t h = 0; h < s->nhcube; h++) {
    const int64_t n = q + (h < rem ? 1 : 0);
    s->nh[h] = n < 2 ? 2 : n;
  }
  s->even = 0;
  prefix(s);
}

/* The same allocation described, not written: a GPU makes its own copy
 * (strata_even_start) and the host's pages are only touched when read,
 * which at 1e5 hypercubes and more was most of a short run's set-up. */
static void init_even(strata_strat *s)
{
  int64_t q, rem;
  even_counts(s, &q, &rem);
  if (q < 2) {
    strata_strat_init(s);
    return;
  }
  s->even = 1;
  s->even_q = q;
  s->even_rem = rem;
  s->total = q * s->nhcube + rem;
  s->generation = strata_stamp_next();
}

void strata_strat_materialize(strata_strat *s)
{
  if (s->even) strata_strat_init(s);
}

void strata_strat_levels(const strata_strat *s, const double *s1, const double *s2,
                         int64_t h0, int64_t h1, double *level)
{
  /* Spread over the cores only when there are very many (element-wise, so
   * the result does not depend on how): below that the serial passes that
   * follow cost more, and on a small machine the cores' threads, spinning
   * after the loop, slow them down (doc/design.md, "The host's passes on
   * the cores"). */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (h1 - h0 > 262144)
#endif
  for (int64_t h = h0; h < h1; h++)
    level[h] = strata_share_level(strata_share_var(s1[h], s2[h], (double)s->nh[h]),
                                  s->ladder->slope);
}

void strata_strat_reallocate(strata_strat *s, const double *s1, const double *s2)
{
  if (!strata_strat_moves(s)) return;
  if (!s->level) s->level = malloc(sizeof(double) * (size_t)s->nhcube);
  if (!s->level) return; /* keep the old allocation: valid, only less tuned */
  strata_strat_levels(s, s1, s2, 0, s->nhcube, s->level);
  strata_strat_allocate(s, s->level);
}

void strata_strat_cut(const uint64_t *hist, int64_t nzero, int64_t neval, const double *step,
                      strata_share_cut *out)
{
  uint64_t dtot = 0;
  for (int b = 0; b < STRATA_SHARE_BINS; b++) dtot += hist[b] * strata_share_of_bin(b, step);
  uint64_t dpin = 0;
  int64_t pinned = nzero;
  int b = 0;
  for (; b < STRATA_SHARE_BINS; b++) {
    if (!hist[b]) continue;
    const uint64_t D = strata_share_of_bin(b, step);
    if (!strata_share_pinned(D, dtot - dpin, neval - 2 * pinned)) break;
    pinned += (int64_t)hist[b];
    dpin += hist[b] * D;
  }
  out->cut = b;
  out->dfree = dtot - dpin;
  out->left = neval - 2 * pinned;
  out->per = out->dfree ? (double)out->left / (double)out->dfree : 0.0;
}

void strata_strat_allocate(strata_strat *s, const double *level)
{
  if (!strata_strat_moves(s)) return;
  const int64_t nh = s->nhcube;
  double tmax = -INFINITY;
  for (int64_t h = 0; h < nh; h++)
    if (level[h] > tmax) tmax = level[h];
  if (!(tmax > -INFINITY)) return; /* no information: stay as we are */
  memset(s->hist, 0, sizeof(uint64_t) * STRATA_SHARE_BINS);
  int64_t nzero = 0;
  for (int64_t h = 0; h < nh; h++) {
    const int b = strata_share_bin(level[h], tmax);
    if (b < 0) nzero++;
    else s->hist[b]++;
  }
  strata_share_cut c;
  strata_strat_cut(s->hist, nzero, s->neval, s->ladder->step, &c);
  uint64_t cum = 0;
  s->start[0] = 0;
  for (int64_t h = 0; h < nh; h++) {
    const int b = strata_share_bin(level[h], tmax);
    int64_t n = 2;
    if (b >= c.cut) {
      const uint64_t D = strata_share_of_bin(b, s->ladder->step);
      cum += D;
      n = strata_share_count(cum, D, c.dfree, c.left, c.per);
    }
    s->nh[h] = n;
    s->start[h + 1] = s->start[h] + n;
  }
  s->total = s->start[nh];
  s->even = 0;
  s->generation = strata_stamp_next();
}

/* Every hypercube's samples in proportion to its weight w[h] (NULL: its
 * current count), cumulatively rounded so that they add up to neval, at
 * least 2 each. */
static void counts_in_proportion(strata_strat *s, const double *w, double wsum, int64_t neval)
{
  const double per = (double)neval / wsum;
  double cum = 0.0;
  int64_t given = 0;
  for (int64_t h = 0; h < s->nhcube; h++) {
    cum += (w ? w[h] : (double)s->nh[h]) * per;
    int64_t upto = h == s->nhcube - 1 ? neval : (int64_t)(cum + 0.5);
    int64_t n = upto - given;
    given = upto;
    s->nh[h] = n < 2 ? 2 : n;
  }
  prefix(s);
}

strata_strat *strata_strat_alloc_finer(const strata_strat *coarse, int M)
{
  const int dim = coarse->dim;
  strata_strat *s = alloc_layout(dim, M, ipow_capped(M, dim, INT64_MAX / 2), coarse->neval);
  if (!s) return NULL;
  s->beta = coarse->beta;
  s->adaptive = coarse->adaptive;
  return alloc_shares(s) == 0 ? s : NULL;
}

/* The coarse cell (of Mc along an axis) that holds the centre of fine
 * cell j (of M): floor((j + 1/2) Mc / M), in integers; and the first fine
 * cell whose centre coarse cell c holds, the smallest j with
 * (2j + 1) Mc >= 2 c M (M for c = Mc). */
static int64_t coarse_of(int64_t j, int64_t M, int64_t Mc)
{
  return (2 * j + 1) * Mc / (2 * M);
}

static int64_t first_fine(int64_t c, int64_t M, int64_t Mc)
{
  const int64_t num = 2 * c * M - Mc;
  return num <= 0 ? 0 : (num + 2 * Mc - 1) / (2 * Mc);
}

int strata_strat_carry(strata_strat *s, const strata_strat *coarse, int64_t neval, double *w)
{
  s->neval = neval;
  if (!strata_strat_moves(s)) {
    strata_strat_init(s);
    return 0;
  }
  /* The coarse allocation's density at each fine hypercube's centre: a
   * coarse hypercube's samples shared by the fine ones whose centres it
   * holds.  Every axis is cut alike, so one table along an axis gives each
   * fine cell's coarse cell and how many fine cells share it. */
  const int64_t M = s->M, Mc = coarse->M;
  int64_t *of = malloc(sizeof(int64_t) * 2 * (size_t)M);
  if (!of) return -1;
  int64_t *sharing = of + M;
  for (int64_t j = 0; j < M; j++) {
    of[j] = coarse_of(j, M, Mc);
    sharing[j] = first_fine(of[j] + 1, M, Mc) - first_fine(of[j], M, Mc);
  }
  double wsum = 0.0;
  int k[STRATA_MAX_DIM] = {0};
  for (int64_t h = 0; h < s->nhcube; h++) {
    int64_t c = 0, shared = 1;
    for (int d = s->dim - 1; d >= 0; d--) {
      c = c * Mc + of[k[d]];
      shared *= sharing[k[d]];
    }
    w[h] = (double)coarse->nh[c] / (double)shared;
    wsum += w[h];
    strata_hcube_next(k, s->dim, s->M);
  }
  free(of);
  counts_in_proportion(s, w, wsum, neval);
  return 0;
}

void strata_strat_rescale(strata_strat *s, int64_t neval)
{
  strata_strat_materialize(s);
  s->neval = neval;
  if (!s->adaptive) {
    strata_strat_init(s);
    return;
  }
  counts_in_proportion(s, NULL, (double)s->start[s->nhcube], neval);
}

int64_t strata_strat_start_at(const strata_strat *s, int64_t h)
{
  if (h == 0) return 0;
  if (h == s->nhcube) return s->total;
  if (s->even) return strata_even_start(h, s->even_q, s->even_rem);
  return s->start[h];
}

void strata_strat_restore(strata_strat *s, const int64_t *nh)
{
  memcpy(s->nh, nh, sizeof(int64_t) * (size_t)s->nhcube);
  prefix(s);
}

int64_t strata_strat_find(const strata_strat *s, int64_t i)
{
  int64_t lo = 0, hi = s->nhcube - 1;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    if (s->start[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
