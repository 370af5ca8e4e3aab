/* Tests of combining iterations (src/stats.c, src/stats.h), and of the
 * value with its error that the table prints (strata_report_value_error,
 * io/report.c).
 *
 * Weighted averages are checked against hand arithmetic (in the comments);
 * Q(a, x) against chi-square table values, 25-digit values (mpmath's
 * gammainc(a, x, inf, regularized=True)) and the closed forms
 *   Q(n, x)     = e^-x sum_{k<n} x^k / k!                      (integer n)
 *   Q(n+1/2, x) = erfc(sqrt x) + e^-x sum_{k<n} x^(k+1/2)/Gamma(k+3/2)
 * which share no code with the series / continued fraction under test. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "strata/report.h"
#include "testutil.h"

#define REQUIRE(expr, ...)                                                      \
  do {                                                                          \
    if (!(expr)) ck_assert_msg(expr, __VA_ARGS__);                              \
  } while (0)

static void check_close(double got, double want, double rel, double abs_tol, const char *what)
{
  double err = fabs(got - want);
  REQUIRE(err <= abs_tol + rel * fabs(want), "%s: got %.17g, want %.17g (diff %.3g)", what, got,
          want, err);
}

/* ---- closed forms ------------------------------------------------------- */

static double q_integer(int n, double x)
{
  double term = 1.0, sum = 1.0; /* k = 0 */
  for (int k = 1; k < n; k++) {
    term *= x / k;
    sum += term;
  }
  return exp(-x) * sum;
}

static double q_half(int n, double x) /* Q(n + 1/2, x) */
{
  const double sqrt_pi = 1.772453850905516027;
  double term = 2.0 * sqrt(x) / sqrt_pi; /* x^(1/2) / Gamma(3/2) */
  double sum = 0.0;
  for (int k = 0; k < n; k++) {
    sum += term;
    term *= x / (k + 1.5); /* Gamma(k+5/2) = (k+3/2) Gamma(k+3/2) */
  }
  return erfc(sqrt(x)) + exp(-x) * sum;
}

/* ---- weighted average --------------------------------------------------- */

START_TEST(test_average_hand)
{
  /* I = {1.0, 1.2, 0.9}, sigma = {0.1, 0.2, 0.1}: weights 1/sigma^2 =
   * {100, 25, 100}, sum 225.
   *   mean  = (100*1.0 + 25*1.2 + 100*0.9)/225 = 220/225 = 44/45 = 0.97777...
   *   sigma = sqrt(1/225) = 1/15 = 0.0666...
   *   deviations {1/45, 10/45, -3.5/45}:
   *   chi2  = (1 + 100*25/100 + 12.25)*100/2025 = (100 + 2500 + 1225)/2025
   *         = 3825/2025 = 17/9 = 1.8888...
   *   dof = 2, chi2/dof = 17/18 = 0.9444...
   *   Q = Q(1, 17/18) = exp(-17/18) = 0.388895563989222903 */
  const double I[3] = {1.0, 1.2, 0.9}, sig[3] = {0.1, 0.2, 0.1};
  strata_average av;
  strata_stats_average(I, sig, 3, &av);
  check_close(av.mean, 44.0 / 45.0, 1e-14, 0, "mean");
  check_close(av.sigma, 1.0 / 15.0, 1e-14, 0, "sigma");
  check_close(av.chi2, 17.0 / 9.0, 1e-12, 0, "chi2");
  ck_assert_int_eq(av.dof, 2);
  check_close(av.chi2_dof, 17.0 / 18.0, 1e-12, 0, "chi2/dof");
  check_close(av.q, 0.388895563989222903, 1e-12, 0, "Q");

  /* Two: {10, 12} +- {1, 1}: mean 11, sigma 1/sqrt(2), chi2 = 1 + 1 = 2,
   * dof 1, Q = Q(1/2, 1) = erfc(1) = 0.157299207050285131 */
  const double I2[2] = {10.0, 12.0}, s2[2] = {1.0, 1.0};
  strata_stats_average(I2, s2, 2, &av);
  check_close(av.mean, 11.0, 1e-15, 0, "mean2");
  check_close(av.sigma, sqrt(0.5), 1e-15, 0, "sigma2");
  check_close(av.chi2, 2.0, 1e-14, 0, "chi2 2");
  ck_assert_int_eq(av.dof, 1);
  check_close(av.chi2_dof, 2.0, 1e-14, 0, "chi2/dof 2");
  check_close(av.q, 0.157299207050285131, 1e-12, 0, "Q2");

  /* Unequal weights, four estimates: I = {2, 4, 3, 3}, sigma = {1, 2, 0.5, 1}
   * weights {1, 0.25, 4, 1}, sum 6.25; sum w I = 2 + 1 + 12 + 3 = 18,
   * mean = 18/6.25 = 2.88, sigma = 1/2.5 = 0.4;
   * chi2 = 0.88^2 + 1.12^2/4 + 0.12^2*4 + 0.12^2
   *      = 0.7744 + 0.3136 + 0.0576 + 0.0144 = 1.16, dof 3,
   * Q(1.5, 0.58) = erfc(sqrt 0.58) + e^-0.58 * 2 sqrt(0.58/pi). */
  const double I4[4] = {2, 4, 3, 3}, s4[4] = {1, 2, 0.5, 1};
  strata_stats_average(I4, s4, 4, &av);
  check_close(av.mean, 2.88, 1e-14, 0, "mean4");
  check_close(av.sigma, 0.4, 1e-14, 0, "sigma4");
  check_close(av.chi2, 1.16, 1e-12, 0, "chi2 4");
  ck_assert_int_eq(av.dof, 3);
  check_close(av.chi2_dof, 1.16 / 3.0, 1e-12, 0, "chi2/dof 4");
  double qw = erfc(sqrt(0.58)) + exp(-0.58) * 2.0 * sqrt(0.58 / 3.14159265358979323846);
  check_close(av.q, qw, 1e-12, 0, "Q4");
}
END_TEST

START_TEST(test_average_single_and_empty)
{
  const double I[1] = {3.5}, sig[1] = {0.2};
  strata_average av;
  strata_stats_average(I, sig, 1, &av);
  ck_assert_double_eq(av.mean, 3.5);
  check_close(av.sigma, 0.2, 1e-15, 0, "sigma");
  ck_assert_double_eq(av.chi2, 0.0);
  ck_assert_int_eq(av.dof, 0);
  ck_assert_double_eq(av.chi2_dof, 0.0);
  ck_assert_double_eq(av.q, 1.0);

  strata_stats_average(I, sig, 0, &av);
  ck_assert(isnan(av.mean));
  ck_assert(isnan(av.sigma));
}
END_TEST

/* Estimates near 1e-160, whose 1/sigma^2 overflow, are
 * averaged as they would be at 1 (the same numbers times 2^600). */
START_TEST(test_average_tiny)
{
  const double I[3] = {5.0e-161, 5.2e-161, 4.9e-161}, sig[3] = {1e-164, 2e-164, 1.5e-164};
  double Is[3], ss[3];
  for (int k = 0; k < 3; k++) {
    Is[k] = ldexp(I[k], 600);
    ss[k] = ldexp(sig[k], 600);
  }
  strata_average av, as;
  strata_stats_average(I, sig, 3, &av);
  strata_stats_average(Is, ss, 3, &as);
  ck_assert_msg(isfinite(av.mean) && isfinite(av.sigma), "%g +- %g", av.mean, av.sigma);
  check_close(av.mean, ldexp(as.mean, -600), 1e-15, 0, "tiny mean");
  check_close(av.sigma, ldexp(as.sigma, -600), 1e-15, 0, "tiny sigma");
  check_close(av.chi2, as.chi2, 1e-14, 0, "tiny chi2");
  check_close(av.q, as.q, 1e-14, 0, "tiny Q");
  /* sigma as small as doubles go, beside a larger one */
  const double I2[2] = {1e-310, 2e-310}, s2[2] = {4.9406564584124654e-324, 1e-300};
  strata_stats_average(I2, s2, 2, &av);
  ck_assert_double_eq(av.mean, 1e-310);
  ck_assert_double_eq(av.sigma, 4.9406564584124654e-324);
  /* An iteration that barely saw the integrand (fB: 3.9e-160 +- 3.9e-160)
   * beside ones that found it: it rules the mean, as its error says it
   * should, but chi^2 is (1/1e-3)^2 + (0.999/1e-3)^2 and Q 0, never NaN,
   * so a restart can drop it. */
  const double I3[3] = {3.9e-160, 1.0, 0.999}, s3[3] = {3.9e-160, 1e-3, 1e-3};
  strata_stats_average(I3, s3, 3, &av);
  ck_assert_msg(av.mean == 3.9e-160 && av.sigma == 3.9e-160, "%g +- %g", av.mean, av.sigma);
  check_close(av.chi2, 1e6 + 0.998001e6, 1e-12, 0, "chi2 beside a tiny sigma");
  ck_assert_msg(av.q == 0.0, "Q %g", av.q);
  /* Estimates near the largest double: a finite mean and chi^2. */
  const double I4[2] = {1.5e308, -1.5e308}, s4[2] = {1e308, 1e308};
  strata_stats_average(I4, s4, 2, &av);
  ck_assert_msg(av.mean == 0.0 && fabs(av.chi2 - 4.5) < 1e-12, "%g, chi2 %g", av.mean, av.chi2);
  /* zeros of a vector integrand: 0 +- 0 in every iteration is exactly 0 */
  const double Z[3] = {0, 0, 0};
  strata_stats_average(Z, Z, 3, &av);
  ck_assert(av.mean == 0.0 && av.sigma == 0.0 && av.chi2 == 0.0 && av.q == 1.0);
  /* the covariance of two such averages, sum w^2 cab / (sum w)^2 = cab / 2:
   * cab near 1e-310, weights near 1e320 */
  const double sa[2] = {1e-160, 1e-160}, cab[2] = {4e-310, 4e-310};
  check_close(strata_stats_average_cov(sa, sa, cab, 2), 2e-310, 1e-12, 0, "tiny covariance");
}
END_TEST

/* Tiny estimates with no errors of their own (their variances underflowed):
 * the mean, and the error from their scatter, in a scale without underflow. */
START_TEST(test_scatter)
{
  const double I[3] = {1.0e-160, 1.1e-160, 0.9e-160};
  strata_average av;
  strata_stats_scatter(I, 3, &av);
  check_close(av.mean, 1e-160, 1e-14, 0, "scatter mean");
  /* sum of squares 2 (0.1e-160)^2 over 3 * 2 */
  check_close(av.sigma, 1e-161 * sqrt(2.0 / 6.0), 1e-12, 0, "scatter sigma");
  ck_assert(isnan(av.chi2_dof) && isnan(av.q));
  ck_assert_int_eq(av.dof, 2);
  const double C[2] = {1e-300, 1e-300};
  strata_stats_scatter(C, 2, &av);
  ck_assert(av.mean == 1e-300 && av.sigma == 0.0 && av.q == 1.0 && av.chi2_dof == 0.0);
  strata_stats_scatter(I, 1, &av);
  ck_assert(av.mean == 1e-160 && isnan(av.sigma));
  strata_stats_scatter(I, 0, &av);
  ck_assert(isnan(av.mean));
}
END_TEST

START_TEST(test_average_exact_estimates)
{
  /* Estimates with sigma 0 are exact: their plain mean with sigma 0, and
   * chi2 measures the others against it.
   * {2.0 +- 0, 2.5 +- 0.5, 2.0 +- 0}: mean 2, sigma 0,
   * chi2 = (0.5/0.5)^2 = 1, dof 2, Q = exp(-1/2) = 0.606530659712633424 */
  const double I[3] = {2.0, 2.5, 2.0}, sig[3] = {0.0, 0.5, 0.0};
  strata_average av;
  strata_stats_average(I, sig, 3, &av);
  ck_assert_double_eq(av.mean, 2.0);
  ck_assert_double_eq(av.sigma, 0.0);
  check_close(av.chi2, 1.0, 1e-15, 0, "chi2");
  ck_assert_int_eq(av.dof, 2);
  check_close(av.chi2_dof, 0.5, 1e-15, 0, "chi2/dof");
  check_close(av.q, 0.606530659712633424, 1e-12, 0, "Q");

  /* one exact estimate alone */
  const double I1[1] = {7.0}, s1[1] = {0.0};
  strata_stats_average(I1, s1, 1, &av);
  ck_assert_double_eq(av.mean, 7.0);
  ck_assert_double_eq(av.sigma, 0.0);
  ck_assert_int_eq(av.dof, 0);
  ck_assert_double_eq(av.q, 1.0);

  /* all exact: {1, 2} -> plain mean 1.5, sigma 0, no finite-sigma terms so
   * chi2 = 0, dof 1, Q(1/2, 0) = 1 */
  const double Ie[2] = {1.0, 2.0}, se[2] = {0.0, 0.0};
  strata_stats_average(Ie, se, 2, &av);
  ck_assert_double_eq(av.mean, 1.5);
  ck_assert_double_eq(av.sigma, 0.0);
  ck_assert_double_eq(av.chi2, 0.0);
  ck_assert_int_eq(av.dof, 1);
  ck_assert_double_eq(av.q, 1.0);
  ck_assert(isfinite(av.mean) && isfinite(av.chi2_dof));
}
END_TEST

START_TEST(test_average_close_estimates)
{
  /* Estimates agreeing to 12 digits: I = 1 +- 1e-12, sigma 1e-12 each:
   * mean 1, chi2 = 1 + 1 = 2 (to the 1e-4 that the inputs' own rounding,
   * 1.1e-16/1e-12, allows).  A one-pass sum(w I^2) - (sum w I)^2/sum w
   * loses every digit here. */
  const double I[2] = {1.0 + 1e-12, 1.0 - 1e-12}, sig[2] = {1e-12, 1e-12};
  strata_average av;
  strata_stats_average(I, sig, 2, &av);
  check_close(av.mean, 1.0, 1e-15, 0, "mean");
  check_close(av.sigma, 1e-12 / sqrt(2.0), 1e-14, 0, "sigma");
  check_close(av.chi2, 2.0, 1e-3, 0, "chi2");
}
END_TEST

START_TEST(test_average_random_vs_direct)
{
  /* Many random sets against a direct long-double computation. */
  unsigned s = 12345;
  for (int t = 0; t < 200; t++) {
    int n = 2 + t % 9;
    double I[10], sig[10];
    long double sw = 0, swi = 0;
    for (int k = 0; k < n; k++) {
      s = s * 1103515245u + 12345u;
      I[k] = 5.0 + (double)(s >> 8) / (1u << 24);
      s = s * 1103515245u + 12345u;
      sig[k] = 0.05 + (double)(s >> 8) / (1u << 24);
      sw += 1.0L / ((long double)sig[k] * sig[k]);
      swi += I[k] / ((long double)sig[k] * sig[k]);
    }
    long double mean = swi / sw, chi2 = 0;
    for (int k = 0; k < n; k++) chi2 += (I[k] - mean) * (I[k] - mean) / ((long double)sig[k] * sig[k]);
    strata_average av;
    strata_stats_average(I, sig, n, &av);
    check_close(av.mean, (double)mean, 1e-14, 0, "random mean");
    check_close(av.sigma, (double)sqrtl(1.0L / sw), 1e-14, 0, "random sigma");
    check_close(av.chi2, (double)chi2, 1e-11, 1e-14, "random chi2");
    REQUIRE(av.dof == n - 1, "dof %d", av.dof);
    /* odd dof: half-integer a; even dof: integer a */
    double qw = (n - 1) % 2 == 0 ? q_integer((n - 1) / 2, (double)chi2 / 2)
                                 : q_half((n - 1) / 2, (double)chi2 / 2);
    check_close(av.q, qw, 1e-11, 1e-15, "random Q");
  }
}
END_TEST

/* Weights chosen apart from the errors (strata_stats_average_by).
 * I = {1.0, 1.3, 0.9}, own errors {0.1, 0.3, 0.1}, weighed as if
 * {0.1, 0.1, 0.2}: w = {100, 100, 25}, sum 225, u = {4, 4, 1}/9.
 *   mean  = (100 + 130 + 22.5)/225 = 252.5/225 = 1.12222...
 *   sigma = sqrt(16*0.01 + 16*0.09 + 1*0.01)/9 = sqrt(1.61)/9
 * chi2 is taken about the own-weighted mean (w = {100, 11.11.., 100}):
 *   mean' = (100 + 14.444.. + 90)/211.11.. = 1840/1900 = 92/95,
 *   chi2 = ((1 - 92/95)/0.1)^2 + ((1.3 - 92/95)/0.3)^2 + ((0.9 - 92/95)/0.1)^2
 * which is what strata_stats_average gives with the own errors. */
START_TEST(test_average_by)
{
  const double I[3] = {1.0, 1.3, 0.9}, sig[3] = {0.1, 0.3, 0.1}, w[3] = {0.1, 0.1, 0.2};
  strata_average av, own;
  strata_stats_average_by(I, sig, w, 3, &av);
  strata_stats_average(I, sig, 3, &own);
  check_close(av.mean, 252.5 / 225.0, 1e-14, 0, "mean");
  check_close(av.sigma, sqrt(1.61) / 9.0, 1e-14, 0, "sigma");
  check_close(own.mean, 92.0 / 95.0, 1e-14, 0, "own mean");
  const double m = 92.0 / 95.0;
  const double chi2 = pow((1.0 - m) / 0.1, 2) + pow((1.3 - m) / 0.3, 2) + pow((0.9 - m) / 0.1, 2);
  check_close(av.chi2, chi2, 1e-12, 0, "chi2 about the own-weighted mean");
  check_close(av.q, own.q, 1e-12, 0, "Q");
  ck_assert_int_eq(av.dof, 2);
  /* the same scaled by 2^-1000 and 2^+900: nothing over- or underflows */
  for (int e = -1000; e <= 900; e += 1900) {
    double Is[3], ss[3], ws[3];
    for (int k = 0; k < 3; k++) {
      Is[k] = ldexp(I[k], e);
      ss[k] = ldexp(sig[k], e);
      ws[k] = ldexp(w[k], e);
    }
    strata_average as;
    strata_stats_average_by(Is, ss, ws, 3, &as);
    check_close(as.mean, ldexp(av.mean, e), 1e-14, 0, "scaled mean");
    check_close(as.sigma, ldexp(av.sigma, e), 1e-14, 0, "scaled sigma");
    check_close(as.chi2, av.chi2, 1e-12, 0, "scaled chi2");
  }
}
END_TEST

/* ---- Q(a, x) ------------------------------------------------------------ */

START_TEST(test_gamma_q_table)
{
  /* chi-square table: P(chi2 >= c) for dof k is Q(k/2, c/2) */
  check_close(strata_gamma_q(0.5, 3.84146 / 2), 0.05, 0, 1e-6, "dof 1, 3.84146");
  check_close(strata_gamma_q(5.0, 18.307 / 2), 0.05, 0, 1e-5, "dof 10, 18.307");
  check_close(strata_gamma_q(0.5, 6.634897 / 2), 0.01, 0, 1e-7, "dof 1, 6.634897");
  check_close(strata_gamma_q(1.0, 5.991465 / 2), 0.05, 0, 1e-7, "dof 2, 5.991465");
  check_close(strata_gamma_q(2.5, 11.0705 / 2), 0.05, 0, 1e-6, "dof 5, 11.0705");
  check_close(strata_gamma_q(15.0, 43.77297 / 2), 0.05, 0, 1e-6, "dof 30, 43.77297");
  /* the same to 12 digits (mpmath, 25 digits) */
  check_close(strata_gamma_q(0.5, 3.84146 / 2), 0.04999996483374742451, 1e-12, 0, "mp 1");
  check_close(strata_gamma_q(5.0, 18.307 / 2), 0.05000058909139809873, 1e-12, 0, "mp 2");
  check_close(strata_gamma_q(2.5, 11.0705 / 2), 0.04999995542804363455, 1e-12, 0, "mp 3");
  check_close(strata_gamma_q(15.0, 43.77297 / 2), 0.05000001893588608522, 1e-12, 0, "mp 4");
  check_close(strata_gamma_q(2.5, 3.5), 0.22064030793671079079, 1e-12, 0, "mp 5");
  check_close(strata_gamma_q(50.0, 60.0), 0.08440668109369182962, 1e-11, 0, "mp 6");
  check_close(strata_gamma_q(50.0, 40.0), 0.92966493334060504556, 1e-12, 0, "mp 7");
  check_close(strata_gamma_q(500.0, 520.0), 0.18469114909874360424, 1e-10, 0, "mp 8");
  /* far tails */
  check_close(strata_gamma_q(1.0, 50.0), 1.928749847963917783e-22, 1e-12, 0, "e^-50");
  check_close(strata_gamma_q(0.5, 100.0), 2.088487583762544757e-45, 1e-10, 0, "erfc(10)");
  double qbig = strata_gamma_q(2.0, 400.0); /* 401 e^-400 ~ 7.7e-172 */
  REQUIRE(qbig > 0.0 && qbig < 1e-170, "Q(2, 400) = %g", qbig);
  /* edges */
  ck_assert_double_eq(strata_gamma_q(0.5, 0.0), 1.0);
  ck_assert_double_eq(strata_gamma_q(7.0, 0.0), 1.0);
  ck_assert_double_eq(strata_gamma_q(3.0, INFINITY), 0.0);
  ck_assert(isnan(strata_gamma_q(0.0, 1.0)));
  ck_assert(isnan(strata_gamma_q(-1.0, 1.0)));
  ck_assert(isnan(strata_gamma_q(NAN, 1.0)));
  ck_assert(isnan(strata_gamma_q(1.0, NAN)));
  /* near 1 for small x: Q(1, 1e-10) = e^-1e-10 = 1 - 1e-10 */
  check_close(strata_gamma_q(1.0, 1e-10), 1.0 - 1e-10, 0, 1e-16, "Q(1, 1e-10)");
}
END_TEST

START_TEST(test_gamma_q_closed_forms)
{
  /* Sweep x across both methods for integer and half-integer a; the switch
   * is at x = a + 1. */
  char what[96];
  for (int twice_a = 1; twice_a <= 80; twice_a++) {
    double a = twice_a / 2.0;
    for (int j = 1; j <= 300; j++) {
      double x = j * (3.0 * a + 10.0) / 300.0;
      double want = twice_a % 2 == 0 ? q_integer(twice_a / 2, x) : q_half(twice_a / 2, x);
      snprintf(what, sizeof what, "Q(%g, %g)", a, x);
      check_close(strata_gamma_q(a, x), want, 1e-11, 1e-15, what);
    }
  }
}
END_TEST

START_TEST(test_gamma_q_continuity)
{
  /* Either side of x = a + 1 (series below, continued fraction at and
   * above) against the closed form, and against each other. */
  const int twice[] = {1, 2, 3, 5, 10, 21, 40, 101, 200};
  char what[96];
  for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
    double a = twice[i] / 2.0, x0 = a + 1.0;
    const double xs[4] = {nextafter(x0, 0.0), x0, nextafter(x0, 10 * x0), x0 - 1e-9};
    double q[4];
    for (int k = 0; k < 4; k++) {
      double want = twice[i] % 2 == 0 ? q_integer(twice[i] / 2, xs[k]) : q_half(twice[i] / 2, xs[k]);
      q[k] = strata_gamma_q(a, xs[k]);
      snprintf(what, sizeof what, "Q(%g, %.17g)", a, xs[k]);
      check_close(q[k], want, 1e-12, 1e-16, what);
    }
    /* one ulp of x moves Q by about |dQ/dx| * ulp < 1e-15 */
    REQUIRE(fabs(q[0] - q[1]) <= 1e-13 * q[1], "a %g: jump %.3g at x = a+1", a, q[0] - q[1]);
    REQUIRE(fabs(q[2] - q[1]) <= 1e-13 * q[1], "a %g: jump %.3g above a+1", a, q[2] - q[1]);
    /* and Q decreases in x (up to rounding, a few 1e-16 here) */
    const double slack = 1e-14 * q[1];
    REQUIRE(q[3] > q[0] && q[0] >= q[1] - slack && q[1] >= q[2] - slack, "a %g: not monotone", a);
  }
  /* Non-half-integer a: the two methods agree at the switch. */
  const double as[] = {0.3, 1.7, 7.25, 33.3};
  for (size_t i = 0; i < 4; i++) {
    double x0 = as[i] + 1.0;
    double lo = strata_gamma_q(as[i], nextafter(x0, 0.0)), hi = strata_gamma_q(as[i], x0);
    REQUIRE(fabs(lo - hi) <= 1e-13 * hi, "a %g: %.17g vs %.17g", as[i], lo, hi);
  }
}
END_TEST

/* ---- formatting --------------------------------------------------------- */

typedef struct {
  double value, err;
  const char *want;
} fmt_case;

START_TEST(test_format_table)
{
  /* Fixed form (err > 0, 1e-5 <= max(|value|, err) < 1e9, decimals = 1 - floor(log10 err) in
   * 0..15): the value with `decimals` places, the error as the integer
   * round(err * 10^decimals) in parentheses.
   * Scientific form otherwise (decimals < 0, i.e. err >= 100; decimals > 15;
   * or magnitude outside [1e-5, 1e9)): both scaled by 10^ev, ev the value's
   * exponent (at least the error's), ev - floor(log10 err) + 1 places. */
  const fmt_case cases[] = {
      /* err 6.7e-4: floor(log10) = -4, 5 places, 67 */
      {1.23456, 0.00067, "1.23456(67)"},
      {-1.23456, 0.00067, "-1.23456(67)"},
      /* err 0.25: -1 -> 2 places, 25 */
      {0.5, 0.25, "0.50(25)"},
      /* err 0.12: 2 places, 12.3456 -> 12.35 */
      {12.3456, 0.12, "12.35(12)"},
      /* err 0.0012: 4 places, value 0 shows as 0.0000 */
      {0.0, 0.0012, "0.0000(12)"},
      /* err 25: floor(log10 25) = 1 -> 0 places, "3(25)" = 3 +- 25 */
      {3.0, 25.0, "3(25)"},
      /* err 0.5: 2 places, 50 */
      {3.14159, 0.5, "3.14(50)"},
      /* err 1.2e-7, value 1e-5 (not below 1e-5): 8 places */
      {1e-5, 1.2e-7, "0.00001000(12)"},
      /* just under 1e9 stays fixed: err 12 -> 0 places */
      {999999999.0, 12.0, "999999999(12)"},
      /* sigma 0: the value to 15 significant digits, "(0)" */
      {1.5, 0.0, "1.5(0)"},
      {0.1, 0.0, "0.1(0)"},
      {3.14159265358979, 0.0, "3.14159265358979(0)"},
      /* sigma 0 outside the fixed range: the exponent after the error, as in
       * every other line; below sqrt(DBL_MIN) the error is not known */
      {2.5e12, 0.0, "2.5(0)e+12"},
      {-1.25e-7, 0.0, "-1.25(0)e-07"},
      {5.36e-206, 0.0, "5.36(?)e-206"},
      {9.99999999999999999e-300, 0.0, "1(?)e-299"},
      /* an error not known (NaN) beside a finite value */
      {-4.40312904171865e-234, NAN, "-4.40312904171865(?)e-234"},
      {1.5, NAN, "1.5(?)"},
      /* an error below the 15th place is one unit of it, never "(0)" */
      {1.0, 1.35e-16, "1.000000000000000(1)e+00"},
      /* magnitude >= 1e9: ev = 10, err exponent 6, 10-6+1 = 5 places;
       * 6.7e6/1e10*1e5 = 67; 1.2345e10/1e10 = 1.23450 */
      {1.2345e10, 6.7e6, "1.23450(67)e+10"},
      {-1.2345e10, 6.7e6, "-1.23450(67)e+10"},
      /* 1.5e9 +- 0.5: ev 9, err exp -1, 11 places, 0.5/1e9*1e11 = 50 */
      {1.5e9, 0.5, "1.50000000000(50)e+09"},
      /* err >= 100 (decimals < 0): 123 +- 250 -> ev 2, err exp 2, 1 place,
       * 250/100*10 = 25, 1.23 -> 1.2 */
      {123.0, 250.0, "1.2(25)e+02"},
      /* 98765.4 +- 321: ev 4, err exp 2, 3 places, 321/1e4*1e3 = 32.1 -> 32,
       * 9.87654 -> 9.877 */
      {98765.4, 321.0, "9.877(32)e+04"},
      /* tiny: 1.234e-7 +- 5.6e-10: ev -7, err exp -10, 4 places,
       * 5.6e-10/1e-7*1e4 = 56 */
      {1.234e-7, 5.6e-10, "1.2340(56)e-07"},
      /* value 0, err 1e-7 (magnitude below 1e-5): ev = err exp = -7, 1 place,
       * 1e-7/1e-7*10 = 10 */
      {0.0, 1e-7, "0.0(10)e-07"},
      /* value far below its error: ev raised to the error's exponent -10,
       * 1e-12/1e-10 = 0.01 -> 0.0, 3e-10/1e-10*10 = 30 */
      {1e-12, 3e-10, "0.0(30)e-10"},
  };
  char buf[128];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memset(buf, 'X', sizeof buf);
    strata_report_value_error(buf, sizeof buf, cases[i].value, cases[i].err);
    REQUIRE(strcmp(buf, cases[i].want) == 0, "(%.17g, %.17g): got \"%s\", want \"%s\"",
            cases[i].value, cases[i].err, buf, cases[i].want);
  }
}
END_TEST

/* Errors that round up a decade keep two digits; e-notation mantissas that
 * round up to 10 move to the next exponent. */
START_TEST(test_format_round_up)
{
  char buf[64];
  strata_report_value_error(buf, sizeof buf, 1.0, 0.0996);
  ck_assert_str_eq(buf, "1.00(10)");
  strata_report_value_error(buf, sizeof buf, 9.9999999e10, 1e6);
  ck_assert_str_eq(buf, "1.000000(10)e+11");
  strata_report_value_error(buf, sizeof buf, 2.5e12, 9.96e8);
  ck_assert_str_eq(buf, "2.5000(10)e+12");
}
END_TEST

START_TEST(test_format_fallbacks)
{
  char buf[64];
  /* not finite or negative error: "%.6g +- %.2g" */
  strata_report_value_error(buf, sizeof buf, INFINITY, 1.0);
  ck_assert_str_eq(buf, "inf +- 1");
  strata_report_value_error(buf, sizeof buf, 2.5, INFINITY);
  ck_assert_str_eq(buf, "2.5 +- inf");
  strata_report_value_error(buf, sizeof buf, 1.0, -0.5);
  ck_assert_str_eq(buf, "1 +- -0.5");
  strata_report_value_error(buf, sizeof buf, NAN, 0.1);
  ck_assert_msg(strstr(buf, "nan") != NULL && strstr(buf, "+- 0.1") != NULL, "got \"%s\"", buf);
  /* a short buffer is truncated and terminated, never overrun */
  char small[8];
  memset(small, 'X', sizeof small);
  strata_report_value_error(small, 6, 1.23456, 0.00067);
  ck_assert_str_eq(small, "1.234");
  ck_assert_int_eq(small[6], 'X');
  ck_assert_int_eq(small[7], 'X');
}
END_TEST

START_TEST(test_format_round_trip)
{
  /* For random values in the fixed range, the printed value and error,
   * read back, agree with the inputs to half a unit of the last digit. */
  unsigned s = 99;
  char buf[128];
  for (int t = 0; t < 2000; t++) {
    s = s * 1103515245u + 12345u;
    double value = ((double)(s >> 8) / (1u << 24) - 0.3) * pow(10.0, (int)(s % 7) - 2);
    s = s * 1103515245u + 12345u;
    double err = (0.11 + 0.8 * (double)(s >> 8) / (1u << 24)) * pow(10.0, -(int)(s % 6) - 1);
    if (fabs(value) < 1e-5) continue;
    strata_report_value_error(buf, sizeof buf, value, err);
    char *open = strchr(buf, '(');
    REQUIRE(open != NULL && strchr(buf, 'e') == NULL, "\"%s\"", buf);
    const char *dot = strchr(buf, '.');
    int places = dot && dot < open ? (int)(open - dot - 1) : 0;
    double v = strtod(buf, NULL);
    long digits = strtol(open + 1, NULL, 10);
    double ulp = pow(10.0, -places);
    REQUIRE(fabs(v - value) <= 0.5 * ulp * (1 + 1e-9), "\"%s\" for %.17g", buf, value);
    REQUIRE(fabs(digits * ulp - err) <= 0.5 * ulp * (1 + 1e-9), "\"%s\" for err %.17g", buf, err);
    REQUIRE(digits >= 10 && digits <= 100, "\"%s\": error not in two digits", buf);
  }
}
END_TEST

static Suite *stats_suite(void)
{
  Suite *s = suite_create("stats");
  TCase *tc = tcase_create("average");
  tcase_add_test(tc, test_average_hand);
  tcase_add_test(tc, test_average_single_and_empty);
  tcase_add_test(tc, test_average_exact_estimates);
  tcase_add_test(tc, test_average_tiny);
  tcase_add_test(tc, test_scatter);
  tcase_add_test(tc, test_average_close_estimates);
  tcase_add_test(tc, test_average_random_vs_direct);
  tcase_add_test(tc, test_average_by);
  suite_add_tcase(s, tc);

  tc = tcase_create("gamma_q");
  tcase_add_test(tc, test_gamma_q_table);
  tcase_add_test(tc, test_gamma_q_closed_forms);
  tcase_add_test(tc, test_gamma_q_continuity);
  suite_add_tcase(s, tc);

  tc = tcase_create("format");
  tcase_add_test(tc, test_format_table);
  tcase_add_test(tc, test_format_round_up);
  tcase_add_test(tc, test_format_fallbacks);
  tcase_add_test(tc, test_format_round_trip);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return test_run_suite(stats_suite());
}
