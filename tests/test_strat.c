/* Tests of the stratification (src/strat.c, src/strat.h).
 *
 * Expected values are worked out by hand (arithmetic in the comments) or
 * recomputed here independently: M by integer search, the VEGAS+ shares by a
 * separate water-filling written from the design text (sort by sigma^beta,
 * pin the smallest at 2 while their share is below 2). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strat.h"
#include "run.h"
#include "split.h"
#include "ladder.h"
#include "powfrac.h"
#include "testutil.h"

/* ck_assert_* records a mark point (a write to the runner) on every success;
 * in loops of thousands of checks that dominates the run time, so loops use
 * REQUIRE, which calls into check only on failure. */
#define REQUIRE(expr, ...)                                                      \
  do {                                                                          \
    if (!(expr)) ck_assert_msg(expr, __VA_ARGS__);                              \
  } while (0)

/* xorshift64*, independent of the library. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s * 0x9E3779B97F4A7C15ULL + 12345; }
static double rng_u(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  uint64_t r = rng_state * 2685821657736338717ULL;
  return ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static strata_strat *make(int dim, int64_t neval, int64_t cap, double beta, int adaptive)
{
  strata_strat *s = strata_strat_alloc(dim, neval, cap, beta, adaptive);
  ck_assert_ptr_nonnull(s);
  return s;
}

static int64_t ipow(int64_t m, int dim)
{
  int64_t r = 1;
  for (int d = 0; d < dim; d++) r *= m;
  return r;
}

/* start[] is the prefix sum of nh, total() is its last entry. */
static void check_prefix(const strata_strat *s)
{
  int64_t acc = 0;
  for (int64_t h = 0; h < s->nhcube; h++) {
    REQUIRE(s->start[h] == acc, "start[%lld] = %lld, want %lld", (long long)h,
                  (long long)s->start[h], (long long)acc);
    acc += s->nh[h];
  }
  ck_assert_int_eq(s->start[s->nhcube], acc);
  ck_assert_int_eq(strata_strat_total(s), acc);
}

/* ---- hypercubes per axis ------------------------------------------------ */

typedef struct {
  int dim;
  int64_t neval, cap;
  int want;
} hc_case;

START_TEST(test_hcubes_table)
{
  const hc_case cases[] = {
      /* dim 1: M = floor(neval/4) */
      {1, 4, 1000000, 1},          /* 4/4 = 1 */
      {1, 3, 1000000, 1},          /* 0.75 -> 0, at least 1 */
      {1, 1, 1000000, 1},
      {1, 400, 1000000, 100},      /* 100 */
      {1, 403, 1000000, 100},      /* 100.75 */
      {1, 4000000000LL, 1000000, 1000000}, /* 1e9, capped at 1e6 */
      /* dim 2 */
      {2, 1000, 1000000, 15},      /* sqrt(250) = 15.8; 15^2 = 225, 16^2 = 256 */
      {2, 1000000, 1000000, 500},  /* 4*500^2: sqrt(250000) = 500 exactly */
      {2, 999999, 1000000, 499},   /* 249999.75: 499^2 = 249001 <= , 500^2 > */
      {2, 1000000000, 1000000, 1000}, /* sqrt(2.5e8) = 15811, cap: 1000^2 = 1e6 */
      {2, 1000000, 1000, 31},      /* cap: 31^2 = 961 <= 1000 < 32^2 = 1024 */
      {2, 1LL << 54, INT64_MAX, 1 << 26},         /* 4*(2^26)^2 */
      {2, (1LL << 54) - 4, INT64_MAX, (1 << 26) - 1}, /* 2^52-1: sqrt -> 2^26 in double */
      /* dim 3: pow(x, 1/3) of an exact cube is often 1 ulp low */
      {3, 4000000, 1000000, 100},  /* 4*100^3; 100^3 = 1e6 = cap */
      {3, 3999999, 1000000, 99},   /* 999999.75 < 100^3 */
      {3, 4000000, 999999, 99},    /* cap one below 100^3 */
      {3, 3881196, 1000000, 99},   /* 4*99^3 = 4*970299 */
      {3, 3881195, 1000000, 98},   /* 970298.75 < 99^3 */
      {3, 4000000000LL, INT64_MAX, 1000}, /* 4*1000^3 */
      {3, 3999999999LL, INT64_MAX, 999},
      {3, 10000000000LL, 1000000, 100}, /* cap: 100^3 = 1e6 */
      {3, 1LL << 53, INT64_MAX, 1 << 17},         /* 4*(2^17)^3 */
      {3, (1LL << 53) - 4, INT64_MAX, (1 << 17) - 1},
      /* higher dimensions */
      {4, 40000, 1000000, 10},     /* 4*10^4 */
      {4, 39999, 1000000, 9},      /* 9999.75 < 10^4; 9^4 = 6561 */
      {5, 972, 1000000, 3},        /* 4*3^5 = 4*243 */
      {5, 971, 1000000, 2},        /* 242.75 < 243 */
      {6, 255, 1000000, 1},        /* 63.75 < 2^6 = 64 */
      {6, 256, 1000000, 2},        /* 64 = 2^6 */
      {10, 1000000, 1000000, 3},   /* 250000: 3^10 = 59049 <= , 4^10 = 1048576 > */
      {10, 4 * 59049, 1000000, 3}, /* exactly 3^10 */
      {10, 4 * 59049 - 1, 1000000, 2},
      {10, 100000000, 1000000, 3}, /* 2.5e7: 5^10 = 9765625 <=; cap 1e6: 3^10 */
      /* pow() rounding up: one below an exact power, where floor(pow(b, 1/dim))
       * lands on m (1/5, 1/10 round up in binary; b > 2^53 rounds up to m^dim) */
      {5, 4 * (454244160989024LL - 1), INT64_MAX, 853}, /* 854^5 = 454244160989024 */
      {10, 4 * (590490000000000LL - 1), INT64_MAX, 29}, /* 30^10 = 5.9049e14 */
      {16, 4 * (10000000000000000LL - 1), INT64_MAX, 9}, /* 10^16 */
      {2, 4 * (4503599761588225LL - 1), INT64_MAX, 67108864}, /* 67108865^2 */
      {2, 4 * 4503599761588225LL, INT64_MAX, 67108865},
      {20, 4LL << 20, 1000000, 1}, /* 2^20 = 1048576 > cap 1e6 -> 1 */
      {20, 4LL << 20, 1LL << 20, 2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const hc_case *c = &cases[i];
    int got = strata_strat_hcubes_per_axis(c->dim, c->neval, c->cap);
    REQUIRE(got == c->want, "dim %d neval %lld cap %lld: M = %d, want %d", c->dim,
                  (long long)c->neval, (long long)c->cap, got, c->want);
  }
}
END_TEST

START_TEST(test_hcubes_exhaustive)
{
  /* Around every exact power m^dim (times 4), against integer search:
   * the largest M with M^dim <= min(floor(neval/4), cap), at least 1. */
  for (int dim = 1; dim <= 8; dim++) {
    for (int64_t m = 1; m <= 120; m++) {
      if (dim >= 5 && m > 30) break;
      int64_t p = ipow(m, dim);
      for (int64_t delta = -5; delta <= 5; delta++) {
        int64_t neval = 4 * p + delta;
        if (neval < 1) continue;
        const int64_t caps[3] = {INT64_MAX, p, p - 1};
        for (int ic = 0; ic < 3; ic++) {
          int64_t cap = caps[ic];
          if (cap < 1) continue;
          int64_t budget = neval / 4 < cap ? neval / 4 : cap;
          int64_t want = 1;
          while (ipow(want + 1, dim) <= budget) want++;
          int got = strata_strat_hcubes_per_axis(dim, neval, cap);
          REQUIRE(got == want, "dim %d neval %lld cap %lld: M = %d, want %lld", dim,
                        (long long)neval, (long long)cap, got, (long long)want);
        }
      }
    }
  }
}
END_TEST

/* ---- classic allocation ------------------------------------------------- */

START_TEST(test_classic_allocation)
{
  const struct {
    int dim;
    int64_t neval;
    int M;
    int64_t nh;
  } cases[] = {
      {2, 1000, 15, 4},    /* 225 hypercubes, floor(1000/225) = 4 */
      {3, 100000, 29, 4},  /* 25000: 29^3 = 24389; floor(1e5/24389) = 4 */
      {1, 1000, 250, 4},
      {1, 7, 1, 7},        /* 7/4 -> M = 1, one hypercube with 7 */
      {1, 1, 1, 2},        /* max(2, 1) */
      {4, 1000003, 22, 4}, /* 250000.75: 22^4 = 234256, 23^4 = 279841; 1000003/234256 = 4.27 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    strata_strat *s = make(cases[i].dim, cases[i].neval, 1000000, 0.75, 0);
    ck_assert_int_eq(s->M, cases[i].M);
    ck_assert_int_eq(s->nhcube, ipow(cases[i].M, cases[i].dim));
    for (int64_t h = 0; h < s->nhcube; h++) {
      REQUIRE(s->nh[h] == cases[i].nh && s->start[h] == h * cases[i].nh, "case %zu h %lld", i,
              (long long)h);
    }
    check_prefix(s);
    /* reallocation is a no-op in classic mode */
    double *s1 = calloc((size_t)s->nhcube, sizeof(double));
    double *s2 = calloc((size_t)s->nhcube, sizeof(double));
    for (int64_t h = 0; h < s->nhcube; h++) s2[h] = (double)(h % 7) * s->nh[h];
    strata_strat_reallocate(s, s1, s2);
    for (int64_t h = 0; h < s->nhcube; h++)
      REQUIRE(s->nh[h] == cases[i].nh, "realloc changed classic nh[%lld]", (long long)h);
    free(s1);
    free(s2);
    strata_strat_free(s);
  }
  /* The cap lowers M, so more samples per hypercube: dim 2, neval 1e6,
   * cap 1000 -> M = 31, 961 hypercubes, floor(1e6/961) = 1040. */
  strata_strat *s = make(2, 1000000, 1000, 0.75, 0);
  ck_assert_int_eq(s->M, 31);
  for (int64_t h = 0; h < s->nhcube; h++) REQUIRE(s->nh[h] == 1040, "nh[%lld]", (long long)h);
  strata_strat_free(s);
}
END_TEST

/* ---- VEGAS+ allocation -------------------------------------------------- */

START_TEST(test_vegasplus_init)
{
  /* dim 2, neval 1000: 225 hypercubes, 1000 = 4*225 + 100, so 100 of them
   * get 5 and 125 get 4 (500 + 500). */
  strata_strat *s = make(2, 1000, 1000000, 0.75, 1);
  int64_t n4 = 0, n5 = 0;
  for (int64_t h = 0; h < s->nhcube; h++) {
    n4 += s->nh[h] == 4;
    n5 += s->nh[h] == 5;
  }
  ck_assert_int_eq(n4, 125);
  ck_assert_int_eq(n5, 100);
  ck_assert_int_eq(strata_strat_total(s), 1000);
  check_prefix(s);
  strata_strat_free(s);

  const struct {
    int dim;
    int64_t neval;
  } cases[] = {{1, 8}, {1, 4099}, {2, 4 * 500 * 500 + 17}, {3, 123457}, {5, 99991},
               {3, 4000000}, {6, 1000}, {2, 12345678}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    s = make(cases[i].dim, cases[i].neval, 1000000, 0.75, 1);
    int64_t tot = 0, mn = INT64_MAX, mx = 0;
    for (int64_t h = 0; h < s->nhcube; h++) {
      tot += s->nh[h];
      if (s->nh[h] < mn) mn = s->nh[h];
      if (s->nh[h] > mx) mx = s->nh[h];
    }
    REQUIRE(tot == cases[i].neval, "dim %d neval %lld: total %lld", cases[i].dim,
                  (long long)cases[i].neval, (long long)tot);
    ck_assert_int_ge(mn, 2);
    ck_assert_int_le(mx - mn, 1); /* as even as integers allow */
    ck_assert_int_eq(mn, cases[i].neval / s->nhcube);
    check_prefix(s);
    strata_strat_free(s);
  }
}
END_TEST

/* Expected VEGAS+ allocation, computed independently: d_h = sigma_h^beta,
 * pin hypercubes at 2 in order of increasing d while their share of what is
 * left is below 2, then share the rest in proportion to d.  Fills pinned[]
 * and share[] (the real-valued target of every free hypercube). */
static void expected_shares(int64_t N, int64_t neval, double beta, const int64_t *nprev,
                            const double *s1, const double *s2, unsigned char *pinned,
                            double *share)
{
  double *d = malloc(sizeof(double) * (size_t)N);
  int64_t *order = malloc(sizeof(int64_t) * (size_t)N);
  long double dsum = 0.0L;
  for (int64_t h = 0; h < N; h++) {
    long double n = (long double)nprev[h];
    long double mean = s1[h] / n;
    long double var = s2[h] / n - mean * mean; /* sigma_h^2 of the design */
    if (var < 0.0L) var = 0.0L;
    d[h] = beta == 0.0 ? 1.0 : (double)powl(sqrtl(var), (long double)beta);
    dsum += d[h];
    order[h] = h;
    pinned[h] = 0;
  }
  /* insertion sort of indices by d (N is small in these tests) */
  for (int64_t i = 1; i < N; i++) {
    int64_t k = order[i], j = i;
    while (j > 0 && d[order[j - 1]] > d[k]) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = k;
  }
  int64_t left = neval;
  for (int64_t i = 0; i < N; i++) {
    int64_t h = order[i];
    if ((long double)left * d[h] / dsum >= 2.0L) break;
    pinned[h] = 1;
    left -= 2;
    dsum -= d[h];
  }
  for (int64_t h = 0; h < N; h++)
    share[h] = pinned[h] ? 2.0 : (double)((long double)left * d[h] / dsum);
  free(d);
  free(order);
}

/* Per-hypercube sums for the current allocation, from a known sigma and mean
 * per hypercube: S1 = n*mean, S2 = n*(sigma^2 + mean^2). */
static void fake_sums(const strata_strat *s, int kind, double *s1, double *s2)
{
  for (int64_t h = 0; h < s->nhcube; h++) {
    double n = (double)s->nh[h], sig;
    switch (kind) {
    case 0: sig = rng_u(); break;                              /* uniform */
    case 1: sig = exp(12.0 * (rng_u() - 0.5)); break;          /* 5 decades */
    case 2: sig = rng_u() < 0.7 ? 1e-3 * rng_u() : rng_u(); break; /* many small */
    default: sig = rng_u() < 0.3 ? 0.0 : rng_u(); break;       /* some exact */
    }
    double mean = (rng_u() - 0.5) * sig;
    s1[h] = n * mean;
    s2[h] = n * (sig * sig + mean * mean);
  }
}

static void check_reallocation(strata_strat *s, const int64_t *nprev, const double *s1,
                               const double *s2, const char *what)
{
  const int64_t N = s->nhcube;
  unsigned char *pinned = malloc((size_t)N);
  double *share = malloc(sizeof(double) * (size_t)N);
  expected_shares(N, s->neval, s->beta, nprev, s1, s2, pinned, share);
  int64_t tot = 0;
  for (int64_t h = 0; h < N; h++) {
    tot += s->nh[h];
    REQUIRE(s->nh[h] >= 2, "%s: nh[%lld] = %lld", what, (long long)h, (long long)s->nh[h]);
    if (pinned[h])
      /* Share below 2: pinned at 2, unless the 6-bit rounding of its weight
       * lifted the share just across 2, and then within one of it. */
      REQUIRE(s->nh[h] == 2 || s->nh[h] == 3, "%s: nh[%lld] = %lld, want 2 (share below 2)",
                    what, (long long)h, (long long)s->nh[h]);
    else
      /* Within one of its share, the share formed from sigma_h^beta rounded
       * to 6 significant bits (strat.c: quantize), i.e. good to 2^-6 of the
       * weight, so to about 2^-5 of the share (numerator and total). */
      REQUIRE(fabs((double)s->nh[h] - share[h]) <= 1.0 + share[h] / 32.0 + 1e-9,
                    "%s: nh[%lld] = %lld, share %.6f", what, (long long)h,
                    (long long)s->nh[h], share[h]);
  }
  REQUIRE(tot == s->neval, "%s: total %lld, want %lld", what, (long long)tot,
                (long long)s->neval);
  check_prefix(s);
  free(pinned);
  free(share);
}

START_TEST(test_reallocate_random)
{
  const double betas[] = {0.75, 0.5, 1.0};
  const struct {
    int dim;
    int64_t neval;
  } cases[] = {{1, 400}, {2, 1000}, {2, 5003}, {3, 20000}, {4, 3000}};
  char what[128];
  for (size_t ib = 0; ib < 3; ib++) {
    for (size_t ic = 0; ic < sizeof cases / sizeof *cases; ic++) {
      for (uint64_t seed = 1; seed <= 6; seed++) {
        rng_seed(seed * 1000 + ic * 10 + ib);
        strata_strat *s = make(cases[ic].dim, cases[ic].neval, 1000000, betas[ib], 1);
        const int64_t N = s->nhcube;
        double *s1 = malloc(sizeof(double) * (size_t)N);
        double *s2 = malloc(sizeof(double) * (size_t)N);
        int64_t *nprev = malloc(sizeof(int64_t) * (size_t)N);
        for (int it = 0; it < 4; it++) { /* successive iterations */
          memcpy(nprev, s->nh, sizeof(int64_t) * (size_t)N);
          fake_sums(s, (int)((seed + it) % 4), s1, s2);
          strata_strat_reallocate(s, s1, s2);
          snprintf(what, sizeof what, "beta %g dim %d neval %lld seed %llu it %d", betas[ib],
                   cases[ic].dim, (long long)cases[ic].neval, (unsigned long long)seed, it);
          check_reallocation(s, nprev, s1, s2, what);
        }
        free(s1);
        free(s2);
        free(nprev);
        strata_strat_free(s);
      }
    }
  }
}
END_TEST

START_TEST(test_reallocate_hand_case)
{
  /* dim 1, neval 16 -> M = 4, 4 hypercubes of 4 samples.
   * sigma = {0, 1, 2, 4} (mean 0: S1 = 0, S2 = 4 sigma^2 = {0, 4, 16, 64}),
   * beta = 1: d = {0, 1, 2, 4}, sum 7.
   * Shares of 16: {0, 2.29, 4.57, 9.14}: hypercube 0 is pinned at 2,
   * 14 left for d = {1, 2, 4} (sum 7): shares {2, 4, 8}, all >= 2.
   * Result {2, 2, 4, 8}. */
  strata_strat *s = make(1, 16, 1000000, 1.0, 1);
  ck_assert_int_eq(s->nhcube, 4);
  const double s1[4] = {0, 0, 0, 0}, s2[4] = {0, 4, 16, 64};
  strata_strat_reallocate(s, s1, s2);
  const int64_t want[4] = {2, 2, 4, 8};
  for (int h = 0; h < 4; h++) ck_assert_int_eq(s->nh[h], want[h]);
  ck_assert_int_eq(s->start[4], 16);
  ck_assert_int_eq(s->start[2], 4);
  /* Again from {2,2,4,8} with beta 1: sigma = {3, 3, 3, 3} (S2 = n*9) gives
   * equal shares 16/4 = 4 each. */
  const double t1[4] = {0, 0, 0, 0}, t2[4] = {18, 18, 36, 72};
  strata_strat_reallocate(s, t1, t2);
  for (int h = 0; h < 4; h++) ck_assert_int_eq(s->nh[h], 4);
  strata_strat_free(s);

  /* beta = 0.5: d = sigma^0.5; sigma = {1, 1, 16, 16}, dim 1, neval 40
   * (M = 10: 10 hypercubes of 4).  Use sigma = 1 for h < 5 and 16 for h >= 5:
   * d = {1 x5, 4 x5}, sum 25; shares 40*1/25 = 1.6 (< 2: pinned) for h < 5,
   * then 40 - 10 = 30 for d = 4 x5: 6 each.  Result {2 x5, 6 x5}. */
  s = make(1, 40, 1000000, 0.5, 1);
  ck_assert_int_eq(s->nhcube, 10);
  double u1[10], u2[10];
  for (int h = 0; h < 10; h++) {
    double sig = h < 5 ? 1.0 : 16.0;
    u1[h] = 4.0 * 0.5 * sig; /* mean sig/2, variance sig^2 */
    u2[h] = 4.0 * (sig * sig + 0.25 * sig * sig);
  }
  strata_strat_reallocate(s, u1, u2);
  for (int h = 0; h < 10; h++) ck_assert_int_eq(s->nh[h], h < 5 ? 2 : 6);
  strata_strat_free(s);
}
END_TEST

/* neval_frozen: the new total exactly, every hypercube at least 2 and
 * within one sample of its share of the old allocation; classic stays
 * uniform. */
START_TEST(test_rescale)
{
  rng_seed(11);
  strata_strat *s = make(3, 20000, 1000000, 0.75, 1);
  const int64_t N = s->nhcube;
  double *s1 = malloc(sizeof(double) * (size_t)N), *s2 = malloc(sizeof(double) * (size_t)N);
  int64_t *old = malloc(sizeof(int64_t) * (size_t)N);
  fake_sums(s, 2, s1, s2);
  strata_strat_reallocate(s, s1, s2);
  const int64_t targets[] = {200000, 20000, 7777};
  for (int t = 0; t < 3; t++) {
    memcpy(old, s->nh, sizeof(int64_t) * (size_t)N);
    const int64_t before = strata_strat_total(s);
    strata_strat_rescale(s, targets[t]);
    ck_assert_int_eq(s->neval, targets[t]);
    int64_t sum = 0;
    for (int64_t h = 0; h < N; h++) {
      ck_assert_int_ge(s->nh[h], 2);
      const double share = (double)old[h] * (double)targets[t] / (double)before;
      if (share >= 3.0) ck_assert_msg(fabs((double)s->nh[h] - share) <= 1.0,
                                      "hypercube %lld: %lld for a share of %g", (long long)h,
                                      (long long)s->nh[h], share);
      sum += s->nh[h];
      ck_assert_int_eq(s->start[h + 1], sum);
    }
    /* Only the floor of 2 can add to the total. */
    if (targets[t] >= before) ck_assert_int_eq(sum, targets[t]);
    else ck_assert_int_ge(sum, targets[t]);
  }
  free(s1);
  free(s2);
  free(old);
  strata_strat_free(s);
  s = make(2, 5003, 1000000, 0.75, 0);
  strata_strat_rescale(s, 60000);
  for (int64_t h = 0; h < s->nhcube; h++) ck_assert_int_eq(s->nh[h], 60000 / s->nhcube);
  strata_strat_free(s);
}
END_TEST

/* The square-root powers agree with pow() to rounding, for the exponents
 * they take and for others (which go to pow itself). */
START_TEST(test_powfrac)
{
  for (int k = 1; k <= 17; k++)
    for (double x = 1e-300; x < 1e300; x *= 3.7) {
      const double e = k / 8.0, want = pow(x, e), got = strata_powfrac(x, e);
      ck_assert_msg(isinf(want) ? got == want : fabs(got - want) <= 2e-14 * want, "%.17g^%g: %.17g, pow %.17g", x, e, got,
                    want);
    }
  ck_assert(strata_powfrac(0.0, 0.375) == 0.0);
  ck_assert(strata_powfrac(2.0, 0.3) == pow(2.0, 0.3));
}
END_TEST

/* The ladder: within its step of pow(), never decreasing, flat between
 * steps (so the last bits of x do not move it), 0 at 0; other exponents
 * are refused. */
START_TEST(test_ladder)
{
  strata_ladder l;
  ck_assert_int_eq(strata_ladder_init(&l, 0.0), -1);
  ck_assert_int_eq(strata_ladder_init(&l, 2.5), -1);
  for (int k = 1; k <= 16; k++) {
    ck_assert_int_eq(strata_ladder_init(&l, k / 8.0), 0);
    const double e = k / 8.0;
    /* log2 x is read to within 0.07 (a sixteenth, rounded, of an interval
     * a sixteenth wide), and the power rounded down to 1/128 octave. */
    const double tol = exp2(0.07 * e + 1.0 / 128) - 1.0;
    double prev = 0.0;
    int flat = 0;
    for (double x = 1e-200; x < 1e200; x *= 1.0137) {
      const double got = strata_ladder_pow(&l, x), want = pow(x, e);
      ck_assert_msg(!(want >= DBL_MIN && want <= 1e300) || fabs(got - want) <= tol * want,
                    "%.17g^%g: ladder %.17g, pow %.17g", x, e, got, want);
      ck_assert_msg(got >= prev, "not monotone at %.17g^%g", x, e);
      flat += got == prev;
      prev = got;
      ck_assert(strata_ladder_pow(&l, nextafter(x, INFINITY)) == got ||
                strata_ladder_pow(&l, nextafter(x, 0.0)) == got);
    }
    ck_assert(flat > 0);
    ck_assert(strata_ladder_pow(&l, 0.0) == 0.0);
    ck_assert(isinf(strata_ladder_pow(&l, INFINITY)));
  }
}
END_TEST

START_TEST(test_reallocate_beta_zero_uniform)
{
  rng_seed(5);
  strata_strat *s = make(2, 5003, 1000000, 0.0, 1);
  /* M = floor(sqrt(1250.75)) = 35, 1225 hypercubes, 5003/1225 = 4.08 */
  ck_assert_int_eq(s->M, 35);
  double *s1 = malloc(sizeof(double) * (size_t)s->nhcube);
  double *s2 = malloc(sizeof(double) * (size_t)s->nhcube);
  for (int it = 0; it < 3; it++) {
    fake_sums(s, 1, s1, s2);
    strata_strat_reallocate(s, s1, s2);
    int64_t tot = 0;
    for (int64_t h = 0; h < s->nhcube; h++) {
      REQUIRE(s->nh[h] == 4 || s->nh[h] == 5, "nh[%lld] = %lld", (long long)h,
                    (long long)s->nh[h]);
      tot += s->nh[h];
    }
    ck_assert_int_eq(tot, 5003);
    check_prefix(s);
  }
  free(s1);
  free(s2);
  strata_strat_free(s);
}
END_TEST

START_TEST(test_reallocate_zero_variance_keeps)
{
  rng_seed(77);
  strata_strat *s = make(2, 2000, 1000000, 0.75, 1);
  const int64_t N = s->nhcube;
  double *s1 = malloc(sizeof(double) * (size_t)N);
  double *s2 = malloc(sizeof(double) * (size_t)N);
  fake_sums(s, 1, s1, s2);
  strata_strat_reallocate(s, s1, s2); /* a non-uniform allocation */
  int64_t *before = malloc(sizeof(int64_t) * (size_t)N);
  int64_t *sbefore = malloc(sizeof(int64_t) * (size_t)(N + 1));
  memcpy(before, s->nh, sizeof(int64_t) * (size_t)N);
  memcpy(sbefore, s->start, sizeof(int64_t) * (size_t)(N + 1));
  int64_t mn = INT64_MAX, mx = 0;
  for (int64_t h = 0; h < N; h++) {
    if (before[h] < mn) mn = before[h];
    if (before[h] > mx) mx = before[h];
  }
  ck_assert_int_gt(mx - mn, 3);
  /* Zero sums: no information. */
  for (int64_t h = 0; h < N; h++) s1[h] = s2[h] = 0.0;
  strata_strat_reallocate(s, s1, s2);
  ck_assert_int_eq(memcmp(before, s->nh, sizeof(int64_t) * (size_t)N), 0);
  ck_assert_int_eq(memcmp(sbefore, s->start, sizeof(int64_t) * (size_t)(N + 1)), 0);
  /* A constant J f = 3 in every hypercube: S1 = 3n, S2 = 9n, variance
   * 9 - 3^2 = 0 exactly. */
  for (int64_t h = 0; h < N; h++) {
    s1[h] = 3.0 * (double)s->nh[h];
    s2[h] = 9.0 * (double)s->nh[h];
  }
  strata_strat_reallocate(s, s1, s2);
  ck_assert_int_eq(memcmp(before, s->nh, sizeof(int64_t) * (size_t)N), 0);
  /* A variance that rounds slightly negative counts as zero too. */
  for (int64_t h = 0; h < N; h++) {
    s1[h] = 0.1 * (double)s->nh[h];
    s2[h] = 0.01 * (double)s->nh[h] * (1.0 - 1e-15);
  }
  strata_strat_reallocate(s, s1, s2);
  ck_assert_int_eq(memcmp(before, s->nh, sizeof(int64_t) * (size_t)N), 0);
  free(before);
  free(sbefore);
  free(s1);
  free(s2);
  strata_strat_free(s);
}
END_TEST

/* ---- finding samples and decoding hypercubes ---------------------------- */

START_TEST(test_find_every_index)
{
  rng_seed(3);
  /* dim 2, neval 100: M = 5, 25 hypercubes; made non-uniform first. */
  strata_strat *s = make(2, 100, 1000000, 0.75, 1);
  ck_assert_int_eq(s->nhcube, 25);
  double s1[25], s2[25];
  fake_sums(s, 1, s1, s2);
  strata_strat_reallocate(s, s1, s2);
  check_prefix(s);
  int64_t h = 0, seen_in_h = 0;
  for (int64_t i = 0; i < strata_strat_total(s); i++) {
    /* walk the allocation independently */
    while (seen_in_h == s->nh[h]) {
      h++;
      seen_in_h = 0;
    }
    seen_in_h++;
    int64_t got = strata_strat_find(s, i);
    REQUIRE(got == h, "find(%lld) = %lld, want %lld", (long long)i, (long long)got,
                  (long long)h);
    REQUIRE(s->start[got] <= i && i < s->start[got + 1], "i %lld", (long long)i);
  }
  ck_assert_int_eq(h, 24);
  ck_assert_int_eq(strata_strat_find(s, 0), 0);
  ck_assert_int_eq(strata_strat_find(s, 99), 24);
  strata_strat_free(s);

  /* Hand case: classic dim 1, neval 12 -> M = 3, 4 samples each:
   * start = {0, 4, 8, 12}; 3 -> 0, 4 -> 1, 7 -> 1, 8 -> 2, 11 -> 2. */
  s = make(1, 12, 1000000, 0.75, 0);
  ck_assert_int_eq(s->nhcube, 3);
  const int64_t idx[6] = {0, 3, 4, 7, 8, 11}, want[6] = {0, 0, 1, 1, 2, 2};
  for (int k = 0; k < 6; k++) ck_assert_int_eq(strata_strat_find(s, idx[k]), want[k]);
  strata_strat_free(s);

  /* One hypercube: everything is in it. */
  s = make(3, 9, 1000000, 0.75, 1);
  ck_assert_int_eq(s->nhcube, 1);
  for (int64_t i = 0; i < 9; i++) ck_assert_int_eq(strata_strat_find(s, i), 0);
  strata_strat_free(s);
}
END_TEST

START_TEST(test_coords)
{
  /* dim 3, neval 500 = 4*5^3: M = 5, h = k0 + 5 k1 + 25 k2. */
  strata_strat *s = make(3, 500, 1000000, 0.75, 1);
  ck_assert_int_eq(s->M, 5);
  ck_assert_int_eq(s->nhcube, 125);
  const struct {
    int64_t h;
    int k[3];
  } hand[] = {{0, {0, 0, 0}},   {1, {1, 0, 0}},  {5, {0, 1, 0}},  {25, {0, 0, 1}},
              {117, {2, 3, 4}}, /* 2 + 15 + 100 */
              {124, {4, 4, 4}}, {31, {1, 1, 1}}, {99, {4, 4, 3}}};
  for (size_t i = 0; i < sizeof hand / sizeof *hand; i++) {
    int k[3] = {-1, -1, -1};
    strata_strat_coords(s, hand[i].h, k);
    for (int d = 0; d < 3; d++)
      REQUIRE(k[d] == hand[i].k[d], "h %lld: k[%d] = %d, want %d", (long long)hand[i].h,
                    d, k[d], hand[i].k[d]);
  }
  /* Every h decodes to in-range digits that re-encode to h, and no two
   * hypercubes share coordinates. */
  unsigned char seen[125] = {0};
  for (int64_t h = 0; h < 125; h++) {
    int k[3];
    strata_strat_coords(s, h, k);
    int64_t back = 0, p = 1;
    for (int d = 0; d < 3; d++) {
      REQUIRE(k[d] >= 0 && k[d] < 5, "h %lld k[%d] = %d", (long long)h, d, k[d]);
      back += k[d] * p;
      p *= 5;
    }
    REQUIRE(back == h, "h %lld re-encodes to %lld", (long long)h, (long long)back);
    int key = k[0] * 25 + k[1] * 5 + k[2];
    REQUIRE(!seen[key], "h %lld: coordinates repeated", (long long)h);
    seen[key] = 1;
  }
  strata_strat_free(s);

  /* dim 4, M = 7 (neval 4*7^4 = 9604): h = 3 + 7*6 + 49*0 + 343*5 = 1760. */
  s = make(4, 9604, 1000000, 0.75, 0);
  ck_assert_int_eq(s->M, 7);
  int k[4];
  strata_strat_coords(s, 1760, k);
  ck_assert_int_eq(k[0], 3);
  ck_assert_int_eq(k[1], 6);
  ck_assert_int_eq(k[2], 0);
  ck_assert_int_eq(k[3], 5);
  strata_strat_free(s);
}
END_TEST

static double n_of(const strata_strat *s, int h) { return (double)s->nh[h]; }

/* A hypercube whose variance is below 1e-6 of its second moment (all
 * cancellation: J f far below the shift) gets no share of its own, however
 * many samples there are to spread: it is pinned at 2. */
START_TEST(test_reallocate_cancellation_is_zero)
{
  strata_strat *s = strata_strat_alloc(1, 4000000, 1000, 0.75, 1); /* 1000 hypercubes */
  ck_assert_int_eq(s->nhcube, 1000);
  double *s1 = malloc(sizeof(double) * 1000), *s2 = malloc(sizeof(double) * 1000);
  for (int h = 0; h < 1000; h++) {
    double n = (double)s->nh[h];
    /* mean -1 (shifted sums), variance 1e-8: below the floor ... */
    s1[h] = -n;
    s2[h] = n * (1.0 + 1e-8);
  }
  /* ... except hypercube 7, with variance 0.25. */
  s1[7] = -n_of(s, 7);
  s2[7] = n_of(s, 7) * 1.25;
  strata_strat_reallocate(s, s1, s2);
  for (int h = 0; h < 1000; h++)
    if (h != 7) ck_assert_msg(s->nh[h] == 2, "nh[%d] = %lld", h, (long long)s->nh[h]);
  ck_assert_int_eq(s->nh[7], 4000000 - 2 * 999);
  free(s1);
  free(s2);
  strata_strat_free(s);
}
END_TEST

/* Shares worked out in slices (as ranks do) and then allocated give the
 * allocation of one reallocation over everything, to the bit; a slice
 * leaves the shares outside it alone. */
START_TEST(test_shares_in_slices)
{
  strata_strat *a = strata_strat_alloc(3, 200000, 1000000, 0.75, 1);
  strata_strat *b = strata_strat_alloc(3, 200000, 1000000, 0.75, 1);
  const int64_t n = a->nhcube;
  double *s1 = malloc(sizeof(double) * (size_t)n), *s2 = malloc(sizeof(double) * (size_t)n);
  double *d = malloc(sizeof(double) * (size_t)n);
  uint64_t x = 12345;
  for (int64_t h = 0; h < n; h++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    double sig = (double)(x >> 11) / 9007199254740992.0 * (h % 7 == 0 ? 100.0 : 1.0);
    double m = 0.1 * (double)(h % 5), k = (double)a->nh[h];
    s1[h] = k * m;
    s2[h] = k * (sig * sig + m * m);
  }
  strata_strat_reallocate(a, s1, s2);
  const int64_t cut[4] = {0, n / 3, n / 3 + 1, n};
  for (int64_t h = 0; h < n; h++) d[h] = NAN;
  for (int k = 0; k < 3; k++) {
    strata_strat_levels(b, s1, s2, cut[k], cut[k + 1], d);
    for (int64_t h = cut[k + 1]; h < n; h++) ck_assert(isnan(d[h]));
  }
  strata_strat_allocate(b, d);
  ck_assert(memcmp(a->nh, b->nh, sizeof(int64_t) * (size_t)n) == 0);
  ck_assert_int_eq(strata_strat_total(b), 200000);
  free(s1);
  free(s2);
  free(d);
  strata_strat_free(a);
  strata_strat_free(b);
}
END_TEST

/* The first, even allocation unwritten (as a device keeps it) gives every
 * start[h], and every rank's slice, that the written one gives. */
START_TEST(test_even_start_unwritten)
{
  strata_strat *u = strata_strat_alloc_even(3, 100003, 1000000, 0.75, 1);
  strata_strat *w = strata_strat_alloc(3, 100003, 1000000, 0.75, 1);
  ck_assert(u->even && !w->even);
  ck_assert_int_gt(u->even_rem, 0);
  for (int64_t h = 0; h <= u->nhcube; h++)
    ck_assert_int_eq(strata_strat_start_at(u, h), w->start[h]);
  for (int size = 1; size <= 5; size++)
    for (int rank = 0; rank < size; rank++) {
      int64_t a0, a1, b0, b1;
      strata_run_slice(u, rank, size, &a0, &a1);
      strata_run_slice(w, rank, size, &b0, &b1);
      ck_assert(a0 == b0 && a1 == b1);
    }
  ck_assert(u->even); /* still unwritten */
  strata_strat_free(u);
  strata_strat_free(w);
}
END_TEST

/* Ranks that split the samples, not the hypercubes: each takes floor or
 * ceil of N/R consecutive samples, a hypercube on a boundary is shared,
 * and with whole every rank holds whole hypercubes.  The split is of one
 * allocation: a new one needs a new split. */
START_TEST(test_split)
{
  strata_strat *s = strata_strat_alloc(2, 40000, 1000000, 0.75, 1);
  const int64_t n = s->nhcube;
  double *s1 = malloc(sizeof(double) * (size_t)n), *s2 = malloc(sizeof(double) * (size_t)n);
  for (int64_t h = 0; h < n; h++) {
    const double k = (double)s->nh[h], sig = h % 11 == 0 ? 50.0 : 1.0;
    s1[h] = 0.0;
    s2[h] = k * sig * sig;
  }
  strata_strat_reallocate(s, s1, s2);
  const int size = 3;
  int64_t lo[3], hi[3];
  strata_split *sp = strata_split_alloc(size);
  ck_assert_ptr_nonnull(sp);
  ck_assert(!strata_split_current(sp, s));
  for (int whole = 0; whole <= 1; whole++) {
    strata_split_make(sp, s, whole);
    ck_assert(strata_split_current(sp, s));
    int64_t next = 0, shared = 0;
    for (int r = 0; r < size; r++) {
      int64_t i0, i1;
      strata_split_part(sp, r, &i0, &i1, &lo[r], &hi[r]);
      ck_assert_int_eq(i0, next);
      next = i1;
      ck_assert(lo[r] < hi[r]);
      ck_assert(s->start[lo[r]] <= i0 && i0 < s->start[lo[r] + 1]);
      ck_assert(s->start[hi[r] - 1] < i1 && i1 <= s->start[hi[r]]);
      if (whole) {
        ck_assert(i0 == s->start[lo[r]] && i1 == s->start[hi[r]]);
      } else {
        const int64_t q = s->total / size;
        ck_assert(i1 - i0 == q || i1 - i0 == q + 1);
        shared += i0 > s->start[lo[r]];
      }
    }
    ck_assert_int_eq(next, s->total);
    if (!whole) ck_assert(shared > 0); /* this allocation has no boundary at N/3 */
  }
  for (int r = 0; r < size; r++) {
    ck_assert_int_eq(strata_strat_start_at(s, lo[r]), s->start[lo[r]]);
    ck_assert_int_eq(strata_strat_start_at(s, hi[r]), s->start[hi[r]]);
  }
  ck_assert_int_eq(strata_strat_start_at(s, 0), 0);
  ck_assert_int_eq(strata_strat_start_at(s, n), s->total);
  strata_strat_reallocate(s, s1, s2);
  ck_assert(!strata_split_current(sp, s));
  strata_split_free(sp);
  free(s1);
  free(s2);
  strata_strat_free(s);
}
END_TEST

static Suite *strat_suite(void)
{
  Suite *s = suite_create("strat");
  TCase *tc = tcase_create("hcubes");
  tcase_add_test(tc, test_hcubes_table);
  tcase_add_test(tc, test_hcubes_exhaustive);
  suite_add_tcase(s, tc);

  tc = tcase_create("allocation");
  tcase_add_test(tc, test_classic_allocation);
  tcase_add_test(tc, test_vegasplus_init);
  tcase_add_test(tc, test_reallocate_hand_case);
  tcase_add_test(tc, test_reallocate_random);
  tcase_add_test(tc, test_reallocate_beta_zero_uniform);
  tcase_add_test(tc, test_reallocate_zero_variance_keeps);
  tcase_add_test(tc, test_reallocate_cancellation_is_zero);
  tcase_add_test(tc, test_shares_in_slices);
  tcase_add_test(tc, test_rescale);
  tcase_add_test(tc, test_powfrac);
  tcase_add_test(tc, test_ladder);
  suite_add_tcase(s, tc);

  tc = tcase_create("indexing");
  tcase_add_test(tc, test_find_every_index);
  tcase_add_test(tc, test_even_start_unwritten);
  tcase_add_test(tc, test_split);
  tcase_add_test(tc, test_coords);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return test_run_suite(strat_suite());
}
