/* The map's splits in a run (src/map.h): until its first split a run whose
 * map is stored with the increments of its splits is the run of a map
 * stored with the base rule's increments alone, bit for bit (the same
 * points, estimates and edges), and from its first split on it is not.
 * The base rule's run is the same job with the ceiling ninc at the base
 * count, where no split fits.  A state of the base rule's map resumes as
 * the map before its splits. */
#include <check.h>
#include <math.h>

#include "run.h"
#include "testrun.h"
#include "testutil.h"

enum { ITNS = 12, FIRST_SPLIT = 10 };

/* f4 in d = 4 at 2e4: 100 increments, stored 800 under ninc = 1000. */
static void open_run(fixture *f, strata_mode mode, int ninc)
{
  strata_problem pr;
  strata_params p;
  test_problem("f4", 4, &pr);
  strata_params_default(&p);
  p.mode = mode;
  p.neval = 20000;
  p.ninc = ninc;
  p.maxiter = ITNS;
  p.adapt_iters = 20;
  p.epsrel = 0;
  p.nthreads = 2;
  p.seed = 7;
  fixture_open(f, &pr, &p);
}

static void same_row(const strata_iteration *a, const strata_iteration *b, const char *mode)
{
  ck_assert_msg(test_same_bits(a->integral, b->integral) &&
                    test_same_bits(a->sigma, b->sigma) && test_same_bits(a->avg, b->avg) &&
                    test_same_bits(a->avg_sigma, b->avg_sigma) &&
                    test_same_bits(a->chi2_dof, b->chi2_dof) && a->neval == b->neval,
                "%s, iteration %d: %.17g +- %.17g with the stored splits, %.17g +- %.17g with "
                "the base rule's map",
                mode, a->itn, a->integral, a->sigma, b->integral, b->sigma);
}

static void unsplit_is_base(strata_mode mode)
{
  const char *name = strata_mode_name(mode);
  fixture split, base;
  open_run(&split, mode, 1000);
  open_run(&base, mode, 100);
  const int n = split.r->map->ninc, nb = base.r->map->ninc, g = n / nb;
  ck_assert_msg(nb == 100 && n > nb && n % nb == 0, "%s: %d and %d increments", name, n, nb);
  strata_iteration a, b;
  for (int k = 1; k <= FIRST_SPLIT; k++) {
    ck_assert_msg(strata_run_step(split.r, &a) == STRATA_OK, "%s", strata_last_error());
    ck_assert_msg(strata_run_step(base.r, &b) == STRATA_OK, "%s", strata_last_error());
    same_row(&a, &b, name);
  }
  /* The map after the refinement that follows iteration 10: every g-th
   * stored edge is the base map's. */
  const double *es = strata_run_edges(split.r), *eb = strata_run_edges(base.r);
  for (int ax = 0; ax < strata_map_naxes(base.r->map); ax++)
    for (int i = 0; i <= nb; i++)
      ck_assert_msg(es[(size_t)ax * (n + 1) + (size_t)i * g] == eb[(size_t)ax * (nb + 1) + i],
                    "%s: axis %d, edge %d: %.17g against %.17g", name, ax, i,
                    es[(size_t)ax * (n + 1) + (size_t)i * g], eb[(size_t)ax * (nb + 1) + i]);
  /* Iteration 11 samples the split map (the same points, to rounding: the
   * edges between are spaced evenly), and the refinement after it moves
   * 2 nb edges: iteration 12 is another run's. */
  for (int k = FIRST_SPLIT + 1; k <= ITNS; k++) {
    ck_assert(strata_run_step(split.r, &a) == STRATA_OK);
    ck_assert(strata_run_step(base.r, &b) == STRATA_OK);
  }
  ck_assert_msg(!test_same_bits(a.integral, b.integral), "%s: iteration 12 is the base rule's",
                name);
  teardown(&split);
  teardown(&base);
}

/* A state of the base rule's map (a checkpoint of a format before the
 * splits) resumes in a run that stores the splits as the map before them:
 * the rows that follow are the base rule's run's. */
START_TEST(test_base_state_resumes)
{
  fixture split, base;
  open_run(&split, STRATA_MODE_VEGASPLUS, 1000);
  open_run(&base, STRATA_MODE_VEGASPLUS, 100);
  strata_iteration a, b;
  for (int k = 1; k <= 4; k++)
    ck_assert_msg(strata_run_step(base.r, &b) == STRATA_OK, "%s", strata_last_error());
  strata_run_state st;
  strata_run_state_get(base.r, &st);
  ck_assert_int_eq(st.ninc, 100);
  ck_assert_msg(strata_run_restore(split.r, &st, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  for (int k = 5; k <= FIRST_SPLIT; k++) {
    ck_assert_msg(strata_run_step(split.r, &a) == STRATA_OK, "%s", strata_last_error());
    ck_assert_msg(strata_run_step(base.r, &b) == STRATA_OK, "%s", strata_last_error());
    same_row(&a, &b, "resumed");
  }
  teardown(&split);
  teardown(&base);
}
END_TEST

START_TEST(test_unsplit_is_base_vegasplus) { unsplit_is_base(STRATA_MODE_VEGASPLUS); }
END_TEST
START_TEST(test_unsplit_is_base_vegas) { unsplit_is_base(STRATA_MODE_VEGAS); }
END_TEST
START_TEST(test_unsplit_is_base_vegas1d) { unsplit_is_base(STRATA_MODE_VEGAS1D); }
END_TEST

int main(void)
{
  Suite *s = suite_create("mapsplit");
  TCase *tc = tcase_create("runs");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_unsplit_is_base_vegasplus);
  tcase_add_test(tc, test_unsplit_is_base_vegas);
  tcase_add_test(tc, test_unsplit_is_base_vegas1d);
  tcase_add_test(tc, test_base_state_resumes);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
