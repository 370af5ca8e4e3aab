/* Every built-in integrand, at every dimension `strata list` shows, with the
 * default settings: within 4 sigma of its exact value.  And the peaked ones
 * the issue names reach epsrel 1e-3 within 1e8 evaluations. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

static strata_result integrate(const char *name, int dim, const strata_params *p)
{
  strata_problem pr;
  test_problem(name, dim, &pr);
  strata_result res;
  ck_assert_msg(strata_integrate(&pr, p, NULL, NULL, &res) == STRATA_OK, "%s d=%d: %s", name,
                dim, strata_last_error());
  return res;
}

START_TEST(test_within_4_sigma)
{
  const strata_builtin *b = strata_builtin_at((size_t)_i);
  strata_params p;
  strata_params_default(&p);
  for (int k = 0; k < 8 && b->list_dims[k]; k++) {
    int dim = b->list_dims[k];
    double exact = b->exact(dim, b->params);
    strata_result r = integrate(b->name, dim, &p);
    double pull = (r.integral - exact) / r.sigma;
    printf("%-18s d=%-2d %.10g +- %.3g  exact %.10g  pull %+.2f  chi2/dof %.2f  %s  %lld evals\n",
           b->name, dim, r.integral, r.sigma, exact, pull, r.chi2_dof,
           r.converged ? "converged" : "NOT converged", (long long)r.neval);
    ck_assert_msg(r.sigma > 0 && fabs(pull) <= 4.0, "%s d=%d: %.17g +- %.3g, exact %.17g",
                  b->name, dim, r.integral, r.sigma, exact);
  }
}
END_TEST

static void reaches(const char *name, int dim)
{
  strata_params p;
  strata_params_default(&p);
  p.epsrel = 1e-3;
  p.maxeval = 100000000;
  p.maxiter = 100;
  strata_result r = integrate(name, dim, &p);
  const strata_builtin *b = strata_builtin_find(name);
  double exact = b->exact(dim, b->params);
  printf("%s d=%d: epsrel 1e-3 %s after %lld evaluations (%.3g relative, true %.3g)\n", name,
         dim, r.converged ? "reached" : "NOT reached", (long long)r.neval,
         r.sigma / fabs(r.integral), fabs(r.integral - exact) / fabs(exact));
  ck_assert_msg(r.converged, "%s d=%d did not converge", name, dim);
  ck_assert(r.sigma <= 1e-3 * fabs(r.integral));
  ck_assert(r.neval <= 100000000);
  ck_assert_msg(fabs(r.integral - exact) <= 4 * r.sigma, "%s d=%d: off by more than 4 sigma",
                name, dim);
}

START_TEST(test_epsrel_f4) { reaches("f4", 5); reaches("f4", 6); reaches("f4", 8); }
END_TEST
START_TEST(test_epsrel_f5) { reaches("f5", 5); reaches("f5", 6); reaches("f5", 8); }
END_TEST
START_TEST(test_epsrel_f2) { reaches("f2", 5); reaches("f2", 6); reaches("f2", 8); }
END_TEST

int main(void)
{
  size_t n = 0;
  while (strata_builtin_at(n)) n++;
  Suite *s = suite_create("accuracy");
  TCase *tc = tcase_create("suite");
  tcase_set_timeout(tc, 900);
  tcase_add_loop_test(tc, test_within_4_sigma, 0, (int)n);
  tcase_add_test(tc, test_epsrel_f4);
  tcase_add_test(tc, test_epsrel_f5);
  tcase_add_test(tc, test_epsrel_f2);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
