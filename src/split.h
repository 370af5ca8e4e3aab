/* The ranks' split of an iteration's samples: ranks that exchange among
 * themselves (a backend's exchanges, backend.h) split the samples, not the
 * hypercubes, so that none waits for another's larger share.  Rank k's
 * first sample is first[k], k = 0 .. nranks; h[k] is the hypercube holding
 * it, which starts at hs[k] and ends at he[k].  A hypercube may thus be
 * shared by neighbouring ranks.
 *
 * The host makes the split from an allocation it holds; a backend that
 * makes the allocation on its device makes the split there too and fills
 * it in (its adapt, backend.h), which is all the host then knows of that
 * allocation. */
#ifndef STRATA_SPLIT_H
#define STRATA_SPLIT_H
#include <stdint.h>

#include "strat.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int nranks;
  /* One block of 4 (nranks + 1), in this order (what a device fills). */
  int64_t *h, *first, *hs, *he;
  uint64_t of;          /* the generation of the allocation it splits; 0: none yet */
} strata_split;

/* NULL without memory. */
strata_split *strata_split_alloc(int nranks);
void strata_split_free(strata_split *sp);

/* Whether sp splits s as it is now. */
static inline int strata_split_current(const strata_split *sp, const strata_strat *s)
{
  return sp->of != 0 && sp->of == s->generation;
}

/* Makes the split of an allocation the host holds: rank k's samples begin
 * at floor(total k / nranks), so that no rank has more than one sample more
 * than another; with whole, at the first hypercube that starts there or
 * after (ranks then hold whole hypercubes, as the CPU backend and vector
 * integrands sample them). */
void strata_split_make(strata_split *sp, const strata_strat *s, int whole);

/* Rank k's part: samples [i0, i1) in hypercubes [h0, h1). */
void strata_split_part(const strata_split *sp, int k, int64_t *i0, int64_t *i1, int64_t *h0,
                       int64_t *h1);
#ifdef __cplusplus
}
#endif
#endif
