/* The integration driver: iterations, adaptation, averaging and stopping.
 * It owns the map and the stratification, and reaches samples only through a
 * backend and peers only through a communicator. */
#ifndef STRATA_RUN_H
#define STRATA_RUN_H
#include "backend.h"
#include "comm.h"
#include "grid.h"
#include "stats.h"
#include "strat.h"

typedef struct {
  double integral, sigma;
  int64_t neval;
} strata_itn_record;

typedef struct strata_run {
  strata_problem problem;
  strata_params params;
  strata_backend *backend;  /* borrowed */
  strata_comm *comm;        /* borrowed */
  strata_grid *grid;
  strata_strat *strat;
  double *buf;              /* s1, s2 (nhcube each), wsum, wcount (dim*ninc each) */
  strata_itn_record *hist;  /* [maxiter] */
  int itn;                  /* iterations done */
  int first_kept;           /* first iteration in the average (skip, or a restart) */
  int64_t neval_total;
  int converged;
  strata_average avg;
  double time_s;
  double sample_time_s;     /* this rank's time inside the backend, last iteration */
} strata_run;

/* Checks the problem and parameters; STRATA_OK and *out set, or an error. */
int strata_run_alloc(const strata_problem *pr, const strata_params *p,
                     strata_backend *be, strata_comm *comm, strata_run **out);
void strata_run_free(strata_run *r);
/* Recomputes the average, the restarts and convergence from hist[0..itn):
 * for a run whose history was restored (checkpoints). */
void strata_run_replay(strata_run *r);
/* One iteration; fills *out (may be NULL). */
int strata_run_step(strata_run *r, strata_iteration *out);
/* Nonzero once converged or out of iterations or evaluations. */
int strata_run_finished(const strata_run *r);
void strata_run_result(const strata_run *r, strata_result *res);
/* Steps until finished, calling cb after each iteration. */
int strata_run_integrate(strata_run *r, strata_iteration_cb cb, void *ctx,
                         strata_result *res);
/* This rank's hypercubes: a contiguous slice holding about 1/size of the
 * samples. */
void strata_run_slice(const strata_strat *s, int rank, int size, int64_t *h0,
                      int64_t *h1);
#endif
