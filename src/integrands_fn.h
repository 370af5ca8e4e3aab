/* The built-in integrands, written once for the host and the device: the
 * CPU backend calls them through the table in integrands.c, the CUDA backend
 * compiles them into its sampling kernels.  Plain C that nvcc also accepts;
 * no state, no allocation, thread-safe. */
#ifndef STRATA_INTEGRANDS_FN_H
#define STRATA_INTEGRANDS_FN_H
#include <math.h>

#include "hostdev.h"

/* Order of the table in integrands.c: the CUDA backend selects its kernel
 * by this number. */
enum {
  STRATA_ID_F1, STRATA_ID_F2, STRATA_ID_F3, STRATA_ID_F4, STRATA_ID_F5, STRATA_ID_F6,
  STRATA_ID_FA, STRATA_ID_FB, STRATA_ID_ROOS_ARNOLD, STRATA_ID_MOROKOFF_CAFLISCH,
  STRATA_NBUILTIN
};

/* Integer powers by squaring: cheaper than pow() for the small exponents
 * (at most STRATA_MAX_DIM + 1) used here, and exact for x == 0 or 1. */
STRATA_HD double strata_ipow(double x, int n)
{
  double r = 1.0;
  while (n > 0) {
    if (n & 1) r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

STRATA_HD double strata_f1_fn(const double *x, int dim, const double *p)
{
  (void)p;
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += (double)(i + 1) * x[i];
  return cos(s);
}

STRATA_HD double strata_f2_fn(const double *x, int dim, const double *p)
{
  double c2 = 1.0 / (p[0] * p[0]);
  /* One division per call instead of one per axis; the denominator stays in
   * range for any c below ~1e4 at STRATA_MAX_DIM. */
  double den = 1.0;
  for (int i = 0; i < dim; i++) {
    double t = x[i] - 0.5;
    den *= c2 + t * t;
  }
  return 1.0 / den;
}

STRATA_HD double strata_f3_fn(const double *x, int dim, const double *p)
{
  (void)p;
  double s = 1.0;
  for (int i = 0; i < dim; i++) s += (double)(i + 1) * x[i];
  return strata_ipow(1.0 / s, dim + 1);
}

STRATA_HD double strata_f4_fn(const double *x, int dim, const double *p)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) {
    double t = x[i] - 0.5;
    s += t * t;
  }
  return exp(-p[0] * s);
}

STRATA_HD double strata_f5_fn(const double *x, int dim, const double *p)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += fabs(x[i] - 0.5);
  return exp(-p[0] * s);
}

/* Axis i+1 is cut at (i+4)/10 (a division, so the cut is the double nearest
 * to 0.4, 0.5, ...).  From axis 7 on the cut is >= 1, outside the default
 * domain, but it still applies so that the function means the same thing on
 * any domain a caller chooses. */
STRATA_HD double strata_f6_fn(const double *x, int dim, const double *p)
{
  (void)p;
  double s = 0.0;
  for (int i = 0; i < dim; i++) {
    if (!(x[i] < (i + 4) / 10.0)) return 0.0;
    s += (double)(i + 5) * x[i];
  }
  return exp(s);
}

STRATA_HD double strata_fA_fn(const double *x, int dim, const double *p)
{
  (void)p;
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += x[i];
  return sin(s);
}

STRATA_HD double strata_fB_fn(const double *x, int dim, const double *p)
{
  double inv = 1.0 / p[0];
  double k = 0.39894228040143267794 * inv; /* 1/(sqrt(2 pi) sigma) */
  double h = 0.5 * inv * inv;
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += x[i] * x[i];
  return strata_ipow(k, dim) * exp(-h * s);
}

STRATA_HD double strata_ra_fn(const double *x, int dim, const double *p)
{
  (void)p;
  double r = 1.0;
  for (int i = 0; i < dim; i++) r *= fabs(4.0 * x[i] - 2.0);
  return r;
}

STRATA_HD double strata_mc_fn(const double *x, int dim, const double *p)
{
  (void)p;
  /* One pow for the whole product rather than one per axis.  The product
   * can only underflow where the integrand is below ~1e-9, which does not
   * matter to the integral. */
  double prod = 1.0;
  for (int i = 0; i < dim; i++) prod *= x[i];
  double e = 1.0 / dim;
  return strata_ipow(1.0 + e, dim) * pow(prod, e);
}
#endif
