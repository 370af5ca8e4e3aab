/* Long runs stratify finer once the map is frozen (src/average.h,
 * strata_ravg_finer): the rule on histories made up to sit on either side
 * of its trial, and in runs: the long-run benchmark's 4-D gaussian reports
 * the finer stratification's hypercubes after 30 iterations and the
 * coarse one's after 20, a checkpoint written after the switch resumes as
 * the uninterrupted run bit for bit, and so does one of a run that ended
 * where the switch would come (with no carry made for it), and a diagonal
 * ridge, where the finer stratification does worse, goes back to the
 * coarse one after its trial. */
#include <check.h>
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "average.h"
#include "h5util.h"
#include "testrun.h"
#include "testutil.h"

/* A scalar history of n iterations of 1e4 samples with error 1, the map
 * frozen after 20, and the trial's iterations' errors t0, t1. */
static void history(strata_ravg *ra, int n, double t0, double t1)
{
  ck_assert(strata_ravg_init(ra, 1, 30, 20, 0, 5) == STRATA_OK);
  ra->finer = 1;
  for (int k = 0; k < n; k++)
    ra->hist[k] = (strata_itn_record){.integral = 1.0, .sigma = 1.0, .neval = 10000};
  ra->hist[20].sigma = t0;
  ra->hist[21].sigma = t1;
  ra->n = n;
}

START_TEST(test_rule)
{
  strata_ravg ra;
  /* The trial's second iteration (the first after a new allocation among
   * the finer hypercubes) decides; its first does not. */
  history(&ra, 22, 2.0, 0.8);
  ck_assert(!strata_ravg_finer(&ra, 19));
  ck_assert(strata_ravg_finer(&ra, 20) && strata_ravg_finer(&ra, 21));
  ck_assert(strata_ravg_finer(&ra, 22) && strata_ravg_finer(&ra, 29));
  strata_ravg_free(&ra);
  history(&ra, 22, 0.5, 1.2);
  ck_assert(strata_ravg_finer(&ra, 21) && !strata_ravg_finer(&ra, 22));
  /* Before the trial is recorded, the iterations after it are not known. */
  ra.n = 21;
  ck_assert(strata_ravg_finer(&ra, 21) && !strata_ravg_finer(&ra, 22));
  strata_ravg_free(&ra);
  /* A map frozen before STRATA_ADAPT_MORE_AFTER, a run without a finer
   * stratification: never. */
  history(&ra, 22, 0.5, 0.5);
  ra.nadapt = STRATA_ADAPT_MORE_AFTER - 1;
  ck_assert(!strata_ravg_finer(&ra, 25));
  ra.nadapt = 20;
  ra.finer = 0;
  ck_assert(!strata_ravg_finer(&ra, 25));
  strata_ravg_free(&ra);
}
END_TEST

/* bench/long_runs.py's gaussian, unnormalised: width 0.1 at 0.3 + 0.1 i. */
static double gauss4(const double *x, int dim, const double *params)
{
  (void)params;
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += (x[i] - (0.3 + 0.1 * i)) * (x[i] - (0.3 + 0.1 * i));
  return exp(-s / 0.02);
}

/* A ridge along the diagonal of width 0.05: the map cannot follow it, the
 * VEGAS+ allocation among the hypercubes does. */
static double ridge4(const double *x, int dim, const double *params)
{
  (void)params;
  double m = 0.0, s = 0.0;
  for (int i = 0; i < dim; i++) m += x[i] / dim;
  for (int i = 0; i < dim; i++) s += (x[i] - m) * (x[i] - m);
  return exp(-s / 0.0025);
}

static void open_run(fixture *f, strata_fn fn, int maxiter)
{
  fixture_open_long(f, fn, 4, maxiter, 1);
}

static int64_t hcubes_after(strata_fn fn, int maxiter)
{
  fixture a;
  open_run(&a, fn, maxiter);
  strata_result res;
  ck_assert_msg(strata_run_integrate(a.r, NULL, NULL, &res) == STRATA_OK, "%s",
                strata_last_error());
  teardown(&a);
  return res.nhcube;
}

/* 2e4 samples in 4 dimensions: 8 per axis (a budget of neval/4), 10 once
 * finer (neval/2). */
START_TEST(test_run_switches)
{
  ck_assert_int_eq(hcubes_after(gauss4, 20), 4096);
  ck_assert_int_eq(hcubes_after(gauss4, 30), 10000);
}
END_TEST

START_TEST(test_guard_goes_back)
{
  fixture a;
  open_run(&a, ridge4, 30);
  strata_result res;
  ck_assert(strata_run_integrate(a.r, NULL, NULL, &res) == STRATA_OK);
  ck_assert(strata_run_finer(a.r, 20) && strata_run_finer(a.r, 21));
  ck_assert_msg(!strata_run_finer(a.r, 22), "the ridge kept the finer stratification");
  ck_assert_int_eq(res.nhcube, 4096);
  teardown(&a);
}
END_TEST

/* A checkpoint at path of gauss4's run after iteration at, past the
 * switch and its trial; the run that wrote it is closed. */
static void checkpoint_after(const char *path, int at, int maxiter)
{
  fixture b;
  open_run(&b, gauss4, maxiter);
  strata_iteration it;
  for (int k = 1; k <= at; k++) ck_assert(strata_run_step(b.r, &it) == STRATA_OK);
  ck_assert(strata_run_finer(b.r, at));
  write_ckpt(path, &b);
  teardown(&b);
}

/* Iterations from..to of the uninterrupted run a and the resumed run c:
 * every one the same bits. */
static void same_steps(fixture *a, fixture *c, int from, int to)
{
  strata_iteration it, jt;
  for (int k = from; k <= to; k++) {
    ck_assert(strata_run_step(a->r, &it) == STRATA_OK);
    ck_assert(strata_run_step(c->r, &jt) == STRATA_OK);
    ck_assert_msg(test_same_bits(it.integral, jt.integral) && test_same_bits(it.sigma, jt.sigma) &&
                      test_same_bits(it.avg, jt.avg),
                  "iteration %d: %.17g +- %.17g uninterrupted, %.17g +- %.17g resumed", k,
                  it.integral, it.sigma, jt.integral, jt.sigma);
  }
}

/* A checkpoint written after iteration 23 (past the switch and its trial)
 * resumes as the uninterrupted run: every iteration the same bits. */
START_TEST(test_resume_after_switch)
{
  enum { N = 30, AT = 23 };
  char path[64];
  snprintf(path, sizeof path, "finestrat-%d.h5", (int)getpid());
  fixture a, c;
  open_run(&a, gauss4, N);
  strata_iteration it;
  for (int k = 1; k <= AT; k++) ck_assert(strata_run_step(a.r, &it) == STRATA_OK);
  checkpoint_after(path, AT, N);
  strata_checkpoint *ck = NULL;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  unlink(path);
  ck_assert(ck->state.finer == 1 && ck->state.nfine == 10000);
  open_run(&c, gauss4, N);
  ck_assert_msg(strata_run_restore(c.r, &ck->state, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  strata_checkpoint_free(ck);
  same_steps(&a, &c, AT + 1, N);
  strata_result ra, rc;
  strata_run_result(a.r, &ra);
  strata_run_result(c.r, &rc);
  ck_assert_int_eq(ra.nhcube, 10000);
  ck_assert_int_eq(rc.nhcube, 10000);
  teardown(&a);
  teardown(&c);
}
END_TEST

/* A run that ends where the finer stratification would start (20
 * iterations) does not carry the allocation over for an iteration that
 * never runs; its checkpoint, resumed with more iterations, carries it
 * then and goes on as the uninterrupted run: every iteration the same
 * bits. */
START_TEST(test_resume_from_run_ended_at_switch)
{
  enum { N = 30, AT = 20 };
  char path[64];
  snprintf(path, sizeof path, "finestrat-end-%d.h5", (int)getpid());
  fixture a, b, c;
  open_run(&a, gauss4, N);
  strata_iteration it;
  for (int k = 1; k <= AT; k++) ck_assert(strata_run_step(a.r, &it) == STRATA_OK);
  open_run(&b, gauss4, AT);
  strata_result rb;
  ck_assert(strata_run_integrate(b.r, NULL, NULL, &rb) == STRATA_OK);
  ck_assert(rb.iterations == AT && strata_run_finer(b.r, AT));
  write_ckpt(path, &b);
  teardown(&b);
  strata_checkpoint *ck = NULL;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  unlink(path);
  ck_assert_msg(ck->state.nfine == 0, "a run that ended carried %lld finer hypercubes over",
                (long long)ck->state.nfine);
  open_run(&c, gauss4, N);
  ck_assert_msg(strata_run_restore(c.r, &ck->state, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  strata_checkpoint_free(ck);
  same_steps(&a, &c, AT + 1, N);
  teardown(&a);
  teardown(&c);
}
END_TEST

/* A restore of st into a new run is refused with a message holding want. */
static void restore_refused(const strata_run_state *st, const char *want)
{
  fixture c;
  open_run(&c, gauss4, 30);
  ck_assert_int_ne(strata_run_restore(c.r, st, NULL, NULL), STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), want), "%s", strata_last_error());
  teardown(&c);
}

/* A saved finer stratification that does not fit the job, or whose
 * allocation no run can have made, and a switch attribute that is not 0
 * or 1, are refused and named. */
START_TEST(test_bad_finer_state_refused)
{
  char path[64];
  snprintf(path, sizeof path, "finestrat-bad-%d.h5", (int)getpid());
  checkpoint_after(path, 23, 30);
  strata_checkpoint *ck = NULL;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  strata_run_state st = ck->state;
  st.nfine = 4096;
  restore_refused(&st, "finer stratification of 4096 hypercubes");
  st = ck->state;
  int64_t *nh = malloc(sizeof(int64_t) * (size_t)st.nfine);
  ck_assert(nh != NULL);
  memcpy(nh, st.fine_nh, sizeof(int64_t) * (size_t)st.nfine);
  nh[7] = 1;
  st.fine_nh = nh;
  restore_refused(&st, "saved finer allocation gives hypercube 7 1 samples");
  nh[7] = INT64_MAX / 2;
  restore_refused(&st, "saved finer allocation gives hypercube 7");
  free(nh);
  strata_checkpoint_free(ck);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ck_assert(f >= 0);
  ck_assert(strata_h5_put_i64(f, "strat_finer", 2) == 0);
  H5Fclose(f);
  ck = NULL;
  ck_assert_int_ne(strata_checkpoint_read(path, &ck), STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "strat_finer"), "%s", strata_last_error());
  unlink(path);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("finestrat");
  TCase *tc = tcase_create("finer");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_rule);
  tcase_add_test(tc, test_run_switches);
  tcase_add_test(tc, test_guard_goes_back);
  tcase_add_test(tc, test_resume_after_switch);
  tcase_add_test(tc, test_resume_from_run_ended_at_switch);
  tcase_add_test(tc, test_bad_finer_state_refused);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
