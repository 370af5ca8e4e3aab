/* Vector integrands (ncomp components): every component's estimate is right
 * and its error honest, the covariance is symmetric, positive semi-definite
 * and agrees with the scatter it predicts, ncomp = 1 through fv is the
 * scalar run to the bit, adapting to component k reproduces a scalar run of
 * component k, threads and ranks change nothing, and checkpoints and logs
 * carry the components through a resume. */
#include <hdf5.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "io.h"
#include "jobdef.h"
#include "strata/report.h"
#include "run.h"
#include "runlog.h"
#include "testcomm.h"
#include "testrun.h"
#include "testutil.h"

#define DIM 3
#define NCOMP 3

/* The peak: exp(-a |x - 1/2|^2) on the unit cube, a = params[0]. */
static double peak(const double *x, int dim, const double *params)
{
  double r2 = 0.0;
  for (int d = 0; d < dim; d++) r2 += (x[d] - 0.5) * (x[d] - 0.5);
  return exp(-params[0] * r2);
}

static double poly(const double *x) { return 1.0 + x[0] * x[1] + x[2] * x[2]; }

static double x0_peak(const double *x, int dim, const double *params)
{
  return x[0] * peak(x, dim, params);
}

static double poly_fn(const double *x, int dim, const double *params)
{
  (void)dim;
  (void)params;
  return poly(x);
}

/* The three components: the peak, x0 times the peak, a smooth polynomial. */
static void three(const double *x, int dim, const double *params, const strata_table *t,
                  double *out)
{
  (void)t;
  out[0] = peak(x, dim, params);
  out[1] = x[0] * out[0];
  out[2] = poly(x);
}

/* The peak and twice the peak: perfectly correlated. */
static void twice(const double *x, int dim, const double *params, const strata_table *t,
                  double *out)
{
  (void)t;
  out[0] = peak(x, dim, params);
  out[1] = 2.0 * out[0];
}

/* The peak and a function whose integral is 0, so that no relative
 * tolerance can be met for it. */
static void with_zero(const double *x, int dim, const double *params, const strata_table *t,
                      double *out)
{
  (void)t;
  out[0] = peak(x, dim, params);
  out[1] = sin(2.0 * M_PI * x[0]);
}

static void peak_v(const double *x, int dim, const double *params, const strata_table *t,
                   double *out)
{
  (void)t;
  out[0] = peak(x, dim, params);
}

/* A NaN in component 2 for x0 > 0.9. */
static void bad_third(const double *x, int dim, const double *params, const strata_table *t,
                      double *out)
{
  three(x, dim, params, t, out);
  if (x[0] > 0.9) out[2] = NAN;
}

static const double A = 20.0;

static double exact_peak(void)
{
  double one = sqrt(M_PI / A) * erf(0.5 * sqrt(A));
  return one * one * one;
}

/* x0 peak: the peak is symmetric about 1/2, so half of it. */
static double exact_comp(int c)
{
  return c == 0 ? exact_peak() : c == 1 ? 0.5 * exact_peak() : 1.0 + 0.25 + 1.0 / 3.0;
}

static strata_problem vproblem(strata_vfn fv, int ncomp, int adapt)
{
  strata_problem pr = {.fv = fv, .dim = DIM, .nparams = 1, .name = "test",
                       .ncomp = ncomp, .adapt_comp = adapt};
  pr.params[0] = A;
  for (int d = 0; d < DIM; d++) pr.upper[d] = 1.0;
  return pr;
}

static strata_problem sproblem(strata_fn f)
{
  strata_problem pr = vproblem(NULL, 0, 0);
  pr.f = f;
  return pr;
}

static strata_params params(strata_mode mode, uint64_t seed)
{
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.neval = 20000;
  p.maxiter = 10;
  p.adapt_iters = 5;
  p.skip = 3;
  p.epsrel = 0;
  p.seed = seed;
  p.nthreads = 2;
  return p;
}

static void integrate(const strata_problem *pr, const strata_params *p, strata_iteration_cb cb,
                      void *ctx, strata_result *res)
{
  ck_assert_msg(strata_integrate(pr, p, cb, ctx, res) == STRATA_OK, "%s",
                strata_last_error());
}

/* Every iteration's rows, copied out of the callback. */
typedef struct {
  int n, ncomp;
  strata_iteration it[64];
  double comp[64][NCOMP * STRATA_COMP_ROW(NCOMP)];
} rows;

static void collect(const strata_iteration *it, void *ctx)
{
  rows *r = ctx;
  ck_assert(r->n < 64);
  r->it[r->n] = *it;
  r->ncomp = it->ncomp;
  if (it->ncomp > 1) {
    ck_assert(it->comp != NULL);
    memcpy(r->comp[r->n], it->comp, sizeof(double) * (size_t)it->ncomp *
                                        STRATA_COMP_ROW(it->ncomp));
  } else {
    ck_assert(it->comp == NULL);
  }
  r->n++;
}

static double row_get(const rows *r, int k, int c, int field)
{
  return r->comp[k][c * STRATA_COMP_ROW(r->ncomp) + field];
}

static const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS,
                                    STRATA_MODE_VEGAS1D, STRATA_MODE_PLAIN, STRATA_MODE_QMC};
#define NMODES (int)(sizeof modes / sizeof *modes)

START_TEST(test_exact_values)
{
  for (int m = 0; m < NMODES; m++) {
    strata_problem pr = vproblem(three, NCOMP, 0);
    strata_params p = params(modes[m], 5);
    strata_result res;
    integrate(&pr, &p, NULL, NULL, &res);
    ck_assert_int_eq(res.ncomp, NCOMP);
    for (int c = 0; c < NCOMP; c++) {
      double err = res.comp_integral[c] - exact_comp(c);
      ck_assert_msg(res.comp_sigma[c] > 0.0 && fabs(err) < 4.0 * res.comp_sigma[c],
                    "mode %s component %d: %.10g +- %.3g, exact %.10g",
                    strata_mode_name(modes[m]), c, res.comp_integral[c], res.comp_sigma[c],
                    exact_comp(c));
      /* An error that is honest and not absurdly loose either. */
      ck_assert_msg(res.comp_sigma[c] < 1e-2 * fabs(exact_comp(c)), "component %d: sigma %g",
                    c, res.comp_sigma[c]);
    }
    /* The scalar fields are component 0's. */
    ck_assert(res.integral == res.comp_integral[0] && res.sigma == res.comp_sigma[0]);
  }
}
END_TEST

START_TEST(test_coverage)
{
  const int nseed = 24;
  for (int adapt = -1; adapt <= 0; adapt++) {
    int inside[NCOMP] = {0};
    for (int s = 0; s < nseed; s++) {
      strata_problem pr = vproblem(three, NCOMP, adapt);
      strata_params p = params(STRATA_MODE_VEGASPLUS, 1000 + (uint64_t)s);
      p.neval = 10000;
      strata_result res;
      integrate(&pr, &p, NULL, NULL, &res);
      for (int c = 0; c < NCOMP; c++)
        inside[c] += fabs(res.comp_integral[c] - exact_comp(c)) < 3.0 * res.comp_sigma[c];
    }
    for (int c = 0; c < NCOMP; c++)
      ck_assert_msg(inside[c] >= (int)ceil(0.9 * nseed),
                    "adapt %d component %d: only %d of %d runs within 3 sigma", adapt, c,
                    inside[c], nseed);
  }
}
END_TEST

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

START_TEST(test_fv_is_f)
{
  for (int m = 0; m < NMODES; m++) {
    strata_problem pv = vproblem(peak_v, 1, 0), pf = sproblem(peak);
    strata_params p = params(modes[m], 17);
    rows rv = {0}, rf = {0};
    strata_result a, b;
    integrate(&pv, &p, collect, &rv, &a);
    integrate(&pf, &p, collect, &rf, &b);
    ck_assert_int_eq(rv.n, rf.n);
    for (int k = 0; k < rv.n; k++) {
      strata_iteration x = rv.it[k];
      x.time_s = rf.it[k].time_s;
      ck_assert_msg(memcmp(&x, &rf.it[k], sizeof x) == 0, "mode %s: row %d differs",
                    strata_mode_name(modes[m]), k + 1);
    }
    ck_assert_msg(same(a.integral, b.integral) && same(a.sigma, b.sigma) &&
                      same(a.chi2_dof, b.chi2_dof) && same(a.q, b.q),
                  "mode %s: fv %.17g +- %.17g, f %.17g +- %.17g", strata_mode_name(modes[m]),
                  a.integral, a.sigma, b.integral, b.sigma);
    ck_assert_int_eq(a.ncomp, 1);
  }
}
END_TEST

START_TEST(test_adapt_comp_is_scalar_run)
{
  strata_fn alone[NCOMP] = {peak, x0_peak, poly_fn};
  for (int m = 0; m < NMODES; m++)
    for (int k = 0; k < NCOMP; k++) {
      strata_problem pv = vproblem(three, NCOMP, k), pf = sproblem(alone[k]);
      strata_params p = params(modes[m], 23);
      rows rv = {0}, rf = {0};
      strata_result a, b;
      integrate(&pv, &p, collect, &rv, &a);
      integrate(&pf, &p, collect, &rf, &b);
      ck_assert_int_eq(rv.n, rf.n);
      for (int i = 0; i < rv.n; i++) {
        double I = row_get(&rv, i, k, STRATA_COMP_INTEGRAL);
        double s = row_get(&rv, i, k, STRATA_COMP_SIGMA);
        ck_assert_msg(fabs(I - rf.it[i].integral) <= 1e-12 * fabs(rf.it[i].integral) &&
                          fabs(s - rf.it[i].sigma) <= 1e-12 * rf.it[i].sigma,
                      "mode %s adapt %d iteration %d: %.17g +- %.17g, alone %.17g +- %.17g",
                      strata_mode_name(modes[m]), k, i + 1, I, s, rf.it[i].integral,
                      rf.it[i].sigma);
      }
    }
}
END_TEST

/* Positive semi-definite: Cholesky of C plus a rounding-sized diagonal. */
static int psd(const double *C, int n)
{
  double L[NCOMP * NCOMP] = {0}, big = 0.0;
  for (int i = 0; i < n; i++) big = fmax(big, C[i * n + i]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) {
      double s = C[i * n + j] + (i == j ? 1e-12 * big : 0.0);
      for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      if (i == j) {
        if (!(s >= 0.0)) return 0;
        L[i * n + i] = sqrt(s);
      } else {
        L[i * n + j] = L[j * n + j] > 0.0 ? s / L[j * n + j] : 0.0;
      }
    }
  return 1;
}

static void symmetric_psd(const double *C, int n, const char *what)
{
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      ck_assert_msg(same(C[a * n + b], C[b * n + a]) && isfinite(C[a * n + b]),
                    "%s: not symmetric at (%d,%d)", what, a, b);
  ck_assert_msg(psd(C, n), "%s: not positive semi-definite", what);
}

START_TEST(test_covariance_psd)
{
  for (int m = 0; m < NMODES; m++) {
    strata_problem pr = vproblem(three, NCOMP, -1);
    strata_params p = params(modes[m], 31);
    rows rv = {0};
    strata_result res;
    integrate(&pr, &p, collect, &rv, &res);
    symmetric_psd(res.comp_cov, NCOMP, "covariance of the averages");
    for (int c = 0; c < NCOMP; c++)
      ck_assert(fabs(res.comp_cov[c * NCOMP + c] - res.comp_sigma[c] * res.comp_sigma[c]) <=
                1e-14 * res.comp_cov[c * NCOMP + c]);
    for (int k = 0; k < rv.n; k++) {
      double C[NCOMP * NCOMP];
      for (int a = 0; a < NCOMP; a++)
        for (int b = 0; b < NCOMP; b++) C[a * NCOMP + b] = row_get(&rv, k, a, STRATA_COMP_COV + b);
      symmetric_psd(C, NCOMP, "an iteration's covariance");
      for (int a = 0; a < NCOMP; a++)
        ck_assert(fabs(sqrt(C[a * NCOMP + a]) - row_get(&rv, k, a, STRATA_COMP_SIGMA)) <=
                  1e-15 * row_get(&rv, k, a, STRATA_COMP_SIGMA));
    }
  }
}
END_TEST

START_TEST(test_twice_correlation_one)
{
  for (int m = 0; m < NMODES; m++) {
    strata_problem pr = vproblem(twice, 2, 0);
    strata_params p = params(modes[m], 41);
    strata_result res;
    integrate(&pr, &p, NULL, NULL, &res);
    double rho = res.comp_cov[1] / sqrt(res.comp_cov[0] * res.comp_cov[3]);
    ck_assert_msg(fabs(rho - 1.0) < 1e-9, "mode %s: correlation %.15g",
                  strata_mode_name(modes[m]), rho);
    ck_assert(fabs(res.comp_integral[1] - 2.0 * res.comp_integral[0]) <=
              1e-13 * res.comp_integral[1]);
    ck_assert(fabs(res.comp_sigma[1] - 2.0 * res.comp_sigma[0]) <= 1e-12 * res.comp_sigma[1]);
  }
}
END_TEST

/* The covariance each iteration reports against the scatter of the
 * iterations themselves: with the map frozen, the iterations are
 * independent draws of the same estimator, so their sample covariance
 * must agree with the mean reported one (Fisher's z for the correlation,
 * chi^2 bounds for the variances). */
START_TEST(test_covariance_matches_scatter)
{
  const strata_mode m3[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_PLAIN, STRATA_MODE_QMC};
  for (int m = 0; m < 3; m++) {
    strata_problem pr = vproblem(three, NCOMP, 0);
    strata_params p = params(m3[m], 51);
    p.neval = 4000;
    p.maxiter = 63;
    p.adapt_iters = 3;
    p.nrand = 8;
    rows *rv = calloc(1, sizeof *rv);
    strata_result res;
    integrate(&pr, &p, collect, rv, &res);
    const int k0 = 3, n = rv->n - k0;
    double mean[NCOMP] = {0}, emp[NCOMP * NCOMP] = {0}, rep[NCOMP * NCOMP] = {0};
    for (int k = k0; k < rv->n; k++)
      for (int a = 0; a < NCOMP; a++) mean[a] += row_get(rv, k, a, STRATA_COMP_INTEGRAL) / n;
    for (int k = k0; k < rv->n; k++)
      for (int a = 0; a < NCOMP; a++)
        for (int b = 0; b < NCOMP; b++) {
          emp[a * NCOMP + b] += (row_get(rv, k, a, STRATA_COMP_INTEGRAL) - mean[a]) *
                                (row_get(rv, k, b, STRATA_COMP_INTEGRAL) - mean[b]) / (n - 1);
          rep[a * NCOMP + b] += row_get(rv, k, a, STRATA_COMP_COV + b) / n;
        }
    for (int a = 0; a < NCOMP; a++) {
      double ratio = emp[a * NCOMP + a] / rep[a * NCOMP + a];
      /* n - 1 = 59 degrees of freedom: 4 standard deviations of s^2/sigma^2
       * (a randomized QMC variance is itself noisy: more room). */
      double tol = (m3[m] == STRATA_MODE_QMC ? 6.0 : 4.0) * sqrt(2.0 / (n - 1));
      ck_assert_msg(fabs(ratio - 1.0) < tol, "mode %s component %d: scatter %g, reported %g",
                    strata_mode_name(m3[m]), a, emp[a * NCOMP + a], rep[a * NCOMP + a]);
      for (int b = a + 1; b < NCOMP; b++) {
        double re = emp[a * NCOMP + b] / sqrt(emp[a * NCOMP + a] * emp[b * NCOMP + b]);
        double rr = rep[a * NCOMP + b] / sqrt(rep[a * NCOMP + a] * rep[b * NCOMP + b]);
        ck_assert_msg(fabs(atanh(re) - atanh(rr)) < 4.0 / sqrt(n - 3.0),
                      "mode %s components %d,%d: correlation %.3f in the scatter, %.3f "
                      "reported", strata_mode_name(m3[m]), a, b, re, rr);
      }
    }
    /* The peak and x0 times the peak are strongly correlated: the test
     * above compares something. */
    ck_assert(rep[1] / sqrt(rep[0] * rep[4]) > 0.5);
    free(rv);
  }
}
END_TEST

START_TEST(test_all_components_must_converge)
{
  strata_params p = params(STRATA_MODE_VEGASPLUS, 61);
  p.epsrel = 1e-2;
  p.maxiter = 15;
  strata_problem ps = sproblem(peak), pv = vproblem(with_zero, 2, 0);
  strata_result a, b;
  integrate(&ps, &p, NULL, NULL, &a);
  integrate(&pv, &p, NULL, NULL, &b);
  ck_assert_msg(a.converged, "the peak alone should converge");
  ck_assert_msg(!b.converged && b.iterations == p.maxiter,
                "converged with component 1 at %g +- %g", b.comp_integral[1], b.comp_sigma[1]);
  /* With an absolute tolerance that component 1 meets, it converges. */
  p.epsabs = 10.0 * b.comp_sigma[1] * sqrt((double)(p.maxiter - p.skip));
  integrate(&pv, &p, NULL, NULL, &b);
  ck_assert(b.converged && b.iterations < p.maxiter);
}
END_TEST

START_TEST(test_nonfinite_names_component)
{
  strata_problem pr = vproblem(bad_third, NCOMP, 0);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 3);
  strata_result res;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &res), STRATA_ENOTFINITE);
  const char *msg = strata_last_error();
  ck_assert_msg(strstr(msg, "NaN") && strstr(msg, "component 2 of 3") && !strchr(msg, '\n'),
                "message: %s", msg);
}
END_TEST

static void same_result(const strata_result *a, const strata_result *b, const char *what)
{
  ck_assert_int_eq(a->ncomp, b->ncomp);
  ck_assert_int_eq(a->neval, b->neval);
  ck_assert_int_eq(a->iterations, b->iterations);
  ck_assert_int_eq(a->converged, b->converged);
  for (int c = 0; c < a->ncomp; c++)
    ck_assert_msg(same(a->comp_integral[c], b->comp_integral[c]) &&
                      same(a->comp_sigma[c], b->comp_sigma[c]) &&
                      same(a->comp_chi2_dof[c], b->comp_chi2_dof[c]) &&
                      same(a->comp_q[c], b->comp_q[c]),
                  "%s: component %d: %.17g +- %.17g against %.17g +- %.17g", what, c,
                  a->comp_integral[c], a->comp_sigma[c], b->comp_integral[c],
                  b->comp_sigma[c]);
  ck_assert_msg(memcmp(a->comp_cov, b->comp_cov,
                       sizeof(double) * (size_t)(a->ncomp * a->ncomp)) == 0,
                "%s: covariances differ", what);
}

START_TEST(test_threads_same_bits)
{
  for (int m = 0; m < NMODES; m++)
    for (int adapt = -1; adapt <= 1; adapt += 2) {
      strata_problem pr = vproblem(three, NCOMP, adapt);
      strata_params p = params(modes[m], 71);
      p.neval = 50000;
      strata_result a, b;
      p.nthreads = 1;
      integrate(&pr, &p, NULL, NULL, &a);
      p.nthreads = 4;
      integrate(&pr, &p, NULL, NULL, &b);
      same_result(&a, &b, strata_mode_name(modes[m]));
    }
}
END_TEST

/* --- ranks: four threads of this process (testcomm.h) --- */
#define NRANK 4

static int close_to(double a, double b, double tol)
{
  return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) || a == b;
}

START_TEST(test_ranks)
{
  for (int m = 0; m < NMODES; m++) {
    strata_problem pr = vproblem(three, NCOMP, -1);
    strata_params p = params(modes[m], 81);
    p.nthreads = 1;
    strata_result one;
    integrate(&pr, &p, NULL, NULL, &one);
    static testcomm sh;
    testcomm_rank on_ranks[NRANK];
    testcomm_run(&sh, NRANK, &pr, &p, on_ranks);
    for (int r = 0; r < NRANK; r++) {
      ck_assert_msg(on_ranks[r].rc == STRATA_OK, "rank %d: %s", r, strata_last_error());
      /* Every rank holds the same numbers. */
      same_result(&on_ranks[r].res, &on_ranks[0].res, "rank against rank 0");
    }
    const strata_result *x = &on_ranks[0].res;
    ck_assert_int_eq(x->neval, one.neval);
    for (int c = 0; c < NCOMP; c++)
      ck_assert_msg(close_to(x->comp_integral[c], one.comp_integral[c], 1e-12) &&
                        close_to(x->comp_sigma[c], one.comp_sigma[c], 1e-12),
                    "mode %s component %d: %d ranks %.17g +- %.17g, 1 rank %.17g +- %.17g",
                    strata_mode_name(modes[m]), c, NRANK, x->comp_integral[c],
                    x->comp_sigma[c], one.comp_integral[c], one.comp_sigma[c]);
    for (int i = 0; i < NCOMP * NCOMP; i++)
      ck_assert(close_to(x->comp_cov[i], one.comp_cov[i], 1e-10));
  }
}
END_TEST

/* --- checkpoints and logs --- */
static char dir[256];

static void make_dir(void) { test_tmpdir(dir, sizeof dir, "ncomp"); }
static void remove_dir(void) { test_rmdir(dir); }

static void setup(fixture *f, const strata_problem *pr, strata_mode mode, int maxiter)
{
  strata_params p = params(mode, 99);
  p.maxiter = maxiter;
  fixture_open(f, pr, &p);
}

static void steps(fixture *f, int n, rows *out)
{
  for (int k = 0; k < n; k++) {
    strata_iteration it;
    ck_assert_msg(strata_run_step(f->r, &it) == STRATA_OK, "%s", strata_last_error());
    if (out) collect(&it, out);
  }
}

static int has_dataset(const char *path, const char *name)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert(f >= 0);
  htri_t e = H5Lexists(f, name, H5P_DEFAULT);
  H5Fclose(f);
  return e > 0;
}

static void resume_same(strata_mode mode, int cut)
{
  const int total = 9;
  strata_problem pr = vproblem(three, NCOMP, -1);
  fixture ref, a, b;
  rows *first = calloc(1, sizeof *first), *again = calloc(1, sizeof *again);
  setup(&ref, &pr, mode, total);
  steps(&ref, total, first);

  make_dir();
  char path[300];
  snprintf(path, sizeof path, "%s/run.h5", dir);
  setup(&a, &pr, mode, total);
  steps(&a, cut, NULL);
  write_ckpt(path, &a);
  teardown(&a);
  ck_assert(has_dataset(path, "history_comp"));

  strata_checkpoint *ck;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(ck->state.ncomp, NCOMP);
  setup(&b, &pr, mode, total);
  ck_assert_msg(strata_run_restore(b.r, &ck->state, collect, again) == STRATA_OK, "%s",
                strata_last_error());
  strata_checkpoint_free(ck);
  /* The replayed rows are the rows first reported, components included. */
  ck_assert_int_eq(again->n, cut);
  for (int k = 0; k < cut; k++)
    ck_assert_msg(memcmp(again->comp[k], first->comp[k], sizeof first->comp[k]) == 0,
                  "mode %s: replayed row %d differs", strata_mode_name(mode), k + 1);
  steps(&b, total - cut, NULL);
  ck_assert(strata_run_state_hash(b.r) == strata_run_state_hash(ref.r));

  strata_result x, y;
  strata_run_result(ref.r, &x);
  strata_run_result(b.r, &y);
  same_result(&x, &y, strata_mode_name(mode));
  teardown(&ref);
  teardown(&b);
  remove_dir();
  free(first);
  free(again);
}

START_TEST(test_checkpoint_resume)
{
  resume_same(STRATA_MODE_VEGASPLUS, 2);
  resume_same(STRATA_MODE_VEGASPLUS, 7);
  resume_same(STRATA_MODE_PLAIN, 4);
  resume_same(STRATA_MODE_QMC, 3);
}
END_TEST

START_TEST(test_checkpoint_ncomp_mismatch)
{
  make_dir();
  char vpath[300], spath[300];
  snprintf(vpath, sizeof vpath, "%s/vector.h5", dir);
  snprintf(spath, sizeof spath, "%s/scalar.h5", dir);
  strata_problem pv = vproblem(three, NCOMP, 0), ps = sproblem(peak);
  fixture v, s;
  setup(&v, &pv, STRATA_MODE_VEGASPLUS, 9);
  steps(&v, 3, NULL);
  write_ckpt(vpath, &v);
  setup(&s, &ps, STRATA_MODE_VEGASPLUS, 9);
  steps(&s, 3, NULL);
  write_ckpt(spath, &s);
  /* A scalar checkpoint keeps the layout it always had. */
  ck_assert(!has_dataset(spath, "history_comp") && has_dataset(spath, "history"));

  strata_checkpoint *ck;
  ck_assert(strata_checkpoint_read(vpath, &ck) == STRATA_OK);
  fixture t;
  setup(&t, &ps, STRATA_MODE_VEGASPLUS, 9);
  ck_assert(strata_checkpoint_check_ncomp(ck, vpath, t.r->ncomp) != STRATA_OK);
  const char *msg = strata_last_error();
  ck_assert_msg(strstr(msg, vpath) && strstr(msg, "3 components") && !strchr(msg, '\n'),
                "message: %s", msg);
  ck_assert_int_eq(t.r->ravg.n, 0);
  strata_checkpoint_free(ck);
  teardown(&t);

  ck_assert(strata_checkpoint_read(spath, &ck) == STRATA_OK);
  ck_assert_int_eq(ck->state.ncomp, 0);
  setup(&t, &pv, STRATA_MODE_VEGASPLUS, 9);
  ck_assert(strata_checkpoint_check_ncomp(ck, spath, t.r->ncomp) != STRATA_OK);
  msg = strata_last_error();
  ck_assert_msg(strstr(msg, spath) && strstr(msg, "1 component,") && !strchr(msg, '\n'),
                "message: %s", msg);
  strata_checkpoint_free(ck);
  teardown(&t);
  teardown(&v);
  teardown(&s);
  remove_dir();
}
END_TEST

static void read_doubles(const char *path, const char *name, double *out, size_t n, int *rank,
                         hsize_t *dims)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert(f >= 0);
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  ck_assert(d >= 0);
  hid_t s = H5Dget_space(d);
  *rank = H5Sget_simple_extent_dims(s, dims, NULL);
  ck_assert((size_t)H5Sget_simple_extent_npoints(s) == n);
  ck_assert(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
  H5Sclose(s);
  H5Dclose(d);
  H5Fclose(f);
}

START_TEST(test_log)
{
  make_dir();
  char path[300];
  snprintf(path, sizeof path, "%s/log.h5", dir);
  strata_problem pr = vproblem(three, NCOMP, 0);
  fixture f;
  setup(&f, &pr, STRATA_MODE_VEGASPLUS, 8);
  char def[STRATA_JOBDEF_MAX];
  ck_assert(strata_jobdef_text(&f.pr, &f.p, def, sizeof def) == STRATA_OK);
  strata_runlog_info li = {.job = "test", .definition = def, .integrand = "test",
                           .mode = "vegas+", .backend = "cpu", .host = "host",
                           .checkpoint = "", .dim = DIM, .ranks = 1, .threads = 2,
                           .exact = NAN, .naxes = DIM, .ninc = f.p.ninc};
  strata_runlog *l;
  ck_assert_msg(strata_runlog_create(path, &li, &l) == STRATA_OK, "%s", strata_last_error());
  rows *rv = calloc(1, sizeof *rv);
  /* Five iterations, then a resume that drops two of them and rebuilds
   * them from the replayed rows, as after a checkpoint of iteration 3. */
  for (int k = 0; k < 5; k++) {
    strata_iteration it;
    ck_assert(strata_run_step(f.r, &it) == STRATA_OK);
    collect(&it, rv);
    double t = 0.0;
    ck_assert_msg(strata_runlog_append(l, &it, 1.0, &t, 1, NULL) == STRATA_OK, "%s",
                  strata_last_error());
  }
  ck_assert(strata_runlog_close(l) == STRATA_OK);
  char notice[512];
  ck_assert_msg(strata_runlog_resume(path, &li, 0, rv->it, 3, &l, notice, sizeof notice) ==
                    STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(strata_runlog_rows(l), 3);
  for (int k = 5; k < 8; k++) {
    strata_iteration it;
    ck_assert(strata_run_step(f.r, &it) == STRATA_OK);
    collect(&it, rv);
  }
  for (int k = 3; k < 8; k++) {
    double t = 0.0;
    ck_assert(strata_runlog_append(l, &rv->it[k], 1.0, &t, 1, NULL) == STRATA_OK);
  }
  strata_result res;
  strata_run_result(f.r, &res);
  ck_assert(strata_runlog_finish(l, &res, NULL) == STRATA_OK);
  ck_assert(strata_runlog_close(l) == STRATA_OK);

  const size_t w = NCOMP * STRATA_COMP_ROW(NCOMP);
  double *got = malloc(sizeof(double) * 8 * w);
  int rank;
  hsize_t dims[3];
  read_doubles(path, "iterations_comp", got, 8 * w, &rank, dims);
  ck_assert(rank == 3 && dims[0] == 8 && dims[1] == NCOMP && dims[2] == STRATA_COMP_ROW(NCOMP));
  /* The rows as reported, with NaN in the average's columns of those left
   * out of the average (doc/file-formats.md). */
  const int row = STRATA_COMP_ROW(NCOMP);
  for (int k = 0; k < 8; k++) {
    double *want = rv->comp[k];
    for (int c = 0; !rv->it[k].kept && c < NCOMP; c++) {
      for (int j = STRATA_COMP_AVG; j <= STRATA_COMP_Q; j++) want[c * row + j] = NAN;
      for (int b = 0; b < NCOMP; b++) want[c * row + STRATA_COMP_COV + NCOMP + b] = NAN;
    }
    ck_assert_msg(memcmp(got + k * w, want, sizeof(double) * w) == 0, "log row %d differs",
                  k + 1);
  }
  double rc[NCOMP * 4], cov[NCOMP * NCOMP];
  read_doubles(path, "result_comp", rc, NCOMP * 4, &rank, dims);
  read_doubles(path, "result_cov", cov, NCOMP * NCOMP, &rank, dims);
  for (int c = 0; c < NCOMP; c++)
    ck_assert(same(rc[c * 4], res.comp_integral[c]) && same(rc[c * 4 + 1], res.comp_sigma[c]));
  ck_assert(memcmp(cov, res.comp_cov, sizeof cov) == 0);
  free(got);
  free(rv);
  teardown(&f);
  remove_dir();
}
END_TEST

START_TEST(test_report)
{
  strata_problem pr = vproblem(three, NCOMP, 0);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 5);
  rows *rv = calloc(1, sizeof *rv);
  strata_result res;
  integrate(&pr, &p, collect, rv, &res);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ck_assert(out != NULL);
  strata_report_iteration(out, &rv->it[rv->n - 1]);
  strata_report_summary(out, &res, NAN);
  strata_report_info info = {.integrand = "test", .dim = DIM, .mode = "vegas+", .backend = "cpu", .ranks = 1, .exact = NAN};
  strata_report_json(out, &res, &info);
  fclose(out);
  char want[64];
  snprintf(want, sizeof want, "%3d:0 ", rv->n);
  ck_assert_msg(strstr(buf, want) && strstr(buf, "   :1 ") && strstr(buf, "   :2 "), "%s", buf);
  ck_assert_msg(strstr(buf, "result[0]") && strstr(buf, "result[2]") &&
                    strstr(buf, "correlation =") && strstr(buf, "\"ncomp\":3") &&
                    strstr(buf, "\"covariance\":[["),
                "%s", buf);
  /* The correlation matrix's diagonal. */
  ck_assert(strstr(buf, " 1.0000"));
  free(buf);
  free(rv);
}
END_TEST

/* The caller's forms: three() with its parameters in the user data, one
 * point per call and in batches of 7 (which cross hypercubes). */
typedef struct {
  double params[1];
  long calls;
} forms_data;

static void three_u(const double *x, int dim, void *user, double *out)
{
  forms_data *d = user;
  __atomic_fetch_add(&d->calls, 1, __ATOMIC_RELAXED);
  three(x, dim, d->params, NULL, out);
}

static void three_b(int64_t n, const double *x, int dim, void *user, double *out)
{
  forms_data *d = user;
  __atomic_fetch_add(&d->calls, (long)n, __ATOMIC_RELAXED);
  for (int64_t i = 0; i < n; i++) three(x + i * dim, dim, d->params, NULL, out + i * NCOMP);
}

START_TEST(test_user_forms_same_bits)
{
  const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS, STRATA_MODE_PLAIN};
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    strata_params p;
    strata_params_default(&p);
    p.mode = modes[m];
    p.neval = 20000;
    p.maxiter = 6;
    p.adapt_iters = 4;
    p.skip = 1;
    p.epsrel = 0;
    p.nthreads = 2;
    strata_problem pr = {.fv = three, .dim = DIM, .nparams = 1, .params = {40.0},
                         .ncomp = NCOMP, .adapt_comp = -1, .name = "three"};
    for (int d = 0; d < DIM; d++) pr.upper[d] = 1.0;
    strata_result rv, ru, rb;
    ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &rv), STRATA_OK);
    forms_data du = {{40.0}, 0}, db = {{40.0}, 0};
    strata_problem pu = pr, pb = pr;
    pu.fv = pb.fv = NULL;
    pu.fu = three_u;
    pu.user = &du;
    pb.fb = three_b;
    pb.batch = 7;
    pb.user = &db;
    ck_assert_int_eq(strata_integrate(&pu, &p, NULL, NULL, &ru), STRATA_OK);
    ck_assert_int_eq(strata_integrate(&pb, &p, NULL, NULL, &rb), STRATA_OK);
    /* Every point reached the integrand with the caller's data. */
    ck_assert_int_eq(du.calls, rv.neval);
    ck_assert_int_eq(db.calls, rv.neval);
    const size_t cov = sizeof(double) * NCOMP * NCOMP;
    ck_assert_msg(!memcmp(rv.comp_integral, ru.comp_integral, sizeof rv.comp_integral) &&
                      !memcmp(rv.comp_sigma, ru.comp_sigma, sizeof rv.comp_sigma) &&
                      !memcmp(rv.comp_cov, ru.comp_cov, cov) && rv.chi2_dof == ru.chi2_dof,
                  "mode %s: fu differs from fv", strata_mode_name(p.mode));
    ck_assert_msg(!memcmp(rv.comp_integral, rb.comp_integral, sizeof rv.comp_integral) &&
                      !memcmp(rv.comp_sigma, rb.comp_sigma, sizeof rv.comp_sigma) &&
                      !memcmp(rv.comp_cov, rb.comp_cov, cov) && rv.chi2_dof == rb.chi2_dof,
                  "mode %s: fb differs from fv", strata_mode_name(p.mode));
  }
}
END_TEST

/* fu and fb together are refused naming both, before any point is taken. */
START_TEST(test_user_forms_one_only)
{
  strata_params p;
  strata_params_default(&p);
  p.neval = 20000;
  p.maxiter = 6;
  p.adapt_iters = 4;
  p.skip = 1;
  p.epsrel = 0;
  forms_data d = {{40.0}, 0};
  strata_problem pr = {.fu = three_u, .fb = three_b, .user = &d, .dim = DIM, .nparams = 1,
                       .params = {40.0}, .ncomp = NCOMP, .adapt_comp = -1, .name = "three"};
  for (int k = 0; k < DIM; k++) pr.upper[k] = 1.0;
  strata_result res;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &res), STRATA_EINVAL);
  const char *msg = strata_last_error();
  ck_assert_msg(strstr(msg, "fu") && strstr(msg, "fb"), "the error names one form: %s", msg);
  ck_assert_int_eq(d.calls, 0);
  pr.fb = NULL;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &res), STRATA_OK);
}
END_TEST

int main(void)
{
  strata_init();
  Suite *s = suite_create("ncomp");
  TCase *tc = tcase_create("ncomp");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_exact_values);
  tcase_add_test(tc, test_coverage);
  tcase_add_test(tc, test_fv_is_f);
  tcase_add_test(tc, test_adapt_comp_is_scalar_run);
  tcase_add_test(tc, test_covariance_psd);
  tcase_add_test(tc, test_twice_correlation_one);
  tcase_add_test(tc, test_covariance_matches_scatter);
  tcase_add_test(tc, test_all_components_must_converge);
  tcase_add_test(tc, test_nonfinite_names_component);
  tcase_add_test(tc, test_threads_same_bits);
  tcase_add_test(tc, test_ranks);
  tcase_add_test(tc, test_checkpoint_resume);
  tcase_add_test(tc, test_checkpoint_ncomp_mismatch);
  tcase_add_test(tc, test_log);
  tcase_add_test(tc, test_report);
  tcase_add_test(tc, test_user_forms_same_bits);
  tcase_add_test(tc, test_user_forms_one_only);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
