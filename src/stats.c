#include "stats.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The exponent of the smallest positive s[k], 0 if none: weights in units
 * of 2^(2e) cannot overflow (strata_stats_average). */
static int min_exponent(const double *s, int n)
{
  double m = INFINITY;
  for (int k = 0; k < n; k++)
    if (s[k] > 0.0 && s[k] < m) m = s[k];
  return isfinite(m) ? ilogb(m) : 0;
}

/* sum w I / sum w with w = 1/ws^2, the weights in units of 2^(-2e) (e =
 * min_exponent(ws)) and the estimates in units of 2^ei, so that neither
 * overflows; the scaled sum of weights in *sw. */
static double weighted_mean(const double *I, const double *ws, int n, int e, int ei, double *sw)
{
  double swk = 0.0, swi = 0.0;
  for (int k = 0; k < n; k++) {
    double s = ldexp(ws[k], -e), w = 1.0 / (s * s);
    swk += w;
    swi += w * ldexp(I[k], -ei);
  }
  *sw = swk;
  return ldexp(swi / swk, ei);
}

void strata_stats_average(const double *I, const double *sig, int n,
                          strata_average *out)
{
  strata_stats_average_by(I, sig, sig, n, out);
}

void strata_stats_average_by(const double *I, const double *sig, const double *wsig, int n,
                             strata_average *out)
{
  memset(out, 0, sizeof *out);
  out->q = 1.0;
  if (n <= 0) {
    out->mean = NAN;
    out->sigma = NAN;
    return;
  }
  int nexact = 0;
  double exact_sum = 0.0;
  for (int k = 0; k < n; k++)
    if (sig[k] == 0.0) {
      nexact++;
      exact_sum += I[k];
    }
  /* The weights 1/sigma^2 overflow for sigma below 1e-154 (a tiny
   * integrand, 1e-160 x), and the mean then came out inf/inf = NaN: they
   * are taken in units of 2^e, e the exponent of the smallest sigma, so the
   * largest weight is about 1.  A power of two scales exactly: where
   * nothing overflowed before, the bits are the same. */
  const int e = min_exponent(wsig, n);
  /* The estimates in units of 2^ei, ei the largest one's exponent, so that
   * neither their weighted sum nor their differences overflow. */
  double big = 0.0;
  for (int k = 0; k < n; k++)
    if (fabs(I[k]) > big) big = fabs(I[k]);
  const int ei = big > 0.0 ? ilogb(big) : 0;
  if (nexact > 0) {
    out->mean = exact_sum / nexact;
    out->sigma = 0.0;
  } else {
    double sw;
    out->mean = weighted_mean(I, wsig, n, e, ei, &sw);
    if (wsig == sig) {
      out->sigma = ldexp(sqrt(1.0 / sw), e);
    } else {
      /* var = sum u_k^2 sig_k^2, u_k = w_k / sum w <= 1, in units of 2^es,
       * es the largest u_k sig_k's exponent: nothing overflows. */
      double big_us = 0.0;
      for (int k = 0; k < n; k++) {
        double s = ldexp(wsig[k], -e), u = 1.0 / (s * s) / sw;
        if (u * sig[k] > big_us) big_us = u * sig[k];
      }
      const int es = big_us > 0.0 ? ilogb(big_us) : 0;
      double v = 0.0;
      for (int k = 0; k < n; k++) {
        double s = ldexp(wsig[k], -e), t = 1.0 / (s * s) / sw * ldexp(sig[k], -es);
        v += t * t;
      }
      out->sigma = ldexp(sqrt(v), es);
    }
  }
  /* chi^2 tests the estimates against their own errors, so it is taken
   * about the mean those errors would weigh (the one whose chi^2 has n - 1
   * degrees of freedom): about another mean, one estimate of large error
   * given a neighbour's small one would make the others look wrong. */
  double cmean = out->mean, sw_own;
  if (wsig != sig && nexact == 0)
    cmean = weighted_mean(I, sig, n, min_exponent(sig, n), ei, &sw_own);
  /* Two-pass chi^2 about the mean: the one-pass form loses all digits when
   * the estimates agree to many places.  Each term is ((I - mean) / sigma)^2
   * with the difference and sigma in the estimates' units: an iteration
   * of 1e-160 +- 1e-160 beside ones of 1 +- 1e-3 makes chi^2 about 1e6 and
   * Q 0 (scaled by the smallest sigma it was inf / inf = NaN, and a NaN Q
   * never restarted the average).  Past the doubles it is +inf, never NaN. */
  double chi2 = 0.0;
  for (int k = 0; k < n; k++) {
    if (!(sig[k] > 0.0)) continue;
    const double d = ldexp(I[k], -ei) - ldexp(cmean, -ei), s = ldexp(sig[k], -ei);
    const double t = d == 0.0 ? 0.0 : d / s;
    chi2 += t * t;
  }
  out->chi2 = chi2;
  out->dof = n - 1;
  if (out->dof > 0) {
    out->chi2_dof = chi2 / out->dof;
    out->q = strata_gamma_q(0.5 * out->dof, 0.5 * chi2);
  }
}

double strata_stats_average_cov(const double *sa, const double *sb, const double *cab, int n)
{
  /* Each average's weights may be scaled alone: the scale cancels. */
  const int ea = min_exponent(sa, n), eb = min_exponent(sb, n);
  double swa = 0.0, swb = 0.0, sab = 0.0;
  for (int k = 0; k < n; k++) {
    double a = ldexp(sa[k], -ea), b = ldexp(sb[k], -eb);
    double wa = sa[k] > 0.0 ? 1.0 / (a * a) : 0.0;
    double wb = sb[k] > 0.0 ? 1.0 / (b * b) : 0.0;
    swa += wa;
    swb += wb;
    if (wa > 0.0 && wb > 0.0) sab += wa * wb * cab[k];
  }
  return swa > 0.0 && swb > 0.0 ? sab / (swa * swb) : NAN;
}

void strata_stats_scatter(const double *I, int n, strata_average *out)
{
  memset(out, 0, sizeof *out);
  out->dof = n - 1;
  if (n <= 0) {
    out->mean = out->sigma = out->chi2 = out->chi2_dof = out->q = NAN;
    return;
  }
  /* In units of 2^e, e the largest estimate's exponent: the squares of
   * 1e-160 and its differences would underflow. */
  double big = 0.0;
  for (int k = 0; k < n; k++)
    if (fabs(I[k]) > big) big = fabs(I[k]);
  const int e = big > 0.0 ? ilogb(big) : 0;
  double sum = 0.0;
  for (int k = 0; k < n; k++) sum += ldexp(I[k], -e);
  const double m = sum / n;
  double ss = 0.0;
  for (int k = 0; k < n; k++) ss += (ldexp(I[k], -e) - m) * (ldexp(I[k], -e) - m);
  out->mean = ldexp(m, e);
  if (n >= 2 && ss == 0.0) {
    out->q = 1.0; /* all alike: nothing scattered, nothing disagrees */
    return;
  }
  /* One estimate has no scatter to measure; several give the error, but no
   * errors of their own to test their agreement with. */
  out->sigma = n >= 2 ? ldexp(sqrt(ss / ((double)n * (n - 1))), e) : NAN;
  out->chi2 = out->chi2_dof = out->q = NAN;
}

/* Series for P(a,x), good for x < a + 1. */
static double gamma_p_series(double a, double x)
{
  double term = 1.0 / a, sum = term;
  for (int n = 1; n < 10000; n++) {
    term *= x / (a + n);
    sum += term;
    if (fabs(term) < fabs(sum) * DBL_EPSILON) break;
  }
  return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Continued fraction for Q(a,x) (modified Lentz), good for x >= a + 1. */
static double gamma_q_cf(double a, double x)
{
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 10000; i++) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) < DBL_EPSILON) break;
  }
  return exp(-x + a * log(x) - lgamma(a)) * h;
}

double strata_gamma_q(double a, double x)
{
  if (isnan(a) || isnan(x) || a <= 0.0) return NAN;
  if (x <= 0.0) return 1.0;
  if (isinf(x)) return 0.0;
  if (x < a + 1.0) return 1.0 - gamma_p_series(a, x);
  return gamma_q_cf(a, x);
}
