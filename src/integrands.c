/* The built-in integrand suite (see shared/design/integrands.md).
 *
 * The integrands sit in the innermost loop of every run and are called from
 * many threads at once, so they allocate nothing, keep no mutable state and
 * use repeated multiplication instead of pow() wherever the exponent is an
 * integer.  The exact values are computed in long double: they are only
 * called once per run, and the extra bits keep the 1e-12 agreement with the
 * reference table even where a product of 32 factors is involved. */
#include "strata/strata.h"
#include "integrands_fn.h"

#include <math.h>
#include <stddef.h>

static long double ipowl(long double x, int n) {
  long double r = 1.0L;
  while (n > 0) {
    if (n & 1) r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

/* ---- f1: oscillatory ---------------------------------------------------- */

static double f1_fn(const double *x, int dim, const double *p) {
  return strata_f1_fn(x, dim, p);
}

static double f1_exact(int dim, const double *p) {
  (void)p;
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  /* (e^{ik} - 1)/(ik) = sin(k)/k + i (1 - cos k)/k; 1 - cos k is written
   * as 2 sin^2(k/2) so that it does not cancel. */
  long double re = 1.0L, im = 0.0L;
  for (int k = 1; k <= dim; k++) {
    long double h = sinl(0.5L * k);
    long double a = sinl((long double)k) / k, b = 2.0L * h * h / k;
    long double t = re * a - im * b;
    im = re * b + im * a;
    re = t;
  }
  return (double)re;
}

/* ---- f2: product peak --------------------------------------------------- */

static double f2_fn(const double *x, int dim, const double *p) {
  return strata_f2_fn(x, dim, p);
}

static double f2_exact(int dim, const double *p) {
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long double c = p[0];
  return (double)ipowl(2.0L * c * atanl(0.5L * c), dim);
}

/* ---- f3: corner peak ---------------------------------------------------- */

static double f3_fn(const double *x, int dim, const double *p) {
  return strata_f3_fn(x, dim, p);
}

/* Inclusion-exclusion, (1/(d!^2)) sum_S (-1)^|S| / (1 + sum_{i in S} i),
 * with the 2^d subsets grouped by their sum s: the signed count of subsets
 * of {1..d} summing to s is the coefficient of q^s in prod_i (1 - q^i).
 * Those coefficients are small exact integers (|c| <= 50 for d <= 32), so
 * the sum loses only a factor ~70 to cancellation even at d = 32, where
 * summing the raw subsets would take 4e9 terms. */
#define F3_MAXSUM (STRATA_MAX_DIM * (STRATA_MAX_DIM + 1) / 2)

static double f3_exact(int dim, const double *p) {
  (void)p;
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long long c[F3_MAXSUM + 1];
  int top = 0;
  c[0] = 1;
  for (int i = 1; i <= dim; i++) {
    for (int s = top + 1; s <= top + i; s++) c[s] = 0;
    /* Downwards, so that c[s - i] is still the coefficient before factor i. */
    for (int s = top + i; s >= i; s--) c[s] -= c[s - i];
    top += i;
  }
  long double sum = 0.0L;
  for (int s = 0; s <= top; s++)
    if (c[s] != 0) sum += (long double)c[s] / (long double)(s + 1);
  for (int k = 2; k <= dim; k++) sum /= (long double)k * (long double)k;
  return (double)sum;
}

/* ---- f4: gaussian ------------------------------------------------------- */

static double f4_fn(const double *x, int dim, const double *p) {
  return strata_f4_fn(x, dim, p);
}

static double f4_exact(int dim, const double *p) {
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long double a = p[0];
  if (a == 0.0L) return 1.0;
  if (!(a > 0.0L)) return NAN; /* would need erfi */
  long double r = sqrtl(a);
  return (double)ipowl(sqrtl(3.14159265358979323846264338327950288L) / r *
                           erfl(0.5L * r),
                       dim);
}

/* ---- f5: C0 ------------------------------------------------------------- */

static double f5_fn(const double *x, int dim, const double *p) {
  return strata_f5_fn(x, dim, p);
}

static double f5_exact(int dim, const double *p) {
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long double b = p[0];
  if (b == 0.0L) return 1.0;
  /* expm1 keeps 1 - e^{-b/2} accurate for small b. */
  return (double)ipowl(-2.0L * expm1l(-0.5L * b) / b, dim);
}

/* ---- f6: discontinuous -------------------------------------------------- */

static double f6_fn(const double *x, int dim, const double *p) {
  return strata_f6_fn(x, dim, p);
}

/* Per axis the integral over [0,1] is (e^{(i+4) m_i} - 1)/(i+4) with
 * m_i = min((3+i)/10, 1).  integrands.md writes the product without the
 * min, which is the same up to d = 7 but wrong from d = 8 on: its d = 8
 * table entry 3.7935e16 integrates axis 8 up to 1.1, outside the cube; the
 * integral over [0,1]^8 is 1.14257925917482024e16. */
static double f6_exact(int dim, const double *p) {
  (void)p;
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long double r = 1.0L;
  for (int i = 1; i <= dim; i++) {
    long double w = (long double)(i + 4);
    long double m = i < 7 ? (long double)(3 + i) / 10.0L : 1.0L;
    r *= expm1l(w * m) / w;
  }
  return (double)r;
}

/* ---- fA: sin of sum ----------------------------------------------------- */

static double fA_fn(const double *x, int dim, const double *p) {
  return strata_fA_fn(x, dim, p);
}

/* Im(((e^{10i} - 1)/i)^d): since (e^{10i} - 1)/i = 2 sin 5 e^{5i}, this is
 * (2 sin 5)^d sin(5d), which needs no complex power. */
static double fA_exact(int dim, const double *p) {
  (void)p;
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  return (double)(ipowl(2.0L * sinl(5.0L), dim) * sinl(5.0L * dim));
}

/* ---- fB: normalised gaussian -------------------------------------------- */

static double fB_fn(const double *x, int dim, const double *p) {
  return strata_fB_fn(x, dim, p);
}

static double fB_exact(int dim, const double *p) {
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  long double sigma = p[0];
  if (!(sigma > 0.0L)) return NAN;
  return (double)ipowl(
      erfl(0.70710678118654752440084436210484904L / sigma), dim);
}

/* ---- Roos-Arnold -------------------------------------------------------- */

static double ra_fn(const double *x, int dim, const double *p) {
  return strata_ra_fn(x, dim, p);
}

static double one_exact(int dim, const double *p) {
  (void)p;
  if (dim < 1 || dim > STRATA_MAX_DIM) return NAN;
  return 1.0;
}

/* ---- Morokoff-Caflisch -------------------------------------------------- */

static double mc_fn(const double *x, int dim, const double *p) {
  return strata_mc_fn(x, dim, p);
}

/* ---- the table ---------------------------------------------------------- */

static const strata_builtin builtins[] = {
    {"f1", "cos", "cos(sum_i i*x_i)", f1_fn, 1, STRATA_MAX_DIM,
     {5, 6, 8, 0}, 0.0, 1.0, 0, {0}, NULL, f1_exact},
    {"f2", "product peak", "prod_i 1/(c^-2 + (x_i - 1/2)^2)", f2_fn, 1,
     STRATA_MAX_DIM, {5, 6, 8, 0}, 0.0, 1.0, 1, {50.0}, "c", f2_exact},
    {"f3", "corner peak", "(1 + sum_i i*x_i)^-(d+1)", f3_fn, 1,
     STRATA_MAX_DIM, {3, 5, 8, 0}, 0.0, 1.0, 0, {0}, NULL, f3_exact},
    {"f4", "gaussian", "exp(-a sum_i (x_i - 1/2)^2)", f4_fn, 1,
     STRATA_MAX_DIM, {5, 6, 8, 9, 0}, 0.0, 1.0, 1, {625.0}, "a", f4_exact},
    {"f5", "C0", "exp(-b sum_i |x_i - 1/2|)", f5_fn, 1, STRATA_MAX_DIM,
     {5, 6, 8, 0}, 0.0, 1.0, 1, {10.0}, "b", f5_exact},
    {"f6", "discontinuous",
     "exp(sum_i (i+4) x_i) if every x_i < (3+i)/10, else 0", f6_fn, 1,
     STRATA_MAX_DIM, {2, 5, 6, 8, 0}, 0.0, 1.0, 0, {0}, NULL, f6_exact},
    {"fA", "sin of sum", "sin(sum_i x_i)", fA_fn, 1, STRATA_MAX_DIM,
     {6, 0}, 0.0, 10.0, 0, {0}, NULL, fA_exact},
    {"fB", "normalised gaussian",
     "(2 pi sigma^2)^(-d/2) exp(-sum_i x_i^2 / (2 sigma^2))", fB_fn, 1,
     STRATA_MAX_DIM, {9, 0}, -1.0, 1.0, 1, {0.01}, "sigma", fB_exact},
    {"roos_arnold", "Roos–Arnold", "prod_i |4 x_i - 2|", ra_fn, 1,
     STRATA_MAX_DIM, {4, 10, 0}, 0.0, 1.0, 0, {0}, NULL, one_exact},
    {"morokoff_caflisch", "Morokoff–Caflisch",
     "(1 + 1/d)^d prod_i x_i^(1/d)", mc_fn, 1, STRATA_MAX_DIM, {5, 8, 0},
     0.0, 1.0, 0, {0}, NULL, one_exact},
};

#define NBUILTINS (sizeof builtins / sizeof builtins[0])

/* ASCII folding rather than strcasecmp: the names are ASCII, and the result
 * must not depend on the locale (or on POSIX being there at all). */
static int ascii_lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int name_eq(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; a++, b++)
    if (ascii_lower((unsigned char)*a) != ascii_lower((unsigned char)*b)) return 0;
  return *a == *b;
}

const strata_builtin *strata_builtin_find(const char *name) {
  if (name == NULL) return NULL;
  for (size_t i = 0; i < NBUILTINS; i++)
    if (name_eq(name, builtins[i].name)) return &builtins[i];
  return NULL;
}

const strata_builtin *strata_builtin_at(size_t i) {
  return i < NBUILTINS ? &builtins[i] : NULL;
}
