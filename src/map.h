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
  int group;            /* the map is every group-th edge (a power of 2 dividing ninc), the
                         * edges between spaced evenly: it samples and trains at
                         * strata_map_res() = ninc / group increments (strata_map_group_for) */
  double *scratch;      /* strata_map_refine's, kept between calls */
} strata_map;

/* How many increments an iteration of neval samples can train.  An
 * increment's weight is a mean of (J f)^2 over samples spread through the
 * other axes, mostly noise from a few of them, and a map trained on noise
 * runs away: every increment gets STRATA_MAP_SAMPLES_PER_INC samples on
 * average, and beyond STRATA_MAP_COARSE_INC increments each further one
 * STRATA_MAP_SAMPLES_PER_FINE_INC.  A map of 1000 increments trained on
 * 1e4 samples from the start ends runs many sigma low where one of 100
 * stays within its errors (doc/design.md, "The map's resolution"). */
#define STRATA_MAP_SAMPLES_PER_INC 100
#define STRATA_MAP_COARSE_INC 100
#define STRATA_MAP_SAMPLES_PER_FINE_INC 1000

/* The increments per axis the first iterations train, from the rule
 * above: never more than ninc (the ceiling), at least 1.  A function of
 * the job alone (max_nhcube its cap on the hypercubes), so every backend
 * and rank count agrees.
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
int strata_map_base_ninc(int ninc, int64_t neval, int dim, int64_t max_nhcube);

/* A map at the base resolution needs about ten iterations to settle, and
 * from then on a map of about 100 increments holds the error per
 * iteration where it is, or lets it rise (doc/design.md, "The map's
 * resolution"); a finer map trained from the start runs away where a
 * settled one split in place does not.  So after the refinement that
 * follows adapting iteration STRATA_MAP_SPLIT_FIRST every increment splits
 * in two, and so it does after every STRATA_MAP_SPLIT_EVERY-th one after
 * it (after iterations 10, 11, 12, ...: the first refinement at the new
 * resolution comes an iteration after its split), while one iteration gives each new increment at least
 * strata_map_split_floor(dim) samples and the ceiling ninc allows.  Until
 * its first split a map is the base rule's map, by the same operations:
 * the same points, weights and edges to the bit. */
#define STRATA_MAP_SPLIT_FIRST 10
#define STRATA_MAP_SPLIT_EVERY 1

/* The fewest samples one iteration gives an increment after a split,
 * STRATA_MAP_SPLIT_FLOOR x 2^((dim - 2) / 3): the noise the map could run
 * away on comes from the other D - 1 axes and grows with D, and the
 * increments need about twice the samples every three dimensions
 * (doc/design.md, "The map's resolution"). */
#define STRATA_MAP_SPLIT_FLOOR 10.0
double strata_map_split_floor(int dim);

/* The most splits a map of base increments trained on neval samples an
 * iteration makes: its resolution stays at most maxinc and gives an
 * increment at least strata_map_split_floor(dim) samples an iteration. */
int strata_map_max_splits(int base, int64_t neval, int dim, int maxinc);

/* The splits a map has made once the refinement after adapting iteration
 * itn (counted from 1) is done, of at most maxsplits: a function of the
 * iteration, so a resumed run samples and refines as the uninterrupted
 * one. */
int strata_map_splits_at(int itn, int maxsplits);

/* The increments per axis the map is stored with: the base resolution
 * with every split it can make (split nonzero; 0 for a map that never
 * splits), so that no buffer grows during a run, whatever its
 * iterations. */
int strata_map_ninc_for(int ninc, int64_t neval, int dim, int64_t max_nhcube, int split);

/* The group of a map stored with n increments from base after splits
 * splits: n / (base << splits). */
int strata_map_group_for(int n, int base, int splits);

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

/* The increments the map samples and trains at: ninc / group.  The map
 * sums (wsum, count) are laid out per axis over these, dim x res. */
static inline int strata_map_res(const strata_map *g)
{
  return g->ninc / g->group;
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
    inc[d] = strata_map_axis(strata_map_axis_edges(g, d), strata_map_res(g), g->group,
                             g->lower[d], g->width[d], y[d], &x[d], &jac);
  return jac;
}

/* Move the edges after an adapting iteration.  wsum and count hold, per axis
 * and increment of the map's resolution, the summed (J f)^2 and the number
 * of samples (dim * strata_map_res(g) each).  alpha damps the change;
 * alpha = 0 leaves the map alone.  The map's edges (every g->group-th)
 * move as those of a map stored at its resolution would, by the same
 * operations, and the edges between are spaced evenly again, so that a
 * split (a smaller group) changes no point.  An increment with fewer than
 * STRATA_MAP_MIN_SAMPLES samples (maprefine.h) keeps its width. */
void strata_map_refine(strata_map *g, const double *wsum, const double *count,
                        double alpha);

#ifdef __cplusplus
}
#endif
#endif
