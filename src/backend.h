/* The narrow interface between the algorithm and whatever evaluates samples
 * (threads of this CPU, a GPU).  A backend receives each iteration's
 * plan (plan.h) and carries it out: it samples its slice into the buffers
 * the plan names, reduces a stratified iteration to the few numbers the
 * driver needs, and adapts the map and the allocation where the plan says.
 * The backends live beside src/: cpu/ (OpenMP threads) and gpu/ (CUDA).
 * A GPU keeps an iteration's sums, the map and the allocation on the
 * device: the driver sees the estimate, and the full state only when it
 * asks (pull).  The arithmetic both sides share is in hcube.h,
 * maplookup.h, maprefine.h and shares.h. */
#ifndef STRATA_BACKEND_H
#define STRATA_BACKEND_H
#include "map.h"
#include "philox.h"
#include "plan.h"
#include "qmc.h"
#include "split.h"
#include "strat.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_backend strata_backend;
struct strata_backend {
  const char *name;
  void *self;
  /* Returns STRATA_OK, or an error code with strata_last_error() set (for a
   * non-finite integrand value: the point, iteration and sample index). */
  int (*sample)(strata_backend *b, strata_plan *plan);
  /* After an adapting plan: refines map and, with plan->reallocate,
   * reallocates s, where plan->adapt_at says.  A backend that adapted on
   * its device keeps the newer map and allocation there, and the host's
   * copies fall behind until pull; it keeps the record of what it holds.
   * On the host, from the plan's wsum, wcount and level. */
  int (*adapt)(strata_backend *b, const strata_plan *plan, strata_map *map, strata_strat *s);
  /* Brings whatever of map and s the backend holds newer copies of back
   * into them (nothing where it holds none), for whatever reads them on
   * the host; NULL where they never leave the host. */
  int (*pull)(strata_backend *b, strata_map *g, strata_strat *s);
  void (*free)(strata_backend *b);
  /* What the backend can do, which the plans read:
   * keeps_state: it keeps a stratified iteration where it sampled: the
   * estimate, and, where it holds every sum that adapts, the adaptation;
   * exchanges: it combines a stratified iteration with its peers itself
   * (its devices' own exchange). */
  int keeps_state;
  int exchanges;
  /* The peak search's evaluator (search.h): at the n points y of the unit
   * cube (y[i * dim + d]), mapped onto pr's box, the magnitude of the value
   * that adapts the map (a scalar's |f|; a vector's component adapt_comp,
   * or the sum of its components' magnitudes) into f[i], each point's
   * value the same however the batch is split.  Values that are not finite
   * are passed on as they are.  NULL where the backend has none. */
  int (*eval)(strata_backend *b, const strata_problem *pr, int64_t n, const double *y,
              double *f);
};

/* What a backend that samples into host memory does with a stratified
 * plan's sums (s1, s2, c1, c2 filled): the part of the estimate, the first
 * overflowing hypercube and the levels, as the plan asks. */
int strata_backend_host_part(strata_plan *plan);
/* The adaptation on the host's map and allocation. */
int strata_backend_host_adapt(strata_backend *b, const strata_plan *plan, strata_map *map,
                              strata_strat *s);

void strata_backend_free(strata_backend *b);

/* A backend's eval as the search's strata_eval_fn: ctx is one of these. */
typedef struct {
  strata_backend *backend;
  const strata_problem *problem;
} strata_backend_evaluator;
int strata_backend_evaluate(void *ctx, int64_t n, const double *y, double *f);

/* The pseudo-random point y of global sample i in the hypercube with
 * coordinates k: what every backend draws, so that a reported point is the
 * one that was evaluated. */
static inline void strata_sample_point(const strata_plan *plan, const int *k, int64_t i,
                                       double *u, double *y)
{
  const int dim = plan->problem->dim;
  const double invM = 1.0 / plan->strat->M;
  strata_sample_uniforms(plan->seed, plan->iteration, (uint64_t)i, dim, plan->ubits,
                         plan->ushift, u);
  for (int d = 0; d < dim; d++) y[d] = (k[d] + u[d]) * invM;
}

/* The point y in (0,1)^dim of global sample i, computed alone: for messages
 * about one sample, not for sampling. */
void strata_backend_point(const strata_plan *plan, int64_t i, double *y);
/* With the peak search's channels: alpha_0 g_map(z) at z of the unit cube,
 * the map's density there (its inverse's Jacobian, the hypercube's share
 * of the points) times its share of them; 0 outside the cube. */
double strata_backend_map_density(const strata_plan *plan, const double *z);
/* The box's volume: the map's Jacobian holds it, the channels' densities
 * (per unit of the unit cube) do not. */
double strata_backend_box_volume(const strata_plan *plan);

/* Names the first non-finite value: shared by the backends so the user sees
 * one message whatever ran the sample. */
int strata_backend_report_nonfinite(const strata_plan *plan, double fx,
                                    int64_t index, const double *x);
#ifdef __cplusplus
}
#endif
#endif
