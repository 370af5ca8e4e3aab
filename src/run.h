/* The integration driver: iterations, adaptation and stopping.  It owns the
 * map, the stratification and the running average of its iterations
 * (average.h), and reaches samples only through a backend and peers only
 * through a communicator. */
#ifndef STRATA_RUN_H
#define STRATA_RUN_H
#include "average.h"
#include "backend.h"
#include "comm.h"
#include "map.h"
#include "peakrun.h"
#include "plan.h"
#include "qmc.h"
#include "split.h"
#include "state.h"
#include "stats.h"
#include "strat.h"

typedef struct strata_run {
  strata_problem problem;
  strata_params params;
  strata_backend *backend;  /* borrowed */
  strata_comm *comm;        /* borrowed */
  strata_map *map;
  strata_strat *strat;      /* hypercubes; plain and qmc: their cells */
  strata_qmc *qmc;          /* qmc, and the vegas modes with qmc_map: the point sets */
  strata_strat *qcells;     /* qmc_map: the cells of the frozen-map iterations */
  strata_strat *fine;       /* long runs: the finer stratification of the frozen map's
                             * iterations (strata_run_finer); else NULL */
  uint64_t fine_of;         /* the generation of the coarse allocation fine's counts
                             * were carried over from */
  int64_t hcubes;           /* the hypercubes of the last iteration (0: none yet) */
  int packed_uniforms;      /* iterations that do not train the map may draw packed
                             * uniforms (plan.h's ubits); 0 for a run resumed from a
                             * state saved by a strata that drew 32 bits always */
  double *buf;              /* the iterations' sums, as the plan lays them out (plan.c) */
  double *levels;           /* vegas+: every hypercube's share of the next allocation, as
                             * its level (shares.h) */
  int64_t *slices;          /* [ranks + 1]: the ranks' slices of hypercubes */
  strata_split *split;      /* several ranks: their split of the samples, where their
                             * backends exchange */
  /* [ncomp]: the components' shifts of the coming iteration and of the
   * one after it, which its plan points to. */
  double *cshift, *next_cshift;
  strata_ravg ravg;         /* the history and its running average */
  int ncomp;                /* 1 for a scalar integrand, else problem.ncomp */
  double *creport;          /* vector integrands: [maxiter, or 1 beyond STRATA_MAX_COMP
                             * components][ncomp][STRATA_COMP_ROW], the
                             * rows strata_iteration.comp points to; else NULL */
  int64_t neval_total;
  int converged;
  double time_s;
  double sample_time_s;     /* this rank's time inside the backend, last iteration */
  double comm_time_s;       /* this rank's time combining sums with its peers, all iterations */
  int check_ranks;          /* debug: after every iteration, compare state hashes across ranks */
  int error_agreed;         /* the last error is every rank's, with the same message */
  int sync_rc;              /* a failed copy of the state from the backend's device */
  /* The peak search, its channels and its gate (peakrun.h); NULL where
   * off, and then peaks_note says why where it was asked for automatically. */
  strata_peakrun *peaks;
  char peaks_note[200];
} strata_run;

/* Whether iteration k samples the finer stratification, fine
 * (strata_ravg_finer; not while the peak search's channels draw). */
int strata_run_finer(const strata_run *r, int k);
/* Checks the problem and parameters; STRATA_OK and *out set, or an error. */
int strata_run_alloc(const strata_problem *pr, const strata_params *p,
                     strata_backend *be, strata_comm *comm, strata_run **out);
void strata_run_free(strata_run *r);

/* A backend that adapts on its device (backend.h) leaves the run's own map
 * and allocation behind; this brings them up to date.  The readers below
 * call it themselves. */
int strata_run_sync(strata_run *r);
/* The map's unit edges, naxes x (ninc + 1), up to date. */
const double *strata_run_edges(const strata_run *r);
/* The run's state; the pointers are the run's own, valid until its next step. */
void strata_run_state_get(const strata_run *r, strata_run_state *st);
/* The increments per axis the run's map samples at until its first split
 * (strata_map_base_ninc): what a checkpoint of a format before the splits
 * holds. */
int strata_run_map_base(const strata_run *r);
/* The map's group (map.h) at iteration k: the splits of the refinements
 * made before it. */
int strata_run_map_group(const strata_run *r, int k);
/* Continues from a saved state.  Refuses a state that does not fit this run
 * (sizes, another number of components, a map that is not increasing from 0
 * to 1, an allocation below 2 per hypercube, more iterations than maxiter,
 * totals that do not add up, component records that disagree with the
 * history),
 * then copies it (a map of strata_run_map_base increments as every group-th
 * edge of the run's, map.h) and replays the history; cb (may be NULL) receives every
 * replayed iteration as it was reported when first run. */
int strata_run_restore(strata_run *r, const strata_run_state *st, strata_iteration_cb cb,
                       void *ctx);
/* A 64-bit hash (FNV-1a) of everything the next iteration depends on: map,
 * allocation, history (without wall times) and counters.  Equal on every
 * rank when all is well. */
uint64_t strata_run_state_hash(const strata_run *r);

/* One iteration; fills *out (may be NULL). */
int strata_run_step(strata_run *r, strata_iteration *out);
/* Nonzero once converged or out of iterations or evaluations. */
int strata_run_finished(const strata_run *r);
void strata_run_result(const strata_run *r, strata_result *res);
/* The first n components' results into the arrays that are not NULL, and
 * their covariance into cov[a * n + b]. */
void strata_run_components(const strata_run *r, int n, double *integral, double *sigma,
                           double *chi2_dof, double *q, double *cov);
/* What the run's loop does after each iteration (the session: agree with
 * the other ranks, record, report progress): STRATA_OK, or an error that
 * ends the loop; setting *stop ends it after this iteration. */
typedef int (*strata_run_after)(strata_run *r, const strata_iteration *it, int *stop,
                                void *ctx);
/* The run loop, the one every caller's run goes through (api/session.c):
 * steps until finished, an error (a step's, or after's), or a stop. */
int strata_run_loop(strata_run *r, strata_run_after after, void *ctx);
/* strata_run_loop with cb (may be NULL) after each iteration, and the
 * result into res (may be NULL): for tests and benchmarks of the run
 * alone. */
int strata_run_integrate(strata_run *r, strata_iteration_cb cb, void *ctx,
                         strata_result *res);
/* This rank's hypercubes: a contiguous slice holding about 1/size of the
 * samples. */
void strata_run_slice(const strata_strat *s, int rank, int size, int64_t *h0,
                      int64_t *h1);
#endif
