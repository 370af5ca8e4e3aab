/* The CUDA backend against the CPU backend: same job, same seed, the same
 * points, so the same results to rounding (relative 1e-12), in every mode,
 * through adapting and frozen iterations.  Without a GPU: SKIP (77). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend_cuda.h"
#include "run.h"
#include "testutil.h"

static int run_with(strata_backend *be, const strata_problem *pr, const strata_params *p,
                    strata_result *res)
{
  strata_comm *comm = strata_comm_serial();
  strata_run *r = NULL;
  int rc = strata_run_alloc(pr, p, be, comm, &r);
  if (rc == STRATA_OK) rc = strata_run_integrate(r, NULL, NULL, res);
  strata_run_free(r);
  strata_comm_free(comm);
  return rc;
}

/* Point set of the qmc iterations and whether the vegas modes use it. */
static strata_qmc_rule rule = STRATA_QMC_SOBOL;
static int qmc_map;

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(a), 1e-300); }

static void agree_p(const char *name, int dim, strata_mode mode, long neval, int maxiter,
                    double param0)
{
  strata_problem pr;
  test_problem(name, dim, &pr);
  if (!isnan(param0)) pr.params[0] = param0;
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.neval = neval;
  p.maxiter = maxiter;
  p.adapt_iters = maxiter / 2;
  p.skip = 1;
  p.epsrel = 0;
  p.seed = 77;
  p.qmc = rule;
  p.qmc_map = qmc_map;
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_result rc, rg;
  ck_assert_int_eq(run_with(cpu, &pr, &p, &rc), STRATA_OK);
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("%-18s d=%-2d %-7s%s%-7s cpu %.17g +- %.6g  gpu %.17g +- %.6g  rel %.1e %.1e\n", name, dim,
         strata_mode_name(mode), mode == STRATA_MODE_QMC || qmc_map ? " " : "",
         mode == STRATA_MODE_QMC || qmc_map ? strata_qmc_rule_name(rule) : "", rc.integral,
         rc.sigma, rg.integral, rg.sigma, rel(rc.integral, rg.integral), rel(rc.sigma, rg.sigma));
  ck_assert_msg(isfinite(rc.integral), "%s d=%d: no result to compare", name, dim);
  /* QMC's sigma is the spread of a few randomizations' means, which can be
   * many digits below the integral: it agrees to the rounding of the means,
   * 1e-12 of the integral. */
  const double sig_tol = mode == STRATA_MODE_QMC || qmc_map
                             ? 1e-12 * fmax(fabs(rc.integral), fabs(rc.sigma)) / fabs(rc.sigma)
                             : 1e-12;
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-12 && rel(rc.sigma, rg.sigma) <= sig_tol,
                "%s d=%d %s: cpu %.17g +- %.17g, gpu %.17g +- %.17g", name, dim,
                strata_mode_name(mode), rc.integral, rc.sigma, rg.integral, rg.sigma);
  ck_assert_int_eq(rc.neval, rg.neval);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}

static void agree(const char *name, int dim, strata_mode mode, long neval, int maxiter)
{
  agree_p(name, dim, mode, neval, maxiter, NAN);
}

START_TEST(test_agree_vegasplus)
{
  agree("f4", 6, STRATA_MODE_VEGASPLUS, 200000, 8);
  agree("f2", 8, STRATA_MODE_VEGASPLUS, 200000, 8);
  agree("f5", 5, STRATA_MODE_VEGASPLUS, 100000, 8);
  agree("f1", 3, STRATA_MODE_VEGASPLUS, 100000, 6);   /* generic kernel */
  agree("fA", 6, STRATA_MODE_VEGASPLUS, 100000, 6);
  agree("f3", 12, STRATA_MODE_VEGASPLUS, 100000, 6);  /* generic kernel */
}
END_TEST

START_TEST(test_agree_vegas)
{
  agree("f6", 6, STRATA_MODE_VEGAS, 200000, 8);
  agree("f4", 9, STRATA_MODE_VEGAS, 200000, 6);
  /* fB's own width 0.01 needs ~1e7 samples to see the peak at all. */
  agree_p("fB", 9, STRATA_MODE_VEGAS, 200000, 8, 0.1);
}
END_TEST

START_TEST(test_agree_vegas1d)
{
  agree("roos_arnold", 4, STRATA_MODE_VEGAS1D, 100000, 6);
  agree("morokoff_caflisch", 8, STRATA_MODE_VEGAS1D, 100000, 6);
}
END_TEST

START_TEST(test_agree_plain_qmc)
{
  agree("f1", 5, STRATA_MODE_PLAIN, 1000000, 3);
  agree("f3", 12, STRATA_MODE_PLAIN, 300000, 3);          /* generic kernel */
  agree("f1", 5, STRATA_MODE_QMC, 1 << 20, 3);
  agree("morokoff_caflisch", 8, STRATA_MODE_QMC, 1 << 20, 3);
  agree("f4", 7, STRATA_MODE_QMC, 1 << 18, 3);             /* generic kernel */
  rule = STRATA_QMC_LATTICE;
  agree("f1", 5, STRATA_MODE_QMC, 1 << 20, 3);
  agree("morokoff_caflisch", 8, STRATA_MODE_QMC, 1 << 20, 3);
  agree("f4", 7, STRATA_MODE_QMC, 1 << 18, 3);
  qmc_map = 1;
  agree("f4", 6, STRATA_MODE_VEGASPLUS, 200000, 8);
  rule = STRATA_QMC_SOBOL;
  agree("f2", 8, STRATA_MODE_VEGAS, 200000, 8);
  qmc_map = 0;
}
END_TEST

START_TEST(test_suite_on_gpu)
{
  /* Every built-in at its listed dimensions, defaults, on the GPU: 4 sigma. */
  strata_backend *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  for (size_t i = 0; strata_builtin_at(i); i++) {
    const strata_builtin *b = strata_builtin_at(i);
    for (int k = 0; k < 8 && b->list_dims[k]; k++) {
      strata_problem pr;
      test_problem(b->name, b->list_dims[k], &pr);
      strata_params p;
      strata_params_default(&p);
      strata_result r;
      ck_assert_msg(run_with(gpu, &pr, &p, &r) == STRATA_OK, "%s", strata_last_error());
      double exact = b->exact(pr.dim, b->params), pull = (r.integral - exact) / r.sigma;
      printf("gpu %-18s d=%-2d %.10g +- %.3g pull %+.2f %s\n", b->name, pr.dim, r.integral,
             r.sigma, pull, r.converged ? "converged" : "NOT converged");
      ck_assert_msg(fabs(pull) <= 4.0, "%s d=%d pull %g", b->name, pr.dim, pull);
    }
  }
  strata_backend_free(gpu);
}
END_TEST

START_TEST(test_nonfinite_on_gpu)
{
  strata_problem pr;
  test_problem("morokoff_caflisch", 2, &pr);
  pr.lower[0] = pr.lower[1] = -1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  strata_backend *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_result r;
  ck_assert_int_eq(run_with(gpu, &pr, &p, &r), STRATA_ENOTFINITE);
  ck_assert_msg(strstr(strata_last_error(), "returned NaN at x = (") != NULL, "%s",
                strata_last_error());
  strata_backend_free(gpu);
}
END_TEST

START_TEST(test_bad_device)
{
  ck_assert(strata_backend_cuda_new(1000) == NULL);
  ck_assert(strstr(strata_last_error(), "device 1000 does not exist") != NULL);
}
END_TEST

int main(void)
{
  if (strata_cuda_device_count() == 0) {
    printf("SKIP: no CUDA device visible (CUDA_VISIBLE_DEVICES=%s); the GPU tests run on a "
           "machine with a GPU\n",
           getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return 77;
  }
  Suite *s = suite_create("cuda");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_agree_vegasplus);
  tcase_add_test(tc, test_agree_vegas);
  tcase_add_test(tc, test_agree_vegas1d);
  tcase_add_test(tc, test_agree_plain_qmc);
  tcase_add_test(tc, test_suite_on_gpu);
  tcase_add_test(tc, test_nonfinite_on_gpu);
  tcase_add_test(tc, test_bad_device);
  suite_add_tcase(s, tc);
  /* No fork: a CUDA context does not survive fork(), and main() has already
   * asked the driver for its devices. */
  return test_run_suite_fork(s, 0);
}
