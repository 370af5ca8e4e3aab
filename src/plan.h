/* An iteration's plan: every decision about how one iteration runs, made
 * once, before any sample is drawn, from the run's state and what its
 * backend can do (doc/design.md, "The iteration plan").  The backend
 * receives the plan with the buffers it names, and decides none of it
 * again: it reads it.
 *
 *   what is sampled   the cells, pseudo-random or QMC points, the estimator
 *   whose samples     this rank's slice of the hypercubes, or of the samples
 *   combined where    the host adds the ranks' cells or parts, or the
 *                     backends exchange them among themselves
 *   adapted where     nowhere (frozen), on the host, or by the backend
 *                     where it sampled
 *   next, early       whether the next iteration may start before this one
 *                     is combined
 *
 * strata_run_step (run.c) reads: plan -> sample -> combine -> record ->
 * adapt. */
#ifndef STRATA_PLAN_H
#define STRATA_PLAN_H
#include <stddef.h>
#include <stdint.h>

#include "channels.h"
#include "estimate.h"
#include "khat.h"
#include "map.h"
#include "qmc.h"
#include "split.h"
#include "strat.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Where the ranks' sums of an iteration meet. */
typedef enum {
  /* The cells' sums come back to the host, every rank's are added there and
   * the host makes the estimate: plain MC and QMC, whose few cells so give
   * the same bits on any number of ranks. */
  STRATA_COMBINE_CELLS,
  /* The backend reduces its hypercubes to the estimate's part (estimate.h);
   * the host adds the ranks' parts (doc/design.md, "The exchange"). */
  STRATA_COMBINE_PARTS,
  /* The backends add the ranks' parts among themselves (their devices' own
   * exchange) and return the whole estimate; the ranks split the samples,
   * not the hypercubes, so that none waits for another's larger share. */
  STRATA_COMBINE_EXCHANGE
} strata_combine;

/* Where the map and the allocation adapt after the iteration. */
typedef enum {
  STRATA_ADAPT_NONE,    /* a frozen iteration: nothing moves */
  /* The map sums (and the levels) come back to the host, which adds the
   * ranks' and adapts its own map and allocation. */
  STRATA_ADAPT_HOST,
  /* The backend adapts where it sampled, in the same pass, from its own
   * sums (one rank, or ranks that exchange): the host's map and allocation
   * fall behind until the backend's pull. */
  STRATA_ADAPT_BACKEND
} strata_adapt_at;

typedef struct strata_plan {
  /* What is sampled. */
  const strata_problem *problem;
  const strata_map *map;
  const strata_strat *strat; /* the cells: hypercubes, or whole-cube batches (M = 1) */
  /* NULL: pseudo-random points, (k + u) / M in hypercube k.  Otherwise the
   * cells are blocks of this iteration's QMC point sets (M = 1), and sample
   * i is the QMC point of global index i. */
  const strata_qmc *qmc;
  uint64_t seed;
  uint32_t iteration;        /* 0-based, keys the random streams */
  /* Bits of each coordinate's pseudo-random uniform (philox.h): 32, or in
   * an iteration that does not train the map the packed width where the
   * map's resolution allows it (strata_uniform_bits). */
  int ubits;
  double ushift[STRATA_MAX_DIM]; /* each axis's grid shift at ubits (strata_uniform_shifts) */
  strata_estimator estimator;
  int ncomp;                 /* components summed: 1 for a scalar integrand */
  /* The sampling channels whose mixture draws the points, each sample then
   * weighted f / sum_c alpha_c g_c: 1, the map alone (g its density), or
   * with the peak search's channels (below) the map, one per mode and the
   * uniform part. */
  int nchannels;
  /* nchannels >= 2: the channels (channels.h) with this iteration's counts
   * (channels->n: n[0] the map's, the hypercubes' total); the map's
   * samples are valued f alpha_0 g_map / g in their hypercube's sums (and
   * so train the map), and each other channel is a cell of volume 1 whose
   * points are valued f alpha_c / g.  NULL with one channel. */
  const strata_channels *channels;
  /* The peak search is on: the backend keeps this rank's largest weights
   * |f| / g with their points (top, of dim + 1 doubles: z and |f|) for
   * k-hat and the search's candidates, and with channels the sums chsum:
   * per channel c the sum of (alpha_c g_c / g) (f / g)^2 over all points
   * (nchannels doubles, Kleiss and Pittau's W_c times n_c), then the
   * channel blocks' sums (channels.h) of blocks [chb0, chb1), this
   * rank's. */
  int peaks;
  strata_khat_top *top;
  double *chsum;
  size_t nchsum;
  int64_t chb0, chb1;

  /* Whose samples: hypercubes [h0, h1); with STRATA_COMBINE_EXCHANGE this
   * rank's part [i0, i1) of split's samples, which may begin and end inside
   * hypercubes h0 and h1 - 1. */
  int64_t h0, h1;
  int64_t i0, i1;
  strata_split *split;       /* several ranks of a vegas mode: the run's split of the
                              * samples, which a backend that reallocates on its device
                              * fills in; NULL on one rank */

  /* Where the sums meet, and where the map and allocation adapt. */
  strata_combine combine;
  strata_adapt_at adapt_at;
  int adapt;                 /* adapt_at != NONE: the samples also train the map */
  int reallocate;            /* VEGAS+: a new allocation from the levels; in a frozen
                              * iteration (adapt_at NONE) of a long run's finer
                              * stratification, made on the host from the levels the
                              * backend returns */
  int refine;                /* alpha != 0: the map moves */
  double alpha;              /* the map's damping */
  /* The backend reads the host's allocation (start[], nh[]): one that
   * keeps the stratified iteration on its device writes its own copy of
   * the first, even allocation from its formula. */
  int host_allocation;

  /* J f is summed as J f - shift (doc/design.md, "The shift of the sums"):
   * the quantity that adapts (below) by shift, component c by cshift[c]
   * (ncomp of them). */
  double shift;
  const double *cshift;
  /* A power of two J f is multiplied by before it is squared for the map's
   * sums (doc/design.md, "The map's scale"). */
  double map_scale;

  /* The next iteration, if the run goes on, is this plan one iteration on
   * with shifts next_shift and next_cshift: a backend may start it before
   * this one's estimate is combined, and drops it if the next plan is
   * another (doc/design.md, "Frozen iterations overlap"). */
  int next_alike;
  double next_shift;
  const double *next_cshift;
  /* The next iteration, if the run goes on, adapts where this one does, on
   * one rank's backend, with this one's problem, cells and map resolution:
   * a backend that adapts on its device may start it there before this
   * one's record is read, taking its shift and map scale from this one's
   * estimate by the plan's rules (sumscale.h), and drops
   * it if the next plan is another (doc/design.md, "Adapting iterations
   * overlap"). */
  int next_adapts_alike;

  /* The buffers (the run's), and which of them the backend fills:
   * - s1, s2: per cell the sums of g - shift and its square, for h in
   *   [h0, h1), where g is the quantity that adapts: J f, or for a vector
   *   integrand J f_k of the component k = problem->adapt_comp, or
   *   J sum_c |f_c| for adapt_comp -1;
   * - c1, c2 (1 < ncomp <= STRATA_MAX_COMP, else NULL): per cell
   *   c1[h * ncomp + c] sums J f_c - cshift[c], and c2[h * npair + p] the
   *   products (J f_a - cshift[a]) (J f_b - cshift[b]) for a <= b, packed
   *   row by row (p = 0 is (0,0), 1 is (0,1), ...), npair = ncomp (ncomp +
   *   1) / 2.  More components than STRATA_MAX_COMP have no per-cell sums:
   *   the backend adds each hypercube's moments into part as it completes
   *   it (compstream.h);
   * - part (combine PARTS or EXCHANGE): the estimate's part of the
   *   hypercubes [h0, h1), STRATA_EST_PART(ncomp) doubles; with EXCHANGE
   *   the estimate of all ranks.  The backend then uses s1 .. c2 as it
   *   likes;
   * - wsum, wcount (adapt): per axis and increment the summed (g
   *   map_scale)^2 and the sample counts, dim * ninc each; added into with
   *   ADAPT_HOST, untouched with ADAPT_BACKEND;
   * - level (reallocate with ADAPT_HOST or NONE): the levels of the shares of
   *   hypercubes [h0, h1) (strata_strat_levels), every hypercube's once
   *   the host has gathered them.
   * Whatever the backend adds into is zeroed before it samples: reduce
   * [0, nreduce), the sums the host adds over the ranks. */
  double *s1, *s2, *c1, *c2, *part, *wsum, *wcount, *level;
  double *reduce;
  size_t nreduce;
  int gather_levels;         /* the host gathers the ranks' levels (COMBINE_PARTS) */

  /* Output with part: the first hypercube whose sums are not finite, or
   * -1, and the value near which they overflowed. */
  int64_t bad;
  double bad_near;
} strata_plan;

struct strata_run;
/* The plan of the run's next iteration, into *p: its decisions, its slice
 * of the cells (the ranks' split of the samples made where it is not
 * current) and its buffers, with the host's allocation written out where
 * the backend reads it. */
void strata_plan_make(struct strata_run *r, strata_plan *p);
/* The cells that iteration k samples. */
const strata_strat *strata_plan_cells(const struct strata_run *r, int k);
/* The doubles of the run's buffer that the plans of a run with ncell cells
 * at most, ncomp components and mapcells map cells lay out. */
size_t strata_plan_buffer_size(int64_t ncell, int ncomp, size_t mapcells);
#ifdef __cplusplus
}
#endif
#endif
