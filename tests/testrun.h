/* Shared by the tests that drive a run step by step and checkpoint it: a
 * run on the CPU backend and one rank, and its checkpoint as the program
 * writes one. */
#ifndef STRATA_TESTRUN_H
#define STRATA_TESTRUN_H
#include "checkpoint.h"
#include "jobdef.h"
#include "backend_cpu.h"
#include "run.h"
#include "testutil.h"

typedef struct {
  strata_backend *be;
  strata_comm *comm;
  strata_run *r;
  strata_problem pr;
  strata_params p;
} fixture;

static inline void fixture_open(fixture *f, const strata_problem *pr, const strata_params *p)
{
  f->pr = *pr;
  f->p = *p;
  f->be = strata_backend_cpu_new(2);
  f->comm = strata_comm_serial();
  ck_assert_msg(strata_run_alloc(&f->pr, &f->p, f->be, f->comm, &f->r) == STRATA_OK, "%s",
                strata_last_error());
}

/* A long run of fn on the unit cube in dim dimensions: 2e4 samples an
 * iteration, 20 of them adapting, maxiter in all, no tolerance. */
static inline void fixture_open_long(fixture *f, strata_fn fn, int dim, int maxiter,
                                     uint64_t seed)
{
  strata_problem pr = {.f = fn, .dim = dim, .name = "long"};
  for (int d = 0; d < dim; d++) pr.upper[d] = 1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 20000;
  p.maxiter = maxiter;
  p.adapt_iters = 20;
  p.epsrel = 0;
  p.nthreads = 2;
  p.seed = seed;
  fixture_open(f, &pr, &p);
}

static inline void teardown(fixture *f)
{
  strata_run_free(f->r);
  strata_comm_free(f->comm);
  strata_backend_free(f->be);
}

static inline void write_ckpt(const char *path, fixture *f)
{
  char def[STRATA_JOBDEF_MAX];
  ck_assert(strata_jobdef_text(&f->pr, &f->p, def, sizeof def) == STRATA_OK);
  strata_ckpt_info info = {def, "test", "cpu", "host", 1, 2};
  strata_run_state st;
  strata_run_state_get(f->r, &st);
  ck_assert_msg(strata_checkpoint_write(path, &st, &info, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
}
#endif
