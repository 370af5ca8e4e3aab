/* bench_gsl: strata (VEGAS+) against GSL's VEGAS on the same integrands and
 * the same evaluation budgets.
 *
 * Both codes integrate the very same C function, the built-in integrand
 * taken from strata_builtin_find() (GSL through a one-line adapter), on the
 * built-in default domain, and are scored against the built-in exact value.
 *
 * Budget B (total evaluations of one run) is spent the same way by both:
 *   strata   maxiter = 10 iterations of neval = B/10 (rounded as GSL
 *            rounds it, below), epsrel = epsabs = 0 (so the whole budget
 *            is used), skip = 5 (the default): the first 5
 *            iterations only adapt, the last 5 are averaged.  Everything else
 *            is strata_params_default(): VEGAS+, ninc 1000 (a ceiling: the
 *            map has 100 increments at B = 1e6, 1000 from B = 1e7), alpha 0.5,
 *            beta 0.75.  nthreads = 1 ("strata-1t") and 0 = all ("strata-Nt").
 *   gsl      the documented two-stage use of gsl_monte_vegas: a warm-up call
 *            at stage 0 (5 iterations of B/10 calls: adapts the grid, result
 *            thrown away), then one call at stage 1 (keep the grid, discard
 *            the accumulated results) of 5 iterations of B/10 calls, whose
 *            average is the answer.  GSL's `calls' is per iteration.  The
 *            rest is GSL's default: mode importance (with stratification
 *            where the calls allow), 50 bins, alpha 1.5, mt19937.
 * So each code adapts for half of the budget and averages the other half.
 * GSL rounds the calls of an iteration down to a multiple of its number of
 * boxes, so B/10 is taken to the nearest count GSL can make, and strata's
 * neval is that count too: both make the same evaluations (at --iters 5,
 * Tsuda d=5 at B = 1e5, GSL made 1.17e5 where strata made 1e5).  The
 * evaluations are counted, not assumed.
 *
 * Each (integrand, budget, code) runs with seeds 1..S.  Reported: the median
 * and the RMS over seeds of the relative true error |I - exact| / |exact|,
 * the mean relative reported error sigma / |exact|, the largest pull
 * |I - exact| / sigma, the fractions of seeds with a pull of at most 1 and
 * at most 3 (in1, in3: whether each code's error bars are honest, as
 * bench/coverage.sh scores strata's), and evaluations per second (all
 * evaluations of all seeds over their summed wall time, CLOCK_MONOTONIC
 * around the whole call, allocation included).
 *
 * Budgets >= 1e8 run, unless --full, on the peaked integrands only and with
 * at most 3 seeds (time).  Also printed: the bare cost of one integrand
 * call, and cpu/wall of each row (process CPU time over wall time: 1.0 for
 * a one-thread code that had its core, N for N threads), since other work
 * on a small shared machine shows up in evals/s.
 *
 * --iters 5 runs both codes as the classic test suites do: 5 iterations of
 * B/5, all averaged (strata skip = 0; GSL one call at stage 0).
 *
 * The integrands of bench/coverage.sh's rows of 10 iterations (linear,
 * dgauss, fB, f6) run only when --only names them: with --budget 10 times
 * the row's neval and up to 200 seeds, in1 and in3 give GSL's coverage of
 * the row beside strata's (strata here with epsrel 0, where coverage.sh
 * keeps the default 1e-3).
 *
 *   bench_gsl [--quick] [--full] [--seeds N] [--budget B]... [--only NAME[/DIM]]...
 *             [--alpha A] [--beta B] [--ninc N] [--iters 5]
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <gsl/gsl_monte.h>
#include <gsl/gsl_monte_vegas.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_version.h>

#include "strata/strata.h"
#include "options.h"

/* Iterations of both codes, of which the first NSKIP only adapt (strata's
 * default skip); --iters 5 makes it 5 and 0: the classic test suites' use,
 * budget/5 per iteration, every iteration averaged (GSL: one call). */
static int NITER = 10, NSKIP = 5;
#define MAX_SEEDS 200
#define MAX_BUDGETS 16

typedef struct {
  const char *name;
  int dim;
  int big;   /* also run at budgets >= BIG_BUDGET in the default run */
  strata_fn f; /* not a built-in: the function on (0,1)^dim, and its exact value */
  double (*exact)(int dim);
  /* coverage.sh's rows, for GSL's coverage beside strata's: run only when
   * --only names them */
  int named_only;
} bench_case;

/* The classic suite's (GSL's monte tests, Lepage's): a gaussian of width
 * 0.1 normalised on the real line, and Tsuda's product, whose every
 * factor integrates to 1; c = (1 + sqrt 10) / 9 puts its peak in the
 * corner. */
static double gauss(const double *x, int dim, const double *params)
{
  (void)params;
  double q = 0.0;
  for (int i = 0; i < dim; i++) q += (x[i] - 0.5) * (x[i] - 0.5);
  return pow(0.1 * sqrt(M_PI), -dim) * exp(-q / 0.01);
}
static double gauss_exact(int dim) { return pow(erf(5.0), dim); }
static double tsuda(const double *x, int dim, const double *params)
{
  (void)params;
  const double c = (1.0 + sqrt(10.0)) / 9.0;
  double p = 1.0;
  for (int i = 0; i < dim; i++) p *= c / (c + 1) * ((c + 1) / (c + x[i])) * ((c + 1) / (c + x[i]));
  return p;
}
static double one(int dim) { (void)dim; return 1.0; }
/* coverage.sh's inline integrands, the same functions in C: a product of
 * linear factors 2 x_i, and two gaussians of width 0.1 on the diagonal at
 * 1/3 and 2/3, each normalised over the cube, half weight each. */
static double linear(const double *x, int dim, const double *params)
{
  (void)params;
  double p = 1.0;
  for (int i = 0; i < dim; i++) p *= 2.0 * x[i];
  return p;
}
static double dgauss(const double *x, int dim, const double *params)
{
  (void)params;
  const double s = 0.1,
               z = s * sqrt(M_PI / 2) *
                   (erf((2.0 / 3) / (s * sqrt(2.0))) + erf((1.0 / 3) / (s * sqrt(2.0))));
  double zz = 1.0, g1 = 1.0, g2 = 1.0;
  for (int i = 0; i < dim; i++) {
    zz *= z;
    g1 *= exp(-(x[i] - 1.0 / 3) * (x[i] - 1.0 / 3) / (2 * s * s));
    g2 *= exp(-(x[i] - 2.0 / 3) * (x[i] - 2.0 / 3) / (2 * s * s));
  }
  return 0.5 * (g1 + g2) / zz;
}
static double constant(const double *x, int dim, const double *params)
{
  (void)x, (void)dim, (void)params;
  return 1.0;
}

/* The peaked ones (f4 gaussian, f2 product peak, f5 C0 peak) are what the
 * comparison is about; f1 (oscillatory) and f3 (corner peak) are controls;
 * gauss, tsuda and const are the classic suite's. */
static const bench_case cases[] = {
    {"f4", 5, 1, 0, 0, 0},          {"f4", 8, 1, 0, 0, 0},
    {"f2", 6, 1, 0, 0, 0},          {"f5", 6, 1, 0, 0, 0},
    {"f1", 5, 0, 0, 0, 0},          {"f3", 5, 0, 0, 0, 0},
    {"gauss", 10, 0, gauss, gauss_exact, 0},
    {"tsuda", 5, 0, tsuda, one, 0}, {"tsuda", 8, 0, tsuda, one, 0},
    {"const", 8, 0, constant, one, 0},
    {"linear", 4, 0, linear, one, 1}, {"linear", 8, 0, linear, one, 1},
    {"dgauss", 4, 0, dgauss, one, 1}, {"dgauss", 8, 0, dgauss, one, 1},
    {"fB", 1, 0, 0, 0, 1}, {"fB", 2, 0, 0, 0, 1}, {"f6", 5, 0, 0, 0, 1},
};

/* The case's problem on its default domain, and its exact value. */
static int case_problem(const bench_case *c, strata_problem *pr, double *exact)
{
  memset(pr, 0, sizeof *pr);
  pr->dim = c->dim;
  pr->name = c->name;
  if (c->f) {
    pr->f = c->f;
    for (int d = 0; d < pr->dim; d++) pr->upper[d] = 1.0;
    *exact = c->exact(c->dim);
    return 0;
  }
  const strata_builtin *b = strata_builtin_find(c->name);
  if (!b) return -1;
  pr->f = b->f;
  pr->name = b->name;
  pr->nparams = b->nparams;
  for (int d = 0; d < pr->dim; d++) {
    pr->lower[d] = b->lower;
    pr->upper[d] = b->upper;
  }
  memcpy(pr->params, b->params, sizeof b->params);
  *exact = b->exact(pr->dim, b->params);
  return 0;
}

/* Budgets this large take ~25 s per seed and case on two cores: without
 * --full they run on the `big' cases only, with at most BIG_SEEDS seeds, to
 * keep the default run under ten minutes. */
#define BIG_BUDGET 1e8
#define BIG_SEEDS 3
#define NCASES (sizeof cases / sizeof cases[0])

static const double budgets_default[] = {1e6, 1e7, 1e8};
static const double budgets_quick[] = {1e5, 1e6};

enum { CODE_GSL, CODE_STRATA_1T, CODE_STRATA_NT, NCODES };

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the whole process, all threads: cpu/wall of a run says whether
 * it had its cores to itself (1.0 for one thread, N for N threads). */
static double cpu_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_loadavg(const char *when)
{
  char buf[128] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f)) strcpy(buf, "?");
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = '\0';
  printf("# load average %s: %s\n", when, buf);
}

/* One run's outcome. */
typedef struct {
  double integral, sigma;
  double evals;   /* evaluations actually made */
  double time_s, cpu_s;
  int ok;
} run_out;

/* ---- GSL ------------------------------------------------------------------------- */

typedef struct {
  strata_fn f;
  const double *params;
  unsigned long long n; /* evaluations */
} gsl_adapter;

static double gsl_call(double *x, size_t dim, void *p)
{
  gsl_adapter *a = p;
  a->n++;
  return a->f(x, (int)dim, a->params);
}

/* GSL's own rounding of `calls' (monte/vegas.c, GSL 2.x): boxes per axis
 * floor((calls/2)^(1/dim)), remapped onto the bins when there are 25 or more,
 * then floor(calls / boxes^dim) (at least 2) calls in every box. */
static double gsl_calls_made(double calls, int dim)
{
  const unsigned bins_max = 50;
  unsigned boxes = (unsigned)floor(pow(calls / 2.0, 1.0 / dim));
  if (2 * boxes >= bins_max) {
    unsigned bpb = boxes / bins_max > 1 ? boxes / bins_max : 1;
    unsigned bins = boxes / bpb < bins_max ? boxes / bpb : bins_max;
    boxes = bpb * bins;
  }
  double tot = pow((double)boxes, dim);
  double cpb = floor(calls / tot);
  if (cpb < 2.0) cpb = 2.0;
  return cpb * tot;
}

/* The `calls' argument, between target/2 and 2 target, whose evaluations per
 * iteration come closest to target. */
static size_t gsl_calls_for(double target, int dim)
{
  double best = target, bestdiff = INFINITY;
  for (int i = 0; i <= 6000; i++) {
    double c = floor(target * (0.5 + 1.5 * i / 6000.0));
    double diff = fabs(gsl_calls_made(c, dim) - target);
    if (diff < bestdiff) {
      bestdiff = diff;
      best = c;
    }
  }
  return (size_t)best;
}

/* The evaluations of one iteration of either code at this budget. */
static int64_t evals_per_iteration(int64_t budget, int dim)
{
  return (int64_t)gsl_calls_made((double)gsl_calls_for((double)(budget / NITER), dim), dim);
}

static run_out run_gsl(const strata_problem *pr, int64_t budget, unsigned long seed)
{
  run_out o = {0};
  gsl_adapter ad = {pr->f, pr->params, 0};
  gsl_monte_function G = {gsl_call, (size_t)pr->dim, &ad};
  double xl[STRATA_MAX_DIM], xu[STRATA_MAX_DIM];
  memcpy(xl, pr->lower, sizeof xl);
  memcpy(xu, pr->upper, sizeof xu);
  /* Per iteration; GSL makes whole numbers of calls per box, so ask for
   * the count that lands nearest budget/NITER (plain budget/NITER can lose
   * a quarter of the budget to that rounding). */
  const size_t calls = gsl_calls_for((double)(budget / NITER), pr->dim);

  double t0 = now_s(), c0 = cpu_s();
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_monte_vegas_state *s = gsl_monte_vegas_alloc((size_t)pr->dim);
  if (!r || !s) {
    fprintf(stderr, "bench_gsl: GSL allocation failed\n");
    gsl_rng_free(r);
    if (s) gsl_monte_vegas_free(s);
    return o;
  }
  gsl_rng_set(r, seed);
  gsl_monte_vegas_init(s);
  gsl_monte_vegas_params vp;
  gsl_monte_vegas_params_get(s, &vp);
  double res = 0.0, err = 0.0;

  /* Warm-up: adapt the grid, throw the result away. */
  vp.iterations = NSKIP > 0 ? NSKIP : NITER;
  vp.stage = 0;
  gsl_monte_vegas_params_set(s, &vp);
  int rc = gsl_monte_vegas_integrate(&G, xl, xu, (size_t)pr->dim, calls, r, s, &res, &err);
  /* Measurement: keep the grid, start a fresh average. */
  if (rc == 0 && NSKIP > 0) {
    vp.iterations = NITER - NSKIP;
    vp.stage = 1;
    gsl_monte_vegas_params_set(s, &vp);
    rc = gsl_monte_vegas_integrate(&G, xl, xu, (size_t)pr->dim, calls, r, s, &res, &err);
  }
  gsl_monte_vegas_free(s);
  gsl_rng_free(r);
  o.time_s = now_s() - t0;
  o.cpu_s = cpu_s() - c0;
  o.integral = res;
  o.sigma = err;
  o.evals = (double)ad.n;
  o.ok = rc == 0 && isfinite(res);
  if (rc != 0) fprintf(stderr, "bench_gsl: gsl_monte_vegas_integrate failed (%d)\n", rc);
  return o;
}

/* ---- strata ---------------------------------------------------------------------- */

/* --alpha, --beta, --ninc: strata's map damping, stratification exponent
 * and increments, for exploring; NaN (0 for ninc) = strata's default. */
static double strata_alpha = NAN, strata_beta = NAN;
static int strata_ninc = 0;

static run_out run_strata(const strata_problem *pr, int64_t budget, uint64_t seed,
                          int nthreads)
{
  run_out o = {0};
  strata_params p;
  strata_params_default(&p);
  p.neval = evals_per_iteration(budget, pr->dim);
  p.maxiter = NITER;
  p.skip = NSKIP;
  p.maxeval = p.neval * NITER;
  p.epsrel = 0.0;
  p.epsabs = 0.0;
  p.seed = seed;
  p.nthreads = nthreads;
  if (!isnan(strata_alpha)) p.alpha = strata_alpha;
  if (!isnan(strata_beta)) p.beta = strata_beta;
  if (strata_ninc > 0) p.ninc = strata_ninc;
  strata_result res;
  double t0 = now_s(), c0 = cpu_s();
  int rc = strata_integrate(pr, &p, NULL, NULL, &res);
  o.time_s = now_s() - t0;
  o.cpu_s = cpu_s() - c0;
  if (rc != STRATA_OK) {
    fprintf(stderr, "bench_gsl: strata_integrate(%s, d=%d, budget %lld): %s\n", pr->name,
            pr->dim, (long long)budget, strata_last_error());
    return o;
  }
  o.integral = res.integral;
  o.sigma = res.sigma;
  o.evals = (double)res.neval;
  o.ok = isfinite(res.integral);
  if (res.iterations != NITER)
    fprintf(stderr, "bench_gsl: note: strata ran %d of %d iterations (%s d=%d budget %lld)\n",
            res.iterations, NITER, pr->name, pr->dim, (long long)budget);
  return o;
}

/* ---- statistics ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
  double t[MAX_SEEDS];
  memcpy(t, v, sizeof(double) * (size_t)n);
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Bare cost of one integrand call (ns), on uniform points from a cheap LCG,
 * for reading the per-evaluation overhead of the two codes. */
static double bare_ns(const strata_problem *pr)
{
  const int n = 2000000;
  uint64_t st = 0x9E3779B97F4A7C15ull;
  double x[STRATA_MAX_DIM], sink = 0.0;
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    for (int d = 0; d < pr->dim; d++) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(st >> 11) * 0x1p-53;
      x[d] = pr->lower[d] + u * (pr->upper[d] - pr->lower[d]);
    }
    sink += pr->f(x, pr->dim, pr->params);
  }
  double dt = now_s() - t0;
  volatile double keep = sink;
  (void)keep;
  return 1e9 * dt / n;
}

static void fmt_budget(char *buf, size_t len, double b)
{
  int e = (int)floor(log10(b) + 1e-9);
  double m = b / pow(10.0, e);
  if (fabs(m - 1.0) < 1e-9) snprintf(buf, len, "1e%d", e);
  else snprintf(buf, len, "%.3ge%d", m, e);
}

static void usage(FILE *f)
{
  fprintf(f,
          "Usage: bench_gsl [--quick] [--full] [--seeds N] [--budget B]... [--only NAME[/DIM]]...\n"
          "                 [--alpha A] [--beta B] [--ninc N] [--iters 5]\n"
          "  --quick        budgets 1e5 and 1e6 (smoke run, well under a minute)\n"
          "  --seeds N      seeds per point (default 5, at most %d)\n"
          "  --budget B     total evaluations per run; repeatable; replaces the list\n"
          "                 (default 1e6 1e7 1e8)\n"
          "  --full         budgets >= %.0e on every integrand with every seed (without\n"
          "                 it: only f4, f2, f5 and at most %d seeds; ~25 min on 2 cores)\n"
          "  --only NAME[/DIM]  only this integrand (e.g. f4 or f4/8); repeatable; linear,\n"
          "                 dgauss, fB and f6 (coverage.sh's rows) run only when named\n"
          "  --alpha A      strata's map damping alpha (default: strata's, 0.5)\n"
          "  --beta B       strata's stratification exponent beta (default 0.75)\n"
          "  --ninc N       strata's ceiling on map increments per axis (default 1000)\n"
          "  --iters 5      5 iterations of budget/5, all averaged (default: 10, 5 kept)\n",
          MAX_SEEDS, BIG_BUDGET, BIG_SEEDS);
}

#define MAX_ONLY 16

/* Whether one of the --only arguments names the case, as NAME or NAME/DIM. */
static int names_any(const char *const *only, int nonly, const bench_case *c)
{
  char want[64];
  snprintf(want, sizeof want, "%s/%d", c->name, c->dim);
  for (int i = 0; i < nonly; i++)
    if (strcmp(only[i], c->name) == 0 || strcmp(only[i], want) == 0) return 1;
  return 0;
}

int main(int argc, char **argv)
{
  int nseeds = 5, quick = 0, full = 0, nb = 0, nonly = 0;
  double budgets[MAX_BUDGETS];
  const char *only[MAX_ONLY];
  static const struct option opts[] = {
      {"quick", no_argument, NULL, 'q'},      {"full", no_argument, NULL, 'f'},
      {"seeds", required_argument, NULL, 's'}, {"budget", required_argument, NULL, 'b'},
      {"alpha", required_argument, NULL, 'a'}, {"beta", required_argument, NULL, 'B'},
      {"ninc", required_argument, NULL, 'n'},  {"iters", required_argument, NULL, 'i'},
      {"only", required_argument, NULL, 'o'},  {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  int opt;
  opterr = 0; /* its own messages are one line each */
  while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (opt) {
    case 'q': quick = 1; break;
    case 'f': full = 1; break;
    case 's': nseeds = (int)whole_opt("bench_gsl", "seeds", 1, MAX_SEEDS); break;
    case 'b':
      if (nb == MAX_BUDGETS) refuse_opt("bench_gsl", "budget", "at most 16 of them");
      /* The lower bound depends on --iters, so it is checked below. */
      budgets[nb++] = number_opt("bench_gsl", "budget", 0.0, 1e12, "a number up to 1e12");
      break;
    case 'a': strata_alpha = number_opt("bench_gsl", "alpha", 0.0, DBL_MAX, "a number >= 0"); break;
    case 'B': strata_beta = number_opt("bench_gsl", "beta", 0.0, 1.0, "a number in [0, 1]"); break;
    case 'n': strata_ninc = (int)whole_opt("bench_gsl", "ninc", 1, 1000000); break;
    case 'i':
      if (strcmp(optarg, "5") != 0) refuse_opt("bench_gsl", "iters", "only 5 (10 is the default)");
      NITER = 5;
      NSKIP = 0;
      break;
    case 'o':
      if (nonly == MAX_ONLY) refuse_opt("bench_gsl", "only", "at most 16 of them");
      only[nonly++] = optarg;
      break;
    case 'h': usage(stdout); return 0;
    default:
      fprintf(stderr, "bench_gsl: %s: not an option, or its value is missing (--help lists them)\n",
              argv[optind - 1]);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "bench_gsl: %s: not an option (--help lists them)\n", argv[optind]);
    return 2;
  }
  for (int i = 0; i < nonly; i++) {
    size_t c = 0;
    while (c < NCASES && !names_any(&only[i], 1, &cases[c])) c++;
    if (c == NCASES) {
      fprintf(stderr, "bench_gsl: --only %s: no such integrand or NAME/DIM\n", only[i]);
      return 2;
    }
  }
  for (int i = 0; i < nb; i++)
    if (budgets[i] < 100.0 * NITER) {
      fprintf(stderr, "bench_gsl: --budget %g: at least %d with %d iterations\n", budgets[i],
              100 * NITER, NITER);
      return 2;
    }
  if (nb == 0) {
    const double *src = quick ? budgets_quick : budgets_default;
    nb = quick ? (int)(sizeof budgets_quick / sizeof *budgets_quick)
               : (int)(sizeof budgets_default / sizeof *budgets_default);
    memcpy(budgets, src, sizeof(double) * (size_t)nb);
  }

  int nthr = 1;
#ifdef _OPENMP
  nthr = omp_get_max_threads();
#endif
  char ntname[32];
  snprintf(ntname, sizeof ntname, "strata-%dt", nthr);
  const char *code_name[NCODES] = {"gsl", "strata-1t", ntname};

  printf("# bench_gsl: strata %s (VEGAS+) vs GSL %s VEGAS\n", strata_version(), GSL_VERSION);
  printf("# %d iterations of budget/%d evaluations, first %d adapt only; %d seeds; "
         "all threads = %d\n",
         NITER, NITER, NSKIP, nseeds, nthr);
  printf("# rel. errors are relative to |exact|; pull = |I - exact| / sigma\n");
  if (!isnan(strata_alpha)) printf("# strata alpha = %g (not its default)\n", strata_alpha);
  if (!isnan(strata_beta)) printf("# strata beta = %g (not its default)\n", strata_beta);
  if (strata_ninc > 0) printf("# strata ninc = %d (not its default)\n", strata_ninc);
  if (!full)
    printf("# budgets >= %.0e: only f4, f2, f5, at most %d seeds (--full for all)\n",
           BIG_BUDGET, BIG_SEEDS);
  print_loadavg("at start");

  /* The bare integrand costs first: they frame the evals/s columns. */
  printf("#\n# bare integrand call (ns), one thread:");
  for (size_t c = 0; c < NCASES; c++) {
    strata_problem pr;
    double exact;
    if (cases[c].named_only || case_problem(&cases[c], &pr, &exact) != 0) continue;
    printf("  %s/%d %.1f", cases[c].name, cases[c].dim, bare_ns(&pr));
  }
  printf("\n#\n");

  printf("%-9s %3s %6s %-10s %5s %9s %9s %9s %9s %7s %5s %5s %9s %9s %8s\n", "integrand",
         "dim", "budget", "code", "seeds", "evals", "err.med", "err.rms", "err.rep", "maxpull",
         "in1", "in3", "evals/s", "time/run", "cpu/wall");
  fflush(stdout);

  double tstart = now_s();
  int failures = 0;
  for (size_t c = 0; c < NCASES; c++) {
    if (nonly ? !names_any(only, nonly, &cases[c]) : cases[c].named_only) continue;
    strata_problem pr;
    double exact;
    if (case_problem(&cases[c], &pr, &exact) != 0) {
      fprintf(stderr, "bench_gsl: no built-in integrand '%s'\n", cases[c].name);
      return 1;
    }
    if (!isfinite(exact) || exact == 0.0) {
      fprintf(stderr, "bench_gsl: %s d=%d has no usable exact value\n", pr.name, pr.dim);
      return 1;
    }

    for (int ib = 0; ib < nb; ib++) {
      const int64_t budget = (int64_t)llround(budgets[ib]);
      const int big = budgets[ib] >= BIG_BUDGET && !full;
      if (big && !cases[c].big) continue;
      const int ns = big && nseeds > BIG_SEEDS ? BIG_SEEDS : nseeds;
      char bstr[16];
      fmt_budget(bstr, sizeof bstr, budgets[ib]);
      for (int code = 0; code < NCODES; code++) {
        double etrue[MAX_SEEDS], erep_sum = 0.0, e2 = 0.0, maxpull = 0.0;
        double evals = 0.0, time_s = 0.0, cpu = 0.0;
        int n = 0, in1 = 0, in3 = 0;
        for (int s = 1; s <= ns; s++) {
          run_out o = code == CODE_GSL ? run_gsl(&pr, budget, (unsigned long)s)
                      : run_strata(&pr, budget, (uint64_t)s,
                                   code == CODE_STRATA_1T ? 1 : 0);
          if (!o.ok) {
            failures++;
            continue;
          }
          double e = fabs(o.integral - exact) / fabs(exact);
          etrue[n++] = e;
          e2 += e * e;
          erep_sum += o.sigma / fabs(exact);
          /* exact to rounding is exact, whatever sigma says */
          double pull = fabs(o.integral - exact) <= 1e-14 * fabs(exact) ? 0.0
                        : o.sigma > 0.0 ? fabs(o.integral - exact) / o.sigma : INFINITY;
          if (pull > maxpull) maxpull = pull;
          in1 += pull <= 1.0;
          in3 += pull <= 3.0;
          evals += o.evals;
          time_s += o.time_s;
          cpu += o.cpu_s;
        }
        if (n == 0) {
          printf("%-9s %3d %6s %-10s   (all runs failed)\n", pr.name, pr.dim, bstr,
                 code_name[code]);
          fflush(stdout);
          continue;
        }
        printf("%-9s %3d %6s %-10s %5d %9.4g %9.2e %9.2e %9.2e %7.2f %5.3f %5.3f %9.3g %8.3fs "
               "%8.2f\n",
               pr.name, pr.dim, bstr, code_name[code], n, evals / n, median(etrue, n),
               sqrt(e2 / n), erep_sum / n, maxpull, (double)in1 / n, (double)in3 / n,
               evals / time_s, time_s / n, cpu / time_s);
        fflush(stdout);
      }
    }
  }
  print_loadavg("at end");
  printf("# total wall time %.1f s%s\n", now_s() - tstart,
         failures ? " (some runs failed: see stderr)" : "");
  return failures ? 1 : 0;
}
