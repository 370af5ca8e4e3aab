/* A run's peaks (doc/peaks.md): the search's rounds, the channels that
 * sample the modes it found beside the map, and the gate a claim must
 * pass.  run.c calls these around each iteration; with the search off none
 * of them is called and the run is today's. */
#ifndef STRATA_PEAKRUN_H
#define STRATA_PEAKRUN_H
#include <stddef.h>
#include <stdint.h>

#include "channels.h"
#include "khat.h"
#include "search.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A kept iteration fails the gate when its k-hat is above the limit and
 * its largest weight is at least this many times the tail's threshold,
 * the (M+1)-th largest: a weight far above the rest (doc/peaks.md, "The
 * claim"). */
#define STRATA_PEAKS_FAR 10.0

struct strata_run;
struct strata_plan;
struct strata_backend;

typedef struct strata_peakrun {
  strata_search *search;
  strata_channels ch;
  int sobol_done;           /* the Sobol' round (and the known points') ran */
  int active;               /* channels are sampled (a mode the map does not cover) */
  strata_khat_top top;      /* the iteration's largest weights, every rank's */
  double *chsum;            /* the plan's chsum */
  size_t chsum_len;
  double *gather;           /* the ranks' lists, for the merge */
  size_t gather_len;
  /* Per iteration k (maxiter of each): k-hat of its weights and its points
   * S; its channels; whether a mode channel drew fewer than n_min points;
   * whether a new channel started with it (the average restarts there;
   * maxiter + 1 of these, the last a channel added after the last one). */
  double *khat, *npoints;
  double *spread;           /* its largest weight over the tail's threshold (the M+1-th) */
  int *nchannels, *short_of, *restart;
  /* Channel c's (c >= 1) part of the last iteration's estimate: the
   * mean of f alpha_c / g over its points, then over the estimate, its
   * balance-heuristic share (NaN before it drew any points). */
  double mean[STRATA_MAX_CHANNELS + 2], share[STRATA_MAX_CHANNELS + 2];
  int64_t search_evals;
  double *state;            /* strata_peakrun_state_get's, kept for the state's reader */
  size_t state_len;
} strata_peakrun;

/* Whether run r searches for peaks: *note (200 bytes) says why not where
 * the search was asked for automatically and cannot run; an error where it
 * was asked for explicitly and cannot. */
int strata_peakrun_wanted(const strata_problem *pr, const strata_params *p,
                          const struct strata_backend *be, int *on, char *note);
int strata_peakrun_alloc(const strata_problem *pr, const strata_params *p, strata_peakrun **out);
void strata_peakrun_free(strata_peakrun *pk);

/* Before an iteration's plan: the Sobol' round before the first, the
 * counts of the channels and the map's allocation rescaled to its share. */
int strata_peakrun_before(struct strata_run *r);
/* The plan's peak fields. */
void strata_peakrun_plan(struct strata_run *r, struct strata_plan *p);
/* After the iteration's sums are combined: every rank's largest weights,
 * the channels' part of the estimate into the plan's part, k-hat. */
int strata_peakrun_combine(struct strata_run *r, struct strata_plan *p);
/* After the iteration is recorded and adapted: the channels' weights, a
 * search round from its largest weights where it adapted, new channels. */
int strata_peakrun_after(struct strata_run *r, const struct strata_plan *p);
/* Iteration k (0-based) starts the average afresh: a new channel began
 * with it. */
int strata_peakrun_restarts(const struct strata_run *r, int k);

/* The gate on the run as it stands: 1 passes; 0 with *why (one line,
 * size bytes) and *budget (evaluations per iteration, or 0). */
int strata_peakrun_gate(const struct strata_run *r, char *why, size_t size, double *budget);
void strata_peakrun_result(const struct strata_run *r, strata_result *res);
void strata_peakrun_iteration(const struct strata_run *r, int k, strata_iteration *it);

/* The state for checkpoints (strata_run_state's peaks). */
size_t strata_peakrun_state_size(const struct strata_run *r);
/* Into the run's own buffer, valid until the next call; NULL without memory. */
const double *strata_peakrun_state_get(const struct strata_run *r);
int strata_peakrun_state_set(struct strata_run *r, const double *buf, size_t n);
/* The search's evaluations a saved state holds: the run's total is its
 * iterations' and these. */
int64_t strata_peakrun_state_evals(const double *buf, size_t n);
#ifdef __cplusplus
}
#endif
#endif
