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
#include "shares.h"
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

/* Whether an allocation may merge pairs of hypercubes (hcube.h): one that
 * moves, of STRATA_HCUBE_PAIRS_MIN_M hypercubes per axis or more. */
static inline int strata_strat_may_merge(const strata_strat *s)
{
  return strata_strat_moves(s) && s->M >= STRATA_HCUBE_PAIRS_MIN_M;
}

/* VEGAS+ reallocation from one iteration's per-hypercube sums of J f and
 * (J f)^2: n_h proportional to sigma_h^beta, at least 2, summing to neval;
 * except that a pair of hypercubes along the first axis (hcube.h) whose
 * shares are both next to none merges: its first hypercube gets 2 samples
 * drawn over the pair, its second none, and the others share what the
 * merged pairs leave (shares.h, doc/algorithm.md, "Stratification").  Does
 * nothing unless strata_strat_moves. */
void strata_strat_reallocate(strata_strat *s, const double *s1, const double *s2);

/* The same in two steps, so that ranks can split the first: the shares'
 * levels (shares.h) of hypercubes [h0, h1) from their sums, which need
 * only those hypercubes' sums; then the allocation from every hypercube's
 * level.  The allocation is a fixed function of the levels in integer
 * arithmetic: the GPU's (gpu/adapt.cuh) gives the same counts. */
void strata_strat_levels(const strata_strat *s, const double *s1, const double *s2,
                         int64_t h0, int64_t h1, double *level);
void strata_strat_allocate(strata_strat *s, const double *level);

/* The water-filling's outcome (shares.h's strata_share_cut) from the
 * histogram of levels (hist[b] hypercubes in bin b, nzero with no share).
 * Host and device both call it. */
void strata_strat_cut(const uint64_t *hist, int64_t nzero, int64_t neval, const double *step,
                      strata_share_cut *out);

/* The same with the bins below from pinned whatever their shares, and
 * removed of their hypercubes out of the water-filling: the cut again
 * once merged pairs (hcube.h), every one of whose hypercubes lies below
 * from = strata_share_merge_cut, leave with their 2 samples (neval less
 * them).  Their D stays in dtot and in the pinned sum, which dfree, the
 * difference, does not see.  Pinning bins below from changes nothing: a
 * share there is below STRATA_SHARE_MERGE_BELOW of neval / dtot samples,
 * and with at most neval / 2 hypercubes (each holds 2 samples at least)
 * the bins from upwards hold 0.95 dtot at least, so that such a bin takes
 * fewer than 0.11 of a sample and stays below the floor (test_strat
 * checks the cut against the walk over the remaining hypercubes). */
void strata_strat_cut_from(const uint64_t *hist, int64_t nzero, int64_t neval,
                           const double *step, int from, int64_t removed, strata_share_cut *out);

/* A new total for the same hypercubes: vegas+ keeps the shares of the
 * current allocation (cumulative rounding, at least 2 each), classic gives
 * every hypercube max(2, neval / nhcube).  For neval_frozen. */
void strata_strat_rescale(strata_strat *s, int64_t neval);

static inline int64_t strata_strat_total(const strata_strat *s) { return s->total; }

/* start[h] of an allocation the host holds, written or the even one.
 * While a backend holds a newer one (backend.h's pull), only start[0] = 0
 * and start[nhcube] = total are right. */
int64_t strata_strat_start_at(const strata_strat *s, int64_t h);

/* The span of hypercube h of an allocation the host holds (hcube.h): 2
 * for the first of a merged pair, 0 for its empty second, else 1; _at
 * with h's k_0 known (a loop over hypercubes counts it). */
static inline int strata_strat_span_at(const strata_strat *s, int64_t h, int k0)
{
  if (s->even) return 1;
  return strata_hcube_span(k0, s->M, s->nh[h], k0 + 1 < s->M ? s->nh[h + 1] : 1);
}

static inline int strata_strat_span(const strata_strat *s, int64_t h)
{
  return strata_strat_span_at(s, h, (int)(h % s->M));
}

/* The allocation's samples per hypercube volume at hypercube h: n_h, or
 * a merged pair's 2 spread over its two hypercubes. */
static inline double strata_strat_density(const strata_strat *s, int64_t h)
{
  const int span = strata_strat_span(s, h);
  return span ? (double)s->nh[h] / span : 0.5 * (double)s->nh[h - 1];
}

/* k_0 of hypercube h + 1 from k_0 of h. */
static inline int strata_hcube_next_k0(int k0, int M) { return k0 + 1 == M ? 0 : k0 + 1; }

/* The first of n counts of a layout of M hypercubes per axis that no
 * allocation gives (fewer than 2 samples, but for the empty second of a
 * merged pair), or -1: what a saved allocation is checked against. */
int64_t strata_strat_bad_count(const int64_t *nh, int64_t n, int M);

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
