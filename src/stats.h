/* Combining iterations: weighted averages, chi^2 and Q. */
#ifndef STRATA_STATS_H
#define STRATA_STATS_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double mean, sigma;
  double chi2;
  int dof;              /* n - 1 */
  double chi2_dof;      /* 0 when dof = 0 */
  double q;             /* P(chi2_dof' >= chi2_dof); 1 when dof = 0 */
} strata_average;

/* Weighted average of n estimates I[k] +- sig[k].  Estimates with sigma 0
 * (an integrand constant under the map) are exact: if any, their plain mean
 * is the answer with sigma 0, and chi^2 measures the others against it. */
void strata_stats_average(const double *I, const double *sig, int n,
                          strata_average *out);

/* The same average with the weights 1/wsig[k]^2 chosen apart from the
 * errors: mean = sum w I / sum w, sigma^2 = sum w^2 sig^2 / (sum w)^2; chi^2
 * and Q are strata_stats_average's, the estimates' agreement within their
 * own errors.  Weights that do not depend on an estimate's own samples
 * cannot favour the estimates that came out low with a small error (a peak
 * missed), as its own 1/sig^2 does.  wsig == sig is strata_stats_average. */
void strata_stats_average_by(const double *I, const double *sig, const double *wsig, int n,
                             strata_average *out);

/* The average of n estimates I[k] whose own errors are unknown (tiny ones
 * whose variances underflowed to 0): their plain mean, with the error from
 * their scatter, sqrt(sum (I_k - mean)^2 / (n (n - 1))).  Computed in a
 * scale that cannot underflow.  With n >= 2 equal estimates, sigma 0, chi^2
 * 0 and Q 1; otherwise chi^2, chi2_dof and Q are NaN (no errors to test the
 * estimates against), and so is sigma for a single estimate. */
void strata_stats_scatter(const double *I, int n, strata_average *out);

/* The covariance of two such averages, A weighing its estimates by
 * 1/sa[k]^2 and B by 1/sb[k]^2, over the same n iterations whose covariances
 * are cab[k]: sum_k wa_k wb_k cab[k] / (sum_k wa_k sum_k wb_k).
 * An error of 0 marks an iteration that does not count for that average
 * (weight 0).  NaN when either average has no iteration. */
double strata_stats_average_cov(const double *sa, const double *sb, const double *cab, int n);

/* Regularised upper incomplete gamma function Q(a, x) = Gamma(a, x)/Gamma(a). */
double strata_gamma_q(double a, double x);
#ifdef __cplusplus
}
#endif
#endif
