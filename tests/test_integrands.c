/* Tests of the built-in integrand suite (src/integrands.c).
 *
 * The exact values are checked three ways: against the 20-digit table of
 * shared/design/integrands.md, against quadrature of the library's own
 * integrand (which needs no closed form, so a wrong formula and a wrong
 * integrand cannot agree by accident), and through hand-computed values of
 * the integrands themselves. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"
#include "testutil.h"

#define NBUILTIN_EXPECTED 10

static const strata_builtin *get(const char *name) {
  const strata_builtin *b = strata_builtin_find(name);
  ck_assert_msg(b != NULL, "built-in %s not found", name);
  return b;
}

static void check_rel(double got, double want, double tol, const char *what,
                      int dim) {
  double err = fabs(got - want);
  ck_assert_msg(isfinite(got) && err <= tol * fabs(want),
                "%s d=%d: got %.17g, want %.17g (rel err %.3g > %.1g)", what,
                dim, got, want, err / fabs(want), tol);
}

/* ---- quadrature --------------------------------------------------------- */

/* Gauss-Legendre on [-1,1] by Newton iteration on P_n; the nodes are
 * computed rather than tabulated so that a typo cannot bias every check. */
#define GL_N 20
#define PI 3.14159265358979323846 /* M_PI is not in strict C11 */
static double gl_x[GL_N], gl_w[GL_N];

static void gl_init(void) {
  for (int i = 0; i < GL_N; i++) {
    double z = cos(PI * (i + 0.75) / (GL_N + 0.5)), dp = 0.0;
    for (int it = 0; it < 100; it++) {
      double p0 = 1.0, p1 = z;
      for (int k = 2; k <= GL_N; k++) {
        double p2 = ((2.0 * k - 1.0) * z * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = GL_N * (z * p1 - p0) / (z * z - 1.0);
      double dz = p1 / dp;
      z -= dz;
      if (fabs(dz) < 1e-16) break;
    }
    gl_x[i] = z;
    gl_w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
  }
}

typedef double (*fn1d)(double t, void *ctx);

static double gl_panel(fn1d f, void *ctx, double a, double b) {
  double m = 0.5 * (a + b), h = 0.5 * (b - a), s = 0.0;
  for (int i = 0; i < GL_N; i++) s += gl_w[i] * f(m + h * gl_x[i], ctx);
  return h * s;
}

static double gl_composite(fn1d f, void *ctx, double a, double b, int n) {
  double s = 0.0;
  for (int j = 0; j < n; j++)
    s += gl_panel(f, ctx, a + (b - a) * j / n, a + (b - a) * (j + 1) / n);
  return s;
}

/* Panels halving towards a, for integrands like t^(1/d) whose derivatives
 * blow up there; the first 2^-80 of the interval is left out. */
static double gl_graded(fn1d f, void *ctx, double a, double b) {
  double s = 0.0, hi = b;
  for (int k = 0; k < 80; k++) {
    double lo = a + (hi - a) * 0.5;
    s += gl_panel(f, ctx, lo, hi);
    hi = lo;
  }
  return s;
}

/* The library integrand along one axis, the others held at a base point. */
typedef struct {
  const strata_builtin *b;
  int dim, axis;
  const double *params;
  double x[STRATA_MAX_DIM];
} axis_ctx;

static double along_axis(double t, void *vctx) {
  axis_ctx *c = vctx;
  double x[STRATA_MAX_DIM];
  memcpy(x, c->x, sizeof x);
  x[c->axis] = t;
  return c->b->f(x, c->dim, c->params);
}

/* For f(x) = prod_i g_i(x_i), integrating f along axis i through a base
 * point x0 gives Q_i = f(x0) G_i / g_i(x0_i), so the full integral
 * prod_i G_i = f(x0) prod_i (Q_i / f(x0)).  This uses only the library's
 * integrand, never its closed form. */
static double separable_integral(const strata_builtin *b, int dim,
                                 const double *params, double base,
                                 int panels) {
  axis_ctx c = {.b = b, .dim = dim, .params = params};
  for (int i = 0; i < dim; i++) c.x[i] = base;
  double f0 = b->f(c.x, dim, params);
  ck_assert_msg(f0 != 0.0 && isfinite(f0), "%s: bad base point", b->name);
  double r = f0;
  for (int i = 0; i < dim; i++) {
    c.axis = i;
    double q = panels > 0 ? gl_composite(along_axis, &c, b->lower, b->upper,
                                         panels)
                          : gl_graded(along_axis, &c, b->lower, b->upper);
    r *= q / f0;
  }
  return r;
}

/* Tensor-product Gauss-Legendre of the library integrand, for the
 * non-separable ones in low dimension. */
static double tensor_integral(const strata_builtin *b, int dim, int panels) {
  int n = panels * GL_N;
  double *nx = malloc(sizeof(double) * (size_t)n);
  double *nw = malloc(sizeof(double) * (size_t)n);
  ck_assert(nx != NULL && nw != NULL);
  double h = (b->upper - b->lower) / panels;
  for (int j = 0; j < panels; j++)
    for (int i = 0; i < GL_N; i++) {
      nx[j * GL_N + i] = b->lower + h * (j + 0.5 + 0.5 * gl_x[i]);
      nw[j * GL_N + i] = 0.5 * h * gl_w[i];
    }
  int idx[STRATA_MAX_DIM] = {0};
  double x[STRATA_MAX_DIM], s = 0.0;
  for (;;) {
    double w = 1.0;
    for (int k = 0; k < dim; k++) {
      x[k] = nx[idx[k]];
      w *= nw[idx[k]];
    }
    s += w * b->f(x, dim, b->params);
    int k = 0;
    while (k < dim && ++idx[k] == n) idx[k++] = 0;
    if (k == dim) break;
  }
  free(nx);
  free(nw);
  return s;
}

/* ---- (1) the reference table ------------------------------------------- */

typedef struct {
  const char *name;
  int dim;
  double value;
} ref_value;

static const ref_value table[] = {
    {"f1", 5, 0.020242422119901896863},
    {"f1", 6, -0.0013062949651908022873},
    {"f1", 8, 0.000034395579521832515852},
    {"f2", 5, 84065401179.140645533},
    {"f2", 6, 12868879901109.877544},
    {"f2", 8, 301569672104130499.99},
    {"f3", 3, 0.010846560846560847347},
    {"f3", 5, 0.000026025382796216129169},
    {"f3", 8, 2.2751965817917756321e-10},
    {"f4", 5, 1.7913260367487859555e-6},
    {"f4", 6, 1.2700170928250806344e-7},
    {"f4", 8, 6.3838021900043837267e-10},
    {"f4", 9, 4.5259979100369346606e-11},
    {"f5", 5, 0.00030936358898267925219},
    {"f5", 6, 0.000061455822703333419731},
    {"f5", 8, 2.4252176256418855569e-6},
    {"f6", 2, 4.0646188693486095151},
    {"f6", 5, 191029.46875697125076},
    {"f6", 6, 154773678.85091207413},
    /* Not in integrands.md; 40-digit values of prod_i (e^{(i+4) m_i} - 1)/
     * (i+4), m_i = min((3+i)/10, 1).  The table's d = 8 entry,
     * 37935130218540808.269, drops the min and so integrates axis 8 up to
     * 1.1, outside the unit cube. */
    {"f6", 7, 842435127965.7430964887},
    {"f6", 8, 11425792591748202.39414},
    {"fA", 6, -49.165073816419457311},
    {"fB", 9, 1.0},
    {"roos_arnold", 4, 1.0},
    {"roos_arnold", 10, 1.0},
    {"morokoff_caflisch", 5, 1.0},
    {"morokoff_caflisch", 8, 1.0},
    /* Exact rationals 5/48 and the d = 4 inclusion-exclusion sum. */
    {"f3", 2, 0.10416666666666666667},
    {"f3", 4, 0.00065937149270482603816},
};

START_TEST(test_table_values) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    const strata_builtin *b = get(table[i].name);
    check_rel(b->exact(table[i].dim, b->params), table[i].value, 1e-12,
              table[i].name, table[i].dim);
  }
}
END_TEST

START_TEST(test_listed_dims_have_values) {
  /* Every dimension `strata list` shows must be in the table above. */
  for (size_t i = 0; strata_builtin_at(i) != NULL; i++) {
    const strata_builtin *b = strata_builtin_at(i);
    for (int k = 0; k < 8 && b->list_dims[k] != 0; k++) {
      int found = 0;
      for (size_t j = 0; j < sizeof table / sizeof table[0]; j++)
        found |= strcmp(table[j].name, b->name) == 0 &&
                 table[j].dim == b->list_dims[k];
      ck_assert_msg(found, "%s d=%d listed but not checked", b->name,
                    b->list_dims[k]);
    }
  }
}
END_TEST

START_TEST(test_generic_dims_closed_forms) {
  /* The "any d" closed forms, beyond the table. */
  const strata_builtin *b = get("fB");
  double p[1] = {0.5};
  check_rel(b->exact(3, p), pow(erf(1.0 / (0.5 * sqrt(2.0))), 3), 1e-14,
            "fB sigma=0.5", 3);
  b = get("roos_arnold");
  check_rel(b->exact(1, b->params), 1.0, 0.0, "roos_arnold", 1);
  check_rel(b->exact(STRATA_MAX_DIM, b->params), 1.0, 0.0, "roos_arnold",
            STRATA_MAX_DIM);
  b = get("morokoff_caflisch");
  check_rel(b->exact(STRATA_MAX_DIM, b->params), 1.0, 0.0,
            "morokoff_caflisch", STRATA_MAX_DIM);
}
END_TEST

START_TEST(test_exact_outside_domain_is_nan) {
  for (size_t i = 0; strata_builtin_at(i) != NULL; i++) {
    const strata_builtin *b = strata_builtin_at(i);
    ck_assert_msg(isnan(b->exact(0, b->params)), "%s d=0", b->name);
    ck_assert_msg(isnan(b->exact(b->dim_max + 1, b->params)), "%s d=max+1",
                  b->name);
  }
  double neg[1] = {-1.0}, zero[1] = {0.0};
  ck_assert(isnan(get("f4")->exact(3, neg)));
  ck_assert(isnan(get("fB")->exact(3, neg)));
  ck_assert(isnan(get("fB")->exact(3, zero)));
  /* Limits that are not NaN: a = 0 and b = 0 integrate exp(0) = 1. */
  check_rel(get("f4")->exact(3, zero), 1.0, 1e-15, "f4 a=0", 3);
  check_rel(get("f5")->exact(3, zero), 1.0, 1e-15, "f5 b=0", 3);
}
END_TEST

/* ---- (2) independent quadrature ---------------------------------------- */

typedef struct {
  const char *name;
  double param;   /* NaN: the default */
  double base;    /* where the other axes are held */
  int panels;     /* 0: graded towards the lower end */
} sep_case;

static const sep_case sep_cases[] = {
    {"f2", NAN, 0.5, 128},  {"f2", 3.0, 0.5, 128},   {"f2", 20.0, 0.3, 128},
    {"f4", NAN, 0.5, 128},  {"f4", 10.0, 0.5, 128},  {"f4", 200.0, 0.2, 128},
    {"f5", NAN, 0.5, 128},  {"f5", 1.0, 0.5, 128},   {"f5", 30.0, 0.7, 128},
    {"f6", NAN, 0.0, 100},
    {"fB", NAN, 0.0, 128},  {"fB", 0.5, 0.0, 128},   {"fB", 0.2, 0.3, 128},
    {"roos_arnold", NAN, 0.0, 128},
    {"morokoff_caflisch", NAN, 1.0, 0},
};

START_TEST(test_separable_quadrature) {
  static const int dims[] = {1, 2, 3, 5, 7, 8, 9, 12};
  for (size_t i = 0; i < sizeof sep_cases / sizeof sep_cases[0]; i++) {
    const sep_case *c = &sep_cases[i];
    const strata_builtin *b = get(c->name);
    double p[4];
    memcpy(p, b->params, sizeof p);
    if (!isnan(c->param)) p[0] = c->param;
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s p=%g quadrature", c->name, p[0]);
      check_rel(b->exact(dims[k], p),
                separable_integral(b, dims[k], p, c->base, c->panels), 1e-11,
                what, dims[k]);
    }
  }
}
END_TEST

START_TEST(test_separable_is_product) {
  /* separable_integral assumes f(x) = prod_i g_i(x_i); check that holds for
   * the library functions: f(x) f(y) = f(x with x_i = y_i) f(y with
   * y_i = x_i) for any axis i. */
  for (size_t i = 0; i < sizeof sep_cases / sizeof sep_cases[0]; i++) {
    const strata_builtin *b = get(sep_cases[i].name);
    const int d = 5;
    double x[STRATA_MAX_DIM], y[STRATA_MAX_DIM], xs[STRATA_MAX_DIM],
        ys[STRATA_MAX_DIM];
    for (int k = 0; k < d; k++) {
      double u = 0.13 + 0.071 * k, v = 0.29 + 0.053 * k;
      x[k] = b->lower + (b->upper - b->lower) * u;
      y[k] = b->lower + (b->upper - b->lower) * v;
    }
    for (int ax = 0; ax < d; ax++) {
      memcpy(xs, x, sizeof x);
      memcpy(ys, y, sizeof y);
      xs[ax] = y[ax];
      ys[ax] = x[ax];
      double lhs = b->f(x, d, b->params) * b->f(y, d, b->params);
      double rhs = b->f(xs, d, b->params) * b->f(ys, d, b->params);
      check_rel(lhs, rhs, 1e-13, b->name, d);
    }
  }
}
END_TEST

typedef struct {
  int k;
  int im;
} trig_ctx;

static double trig(double t, void *v) {
  trig_ctx *c = v;
  return c->im ? sin(c->k * t) : cos(c->k * t);
}

START_TEST(test_f1_quadrature) {
  /* prod_k int_0^1 e^{ikt} dt, each factor by quadrature of cos and sin. */
  const strata_builtin *b = get("f1");
  double re = 1.0, im = 0.0;
  for (int d = 1; d <= 12; d++) {
    trig_ctx c = {d, 0};
    double a = gl_composite(trig, &c, 0.0, 1.0, 8);
    c.im = 1;
    double s = gl_composite(trig, &c, 0.0, 1.0, 8);
    double t = re * a - im * s;
    im = re * s + im * a;
    re = t;
    check_rel(b->exact(d, b->params), re, 1e-11, "f1 quadrature", d);
  }
}
END_TEST

START_TEST(test_fA_quadrature) {
  const strata_builtin *b = get("fA");
  trig_ctx c = {1, 0};
  double a = gl_composite(trig, &c, 0.0, 10.0, 32);
  c.im = 1;
  double s = gl_composite(trig, &c, 0.0, 10.0, 32);
  double re = 1.0, im = 0.0;
  for (int d = 1; d <= 12; d++) {
    double t = re * a - im * s;
    im = re * s + im * a;
    re = t;
    check_rel(b->exact(d, b->params), im, 1e-11, "fA quadrature", d);
  }
}
END_TEST

static double f3_generating(double q, void *v) {
  int d = *(int *)v;
  double r = 1.0, qi = 1.0;
  for (int i = 1; i <= d; i++) {
    qi *= q;
    r *= 1.0 - qi;
  }
  return r;
}

START_TEST(test_f3_generating_function) {
  /* Writing 1/(1 + s) = int_0^1 q^s dq turns the inclusion-exclusion sum
   * into (1/d!^2) int_0^1 prod_i (1 - q^i) dq, a positive integrand with
   * no cancellation at all. */
  const strata_builtin *b = get("f3");
  for (int d = 1; d <= b->dim_max; d++) {
    double r = gl_composite(f3_generating, &d, 0.0, 1.0, 512);
    for (int k = 2; k <= d; k++) r /= (double)k * k;
    check_rel(b->exact(d, b->params), r, 1e-12, "f3 generating fn", d);
  }
}
END_TEST

START_TEST(test_non_separable_tensor) {
  /* The library's own non-separable integrands against their closed forms. */
  check_rel(get("f1")->exact(2, NULL), tensor_integral(get("f1"), 2, 4),
            1e-12, "f1 tensor", 2);
  check_rel(get("fA")->exact(2, NULL), tensor_integral(get("fA"), 2, 8),
            1e-12, "fA tensor", 2);
  check_rel(get("f3")->exact(2, NULL), tensor_integral(get("f3"), 2, 4),
            1e-12, "f3 tensor", 2);
  check_rel(get("f3")->exact(3, NULL), tensor_integral(get("f3"), 3, 4),
            1e-12, "f3 tensor", 3);
}
END_TEST

/* ---- (3) values at hand-computed points -------------------------------- */

typedef struct {
  const char *name;
  int dim;
  double param; /* NaN: the default */
  double x[9];
  double value;
} point_case;

/* Values from 30-digit arithmetic on the definitions. */
static const point_case points[] = {
    {"f1", 3, NAN, {0.1, 0.2, 0.3}, 0.169967142900240938617},
    {"f2", 2, NAN, {0.5, 0.25}, 39745.6279809220985692},
    {"f2", 2, 3.0, {0.2, 0.9}, 18.3407300063400054343},
    {"f3", 2, NAN, {0.5, 0.25}, 0.125},
    {"f3", 3, NAN, {0.3, 0.7, 0.2}, 0.00843226488105025545546},
    {"f3", 3, NAN, {1.0, 1.0, 1.0}, 1.0 / 2401.0},
    {"f4", 2, NAN, {0.5, 0.54}, 0.367879441171442321596},
    {"f5", 3, NAN, {0.5, 0.6, 0.3}, 0.0497870683678639429793},
    {"f6", 3, NAN, {0.39, 0.49, 0.59}, 8266.77708126167429096},
    {"f6", 8, NAN, {0, 0, 0, 0, 0, 0, 0.999, 0.999}, 9523230819.76359268114},
    {"f6", 3, NAN, {0.4, 0.1, 0.1}, 0.0},      /* the cut is strict */
    {"f6", 3, NAN, {0.1, 0.1, 0.61}, 0.0},
    {"f6", 8, NAN, {0, 0, 0, 0, 0, 0, 1.0, 0}, 0.0},
    /* Beyond the default domain the cuts at 1.1, 1.2, ... still apply. */
    {"f6", 8, NAN, {0, 0, 0, 0, 0, 0, 0, 1.05}, 296558.565298202928131},
    {"f6", 8, NAN, {0, 0, 0, 0, 0, 0, 0, 1.1}, 0.0},
    {"fA", 2, NAN, {1.0, 2.0}, 0.141120008059867222101},
    {"fB", 1, NAN, {0.0}, 39.894228040143267794},
    {"fB", 2, NAN, {0.01, 0.0}, 965.32352630053907542},
    {"fB", 3, 0.5, {0.5, -0.6, 1.0}, 0.0202951353834667712846},
    {"roos_arnold", 3, NAN, {0.0, 0.25, 1.0}, 4.0},
    {"roos_arnold", 2, NAN, {0.5, 0.9}, 0.0},
    {"morokoff_caflisch", 2, NAN, {0.25, 1.0}, 1.125},
    {"morokoff_caflisch", 4, NAN, {0.0625, 1.0, 1.0, 1.0}, 1.220703125},
    {"morokoff_caflisch", 3, NAN, {0.5, 0.0, 0.5}, 0.0},
};

START_TEST(test_point_values) {
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    const point_case *c = &points[i];
    const strata_builtin *b = get(c->name);
    double p[4];
    memcpy(p, b->params, sizeof p);
    if (!isnan(c->param)) p[0] = c->param;
    double got = b->f(c->x, c->dim, p);
    if (c->value == 0.0)
      ck_assert_msg(got == 0.0, "%s case %zu: got %.17g, want 0", c->name, i,
                    got);
    else
      check_rel(got, c->value, 1e-13, c->name, c->dim);
  }
}
END_TEST

/* ---- (4) the table and its look-up ------------------------------------- */

START_TEST(test_find) {
  static const char *names[NBUILTIN_EXPECTED] = {
      "f1", "f2", "f3", "f4", "f5", "f6", "fA", "fB", "roos_arnold",
      "morokoff_caflisch"};
  for (int i = 0; i < NBUILTIN_EXPECTED; i++) {
    const strata_builtin *b = strata_builtin_find(names[i]);
    ck_assert_msg(b != NULL, "%s", names[i]);
    ck_assert_str_eq(b->name, names[i]);
  }
  ck_assert_ptr_eq(strata_builtin_find("F4"), strata_builtin_find("f4"));
  ck_assert_ptr_eq(strata_builtin_find("fa"), strata_builtin_find("fA"));
  ck_assert_ptr_eq(strata_builtin_find("FB"), strata_builtin_find("fB"));
  ck_assert_ptr_eq(strata_builtin_find("Roos_Arnold"),
                   strata_builtin_find("roos_arnold"));
  ck_assert_ptr_eq(strata_builtin_find("MOROKOFF_CAFLISCH"),
                   strata_builtin_find("morokoff_caflisch"));
  ck_assert_ptr_ne(strata_builtin_find("f4"), strata_builtin_find("f5"));
  ck_assert_ptr_eq(strata_builtin_find("f7"), NULL);
  ck_assert_ptr_eq(strata_builtin_find("f"), NULL);
  ck_assert_ptr_eq(strata_builtin_find("f44"), NULL);
  ck_assert_ptr_eq(strata_builtin_find("roos"), NULL);
  ck_assert_ptr_eq(strata_builtin_find(" f4"), NULL);
  ck_assert_ptr_eq(strata_builtin_find(""), NULL);
  ck_assert_ptr_eq(strata_builtin_find("gaussian"), NULL);
  ck_assert_ptr_eq(strata_builtin_find(NULL), NULL);
}
END_TEST

START_TEST(test_at_walks_table) {
  size_t n = 0;
  while (strata_builtin_at(n) != NULL) n++;
  ck_assert_uint_eq(n, NBUILTIN_EXPECTED);
  ck_assert_ptr_eq(strata_builtin_at(n + 1), NULL);
  ck_assert_ptr_eq(strata_builtin_at((size_t)-1), NULL);
  for (size_t i = 0; i < n; i++) {
    const strata_builtin *b = strata_builtin_at(i);
    ck_assert_ptr_eq(strata_builtin_find(b->name), b);
    for (size_t j = 0; j < i; j++)
      ck_assert_str_ne(strata_builtin_at(j)->name, b->name);
    ck_assert_ptr_ne(b->title, NULL);
    ck_assert_ptr_ne(b->formula, NULL);
    ck_assert_msg(strchr(b->formula, '\n') == NULL, "%s formula", b->name);
    ck_assert_msg(b->f != NULL, "%s f", b->name);
    ck_assert_msg(b->exact != NULL, "%s exact", b->name);
    ck_assert_int_ge(b->dim_min, 1);
    ck_assert_int_le(b->dim_min, b->dim_max);
    ck_assert_int_le(b->dim_max, STRATA_MAX_DIM);
    ck_assert_msg(b->lower < b->upper, "%s domain", b->name);
    ck_assert_int_ge(b->nparams, 0);
    ck_assert_int_le(b->nparams, 4);
    ck_assert_msg((b->nparams == 0) == (b->param_names == NULL),
                  "%s param_names", b->name);
    ck_assert_int_ne(b->list_dims[0], 0);
    for (int k = 0; k < 8 && b->list_dims[k] != 0; k++) {
      int d = b->list_dims[k];
      ck_assert_int_ge(d, b->dim_min);
      ck_assert_int_le(d, b->dim_max);
    }
    /* Finite everywhere it is defined, at the midpoint and at the extreme
     * dimensions. */
    double x[STRATA_MAX_DIM];
    for (int k = 0; k < STRATA_MAX_DIM; k++)
      x[k] = b->lower + 0.37 * (b->upper - b->lower);
    for (int d = b->dim_min; d <= b->dim_max; d++) {
      ck_assert_msg(isfinite(b->f(x, d, b->params)), "%s f d=%d", b->name, d);
      double e = b->exact(d, b->params);
      ck_assert_msg(isfinite(e) && e != 0.0, "%s exact d=%d", b->name, d);
    }
  }
}
END_TEST

START_TEST(test_defaults) {
  ck_assert(get("f2")->params[0] == 50.0);
  ck_assert(get("f4")->params[0] == 625.0);
  ck_assert(get("f5")->params[0] == 10.0);
  ck_assert(get("fB")->params[0] == 0.01);
  ck_assert_str_eq(get("fB")->param_names, "sigma");
  ck_assert(get("fA")->lower == 0.0);
  ck_assert(get("fA")->upper == 10.0);
  ck_assert(get("fB")->lower == -1.0);
  ck_assert(get("fB")->upper == 1.0);
  ck_assert(get("f1")->upper == 1.0);
}
END_TEST

static Suite *integrands_suite(void) {
  Suite *s = suite_create("integrands");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_table_values);
  tcase_add_test(tc, test_listed_dims_have_values);
  tcase_add_test(tc, test_generic_dims_closed_forms);
  tcase_add_test(tc, test_exact_outside_domain_is_nan);
  suite_add_tcase(s, tc);

  tc = tcase_create("quadrature");
  tcase_add_unchecked_fixture(tc, gl_init, NULL);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_separable_quadrature);
  tcase_add_test(tc, test_separable_is_product);
  tcase_add_test(tc, test_f1_quadrature);
  tcase_add_test(tc, test_fA_quadrature);
  tcase_add_test(tc, test_f3_generating_function);
  tcase_add_test(tc, test_non_separable_tensor);
  suite_add_tcase(s, tc);

  tc = tcase_create("points");
  tcase_add_test(tc, test_point_values);
  suite_add_tcase(s, tc);

  tc = tcase_create("lookup");
  tcase_add_test(tc, test_find);
  tcase_add_test(tc, test_at_walks_table);
  tcase_add_test(tc, test_defaults);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return test_run_suite(integrands_suite());
}
