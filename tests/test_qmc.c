/* Randomized QMC: the Sobol' points are Sobol's (checked against cuRAND's
 * own generator where it is built), scrambling keeps the nets, the error
 * estimates cover, and QMC beats plain MC by the margin it should. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qmc.h"
#include "backend_cpu.h"
#include "run.h"
#include "testutil.h"
#ifdef HAVE_CURAND
#include <curand.h>
#endif

START_TEST(test_sobol_first_points)
{
  /* The first points of the first two axes, from the definition: van der
   * Corput's sequence in Gray-code order, and the axis with m_k = 1 (x^2+x+1). */
  static const double want[2][8] = {{0, .5, .75, .25, .375, .875, .625, .125},
                                    {0, .5, .25, .75, .375, .875, .125, .625}};
  for (int d = 0; d < 2; d++) {
    uint64_t v[64];
    strata_sobol_directions(d, v);
    for (int j = 0; j < 8; j++)
      ck_assert_msg(ldexp((double)strata_sobol_digits(v, (uint64_t)j), -64) == want[d][j],
                    "axis %d point %d", d + 1, j);
  }
}
END_TEST

#ifdef HAVE_CURAND
START_TEST(test_sobol_is_curands)
{
  curandDirectionVectors64_t *cv;
  ck_assert(curandGetDirectionVectors64(&cv, CURAND_DIRECTION_VECTORS_64_JOEKUO6) ==
            CURAND_STATUS_SUCCESS);
  for (int d = 0; d < STRATA_MAX_DIM; d++) {
    uint64_t v[64];
    strata_sobol_directions(d, v);
    for (int k = 0; k < 64; k++)
      ck_assert_msg(v[k] == cv[d][k], "axis %d direction %d differs from cuRAND's", d + 1, k);
  }
  /* And the points of cuRAND's host generator, axis by axis. */
  enum { NP = 4096, ND = 8 };
  static unsigned long long out[NP * ND];
  curandGenerator_t g;
  ck_assert(curandCreateGeneratorHost(&g, CURAND_RNG_QUASI_SOBOL64) == CURAND_STATUS_SUCCESS);
  ck_assert(curandSetQuasiRandomGeneratorDimensions(g, ND) == CURAND_STATUS_SUCCESS);
  ck_assert(curandGenerateLongLong(g, out, NP * ND) == CURAND_STATUS_SUCCESS);
  curandDestroyGenerator(g);
  for (int d = 0; d < ND; d++) {
    uint64_t v[64];
    strata_sobol_directions(d, v);
    for (int j = 0; j < NP; j++)
      ck_assert_msg(strata_sobol_digits(v, (uint64_t)j) == out[(size_t)d * NP + j],
                    "axis %d point %d differs from cuRAND's", d + 1, j);
  }
}
END_TEST
#endif

/* Every randomization of 2^m scrambled points is still a (0,m,2)-net in the
 * first two axes: each box 2^-a x 2^-(m-a) holds exactly one point. */
START_TEST(test_scrambled_nets)
{
  const int m = 10, n = 1 << m, nrand = 4;
  strata_qmc *q = strata_qmc_alloc(STRATA_QMC_SOBOL, 3, nrand, m);
  ck_assert(q != NULL);
  strata_qmc_randomize(q, 7, 3);
  static double y[1 << 10][3];
  static int count[1 << 10];
  for (int r = 0; r < nrand; r++) {
    strata_qmc_cursor cur = {.next = -1};
    for (int j = 0; j < n; j++) strata_qmc_point(q, &cur, (int64_t)r * n + j, y[j]);
    for (int a = 0; a <= m; a++) {
      memset(count, 0, sizeof count);
      for (int j = 0; j < n; j++) {
        int bx = (int)(y[j][0] * (1 << a)), by = (int)(y[j][1] * (1 << (m - a)));
        count[bx * (1 << (m - a)) + by]++;
      }
      for (int b = 0; b < n; b++)
        ck_assert_msg(count[b] == 1, "randomization %d, boxes 2^-%d x 2^-%d: box %d holds %d",
                      r, a, m - a, b, count[b]);
    }
    /* a jump into the middle of the set gives the point walking gives */
    strata_qmc_cursor fresh = {.next = -1};
    double z[3];
    strata_qmc_point(q, &fresh, (int64_t)r * n + 777, z);
    ck_assert(memcmp(z, y[777], sizeof z) == 0);
  }
  /* a new iteration is a new scramble */
  double before = y[5][2];
  strata_qmc_randomize(q, 7, 4);
  strata_qmc_cursor cur = {.next = -1};
  strata_qmc_point(q, &cur, (int64_t)(nrand - 1) * n + 5, y[5]);
  ck_assert(y[5][2] != before);
  strata_qmc_free(q);
}
END_TEST

typedef struct {
  double rms_err, mean_err, rms_pull, covered;
  int n;
} errstats;

/* niter independent iterations (each its own randomizations) of one job. */
static errstats errors(const char *name, int dim, strata_mode mode, strata_qmc_rule rule,
                       int64_t neval, int niter, uint64_t seed)
{
  strata_problem pr;
  const strata_builtin *b = test_problem(name, dim, &pr);
  const double exact = b->exact(dim, pr.params);
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.qmc = rule;
  p.neval = neval;
  p.maxiter = niter;
  p.maxeval = INT64_MAX;
  p.epsrel = 0;
  p.seed = seed;
  strata_backend *be = strata_backend_cpu_new(0);
  strata_comm *comm = strata_comm_serial();
  strata_run *r;
  ck_assert_msg(strata_run_alloc(&pr, &p, be, comm, &r) == STRATA_OK, "%s", strata_last_error());
  errstats e = {0};
  double s2 = 0, s1 = 0, sp = 0;
  for (int k = 0; k < niter; k++) {
    strata_iteration it;
    ck_assert_msg(strata_run_step(r, &it) == STRATA_OK, "%s", strata_last_error());
    double err = it.integral - exact, pull = err / it.sigma;
    s1 += err;
    s2 += err * err;
    sp += pull * pull;
    e.covered += fabs(pull) < 3.0;
  }
  e.n = niter;
  e.rms_err = sqrt(s2 / niter);
  e.mean_err = s1 / niter;
  e.rms_pull = sqrt(sp / niter);
  e.covered /= niter;
  strata_run_free(r);
  strata_comm_free(comm);
  strata_backend_free(be);
  return e;
}

static const struct {
  const char *name;
  int dim;
} smooth[] = {{"f1", 5}, {"morokoff_caflisch", 8}};

/* Over many randomizations the reported sigma is the error's size: nearly
 * all within 3 sigma (the mean of 16 randomizations is t-distributed with
 * 15 degrees of freedom: 99% within 3), the pulls' spread about 1, and no
 * bias beyond what the spread allows. */
START_TEST(test_coverage)
{
  for (size_t i = 0; i < sizeof smooth / sizeof *smooth; i++)
    for (int rule = 0; rule < 2; rule++) {
      errstats e = errors(smooth[i].name, smooth[i].dim, STRATA_MODE_QMC,
                          (strata_qmc_rule)rule, 1 << 16, 200, 11);
      printf("%s d=%d %s: rms error %.3g, mean %.3g, rms pull %.2f, %.1f%% within 3 sigma\n",
             smooth[i].name, smooth[i].dim, strata_qmc_rule_name((strata_qmc_rule)rule),
             e.rms_err, e.mean_err, e.rms_pull, 100 * e.covered);
      ck_assert_msg(e.covered >= 0.95, "%s %s: only %.1f%% within 3 sigma", smooth[i].name,
                    strata_qmc_rule_name((strata_qmc_rule)rule), 100 * e.covered);
      ck_assert_msg(e.rms_pull > 0.7 && e.rms_pull < 1.4, "%s %s: rms pull %.2f",
                    smooth[i].name, strata_qmc_rule_name((strata_qmc_rule)rule), e.rms_pull);
      ck_assert_msg(fabs(e.mean_err) < 4.0 * e.rms_err / sqrt(e.n), "%s %s: biased by %.3g",
                    smooth[i].name, strata_qmc_rule_name((strata_qmc_rule)rule), e.mean_err);
    }
}
END_TEST

/* At 2^20 points, QMC's true error is at least 10 times plain MC's. */
START_TEST(test_beats_plain)
{
  for (size_t i = 0; i < sizeof smooth / sizeof *smooth; i++) {
    errstats mc = errors(smooth[i].name, smooth[i].dim, STRATA_MODE_PLAIN, STRATA_QMC_SOBOL,
                         1 << 20, 8, 5);
    ck_assert(mc.covered >= 0.75);
    for (int rule = 0; rule < 2; rule++) {
      errstats q = errors(smooth[i].name, smooth[i].dim, STRATA_MODE_QMC, (strata_qmc_rule)rule,
                          1 << 20, 8, 5);
      printf("%s d=%d at 2^20: plain %.3g, %s %.3g (%.0fx)\n", smooth[i].name, smooth[i].dim,
             mc.rms_err, strata_qmc_rule_name((strata_qmc_rule)rule), q.rms_err,
             mc.rms_err / q.rms_err);
      ck_assert_msg(q.rms_err * 10.0 <= mc.rms_err, "%s %s: %.3g against plain %.3g",
                    smooth[i].name, strata_qmc_rule_name((strata_qmc_rule)rule), q.rms_err,
                    mc.rms_err);
    }
  }
}
END_TEST

/* The error falls clearly faster than N^-1/2 (slope of log rms error
 * against log N, N = 2^14 .. 2^20). */
START_TEST(test_rate)
{
  for (int rule = 0; rule < 2; rule++) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (int m = 14; m <= 20; m += 2, n++) {
      errstats e = errors("f1", 5, STRATA_MODE_QMC, (strata_qmc_rule)rule, INT64_C(1) << m, 16, 3);
      double x = m * log(2.0), y = log(e.rms_err);
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    printf("f1 d=5 %s: error ~ N^%.2f\n", strata_qmc_rule_name((strata_qmc_rule)rule), slope);
    ck_assert_msg(slope < -0.8, "%s: error falls only as N^%.2f",
                  strata_qmc_rule_name((strata_qmc_rule)rule), slope);
  }
}
END_TEST

START_TEST(test_lattice_limit)
{
  ck_assert(strata_qmc_alloc(STRATA_QMC_LATTICE, 4, 16, STRATA_LATTICE_MAX_LOG2N + 1) == NULL);
  ck_assert(strstr(strata_last_error(), "qmc = lattice") != NULL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("qmc");
  TCase *tc = tcase_create("qmc");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_sobol_first_points);
#ifdef HAVE_CURAND
  tcase_add_test(tc, test_sobol_is_curands);
#endif
  tcase_add_test(tc, test_scrambled_nets);
  tcase_add_test(tc, test_coverage);
  tcase_add_test(tc, test_beats_plain);
  tcase_add_test(tc, test_rate);
  tcase_add_test(tc, test_lattice_limit);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
