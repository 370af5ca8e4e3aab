/* Shared by the tests: a problem for a built-in integrand on its default
 * domain, and the Check runner boilerplate. */
#ifndef STRATA_TESTUTIL_H
#define STRATA_TESTUTIL_H
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"

static inline const strata_builtin *test_problem(const char *name, int dim,
                                                 strata_problem *pr)
{
  const strata_builtin *b = strata_builtin_find(name);
  ck_assert_msg(b != NULL, "no built-in %s", name);
  *pr = (strata_problem){.f = b->f, .dim = dim, .nparams = b->nparams, .name = b->name};
  for (int d = 0; d < dim; d++) {
    pr->lower[d] = b->lower;
    pr->upper[d] = b->upper;
  }
  for (int i = 0; i < b->nparams; i++) pr->params[i] = b->params[i];
  return b;
}

/* Equal bits (an average not yet made is NaN in both runs). */
static inline int test_same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

/* A fresh directory /tmp/strata-test-TAG-XXXXXX in dir, and its removal. */
static inline void test_tmpdir(char *dir, size_t len, const char *tag)
{
  snprintf(dir, len, "/tmp/strata-test-%s-XXXXXX", tag);
  ck_assert(mkdtemp(dir) != NULL);
}

static inline void test_rmdir(const char *dir)
{
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert(system(cmd) == 0);
}

static inline int test_run_suite_fork(Suite *s, int fork)
{
  SRunner *sr = srunner_create(s);
  if (!fork) srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static inline int test_run_suite(Suite *s) { return test_run_suite_fork(s, 1); }
#endif
