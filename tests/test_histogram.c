/* Vector integrands of many components (beyond STRATA_MAX_COMP): a
 * histogram of 1000 bins.  Its bins add up to the integrand histogrammed,
 * so each iteration's sum of bins and the sum of its covariance matrix are
 * a scalar run's estimate and variance; its bins' errors are honest over
 * seeds; its covariance is symmetric with correlations in [-1, 1]; results
 * do not depend on threads; what cannot take so many components says so. */
#include <check.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"
#include "testutil.h"

#define DIM 4
#define NB 1000

static const double A = 16.0;

static double peak(const double *x, int dim, const double *params)
{
  double s = 0.0;
  for (int d = 0; d < dim; d++) s += (x[d] - 0.5) * (x[d] - 0.5);
  return exp(-params[0] * s);
}

/* The peak, histogrammed in x_0: one nonzero bin a sample. */
static void histogram(const double *x, int dim, const double *params, const strata_table *t,
                      double *out)
{
  (void)t;
  for (int b = 0; b < NB; b++) out[b] = 0.0;
  int k = (int)(x[0] * NB);
  out[k < NB ? k : NB - 1] = peak(x, dim, params);
}

/* Bin b's exact value: the peak's integral over x_0 in [b, b + 1) / NB. */
static double exact_bin(int b)
{
  const double r = sqrt(A), g = sqrt(M_PI / A) * erf(r / 2.0);
  return pow(g, DIM - 1) * sqrt(M_PI / A) / 2.0 *
         (erf(r * ((b + 1.0) / NB - 0.5)) - erf(r * ((double)b / NB - 0.5)));
}

static strata_problem problem(int ncomp)
{
  strata_problem pr = {.dim = DIM, .nparams = 1, .name = "histogram", .ncomp = ncomp,
                       .adapt_comp = -1};
  if (ncomp > 1) pr.fv = histogram;
  else pr.f = peak;
  pr.params[0] = A;
  for (int d = 0; d < DIM; d++) pr.upper[d] = 1.0;
  return pr;
}

static strata_params params(strata_mode mode, uint64_t seed, int64_t neval)
{
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.neval = neval;
  p.maxiter = 8;
  p.adapt_iters = 4;
  p.skip = 2;
  p.epsrel = 0;
  p.seed = seed;
  p.nthreads = 2;
  return p;
}

/* Per iteration: the sum of the estimates and of the covariance matrix
 * (vector), or the estimate and its variance (scalar). */
typedef struct {
  int n;
  double I[16], var[16];
} sums;

static void collect(const strata_iteration *it, void *ctx)
{
  sums *s = ctx;
  ck_assert(s->n < 16);
  double I = 0.0, var = 0.0;
  if (it->ncomp == 1) {
    I = it->integral;
    var = it->sigma * it->sigma;
  }
  for (int a = 0; a < it->ncomp && it->ncomp > 1; a++) {
    const double *row = it->comp + (size_t)a * STRATA_COMP_ROW(it->ncomp);
    I += row[STRATA_COMP_INTEGRAL];
    for (int b = 0; b < it->ncomp; b++) var += row[STRATA_COMP_COV + b];
  }
  s->I[s->n] = I;
  s->var[s->n] = var;
  s->n++;
}

/* Every component of a run, as strata_integrator_components gives them. */
typedef struct {
  double I[NB], sigma[NB], chi2[NB], q[NB];
  double cov[NB * NB];
  strata_result res;
} all_comps;

static void run(const strata_problem *pr, const strata_params *p, strata_iteration_cb cb,
                void *ctx, all_comps *out)
{
  strata_integrator *s = NULL;
  ck_assert_msg(strata_integrator_alloc(pr, p, STRATA_BACKEND_CPU, NULL, &s) == STRATA_OK, "%s",
                strata_last_error());
  ck_assert_msg(strata_integrator_integrate(s, cb, ctx, &out->res) == STRATA_OK, "%s",
                strata_last_error());
  ck_assert(strata_integrator_components(s, out->I, out->sigma, out->chi2, out->q, out->cov) ==
            STRATA_OK);
  strata_integrator_free(s);
}

static all_comps *comps_new(void)
{
  all_comps *c = malloc(sizeof *c);
  ck_assert(c != NULL);
  return c;
}

/* The bins share the points of the scalar run of the peak (adapt = sum
 * follows the peak itself), so each iteration's bins add up to its
 * estimate, and their covariance matrix to its variance: the sampled
 * products of every hypercube and the products of its sums both enter. */
START_TEST(test_sum_is_scalar_run)
{
  const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS, STRATA_MODE_VEGAS1D};
  all_comps *c = comps_new(), *one = comps_new();
  for (int m = 0; m < 3; m++) {
    strata_problem pv = problem(NB), ps = problem(1);
    strata_params p = params(modes[m], 7, 20000);
    sums sv = {0}, ss = {0};
    run(&pv, &p, collect, &sv, c);
    run(&ps, &p, collect, &ss, one);
    ck_assert_int_eq(sv.n, ss.n);
    for (int k = 0; k < sv.n; k++)
      ck_assert_msg(fabs(sv.I[k] - ss.I[k]) <= 1e-11 * fabs(ss.I[k]) &&
                        fabs(sv.var[k] - ss.var[k]) <= 1e-8 * ss.var[k],
                    "%s iteration %d: bins add to %.17g, variance %.17g; alone %.17g, %.17g",
                    strata_mode_name(modes[m]), k + 1, sv.I[k], sv.var[k], ss.I[k], ss.var[k]);
  }
  free(c);
  free(one);
}
END_TEST

/* The averages' covariance: symmetric, positive variances, correlations
 * within [-1, 1]; the result holds the first STRATA_MAX_COMP components
 * with their own block of it. */
START_TEST(test_covariance_sensible)
{
  all_comps *c = comps_new();
  strata_problem pr = problem(NB);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 3, 20000);
  run(&pr, &p, NULL, NULL, c);
  for (int a = 0; a < NB; a++) {
    ck_assert_msg(c->sigma[a] > 0.0 && c->cov[a * NB + a] == c->sigma[a] * c->sigma[a],
                  "bin %d: sigma %g, variance %g", a, c->sigma[a], c->cov[a * NB + a]);
    for (int b = 0; b < a; b++) {
      const double r = c->cov[a * NB + b] / (c->sigma[a] * c->sigma[b]);
      ck_assert_msg(c->cov[a * NB + b] == c->cov[b * NB + a] && fabs(r) <= 1.0 + 1e-9,
                    "bins %d, %d: covariance %g, %g, correlation %g", a, b, c->cov[a * NB + b],
                    c->cov[b * NB + a], r);
    }
  }
  ck_assert_int_eq(c->res.ncomp, NB);
  for (int a = 0; a < STRATA_MAX_COMP; a++) {
    ck_assert(c->res.comp_integral[a] == c->I[a] && c->res.comp_sigma[a] == c->sigma[a]);
    for (int b = 0; b < STRATA_MAX_COMP; b++)
      ck_assert(c->res.comp_cov[a * STRATA_MAX_COMP + b] == c->cov[a * NB + b]);
  }
  free(c);
}
END_TEST

/* Over seeds, about 68.3% of the bins lie within one sigma of their exact
 * value, and the pulls spread by 1, within 10%. */
START_TEST(test_bins_coverage)
{
  enum { NSEED = 8 };
  all_comps *c = comps_new();
  double in1 = 0.0, ss = 0.0;
  int n = 0;
  for (int seed = 1; seed <= NSEED; seed++) {
    strata_problem pr = problem(NB);
    strata_params p = params(STRATA_MODE_VEGASPLUS, (uint64_t)seed, 20000);
    run(&pr, &p, NULL, NULL, c);
    for (int b = 0; b < NB; b++) {
      const double pull = (c->I[b] - exact_bin(b)) / c->sigma[b];
      in1 += fabs(pull) < 1.0;
      ss += pull * pull;
      n++;
    }
  }
  in1 /= n;
  const double spread = sqrt(ss / n);
  ck_assert_msg(in1 > 0.683 * 0.9 && in1 < 0.683 * 1.1 && spread > 0.9 && spread < 1.1,
                "%d bins over %d seeds: %.4f within 1 sigma (0.683), pulls spread by %.4f",
                n, NSEED, in1, spread);
  free(c);
}
END_TEST

/* The sum of the bins, with the error from the whole covariance, is as far
 * from its exact value as that error says, over seeds, also where every
 * iteration adapts: the bins' averages do not lean.  (Each bin weighed by
 * its own errors, or its neighbours', leaned by a share of its error, as
 * low counts make an error rise and fall with its estimate: the sum of a
 * thousand bins read 7 sigma high, and here its covariance lost its
 * meaning, a variance below 0.) */
START_TEST(test_sum_of_bins)
{
  enum { NSEED = 6 };
  all_comps *c = comps_new();
  double total = 0.0, mean = 0.0, ms = 0.0;
  for (int b = 0; b < NB; b++) total += exact_bin(b);
  for (int seed = 1; seed <= NSEED; seed++) {
    strata_problem pr = problem(NB);
    strata_params p = params(STRATA_MODE_VEGASPLUS, (uint64_t)seed, 100000);
    p.adapt_iters = p.maxiter;
    run(&pr, &p, NULL, NULL, c);
    double sum = 0.0, var = 0.0;
    for (int a = 0; a < NB; a++) {
      sum += c->I[a];
      for (int b = 0; b < NB; b++) var += c->cov[a * NB + b];
    }
    const double pull = (sum - total) / sqrt(var);
    mean += pull / NSEED;
    ms += pull * pull / NSEED;
  }
  /* The mean of NSEED pulls spreads by 1/sqrt(NSEED) = 0.41. */
  ck_assert_msg(fabs(mean) < 1.6 && sqrt(ms) < 2.0,
                "sum of the bins over %d seeds: pulls average %.2f (0), rms %.2f (1)", NSEED,
                mean, sqrt(ms));
  free(c);
}
END_TEST

/* A table of doubles from an HDF5 file: its rank and dims, the values
 * into out (n of them). */
static int read_table(const char *path, const char *name, double *out, size_t n, hsize_t *dims)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert(f >= 0);
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp = H5Dget_space(d);
  const int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
  ck_assert((size_t)H5Sget_simple_extent_npoints(sp) <= n);
  ck_assert(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return rank;
}

/* The log keeps each bin's statistics per iteration and every bin's result
 * with the whole covariance; a run stopped at iteration 4 and resumed from
 * its checkpoint ends with the uninterrupted run's bits. */
START_TEST(test_log_and_resume)
{
  char dir[300], log[400], ck[400];
  test_tmpdir(dir, sizeof dir, "histogram");
  snprintf(log, sizeof log, "%s/run.log.h5", dir);
  snprintf(ck, sizeof ck, "%s/run.ckpt.h5", dir);
  strata_problem pr = problem(NB);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 9, 20000);
  all_comps *whole = comps_new(), *resumed = comps_new();
  run(&pr, &p, NULL, NULL, whole);
  for (int half = 0; half < 2; half++) {
    strata_params ph = p;
    if (half == 0) ph.maxiter = 4;
    strata_settings st;
    strata_settings_init(&st);
    st.log = log;
    st.checkpoint = ck;
    st.resume = half ? STRATA_RESUME_YES : STRATA_RESUME_NO;
    st.new_stop_keys = 1;
    strata_integrator *s = NULL;
    ck_assert_msg(strata_integrator_open(&pr, &ph, STRATA_BACKEND_CPU, NULL, &st, &s) ==
                      STRATA_OK, "%s", strata_last_error());
    ck_assert_msg(strata_integrator_run(s, NULL, NULL, &resumed->res) == STRATA_OK, "%s",
                  strata_last_error());
    ck_assert(strata_integrator_components(s, resumed->I, resumed->sigma, resumed->chi2,
                                           resumed->q, resumed->cov) == STRATA_OK);
    strata_integrator_free(s);
  }
  ck_assert(memcmp(whole->I, resumed->I, sizeof whole->I) == 0 &&
            memcmp(whole->cov, resumed->cov, sizeof whole->cov) == 0);
  hsize_t dims[3];
  double *buf = malloc(sizeof(double) * NB * NB);
  ck_assert(buf != NULL);
  ck_assert_int_eq(read_table(log, "iterations_comp", buf, (size_t)NB * NB, dims), 3);
  ck_assert(dims[0] == (hsize_t)p.maxiter && dims[1] == NB && dims[2] == STRATA_COMP_COV);
  ck_assert_int_eq(read_table(log, "result_cov", buf, (size_t)NB * NB, dims), 2);
  ck_assert(dims[0] == NB && dims[1] == NB && memcmp(buf, whole->cov, sizeof whole->cov) == 0);
  free(buf);
  free(whole);
  free(resumed);
  test_rmdir(dir);
}
END_TEST

/* The same bits on 1 and 2 threads. */
START_TEST(test_threads_same_bits)
{
  all_comps *a = comps_new(), *b = comps_new();
  strata_problem pr = problem(NB);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 5, 40000);
  p.nthreads = 1;
  run(&pr, &p, NULL, NULL, a);
  p.nthreads = 2;
  run(&pr, &p, NULL, NULL, b);
  ck_assert(memcmp(a->I, b->I, sizeof a->I) == 0 && memcmp(a->cov, b->cov, sizeof a->cov) == 0);
  free(a);
  free(b);
}
END_TEST

static void refused(const strata_problem *pr, const strata_params *p, strata_backend_kind kind,
                    const char *want)
{
  strata_integrator *s = NULL;
  ck_assert(strata_integrator_alloc(pr, p, kind, NULL, &s) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), want) != NULL, "message: %s, wanted %s",
                strata_last_error(), want);
  ck_assert(s == NULL);
}

/* Beyond STRATA_MAX_COMP: modes plain and qmc, qmc_map and the GPU
 * refuse, naming the limit; beyond STRATA_MAX_NCOMP everything does. */
START_TEST(test_limits)
{
  strata_problem pr = problem(NB);
  strata_params p = params(STRATA_MODE_PLAIN, 1, 20000);
  refused(&pr, &p, STRATA_BACKEND_CPU, "ncomp = 1000: mode plain takes at most 8 components");
  p.mode = STRATA_MODE_QMC;
  refused(&pr, &p, STRATA_BACKEND_CPU, "ncomp = 1000: mode qmc takes at most 8");
  p = params(STRATA_MODE_VEGAS, 1, 20000);
  p.qmc_map = 1;
  refused(&pr, &p, STRATA_BACKEND_CPU, "mode vegas with qmc_map takes at most 8");
  p.qmc_map = 0;
  refused(&pr, &p, STRATA_BACKEND_CUDA, "backend cuda: takes ncomp up to 8, not 1000");
  pr.ncomp = STRATA_MAX_NCOMP + 1;
  refused(&pr, &p, STRATA_BACKEND_CPU, "ncomp = 1025: must be in 1..1024");
}
END_TEST

Suite *histogram_suite(void)
{
  Suite *s = suite_create("histogram");
  TCase *tc = tcase_create("histogram");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_sum_is_scalar_run);
  tcase_add_test(tc, test_covariance_sensible);
  tcase_add_test(tc, test_bins_coverage);
  tcase_add_test(tc, test_sum_of_bins);
  tcase_add_test(tc, test_threads_same_bits);
  tcase_add_test(tc, test_log_and_resume);
  tcase_add_test(tc, test_limits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(histogram_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
