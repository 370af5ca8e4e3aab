/* Ranks as threads (testcomm.h): every rank ends in the same state, 2, 3 and
 * 4 ranks give the single rank's result, and what the ranks exchange per
 * iteration does not grow with the number of hypercubes: the part of the
 * estimate and the map's sums, every hypercube's share only in adapting
 * vegas+ iterations (as a gather), and in frozen iterations two numbers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "estimate.h"
#include "testcomm.h"
#include "testutil.h"

static const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS,
                                    STRATA_MODE_VEGAS1D, STRATA_MODE_PLAIN, STRATA_MODE_QMC};
#define NMODES (int)(sizeof modes / sizeof *modes)

static strata_params params(strata_mode mode, uint64_t seed)
{
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.seed = seed;
  p.neval = 200000;
  p.maxiter = 6;
  p.adapt_iters = 3;
  p.skip = 1;
  p.epsrel = 0.0;
  p.nthreads = 1;
  return p;
}

static int close_to(double a, double b, double tol)
{
  return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) || a == b;
}

START_TEST(test_ranks_agree)
{
  strata_problem pr;
  test_problem("f4", 4, &pr);
  for (int m = 0; m < NMODES; m++) {
    strata_params p = params(modes[m], 11 + (uint64_t)m);
    static testcomm sh;
    testcomm_rank one[1], on_ranks[4];
    testcomm_run(&sh, 1, &pr, &p, one);
    ck_assert_msg(one[0].rc == STRATA_OK, "%s", strata_last_error());
    for (int n = 2; n <= 4; n++) {
      testcomm_run(&sh, n, &pr, &p, on_ranks);
      for (int r = 0; r < n; r++) {
        ck_assert_msg(on_ranks[r].rc == STRATA_OK, "rank %d: %s", r, strata_last_error());
        ck_assert_msg(on_ranks[r].state == on_ranks[0].state,
                      "mode %s, %d ranks: rank %d's state differs from rank 0's",
                      strata_mode_name(modes[m]), n, r);
        ck_assert(memcmp(&on_ranks[r].res.integral, &on_ranks[0].res.integral, sizeof(double)) == 0);
      }
      const strata_result *a = &on_ranks[0].res, *b = &one[0].res;
      ck_assert_int_eq(a->neval, b->neval);
      /* Plain MC and QMC combine per-cell sums in cell order: the same bits.
       * The vegas modes add per-rank parts: the same to rounding. */
      double tol = modes[m] == STRATA_MODE_PLAIN || modes[m] == STRATA_MODE_QMC ? 0.0 : 1e-12;
      ck_assert_msg(close_to(a->integral, b->integral, tol) && close_to(a->sigma, b->sigma, tol),
                    "mode %s: %d ranks %.17g +- %.17g, 1 rank %.17g +- %.17g",
                    strata_mode_name(modes[m]), n, a->integral, a->sigma, b->integral,
                    b->sigma);
    }
  }
}
END_TEST

/* What rank 0 sends per iteration, for vegas+ at the given beta; at beta 0
 * nothing moves between hypercubes, so no shares are gathered. */
static void payload(double beta)
{
  strata_problem pr;
  test_problem("f4", 5, &pr);
  strata_params p = params(STRATA_MODE_VEGASPLUS, 5);
  p.neval = 2000000; /* 13^5 = 371293 hypercubes */
  p.maxiter = 5;
  p.adapt_iters = 3;
  p.beta = beta;
  p.peaks.search = STRATA_PEAKS_OFF; /* the map's exchange alone */
  static testcomm sh;
  memset(&sh, 0, sizeof sh);
  testcomm_rank on_ranks[4];
  testcomm_run(&sh, 4, &pr, &p, on_ranks);
  ck_assert_msg(on_ranks[0].rc == STRATA_OK, "%s", strata_last_error());
  const int64_t nhcube = on_ranks[0].res.nhcube, map = 2 * (int64_t)pr.dim * p.ninc;
  ck_assert(nhcube > 10 * map);
  int gathers = 0, sums = 0;
  for (int k = 0; k < sh.ncall; k++) {
    const int64_t n = sh.calls[k];
    if (n < 0) {
      ck_assert_msg(-n == nhcube, "gathered %lld of %lld shares", (long long)-n,
                    (long long)nhcube);
      gathers++;
      continue;
    }
    /* Adapting iterations: the estimate's part and the map's sums;
     * frozen ones: the part alone. */
    const int64_t want = (int64_t)STRATA_EST_PART(1) + (sums < p.adapt_iters ? map : 0);
    ck_assert_msg(n == want, "sum %d: %lld doubles, expected %lld", sums, (long long)n,
                  (long long)want);
    sums++;
  }
  ck_assert_int_eq(sums, p.maxiter);
  ck_assert_msg(gathers == (beta > 0 ? p.adapt_iters : 0), "beta %g: %d gathers", beta,
                gathers);
}

START_TEST(test_payload)
{
  payload(0.75);
  payload(0.0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ranks");
  TCase *tc = tcase_create("ranks");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_ranks_agree);
  tcase_add_test(tc, test_payload);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
