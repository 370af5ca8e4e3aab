/* GPU benchmark: sampling throughput, the m-CUBES comparison cases, and
 * time to tolerance with the honesty of the reported errors side by side.
 *
 *   bench/bench_gpu [--part iteration|overhead|throughput|mcubes|latency|tolerance|qmc|user|all]
 *                   [--seeds N]
 *                   [--tol-min EPS] [--tol-max EPS] [--quick] [--neval N]
 *                   [--case NAME:DIM]...
 *   bench/bench_gpu [--seeds N] --try 'SECTION.KEY=VALUE ...' [--try ...]
 *
 * --part overhead runs every built-in in d = 1..10 to epsrel 1e-3 with the
 * defaults (at most 5 seeds each) and prints what each iteration spent
 * outside the sampling kernel.
 * --case NAME:DIM limits the tolerance table to the rows named (1e-6 runs
 * take seconds each).
 * --neval sets the throughput table's samples per iteration (default 1e9,
 * 1e8 with --quick): small iterations are where the map sums' atomics and
 * the launch show.
 * --try runs the given job settings for seeds seed..seed+N-1 instead of
 * the parts: to compare settings side by side.  A user's integrand
 * (integral.integrand=file:PATH, with integral.function) has no exact
 * value here: its rows leave the error and honesty columns empty.
 * With --cpu the tries run on the CPU backend (the same points, so the same
 * errors and iterations; the times are the CPU's): to check settings, and
 * the scripts that call this, where there is no GPU.
 *
 * Times are wall clock from setting up the run (strata_run_alloc) to the
 * final result, with the GPU context created beforehand and excluded; the
 * throughput figures are evaluations per second of kernel time (CUDA events)
 * and, beside them, of the whole iteration (kernel, transfers, host update).
 * The qmc part gives points per second of plain MC, Sobol' and lattice
 * points, and the true error against N for each, with the fitted rate.
 * The user part times users' integrands (NVRTC) against the built-ins, and
 * a dear one (tests/integrands/ridge.c, 20 x 5e5) iteration by iteration,
 * with the samples each thread took. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_cuda.h"
#include "cli.h"
#include "job.h"
#include "options.h"
#include "backend_cpu.h"
#include "run.h"
#include "usercode.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const strata_builtin *problem(const char *name, int dim, strata_problem *pr)
{
  const strata_builtin *b = strata_builtin_find(name);
  if (!b) {
    fprintf(stderr, "bench_gpu: no integrand %s\n", name);
    exit(1);
  }
  memset(pr, 0, sizeof *pr);
  pr->f = b->f;
  pr->dim = dim;
  pr->name = b->name;
  pr->nparams = b->nparams;
  for (int i = 0; i < b->nparams; i++) pr->params[i] = b->params[i];
  for (int d = 0; d < dim; d++) {
    pr->lower[d] = b->lower;
    pr->upper[d] = b->upper;
  }
  return b;
}

static strata_comm *comm;
static strata_backend *gpu;
static int on_cpu; /* --cpu: gpu is the CPU backend (--try only) */

static strata_run *start_run(const strata_problem *pr, const strata_params *p)
{
  strata_run *r = NULL;
  if (strata_run_alloc(pr, p, gpu, comm, &r) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  return r;
}

/* One table row: 8 iterations of which 4 adapt; the first of each kind pays
 * for uploads and warm-up and is not counted. */
static void rates_pr(const char *label, const strata_problem *prp, int64_t neval)
{
  const strata_problem pr = *prp;
  const int dim = pr.dim;
  strata_params p;
  strata_params_default(&p);
  p.neval = neval;
  p.maxiter = 8;
  p.adapt_iters = 4;
  p.skip = 0;
  p.epsrel = 0;
  strata_run *r = start_run(&pr, &p);
  double ka = 0, wa = 0, kf = 0, wf = 0;
  int64_t na = 0, nf = 0;
  for (int it = 0; it < p.maxiter; it++) {
    double t0 = now_s();
    if (strata_run_step(r, NULL) != STRATA_OK) {
      fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
      exit(1);
    }
    double wall = now_s() - t0, kern = strata_cuda_last_kernel_s(gpu);
    int64_t n = r->ravg.hist[it].neval;
    if (it >= 1 && it < p.adapt_iters) { ka += kern; wa += wall; na += n; }
    if (it >= p.adapt_iters + 1) { kf += kern; wf += wall; nf += n; }
  }
  printf("| %s | %d | %.3g | %.3g | %.3g | %.3g |\n", label, dim, na / ka, na / wa, nf / kf,
         nf / wf);
  fflush(stdout);
  strata_run_free(r);
}

static void rates(const char *label, const char *name, int dim, int64_t neval)
{
  strata_problem pr;
  problem(name, dim, &pr);
  rates_pr(label, &pr, neval);
}

static int64_t throughput_neval;

static void throughput(int quick)
{
  static const struct { const char *name; int dim; } cases[] = {
      {"f4", 6}, {"f4", 9}, {"f2", 6}, {"f3", 8}, {"f5", 8}, {"f6", 8}, {"fA", 6}, {"fB", 9}};
  const int64_t neval = throughput_neval > 0 ? throughput_neval : quick ? 100000000 : 1000000000;
  printf("\n## Throughput (evaluations per second), neval %.0e per iteration, vegas+\n\n", (double)neval);
  printf("| integrand | d | adapting, kernel | adapting, iteration | frozen, kernel | frozen, iteration |\n");
  printf("|---|---|---|---|---|---|\n");
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    rates(cases[c].name, cases[c].name, cases[c].dim, neval);
  /* The generic kernel (any dimension, arrays in local memory) for scale. */
  setenv("STRATA_CUDA_GENERIC", "1", 1);
  strata_backend *saved = gpu;
  gpu = strata_backend_cuda_new(0);
  rates("f4 (generic kernel)", "f4", 6, neval);
  strata_backend_free(gpu);
  gpu = saved;
  unsetenv("STRATA_CUDA_GENERIC");
}

typedef struct {
  double time_s, err, sigma, integral;
  int iterations, converged;
  int64_t neval;
} outcome;

static outcome run_case(const char *name, int dim, const strata_params *p)
{
  strata_problem pr;
  const strata_builtin *b = problem(name, dim, &pr);
  double t0 = now_s();
  strata_run *r = start_run(&pr, p);
  strata_result res;
  if (strata_run_integrate(r, NULL, NULL, &res) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  outcome o = {now_s() - t0, fabs(res.integral - b->exact(dim, pr.params)), res.sigma,
               res.integral, res.iterations, res.converged, res.neval};
  strata_run_free(r);
  return o;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void mcubes(int seeds)
{
  printf("\n## The m-CUBES comparison cases\n\n");
  printf("| case | settings | integral | reported sigma | true error | time |\n|---|---|---|---|---|---|\n");
  strata_params p;
  strata_params_default(&p);
  p.neval = 2000000000;
  p.maxiter = 10;
  p.adapt_iters = 0;
  p.skip = 0;
  p.epsrel = 0;
  outcome o = run_case("fA", 6, &p);
  printf("| fA d=6 | neval 2e9, 10 iterations, no adaptation | %.8g | %.3g | %.3g | %.1f ms |\n",
         o.integral, o.sigma, o.err, 1e3 * o.time_s);
  strata_params_default(&p);
  p.neval = 100000000;
  p.maxiter = 15;
  p.adapt_iters = 10;
  p.epsrel = 0;
  o = run_case("fB", 9, &p);
  printf("| fB d=9 | neval 1e8, 15 iterations, 10 adapting, skip 5 | %.8g | %.3g | %.3g | %.1f ms |\n",
         o.integral, o.sigma, o.err, 1e3 * o.time_s);
  static const struct { const char *name; int dim; } tt[] = {{"f4", 8}, {"f2", 6}};
  for (int c = 0; c < 2; c++) {
    double t[1000];
    int honest = 0, conv = 0, n = seeds < 1000 ? seeds : 1000;
    for (int s = 0; s < n; s++) {
      strata_params_default(&p);
      p.neval = 1000000;
      p.epsrel = 1e-3;
      p.seed = 1 + (uint64_t)s;
      o = run_case(tt[c].name, tt[c].dim, &p);
      t[s] = o.time_s;
      honest += o.err <= 3 * o.sigma;
      conv += o.converged;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("| %s d=%d | epsrel 1e-3, neval 1e6, defaults, %d seeds | | | within 3 sigma: %d/%d, "
           "converged %d/%d | median %.2f ms (min %.2f, max %.2f) |\n",
           tt[c].name, tt[c].dim, n, honest, n, conv, n, 1e3 * t[n / 2], 1e3 * t[0],
           1e3 * t[n - 1]);
    fflush(stdout);
  }
}

/* Where the time of a short run goes: set-up, then per iteration the kernel
 * against the whole step (transfers and the host's map and allocation
 * update). */
static void latency(void)
{
  static const struct { const char *name; int dim; } cases[] = {{"f4", 8}, {"f2", 6}};
  printf("\n## Latency of a short run (epsrel 1e-3, neval 1e6, defaults), per iteration\n\n");
  for (int c = 0; c < 2; c++) {
    strata_problem pr;
    problem(cases[c].name, cases[c].dim, &pr);
    strata_params p;
    strata_params_default(&p);
    p.neval = 1000000;
    p.epsrel = 1e-3;
    double t0 = now_s();
    strata_run *r = start_run(&pr, &p);
    double t1 = now_s();
    printf("%s d=%d: set-up %.3f ms, %lld hypercubes;", pr.name, pr.dim, 1e3 * (t1 - t0),
           (long long)r->strat->nhcube);
    while (!strata_run_finished(r)) {
      double a = now_s();
      strata_run_step(r, NULL);
      printf(" [%.3f/%.3f]", 1e3 * strata_cuda_last_kernel_s(gpu), 1e3 * (now_s() - a));
    }
    printf(" ms (kernel/step); total %.3f ms\n", 1e3 * (now_s() - t0));
    strata_run_free(r);
  }
}

/* Percentile q (0..1) of n sorted values. */
static double pct(const double *v, int n, double q)
{
  int i = (int)(q * (n - 1) + 0.5);
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* Per iteration of runs with the given settings over seeds: the kernel and
 * the whole step, and their difference (what the host and the other
 * launches add).  The first iteration of every run pays for uploads and is
 * left out. */
static const char step_costs_header[] =
    "| case | iterations | kernel median | step median | step - kernel median | p90 | max | "
    "first iteration (with set-up) |\n|---|---|---|---|---|---|---|---|\n";

static void step_costs(const char *label, const strata_problem *pr, strata_params p, int seeds,
                       int only_adapting)
{
  static double kern[1 << 16], step[1 << 16], out[1 << 16];
  int n = 0;
  double first = 0.0; /* the first iterations' largest: they also set up */
  int max_seed = 0, max_it = 0;
  double max_out = -1.0;
  for (int s = 0; s < seeds; s++) {
    p.seed = 1 + (uint64_t)s;
    strata_run *r = start_run(pr, &p);
    for (int it = 0; !strata_run_finished(r) && n < (1 << 16); it++) {
      const int adapt = it < p.adapt_iters;
      double a = now_s();
      if (strata_run_step(r, NULL) != STRATA_OK) {
        fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
        exit(1);
      }
      double w = now_s() - a, k = strata_cuda_last_kernel_s(gpu);
      if (it == 0 && w - k > first) first = w - k;
      if (it == 0 || (only_adapting && !adapt)) continue;
      kern[n] = k;
      step[n] = w;
      out[n] = w - k;
      if (w - k > max_out) {
        max_out = w - k;
        max_seed = (int)p.seed;
        max_it = it + 1;
      }
      n++;
    }
    strata_run_free(r);
  }
  qsort(kern, (size_t)n, sizeof *kern, cmp_double);
  qsort(step, (size_t)n, sizeof *step, cmp_double);
  qsort(out, (size_t)n, sizeof *out, cmp_double);
  if (n == 0) {
    printf("| %s | 0 | | | | | | %.3f |\n", label, 1e3 * first);
    fflush(stdout);
    return;
  }
  printf("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f (seed %d, iteration %d) | %.3f |\n",
         label, n, 1e3 * pct(kern, n, 0.5), 1e3 * pct(step, n, 0.5), 1e3 * pct(out, n, 0.5),
         1e3 * pct(out, n, 0.9), 1e3 * out[n - 1], max_seed, max_it, 1e3 * first);
  fflush(stdout);
}

/* Time from set-up to result over seeds with the given settings. */
static void to_tolerance(const char *label, const char *name, int dim, strata_params p,
                         int seeds)
{
  double t[1000];
  int honest = 0, conv = 0, n = seeds < 1000 ? seeds : 1000;
  double its = 0;
  for (int s = 0; s < n; s++) {
    p.seed = 1 + (uint64_t)s;
    outcome o = run_case(name, dim, &p);
    t[s] = o.time_s;
    honest += o.err <= 3 * o.sigma;
    conv += o.converged;
    its += o.iterations;
  }
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  printf("| %s | %.2f ms (%.2f..%.2f) | %.1f | %d/%d | %d/%d |\n", label, 1e3 * t[n / 2],
         1e3 * t[0], 1e3 * t[n - 1], its / n, conv, n, honest, n);
  fflush(stdout);
}

/* tests/integrands/three.c: three components of one sample (f4's
 * gaussian, x_1 times it, a polynomial) on f4's 6-D problem, the map
 * following their sum.  The source is the caller's to free. */
static strata_source *user_source(const char *srcdir, const char *file, const char *fn,
                                  int extended, int ncomp)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", srcdir, file);
  strata_source *s = NULL;
  if (strata_source_from_file(path, path, fn, extended, ncomp, &s) != STRATA_OK ||
      strata_source_build_cpu(s, 1) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  return s;
}

static strata_source *user_three(const char *srcdir, strata_problem *pr)
{
  strata_source *s = user_source(srcdir, "tests/integrands/three.c", "three", 1, 3);
  problem("f4", 6, pr);
  pr->f = NULL;
  pr->fv = s->fv;
  pr->ncomp = 3;
  pr->adapt_comp = -1;
  pr->source = s;
  pr->name = "three (user)";
  return s;
}

/* Every built-in in every dimension from 1 to 10, to epsrel 1e-3 with the
 * defaults at neval 1e6: what an iteration spends outside the kernel. */
static void overhead(int seeds)
{
  printf("\n## Every built-in, d = 1..10, every iteration to epsrel 1e-3, defaults: "
         "kernel against the whole step (ms), %d seeds\n\n%s", seeds, step_costs_header);
  for (size_t i = 0; strata_builtin_at(i); i++)
    for (int dim = 1; dim <= 10; dim++) {
      strata_problem pr;
      problem(strata_builtin_at(i)->name, dim, &pr);
      strata_params p;
      strata_params_default(&p);
      char label[128];
      snprintf(label, sizeof label, "%s d=%d", pr.name, dim);
      step_costs(label, &pr, p, seeds, 0);
    }
}

/* The whole iteration on the device: what the host adds to every step,
 * short runs with the defaults, and the rate of whole iterations against
 * the kernel's at 1e9.  One table, so that runs can be compared line by
 * line (doc/benchmarks.md). */
static void iteration(int seeds, const char *srcdir)
{
  static const struct { const char *name; int dim; } short_cases[] = {{"f4", 8}, {"f2", 6}};
  strata_params p;
  printf("\n## One iteration: kernel against the whole step (ms), %d seeds\n\n", seeds);
  printf("%s", step_costs_header);
  for (int c = 0; c < 2; c++) {
    strata_problem pr;
    problem(short_cases[c].name, short_cases[c].dim, &pr);
    strata_params_default(&p);
    p.neval = 1000000;
    p.maxiter = 10;
    p.adapt_iters = 10;
    p.epsrel = 0;
    char label[128];
    snprintf(label, sizeof label, "%s d=%d, adapting vegas+, neval 1e6, defaults",
             short_cases[c].name, short_cases[c].dim);
    step_costs(label, &pr, p, seeds, 1);
  }
  /* A user's integrand (examples/integrands/gauss.c, f4 by hand) compiled
   * by NVRTC, every iteration of default runs to 1e-3. */
  char path[1024], cache[] = "/tmp/strata-bench-cache-XXXXXX";
  snprintf(path, sizeof path, "%s/examples/integrands/gauss.c", srcdir);
  strata_source *src = NULL;
  if (mkdtemp(cache)) setenv("STRATA_CACHE_DIR", cache, 1);
  if (strata_source_from_file(path, path, "gauss", 0, 1, &src) != STRATA_OK ||
      strata_source_build_cpu(src, 1) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  for (int dim = 8; dim <= 10; dim += 2) {
    strata_problem pr;
    problem("f4", dim, &pr);
    pr.f = src->f;
    pr.source = src;
    pr.name = "gauss (user)";
    strata_params_default(&p);
    char label[128];
    snprintf(label, sizeof label, "user gauss.c d=%d, every iteration to epsrel 1e-3, defaults",
             dim);
    step_costs(label, &pr, p, seeds, 0);
  }
  strata_source_free(src);
  /* A user's vector integrand, three components (user_three). */
  {
    strata_problem pr;
    src = user_three(srcdir, &pr);
    strata_params_default(&p);
    /* (Its runs outlast adapt_iters: the first frozen iteration counts; NVRTC
     * built its kernel beside the adapting one, before the count.) */
    step_costs("user three.c d=6, 3 components, every iteration to epsrel 1e-3, defaults", &pr,
               p, seeds, 0);
  }
  strata_source_free(src);

  printf("\n## Short runs with the defaults, set-up to result, %d seeds\n\n", seeds);
  printf("| case | median (min..max) | mean iterations | converged | within 3 sigma |\n"
         "|---|---|---|---|---|\n");
  for (int c = 0; c < 2; c++)
    for (double eps = 1e-3; eps >= 0.99e-4; eps /= 10) {
      strata_params_default(&p);
      p.epsrel = eps;
      char label[128];
      snprintf(label, sizeof label, "%s d=%d to epsrel %.0e", short_cases[c].name,
               short_cases[c].dim, eps);
      to_tolerance(label, short_cases[c].name, short_cases[c].dim, p, seeds);
    }
  long long taken, dropped;
  strata_cuda_ahead_counts(gpu, &taken, &dropped);
  printf("\nAdapting iterations queued ahead so far (gpu/ahead.cu): %lld taken, %lld dropped\n",
         taken, dropped);

  printf("\n## Whole iterations against the kernel at neval 1e9 (evaluations/s)\n\n");
  printf("| integrand | d | adapting, kernel | adapting, iteration | frozen, kernel | frozen, "
         "iteration |\n|---|---|---|---|---|---|\n");
  rates("f4", "f4", 6, 1000000000);
  rates("fB", "fB", 9, 1000000000);

  printf("\n## f4 d=6, 5 frozen iterations of 1e9 (adapt_iters 0), whole run\n\n");
  printf("| case | median (min..max) | mean iterations | converged | within 3 sigma |\n"
         "|---|---|---|---|---|\n");
  strata_params_default(&p);
  p.neval = 1000000000;
  p.maxiter = 5;
  p.adapt_iters = 0;
  p.skip = 0;
  p.epsrel = 0;
  to_tolerance("f4 d=6, 5 x 1e9 frozen", "f4", 6, p, seeds < 5 ? seeds : 5);
}

/* --case NAME:DIM (repeatable): the tolerance table's rows to run; all
 * when none is given. */
static const char *only[32];
static int nonly;

static int wanted(const char *name, int dim)
{
  if (!nonly) return 1;
  char key[64];
  snprintf(key, sizeof key, "%s:%d", name, dim);
  for (int i = 0; i < nonly; i++)
    if (!strcmp(only[i], key)) return 1;
  return 0;
}

static void tolerance(int seeds, double tol_min, double tol_max)
{
  static const struct { const char *name; int dim; } cases[] = {
      {"f2", 5}, {"f2", 6}, {"f2", 8}, {"f3", 5}, {"f3", 6}, {"f3", 8}, {"f4", 5}, {"f4", 6},
      {"f4", 8}, {"f5", 5}, {"f5", 6}, {"f5", 8}, {"f6", 5}, {"f6", 6}, {"f6", 8}, {"fA", 6},
      {"fB", 9}};
  printf("\n## Time to tolerance and honesty, %d seeds each\n\n", seeds);
  printf("neval per iteration grows with the tolerance (1e6 at 1e-3, x10 per decade) so that\n"
         "about ten iterations reach it; maxiter 100; otherwise the defaults.\n\n");
  printf("| integrand | d | epsrel | neval/itn | converged | median time | median iterations | "
         "|err| <= 3 sigma | median |err|/sigma |\n|---|---|---|---|---|---|---|---|---|\n");
  for (double eps = tol_max; eps >= tol_min * 0.999; eps /= 10) {
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
      /* fA (sin of a sum over a 1e6 volume, |I| = 49) needs ~1e14 evaluations
       * for 1e-3: it is run at its m-CUBES settings above instead. */
      if (!strcmp(cases[c].name, "fA") && eps < 1e-2) continue;
      if (!wanted(cases[c].name, cases[c].dim)) continue;
      double t[1000], pulls[1000], its[1000];
      int honest = 0, conv = 0, n = seeds < 1000 ? seeds : 1000;
      strata_params p;
      strata_params_default(&p);
      p.neval = (int64_t)llround(1e6 * (1e-3 / eps));
      /* fB (width 0.01 in a 9-D box of side 2) is exactly zero in double
       * outside a ball holding 1e-6 of the volume: with fewer than 1e7
       * samples per iteration some seeds never see it (measured: 8 of 20 at
       * 1e6), and report no result. */
      if (!strcmp(cases[c].name, "fB") && p.neval < 10000000) p.neval = 10000000;
      p.maxiter = 100;
      /* Stop at the tolerance or maxiter, not at the default maxeval (1e10
       * stopped every 1e-6 run after 10 iterations of 1e9). */
      p.maxeval = p.neval * p.maxiter;
      p.epsrel = eps;
      for (int s = 0; s < n; s++) {
        p.seed = 1000 + (uint64_t)s;
        outcome o = run_case(cases[c].name, cases[c].dim, &p);
        t[s] = o.time_s;
        pulls[s] = o.sigma > 0 ? o.err / o.sigma : INFINITY;
        its[s] = o.iterations;
        honest += o.err <= 3 * o.sigma;
        conv += o.converged;
      }
      qsort(t, (size_t)n, sizeof *t, cmp_double);
      qsort(pulls, (size_t)n, sizeof *pulls, cmp_double);
      qsort(its, (size_t)n, sizeof *its, cmp_double);
      printf("| %s | %d | %.0e | %.0e | %d/%d | %.2f ms | %.0f | %d/%d | %.2f |\n",
             cases[c].name, cases[c].dim, eps, (double)p.neval, conv, n, 1e3 * t[n / 2],
             its[n / 2], honest, n, pulls[n / 2]);
      fflush(stdout);
    }
  }
}

typedef struct {
  const char *label;
  strata_mode mode;
  strata_qmc_rule rule;
} pointset;

static const pointset pointsets[] = {{"plain", STRATA_MODE_PLAIN, STRATA_QMC_SOBOL},
                                     {"sobol", STRATA_MODE_QMC, STRATA_QMC_SOBOL},
                                     {"lattice", STRATA_MODE_QMC, STRATA_QMC_LATTICE}};
#define NPOINTSETS (sizeof pointsets / sizeof *pointsets)

static strata_params qmc_params(const pointset *ps, int64_t neval, int maxiter)
{
  strata_params p;
  strata_params_default(&p);
  p.mode = ps->mode;
  p.qmc = ps->rule;
  p.neval = neval;
  p.maxiter = maxiter;
  p.maxeval = INT64_MAX;
  p.epsrel = 0;
  return p;
}

/* Points per second (kernel and whole iteration) after one warm-up
 * iteration, and the true rms error over niter randomized iterations. */
static void qmc_case(const pointset *ps, const char *name, int dim, int64_t neval, int niter,
                     double *kern_rate, double *wall_rate, double *rms, double *sig)
{
  strata_problem pr;
  const strata_builtin *b = problem(name, dim, &pr);
  double exact = b->exact(dim, pr.params);
  strata_params p = qmc_params(ps, neval, niter + 1);
  strata_run *r = start_run(&pr, &p);
  double k = 0, w = 0, e2 = 0, s2 = 0;
  int64_t n = 0;
  for (int it = 0; it <= niter; it++) {
    double t0 = now_s();
    if (strata_run_step(r, NULL) != STRATA_OK) {
      fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
      exit(1);
    }
    if (getenv("BENCH_DEBUG"))
      fprintf(stderr, "%s %s d=%d neval %lld itn %d: %.10g +- %.3g\n", ps->label, name, dim,
              (long long)neval, it, r->ravg.hist[it].integral, r->ravg.hist[it].sigma);
    if (it == 0) continue;
    w += now_s() - t0;
    k += strata_cuda_last_kernel_s(gpu);
    n += r->ravg.hist[it].neval;
    double e = r->ravg.hist[it].integral - exact;
    e2 += e * e;
    s2 += r->ravg.hist[it].sigma * r->ravg.hist[it].sigma;
  }
  *kern_rate = n / k;
  *wall_rate = n / w;
  *rms = sqrt(e2 / niter);
  *sig = sqrt(s2 / niter);
  strata_run_free(r);
}

static void qmc(int quick)
{
  static const struct {
    const char *name;
    int dim;
  } cases[] = {{"f1", 5}, {"morokoff_caflisch", 8}, {"f4", 6}};
  printf("\n## Points per second, 2^28 points per iteration (nrand 16)\n\n");
  printf("| integrand | d | points | kernel points/s | iteration points/s |\n|---|---|---|---|---|\n");
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (size_t s = 0; s < NPOINTSETS; s++) {
      double kr, wr, rms, sig;
      qmc_case(&pointsets[s], cases[c].name, cases[c].dim, INT64_C(1) << 28, 3, &kr, &wr, &rms, &sig);
      printf("| %s | %d | %s | %.3g | %.3g |\n", cases[c].name, cases[c].dim, pointsets[s].label,
             kr, wr);
      fflush(stdout);
    }
  const int mmax = quick ? 20 : 28;
  for (size_t c = 0; c < 2; c++) {
    printf("\n## %s d=%d: rms true error over 16 iterations (each 16 randomizations) "
           "against N\n\n| N |", cases[c].name, cases[c].dim);
    for (size_t s = 0; s < NPOINTSETS; s++) printf(" %s error | %s sigma |", pointsets[s].label, pointsets[s].label);
    printf("\n|---|");
    for (size_t s = 0; s < NPOINTSETS; s++) printf("---|---|");
    printf("\n");
    double sx = 0, sxx = 0, sy[NPOINTSETS] = {0}, sxy[NPOINTSETS] = {0};
    int npt = 0;
    for (int m = 14; m <= mmax; m += 2, npt++) {
      printf("| 2^%d |", m);
      double x = m * log(2.0);
      sx += x;
      sxx += x * x;
      for (size_t s = 0; s < NPOINTSETS; s++) {
        double kr, wr, rms, sig;
        qmc_case(&pointsets[s], cases[c].name, cases[c].dim, INT64_C(1) << m, 16, &kr, &wr, &rms, &sig);
        printf(" %.3g | %.3g |", rms, sig);
        sy[s] += log(rms);
        sxy[s] += x * log(rms);
      }
      printf("\n");
      fflush(stdout);
    }
    printf("| rate |");
    for (size_t s = 0; s < NPOINTSETS; s++)
      printf(" N^%.2f | |", (npt * sxy[s] - sx * sy[s]) / (npt * sxx - sx * sx));
    printf("\n");
  }
}

/* A user's integrand (examples/integrands/gauss.c, f4 written by hand)
 * against the built-in f4: compile times, cold and cached, and rates. */
static strata_source *user_gauss(const char *srcdir, double *build_s, int *cached)
{
  double t0 = now_s();
  strata_source *s = user_source(srcdir, "examples/integrands/gauss.c", "gauss", 0, 1);
  *build_s = now_s() - t0;
  *cached = s->cpu_cached;
  return s;
}

/* Wall time of a short run (one adapting, one frozen iteration) on a new
 * backend: what a job's start costs beyond the GPU context. */
static double short_run(const strata_problem *pr)
{
  strata_backend *saved = gpu;
  gpu = strata_backend_cuda_new(0);
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  p.maxiter = 2;
  p.adapt_iters = 1;
  p.skip = 0;
  p.epsrel = 0;
  double t0 = now_s();
  strata_run *r = start_run(pr, &p);
  strata_result res;
  if (strata_run_integrate(r, NULL, NULL, &res) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  double t = now_s() - t0;
  strata_run_free(r);
  strata_backend_free(gpu);
  gpu = saved;
  return t;
}

/* A dear integrand (tests/integrands/ridge.c, 2000 exponentials a sample)
 * at 5e5 samples an iteration, 20 adapting iterations of 1024 increments:
 * each iteration's kernel time and the samples a thread took (one where
 * the kernel fills the GPU for a dear integrand, gpu/sample.cu's shape). */
static void dear(const char *srcdir)
{
  strata_source *s = user_source(srcdir, "tests/integrands/ridge.c", "ridge", 0, 1);
  strata_problem pr;
  problem("f4", 4, &pr);
  pr.f = s->f;
  pr.source = s;
  pr.name = "ridge (user)";
  strata_params p;
  strata_params_default(&p);
  p.neval = 500000;
  p.maxiter = 20;
  p.skip = 6;
  p.ninc = 1024;
  p.epsrel = 0;
  /* One iteration first, to compile its kernel before the clock starts. */
  strata_params warm = p;
  warm.maxiter = 1;
  warm.skip = 0;
  strata_run *r = start_run(&pr, &warm);
  if (strata_run_step(r, NULL) != STRATA_OK) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    exit(1);
  }
  strata_run_free(r);
  const double t0 = now_s();
  r = start_run(&pr, &p);
  printf("\n## A dear integrand: tests/integrands/ridge.c, d = 4, 20 x 5e5, 1024 increments\n\n"
         "kernel ms [samples a thread] by iteration:");
  while (!strata_run_finished(r)) {
    if (strata_run_step(r, NULL) != STRATA_OK) {
      fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
      exit(1);
    }
    printf(" %.3f [%d]", 1e3 * strata_cuda_last_kernel_s(gpu), strata_cuda_last_chunk(gpu));
  }
  printf("\n\nwhole run, set-up to the last iteration: %.2f ms\n", 1e3 * (now_s() - t0));
  strata_run_free(r);
  strata_source_free(s);
}

static void user(int quick, const char *srcdir)
{
  char cache[] = "/tmp/strata-bench-cache-XXXXXX";
  if (!mkdtemp(cache)) {
    perror("bench_gpu: mkdtemp");
    exit(1);
  }
  setenv("STRATA_CACHE_DIR", cache, 1);
  double cpu_cold, cpu_warm;
  int c1, c2;
  strata_source *s = user_gauss(srcdir, &cpu_cold, &c1);
  strata_source_free(s);
  s = user_gauss(srcdir, &cpu_warm, &c2);
  strata_problem pr, ref;
  problem("f4", 6, &ref);
  pr = ref;
  pr.f = s->f;
  pr.source = s;
  pr.name = "gauss (user)";
  /* The built-in twice: its first run also pays the driver's lazy loading
   * of the program's own kernels. */
  short_run(&ref);
  double builtin = short_run(&ref), cold = short_run(&pr), warm = short_run(&pr);
  printf("\n## User integrand: start-up (f4 copy, d = 6, empty cache at %s)\n\n", cache);
  printf("| step | first use (empty cache) | cached |\n|---|---|---|\n");
  printf("| CPU shared object (cc, dlopen) | %.4f s | %.4f s%s |\n", cpu_cold, cpu_warm,
         c1 == 0 && c2 == 1 ? "" : " (cache state unexpected)");
  printf("| short run (1 adapting + 1 frozen iteration of 1e5), user f4: NVRTC or cubin load "
         "of 2 kernels included | %.4f s | %.4f s |\n", cold, warm);
  printf("| the same short run, built-in f4 | %.4f s | |\n", builtin);
  const int64_t neval = quick ? 100000000 : 1000000000;
  printf("\n## User integrand against the built-in, neval %.0e per iteration, vegas+\n\n",
         (double)neval);
  printf("| integrand | d | adapting, kernel | adapting, iteration | frozen, kernel | frozen, iteration |\n");
  printf("|---|---|---|---|---|---|\n");
  for (int dim = 6; dim <= 9; dim += 3) {
    problem("f4", dim, &ref);
    pr = ref;
    pr.f = s->f;
    pr.source = s;
    rates_pr("f4 built-in", &ref, neval);
    rates_pr("f4 user (gauss.c)", &pr, neval);
  }
  strata_source_free(s);
  /* What components cost (user_three). */
  s = user_three(srcdir, &pr);
  rates_pr("three.c, ncomp 3, adapt sum", &pr, neval);
  strata_source_free(s);
  dear(srcdir);
}

/* One configuration given on the command line as job-file assignments
 * ("integral.integrand=f4 integral.dim=8 vegas.neval=2e6 ..."), run for
 * seeds 1..N: time from set-up to result, iterations, and the honesty of
 * the reported error against the exact value; then where the first seed's
 * time went, iteration by iteration (kernel / backend call with transfers /
 * whole step, ms). */
static void try_case(const char *spec, int seeds)
{
  strata_job job;
  strata_job_init(&job);
  char buf[2048];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
    if (strata_job_set(&job, tok) != STRATA_OK) {
      fprintf(stderr, "bench_gpu: --try %s: %s\n", tok, strata_last_error());
      exit(2);
    }
  strata_problem pr;
  const strata_builtin *b = NULL;
  strata_source *src = NULL;
  strata_table_set *tables = NULL;
  if (strata_job_resolve(&job, &pr, &b) != STRATA_OK ||
      strata_cli_integrand_load(&job, &pr, &src, &tables) != STRATA_OK ||
      (src && (strata_source_build(src, 0) != STRATA_OK ||
               strata_problem_set_source(&pr, src) != STRATA_OK))) {
    fprintf(stderr, "bench_gpu: --try: %s\n", strata_last_error());
    exit(2);
  }
  const double exact = b ? b->exact(pr.dim, pr.params) : NAN;
  double t[1000], pulls[1000], its[1000], sig[1000], err[1000];
  int honest = 0, conv = 0, n = seeds < 1000 ? seeds : 1000;
  char trace[8192] = "";
  for (int s = 0; s < n; s++) {
    strata_params p = job.p;
    p.seed = job.p.seed + (uint64_t)s;
    double t0 = now_s();
    strata_run *r = start_run(&pr, &p);
    size_t at = s ? sizeof trace
                  : (size_t)snprintf(trace, sizeof trace, "set-up %.3f ms, %lld hypercubes:",
                                     1e3 * (now_s() - t0), (long long)r->strat->nhcube);
    while (!strata_run_finished(r)) {
      double a = now_s();
      if (strata_run_step(r, NULL) != STRATA_OK) {
        fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
        exit(1);
      }
      if (s == 0 && at < sizeof trace - 64)
        at += (size_t)snprintf(trace + at, sizeof trace - at, " %.3f/%.3f/%.3f",
                               on_cpu ? NAN : 1e3 * strata_cuda_last_kernel_s(gpu),
                               1e3 * r->sample_time_s,
                               1e3 * (now_s() - a));
    }
    strata_result res;
    strata_run_result(r, &res);
    t[s] = now_s() - t0;
    strata_run_free(r);
    err[s] = fabs(res.integral - exact);
    sig[s] = res.sigma;
    pulls[s] = res.sigma > 0 ? err[s] / res.sigma : INFINITY;
    its[s] = res.iterations;
    honest += err[s] <= 3 * res.sigma;
    conv += res.converged;
  }
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  qsort(pulls, (size_t)n, sizeof *pulls, cmp_double);
  qsort(its, (size_t)n, sizeof *its, cmp_double);
  qsort(sig, (size_t)n, sizeof *sig, cmp_double);
  qsort(err, (size_t)n, sizeof *err, cmp_double);
  if (b)
    printf("| %s | %d/%d | %.2f ms (%.2f..%.2f) | %.0f | %.3g | %.3g (max %.3g) | %d/%d | %.2f |\n",
           spec, conv, n, 1e3 * t[n / 2], 1e3 * t[0], 1e3 * t[n - 1], its[n / 2], sig[n / 2],
           err[n / 2], err[n - 1], honest, n, pulls[n / 2]);
  else
    printf("| %s | %d/%d | %.2f ms (%.2f..%.2f) | %.0f | %.3g | | | |\n", spec, conv, n,
           1e3 * t[n / 2], 1e3 * t[0], 1e3 * t[n - 1], its[n / 2], sig[n / 2]);
  printf("  seed 1: %s\n", trace);
  fflush(stdout);
  strata_cli_integrand_free(src, tables);
}

static void try_header(void)
{
  printf("\n| configuration | converged | median time (min..max) | median iterations | median sigma | "
         "median |err| | |err| <= 3 sigma | median |err|/sigma |\n|---|---|---|---|---|---|---|---|\n");
}

static const char usage_text[] =
    "usage: bench_gpu [--part iteration|overhead|throughput|mcubes|latency|tolerance|qmc|user|all] "
    "[--seeds N] [--tol-min EPS] [--tol-max EPS] [--quick] [--neval N] "
    "[--case NAME:DIM]... [--cpu] [--try 'KEY=VAL ...']...\n";

int main(int argc, char **argv)
{
  static const char *const parts[] = {"iteration", "overhead", "throughput", "mcubes", "latency",
                                      "tolerance", "qmc",      "user",       "all"};
  static const struct option opts[] = {
      {"part", required_argument, NULL, 'p'},    {"seeds", required_argument, NULL, 's'},
      {"tol-min", required_argument, NULL, 'm'}, {"tol-max", required_argument, NULL, 'M'},
      {"quick", no_argument, NULL, 'q'},         {"case", required_argument, NULL, 'c'},
      {"neval", required_argument, NULL, 'n'},   {"cpu", no_argument, NULL, 'C'},
      {"try", required_argument, NULL, 't'},     {NULL, 0, NULL, 0}};
  const char *tries[64];
  int ntries = 0;
  const char *part = "all";
  int seeds = 20, quick = 0;
  double tol_min = 1e-5, tol_max = 1e-3;
  static const char tol_want[] = "a number in [1e-15, 1]";
  int opt;
  opterr = 0; /* its own messages are one line each */
  while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (opt) {
    case 'p': {
      size_t i = 0;
      while (i < sizeof parts / sizeof *parts && strcmp(optarg, parts[i]) != 0) i++;
      if (i == sizeof parts / sizeof *parts)
        refuse_opt("bench_gpu", "part", "not a part (iteration, overhead, throughput, mcubes, "
                                        "latency, tolerance, qmc, user or all)");
      part = optarg;
      break;
    }
    case 's': seeds = (int)whole_opt("bench_gpu", "seeds", 1, 1000); break;
    case 'm': tol_min = number_opt("bench_gpu", "tol-min", 1e-15, 1.0, tol_want); break;
    case 'M': tol_max = number_opt("bench_gpu", "tol-max", 1e-15, 1.0, tol_want); break;
    case 'q': quick = 1; break;
    case 'c':
      if (nonly == 32) refuse_opt("bench_gpu", "case", "at most 32 of them");
      only[nonly++] = optarg;
      break;
    case 'n':
      throughput_neval = (int64_t)number_opt("bench_gpu", "neval", 1, 1e12, "a number in 1..1e12");
      break;
    case 'C': on_cpu = 1; break;
    case 't':
      if (ntries == 64) refuse_opt("bench_gpu", "try", "at most 64 of them");
      tries[ntries++] = optarg;
      break;
    default:
      fprintf(stderr, "bench_gpu: %s: not an option, or its value is missing; %s",
              argv[optind - 1], usage_text);
      return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "bench_gpu: %s: not an option; %s", argv[optind], usage_text);
    return 2;
  }
  if (tol_min > tol_max) {
    fprintf(stderr, "bench_gpu: --tol-min %g is above --tol-max %g\n", tol_min, tol_max);
    return 2;
  }
  if (on_cpu && ntries == 0) {
    fprintf(stderr, "bench_gpu: --cpu goes with --try\n");
    return 2;
  }
  if (on_cpu) {
    comm = strata_comm_serial();
    gpu = strata_backend_cpu_new(0);
    printf("# bench_gpu --cpu: the CPU backend, times are the CPU's\n");
    try_header();
    for (int i = 0; i < ntries; i++) try_case(tries[i], seeds);
    strata_backend_free(gpu);
    strata_comm_free(comm);
    return 0;
  }
  if (strata_cuda_device_count() == 0) {
    fprintf(stderr, "bench_gpu: no CUDA device visible\n");
    return 77;
  }
  comm = strata_comm_serial();
  gpu = strata_backend_cuda_new(0);
  if (!gpu) {
    fprintf(stderr, "bench_gpu: %s\n", strata_last_error());
    return 1;
  }
  char desc[512];
  strata_cuda_describe(gpu, desc, sizeof desc);
  printf("# bench_gpu on %s\n", desc);
  if (ntries) {
    try_header();
    for (int i = 0; i < ntries; i++) try_case(tries[i], seeds);
    return 0;
  }
  if (!strcmp(part, "all") || !strcmp(part, "iteration"))
    iteration(seeds, getenv("srcdir") ? getenv("srcdir") : ".");
  if (!strcmp(part, "all") || !strcmp(part, "overhead")) overhead(seeds < 5 ? seeds : 5);
  if (!strcmp(part, "all") || !strcmp(part, "throughput")) throughput(quick);
  if (!strcmp(part, "all") || !strcmp(part, "mcubes")) mcubes(seeds);
  if (!strcmp(part, "all") || !strcmp(part, "latency")) latency();
  if (!strcmp(part, "all") || !strcmp(part, "tolerance")) tolerance(seeds, tol_min, tol_max);
  if (!strcmp(part, "all") || !strcmp(part, "qmc")) qmc(quick);
  if (!strcmp(part, "all") || !strcmp(part, "user"))
    user(quick, getenv("srcdir") ? getenv("srcdir") : ".");
  strata_backend_free(gpu);
  strata_comm_free(comm);
  return 0;
}
