/* The peak search: local ascents of log |f| that find the integrand's modes
 * (doc/peaks.md, "The search").  The search decides where ascents start and
 * where they go; it never evaluates the integrand itself: it hands batches
 * of points in the unit cube to an evaluator (points in, values out) that
 * the run gets from its backend, so the same search runs on every backend.
 * It draws no random numbers: its modes are a function of the candidates it
 * is given, in their order, so the same seed gives the same modes on any
 * number of ranks, threads or devices. */
#ifndef STRATA_SEARCH_H
#define STRATA_SEARCH_H
#include <stddef.h>
#include <stdint.h>

#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Evaluates |f| (of the quantity that adapts) at n points y (unit cube,
 * y[i * dim + d]) into f[i]; returns STRATA_OK or an error code with
 * strata_last_error() set.  One call is one batch: the backend spreads it
 * over its threads or its device. */
typedef int (*strata_eval_fn)(void *ctx, int64_t n, const double *y, double *f);

/* A mode (a peak found): the point m where log |f| has a local maximum, its value, and its
 * Laplace approximation A(x) = exp(logf - (x - m)^T H (x - m) / 2).  A
 * maximum counts as a mode only where log |f| curves at least as much as
 * the floor (16, an sd of 0.25) along some direction. */
typedef struct {
  double m[STRATA_MAX_DIM];   /* unit cube; dim used */
  double logf;         /* log |f(m)| */
  double hess[STRATA_MAX_DIM * STRATA_MAX_DIM]; /* H, the Hessian of -log |f| at m, eigenvalues floored */
  double chol[STRATA_MAX_DIM * STRATA_MAX_DIM]; /* lower Cholesky factor L of H^-1 (L L^T = H^-1) */
  double logmass;      /* log of the Laplace mass |f(m)| (2 pi)^(d/2) det(H)^(-1/2) */
  int known;           /* 1: its ascent started from a point the user gave */
} strata_peak;

typedef struct {
  int starts;          /* Sobol' points before the warm-up (peaks.starts) */
  int ascents;         /* ascents per round (peaks.ascents); the Sobol' round 2x */
  int max_ascents;     /* ascents in a run, at most */
  int max_modes;       /* modes in a run, at most */
  int max_steps;       /* steps of one ascent */
  double min_mass;     /* a mode's Laplace mass relative to the largest, at least */
} strata_search_params;

void strata_search_params_default(strata_search_params *p);

typedef struct strata_search strata_search;

int strata_search_alloc(int dim, const strata_search_params *p, strata_search **out);
void strata_search_free(strata_search *s);

/* One round: from the n candidates y[n * dim] with their values f[n] (|f|,
 * already evaluated; a candidate's rank in the arrays breaks ties), the
 * ones the modes found so far explain least (the residual of doc/peaks.md)
 * start at most `ascents` ascents, which evaluate through eval in
 * batches; a candidate that shares a hill with a start already taken (f
 * at their midpoint no lower than at both) is passed over, and where that
 * leaves the round short, the rest start once the first ascents' modes are
 * merged.  New modes are merged in start order.  known != 0: the
 * candidates are the user's points, each of which starts an ascent.
 * Returns STRATA_OK or eval's error. */
int strata_search_round(strata_search *s, int64_t n, const double *y, const double *f,
                        int known, strata_eval_fn eval, void *ctx);
/* The Sobol' round before the warm-up: the scrambled Sobol' set of
 * p->starts points keyed by seed, evaluated through eval, then a round. */
int strata_search_sobol(strata_search *s, uint64_t seed, strata_eval_fn eval, void *ctx);

int strata_search_nmodes(const strata_search *s);
const strata_peak *strata_search_mode(const strata_search *s, int j);
int64_t strata_search_evals(const strata_search *s);  /* evaluations so far */
int strata_search_rounds(const strata_search *s);     /* rounds so far */
int strata_search_nascents(const strata_search *s);   /* ascents so far */
/* log of the Laplace mixture sum_j A_j(y): how much of f the modes explain. */
double strata_search_explained(const strata_search *s, const double *y);

/* How much of mode j's density a product of per-axis densities can give
 * (doc/peaks.md, "Which modes get a channel"): of the modes' Laplace
 * mixture sum_k A_k, the product of its marginals at m_j over its density
 * there, both normalised to 1.  1 for one mode of diagonal H. */
double strata_search_product_cover(const strata_search *s, int j);

/* The search's state as doubles, for checkpoints: strata_search_state_size
 * doubles into buf; restore refuses a buffer of another size or dim. */
size_t strata_search_state_size(const strata_search *s);
void strata_search_state_get(const strata_search *s, double *buf);
int strata_search_state_set(strata_search *s, const double *buf, size_t n);
#ifdef __cplusplus
}
#endif
#endif
