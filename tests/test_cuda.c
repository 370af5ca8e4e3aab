/* The CUDA backend against the CPU backend: same job, same seed, the same
 * points, so the same results to rounding (relative 1e-12), in every mode,
 * through adapting and frozen iterations; the peak search's evaluator at
 * the same points; and the search with its channels.  Without a GPU: SKIP
 * (77). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "backend_cuda.h"
#include "error.h"
#include "backend_cpu.h"
#include "run.h"
#include "testcomm.h"
#include "testutil.h"
#include "usercode.h"

static int run_with(strata_backend *be, const strata_problem *pr, const strata_params *p,
                    strata_result *res)
{
  strata_comm *comm = strata_comm_serial();
  strata_run *r = NULL;
  int rc = strata_run_alloc(pr, p, be, comm, &r);
  if (rc == STRATA_OK) rc = strata_run_integrate(r, NULL, NULL, res);
  strata_run_free(r);
  strata_comm_free(comm);
  return rc;
}

/* Point set of the qmc iterations and whether the vegas modes use it. */
static strata_qmc_rule rule = STRATA_QMC_SOBOL;
static int qmc_map;
static int ninc; /* 0: the default */

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(a), 1e-300); }

/* The runs compared here: fixed iterations, half of them adapting, no
 * tolerance, so both backends do exactly the same work. */
static strata_params fixed_params(strata_mode mode, long neval, int maxiter)
{
  strata_params p;
  strata_params_default(&p);
  p.mode = mode;
  p.neval = neval;
  p.maxiter = maxiter;
  p.adapt_iters = maxiter / 2;
  /* Without the peak search, which the GPU runs only where asked: the
   * CPU's runs do the same work.  (The search's own cases are below.) */
  p.peaks.search = STRATA_PEAKS_OFF;
  p.skip = 1;
  p.epsrel = 0;
  p.seed = 77;
  p.qmc = rule;
  p.qmc_map = qmc_map;
  if (ninc) p.ninc = ninc;
  return p;
}

/* CPU and GPU on one problem; returns the GPU's result. */
static strata_result agree_pr(const strata_problem *prp, strata_mode mode, long neval,
                              int maxiter)
{
  const strata_problem pr = *prp;
  const char *name = pr.name;
  const int dim = pr.dim;
  const strata_params p = fixed_params(mode, neval, maxiter);
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_result rc, rg;
  ck_assert_int_eq(run_with(cpu, &pr, &p, &rc), STRATA_OK);
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("%-18s d=%-2d %-7s%s%-7s cpu %.17g +- %.6g  gpu %.17g +- %.6g  rel %.1e %.1e\n", name, dim,
         strata_mode_name(mode), mode == STRATA_MODE_QMC || qmc_map ? " " : "",
         mode == STRATA_MODE_QMC || qmc_map ? strata_qmc_rule_name(rule) : "", rc.integral,
         rc.sigma, rg.integral, rg.sigma, rel(rc.integral, rg.integral), rel(rc.sigma, rg.sigma));
  ck_assert_msg(isfinite(rc.integral), "%s d=%d: no result to compare", name, dim);
  /* QMC's sigma is the spread of a few randomizations' means, which can be
   * many digits below the integral: it agrees to the rounding of the means,
   * 1e-12 of the integral. */
  double sig_tol = mode == STRATA_MODE_QMC || qmc_map
                       ? 1e-12 * fmax(fabs(rc.integral), fabs(rc.sigma)) / fabs(rc.sigma)
                       : 1e-12;
  /* Beyond the default ceiling of 1000 increments the map magnifies the
   * rounding of its sums into sigma: on the CPU alone, f3 d=12 with 2000
   * increments moves sigma by up to 5.2e-13 when each map sum is changed
   * by at most 2 ulps (doc/benchmarks.md, "test_cuda's 2000-increment
   * case"), and the GPU's atomics add those sums in another order. */
  if (ninc > 1000 && sig_tol < 5e-12) sig_tol = 5e-12;
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-12 && rel(rc.sigma, rg.sigma) <= sig_tol,
                "%s d=%d %s: cpu %.17g +- %.17g, gpu %.17g +- %.17g", name, dim,
                strata_mode_name(mode), rc.integral, rc.sigma, rg.integral, rg.sigma);
  ck_assert_int_eq(rc.neval, rg.neval);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
  return rg;
}

static void agree_p(const char *name, int dim, strata_mode mode, long neval, int maxiter,
                    double param0)
{
  strata_problem pr;
  test_problem(name, dim, &pr);
  if (!isnan(param0)) pr.params[0] = param0;
  agree_pr(&pr, mode, neval, maxiter);
}

static void agree(const char *name, int dim, strata_mode mode, long neval, int maxiter)
{
  agree_p(name, dim, mode, neval, maxiter, NAN);
}

/* A job of built-in integrands never opens NVRTC, whose opening weighs on
 * a cold start: the first test in this process, before any user's
 * integrand. */
START_TEST(test_builtin_needs_no_nvrtc)
{
  strata_problem pr;
  test_problem("f4", 6, &pr);
  const strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, 100000, 4);
  strata_backend *gpu = strata_backend_cuda_new(0);
  strata_result r;
  ck_assert_msg(run_with(gpu, &pr, &p, &r) == STRATA_OK, "%s", strata_last_error());
  strata_backend_free(gpu);
  char soname[32];
  snprintf(soname, sizeof soname, "libnvrtc.so.%d", CUDART_VERSION / 1000);
  void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  ck_assert_msg(h == NULL, "%s is loaded after a built-in integrand's run", soname);
}
END_TEST

START_TEST(test_agree_vegasplus)
{
  agree("f4", 6, STRATA_MODE_VEGASPLUS, 200000, 8);
  agree("f2", 8, STRATA_MODE_VEGASPLUS, 200000, 8);
  agree("f5", 5, STRATA_MODE_VEGASPLUS, 100000, 8);
  agree("f1", 3, STRATA_MODE_VEGASPLUS, 100000, 6);   /* generic kernel */
  agree("fA", 6, STRATA_MODE_VEGASPLUS, 100000, 6);
  agree("f3", 12, STRATA_MODE_VEGASPLUS, 100000, 6);  /* generic kernel */
  /* Increments that read 0 beside the step (maprefine.h), and one dimension,
   * where the stratification adapts alone (map.h). */
  agree("f6", 3, STRATA_MODE_VEGASPLUS, 10000, 8);
  agree("f6", 1, STRATA_MODE_VEGASPLUS, 1000, 8);
  /* 12 x 2000 map cells do not fit in shared memory: global atomics, and
   * the refinement's arrays in global memory.  2000 increments need 2e6
   * samples per iteration to train (map.h). */
  ninc = 2000;
  agree("f3", 12, STRATA_MODE_VEGASPLUS, 2000000, 6);
  ninc = 0;
}
END_TEST

START_TEST(test_agree_vegas)
{
  agree("f6", 6, STRATA_MODE_VEGAS, 200000, 8);
  agree("f4", 9, STRATA_MODE_VEGAS, 200000, 6);
  /* fB's own width 0.01 needs ~1e7 samples to see the peak at all. */
  agree_p("fB", 9, STRATA_MODE_VEGAS, 200000, 8, 0.1);
}
END_TEST

START_TEST(test_agree_vegas1d)
{
  agree("roos_arnold", 4, STRATA_MODE_VEGAS1D, 100000, 6);
  agree("morokoff_caflisch", 8, STRATA_MODE_VEGAS1D, 100000, 6);
}
END_TEST

START_TEST(test_agree_plain_qmc)
{
  agree("f1", 5, STRATA_MODE_PLAIN, 1000000, 3);
  agree("f3", 12, STRATA_MODE_PLAIN, 300000, 3);          /* generic kernel */
  agree("f1", 5, STRATA_MODE_QMC, 1 << 20, 3);
  agree("morokoff_caflisch", 8, STRATA_MODE_QMC, 1 << 20, 3);
  agree("f4", 7, STRATA_MODE_QMC, 1 << 18, 3);             /* generic kernel */
  rule = STRATA_QMC_LATTICE;
  agree("f1", 5, STRATA_MODE_QMC, 1 << 20, 3);
  agree("morokoff_caflisch", 8, STRATA_MODE_QMC, 1 << 20, 3);
  agree("f4", 7, STRATA_MODE_QMC, 1 << 18, 3);
  qmc_map = 1;
  agree("f4", 6, STRATA_MODE_VEGASPLUS, 200000, 8);
  rule = STRATA_QMC_SOBOL;
  agree("f2", 8, STRATA_MODE_VEGAS, 200000, 8);
  qmc_map = 0;
}
END_TEST

START_TEST(test_suite_on_gpu)
{
  /* Every built-in at its listed dimensions, defaults, on the GPU: 4 sigma. */
  strata_backend *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  for (size_t i = 0; strata_builtin_at(i); i++) {
    const strata_builtin *b = strata_builtin_at(i);
    for (int k = 0; k < 8 && b->list_dims[k]; k++) {
      strata_problem pr;
      test_problem(b->name, b->list_dims[k], &pr);
      strata_params p;
      strata_params_default(&p);
      strata_result r;
      ck_assert_msg(run_with(gpu, &pr, &p, &r) == STRATA_OK, "%s", strata_last_error());
      double exact = b->exact(pr.dim, b->params), pull = (r.integral - exact) / r.sigma;
      printf("gpu %-18s d=%-2d %.10g +- %.3g pull %+.2f %s\n", b->name, pr.dim, r.integral,
             r.sigma, pull, r.converged ? "converged" : "NOT converged");
      ck_assert_msg(fabs(pull) <= 4.0, "%s d=%d pull %g", b->name, pr.dim, pull);
    }
  }
  strata_backend_free(gpu);
}
END_TEST

START_TEST(test_nonfinite_on_gpu)
{
  strata_problem pr;
  test_problem("morokoff_caflisch", 2, &pr);
  pr.lower[0] = pr.lower[1] = -1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  strata_backend *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_result r;
  ck_assert_int_eq(run_with(gpu, &pr, &p, &r), STRATA_ENOTFINITE);
  ck_assert_msg(strstr(strata_last_error(), "returned NaN at x = (") != NULL, "%s",
                strata_last_error());
  strata_backend_free(gpu);
}
END_TEST

/* A user's source, compiled for the CPU by cc and for the GPU by NVRTC. */
static strata_source *user_source(const char *file, const char *fn, int extended, int ncomp)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", getenv("srcdir"), file);
  strata_source *s = NULL;
  int rc = strata_source_from_file(path, file, fn, extended, ncomp, &s);
  if (rc == STRATA_OK) rc = strata_source_build_cpu(s, 1);
  ck_assert_msg(rc == STRATA_OK, "%s", strata_last_error());
  return s;
}

/* A user's integrand on a built-in's domain. */
static strata_problem user_problem(const char *builtin, int dim, strata_source *src,
                                   const char *name)
{
  strata_problem pr;
  test_problem(builtin, dim, &pr);
  pr.f = src->f;
  pr.source = src;
  pr.name = name;
  return pr;
}

START_TEST(test_user_integrand_on_gpu)
{
  strata_source *src = user_source("examples/integrands/gauss.c", "gauss", 0, 1);
  const strata_problem pr = user_problem("f4", 6, src, "gauss (user)");
  strata_problem ref;
  test_problem("f4", 6, &ref);
  const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_PLAIN, STRATA_MODE_QMC};
  for (int m = 0; m < 3; m++) {
    strata_result user = agree_pr(&pr, modes[m], 200000, 6);
    /* The built-in and the user's copy on the GPU: nvcc and NVRTC compile
     * the same kernel, and may round differently in the last bit. */
    strata_backend *gpu = strata_backend_cuda_new(0);
    const strata_params p = fixed_params(modes[m], 200000, 6);
    strata_result b;
    ck_assert_int_eq(run_with(gpu, &ref, &p, &b), STRATA_OK);
    ck_assert_msg(rel(b.integral, user.integral) <= 1e-12, "user %.17g built-in %.17g",
                  user.integral, b.integral);
    strata_backend_free(gpu);
  }
  strata_source_free(src);
}
END_TEST

/* A dear integrand (2000 exponentials a sample): once an iteration has
 * shown what a sample costs, the kernel takes fewer samples a thread than
 * with a cheap one, to fill the GPU, and the results stay the CPU's. */
START_TEST(test_dear_integrand_on_gpu)
{
  strata_source *src = user_source("tests/integrands/ridge.c", "ridge", 0, 1);
  const strata_problem pr = user_problem("f4", 4, src, "ridge (user)");
  agree_pr(&pr, STRATA_MODE_VEGASPLUS, 100000, 4);
  strata_problem cheap;
  test_problem("f4", 4, &cheap);
  const strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, 100000, 4);
  strata_backend *gpu = strata_backend_cuda_new(0);
  strata_result r;
  ck_assert_msg(run_with(gpu, &cheap, &p, &r) == STRATA_OK, "%s", strata_last_error());
  const int cheap_chunk = strata_cuda_last_chunk(gpu);
  ck_assert_msg(run_with(gpu, &pr, &p, &r) == STRATA_OK, "%s", strata_last_error());
  const int dear_chunk = strata_cuda_last_chunk(gpu);
  ck_assert_msg(dear_chunk < cheap_chunk, "the ridge's last chunk %d, f4's %d", dear_chunk,
                cheap_chunk);
  strata_backend_free(gpu);
  /* Every iteration adapting, each queued behind the one before
   * (gpu/ahead.cu), on a device that has not yet seen what a sample costs:
   * the queued kernels are shaped by the cost known when they are queued,
   * not all in the first one's chunks. */
  strata_params all = p;
  all.maxiter = 5;
  all.adapt_iters = all.maxiter;
  gpu = strata_backend_cuda_new(0);
  ck_assert_msg(run_with(gpu, &pr, &all, &r) == STRATA_OK, "%s", strata_last_error());
  long long taken = 0, dropped = 0;
  strata_cuda_ahead_counts(gpu, &taken, &dropped);
  const int queued_chunk = strata_cuda_last_chunk(gpu);
  ck_assert_msg(taken >= 3 && queued_chunk < cheap_chunk,
                "adapting throughout: %lld queued kernels taken, the last chunk %d, f4's %d",
                taken, queued_chunk, cheap_chunk);
  strata_backend_free(gpu);
  strata_source_free(src);
}
END_TEST

/* A user's integrand of two tables, built here (the HDF5 loader has its
 * own tests): a 1-D profile on a uniform grid and a 2-D plane on a
 * non-uniform x grid.  *src is the caller's to free. */
static strata_problem tabulated_problem(strata_source **src)
{
  enum { NP = 101, NX = 37, NY = 21 };
  static double prof[NP], plane[NX * NY], xs[NX];
  for (int i = 0; i < NP; i++) prof[i] = 1.0 + 0.5 * sin(M_PI * i / (NP - 1.0));
  for (int i = 0; i < NX; i++) xs[i] = pow(i / (NX - 1.0), 1.5);
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) plane[i * NY + j] = 1.0 + xs[i] * cos(2.0 * j / (NY - 1.0));
  static const strata_table tab[2] = {
      {.v = prof, .nx = NP, .ny = 1, .rank = 1, .x0 = 0, .x1 = 1},
      {.v = plane, .x = xs, .nx = NX, .ny = NY, .rank = 2, .x0 = 0, .x1 = 1, .y0 = 0, .y1 = 1}};
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/integrands/tabulated.c", getenv("srcdir"));
  ck_assert_int_eq(strata_source_from_file(path, "tabulated.c", "tabulated", 1, 1, src), STRATA_OK);
  const char *names[2] = {"profile", "plane"};
  ck_assert_int_eq(strata_source_set_tables(*src, names, 2, 0), STRATA_OK);
  ck_assert_msg(strata_source_build_cpu(*src, 1) == STRATA_OK, "%s", strata_last_error());
  strata_problem pr;
  test_problem("f1", 3, &pr);
  pr.f = NULL;
  pr.fv = (*src)->fv;
  pr.ncomp = 1;
  pr.tables = tab;
  pr.ntables = 2;
  pr.source = *src;
  pr.name = "tabulated";
  return pr;
}

/* Tables copied to the device and interpolated inside the kernel. */
START_TEST(test_user_tables_on_gpu)
{
  strata_source *src = NULL;
  const strata_problem pr = tabulated_problem(&src);
  agree_pr(&pr, STRATA_MODE_VEGASPLUS, 200000, 6);
  agree_pr(&pr, STRATA_MODE_QMC, 1 << 18, 3);
  strata_source_free(src);
}
END_TEST

/* A vector integrand on the CPU and the GPU: every component's integral,
 * sigma and the covariance. */
static void agree_components(const strata_problem *pr, const strata_params *p)
{
  const int nc = pr->ncomp;
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = strata_backend_cuda_new(0);
  strata_result rc, rg;
  ck_assert_msg(run_with(cpu, pr, p, &rc) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(run_with(gpu, pr, p, &rg) == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(rg.ncomp, nc);
  for (int c = 0; c < nc; c++) {
    printf("%s ncomp %d adapt %+d %-7s comp %d cpu %.17g +- %.6g gpu %.17g +- %.6g\n", pr->name,
           nc, pr->adapt_comp, strata_mode_name(p->mode), c, rc.comp_integral[c],
           rc.comp_sigma[c], rg.comp_integral[c], rg.comp_sigma[c]);
    const double stol = p->mode == STRATA_MODE_QMC
                            ? 1e-12 * fabs(rc.comp_integral[c]) / rc.comp_sigma[c] : 1e-12;
    ck_assert_msg(rel(rc.comp_integral[c], rg.comp_integral[c]) <= 1e-12 &&
                      rel(rc.comp_sigma[c], rg.comp_sigma[c]) <= fmax(stol, 1e-12),
                  "%s, %d components, component %d: cpu %.17g +- %.17g gpu %.17g +- %.17g",
                  pr->name, nc, c, rc.comp_integral[c], rc.comp_sigma[c], rg.comp_integral[c],
                  rg.comp_sigma[c]);
    for (int b = 0; b < nc; b++) {
      const double scale = rc.comp_sigma[c] * rc.comp_sigma[b];
      ck_assert_msg(fabs(rc.comp_cov[c * nc + b] - rg.comp_cov[c * nc + b]) <=
                        1e-10 * scale + 1e-12 * fabs(rc.comp_integral[c] * rc.comp_integral[b]),
                    "cov(%d,%d): cpu %.17g gpu %.17g", c, b, rc.comp_cov[c * nc + b],
                    rg.comp_cov[c * nc + b]);
    }
  }
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}

/* Three components from one sample on the GPU, adapting to one component
 * and to the sum of magnitudes. */
START_TEST(test_user_ncomp_on_gpu)
{
  strata_source *src = user_source("tests/integrands/three.c", "three", 1, 3);
  for (int adapt = -1; adapt <= 1; adapt += 2) {
    strata_problem pr;
    test_problem("f4", 4, &pr);
    pr.f = NULL;
    pr.fv = src->fv;
    pr.ncomp = 3;
    pr.adapt_comp = adapt;
    pr.source = src;
    pr.name = "three";
    const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_QMC};
    for (int m = 0; m < 2; m++) {
      const strata_params p = fixed_params(modes[m], 200000, 6);
      agree_components(&pr, &p);
    }
  }
  strata_source_free(src);
}
END_TEST

/* Every component count the GPU's estimate has a kernel for. */
START_TEST(test_user_ncomp_counts_on_gpu)
{
  for (int nc = 2; nc <= STRATA_MAX_COMP; nc++) {
    strata_source *src = user_source("tests/integrands/moments.c", "moments", 1, nc);
    strata_problem pr;
    test_problem("f4", 5, &pr);
    pr.f = NULL;
    pr.fv = src->fv;
    pr.ncomp = nc;
    pr.nparams = 2;
    pr.params[0] = 100.0;
    pr.params[1] = nc;
    pr.adapt_comp = -1;
    pr.source = src;
    pr.name = "moments";
    const strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, 100000, 4);
    agree_components(&pr, &p);
    strata_source_free(src);
  }
}
END_TEST

/* C that cc takes but NVRTC (C++) does not: the error names the file and
 * line, before any sampling. */
START_TEST(test_user_nvrtc_error)
{
  char dir[] = "/tmp/strata-nvrtc-XXXXXX", path[128];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/cxx.c", dir);
  FILE *f = fopen(path, "w");
  fputs("double f(const double *x, int dim, const double *p)\n{\n  (void)dim; (void)p;\n"
        "  double new = x[0];\n  return new;\n}\n", f);
  fclose(f);
  strata_source *src = NULL;
  ck_assert_int_eq(strata_source_from_file(path, "cxx.c", "f", 0, 1, &src), STRATA_OK);
  ck_assert_msg(strata_source_build_cpu(src, 0) == STRATA_OK, "%s", strata_last_error());
  strata_problem pr;
  test_problem("f4", 3, &pr);
  pr.f = src->f;
  pr.nparams = 0;
  pr.source = src;
  strata_params p;
  strata_params_default(&p);
  p.neval = 10000;
  strata_backend *gpu = strata_backend_cuda_new(0);
  strata_result r;
  ck_assert_int_ne(run_with(gpu, &pr, &p, &r), STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "cxx.c(4)") && strstr(strata_last_error(), "nvrtc"),
                "%s", strata_last_error());
  strata_backend_free(gpu);
  strata_source_free(src);
  unlink(path);
  rmdir(dir);
}
END_TEST

/* The peak search's evaluator (backend.h's eval) on the device against
 * the CPU's: the same points give the same magnitudes to rounding (the
 * integrands' code is the same, compiled by nvcc or NVRTC), non-finite
 * values passed on, whatever the integrand's form and however the batch
 * is split. */
enum { EVAL_N = 384 };

/* Points spread over the cube (a Kronecker sequence), a cluster around its
 * centre, where the built-ins' peaks sit, and two corners. */
static void eval_points(int dim, double *y)
{
  for (int i = 0; i < EVAL_N; i++)
    for (int d = 0; d < dim; d++) {
      const double t = fmod(0.5 + (i + 1) * sqrt(2.0 + d), 1.0);
      y[i * dim + d] = i < EVAL_N / 2 ? t : 0.5 + 0.02 * (t - 0.5);
    }
  for (int d = 0; d < dim; d++) {
    y[d] = 0.0;
    y[dim + d] = 1.0;
  }
}

static void eval_agrees(const strata_problem *pr)
{
  static double y[EVAL_N * STRATA_MAX_DIM], fc[EVAL_N], fg[EVAL_N], parts[EVAL_N];
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  ck_assert_msg(gpu->eval != NULL, "the cuda backend has no evaluator");
  eval_points(pr->dim, y);
  ck_assert_int_eq(cpu->eval(cpu, pr, EVAL_N, y, fc), STRATA_OK);
  ck_assert_msg(gpu->eval(gpu, pr, EVAL_N, y, fg) == STRATA_OK, "%s", strata_last_error());
  int nonfinite = 0;
  double worst = 0.0;
  for (int i = 0; i < EVAL_N; i++) {
    if (!isfinite(fc[i])) {
      nonfinite++;
      ck_assert_msg(isnan(fc[i]) ? isnan(fg[i]) : fg[i] == fc[i],
                    "%s d=%d point %d: cpu %g, gpu %g", pr->name, pr->dim, i, fc[i], fg[i]);
      continue;
    }
    ck_assert_msg(fc[i] >= 0.0 && rel(fc[i], fg[i]) <= 1e-12,
                  "%s d=%d adapt_comp %d point %d: cpu %.17g, gpu %.17g", pr->name, pr->dim,
                  pr->adapt_comp, i, fc[i], fg[i]);
    worst = fmax(worst, rel(fc[i], fg[i]));
  }
  printf("eval %-18s d=%-2d adapt_comp %+d: %d points, %d not finite, worst rel %.1e\n", pr->name,
         pr->dim, pr->adapt_comp, EVAL_N, nonfinite, worst);
  /* Split into uneven batches, the device's buffers reused: the same bits. */
  const int cut = EVAL_N / 3;
  ck_assert_int_eq(gpu->eval(gpu, pr, cut, y, parts), STRATA_OK);
  ck_assert_int_eq(gpu->eval(gpu, pr, EVAL_N - cut, y + (size_t)cut * pr->dim, parts + cut),
                   STRATA_OK);
  ck_assert_msg(memcmp(parts, fg, sizeof fg) == 0, "%s: a split batch differs", pr->name);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}

START_TEST(test_eval_builtin_on_gpu)
{
  strata_problem pr;
  test_problem("f4", 6, &pr);
  eval_agrees(&pr);
  test_problem("fB", 9, &pr);
  eval_agrees(&pr);
  /* (Positive integrands: an oscillating one's zeros would make rounding
   * relative errors of any size.) */
  test_problem("f3", 12, &pr);
  eval_agrees(&pr);
  /* Negative coordinates: pow's NaN, passed on. */
  test_problem("morokoff_caflisch", 2, &pr);
  pr.lower[0] = -1.0;
  eval_agrees(&pr);
}
END_TEST

START_TEST(test_eval_user_on_gpu)
{
  strata_source *src = user_source("examples/integrands/gauss.c", "gauss", 0, 1);
  strata_problem pr = user_problem("f4", 6, src, "gauss (user)");
  eval_agrees(&pr);
  strata_source_free(src);
  /* A vector integrand: one component's magnitude, the sum of all. */
  src = user_source("tests/integrands/three.c", "three", 1, 3);
  test_problem("f4", 4, &pr);
  pr.f = NULL;
  pr.fv = src->fv;
  pr.ncomp = 3;
  pr.source = src;
  pr.name = "three";
  for (int adapt = -1; adapt < 3; adapt++) {
    pr.adapt_comp = adapt;
    eval_agrees(&pr);
  }
  strata_source_free(src);
  /* Tables, copied to the device by the evaluator itself. */
  pr = tabulated_problem(&src);
  eval_agrees(&pr);
  strata_source_free(src);
}
END_TEST

/* An integrand the device cannot run: the evaluator says so, as sampling does. */
static double host_only(const double *x, int dim, const double *p)
{
  (void)dim;
  (void)p;
  return x[0];
}

START_TEST(test_eval_host_only_integrand)
{
  strata_problem pr;
  test_problem("f4", 3, &pr);
  pr.f = host_only;
  pr.name = "host_only";
  strata_backend *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL && gpu->eval != NULL, "no cuda evaluator");
  double y[3] = {0.5, 0.5, 0.5}, f;
  ck_assert_int_eq(gpu->eval(gpu, &pr, 1, y, &f), STRATA_EBACKEND);
  ck_assert_msg(strstr(strata_last_error(), "'host_only' has no GPU version"), "%s",
                strata_last_error());
  strata_backend_free(gpu);
}
END_TEST

static strata_backend *gpu_backend(void) { return strata_backend_cuda_new(0); }

/* Device memory freed with bytes other than zero in it (0x5a5a...: a
 * finite double near 1e127), where the next allocations are likely to come
 * from. */
static void dirty_device_memory(void)
{
  void *p[16];
  int n = 0;
  for (size_t sz = (size_t)1 << 12; sz <= (size_t)1 << 27 && n < 16; sz <<= 1, n++) {
    ck_assert_int_eq(cudaMalloc(&p[n], sz), cudaSuccess);
    ck_assert_int_eq(cudaMemset(p[n], 0x5a, sz), cudaSuccess);
  }
  ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
  while (n > 0) cudaFree(p[--n]);
}

/* One backend serves run after run, as in a program that integrates
 * several problems: a run with more hypercubes, map cells or components
 * than the last gets its sums from the allocator, holding what other
 * buffers left there.  Every run, first iteration included, is still the
 * CPU's. */
START_TEST(test_backend_reused)
{
  strata_backend *gpu = strata_backend_cuda_new(0), *cpu = strata_backend_cpu_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_source *src = user_source("tests/integrands/three.c", "three", 1, 3);
  const struct { int dim, ncomp; long neval; } runs[] = {
      {3, 1, 20000}, {5, 1, 300000}, {4, 3, 100000}, {6, 1, 1000000}, {6, 3, 1000000},
      {8, 1, 2000000}};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    strata_problem pr;
    test_problem("f4", runs[i].dim, &pr);
    if (runs[i].ncomp > 1) {
      pr.f = NULL;
      pr.fv = src->fv;
      pr.ncomp = runs[i].ncomp;
      pr.adapt_comp = -1;
      pr.source = src;
      pr.name = "three";
    }
    strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, runs[i].neval, 4);
    p.skip = 0;
    dirty_device_memory();
    strata_result rc, rg;
    ck_assert_msg(run_with(cpu, &pr, &p, &rc) == STRATA_OK, "%s", strata_last_error());
    ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
    for (int c = 0; c < runs[i].ncomp; c++) {
      const double ic = runs[i].ncomp > 1 ? rc.comp_integral[c] : rc.integral,
                   ig = runs[i].ncomp > 1 ? rg.comp_integral[c] : rg.integral,
                   sc = runs[i].ncomp > 1 ? rc.comp_sigma[c] : rc.sigma,
                   sg = runs[i].ncomp > 1 ? rg.comp_sigma[c] : rg.sigma;
      printf("reused backend, run %zu d=%d comp %d: cpu %.17g +- %.6g gpu %.17g +- %.6g\n", i,
             runs[i].dim, c, ic, sc, ig, sg);
      ck_assert_msg(rel(ic, ig) <= 1e-12 && rel(sc, sg) <= 1e-12,
                    "run %zu (d=%d, component %d) on a reused backend: cpu %.17g +- %.17g, "
                    "gpu %.17g +- %.17g", i, runs[i].dim, c, ic, sc, ig, sg);
    }
  }
  strata_source_free(src);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}
END_TEST

/* Ranks that share the GPU: the map sums and levels go through host memory
 * and every rank's device adapts from them, yet every rank holds the same
 * state and the result is one rank's to 1e-12.  With 3 ranks the middle one's
 * slice comes out empty after the first allocation (the peak's hypercube
 * holds most samples), and it adapts with the others all the same. */
START_TEST(test_ranks_on_gpu)
{
  strata_problem pr;
  test_problem("f4", 6, &pr);
  const strata_mode modes[] = {STRATA_MODE_VEGASPLUS, STRATA_MODE_VEGAS, STRATA_MODE_VEGAS1D};
  for (int m = 0; m < 3; m++) {
    const strata_params p = fixed_params(modes[m], 300000, 8);
    static testcomm sh;
    testcomm_rank one[1], on_ranks[3];
    testcomm_run_on(&sh, 1, &pr, &p, one, gpu_backend);
    ck_assert_msg(one[0].rc == STRATA_OK, "%s", strata_last_error());
    for (int n = 2; n <= 3; n++) {
      /* (A rank's slice moves: hypercubes it never held before must find
       * their sums at zero, whatever the allocator handed over.) */
      dirty_device_memory();
      testcomm_run_on(&sh, n, &pr, &p, on_ranks, gpu_backend);
      for (int r = 0; r < n; r++) {
        ck_assert_msg(on_ranks[r].rc == STRATA_OK, "%s", strata_last_error());
        ck_assert(on_ranks[r].state == on_ranks[0].state);
        ck_assert_msg(rel(on_ranks[r].res.integral, one[0].res.integral) <= 1e-12 &&
                          rel(on_ranks[r].res.sigma, one[0].res.sigma) <= 1e-12,
                      "%s, %d ranks: %.17g +- %.17g, one rank %.17g +- %.17g",
                      strata_mode_name(p.mode), n, on_ranks[r].res.integral, on_ranks[r].res.sigma,
                      one[0].res.integral, one[0].res.sigma);
      }
    }
  }
}
END_TEST

/* A long run's finer stratification (src/average.h, strata_ravg_finer):
 * from iteration 21 the gaussian samples 10^4 hypercubes, not 8^4, their
 * allocation made on the host from the levels each frozen iteration
 * brings back.  The GPU's result is the CPU's to rounding, with the same
 * hypercubes, on one rank and on two (whose devices add their parts on
 * the host for those iterations, not among themselves). */
START_TEST(test_finer_on_gpu)
{
  strata_problem pr;
  test_problem("f4", 4, &pr);
  strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, 20000, 26);
  p.adapt_iters = 20;
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = gpu_backend();
  strata_result rc, rg;
  ck_assert_msg(run_with(cpu, &pr, &p, &rc) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("finer, f4 d=4: cpu %.17g +- %.6g (%lld hypercubes); gpu %.17g +- %.6g (%lld)\n",
         rc.integral, rc.sigma, (long long)rc.nhcube, rg.integral, rg.sigma,
         (long long)rg.nhcube);
  ck_assert_int_eq(rc.nhcube, 10000);
  ck_assert_int_eq(rg.nhcube, rc.nhcube);
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-12 && rel(rc.sigma, rg.sigma) <= 1e-12,
                "cpu %.17g +- %.17g, gpu %.17g +- %.17g", rc.integral, rc.sigma, rg.integral,
                rg.sigma);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
  static testcomm sh;
  testcomm_rank on_ranks[2];
  testcomm_run_on(&sh, 2, &pr, &p, on_ranks, gpu_backend);
  for (int r = 0; r < 2; r++) {
    ck_assert_msg(on_ranks[r].rc == STRATA_OK, "%s", strata_last_error());
    ck_assert_int_eq(on_ranks[r].res.nhcube, rc.nhcube);
    ck_assert_msg(rel(on_ranks[r].res.integral, rg.integral) <= 1e-12 &&
                      rel(on_ranks[r].res.sigma, rg.sigma) <= 1e-12,
                  "2 ranks: %.17g +- %.17g, one rank %.17g +- %.17g", on_ranks[r].res.integral,
                  on_ranks[r].res.sigma, rg.integral, rg.sigma);
  }
}
END_TEST

/* The peak search on the GPU (peaks.search = on): the search evaluates
 * through the device, and the sampling kernel keeps every weight, whose
 * largest the device sorts out for k-hat and the search's next starts.
 * On one mode (f4, a gaussian), where no channel is made, the CPU and the
 * GPU do the same work: the same modes, evaluations, k-hat and result to
 * rounding, on one rank and on two. */
static strata_params search_params(long neval, int maxiter)
{
  strata_params p = fixed_params(STRATA_MODE_VEGASPLUS, neval, maxiter);
  p.peaks.search = STRATA_PEAKS_ON;
  return p;
}

/* The same run on two ranks of the GPU: the same modes and channels, and
 * k-hat and the integral within tol of one rank's. */
static void two_ranks_agree(const strata_problem *pr, const strata_params *p,
                            const strata_result *one, double tol)
{
  static testcomm sh;
  testcomm_rank on_ranks[2];
  testcomm_run_on(&sh, 2, pr, p, on_ranks, gpu_backend);
  for (int r = 0; r < 2; r++) {
    const strata_result *t = &on_ranks[r].res;
    ck_assert_msg(on_ranks[r].rc == STRATA_OK, "%s", strata_last_error());
    ck_assert_msg(t->nmodes == one->nmodes && t->nchannels == one->nchannels &&
                      rel(t->khat, one->khat) <= tol && rel(t->integral, one->integral) <= tol,
                  "2 ranks: %d modes, %d channels, k-hat %.17g, %.17g; one rank %d, %d, %.17g, "
                  "%.17g", t->nmodes, t->nchannels, t->khat, t->integral, one->nmodes,
                  one->nchannels, one->khat, one->integral);
  }
}

static void search_one_mode(const strata_problem *pr_in)
{
  const strata_problem pr = *pr_in;
  const strata_params p = search_params(20000, 8);
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = gpu_backend();
  strata_result rc, rg;
  ck_assert_msg(run_with(cpu, &pr, &p, &rc) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("search, %s d=6: cpu %.17g +- %.6g k-hat %.6f modes %d evals %lld; gpu %.17g +- %.6g "
         "k-hat %.6f modes %d evals %lld\n", pr.name, rc.integral, rc.sigma, rc.khat, rc.nmodes,
         (long long)rc.search_evals, rg.integral, rg.sigma, rg.khat, rg.nmodes,
         (long long)rg.search_evals);
  ck_assert_int_eq(rc.peaks_searched, 1);
  ck_assert_int_eq(rg.peaks_searched, 1);
  ck_assert_int_ge(rc.nmodes, 1);
  ck_assert_int_eq(rc.nmodes, rg.nmodes);
  for (int j = 0; j < rc.nmodes; j++)
    for (int d = 0; d < pr.dim; d++)
      ck_assert_msg(fabs(rc.modes[j].x[d] - rg.modes[j].x[d]) <= 1e-9,
                    "mode %d axis %d: cpu %.17g gpu %.17g", j, d, rc.modes[j].x[d],
                    rg.modes[j].x[d]);
  ck_assert_int_eq(rc.search_evals, rg.search_evals);
  ck_assert_int_eq(rc.neval, rg.neval);
  ck_assert_int_eq(rc.nchannels, 1);
  ck_assert_int_eq(rg.nchannels, 1);
  ck_assert_msg(isfinite(rc.khat) && rel(rc.khat, rg.khat) <= 1e-9, "k-hat cpu %.17g gpu %.17g",
                rc.khat, rg.khat);
  ck_assert_int_eq(rc.khat_itn, rg.khat_itn);
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-12 && rel(rc.sigma, rg.sigma) <= 1e-12,
                "cpu %.17g +- %.17g, gpu %.17g +- %.17g", rc.integral, rc.sigma, rg.integral,
                rg.sigma);
  two_ranks_agree(&pr, &p, &rg, 1e-12);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}

/* Its frozen iterations (the second half) draw packed uniforms (d = 6),
 * through the built-in's kernel of any dimension and the user's NVRTC
 * kernel, whose dimension is built in. */
START_TEST(test_search_one_mode_on_gpu)
{
  strata_problem pr;
  test_problem("f4", 6, &pr);
  search_one_mode(&pr);
  strata_source *src = user_source("examples/integrands/gauss.c", "gauss", 0, 1);
  const strata_problem user = user_problem("f4", 6, src, "gauss (user)");
  search_one_mode(&user);
  strata_source_free(src);
}
END_TEST

/* A searching run keeps every weight of a rank's iteration on the device,
 * up to 2^28 of them: an iteration of 3e8 samples on one rank is refused
 * with one line that names the key and the limit, before the iteration
 * samples. */
START_TEST(test_search_weights_limit_on_gpu)
{
  strata_problem pr;
  test_problem("f4", 4, &pr);
  const strata_params p = search_params(300000000, 2);
  strata_backend *gpu = gpu_backend();
  strata_result r;
  ck_assert_int_ne(run_with(gpu, &pr, &p, &r), STRATA_OK);
  const char *msg = strata_last_error();
  ck_assert_msg(strstr(msg, "peaks.search") && strstr(msg, "at most 268435456 per rank") &&
                    !strchr(msg, '\n'),
                "%s", msg);
  strata_backend_free(gpu);
}
END_TEST

/* Five gaussians off the diagonal (tests/integrands/nb_five.c, d = 7),
 * whose modes the map alone does not cover: the search gives them
 * channels, whose points the device draws and weighs as the CPU does, to
 * the rounding of the device's exp and log.  The same iterations on both
 * backends find the same modes, make the same channels with the same
 * weights, and agree in the result; on two ranks as on one; and a run to
 * a tolerance claims within 3 sigma of the exact value. */
static strata_problem five_peaks(strata_source **src)
{
  *src = user_source("tests/integrands/nb_five.c", "peaks", 0, 1);
  strata_problem pr;
  test_problem("f4", 7, &pr);
  pr.f = (*src)->f;
  pr.source = *src;
  pr.nparams = 0;
  pr.name = "nb_five (user)";
  for (int d = 0; d < 7; d++) {
    pr.lower[d] = 0.0;
    pr.upper[d] = 1.0;
  }
  return pr;
}

START_TEST(test_channels_on_gpu)
{
  const double exact = 0.8650582544908783;
  strata_source *src;
  const strata_problem pr = five_peaks(&src);
  strata_params p = search_params(30000, 12);
  p.seed = 2;
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = gpu_backend();
  strata_result rc, rg;
  ck_assert_msg(run_with(cpu, &pr, &p, &rc) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("channels, nb_five d=7: cpu %.17g +- %.6g modes %d channels %d alpha_map %.6f k-hat "
         "%.4f; gpu %.17g +- %.6g modes %d channels %d alpha_map %.6f k-hat %.4f; rel %.1e\n",
         rc.integral, rc.sigma, rc.nmodes, rc.nchannels, rc.alpha_map, rc.khat, rg.integral,
         rg.sigma, rg.nmodes, rg.nchannels, rg.alpha_map, rg.khat, rel(rc.integral, rg.integral));
  ck_assert_int_ge(rc.nchannels, 3);
  ck_assert_int_eq(rc.nmodes, rg.nmodes);
  ck_assert_int_eq(rc.nchannels, rg.nchannels);
  ck_assert_int_eq(rc.search_evals, rg.search_evals);
  ck_assert_int_eq(rc.neval, rg.neval);
  ck_assert_msg(rel(rc.alpha_map, rg.alpha_map) <= 1e-8, "alpha_map cpu %.17g gpu %.17g",
                rc.alpha_map, rg.alpha_map);
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-8 && rel(rc.sigma, rg.sigma) <= 1e-6,
                "cpu %.17g +- %.17g, gpu %.17g +- %.17g", rc.integral, rc.sigma, rg.integral,
                rg.sigma);
  two_ranks_agree(&pr, &p, &rg, 1e-8);
  /* The defaults, to a tolerance: the same verdict, and a true claim. */
  strata_params_default(&p);
  p.peaks.search = STRATA_PEAKS_ON;
  p.neval = 30000;
  p.epsrel = 1e-2;
  p.maxiter = 30;
  p.seed = 2;
  ck_assert_msg(run_with(cpu, &pr, &p, &rc) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(run_with(gpu, &pr, &p, &rg) == STRATA_OK, "%s", strata_last_error());
  printf("channels, nb_five d=7 to 1e-2: cpu %.10g +- %.3g converged %d in %d; gpu %.10g +- "
         "%.3g (%.2f sigma) converged %d in %d, channels %d %s\n", rc.integral, rc.sigma,
         rc.converged, rc.iterations, rg.integral, rg.sigma, (rg.integral - exact) / rg.sigma,
         rg.converged, rg.iterations, rg.nchannels, rg.peaks_reason);
  ck_assert_int_eq(rc.converged, rg.converged);
  ck_assert_int_eq(rc.iterations, rg.iterations);
  ck_assert_msg(rel(rc.integral, rg.integral) <= 1e-8, "cpu %.17g gpu %.17g", rc.integral,
                rg.integral);
  ck_assert_int_eq(rg.converged, 1);
  ck_assert_msg(fabs(rg.integral - exact) <= 3.0 * rg.sigma, "%.17g +- %.3g, exact %.17g",
                rg.integral, rg.sigma, exact);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
  strata_source_free(src);
}
END_TEST

/* One rank's adapting iterations overlap (gpu/ahead.cu): each one's
 * sampling is queued before the record of the one before is read, with
 * the shift and map scale the device takes from that record.  A run whose
 * every iteration adapts and that stops on its tolerance: the queued
 * iterations are taken and the run is the CPU's; a run left after three
 * steps, with the fourth queued: the next run on the same backend drops
 * it, starts its sums from zero and is the CPU's; and with
 * STRATA_CUDA_AHEAD=0 nothing is queued and the result is the same. */
START_TEST(test_ahead_on_gpu)
{
  strata_problem a, b;
  test_problem("f4", 6, &a);
  test_problem("f2", 8, &b);
  strata_params pa = fixed_params(STRATA_MODE_VEGASPLUS, 200000, 20);
  pa.adapt_iters = pa.maxiter;
  pa.epsrel = 1e-3;
  const strata_params pb = fixed_params(STRATA_MODE_VEGASPLUS, 100000, 8);
  strata_backend *cpu = strata_backend_cpu_new(0), *gpu = strata_backend_cuda_new(0);
  ck_assert_msg(gpu != NULL, "%s", strata_last_error());
  strata_result ca, cb, ga, gb, ga0;
  ck_assert_int_eq(run_with(cpu, &a, &pa, &ca), STRATA_OK);
  ck_assert_int_eq(run_with(cpu, &b, &pb, &cb), STRATA_OK);
  ck_assert_msg(run_with(gpu, &a, &pa, &ga) == STRATA_OK, "%s", strata_last_error());
  long long taken, dropped;
  strata_cuda_ahead_counts(gpu, &taken, &dropped);
  printf("ahead: run a %d iterations (converged %d): %lld taken, %lld dropped; "
         "cpu %.17g gpu %.17g\n", ga.iterations, ga.converged, taken, dropped, ca.integral,
         ga.integral);
  ck_assert_int_eq(ca.iterations, ga.iterations);
  ck_assert_msg(ga.converged == 1 && ga.iterations < pa.maxiter, "run a did not stop early");
  ck_assert_msg(taken >= ga.iterations / 2, "%lld of %d iterations queued ahead", taken,
                ga.iterations);
  ck_assert_msg(rel(ca.integral, ga.integral) <= 1e-12 && rel(ca.sigma, ga.sigma) <= 1e-12,
                "cpu %.17g +- %.17g, gpu %.17g +- %.17g", ca.integral, ca.sigma, ga.integral,
                ga.sigma);
  /* Three steps of a run that would go on: the fourth is in flight when
   * the run is freed. */
  strata_comm *comm = strata_comm_serial();
  strata_run *r = NULL;
  strata_params pl = pa;
  pl.epsrel = 0;
  ck_assert_int_eq(strata_run_alloc(&b, &pl, gpu, comm, &r), STRATA_OK);
  for (int k = 0; k < 3; k++) ck_assert_int_eq(strata_run_step(r, NULL), STRATA_OK);
  strata_run_free(r);
  strata_comm_free(comm);
  strata_cuda_ahead_counts(gpu, &taken, &dropped);
  long long taken_b, dropped_b;
  ck_assert_msg(run_with(gpu, &b, &pb, &gb) == STRATA_OK, "%s", strata_last_error());
  strata_cuda_ahead_counts(gpu, &taken_b, &dropped_b);
  printf("ahead: run b: %lld taken, %lld dropped; cpu %.17g gpu %.17g\n", taken_b - taken,
         dropped_b - dropped, cb.integral, gb.integral);
  ck_assert_int_eq(dropped_b - dropped, 1);
  ck_assert_int_eq(taken_b - taken, pb.adapt_iters - 1);
  ck_assert_msg(rel(cb.integral, gb.integral) <= 1e-12 && rel(cb.sigma, gb.sigma) <= 1e-12,
                "cpu %.17g +- %.17g, gpu %.17g +- %.17g", cb.integral, cb.sigma, gb.integral,
                gb.sigma);
  strata_backend_free(gpu);
  setenv("STRATA_CUDA_AHEAD", "0", 1);
  gpu = strata_backend_cuda_new(0);
  unsetenv("STRATA_CUDA_AHEAD");
  ck_assert_msg(run_with(gpu, &a, &pa, &ga0) == STRATA_OK, "%s", strata_last_error());
  strata_cuda_ahead_counts(gpu, &taken, &dropped);
  ck_assert_int_eq(taken, 0);
  ck_assert_int_eq(ga0.iterations, ga.iterations);
  ck_assert_msg(rel(ga0.integral, ga.integral) <= 1e-12 && rel(ga0.sigma, ga.sigma) <= 1e-12,
                "queued %.17g +- %.17g, not queued %.17g +- %.17g", ga.integral, ga.sigma,
                ga0.integral, ga0.sigma);
  strata_backend_free(cpu);
  strata_backend_free(gpu);
}
END_TEST

START_TEST(test_bad_device)
{
  ck_assert(strata_backend_cuda_new(1000) == NULL);
  ck_assert(strstr(strata_last_error(), "device 1000 does not exist") != NULL);
}
END_TEST

int main(void)
{
  if (strata_cuda_device_count() == 0) {
    printf("SKIP: no CUDA device visible (CUDA_VISIBLE_DEVICES=%s); the GPU tests run on a "
           "machine with a GPU\n",
           getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return 77;
  }
  /* A cache of this run's own: the first use of every kernel compiles. */
  char cache[] = "/tmp/strata-cuda-cache-XXXXXX";
  if (mkdtemp(cache)) setenv("STRATA_CACHE_DIR", cache, 1);
  Suite *s = suite_create("cuda");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_builtin_needs_no_nvrtc);
  tcase_add_test(tc, test_agree_vegasplus);
  tcase_add_test(tc, test_agree_vegas);
  tcase_add_test(tc, test_agree_vegas1d);
  tcase_add_test(tc, test_agree_plain_qmc);
  tcase_add_test(tc, test_suite_on_gpu);
  tcase_add_test(tc, test_nonfinite_on_gpu);
  tcase_add_test(tc, test_user_integrand_on_gpu);
  tcase_add_test(tc, test_dear_integrand_on_gpu);
  tcase_add_test(tc, test_user_nvrtc_error);
  tcase_add_test(tc, test_user_tables_on_gpu);
  tcase_add_test(tc, test_user_ncomp_on_gpu);
  tcase_add_test(tc, test_user_ncomp_counts_on_gpu);
  tcase_add_test(tc, test_ranks_on_gpu);
  tcase_add_test(tc, test_finer_on_gpu);
  tcase_add_test(tc, test_backend_reused);
  tcase_add_test(tc, test_ahead_on_gpu);
  tcase_add_test(tc, test_bad_device);
  suite_add_tcase(s, tc);
  /* The peak search's evaluator: CK_RUN_CASE=eval runs it alone. */
  TCase *te = tcase_create("eval");
  tcase_set_timeout(te, 600);
  tcase_add_test(te, test_eval_builtin_on_gpu);
  tcase_add_test(te, test_eval_user_on_gpu);
  tcase_add_test(te, test_eval_host_only_integrand);
  suite_add_tcase(s, te);
  /* The peak search on the GPU: CK_RUN_CASE=peaks. */
  TCase *tp = tcase_create("peaks");
  tcase_set_timeout(tp, 600);
  tcase_add_test(tp, test_search_one_mode_on_gpu);
  tcase_add_test(tp, test_search_weights_limit_on_gpu);
  tcase_add_test(tp, test_channels_on_gpu);
  suite_add_tcase(s, tp);
  /* No fork: a CUDA context does not survive fork(), and main() has already
   * asked the driver for its devices. */
  return test_run_suite_fork(s, 0);
}
