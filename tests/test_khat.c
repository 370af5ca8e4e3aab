/* Pareto k-hat: arviz-stats' PSIS values on fixed weights, the shape of
 * generalized Pareto samples on average over many seeds, the tail size and
 * the limit, and top lists that merge into the same largest weights however
 * a stream is split. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "khat.h"
#include "philox.h"
#include "testutil.h"

START_TEST(test_tail_and_limit)
{
  ck_assert_int_eq(strata_khat_tail(100), 20);   /* S/5 */
  ck_assert_int_eq(strata_khat_tail(10000), 300); /* 3 sqrt S */
  ck_assert_int_eq(strata_khat_tail(1000), 95);  /* ceil(94.87) */
  ck_assert_int_eq(strata_khat_tail(7), 2);
  ck_assert_double_eq_tol(strata_khat_limit(100), 0.5, 1e-15);
  ck_assert_double_eq_tol(strata_khat_limit(1000), 1.0 - 1.0 / 3.0, 1e-15);
  ck_assert_double_eq_tol(strata_khat_limit(100000), 0.7, 1e-15);
}
END_TEST

/* arviz-stats 0.8.0's array_stats.psislw(-log w) k-hat on the quantiles of
 * a generalized Pareto law (k = 0.5, 0.9) and of the half-Cauchy, where its
 * tail size equals strata's (S = 100: 20; S = 1e4: 300). */
START_TEST(test_arviz_values)
{
  static const struct {
    int S;
    double k, want; /* k 0: half-Cauchy */
  } ref[] = {{100, 0.5, 0.4919600201988475},   {100, 0.9, 0.7205967434897373},
             {100, 0.0, 0.7706843618942862},   {10000, 0.5, 0.49900327561546465},
             {10000, 0.9, 0.8809335199153081}, {10000, 0.0, 0.9761606785537127}};
  static double w[10000];
  for (size_t r = 0; r < sizeof ref / sizeof ref[0]; r++) {
    const int S = ref[r].S;
    for (int i = 0; i < S; i++) {
      const double p = (i + 0.5) / S;
      w[i] = ref[r].k > 0 ? (pow(1.0 - p, -ref[r].k) - 1.0) / ref[r].k : tan(M_PI / 2 * p);
    }
    const double k = strata_khat(w, S);
    ck_assert_msg(fabs(k - ref[r].want) < 1e-12, "S %d k %g: k-hat %.17g, arviz %.17g", S,
                  ref[r].k, k, ref[r].want);
  }
}
END_TEST

/* Samples of a generalized Pareto law of shape k: k-hat near k on
 * average over 100 seeds of 4000 weights (each k-hat's sd is about
 * (1 + k)/sqrt(190), 0.1; the prior pulls it 5% toward 0.5). */
START_TEST(test_gpd_shape)
{
  static const double shapes[] = {0.2, 0.5, 0.9};
  enum { S = 4000, SEEDS = 100 };
  static double w[S];
  for (int t = 0; t < 3; t++) {
    const double k = shapes[t];
    double sum = 0.0;
    for (int seed = 0; seed < SEEDS; seed++) {
      for (int i = 0; i < S; i += 4) {
        uint32_t c[4] = {0x6B4A7u, (uint32_t)seed, (uint32_t)i, (uint32_t)t};
        strata_philox4x32_10(c, 2009);
        for (int j = 0; j < 4; j++)
          w[i + j] = 3.0 * (pow(1.0 - STRATA_U32_TO_UNIT(c[j]), -k) - 1.0) / k;
      }
      sum += strata_khat(w, S);
    }
    const double mean = sum / SEEDS, expect = k + (0.5 - k) * 10.0 / (190.0 + 10.0);
    ck_assert_msg(fabs(mean - expect) < 0.04, "k %g: mean k-hat %g over %d seeds", k, mean,
                  SEEDS);
  }
}
END_TEST

/* Zhang and Stephens' fit a term at a time, as PSIS's reference code
 * writes it (one log1p an exceedance, mq^2 exponentials): what khat.c's
 * fit, which takes one logarithm per run of exceedances, must give. */
static double reference_fit(const double *top, int64_t m1)
{
  const int64_t n = m1 - 1;
  static double x[20000], b[200], k[200], l[200];
  for (int64_t i = 0; i < n; i++) x[i] = top[n - 1 - i] - top[n];
  const int mq = 30 + (int)sqrt((double)n);
  double q = x[(int64_t)((double)n / 4.0 + 0.5) - 1];
  for (int64_t i = 0; !(q > 0.0) && i < n; i++) q = x[i];
  for (int j = 0; j < mq; j++) {
    b[j] = (1.0 - sqrt(mq / (j + 1 - 0.5))) / (3.0 * q) + 1.0 / x[n - 1];
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += log1p(-b[j] * x[i]);
    k[j] = s / (double)n;
    l[j] = (double)n * (log(-b[j] / k[j]) - k[j] - 1.0);
  }
  double wsum = 0.0, bpost = 0.0;
  for (int i = 0; i < mq; i++) {
    double s = 0.0;
    for (int j = 0; j < mq; j++) s += exp(l[j] - l[i]);
    if (!(1.0 / s >= 10.0 * DBL_EPSILON)) continue;
    wsum += 1.0 / s;
    bpost += b[i] / s;
  }
  bpost /= wsum;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += log1p(-bpost * x[i]);
  return ((double)n * (s / (double)n) + 10.0 * 0.5) / ((double)n + 10.0);
}

/* Tails whose runs of exceedances multiply past double's range (weights
 * over 60 decades), exceedances of 1e-13 (weights 1 + 1e-13 i), a third
 * of them tied at the threshold, an exponential tail (k = 0: the grid's b
 * near 0) and light and heavy Pareto tails, at sizes with and without a
 * last short run: the fit within 1e-12 of the fit a term at a time. */
START_TEST(test_fit_by_runs)
{
  static double w[20001];
  static const int sizes[] = {6, 21, 130, 426, 3001, 20001};
  for (int kind = 0; kind < 6; kind++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
      const int m1 = sizes[z];
      for (int i = 0; i < m1; i++) { /* largest first */
        const double p = (i + 0.5) / m1;
        switch (kind) {
        case 0: w[i] = pow(10.0, 30.0 - 60.0 * p); break;
        case 1: w[i] = 1.0 + 1e-13 * (m1 - i); break;
        case 2: w[i] = i < 2 * m1 / 3 ? 2.0 - p : 1.0; break;
        case 3: w[i] = (pow(p, -0.2) - 1.0) / 0.2; break;
        case 4: w[i] = -log(p); break;
        default: w[i] = (pow(p, -1.5) - 1.0) / 1.5; break;
        }
      }
      const double k = strata_khat_fit(w, m1), want = reference_fit(w, m1);
      ck_assert_msg(fabs(k - want) <= 1e-12 * fmax(1.0, fabs(want)),
                    "kind %d, %d weights: k-hat %.17g, term by term %.17g", kind, m1, k, want);
    }
}
END_TEST

START_TEST(test_degenerate)
{
  double w[40];
  for (int i = 0; i < 40; i++) w[i] = 2.0;
  ck_assert(isinf(strata_khat(w, 40)) && strata_khat(w, 40) < 0); /* no tail at all */
  ck_assert(isnan(strata_khat(w, 20)));                             /* M = 4: too few */
}
END_TEST

/* A stream of weights with many ties, kept whole or split among p lists
 * in interleaved and in reversed order: the merged list is the same, and
 * it is the full sort's head by (weight descending, index ascending). */
START_TEST(test_top_merge)
{
  enum { S = 5000, DIM = 3 };
  static double w[S], x[S * DIM];
  for (int i = 0; i < S; i++) {
    uint32_t c[4] = {0x70Bu, (uint32_t)i, 0, 0};
    strata_philox4x32_10(c, 5);
    /* coarse values: ties everywhere, the largest repeated */
    w[i] = floor(pow(STRATA_U32_TO_UNIT(c[0]), -0.7) * 4.0) / 4.0;
    for (int d = 0; d < DIM; d++) x[i * DIM + d] = i + 0.1 * d;
  }
  const int64_t cap = strata_khat_tail(S) + 1;
  strata_khat_top ref;
  ck_assert_int_eq(strata_khat_top_init(&ref, cap, DIM), STRATA_OK);
  for (int i = 0; i < S; i++) strata_khat_top_add(&ref, w[i], i, x + i * DIM);
  ck_assert_int_eq(strata_khat_top_sort(&ref), STRATA_OK);
  for (int64_t r = 1; r < ref.n; r++)
    ck_assert(ref.w[r - 1] > ref.w[r] || (ref.w[r - 1] == ref.w[r] && ref.index[r - 1] < ref.index[r]));
  /* Nothing left out beats the last kept. */
  int64_t better = 0;
  const double lw = ref.w[ref.n - 1];
  const int64_t li = ref.index[ref.n - 1];
  for (int i = 0; i < S; i++) better += w[i] > lw || (w[i] == lw && i <= li);
  ck_assert_int_eq(better, cap);
  const double k = strata_khat_top_fit(&ref, S);
  ck_assert(k == strata_khat(w, S));
  for (int p = 2; p <= 7; p += 5) {
    for (int rev = 0; rev < 2; rev++) {
      strata_khat_top part[7], all;
      for (int q = 0; q < p; q++) ck_assert_int_eq(strata_khat_top_init(&part[q], cap, DIM), 0);
      for (int j = 0; j < S; j++) {
        const int i = rev ? S - 1 - j : j;
        strata_khat_top_add(&part[i % p], w[i], i, x + i * DIM);
      }
      ck_assert_int_eq(strata_khat_top_init(&all, cap, DIM), 0);
      for (int q = 0; q < p; q++) {
        if (q == 1) strata_khat_top_sort(&all); /* a sorted list takes more */
        strata_khat_top_merge(&all, &part[rev ? p - 1 - q : q]);
      }
      ck_assert_int_eq(strata_khat_top_sort(&all), STRATA_OK);
      ck_assert_int_eq(all.n, ref.n);
      ck_assert(memcmp(all.w, ref.w, sizeof(double) * (size_t)cap) == 0);
      ck_assert(memcmp(all.index, ref.index, sizeof(int64_t) * (size_t)cap) == 0);
      for (int64_t r = 0; r < cap; r++)
        ck_assert(memcmp(strata_khat_top_point(&all, r), strata_khat_top_point(&ref, r),
                         sizeof(double) * DIM) == 0);
      ck_assert(strata_khat_top_fit(&all, S) == k);
      for (int q = 0; q < p; q++) strata_khat_top_free(&part[q]);
      strata_khat_top_free(&all);
    }
  }
  /* Not finite: passed over. */
  strata_khat_top_add(&ref, NAN, S, x);
  strata_khat_top_add(&ref, INFINITY, S + 1, x);
  ck_assert(ref.w[0] == ref.w[0] && ref.index[0] != S && ref.index[0] != S + 1);
  strata_khat_top_sort(&ref);
  for (int64_t r = 0; r < ref.n; r++) ck_assert(isfinite(ref.w[r]));
  strata_khat_top_free(&ref);
}
END_TEST

/* The list's cuts, where a sample of the weights finds the bar and where
 * that sample misleads them (the weights at its places the least of all),
 * and its sort, where the weights' keys tie in their upper halves (some,
 * or all: the sort by keys leaves them to the merge sort): the sorted
 * list is the full sort's head by (weight descending, index ascending),
 * ties included. */
static int ranks_above(const void *a, const void *b)
{
  const double *x = a, *y = b; /* (weight, index) */
  if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

START_TEST(test_top_cut)
{
  enum { S = 6000, CAP = 300 }; /* room 600: cuts of 600 weights */
  static double w[S], ref[S][2];
  for (int kind = 0; kind < 5; kind++) {
    for (int i = 0; i < S; i++) {
      uint32_t c[4] = {0xC07u, (uint32_t)i, (uint32_t)kind, 0};
      strata_philox4x32_10(c, 11);
      const double u = STRATA_U32_TO_UNIT(c[0]);
      if (kind == 0) w[i] = 1.0 / u; /* a heavy tail */
      else if (kind == 1) w[i] = floor(8.0 * u) / 8.0; /* eight values: ties at every cut */
      else if (kind == 2) w[i] = 2.0 + u; /* the sample's places of the first cut the least (below) */
      else if (kind == 3) w[i] = 1.0 + ldexp(u, -8); /* keys' upper halves: a few ties */
      else w[i] = 1.0 + ldexp(u, -25); /* keys' upper halves: all tie */
    }
    if (kind == 2)
      for (int q = 0; q < 64; q++) w[(int64_t)q * 2 * CAP / 64] = 1.0 + q * 1e-3;
    strata_khat_top t;
    ck_assert_int_eq(strata_khat_top_init(&t, CAP, 1), STRATA_OK);
    for (int i = 0; i < S; i++) {
      ref[i][0] = w[i];
      ref[i][1] = i;
    }
    /* The first cut, of the first 2 CAP: it made room, and its least ranks
     * at or below their CAP-th, so that it kept all CAP of them. */
    qsort(ref, 2 * CAP, sizeof ref[0], ranks_above);
    for (int i = 0; i <= 2 * CAP; i++) {
      const double x = i;
      strata_khat_top_add(&t, w[i], i, &x);
    }
    ck_assert_msg(t.cut && t.n <= 2 * CAP &&
                      (ref[CAP - 1][0] > t.least_w ||
                       (ref[CAP - 1][0] == t.least_w && ref[CAP - 1][1] <= t.least_index)),
                  "kind %d: the first cut's least (%g, %lld) ranks above the CAP-th (%g, %g), "
                  "%lld held", kind, t.least_w, (long long)t.least_index, ref[CAP - 1][0],
                  ref[CAP - 1][1], (long long)t.n);
    for (int i = 2 * CAP + 1; i < S; i++) {
      const double x = i;
      strata_khat_top_add(&t, w[i], i, &x);
    }
    for (int i = 0; i < S; i++) {
      ref[i][0] = w[i];
      ref[i][1] = i;
    }
    ck_assert_int_eq(strata_khat_top_sort(&t), STRATA_OK);
    qsort(ref, S, sizeof ref[0], ranks_above);
    ck_assert_int_eq(t.n, CAP);
    for (int r = 0; r < CAP; r++) {
      ck_assert_msg(t.w[r] == ref[r][0] && t.index[r] == (int64_t)ref[r][1],
                    "kind %d, place %d: (%g, %lld), not (%g, %g)", kind, r, t.w[r],
                    (long long)t.index[r], ref[r][0], ref[r][1]);
      ck_assert(strata_khat_top_point(&t, r)[0] == ref[r][1]);
    }
    strata_khat_top_free(&t);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("khat");
  TCase *tc = tcase_create("khat");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_tail_and_limit);
  tcase_add_test(tc, test_arviz_values);
  tcase_add_test(tc, test_gpd_shape);
  tcase_add_test(tc, test_fit_by_runs);
  tcase_add_test(tc, test_degenerate);
  tcase_add_test(tc, test_top_merge);
  tcase_add_test(tc, test_top_cut);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
