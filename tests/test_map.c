/* Tests of the adaptive map (src/map.c, src/map.h).
 *
 * The expected values come from the algorithm of shared/design/algorithm.md
 * and doc/algorithm.md (which adds the 1e-300 share floor), either worked out
 * by hand (the arithmetic is in the comments) or computed
 * by an independent reference implementation in this file (ref_refine_axis),
 * which is written from the design text rather than from map.c: it places
 * the new edges by inverting the piecewise-linear cumulative sum of r_i
 * instead of walking an accumulator. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "maprefine.h"
#include "testutil.h"

/* ck_assert_* records a mark point (a write to the runner) on every success;
 * in loops of thousands of checks that dominates the run time, so loops use
 * REQUIRE, which calls into check only on failure. */
#define REQUIRE(expr, ...)                                                      \
  do {                                                                          \
    if (!(expr)) ck_assert_msg(expr, __VA_ARGS__);                              \
  } while (0)

/* ---- helpers ------------------------------------------------------------ */

/* xorshift64*: a small deterministic generator, independent of the library. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 2685821657736338717ULL + 1; }
static double rng_u(void) /* uniform in (0,1) */
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 2685821657736338717ULL;
  return ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static strata_map *make_grid(int dim, int ninc, int shared, const double *lo,
                              const double *hi)
{
  strata_map *g = strata_map_alloc(dim, ninc, shared);
  ck_assert_ptr_nonnull(g);
  strata_map_init(g, lo, hi);
  return g;
}

static double *axis_edges(strata_map *g, int ax)
{
  return g->edges + (size_t)ax * (size_t)(g->ninc + 1);
}

/* Edges start at 0, end at 1 and increase strictly. */
static void check_valid_axis(const strata_map *g, int ax, const char *what)
{
  const double *e = strata_map_axis_edges(g, ax);
  REQUIRE(e[0] == 0.0, "%s axis %d: e[0] = %.17g", what, ax, e[0]);
  REQUIRE(e[g->ninc] == 1.0, "%s axis %d: e[n] = %.17g", what, ax,
                e[g->ninc]);
  for (int i = 0; i < g->ninc; i++)
    REQUIRE(e[i + 1] > e[i], "%s axis %d: e[%d] = %.17g >= e[%d] = %.17g",
                  what, ax, i, e[i], i + 1, e[i + 1]);
}

/* Reference refinement of one axis, straight from the design:
 * a_i averages, smoothing, normalisation, damping (with doc/algorithm.md's
 * share floor), equal shares of R.  cnt NULL: every increment well
 * sampled; else one with cnt < 2 counts with the measured ones' mean a in
 * the smoothing and their mean r in the shares (doc/algorithm.md). */
static void ref_refine_axis(const double *eold, int n, const double *a_in, const double *cnt,
                            double alpha, double *enew)
{
  double a[1024], s[1024], r[1024], cum[1025];
  ck_assert_int_le(n, 1024);
  ck_assert_int_ge(n, 2);
  double am = 0.0, rm = 0.0;
  int nm = 0;
  for (int i = 0; i < n; i++)
    if (!cnt || cnt[i] >= 2) {
      am += a_in[i];
      nm++;
    }
  for (int i = 0; i < n; i++) a[i] = !cnt || cnt[i] >= 2 ? a_in[i] : am / nm;
  /* A measured 0 beside a measured weight: that weight, at most the mean. */
  for (int i = 0; i < n; i++) {
    if ((cnt && cnt[i] < 2) || a_in[i] != 0.0) continue;
    double nb = 0.0;
    for (int j = i - 1; j <= i + 1; j += 2)
      if (j >= 0 && j < n && (!cnt || cnt[j] >= 2)) nb = fmax(nb, a_in[j]);
    a[i] = fmin(nb, am / nm);
  }
  for (int i = 0; i < n; i++) {
    double left = i > 0 ? a[i - 1] : a[i];      /* s_0 = (7a_0 + a_1)/8 ... */
    double right = i < n - 1 ? a[i + 1] : a[i]; /* ... s_{n-1} = (a_{n-2}+7a_{n-1})/8 */
    s[i] = (left + 6.0 * a[i] + right) / 8.0;
  }
  double ssum = 0.0;
  for (int i = 0; i < n; i++) ssum += s[i];
  cum[0] = 0.0;
  for (int i = 0; i < n; i++) {
    double si = s[i] / ssum;
    if (si < 1e-300) si = 1e-300; /* doc/algorithm.md: the share floor */
    r[i] = pow((1.0 - si) / log(1.0 / si), alpha);
    if (!cnt || cnt[i] >= 2) rm += r[i];
  }
  for (int i = 0; i < n; i++) {
    if (cnt && cnt[i] < 2) r[i] = rm / nm;
    cum[i + 1] = cum[i] + r[i];
  }
  double R = cum[n];
  enew[0] = 0.0;
  enew[n] = 1.0;
  for (int k = 1; k < n; k++) {
    double t = R * k / n;
    int i = 0; /* the increment with cum[i] <= t < cum[i+1] */
    while (i < n - 1 && !(t < cum[i + 1])) i++;
    enew[k] = eold[i] + (t - cum[i]) / r[i] * (eold[i + 1] - eold[i]);
  }
}

/* ---- a fresh map -------------------------------------------------------- */

START_TEST(test_fresh_map_uniform)
{
  const double lo[3] = {-1.0, 0.0, 10.0}, hi[3] = {2.0, 0.5, 14.0};
  /* box volume 3 * 0.5 * 4 = 6 */
  for (int shared = 0; shared <= 1; shared++) {
    strata_map *g = make_grid(3, 5, shared, lo, hi);
    ck_assert_int_eq(strata_map_naxes(g), shared ? 1 : 3);
    for (int ax = 0; ax < strata_map_naxes(g); ax++) {
      const double *e = strata_map_axis_edges(g, ax);
      for (int i = 0; i <= 5; i++)
        ck_assert_double_eq_tol(e[i], i / 5.0, 1e-15);
    }
    rng_seed(1);
    for (int t = 0; t < 1000; t++) {
      double y[3], x[3] = {0};
      int inc[3];
      for (int d = 0; d < 3; d++) y[d] = rng_u();
      double jac = strata_map_apply(g, y, x, inc);
      REQUIRE(fabs(jac - 6.0) <= 1e-13, "J = %.17g, want 6", jac);
      for (int d = 0; d < 3; d++) {
        double want = lo[d] + (hi[d] - lo[d]) * y[d];
        REQUIRE(fabs(x[d] - want) <= 1e-14 * (1.0 + fabs(want)),
                      "x[%d] = %.17g want %.17g", d, x[d], want);
        REQUIRE(inc[d] == (int)floor(y[d] * 5.0), "inc[%d] = %d for y %.17g", d, inc[d], y[d]);
      }
    }
    /* Fixed points: y = 0.5 is the box centre; y = 0.1 is in increment 0. */
    double y[3] = {0.5, 0.5, 0.5}, x[3] = {0};
    int inc[3];
    strata_map_apply(g, y, x, inc);
    ck_assert_double_eq_tol(x[0], 0.5, 1e-15);
    ck_assert_double_eq_tol(x[1], 0.25, 1e-15);
    ck_assert_double_eq_tol(x[2], 12.0, 1e-14);
    ck_assert_int_eq(inc[0], 2); /* 0.5 * 5 = 2.5 */
    strata_map_free(g);
  }
}
END_TEST

START_TEST(test_map_endpoints)
{
  /* y just inside (0,1) maps just inside the box; y -> 1 stays in the last
   * increment (i = n-1) rather than reading past the edges. */
  const double lo[2] = {0.0, -3.0}, hi[2] = {1.0, 5.0};
  strata_map *g = make_grid(2, 10, 0, lo, hi);
  double y[2] = {nextafter(1.0, 0.0), 1e-300}, x[2] = {0};
  int inc[2];
  double jac = strata_map_apply(g, y, x, inc);
  ck_assert_int_eq(inc[0], 9);
  ck_assert_int_eq(inc[1], 0);
  ck_assert(x[0] <= 1.0 && x[0] > 0.999999);
  ck_assert(x[1] >= -3.0 && x[1] < -2.999999);
  ck_assert_double_eq_tol(jac, 8.0, 1e-13); /* 1 * 8 */
  strata_map_free(g);
}
END_TEST

START_TEST(test_copy)
{
  const double lo[2] = {0.0, 0.0}, hi[2] = {1.0, 2.0};
  strata_map *g = make_grid(2, 6, 0, lo, hi);
  strata_map *h = make_grid(2, 6, 0, lo, lo); /* zero-width box, to be overwritten */
  strata_map *bad = make_grid(2, 7, 0, lo, hi);
  axis_edges(g, 1)[3] = 0.4; /* 0.333 -> 0.4, still increasing */
  ck_assert_int_eq(strata_map_copy(h, g), 0);
  ck_assert_double_eq(axis_edges(h, 1)[3], 0.4);
  ck_assert_double_eq(h->width[1], 2.0);
  ck_assert_int_ne(strata_map_copy(bad, g), 0);
  strata_map_free(g);
  strata_map_free(h);
  strata_map_free(bad);
}
END_TEST

/* ---- refinement keeps a valid map -------------------------------------- */

START_TEST(test_refine_random_weights_valid)
{
  const int nincs[] = {2, 3, 10, 64, 500};
  const double alphas[] = {0.5, 1.0, 1.5};
  const double lo[3] = {-2.0, 1.0, 0.0}, hi[3] = {3.0, 1.5, 100.0};
  for (size_t in = 0; in < sizeof nincs / sizeof *nincs; in++) {
    for (size_t ia = 0; ia < sizeof alphas / sizeof *alphas; ia++) {
      int n = nincs[in];
      strata_map *g = make_grid(3, n, 0, lo, hi);
      double *w = malloc(sizeof(double) * 3 * (size_t)n);
      double *c = malloc(sizeof(double) * 3 * (size_t)n);
      rng_seed(100 + in * 10 + ia);
      for (int it = 0; it < 15; it++) {
        for (int k = 0; k < 3 * n; k++) {
          /* positive weights over 40 decades; some increments unsampled */
          c[k] = rng_u() < 0.1 ? 0.0 : floor(1.0 + 20.0 * rng_u());
          w[k] = c[k] * exp(92.0 * (rng_u() - 0.5));
        }
        strata_map_refine(g, w, c, alphas[ia]);
        for (int ax = 0; ax < 3; ax++) check_valid_axis(g, ax, "random");
        for (int t = 0; t < 200; t++) {
          double y[3], x[3] = {0};
          int inc[3];
          for (int d = 0; d < 3; d++) y[d] = rng_u();
          double jac = strata_map_apply(g, y, x, inc);
          REQUIRE(jac > 0.0 && isfinite(jac), "n=%d J = %g", n, jac);
          for (int d = 0; d < 3; d++)
            REQUIRE(x[d] >= lo[d] && x[d] <= hi[d],
                          "n=%d x[%d]=%.17g outside [%g,%g]", n, d, x[d], lo[d], hi[d]);
        }
      }
      free(w);
      free(c);
      strata_map_free(g);
    }
  }
}
END_TEST

START_TEST(test_refine_spike_repeated_valid)
{
  /* All weight in one increment, refined many times with alpha = 1: the
   * edges crowd together but must stay strictly increasing. */
  const int n = 100;
  const double lo[1] = {0.0}, hi[1] = {1.0};
  strata_map *g = make_grid(1, n, 0, lo, hi);
  double w[100], c[100];
  for (int it = 0; it < 60; it++) {
    const double *e = strata_map_axis_edges(g, 0);
    for (int i = 0; i < n; i++) {
      c[i] = 1.0;
      /* weight 1e200 in the increment holding x = 0.3, 1e-200 elsewhere */
      w[i] = (e[i] <= 0.3 && 0.3 < e[i + 1]) ? 1e200 : 1e-200;
    }
    strata_map_refine(g, w, c, 1.0);
    check_valid_axis(g, 0, "spike");
  }
  strata_map_free(g);
}
END_TEST

/* ---- invariances -------------------------------------------------------- */

START_TEST(test_constant_integrand_keeps_uniform)
{
  /* Equal averages a_i = wsum/count in every increment: s_i = 1/n, all r_i
   * equal, so each new edge lands on the old one.  The counts differ, so a
   * map that used wsum instead of wsum/count would move. */
  const int n = 7, dim = 2;
  const double lo[2] = {0.0, -1.0}, hi[2] = {1.0, 1.0};
  const double alphas[] = {0.5, 1.0, 2.0};
  for (size_t ia = 0; ia < 3; ia++) {
    strata_map *g = make_grid(dim, n, 0, lo, hi);
    double w[14], c[14];
    for (int k = 0; k < dim * n; k++) {
      c[k] = 1.0 + (k * 7) % 5; /* 1,3,5,2,4,1,... */
      w[k] = 2.5 * c[k];
    }
    for (int it = 0; it < 5; it++) strata_map_refine(g, w, c, alphas[ia]);
    for (int ax = 0; ax < dim; ax++)
      for (int i = 0; i <= n; i++)
        ck_assert_double_eq_tol(strata_map_axis_edges(g, ax)[i], (double)i / n, 1e-12);
    strata_map_free(g);
  }
}
END_TEST

START_TEST(test_alpha_zero_no_change)
{
  const int n = 8;
  const double lo[2] = {0.0, 0.0}, hi[2] = {1.0, 1.0};
  strata_map *g = make_grid(2, n, 0, lo, hi);
  double w[16], c[16];
  for (int k = 0; k < 16; k++) {
    c[k] = 10.0;
    w[k] = 1.0 + k * k; /* strongly non-uniform */
  }
  strata_map_refine(g, w, c, 0.5); /* make the map non-uniform first */
  double before[18];
  memcpy(before, g->edges, sizeof before);
  ck_assert(fabs(before[1] - 1.0 / n) > 1e-3);
  /* strongly non-uniform again, with empty increments (r_i = 0 there) */
  for (int k = 0; k < 16; k++) w[k] = k % 4 == 0 ? 0.0 : 1.0 / (1.0 + k);
  for (int k = 0; k < 4; k++) c[k] = 0.0;
  strata_map_refine(g, w, c, 0.0);
  ck_assert_int_eq(memcmp(before, g->edges, sizeof before), 0);
  strata_map_free(g);
}
END_TEST

START_TEST(test_zero_axis_unchanged)
{
  const int n = 6, dim = 3;
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  strata_map *g = make_grid(dim, n, 0, lo, hi);
  /* a non-uniform starting map on axis 1, so "unchanged" is not "uniform" */
  double *e1 = axis_edges(g, 1);
  const double start1[7] = {0.0, 0.05, 0.1, 0.3, 0.7, 0.9, 1.0};
  memcpy(e1, start1, sizeof start1);
  double w[18], c[18];
  for (int i = 0; i < n; i++) {
    w[0 * n + i] = 2.0 + 2 * i;   c[0 * n + i] = 2.0;
    w[1 * n + i] = 0.0;           c[1 * n + i] = 5.0;  /* sampled, all zero */
    w[2 * n + i] = (i == 2) * 9.; c[2 * n + i] = 3.0;
  }
  strata_map_refine(g, w, c, 0.5);
  ck_assert_int_eq(memcmp(axis_edges(g, 1), start1, sizeof start1), 0);
  ck_assert(fabs(axis_edges(g, 0)[3] - 0.5) > 1e-3); /* the others did move */
  ck_assert(fabs(axis_edges(g, 2)[3] - 0.5) > 1e-3);
  check_valid_axis(g, 0, "zero-axis");
  check_valid_axis(g, 2, "zero-axis");
  /* Never sampled at all (counts zero too): also unchanged. */
  for (int i = 0; i < n; i++) c[1 * n + i] = 0.0;
  strata_map_refine(g, w, c, 0.5);
  ck_assert_int_eq(memcmp(axis_edges(g, 1), start1, sizeof start1), 0);
  strata_map_free(g);
}
END_TEST

START_TEST(test_undersampled_increment_keeps_width)
{
  /* Equal averages in every well-sampled increment of a non-uniform map,
   * and increments with no sample, or one sample of any weight: the map
   * must stay as it is.  (Reading an unsampled increment as weight 0 shrank
   * it towards nothing; one sample decided its width alone.) */
  const int n = 8;
  const double lo[1] = {0}, hi[1] = {1};
  const double old[9] = {0.0, 0.05, 0.1, 0.3, 0.45, 0.7, 0.8, 0.95, 1.0};
  for (int variant = 0; variant < 3; variant++) {
    strata_map *g = make_grid(1, n, 0, lo, hi);
    memcpy(axis_edges(g, 0), old, sizeof old);
    double w[8], c[8];
    for (int i = 0; i < n; i++) {
      c[i] = 3.0 + i;
      w[i] = 2.5 * c[i];
    }
    c[2] = 0.0;
    w[2] = 0.0;
    c[5] = variant == 0 ? 0.0 : 1.0; /* one sample, huge or zero */
    w[5] = variant == 1 ? 1e30 : 0.0;
    if (variant == 2) c[0] = w[0] = 0.0; /* at the end of the axis too */
    strata_map_refine(g, w, c, 0.5);
    for (int i = 0; i <= n; i++)
      REQUIRE(fabs(strata_map_axis_edges(g, 0)[i] - old[i]) <= 1e-12,
              "variant %d e[%d] = %.17g, was %.17g", variant, i, strata_map_axis_edges(g, 0)[i],
              old[i]);
    strata_map_free(g);
  }
}
END_TEST

START_TEST(test_ninc_follows_neval)
{
  /* STRATA_MAP_SAMPLES_PER_INC samples per increment up to
   * STRATA_MAP_COARSE_INC increments, STRATA_MAP_SAMPLES_PER_FINE_INC per
   * increment beyond; never above the ceiling, never below 1, never
   * shrinking as neval grows. */
  /* ceiling, neval, dim, max_nhcube, the increments wanted.  In d=8 the
   * samples rule alone; in d=2 and 3 at least two increments per stratum
   * along an axis (map.h): 15 x 15 strata at 1e3 samples, 158 x 158 at
   * 1e5 (50 x 50 with max_nhcube 2500), 500 x 500 at 1e6; 6^3 in d=3. */
  static const struct {
    int ninc;
    int64_t neval;
    int dim;
    int64_t max_nhcube;
    int want;
  } cases[] = {
      {1000, 1000000, 8, 1000000, 1000},  {1000, 999999, 8, 1000000, 999},
      {1000, 200000, 8, 1000000, 200},    {1000, 100000, 8, 1000000, 100},
      {1000, 10000, 8, 1000000, 100},     {1000, 9999, 8, 1000000, 99},
      {1000, 3000, 8, 1000000, 30},       {50, 3000, 8, 1000000, 30},
      {20, 3000, 8, 1000000, 20},         {1000, 300, 8, 1000000, 3},
      {1000, 5, 8, 1000000, 1},           {1000000, INT64_C(1) << 62, 8, 1000000, 1000000},
      {1000, 1000, 2, 1000000, 30},       {1000, 10000, 2, 1000000, 100},
      {1000, 100000, 2, 1000000, 316},    {1000, 100000, 2, 2500, 100},
      {200, 100000, 2, 1000000, 200},     {1000, 1000000, 2, 1000000, 1000},
      {1000, 1000, 3, 1000000, 12},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    ck_assert_int_eq(strata_map_base_ninc(cases[i].ninc, cases[i].neval, cases[i].dim,
                                          cases[i].max_nhcube),
                     cases[i].want);
  int prev = 1, prev2 = 1;
  for (int64_t neval = 1; neval < 100000000; neval = neval * 3 / 2 + 1) {
    const int k = strata_map_base_ninc(1000, neval, 8, 1000000);
    REQUIRE(k >= prev && k >= 1 && k <= 1000 &&
                (k == 1 || (int64_t)k * STRATA_MAP_SAMPLES_PER_INC <= neval),
            "neval %lld: %d increments (before %d)", (long long)neval, k, prev);
    prev = k;
    /* One dimension: the stratification alone (map.h says why). */
    REQUIRE(strata_map_base_ninc(1000, neval, 1, 1000000) == 1, "d=1, neval %lld",
            (long long)neval);
    const int k2 = strata_map_base_ninc(1000, neval, 2, 1000000);
    REQUIRE(k2 >= prev2 && k2 >= k && k2 <= 1000, "d=2, neval %lld: %d increments (before %d)",
            (long long)neval, k2, prev2);
    prev2 = k2;
  }
}
END_TEST

/* ---- hand-computed refinements ------------------------------------------ */

START_TEST(test_refine_hand_case)
{
  /* Uniform old edges {0, .25, .5, .75, 1}, alpha = 0.5,
   *   counts {2,4,2,8}, wsum {2,8,6,32}  =>  a = {1, 2, 3, 4}.
   *   s = {(7*1+2)/8, (1+12+3)/8, (2+18+4)/8, (3+28)/8} = {9,16,24,31}/8,
   *   sum 80/8 = 10  =>  s = {0.1125, 0.2, 0.3, 0.3875}.
   *   r_i = sqrt((1-s)/ln(1/s)):
   *     r0 = sqrt(0.8875/2.18480) = 0.637350209381440,
   *     r1 = sqrt(0.8/1.60944)    = 0.705030458666638,
   *     r2 = sqrt(0.7/1.20397)    = 0.762501463315170,
   *     r3 = sqrt(0.6125/0.94803) = 0.803784905556133;
   *   R = 2.908667036919381, R/4 = 0.727166759229845;
   *   cumulative: 0, 0.637350, 1.342381, 2.104882, 2.908667.
   *   e1: target 0.727167 in increment 1:
   *       0.25 + (0.727167-0.637350)/0.705030 * 0.25 = 0.281848464397647
   *   e2: target 1.454334 in increment 2:
   *       0.50 + (1.454334-1.342381)/0.762501 * 0.25 = 0.536705782151836
   *   e3: target 2.181500 in increment 3:
   *       0.75 + (2.181500-2.104882)/0.803785 * 0.25 = 0.773830425838016
   * The same weights on axis 1 with non-uniform old edges
   * {0, 0.1, 0.4, 0.8, 1} (same r, so same targets; only the interpolation
   * inside the old increments changes):
   *   e1 = 0.1 + (0.727167-0.637350)/0.705030 * 0.3 = 0.138218157277177
   *   e2 = 0.4 + (1.454334-1.342381)/0.762501 * 0.4 = 0.458729251442938
   *   e3 = 0.8 + (2.181500-2.104882)/0.803785 * 0.2 = 0.819064340670413 */
  const double lo[2] = {0, 0}, hi[2] = {1, 1};
  strata_map *g = make_grid(2, 4, 0, lo, hi);
  const double old1[5] = {0.0, 0.1, 0.4, 0.8, 1.0};
  memcpy(axis_edges(g, 1), old1, sizeof old1);
  const double w[8] = {2, 8, 6, 32, 2, 8, 6, 32};
  const double c[8] = {2, 4, 2, 8, 2, 4, 2, 8};
  strata_map_refine(g, w, c, 0.5);
  const double want[2][5] = {
      {0.0, 0.28184846439764716, 0.53670578215183643, 0.77383042583801566, 1.0},
      {0.0, 0.13821815727717659, 0.45872925144293829, 0.81906434067041253, 1.0}};
  for (int ax = 0; ax < 2; ax++)
    for (int i = 0; i <= 4; i++)
      REQUIRE(fabs(strata_map_axis_edges(g, ax)[i] - want[ax][i]) <= 1e-12,
                    "axis %d e[%d] = %.17g want %.17g", ax, i,
                    strata_map_axis_edges(g, ax)[i], want[ax][i]);
  strata_map_free(g);
}
END_TEST

START_TEST(test_refine_hand_case_zero_shares)
{
  /* Increments with zero weight.  shared/design/algorithm.md has r_i = 0
   * where s_i = 0; doc/algorithm.md documents two deliberate changes: an
   * increment that read 0 beside one that did not takes that one's weight,
   * or the axis's average if less (maprefine.h, strata_map_unseen), and a
   * share below 1e-300 is raised to 1e-300 before damping, so that a region
   * with no observed weight keeps a little density.
   * Old edges {0, 0.1, 0.4, 0.8, 1}, alpha = 1,
   *   counts {2,2,2,3}, wsum {0,0,0,24}  =>  a = {0, 0, 0, 8};
   *   increment 2 borders increment 3: a_2 = min(8, 8/4) = 2, a = {0, 0, 2, 8}.
   *   s = {0, 2/8, 20/8, 58/8}/10 = {0, 0.025, 0.25, 0.725} -> {1e-300, ...}
   *   r = {(1-1e-300)/ln(1e300) = 0.00144764827301084,
   *        0.975/ln 40 = 0.264307904914771, 0.75/ln 4 = 0.541010640333361,
   *        0.275/ln(1/0.725) = 0.855143046372913}
   *   R = 1.661909239894057, R/4 = 0.415477309973514;
   *   cumulative 0, 0.001448, 0.265756, 0.806766, 1.661909.
   *   e1: target 0.415477 in increment 2:
   *       0.4 + (0.415477-0.265756)/0.541011 * 0.4 = 0.510697827823479
   *   e2: target 0.830955 in increment 3:
   *       0.8 + (0.830955-0.806766)/0.855143 * 0.2 = 0.805657164968710
   *   e3: target 1.246432 in increment 3:
   *       0.8 + (1.246432-0.806766)/0.855143 * 0.2 = 0.902828582484355
   * (Read as 0, increment 2 gave up most of its width:
   *  {0, 0.720402640159065, 0.854740191429560, 0.927370095714780, 1}.) */
  const double lo[1] = {0}, hi[1] = {1};
  strata_map *g = make_grid(1, 4, 0, lo, hi);
  const double old[5] = {0.0, 0.1, 0.4, 0.8, 1.0};
  memcpy(axis_edges(g, 0), old, sizeof old);
  const double w[4] = {0, 0, 0, 24}, c[4] = {2, 2, 2, 3};
  strata_map_refine(g, w, c, 1.0);
  const double want[5] = {0.0, 0.51069782782347946, 0.80565716496871022,
                          0.90282858248435511, 1.0};
  for (int i = 0; i <= 4; i++)
    REQUIRE(fabs(strata_map_axis_edges(g, 0)[i] - want[i]) <= 1e-12,
            "e[%d] = %.17g want %.17g", i, strata_map_axis_edges(g, 0)[i], want[i]);
  strata_map_free(g);
}
END_TEST

START_TEST(test_refine_matches_reference)
{
  /* Random cases, non-uniform old maps, against ref_refine_axis. */
  const int nincs[] = {2, 3, 5, 17, 100};
  const double alphas[] = {0.25, 0.5, 1.0, 1.7};
  rng_seed(7);
  for (size_t in = 0; in < 5; in++) {
    for (size_t ia = 0; ia < 4; ia++) {
      int n = nincs[in];
      const double lo[2] = {0, 0}, hi[2] = {1, 1};
      strata_map *g = make_grid(2, n, 0, lo, hi);
      double *w = malloc(sizeof(double) * 2 * (size_t)n);
      double *c = malloc(sizeof(double) * 2 * (size_t)n);
      double *a = malloc(sizeof(double) * (size_t)n);
      double *old = malloc(sizeof(double) * (size_t)(n + 1));
      double *want = malloc(sizeof(double) * 2 * (size_t)(n + 1));
      for (int rep = 0; rep < 4; rep++) {
        /* a random strictly increasing old map on both axes */
        for (int ax = 0; ax < 2; ax++) {
          double *e = axis_edges(g, ax), acc = 0.0;
          e[0] = 0.0;
          for (int i = 1; i <= n; i++) e[i] = (acc += 0.2 + rng_u());
          for (int i = 1; i < n; i++) e[i] /= acc;
          e[n] = 1.0;
        }
        /* rep 2 and 3: some increments with 0 or 1 sample (not trusted) */
        for (int k = 0; k < 2 * n; k++) {
          c[k] = rep >= 2 && k % 4 == 1 ? floor(2.0 * rng_u()) : floor(2.0 + 10.0 * rng_u());
          w[k] = c[k] * (rep == 3 && k % 3 == 0 ? 0.0 : exp(6.0 * rng_u()));
        }
        if (n == 2) { /* one trusted increment with weight per axis at least */
          c[0] = c[n] = 5.0;
          w[0] = w[n] = 7.0;
        }
        /* reference edges for both axes from the old maps, then one refine */
        for (int ax = 0; ax < 2; ax++) {
          memcpy(old, strata_map_axis_edges(g, ax), sizeof(double) * (size_t)(n + 1));
          for (int i = 0; i < n; i++)
            a[i] = c[ax * n + i] > 0.0 ? w[ax * n + i] / c[ax * n + i] : 0.0;
          ref_refine_axis(old, n, a, c + ax * n, alphas[ia], want + ax * (n + 1));
        }
        strata_map_refine(g, w, c, alphas[ia]);
        for (int ax = 0; ax < 2; ax++)
          for (int i = 0; i <= n; i++)
            REQUIRE(fabs(strata_map_axis_edges(g, ax)[i] - want[ax * (n + 1) + i]) <= 1e-12,
                          "n=%d alpha=%g rep=%d ax=%d e[%d]=%.17g want %.17g", n,
                          alphas[ia], rep, ax, i, strata_map_axis_edges(g, ax)[i],
                          want[ax * (n + 1) + i]);
      }
      free(w);
      free(c);
      free(a);
      free(old);
      free(want);
      strata_map_free(g);
    }
  }
}
END_TEST

/* ---- direction of adaptation ------------------------------------------- */

static double peak(double x) { return exp(-200.0 * (x - 0.3) * (x - 0.3)); }

START_TEST(test_refine_moves_toward_peak)
{
  /* Weights f^2 of a narrow peak at x = 0.3, estimated at each increment's
   * centre: the increment holding 0.3 must shrink, far ones must grow. */
  const int n = 50;
  const double lo[1] = {0.0}, hi[1] = {1.0};
  strata_map *g = make_grid(1, n, 0, lo, hi);
  double w[50], c[50];
  double prev_width = 1.0 / n;
  for (int it = 0; it < 6; it++) {
    const double *e = strata_map_axis_edges(g, 0);
    for (int i = 0; i < n; i++) {
      /* J f at the centre: J = n*du */
      double xm = 0.5 * (e[i] + e[i + 1]);
      double jf = n * (e[i + 1] - e[i]) * peak(xm);
      c[i] = 2.0;
      w[i] = 2.0 * jf * jf;
    }
    strata_map_refine(g, w, c, 0.5);
    check_valid_axis(g, 0, "peak");
    int ip = 0;
    while (!(e[ip] <= 0.3 && 0.3 < e[ip + 1])) ip++;
    double wp = e[ip + 1] - e[ip];
    REQUIRE(wp < prev_width, "iteration %d: width at the peak %.6g did not shrink from %.6g",
                  it, wp, prev_width);
    prev_width = wp;
    /* far from the peak the increments widen */
    REQUIRE(e[n] - e[n - 1] > 1.0 / n, "last width %.6g", e[n] - e[n - 1]);
    REQUIRE(e[1] - e[0] > 1.0 / n, "first width %.6g", e[1] - e[0]);
  }
  /* After 6 iterations many edges sit within 0.1 of the peak: more than the
   * 10 of a uniform map (0.2 * 50). */
  const double *e = strata_map_axis_edges(g, 0);
  int near = 0;
  for (int i = 0; i <= n; i++) near += fabs(e[i] - 0.3) < 0.1;
  ck_assert_int_gt(near, 20);
  strata_map_free(g);
}
END_TEST

START_TEST(test_refine_first_step_direction)
{
  /* One step from a uniform map, weight only in increment 3 of 10 (y in
   * [0.3,0.4)), whose neighbours 2 and 4 read 0 and so count with the
   * average (maprefine.h, strata_map_unseen): every interior edge moves
   * toward those three (or stays), and at least one lands inside 3. */
  const int n = 10;
  const double lo[1] = {0.0}, hi[1] = {1.0};
  strata_map *g = make_grid(1, n, 0, lo, hi);
  double w[10] = {0}, c[10];
  for (int i = 0; i < n; i++) c[i] = 4.0;
  w[3] = 40.0;
  strata_map_refine(g, w, c, 0.5);
  const double *e = strata_map_axis_edges(g, 0);
  int inside = 0;
  for (int k = 1; k < n; k++) {
    double old = (double)k / n;
    if (old <= 0.2) REQUIRE(e[k] >= old - 1e-15, "e[%d] = %.6g moved away", k, e[k]);
    if (old >= 0.5) REQUIRE(e[k] <= old + 1e-15, "e[%d] = %.6g moved away", k, e[k]);
    inside += e[k] > 0.3 && e[k] < 0.4;
  }
  ck_assert_int_ge(inside, 1);
  strata_map_free(g);
}
END_TEST

/* ---- shared (vegas1d) map ----------------------------------------------- */

START_TEST(test_shared_sums_over_axes)
{
  const int n = 12, dim = 3;
  const double lo[3] = {0.0, -1.0, 2.0}, hi[3] = {1.0, 1.0, 7.0};
  strata_map *gs = make_grid(dim, n, 1, lo, hi);
  const double lo1[1] = {0.0}, hi1[1] = {1.0};
  strata_map *g1 = make_grid(1, n, 0, lo1, hi1);
  double w[36], c[36], wsum[12], csum[12];
  rng_seed(42);
  for (int it = 0; it < 3; it++) {
    for (int k = 0; k < dim * n; k++) {
      /* counts differ by axis, so summing accumulators differs from
       * averaging per-axis averages */
      c[k] = floor(1.0 + 30.0 * rng_u());
      w[k] = c[k] * exp(4.0 * rng_u()) * (k / n + 1);
    }
    for (int i = 0; i < n; i++) {
      wsum[i] = 0.0;
      csum[i] = 0.0;
      for (int d = 0; d < dim; d++) {
        wsum[i] += w[d * n + i];
        csum[i] += c[d * n + i];
      }
    }
    strata_map_refine(gs, w, c, 0.5);
    strata_map_refine(g1, wsum, csum, 0.5);
    check_valid_axis(gs, 0, "shared");
    for (int i = 0; i <= n; i++)
      REQUIRE(fabs(strata_map_axis_edges(gs, 0)[i] - strata_map_axis_edges(g1, 0)[i]) <= 1e-14,
                    "it %d e[%d]: shared %.17g, summed %.17g", it, i,
                    strata_map_axis_edges(gs, 0)[i], strata_map_axis_edges(g1, 0)[i]);
    ck_assert(fabs(strata_map_axis_edges(gs, 0)[6] - 0.5) > 1e-6); /* it did move */
  }
  /* Every axis reads the one map: the same y on each axis gives the same unit
   * position, scaled to each axis's range. */
  const double *e = strata_map_axis_edges(g1, 0);
  for (int t = 1; t < 100; t++) {
    double yv = t / 100.0 + 0.001;
    double y[3] = {yv, yv, yv}, x[3] = {0};
    int inc[3];
    double jac = strata_map_apply(gs, y, x, inc);
    int i = (int)floor(yv * n);
    double du = e[i + 1] - e[i];
    double u = e[i] + (yv * n - i) * du;
    double jwant = 1.0;
    for (int d = 0; d < dim; d++) {
      REQUIRE(fabs(x[d] - (lo[d] + (hi[d] - lo[d]) * u)) <= 1e-12, "y %g x[%d] = %.17g", yv, d,
              x[d]);
      REQUIRE(inc[d] == i, "y %g inc[%d] = %d want %d", yv, d, inc[d], i);
      jwant *= n * du * (hi[d] - lo[d]);
    }
    REQUIRE(fabs(jac - jwant) <= 1e-12 * jwant, "J %.17g want %.17g", jac, jwant);
  }
  strata_map_free(gs);
  strata_map_free(g1);
}
END_TEST

/* ---- Jacobian and monotonicity of a refined map ------------------------- */

static strata_map *refined_grid(int dim, int n, const double *lo, const double *hi)
{
  strata_map *g = make_grid(dim, n, 0, lo, hi);
  double *w = malloc(sizeof(double) * (size_t)(dim * n));
  double *c = malloc(sizeof(double) * (size_t)(dim * n));
  rng_seed(9);
  for (int it = 0; it < 4; it++) {
    for (int k = 0; k < dim * n; k++) {
      c[k] = 5.0;
      w[k] = 5.0 * exp(10.0 * rng_u());
    }
    strata_map_refine(g, w, c, 0.7);
  }
  free(w);
  free(c);
  return g;
}

START_TEST(test_jacobian_refined)
{
  const int dim = 3, n = 20;
  const double lo[3] = {-1.0, 0.0, 5.0}, hi[3] = {1.0, 0.25, 8.0};
  strata_map *g = refined_grid(dim, n, lo, hi);
  rng_seed(11);
  for (int t = 0; t < 2000; t++) {
    double y[3], x[3] = {0};
    int inc[3];
    for (int d = 0; d < dim; d++) y[d] = rng_u();
    double jac = strata_map_apply(g, y, x, inc);
    double jwant = 1.0;
    for (int d = 0; d < dim; d++) {
      const double *e = strata_map_axis_edges(g, d);
      int i = (int)floor(y[d] * n);
      double du = e[i + 1] - e[i];
      jwant *= n * du * (hi[d] - lo[d]);
      double xw = lo[d] + (hi[d] - lo[d]) * (e[i] + (y[d] * n - i) * du);
      REQUIRE(inc[d] == i, "inc[%d] = %d want %d", d, inc[d], i);
      REQUIRE(fabs(x[d] - xw) <= 1e-13 * (1.0 + fabs(xw)), "x[%d]", d);
    }
    REQUIRE(fabs(jac - jwant) <= 1e-12 * jwant, "J %.17g want %.17g", jac, jwant);
  }
  /* The map is onto the box: the mean of J over y is the box volume.
   * One point per increment (midpoints) integrates the piecewise-constant J
   * exactly: (1/n) sum_i n du_i width = width. */
  for (int d = 0; d < dim; d++) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
      double y[3] = {0.5, 0.5, 0.5}, x[3] = {0};
      int inc[3];
      y[d] = (i + 0.5) / n;
      double jac = strata_map_apply(g, y, x, inc);
      /* divide out the other axes' factors, computed independently */
      double other = 1.0;
      for (int d2 = 0; d2 < dim; d2++) {
        if (d2 == d) continue;
        const double *e = strata_map_axis_edges(g, d2);
        other *= n * (e[n / 2 + 1] - e[n / 2]) * (hi[d2] - lo[d2]);
      }
      sum += jac / other / n;
    }
    ck_assert_double_eq_tol(sum, hi[d] - lo[d], 1e-12);
  }
  strata_map_free(g);
}
END_TEST

START_TEST(test_map_monotone)
{
  const int dim = 2, n = 30;
  const double lo[2] = {-5.0, 0.0}, hi[2] = {5.0, 1e-3};
  strata_map *g = refined_grid(dim, n, lo, hi);
  for (int d = 0; d < dim; d++) {
    double prev = -INFINITY;
    const int steps = 30000;
    for (int t = 1; t < steps; t++) {
      double y[2] = {0.5, 0.5}, x[2] = {0};
      int inc[2];
      y[d] = (double)t / steps;
      strata_map_apply(g, y, x, inc);
      REQUIRE(x[d] > prev, "axis %d: x(%.9g) = %.17g <= %.17g", d, y[d], x[d], prev);
      prev = x[d];
    }
    /* continuity across increment boundaries */
    const double *e = strata_map_axis_edges(g, d);
    for (int i = 1; i < n; i++) {
      double y[2] = {0.5, 0.5}, x[2] = {0};
      int inc[2];
      y[d] = (double)i / n;
      strata_map_apply(g, y, x, inc);
      double xa = x[d];
      y[d] = nextafter((double)i / n, 0.0);
      strata_map_apply(g, y, x, inc);
      double want = lo[d] + (hi[d] - lo[d]) * e[i];
      double tol = 1e-12 * (hi[d] - lo[d]) + 1e-15 * fabs(want);
      ck_assert_double_eq_tol(xa, want, tol);
      ck_assert_double_eq_tol(x[d], want, tol);
    }
  }
  strata_map_free(g);
}
END_TEST

/* A map stored with base x 2^k increments that samples at every 2^k-th
 * edge (group 2^k) is the map of base increments, bit for bit: from the
 * same sums (laid out at the resolution, dim x base) the same edges, the
 * edges between spaced evenly, and the same points, Jacobians and
 * increments.  Then the split: the same map at half the group, trained at
 * twice the resolution, moves edges inside the old groups and stays
 * valid. */
START_TEST(test_grouped_map_is_coarse_map)
{
  const double lo[2] = {0.0, -1.0}, hi[2] = {1.0, 2.0};
  const int base = 25, group = 8, n = base * group;
  rng_seed(47);
  for (int shared = 0; shared <= 1; shared++) {
    strata_map *coarse = make_grid(2, base, shared, lo, hi);
    strata_map *fine = make_grid(2, n, shared, lo, hi);
    fine->group = group;
    ck_assert_int_eq(strata_map_res(fine), base);
    double *w = calloc(4 * (size_t)base, sizeof *w), *c = calloc(4 * (size_t)base, sizeof *c);
    ck_assert(w && c);
    for (int round = 0; round < 6; round++) {
      /* A peak near 0.3 and noise, with an undersampled increment on axis 1. */
      for (int d = 0; d < 2; d++)
        for (int i = 0; i < base; i++) {
          const double u = (i + 0.5) / base;
          c[(size_t)d * base + i] = d == 1 && i == 7 ? 1.0 : 24.0 + (double)(rng_u() < 0.5);
          w[(size_t)d * base + i] =
              c[(size_t)d * base + i] * (exp(-(u - 0.3) * (u - 0.3) / 0.01) + 0.01 * rng_u());
        }
      strata_map_refine(coarse, w, c, 0.5);
      strata_map_refine(fine, w, c, 0.5);
      for (int ax = 0; ax < strata_map_naxes(fine); ax++) {
        const double *ec = strata_map_axis_edges(coarse, ax), *ef = strata_map_axis_edges(fine, ax);
        for (int k = 0; k <= n; k++) {
          const int i = k / group;
          const double want = k % group == 0 ? ec[i] : strata_map_subdivide(ec, group, k);
          REQUIRE(ef[k] == want, "shared %d round %d axis %d e[%d] = %.17g, want %.17g", shared,
                  round, ax, k, ef[k], want);
        }
        check_valid_axis(fine, ax, "grouped");
      }
      for (int t = 0; t < 1000; t++) {
        double y[2] = {rng_u(), rng_u()}, xc[2], xf[2];
        int ic[2], jf[2];
        const double jc = strata_map_apply(coarse, y, xc, ic), jfine = strata_map_apply(fine, y, xf, jf);
        REQUIRE(jc == jfine && xc[0] == xf[0] && xc[1] == xf[1] && ic[0] == jf[0] && ic[1] == jf[1],
                "shared %d round %d y (%.17g, %.17g): x (%.17g, %.17g) J %.17g against (%.17g, "
                "%.17g) J %.17g", shared, round, y[0], y[1], xf[0], xf[1], jfine, xc[0], xc[1], jc);
      }
    }
    /* The split: groups of 4, trained at 2 base increments; the edges
     * inside the old groups move. */
    fine->group = group / 2;
    for (int d = 0; d < 2; d++)
      for (int i = 0; i < 2 * base; i++) {
        const double u = (i + 0.5) / (2 * base);
        c[(size_t)d * 2 * base + i] = 12.0;
        w[(size_t)d * 2 * base + i] = 12.0 * (exp(-(u - 0.3) * (u - 0.3) / 0.01) + 0.01 * rng_u());
      }
    const double before = strata_map_axis_edges(fine, 0)[group / 2];
    strata_map_refine(fine, w, c, 0.5);
    for (int ax = 0; ax < strata_map_naxes(fine); ax++) check_valid_axis(fine, ax, "split");
    ck_assert_double_ne(strata_map_axis_edges(fine, 0)[group / 2], before);
    strata_map_free(coarse);
    strata_map_free(fine);
    free(w);
    free(c);
  }
}
END_TEST

/* The increments split in two after iterations 10, 11, 12, ... while an
 * iteration gives each at least the floor of samples and the ceiling
 * allows; the map is stored with every split it can make, and a map that
 * never splits keeps the base increments. */
START_TEST(test_splits_follow_the_iterations)
{
  /* d = 4 at 2e4: 100 increments (the rule), floor 10 x 2^(2/3) = 15.9
   * samples, so 1258 increments would do; the ceiling 1000 stops at 800. */
  ck_assert_int_eq(strata_map_base_ninc(1000, 20000, 4, 1000000), 100);
  ck_assert_int_eq(strata_map_max_splits(100, 20000, 4, 1000), 3);
  ck_assert_int_eq(strata_map_ninc_for(1000, 20000, 4, 1000000, 1), 800);
  ck_assert_int_eq(strata_map_ninc_for(1000, 20000, 4, 1000000, 0), 100);
  /* d = 8 at 1e4: floor 40 samples, 250 increments: one split.  d = 10 at
   * 1e4: floor 50.8, 196 increments: none.  d = 12 at 3e4: 101.6, one. */
  ck_assert_int_eq(strata_map_ninc_for(1000, 10000, 8, 1000000, 1), 200);
  ck_assert_int_eq(strata_map_ninc_for(1000, 10000, 10, 1000000, 1), 100);
  ck_assert_int_eq(strata_map_ninc_for(1000, 30000, 12, 1000000, 1), 200);
  /* The ceiling: 150 allows no split of 100, 1024 at 5e5 one of 500. */
  ck_assert_int_eq(strata_map_ninc_for(150, 20000, 4, 1000000, 1), 100);
  ck_assert_int_eq(strata_map_ninc_for(1024, 500000, 4, 1000000, 1), 1000);
  /* One dimension: no map to split. */
  ck_assert_int_eq(strata_map_ninc_for(1000, 20000, 1, 1000000, 1), 1);
  /* When: after iterations 10, 11, 12, at most the splits allowed. */
  static const int at[][2] = {{1, 0}, {9, 0}, {10, 1}, {11, 2}, {12, 3}, {13, 3}, {30, 3}};
  for (size_t i = 0; i < sizeof at / sizeof *at; i++)
    ck_assert_int_eq(strata_map_splits_at(at[i][0], 3), at[i][1]);
  ck_assert_int_eq(strata_map_splits_at(30, 0), 0);
  /* The groups the map samples and refines at on the stored map. */
  ck_assert_int_eq(strata_map_group_for(800, 100, 0), 8);
  ck_assert_int_eq(strata_map_group_for(800, 100, 1), 4);
  ck_assert_int_eq(strata_map_group_for(800, 100, 3), 1);
  ck_assert_int_eq(strata_map_group_for(100, 100, 0), 1);
  ck_assert_int_eq(strata_map_group_for(1000, 300, 0), 1); /* not stored so: as it is */
  /* Never past the ceiling or below the floor, over many budgets. */
  for (int64_t neval = 1; neval < 100000000; neval = neval * 3 / 2 + 1)
    for (int dim = 2; dim <= 12; dim += 5) {
      const int base = strata_map_base_ninc(1000, neval, dim, 1000000),
                n = strata_map_ninc_for(1000, neval, dim, 1000000, 1);
      REQUIRE(n % base == 0 && n <= 1000 && n >= base, "neval %lld d=%d: %d of %d",
              (long long)neval, dim, n, base);
      REQUIRE(n == base || (double)neval / n >= strata_map_split_floor(dim),
              "neval %lld d=%d: %d increments, %g samples each", (long long)neval, dim, n,
              (double)neval / n);
    }
}
END_TEST

static Suite *grid_suite(void)
{
  Suite *s = suite_create("map");
  TCase *tc = tcase_create("map");
  tcase_add_test(tc, test_fresh_map_uniform);
  tcase_add_test(tc, test_map_endpoints);
  tcase_add_test(tc, test_copy);
  tcase_add_test(tc, test_jacobian_refined);
  tcase_add_test(tc, test_map_monotone);
  suite_add_tcase(s, tc);

  tc = tcase_create("refine");
  tcase_add_test(tc, test_undersampled_increment_keeps_width);
  tcase_add_test(tc, test_ninc_follows_neval);
  tcase_add_test(tc, test_grouped_map_is_coarse_map);
  tcase_add_test(tc, test_splits_follow_the_iterations);
  tcase_add_test(tc, test_refine_random_weights_valid);
  tcase_add_test(tc, test_refine_spike_repeated_valid);
  tcase_add_test(tc, test_constant_integrand_keeps_uniform);
  tcase_add_test(tc, test_alpha_zero_no_change);
  tcase_add_test(tc, test_zero_axis_unchanged);
  tcase_add_test(tc, test_refine_hand_case);
  tcase_add_test(tc, test_refine_hand_case_zero_shares);
  tcase_add_test(tc, test_refine_matches_reference);
  tcase_add_test(tc, test_refine_moves_toward_peak);
  tcase_add_test(tc, test_refine_first_step_direction);
  tcase_add_test(tc, test_shared_sums_over_axes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return test_run_suite(grid_suite());
}
