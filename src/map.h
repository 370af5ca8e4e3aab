/* The adaptive importance map (VEGAS grid).
 *
 * Edges are kept in unit coordinates u in [0,1] per axis and scaled to the
 * user's box on use, so one set of edges can serve every axis (vegas1d) and
 * the map never depends on the box. */
#ifndef STRATA_MAP_H
#define STRATA_MAP_H
#include <stddef.h>
#include <stdint.h>

#include "maplookup.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int dim;
  int ninc;
  int shared;           /* one map for all axes (vegas1d) */
  double *edges;        /* naxes() * (ninc + 1) unit edges */
  double lower[32], width[32]; /* STRATA_MAX_DIM */
  uint64_t generation;  /* a new stamp (stamp.h) whenever the edges change, here or on a
                         * backend's device: what keeps a copy compares it */
  double *scratch;      /* strata_map_refine's, kept between calls */
} strata_map;

/* How many increments an iteration of neval samples can train.  An
 * increment's weight is a mean of (J f)^2 over samples spread through the
 * other axes, mostly noise from a few of them, and a map trained on noise
 * runs away: every increment gets STRATA_MAP_SAMPLES_PER_INC samples on
 * average, and beyond STRATA_MAP_COARSE_INC increments each further one
 * STRATA_MAP_SAMPLES_PER_FINE_INC, so that the ceiling ninc = 1000 is
 * reached at neval = 1e6, the finest map from there on.  A map of 1000
 * increments trained on 1e4 samples ends runs many sigma low where one of
 * 100 stays within its errors (doc/design.md, "The map's resolution"). */
#define STRATA_MAP_SAMPLES_PER_INC 100
#define STRATA_MAP_COARSE_INC 100
#define STRATA_MAP_SAMPLES_PER_FINE_INC 1000

/* The increments per axis a map of dim axes trained on neval samples per
 * iteration uses: the rule above, never more than ninc (the ceiling), at
 * least 1.  A function of the job alone (max_nhcube its cap on the
 * hypercubes), so every backend and rank count agrees.
 * With fewer increments than two per stratum along an axis (in two and
 * three dimensions at small neval, where few other axes add noise to the
 * training) the strata split each increment evenly and the map cannot
 * shape the density inside a stratum: a peak's tail then lies in a sliver
 * of a wide outer increment that a stratum's 2 to 4 samples miss (fB in
 * d=2 at 1e3 samples: doc/design.md, "The map's resolution").  So the map
 * has at least two increments per stratum.
 * In one dimension the map keeps one increment and the stratification
 * (neval / 4 strata, doc/algorithm.md) adapts alone.  There each step of
 * the integrand lies in a single stratum of a few samples, and only the
 * VEGAS+ allocation, fed by earlier iterations, puts enough samples there;
 * a map that moves carries the step into another stratum every iteration,
 * and its creeping edge leaves slivers few samples reach: a step in d=1
 * reads far beyond its errors with a map and within them without one, at
 * the price of a larger error on smooth peaks (doc/design.md, "The map's
 * resolution"). */
int strata_map_ninc_for(int ninc, int64_t neval, int dim, int64_t max_nhcube);

/* Edges given from outside (a checkpoint, another run's map): the first
 * axis, counted from 1, whose naxes x (ninc + 1) edges do not increase
 * from 0 to 1, or 0 when every axis does. */
int strata_map_edges_bad_axis(const double *edges, int naxes, int ninc);

strata_map *strata_map_alloc(int dim, int ninc, int shared);
void strata_map_free(strata_map *g);
/* Uniform map on the box [lower, upper]. */
void strata_map_init(strata_map *g, const double *lower, const double *upper);
int strata_map_copy(strata_map *dst, const strata_map *src);

static inline int strata_map_naxes(const strata_map *g)
{
  return g->shared ? 1 : g->dim;
}

static inline const double *strata_map_axis_edges(const strata_map *g, int d)
{
  return g->edges + (size_t)(g->shared ? 0 : d) * (size_t)(g->ninc + 1);
}

/* y in (0,1)^dim to x in the box; returns the Jacobian (box volume included)
 * and, per axis, the increment that y fell in. */
static inline double strata_map_apply(const strata_map *g, const double *y,
                                     double *x, int *inc)
{
  double jac = 1.0;
  for (int d = 0; d < g->dim; d++)
    inc[d] = strata_map_axis(strata_map_axis_edges(g, d), g->ninc, g->lower[d], g->width[d], y[d],
                             &x[d], &jac);
  return jac;
}

/* Move the edges after an adapting iteration.  wsum and count hold, per axis
 * and increment, the summed (J f)^2 and the number of samples (dim * ninc
 * each).  alpha damps the change; alpha = 0 leaves the map alone.  An
 * increment with fewer than STRATA_MAP_MIN_SAMPLES samples (maprefine.h)
 * keeps its width. */
void strata_map_refine(strata_map *g, const double *wsum, const double *count,
                        double alpha);

#ifdef __cplusplus
}
#endif
#endif
