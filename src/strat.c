#include "strat.h"
#include "ladder.h"
#include "stamp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t ipow_capped(int64_t m, int dim, int64_t cap)
{
  int64_t r = 1;
  for (int d = 0; d < dim; d++) {
    if (r > cap / m) return cap + 1;
    r *= m;
  }
  return r;
}

int strata_strat_hcubes_per_axis(int dim, int64_t neval, int64_t max_nhcube)
{
  int64_t budget = neval / 4;
  if (budget < 1) budget = 1;
  if (max_nhcube < budget) budget = max_nhcube;
  int64_t m = (int64_t)floor(pow((double)budget, 1.0 / dim));
  if (m < 1) m = 1;
  /* pow() may land one off either way; settle it in integers. */
  while (m > 1 && ipow_capped(m, dim, budget) > budget) m--;
  while (ipow_capped(m + 1, dim, budget) <= budget) m++;
  return (int)m;
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

strata_strat *strata_strat_alloc(int dim, int64_t neval, int64_t max_nhcube,
                                 double beta, int adaptive)
{
  int M = strata_strat_hcubes_per_axis(dim, neval, max_nhcube);
  strata_strat *s = alloc_layout(dim, M, ipow_capped(M, dim, INT64_MAX / 2), neval);
  if (!s) return NULL;
  s->beta = beta;
  s->adaptive = adaptive;
  /* Allocated now, so that no rank can fail to reallocate where the others
   * succeed and part from them. */
  if (strata_strat_moves(s) && !(s->fixed = malloc((size_t)s->nhcube))) {
    strata_strat_free(s);
    return NULL;
  }
  if (strata_strat_moves(s)) {
    strata_ladder l;
    if (strata_ladder_init(&l, 0.5 * beta) == 0) {
      if (!(s->ladder = malloc(sizeof l))) {
        strata_strat_free(s);
        return NULL;
      }
      *s->ladder = l;
    }
  }
  strata_strat_init(s);
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
  free(s->share);
  free(s->fixed);
  free(s->ladder);
  free(s);
}

static void prefix(strata_strat *s)
{
  s->start[0] = 0;
  for (int64_t h = 0; h < s->nhcube; h++) s->start[h + 1] = s->start[h] + s->nh[h];
  s->generation = strata_stamp_next();
}

void strata_strat_init(strata_strat *s)
{
  if (!s->adaptive) {
    int64_t n = s->neval / s->nhcube;
    if (n < 2) n = 2;
    for (int64_t h = 0; h < s->nhcube; h++) s->nh[h] = n;
  } else {
    /* Spread the remainder one by one so the total is exactly neval. */
    int64_t q = s->neval / s->nhcube, rem = s->neval % s->nhcube;
    for (int64_t h = 0; h < s->nhcube; h++) s->nh[h] = q + (h < rem ? 1 : 0);
    for (int64_t h = 0; h < s->nhcube; h++)
      if (s->nh[h] < 2) s->nh[h] = 2;
  }
  prefix(s);
}

/* The shares when beta/2 is not a multiple of 1/8 (ladder.h is for the
 * others): pow() rounded to 6 significant bits, the ladder's resolution, and
 * for the same reason.  Round half up to the leading bit and 5 more: in the
 * bits, add half a unit of the last kept place and clear the rest (a carry
 * moves into the exponent, as it should). */
static double quantize(double x)
{
  if (!isfinite(x) || x == 0.0) return x;
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  b = (b + (UINT64_C(1) << 46)) & ~((UINT64_C(1) << 47) - 1);
  memcpy(&x, &b, sizeof x);
  return x;
}

void strata_strat_shares(const strata_strat *s, const double *s1, const double *s2,
                         int64_t h0, int64_t h1, double *d)
{
  /* The powers are spread over the cores only when there are very many
   * (element-wise, so the result does not depend on how): below that the
   * serial passes that follow cost more, and on a small machine the cores'
   * threads, spinning after the loop, slowed them four times (measured with
   * bench/bench_host on 2 cores: 1.9 ms serial, 8 ms with 2 threads, at
   * 117649 hypercubes). */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (h1 - h0 > 262144)
#endif
  for (int64_t h = h0; h < h1; h++) {
    double n = (double)s->nh[h];
    double m1 = s1[h] / n, m2 = s2[h] / n;
    double var = m2 - m1 * m1;
    /* Below 1e-6 of the second moment the difference is mostly cancellation
     * (a hypercube in the tail, where J f << the shift), and its last digits
     * differ between backends and ranks: counted as zero, a hypercube that
     * needs only its 2 samples, not as a share that changes from run to
     * run. */
    if (!(var > 1e-6 * m2)) var = 0.0;
    d[h] = s->beta == 0.0 ? 1.0
           : s->ladder  ? strata_ladder_pow(s->ladder, var)
                        : quantize(pow(var, 0.5 * s->beta));
  }
}

void strata_strat_reallocate(strata_strat *s, const double *s1, const double *s2)
{
  if (!strata_strat_moves(s)) return;
  if (!s->share) s->share = malloc(sizeof(double) * (size_t)s->nhcube);
  if (!s->share) return; /* keep the old allocation: valid, only less tuned */
  strata_strat_shares(s, s1, s2, 0, s->nhcube, s->share);
  strata_strat_allocate(s, s->share);
}

void strata_strat_allocate(strata_strat *s, const double *d)
{
  if (!strata_strat_moves(s)) return;
  const int64_t nh = s->nhcube;
  unsigned char *fixed = s->fixed;
  memset(fixed, 0, (size_t)nh);
  double dsum = 0.0;
  for (int64_t h = 0; h < nh; h++) dsum += d[h];
  if (!(dsum > 0.0) || !isfinite(dsum)) return; /* no information: stay as we are */
  /* Water-filling: hypercubes whose share falls below the floor of 2 are
   * pinned there and the rest share what is left, until no share moves. */
  int64_t left = s->neval;
  double dfree = dsum;
  /* A share left d / dfree is below 2 when d is below 2 dfree / left: one
   * division per pinned hypercube instead of one per hypercube and pass. */
  /* (The threshold only rises within a pass, so a hypercube found free
   * stays free to the pass's end: the last pass, which pins none, also
   * finds the last free one.) */
  int64_t last_free = -1;
  for (int pass = 0; pass < 64; pass++) {
    int changed = 0;
    double below = 2.0 * dfree / (double)left;
    last_free = -1;
    for (int64_t h = 0; h < nh; h++) {
      if (fixed[h]) continue;
      if (!(d[h] < below)) {
        last_free = h;
        continue;
      }
      fixed[h] = 1;
      left -= 2;
      dfree -= d[h];
      changed = 1;
      below = left > 0 ? 2.0 * dfree / (double)left : INFINITY;
    }
    if (!changed || !(dfree > 0.0)) break;
  }
  /* Cumulative rounding: each n_h is within one of its share and the total
   * is exactly what was shared; the prefix sums in the same pass. */
  double cum = 0.0;
  const double per = (double)left / dfree;
  int64_t given = 0;
  s->start[0] = 0;
  for (int64_t h = 0; h < nh; h++) {
    int64_t n = 2;
    if (!fixed[h] && dfree > 0.0) {
      cum += d[h] * per;
      int64_t upto = h == last_free ? left : (int64_t)(cum + 0.5); /* cum >= 0 */
      n = upto - given;
      given = upto;
      if (n < 2) n = 2;
    }
    s->nh[h] = n;
    s->start[h + 1] = s->start[h] + n;
  }
  s->generation = strata_stamp_next();
}

void strata_strat_rescale(strata_strat *s, int64_t neval)
{
  s->neval = neval;
  if (!s->adaptive) {
    strata_strat_init(s);
    return;
  }
  const double per = (double)neval / (double)s->start[s->nhcube];
  double cum = 0.0;
  int64_t given = 0;
  for (int64_t h = 0; h < s->nhcube; h++) {
    cum += (double)s->nh[h] * per;
    int64_t upto = h == s->nhcube - 1 ? neval : (int64_t)(cum + 0.5);
    int64_t n = upto - given;
    given = upto;
    s->nh[h] = n < 2 ? 2 : n;
  }
  prefix(s);
}

int64_t strata_strat_total(const strata_strat *s) { return s->start[s->nhcube]; }

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
