/* Users' integrands on the CPU: compiled at run time, cached, and equal to
 * the built-in integrands they copy.  The GPU side is in test_cuda. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "strata/strata.h"
#include "testutil.h"
#include "usercode.h"

static char dir[256];

/* Every test gets a fresh cache and scratch directory. */
static void setup(void)
{
  test_tmpdir(dir, sizeof dir, "usercode");
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("STRATA_CACHE_DIR", cache, 1);
}

static void teardown(void) { test_rmdir(dir); }

static const char *write_src(const char *name, const char *text)
{
  static char path[400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static strata_source *build(const char *path, const char *fn, int *rc)
{
  strata_source *s = NULL;
  *rc = strata_source_from_file(path, path, fn, 0, 1, &s);
  if (*rc == STRATA_OK) *rc = strata_source_build_cpu(s, 0);
  return s;
}

static void integrate(strata_fn f, const char *builtin, int dim, strata_result *res)
{
  strata_problem pr;
  test_problem(builtin, dim, &pr);
  pr.f = f;
  strata_params p;
  strata_params_default(&p);
  p.neval = 200000;
  p.maxiter = 6;
  p.epsrel = 0;
  p.seed = 7;
  p.nthreads = 2;
  ck_assert_msg(strata_integrate(&pr, &p, NULL, NULL, res) == STRATA_OK, "%s", strata_last_error());
}

static void assert_same_bits(strata_fn user, strata_fn ref, const char *builtin, int dim)
{
  strata_result a, b;
  integrate(user, builtin, dim, &a);
  integrate(ref, builtin, dim, &b);
  ck_assert_msg(!memcmp(&a.integral, &b.integral, sizeof(double)) &&
                    !memcmp(&a.sigma, &b.sigma, sizeof(double)),
                "%s d=%d: user %.17g +- %.17g, built-in %.17g +- %.17g", builtin, dim,
                a.integral, a.sigma, b.integral, b.sigma);
}

/* The example a user would write, from the source tree, against f4. */
START_TEST(user_copy_of_f4_gives_the_builtin_bits)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/integrands/gauss.c", getenv("srcdir"));
  int rc;
  strata_source *s = build(path, "gauss", &rc);
  ck_assert_msg(rc == STRATA_OK, "%s", strata_last_error());
  ck_assert_ptr_nonnull(s->f);
  assert_same_bits(s->f, strata_builtin_find("f4")->f, "f4", 6);
  strata_source_free(s);
}
END_TEST

/* The built-in suite's own source compiles as a user integrand: one text
 * serves both. */
START_TEST(builtin_suite_source_compiles_as_user_code)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/src/integrands_fn.h", getenv("srcdir"));
  static const struct { const char *fn, *name; int dim; } cases[] = {
      {"strata_f2_fn", "f2", 6}, {"strata_f3_fn", "f3", 5}, {"strata_fB_fn", "fB", 9},
      {"strata_mc_fn", "morokoff_caflisch", 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc;
    strata_source *s = build(path, cases[i].fn, &rc);
    ck_assert_msg(rc == STRATA_OK, "%s", strata_last_error());
    assert_same_bits(s->f, strata_builtin_find(cases[i].name)->f, cases[i].name, cases[i].dim);
    strata_source_free(s);
  }
}
END_TEST

static void assert_error(const char *file, const char *text, const char *fn,
                         const char *needle1, const char *needle2)
{
  const char *path = write_src(file, text);
  int rc;
  strata_source *s = build(path, fn, &rc);
  ck_assert_int_ne(rc, STRATA_OK);
  const char *msg = strata_last_error();
  ck_assert_msg(strstr(msg, needle1) && strstr(msg, needle2), "message '%s' lacks '%s' / '%s'",
                msg, needle1, needle2);
  ck_assert_msg(!strchr(msg, '\n'), "not one line: %s", msg);
  strata_source_free(s);
}

START_TEST(compile_errors_name_the_file_and_line)
{
  assert_error("syntax.c", "#include <math.h>\n\ndouble f(const double *x, int dim, const double *p)\n"
               "{\n  return x[0] +;\n}\n", "f", "syntax.c:5:", "does not compile");
  assert_error("missing.c", "double f(const double *x, int dim, const double *p)\n"
               "{ return x[0]; }\n", "g", "missing.c", "no function 'g'");
  assert_error("signature.c", "double f(double *x, int dim)\n{ return x[0] * dim; }\n", "f",
               "signature.c", "no function 'f' of the form double f(const double *x");
  int rc;
  char path[400];
  snprintf(path, sizeof path, "%s/absent.c", dir);
  strata_source *s = build(path, "f", &rc);
  ck_assert_int_ne(rc, STRATA_OK);
  ck_assert_ptr_nonnull(strstr(strata_last_error(), "absent.c"));
  strata_source_free(s);
}
END_TEST

START_TEST(inline_body_integrates)
{
  strata_source *s = NULL;
  ck_assert_int_eq(strata_source_from_body("return exp(-x[0] * x[0]);", "job.ini: integral.body",
                                           0, 1, &s), STRATA_OK);
  ck_assert_msg(strata_source_build_cpu(s, 0) == STRATA_OK, "%s", strata_last_error());
  strata_problem pr = {.f = s->f, .dim = 2, .upper = {1, 1}, .name = "inline"};
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  p.epsrel = 1e-5;
  strata_result res;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &res), STRATA_OK);
  const double exact = 0.5 * sqrt(M_PI) * erf(1.0);
  ck_assert_msg(fabs(res.integral - exact) < 4 * res.sigma && res.sigma < 1e-4,
                "%.10g +- %.2g, exact %.10g", res.integral, res.sigma, exact);
  strata_source_free(s);
}
END_TEST

/* The hash names what the code computes (job identity, the GPU's kernel
 * cache): equal for equal code, and it follows the tables set later,
 * their names and their contents. */
START_TEST(source_hash_follows_code_and_tables)
{
  strata_source *a = NULL, *b = NULL, *c = NULL;
  ck_assert_int_eq(strata_source_from_body("return x[0];", "a", 1, 1, &a), STRATA_OK);
  ck_assert_int_eq(strata_source_from_body("return x[0];", "a", 1, 1, &b), STRATA_OK);
  ck_assert_int_eq(strata_source_from_body("return x[1];", "a", 1, 1, &c), STRATA_OK);
  ck_assert(strata_source_hash(a) == strata_source_hash(b));
  ck_assert(strata_source_hash(a) != strata_source_hash(c));
  const char *pk[1] = {"pk"}, *other[1] = {"other"};
  ck_assert_int_eq(strata_source_set_tables(a, pk, 1, 7), STRATA_OK);
  ck_assert(strata_source_hash(a) != strata_source_hash(b));
  ck_assert_int_eq(strata_source_set_tables(b, pk, 1, 7), STRATA_OK);
  ck_assert(strata_source_hash(a) == strata_source_hash(b));
  ck_assert_int_eq(strata_source_set_tables(b, pk, 1, 8), STRATA_OK);
  ck_assert(strata_source_hash(a) != strata_source_hash(b));
  ck_assert_int_eq(strata_source_set_tables(b, other, 1, 7), STRATA_OK);
  ck_assert(strata_source_hash(a) != strata_source_hash(b));
  strata_source_free(a);
  strata_source_free(b);
  strata_source_free(c);
}
END_TEST

static const char gauss_src[] = "#include <math.h>\n"
                                "double g(const double *x, int dim, const double *p)\n"
                                "{\n  double s = 0;\n  for (int i = 0; i < dim; i++) s += x[i] * x[i];\n"
                                "  return exp(-p[0] * s);\n}\n";

START_TEST(cache_hits_misses_and_repairs)
{
  const char *path = write_src("g.c", gauss_src);
  int rc;
  strata_source *s = build(path, "g", &rc);
  ck_assert_int_eq(rc, STRATA_OK);
  ck_assert_int_eq(s->cpu_cached, 0);
  double x[2] = {0.3, 0.4}, p[1] = {2.0};
  const double want = exp(-2.0 * 0.25);
  ck_assert_double_eq_tol(s->f(x, 2, p), want, 1e-15);
  strata_source_free(s);

  s = build(path, "g", &rc);
  ck_assert_int_eq(rc, STRATA_OK);
  ck_assert_int_eq(s->cpu_cached, 1);
  strata_source_free(s);

  /* Another function name is another unit. */
  write_src("g.c", "#include <math.h>\ndouble h(const double *x, int dim, const double *p)\n"
                   "{ (void)dim; return p[0] * x[0]; }\n");
  s = build(path, "h", &rc);
  ck_assert_int_eq(rc, STRATA_OK);
  ck_assert_int_eq(s->cpu_cached, 0);
  ck_assert_double_eq_tol(s->f(x, 2, p), 0.6, 1e-15);
  strata_source_free(s);

  /* A damaged entry (its key intact) is rebuilt, not trusted. */
  write_src("g.c", gauss_src);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "for f in '%s'/cache/cpu-*.so; do echo garbage > \"$f\"; done", dir);
  ck_assert_int_eq(system(cmd), 0);
  s = build(path, "g", &rc);
  ck_assert_msg(rc == STRATA_OK, "%s", strata_last_error());
  ck_assert_double_eq_tol(s->f(x, 2, p), want, 1e-15);
  strata_source_free(s);
}
END_TEST

/* Ranks of one job start together and find an empty cache: each may
 * compile, none may see a half-written entry. */
START_TEST(concurrent_builds_share_the_cache)
{
  const char *path = write_src("c.c", gauss_src);
  enum { N = 6 };
  pid_t pid[N];
  for (int i = 0; i < N; i++) {
    pid[i] = fork();
    ck_assert_int_ge(pid[i], 0);
    if (pid[i] == 0) {
      int rc;
      strata_source *s = build(path, "g", &rc);
      double x[1] = {0.5}, p[1] = {1.0};
      if (rc != STRATA_OK) fprintf(stderr, "builder %d: %s\n", i, strata_last_error());
      _exit(rc == STRATA_OK && fabs(s->f(x, 1, p) - exp(-0.25)) < 1e-15 ? 0 : 1);
    }
  }
  for (int i = 0; i < N; i++) {
    int st;
    ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "builder %d failed", i);
  }
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls '%s/cache' | grep tmp)\"", dir);
  ck_assert_msg(system(cmd) == 0, "temporary files left in the cache");
}
END_TEST

int main(void)
{
  Suite *s = suite_create("usercode");
  TCase *tc = tcase_create("cpu");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, user_copy_of_f4_gives_the_builtin_bits);
  tcase_add_test(tc, builtin_suite_source_compiles_as_user_code);
  tcase_add_test(tc, compile_errors_name_the_file_and_line);
  tcase_add_test(tc, inline_body_integrates);
  tcase_add_test(tc, source_hash_follows_code_and_tables);
  tcase_add_test(tc, cache_hits_misses_and_repairs);
  tcase_add_test(tc, concurrent_builds_share_the_cache);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
