/* Are the error bars honest?  Over many seeds at small neval, |I - exact|
 * <= sigma must hold in about 68% of runs (accepted: 0.60 .. 0.76) and
 * <= 2 sigma in at least 90%.  Small neval is where the variance estimates
 * are noisiest and the weighted average most prone to bias. */
#include <math.h>
#include <stdio.h>

#include "backend.h"
#include "comm.h"
#include "backend_cpu.h"
#include "run.h"
#include "testutil.h"

#define NSEED 300

typedef struct {
  const char *name;
  int dim;
  strata_mode mode;
  long neval;
  int maxiter; /* 0: 10 */
} coverage_case;

static const coverage_case cases[] = {
    {"f1", 5, STRATA_MODE_VEGASPLUS, 20000, 0},
    {"f4", 5, STRATA_MODE_VEGASPLUS, 20000, 0},
    {"f5", 5, STRATA_MODE_VEGASPLUS, 20000, 0},
    {"f3", 3, STRATA_MODE_VEGAS, 20000, 0},
    {"roos_arnold", 4, STRATA_MODE_VEGAS1D, 20000, 0},
    {"morokoff_caflisch", 5, STRATA_MODE_VEGASPLUS, 20000, 0},
    /* A sharp peak trained by small iterations for long: with a map of 1000
     * increments (10 samples each) it ended 8 to 79 sigma low. */
    {"f4", 8, STRATA_MODE_VEGASPLUS, 10000, 30},
    /* A step beside a region of zeros: the map crept into the step, leaving
     * a sliver its samples missed (d=3: 0.54 within 1 sigma, 9 of 100 runs
     * claimed convergence beyond 4 sigma); in one dimension a moving map
     * carried the step between strata (0.57, misses up to 2000 sigma). */
    {"f6", 3, STRATA_MODE_VEGASPLUS, 10000, 0},
    {"f6", 1, STRATA_MODE_VEGASPLUS, 10000, 0},
};

START_TEST(test_coverage)
{
  const coverage_case *c = &cases[_i];
  strata_problem pr;
  const strata_builtin *b = test_problem(c->name, c->dim, &pr);
  const double exact = b->exact(c->dim, b->params);
  strata_params p;
  strata_params_default(&p);
  p.mode = c->mode;
  p.neval = c->neval;
  p.maxiter = c->maxiter ? c->maxiter : 10;
  p.epsrel = 0;
  /* One thread: the same bits as any number (threads split hypercubes, not
   * sums), and no host's core count in the test's time: with a thread per
   * core of a 64-core GPU host beside make -j's other tests, 2700 small
   * runs took over seven minutes. */
  p.nthreads = 1;
  int in1 = 0, in2 = 0;
  for (int s = 0; s < NSEED; s++) {
    p.seed = 1000 + (uint64_t)s;
    strata_result r;
    ck_assert_msg(strata_integrate(&pr, &p, NULL, NULL, &r) == STRATA_OK, "%s",
                  strata_last_error());
    double dev = fabs(r.integral - exact);
    in1 += dev <= r.sigma;
    in2 += dev <= 2 * r.sigma;
  }
  double f1 = (double)in1 / NSEED, f2 = (double)in2 / NSEED;
  printf("%-18s d=%d %-7s neval %ld: %d seeds, within 1 sigma %.3f, within 2 sigma %.3f\n",
         c->name, c->dim, strata_mode_name(c->mode), c->neval, NSEED, f1, f2);
  ck_assert_msg(f1 >= 0.60 && f1 <= 0.76, "%s: 1-sigma coverage %.3f", c->name, f1);
  ck_assert_msg(f2 >= 0.90, "%s: 2-sigma coverage %.3f", c->name, f2);
}
END_TEST

/* A problem named name over the unit cube of dimension dim. */
static void unit_cube(strata_problem *pr, const char *name, int dim)
{
  pr->name = name;
  pr->dim = dim;
  for (int d = 0; d < dim; d++) pr->upper[d] = 1.0;
}

/* A run on one CPU thread and the serial communicator, stepped by the test. */
typedef struct {
  strata_backend *be;
  strata_comm *comm;
  strata_run *r;
} cpu_run;

static cpu_run cpu_run_start(const strata_problem *pr, const strata_params *p)
{
  cpu_run c = {strata_backend_cpu_new(1), strata_comm_serial(), NULL};
  ck_assert_msg(strata_run_alloc(pr, p, c.be, c.comm, &c.r) == STRATA_OK, "%s",
                strata_last_error());
  return c;
}

static void cpu_run_end(cpu_run *c)
{
  strata_run_free(c->r);
  strata_comm_free(c->comm);
  strata_backend_free(c->be);
}

/* maxiter iterations of neval samples, every one kept, no tolerance. */
static strata_params all_kept(int64_t neval, int maxiter)
{
  strata_params p;
  strata_params_default(&p);
  p.neval = neval;
  p.maxiter = maxiter;
  p.skip = 0;
  p.epsrel = 0;
  return p;
}

/* 1e4 samples per iteration, all kept: a run the test steps itself. */
static cpu_run stepped_run(const strata_problem *pr, int maxiter)
{
  strata_params p = all_kept(10000, maxiter);
  /* The average's own rules on the map's iterations: a wave's crests are
   * modes to the peak search, whose channels would restart it. */
  p.peaks.search = STRATA_PEAKS_OFF;
  return cpu_run_start(pr, &p);
}

/* The same for f over the unit cube. */
static cpu_run cube_run(strata_fn f, const char *name, int dim, int maxiter)
{
  strata_problem pr = {0};
  pr.f = f;
  unit_cube(&pr, name, dim);
  return stepped_run(&pr, maxiter);
}

/* One whole run of pr with p and seed. */
static strata_result integrated(const strata_problem *pr, strata_params p, int seed)
{
  strata_result r;
  p.seed = (uint64_t)seed;
  ck_assert_msg(strata_integrate(pr, &p, NULL, NULL, &r) == STRATA_OK, "%s",
                strata_last_error());
  return r;
}

static double one(const double *x, int dim, const double *params)
{
  (void)x, (void)dim, (void)params;
  return 1.0;
}

/* The integrand 1 is constant under any map that stays uniform: with 300
 * samples per iteration in d = 8 a map of 1000 increments ran away and
 * gave 0.205 +- 0.030; the map strata trains on such iterations must stay
 * uniform, and every seed give 1 to rounding. */
START_TEST(test_small_iterations_constant)
{
  strata_problem pr = {0};
  pr.f = one;
  pr.name = "one";
  for (int dim = 4; dim <= 8; dim += 4) {
    pr.dim = dim;
    for (int d = 0; d < dim; d++) pr.upper[d] = 1.0;
    for (int s = 1; s <= 50; s++) {
      const strata_result r = integrated(&pr, all_kept(300, 10), s);
      ck_assert_msg(fabs(r.integral - 1.0) <= 1e-13, "d=%d seed %d: %.17g +- %g", dim, s,
                    r.integral, r.sigma);
    }
  }
  /* The classic suite's constant, 5 iterations of 2e5 all averaged: the
   * first iteration's sums are not yet shifted, so its error is rounding
   * (2e-11) beside the others' 1e-16, and lent its neighbours' error it
   * made the average's 1e-11. */
  pr.dim = 8;
  for (int s = 1; s <= 3; s++) {
    const strata_result r = integrated(&pr, all_kept(200000, 5), s);
    ck_assert_msg(fabs(r.integral - 1.0) <= 1e-15 && r.sigma <= 1e-15,
                  "5 iterations of 2e5, seed %d: %.17g +- %g", s, r.integral, r.sigma);
  }
}
END_TEST

static double tiny_peak(const double *x, int dim, const double *params)
{
  (void)params;
  double q = 0.0;
  for (int i = 0; i < dim; i++) q += (x[i] - 0.5) * (x[i] - 0.5);
  return 1e-170 * exp(-200.0 * q);
}

/* Values so small that (J f)^2 underflows to 0 (fB's first iterations see
 * 1e-181): the map must still learn where they are largest.  It did not
 * move at all, and the default fB job never found its peak on 14 of 100
 * seeds. */
START_TEST(test_tiny_values_train_the_map)
{
  cpu_run c = cube_run(tiny_peak, "tiny_peak", 3, 4);
  for (int k = 0; k < 4; k++) ck_assert(strata_run_step(c.r, NULL) == STRATA_OK);
  const double *e = strata_run_edges(c.r);
  const int n = c.r->map->ninc;
  int i = 0;
  while (e[i + 1] < 0.5) i++;
  ck_assert_msg(e[i + 1] - e[i] < 0.5 / n, "the increment at the peak is %g wide (%d increments)",
                e[i + 1] - e[i], n);
  cpu_run_end(&c);
}
END_TEST

/* Three components of one sample, the map following the first (a peak of
 * width 0.1): the third, 1 + x y, is sampled mostly where it is small.
 * Its iterations that saw few of its large values come out low with small
 * errors; weighed by their own errors they made the average 6.8 sigma low
 * on the mean over 40 seeds (none within 3 sigma).  Within 3 sigma on at
 * least 90% of the seeds, and the mean pull within 1. */
static void three(const double *x, int dim, const double *params, const strata_table *tables,
                  double *out)
{
  (void)params, (void)tables;
  double q = 0.0;
  for (int i = 0; i < dim; i++) q += (x[i] - 0.5) * (x[i] - 0.5);
  out[0] = exp(-50.0 * q);
  out[1] = x[0] * out[0];
  out[2] = 1.0 + x[0] * x[1];
}

START_TEST(test_component_off_the_map)
{
  strata_problem pr = {0};
  pr.fv = three;
  pr.ncomp = 3;
  pr.adapt_comp = 0;
  unit_cube(&pr, "three", 3);
  strata_params p;
  strata_params_default(&p);
  p.neval = 50000;
  p.nthreads = 1;
  const int nseed = 40;
  int in3 = 0;
  double sum = 0.0;
  for (int s = 1; s <= nseed; s++) {
    p.seed = (uint64_t)s;
    strata_result r;
    ck_assert_msg(strata_integrate(&pr, &p, NULL, NULL, &r) == STRATA_OK, "%s",
                  strata_last_error());
    const double pull = (r.comp_integral[2] - 1.25) / r.comp_sigma[2];
    sum += pull;
    in3 += fabs(pull) <= 3.0;
  }
  printf("three, component 2: within 3 sigma %d of %d, mean pull %.2f\n", in3, nseed, sum / nseed);
  ck_assert_msg(in3 >= 0.9 * nseed && fabs(sum / nseed) < 1.0,
                "component 2: within 3 sigma %d of %d, mean pull %.2f", in3, nseed, sum / nseed);
}
END_TEST

/* 1 + x on the unit square, times a factor the test sets before each
 * iteration: an iteration that samples it is an estimate of 1.5 times that
 * factor, with an error near 1e-5. */
static double scaled_by = 1.0;

static double scaled_line(const double *x, int dim, const double *params)
{
  (void)dim, (void)params;
  return scaled_by * (1.0 + x[0]);
}

/* An iteration that disagrees with the average restarts it (the earlier
 * ones missed a part of the integrand), unless it is the one nearest 0 of
 * all: then it missed a part itself, and is kept beside the others.  A
 * single low iteration used to throw away the good ones before it (fB d=2
 * at neval 1e3: 16 of 200 seeds beyond 3 sigma, 7 since). */
START_TEST(test_low_iteration_kept)
{
  for (int up = 0; up <= 1; up++) {
    cpu_run c = cube_run(scaled_line, "scaled_line", 2, 8);
    for (int k = 0; k < 8; k++) {
      /* iteration 6 (k = 5) alone is 3% low, or from it on 3% high */
      scaled_by = k == 5 ? (up ? 1.03 : 0.97) : k > 5 && up ? 1.03 : 1.0;
      strata_iteration it;
      ck_assert(strata_run_step(c.r, &it) == STRATA_OK);
      if (k == 5)
        ck_assert_msg(it.restarted == up, "%s: iteration 6 restarted = %d",
                      up ? "3% higher from iteration 6 on" : "iteration 6 alone 3% lower",
                      it.restarted);
    }
    strata_result res;
    strata_run_result(c.r, &res);
    const double want = up ? 1.545 : 1.5;
    ck_assert_msg(fabs(res.integral - want) < 0.01 * want, "%s: %.6f",
                  up ? "after the rise" : "beside the low iteration", res.integral);
    cpu_run_end(&c);
  }
  scaled_by = 1.0;
}
END_TEST

/* chi^2 of estimates v[0..n) with errors s[0..n) about their own weighted
 * mean, as the average takes it. */
static double chi2_of(const double *v, const double *s, int n)
{
  double sw = 0.0, swv = 0.0, chi2 = 0.0;
  for (int k = 0; k < n; k++) {
    sw += 1.0 / (s[k] * s[k]);
    swv += v[k] / (s[k] * s[k]);
  }
  for (int k = 0; k < n; k++) chi2 += (v[k] - swv / sw) * (v[k] - swv / sw) / (s[k] * s[k]);
  return chi2;
}

/* 1 + 0.9 sin(300 (x + y)) times the factor: a wave across the diagonal,
 * which no map of the axes follows, so that 1e4 samples leave an error
 * near 0.65%. */
static double scaled_wave(const double *x, int dim, const double *params)
{
  (void)dim, (void)params;
  return scaled_by * (1.0 + 0.9 * sin(300.0 * (x[0] + x[1])));
}

enum { CLIMB_N = 5, CLIMB_UP = 3 };

/* The factor from iteration CLIMB_UP + 1 on that puts that iteration above
 * the others at chi^2 12.84 for 3 degrees of freedom (Q 0.005).  A constant
 * factor scales every estimate and error and leaves the map and the
 * allocation as they are: a first pass with the factor 1 gives the
 * estimates, and the factor follows from them.  s[] gets their errors. */
static double climb_factor(strata_fn f, const char *name, double *s)
{
  double v[CLIMB_N];
  cpu_run c = cube_run(f, name, 2, CLIMB_N);
  scaled_by = 1.0;
  for (int k = 0; k < CLIMB_N; k++) {
    strata_iteration it;
    ck_assert(strata_run_step(c.r, &it) == STRATA_OK);
    ck_assert_msg(!it.restarted, "%s: iteration %d restarted with the factor 1", name, k + 1);
    v[k] = it.integral;
    s[k] = it.sigma;
  }
  cpu_run_end(&c);
  double lo = 0.0, hi = 1.0, up = 0.0;
  for (int i = 0; i < 200; i++) {
    up = 0.5 * (lo + hi);
    double w[CLIMB_UP + 1], e[CLIMB_UP + 1];
    for (int k = 0; k <= CLIMB_UP; k++) {
      w[k] = k == CLIMB_UP ? (1.0 + up) * v[k] : v[k];
      e[k] = k == CLIMB_UP ? (1.0 + up) * s[k] : s[k];
    }
    if (chi2_of(w, e, CLIMB_UP + 1) < 12.84) lo = up;
    else hi = up;
  }
  return up;
}

/* A map that has not found all of the integrand reads low, so an iteration
 * well above every kept one that disagrees with them (Q = 0.005) restarts
 * the average, where a low one would need Q < 1e-3.  The average then
 * stands on that iteration alone and its error carries the jump from the
 * average it replaced, until the next iteration agrees with it.  fB d=9 at
 * 1e7 per iteration ended 3 sigma low on 19 of 200 GPU seeds without the
 * two rules.  Well above: by more than 1%, as finding more of a peak does;
 * a settled map's iteration a few of its small errors above the others is
 * only that, and restarts at Q < 1e-3 as before. */
START_TEST(test_climb_restarts)
{
  double s[CLIMB_N];
  const double up = climb_factor(scaled_wave, "scaled_wave", s);
  ck_assert_msg(up > 0.015, "the wave's errors are too small for the test: %.3g%%", 100 * up);
  cpu_run c = cube_run(scaled_wave, "scaled_wave", 2, CLIMB_N);
  double before = 0.0;
  for (int k = 0; k < CLIMB_N; k++) {
    scaled_by = k >= CLIMB_UP ? 1.0 + up : 1.0;
    strata_iteration it;
    ck_assert(strata_run_step(c.r, &it) == STRATA_OK);
    if (k == CLIMB_UP) {
      ck_assert_msg(it.restarted, "iteration %d, %.3g%% above the others (Q 0.005), "
                    "did not restart", k + 1, 100.0 * up);
      ck_assert_msg(it.avg_sigma >= fabs(it.avg - before),
                    "after the restart: %.10g +- %.3g, the average before %.10g", it.avg,
                    it.avg_sigma, before);
    }
    if (k == CLIMB_UP + 1)
      ck_assert_msg(!it.restarted && it.avg_sigma < s[k] * (1.0 + up),
                    "the iteration after agrees: restarted %d, %.10g +- %.3g", it.restarted,
                    it.avg, it.avg_sigma);
    before = it.avg;
  }
  cpu_run_end(&c);

  const double small = climb_factor(scaled_line, "scaled_line", s);
  ck_assert_msg(small < 0.01, "the line's errors are too large for the test: %.3g%%",
                100 * small);
  c = cube_run(scaled_line, "scaled_line", 2, CLIMB_N);
  for (int k = 0; k < CLIMB_N; k++) {
    scaled_by = k >= CLIMB_UP ? 1.0 + small : 1.0;
    strata_iteration it;
    ck_assert(strata_run_step(c.r, &it) == STRATA_OK);
    ck_assert_msg(!it.restarted, "a settled map: iteration %d, %.3g%% above the others "
                  "(Q 0.005), restarted", k + 1, 100.0 * small);
  }
  cpu_run_end(&c);
  scaled_by = 1.0;
}
END_TEST

/* The error its neighbours lend adapting iteration k of n, all kept and of
 * equal neval, as doc/algorithm.md ("Combining iterations") states the
 * rule; one = 1: the single neighbour before it (or after, for the first),
 * the earlier rule. */
static double lent_error(const double *s, int n, int k, int one)
{
  if (n == 1) return s[0];
  if (one) return k > 0 ? s[k - 1] : s[1];
  if (k > 0 && k < n - 1) return sqrt(s[k - 1] * s[k + 1]);
  const int j = k > 0 ? k - 1 : 1, far = k > 0 ? k - 2 : 2;
  if (far < 0 || far >= n) return s[j];
  return s[j] * fmin(fmax(sqrt(s[j] / s[far]), 0.5), 2.0);
}

/* The error iteration k is weighed by: the lent one, but never below 1/100
 * of its own (not in the earlier rule). */
static double weight_error(const double *s, int n, int k, int one)
{
  return one ? lent_error(s, n, k, one) : fmax(lent_error(s, n, k, one), s[k] / 100.0);
}

static double average_by_rule(const double *v, const double *s, int n, int one, double *sigma)
{
  double sw = 0.0, swv = 0.0, w[16];
  for (int k = 0; k < n; k++) {
    const double e = weight_error(s, n, k, one);
    w[k] = 1.0 / (e * e);
    sw += w[k];
    swv += w[k] * v[k];
  }
  double var = 0.0;
  for (int k = 0; k < n; k++) var += (w[k] / sw) * (w[k] / sw) * s[k] * s[k];
  *sigma = sqrt(var);
  return swv / sw;
}

/* While the map improves the errors fall from one iteration to the next;
 * an adapting iteration is weighed by its neighbours' errors (between two:
 * their geometric mean; at the ends: the nearest one's along the trend of
 * the two nearest), which in runs of few iterations weighs the best ones
 * as they deserve where the one neighbour before did not (Tsuda d=5, 5
 * iterations: 0.99993(11) against 0.999972(55)).  Every iteration's
 * average is checked against the rule computed here from the reported
 * estimates; the map of f4 d=4 at 1e4 per iteration climbs for the first
 * iterations, so the rule with one neighbour gives other numbers. */
START_TEST(test_neighbour_weights)
{
  enum { N = 6 };
  strata_problem pr;
  test_problem("f4", 4, &pr);
  cpu_run c = stepped_run(&pr, N);
  double v[N], s[N];
  int differs = 0;
  for (int k = 0; k < N; k++) {
    strata_iteration it;
    ck_assert(strata_run_step(c.r, &it) == STRATA_OK);
    ck_assert_msg(!it.restarted && it.adapting, "iteration %d restarted or froze", k + 1);
    v[k] = it.integral;
    s[k] = it.sigma;
    double sig, sig1;
    const double want = average_by_rule(v, s, k + 1, 0, &sig),
                 old = average_by_rule(v, s, k + 1, 1, &sig1);
    ck_assert_msg(fabs(it.avg - want) <= 1e-12 * fabs(want) &&
                      fabs(it.avg_sigma - sig) <= 1e-12 * sig,
                  "iteration %d: average %.17g +- %.17g, the rule gives %.17g +- %.17g", k + 1,
                  it.avg, it.avg_sigma, want, sig);
    differs += fabs(old - want) > 1e-9 * fabs(want);
  }
  ck_assert_msg(differs >= N - 3, "the rules agree on %d of %d averages: the test cannot tell",
                N - differs, N);
  cpu_run_end(&c);
}
END_TEST

/* The averaging of a synthetic history, as a checkpoint's replay runs it:
 * rows[k] is what iteration k + 1 reported. */
typedef struct {
  strata_iteration rows[16];
  int n;
} replayed;

static void keep_row(const strata_iteration *it, void *ctx)
{
  replayed *r = ctx;
  r->rows[r->n++] = *it;
}

static replayed replay_history(const double *v, const double *s, int n)
{
  cpu_run c = cube_run(one, "one", 2, n);
  strata_run_state st;
  strata_run_state_get(c.r, &st);
  strata_itn_record h[16];
  for (int k = 0; k < n; k++) h[k] = (strata_itn_record){v[k], s[k], 10000, 0.0};
  st.itn = n;
  st.hist = h;
  st.neval_total = 10000 * (int64_t)n;
  replayed out = {.n = 0};
  ck_assert_msg(strata_run_restore(c.r, &st, keep_row, &out) == STRATA_OK, "%s",
                strata_last_error());
  cpu_run_end(&c);
  return out;
}

/* A peak caught by few samples gives iterations whose errors are as large
 * as their estimates: chi^2 sees no disagreement between 2e-7(2e-7) and
 * 2.1(17) (fB d=9 kept such a run's average at 6e-6).  A rise by a
 * factor 20 above the average, of the same sign, restarts it all the
 * same; a rise to the other sign is no such evidence.  After a restart an
 * iteration that climbs again carries 0.3 of its step in the average's
 * error, until one does not climb. */
START_TEST(test_climb_rules)
{
  const double v1[] = {2e-7, 6e-5, 0.026, 2.1, 1.2}, s1[] = {2e-7, 3.4e-5, 0.015, 1.7, 0.4};
  for (int sign = 1; sign >= -1; sign -= 2) {
    double v[5];
    for (int k = 0; k < 5; k++) v[k] = sign * v1[k];
    replayed r = replay_history(v, s1, 5);
    for (int k = 1; k < 4; k++)
      ck_assert_msg(r.rows[k].restarted, "sign %d: iteration %d, over 20 times the average "
                    "before it, did not restart", sign, k + 1);
    ck_assert_msg(!r.rows[4].restarted && fabs(r.rows[4].avg) > 1.0,
                  "sign %d: the last two iterations give %g +- %g (restarted %d)", sign,
                  r.rows[4].avg, r.rows[4].avg_sigma, r.rows[4].restarted);
  }
  const double v2[] = {1e-3, -0.05}, s2[] = {0.03, 0.03};
  replayed r = replay_history(v2, s2, 2);
  ck_assert_msg(!r.rows[1].restarted, "a rise to the other sign restarted");

  const double v3[] = {0.30, 0.31, 0.30, 0.60, 0.70, 0.69},
               s3[] = {0.01, 0.01, 0.01, 0.05, 0.04, 0.04};
  r = replay_history(v3, s3, 6);
  ck_assert_msg(r.rows[3].restarted && !r.rows[4].restarted && !r.rows[5].restarted,
                "restarts at iterations 4, 5, 6: %d %d %d", r.rows[3].restarted,
                r.rows[4].restarted, r.rows[5].restarted);
  double sig;
  const double mean = average_by_rule(v3 + 3, s3 + 3, 2, 0, &sig),
               carry = 0.3 * (v3[4] - r.rows[3].avg);
  ck_assert_msg(fabs(r.rows[4].avg - mean) <= 1e-12 * mean &&
                    fabs(r.rows[4].avg_sigma - hypot(sig, carry)) <= 1e-12 * sig,
                "climbing on: %.17g +- %.17g, want %.17g +- %.17g", r.rows[4].avg,
                r.rows[4].avg_sigma, mean, hypot(sig, carry));
  average_by_rule(v3 + 3, s3 + 3, 3, 0, &sig);
  ck_assert_msg(fabs(r.rows[5].avg_sigma - sig) <= 1e-12 * sig,
                "a step down keeps the carry: +- %.17g, without it %.17g", r.rows[5].avg_sigma,
                sig);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("coverage");
  TCase *tc = tcase_create("seeds");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_coverage, 0, (int)(sizeof cases / sizeof *cases));
  suite_add_tcase(s, tc);
  tc = tcase_create("map");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_small_iterations_constant);
  tcase_add_test(tc, test_tiny_values_train_the_map);
  tcase_add_test(tc, test_component_off_the_map);
  tcase_add_test(tc, test_low_iteration_kept);
  tcase_add_test(tc, test_climb_restarts);
  tcase_add_test(tc, test_neighbour_weights);
  tcase_add_test(tc, test_climb_rules);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
