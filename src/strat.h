/* Stratified sampling of y-space: M^dim hypercubes, n_h samples in each.
 *
 * Hypercube h has integer coordinates k_d = (h / M^d) % M; its samples are
 * numbered globally from start[h] to start[h+1]-1, which is what the random
 * streams are keyed on. */
#ifndef STRATA_STRAT_H
#define STRATA_STRAT_H
#include <stdint.h>

#include "hcube.h"
#include "hostdev.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int dim;
  int M;                /* hypercubes per axis */
  int64_t nhcube;       /* M^dim */
  int64_t neval;        /* target per iteration */
  double beta;          /* 0: the first, even allocation stays */
  int adaptive;         /* vegas+: reallocate after each adapting iteration */
  int64_t *nh;          /* [nhcube] samples per hypercube */
  int64_t *start;       /* [nhcube + 1] prefix sums of nh */
  uint64_t generation;  /* a new stamp (stamp.h) whenever the allocation changes, here or
                         * on a backend's device: what keeps a copy compares it */
  int64_t total;        /* sum of nh: valid also while a backend holds a newer allocation
                         * than nh and start (backend.h's pull) */
  int even;             /* nh and start not written yet: the first, even allocation, */
  int64_t even_q, even_rem; /* q samples each and one more for the first rem */
  struct strata_ladder_s *ladder; /* the shares' levels and their powers (shares.h) */
  double *level;        /* strata_strat_reallocate's scratch, kept between calls */
  uint64_t *hist;       /* the allocation's histogram of levels, kept */
} strata_strat;

/* Hypercubes per axis for a budget of hypercubes: floor(budget^(1/dim)),
 * at least 1, reduced until M^dim <= max_nhcube. */
int strata_strat_per_axis(int dim, int64_t budget, int64_t max_nhcube);
/* The run's stratification: a budget of neval/4 hypercubes. */
int strata_strat_hcubes_per_axis(int dim, int64_t neval, int64_t max_nhcube);

strata_strat *strata_strat_alloc(int dim, int64_t neval, int64_t max_nhcube,
                                 double beta, int adaptive);
/* The same with the first allocation only described (even, above): nh and
 * start are written by strata_strat_materialize, which whatever reads them
 * on the host calls first. */
strata_strat *strata_strat_alloc_even(int dim, int64_t neval, int64_t max_nhcube,
                                      double beta, int adaptive);
void strata_strat_materialize(strata_strat *s);

void strata_strat_free(strata_strat *s);

/* A layout of ncell cells that each span the whole unit cube (M = 1, so
 * every cell's coordinates are 0 and its points are the plain uniforms):
 * the batches of plain Monte Carlo and the blocks of QMC point sets.  Spreads
 * exactly neval samples as evenly as integers allow; never reallocated. */
strata_strat *strata_strat_alloc_cells(int dim, int64_t ncell, int64_t neval);

/* A stratification of M per axis, finer than coarse's, with its shares
 * (the frozen map's iterations in a long run: run.h, fine); its counts
 * are written by strata_strat_carry. */
strata_strat *strata_strat_alloc_finer(const strata_strat *coarse, int M);
/* neval samples over the finer hypercubes, carried over from the coarse
 * allocation (written, not even): where the allocation moves, each fine
 * hypercube gets the density of samples of the coarse hypercube holding
 * its centre (at least 2, summing to neval, rounded as
 * strata_strat_rescale), with w (nhcube doubles) as scratch; otherwise
 * the first allocation (strata_strat_init).  -1: no memory for its
 * per-axis table. */
int strata_strat_carry(strata_strat *s, const strata_strat *coarse, int64_t neval, double *w);

/* First-iteration allocation: classic gives max(2, floor(neval/M^dim)) to
 * every hypercube; vegas+ spreads exactly neval as evenly as integers allow. */
void strata_strat_init(strata_strat *s);

/* Whether adapting iterations move samples between hypercubes: vegas+ and
 * vegas1d with beta > 0.  At beta = 0 every share would be 1, so the even
 * first allocation stands and the per-hypercube passes (shares, gather,
 * allocation) are skipped: with 262144 hypercubes they were most of an
 * iteration's time on a GPU. */
static inline int strata_strat_moves(const strata_strat *s)
{
  return s->adaptive && s->beta > 0.0;
}

/* VEGAS+ reallocation from one iteration's per-hypercube sums of J f and
 * (J f)^2: n_h proportional to sigma_h^beta, at least 2, summing to neval.
 * Does nothing unless strata_strat_moves. */
void strata_strat_reallocate(strata_strat *s, const double *s1, const double *s2);

/* The same in two steps, so that ranks can split the first: the shares'
 * levels (shares.h) of hypercubes [h0, h1) from their sums, which need
 * only those hypercubes' sums; then the allocation from every hypercube's
 * level.  The allocation is a fixed function of the levels in integer
 * arithmetic: the GPU's (gpu/adapt.cuh) gives the same counts. */
void strata_strat_levels(const strata_strat *s, const double *s1, const double *s2,
                         int64_t h0, int64_t h1, double *level);
void strata_strat_allocate(strata_strat *s, const double *level);

/* The water-filling's outcome from the histogram of levels (hist[b]
 * hypercubes in bin b, nzero with no share): the first free bin, and what
 * the free hypercubes share.  Host and device both call it. */
typedef struct {
  int cut;         /* bins below are pinned at 2 samples */
  uint64_t dfree;  /* the free hypercubes' summed D */
  int64_t left;    /* the samples they share */
  double per;      /* left / dfree */
} strata_share_cut;
void strata_strat_cut(const uint64_t *hist, int64_t nzero, int64_t neval, const double *step,
                      strata_share_cut *out);

/* A new total for the same hypercubes: vegas+ keeps the shares of the
 * current allocation (cumulative rounding, at least 2 each), classic gives
 * every hypercube max(2, neval / nhcube).  For neval_frozen. */
void strata_strat_rescale(strata_strat *s, int64_t neval);

static inline int64_t strata_strat_total(const strata_strat *s) { return s->total; }

/* start[h] of an allocation the host holds, written or the even one.
 * While a backend holds a newer one (backend.h's pull), only start[0] = 0
 * and start[nhcube] = total are right. */
int64_t strata_strat_start_at(const strata_strat *s, int64_t h);

/* Takes a saved allocation (nhcube counts) as the current one: resuming. */
void strata_strat_restore(strata_strat *s, const int64_t *nh);

/* The hypercube holding global sample index i (binary search on start). */
int64_t strata_strat_find(const strata_strat *s, int64_t i);

static inline void strata_strat_coords(const strata_strat *s, int64_t h, int *k)
{
  strata_hcube_coords(h, s->dim, s->M, k);
}
#ifdef __cplusplus
}
#endif
#endif
