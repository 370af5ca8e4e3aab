/* The map adapts past adapt_iters while it still improves (src/average.h,
 * strata_ravg_adapt_more): the rule on histories made up to sit on either
 * side of it, and in runs: a product of sharp Lorentzians, whose error per
 * iteration still falls fast at iteration 20, adapts on, and a run resumed
 * past the extension is the uninterrupted run bit for bit. */
#include <check.h>
#include <math.h>

#include "average.h"
#include "testrun.h"
#include "testutil.h"

/* A scalar history of n iterations of 1e4 samples whose error falls by
 * the factor fall per iteration, adapting the first nadapt. */
static void history(strata_ravg *ra, int ncomp, int maxiter, int nadapt, int n, double fall)
{
  ck_assert(strata_ravg_init(ra, ncomp, maxiter, nadapt, 0, 5) == STRATA_OK);
  for (int k = 0; k < n; k++)
    ra->hist[k] = (strata_itn_record){.integral = 1.0, .sigma = pow(fall, k), .neval = 10000};
  ra->n = n;
}

START_TEST(test_rule)
{
  strata_ravg ra;
  /* 0.9 an iteration: three iterations 0.73 of the three before, below 0.85. */
  history(&ra, 1, 30, 20, 20, 0.9);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 1);
  ck_assert_int_eq(ra.nadapt, 21);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0); /* iteration 21 is not in yet */
  strata_ravg_free(&ra);
  /* 0.96 an iteration: 0.88 of the three before, above 0.85: frozen. */
  history(&ra, 1, 30, 20, 20, 0.96);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0);
  ck_assert_int_eq(ra.nadapt, 20);
  strata_ravg_free(&ra);
  /* Fewer adapting iterations than STRATA_ADAPT_MORE_AFTER asked for: kept. */
  history(&ra, 1, 30, STRATA_ADAPT_MORE_AFTER - 1, STRATA_ADAPT_MORE_AFTER - 1, 0.5);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0);
  strata_ravg_free(&ra);
  /* The last iteration, a vector integrand, an error not measured: kept. */
  history(&ra, 1, 20, 20, 20, 0.5);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0);
  strata_ravg_free(&ra);
  history(&ra, 2, 30, 20, 20, 0.5);
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0);
  strata_ravg_free(&ra);
  history(&ra, 1, 30, 20, 20, 0.5);
  ra.hist[19].sigma = 0.0;
  ck_assert_int_eq(strata_ravg_adapt_more(&ra), 0);
  strata_ravg_free(&ra);
}
END_TEST

/* Falling fast to iteration 23, flat after: the iterations one at a time
 * and the replay of the whole history adapt alike, through iteration 27
 * (the windows of iterations 25 to 27 and the three before still hold
 * some of the fall). */
START_TEST(test_replay)
{
  strata_ravg ra;
  history(&ra, 1, 40, 20, 40, 0.7);
  for (int k = 23; k < 40; k++) ra.hist[k].sigma = ra.hist[22].sigma;
  for (ra.n = 1; ra.n <= 30; ra.n++) strata_ravg_adapt_more(&ra);
  ra.n = 30;
  const int stepwise = ra.nadapt;
  strata_ravg_adapt_replay(&ra, 20);
  ck_assert_int_eq(ra.nadapt, stepwise);
  ck_assert_int_eq(ra.nadapt, 27);
  strata_ravg_free(&ra);
}
END_TEST

/* The long-run benchmark's product of Lorentzians (bench/long_runs.py),
 * unnormalised: half-width 0.02 at 0.5 + 0.03 k. */
static double lorentz6(const double *x, int dim, const double *params)
{
  (void)params;
  double f = 1.0;
  for (int i = 0; i < dim; i++) {
    const double d = x[i] - (0.5 + 0.03 * i);
    f *= 0.02 / (d * d + 4e-4);
  }
  return f;
}

static void open_lorentz(fixture *f, int maxiter)
{
  fixture_open_long(f, lorentz6, 6, maxiter, 3);
}

/* Iteration 21 still adapts, and a run resumed from iteration 22 goes on
 * as the uninterrupted one: the same adapting iterations, the same bits. */
START_TEST(test_run_adapts_on_and_resumes)
{
  enum { N = 26, AT = 22 };
  fixture a, b;
  open_lorentz(&a, N);
  open_lorentz(&b, N);
  strata_iteration it, jt;
  for (int k = 1; k <= AT; k++)
    ck_assert_msg(strata_run_step(a.r, &it) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(a.r->ravg.nadapt > 21, "the map froze after iteration %d", a.r->ravg.nadapt);
  strata_run_state st;
  strata_run_state_get(a.r, &st);
  ck_assert_msg(strata_run_restore(b.r, &st, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  ck_assert_int_eq(b.r->ravg.nadapt, a.r->ravg.nadapt);
  /* A state saved by a strata without the rule (a checkpoint before format
   * version 5) resumes as that strata ran it: frozen after adapt_iters. */
  fixture c;
  open_lorentz(&c, N);
  st.adapt_more = 0;
  ck_assert_msg(strata_run_restore(c.r, &st, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  ck_assert_int_eq(c.r->ravg.nadapt, 20);
  ck_assert(strata_run_step(c.r, &jt) == STRATA_OK);
  ck_assert_int_eq(jt.adapting, 0);
  teardown(&c);
  for (int k = AT + 1; k <= N; k++) {
    ck_assert(strata_run_step(a.r, &it) == STRATA_OK);
    ck_assert(strata_run_step(b.r, &jt) == STRATA_OK);
    ck_assert_msg(it.adapting == jt.adapting && test_same_bits(it.integral, jt.integral) &&
                      test_same_bits(it.sigma, jt.sigma) && test_same_bits(it.avg, jt.avg),
                  "iteration %d: %.17g +- %.17g (adapting %d) uninterrupted, %.17g +- %.17g "
                  "(adapting %d) resumed",
                  k, it.integral, it.sigma, it.adapting, jt.integral, jt.sigma, jt.adapting);
  }
  teardown(&a);
  teardown(&b);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("adaptmore");
  TCase *tc = tcase_create("rule");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_rule);
  tcase_add_test(tc, test_replay);
  tcase_add_test(tc, test_run_adapts_on_and_resumes);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
