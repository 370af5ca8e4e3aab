/* Same job, same seed: the same bits for any number of CPU threads, in every
 * mode, through adapting and frozen iterations, with pseudo-random and QMC
 * points. */
#include <string.h>

#include "testutil.h"

/* The point set of the qmc iterations, and whether the vegas modes use it. */
static strata_qmc_rule rule = STRATA_QMC_SOBOL;
static int qmc_map;

static void run(const char *name, int dim, strata_mode mode, int threads, strata_result *res)
{
  strata_problem pr;
  test_problem(name, dim, &pr);
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.neval = 50000;
  p.maxiter = 8;
  p.adapt_iters = 5;
  p.skip = 2;
  p.epsrel = 0;
  p.nthreads = threads;
  p.seed = 12345;
  p.qmc = rule;
  p.qmc_map = qmc_map;
  ck_assert_msg(strata_integrate(&pr, &p, NULL, NULL, res) == STRATA_OK, "%s",
                strata_last_error());
}

static void same_bits(const char *name, int dim, strata_mode mode)
{
  strata_result ref, r;
  run(name, dim, mode, 1, &ref);
  const int threads[] = {2, 3, 4, 7};
  for (size_t i = 0; i < sizeof threads / sizeof *threads; i++) {
    run(name, dim, mode, threads[i], &r);
    ck_assert_msg(memcmp(&ref.integral, &r.integral, sizeof(double)) == 0 &&
                      memcmp(&ref.sigma, &r.sigma, sizeof(double)) == 0 &&
                      memcmp(&ref.chi2_dof, &r.chi2_dof, sizeof(double)) == 0,
                  "%s d=%d mode %s: 1 thread %.17g +- %.17g, %d threads %.17g +- %.17g", name,
                  dim, strata_mode_name(mode), ref.integral, ref.sigma, threads[i],
                  r.integral, r.sigma);
    ck_assert_int_eq(ref.neval, r.neval);
  }
}

START_TEST(test_vegasplus) { same_bits("f4", 5, STRATA_MODE_VEGASPLUS); same_bits("f3", 3, STRATA_MODE_VEGASPLUS); }
END_TEST
START_TEST(test_vegas) { same_bits("f2", 6, STRATA_MODE_VEGAS); }
END_TEST
START_TEST(test_vegas1d) { same_bits("f5", 5, STRATA_MODE_VEGAS1D); }
END_TEST

START_TEST(test_plain) { same_bits("f1", 5, STRATA_MODE_PLAIN); }
END_TEST
START_TEST(test_qmc)
{
  rule = STRATA_QMC_SOBOL;
  same_bits("f1", 5, STRATA_MODE_QMC);
  rule = STRATA_QMC_LATTICE;
  same_bits("morokoff_caflisch", 8, STRATA_MODE_QMC);
  rule = STRATA_QMC_SOBOL;
}
END_TEST
START_TEST(test_qmc_map)
{
  qmc_map = 1;
  same_bits("f4", 5, STRATA_MODE_VEGASPLUS);
  rule = STRATA_QMC_LATTICE;
  same_bits("f3", 3, STRATA_MODE_VEGAS);
  rule = STRATA_QMC_SOBOL;
  qmc_map = 0;
}
END_TEST

START_TEST(test_seed_matters)
{
  /* Guards the test above against a backend that ignores its inputs. */
  strata_problem pr;
  test_problem("f4", 5, &pr);
  strata_params p;
  strata_params_default(&p);
  p.neval = 20000;
  p.maxiter = 7;
  p.epsrel = 0;
  strata_result a, b;
  p.seed = 1;
  ck_assert(strata_integrate(&pr, &p, NULL, NULL, &a) == STRATA_OK);
  p.seed = 2;
  ck_assert(strata_integrate(&pr, &p, NULL, NULL, &b) == STRATA_OK);
  ck_assert(a.integral != b.integral);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("bits");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_vegasplus);
  tcase_add_test(tc, test_vegas);
  tcase_add_test(tc, test_vegas1d);
  tcase_add_test(tc, test_plain);
  tcase_add_test(tc, test_qmc);
  tcase_add_test(tc, test_qmc_map);
  tcase_add_test(tc, test_seed_matters);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
