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
