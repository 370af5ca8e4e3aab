/* The Pareto k-hat of importance weights (Vehtari, Simpson, Gelman, Yao
 * and Gabry, "Pareto smoothed importance sampling"): the shape k of a
 * generalized Pareto distribution fitted to the largest weights.  Where
 * k >= 1/2 the weights' variance is infinite or close to it, and an error
 * computed from them cannot be trusted however many there are; the limit
 * below says how large k may be for S weights (doc/peaks.md, "The claim").
 *
 * The fit needs only the M + 1 largest of S weights, M = ceil(min(S/5,
 * 3 sqrt S)), so each thread or rank keeps its own largest (a top list) and
 * the lists merge into the same M + 1 whatever the split: ties in a weight
 * go to the smaller global sample index. */
#ifndef STRATA_KHAT_H
#define STRATA_KHAT_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* M, the weights of the tail fitted for S weights. */
int64_t strata_khat_tail(int64_t S);
/* min(1 - 1/log10 S, 0.7): the largest k-hat whose S weights' mean is
 * trusted. */
double strata_khat_limit(int64_t S);

/* k-hat from the m + 1 largest weights, largest first (m = strata_khat_tail
 * of their S): Zhang and Stephens' (2009) fit to the exceedances of the m
 * largest over the next, with PSIS's weakly informative prior on k
 * (k <- (m k + 10 * 0.5) / (m + 10)).  NaN for m < 5; -inf where the m
 * largest equal the next (no tail at all). */
double strata_khat_fit(const double *top, int64_t m1);
/* k-hat of S weights in any order (a sorted copy is made); NaN without
 * memory. */
double strata_khat(const double *w, int64_t S);

/* The largest weights of a stream, with each one's global sample index and
 * point (dim doubles); non-finite weights are passed over.  Entries are
 * appended while they rank above the least of the last cut, and when
 * twice cap are held the list is cut to the entries at or above a weight
 * that at least cap of them reach (a sample's, which needs no selection):
 * a weight costs an append, not a heap's sift.  What reads the entries
 * (strata_khat_top_settle, _sort, _fit) cuts the list to its cap largest
 * exactly, the same whatever the order the weights come in.  An entry's
 * point lies in a row of x that stays where it was written (slot), so
 * that a cut and the sort move the weights, indices and row numbers alone:
 * read it through strata_khat_top_point. */
typedef struct {
  int64_t cap, n;
  int dim;
  double *w;       /* [2 cap] */
  int64_t *index;  /* [2 cap] */
  double *x;       /* [2 cap][dim], entry i's point in row slot[i] */
  void *ranks;     /* [2 cap], the sort's records of the entries */
  int64_t *slot;   /* [2 cap] */
  int64_t *spare;  /* [2 cap], the rows no entry holds: nspare of them */
  int64_t nspare;
  int64_t *order;  /* [2 cap], the cut's ties' indices */
  double *scratch; /* [2 cap], the cut's copy of the weights */
  int cut;         /* the list has been cut to cap: least_w, least_index below */
  double least_w;
  int64_t least_index;
} strata_khat_top;

/* Room for the cap largest; returns STRATA_OK or STRATA_ENOMEM. */
int strata_khat_top_init(strata_khat_top *t, int64_t cap, int dim);
void strata_khat_top_free(strata_khat_top *t);
void strata_khat_top_clear(strata_khat_top *t);
void strata_khat_top_add(strata_khat_top *t, double w, int64_t index, const double *x);
/* The least weight the list keeps since its last cut; -inf before one. */
static inline double strata_khat_top_least(const strata_khat_top *t)
{
  return t->cut ? t->least_w : -INFINITY;
}
/* Whether strata_khat_top_add would keep w: most of an iteration's weights
 * fall below the list's least once it has been cut, and a caller that
 * asks first spares them the point's copy. */
static inline int strata_khat_top_wants(const strata_khat_top *t, double w, int64_t index)
{
  if (!isfinite(w)) return 0;
  if (!t->cut) return 1;
  return w > t->least_w || (w == t->least_w && index <= t->least_index);
}
/* strata_khat_top_slot where the list is full: it is cut first. */
double *strata_khat_top_slot_cut(strata_khat_top *t, double w, int64_t index);
/* strata_khat_top_add without the point: the entry's dim doubles, for the
 * caller to write its point into, or NULL where t does not keep w.  Inline:
 * a sampling loop's appends are most of the list's upkeep. */
static inline double *strata_khat_top_slot(strata_khat_top *t, double w, int64_t index)
{
  if (!strata_khat_top_wants(t, w, index)) return NULL;
  if (t->n == 2 * t->cap) return strata_khat_top_slot_cut(t, w, index);
  const int64_t i = t->n++, row = t->spare[--t->nspare];
  t->w[i] = w;
  t->index[i] = index;
  t->slot[i] = row;
  return t->x + row * t->dim;
}
/* Entry i's point. */
static inline const double *strata_khat_top_point(const strata_khat_top *t, int64_t i)
{
  return t->x + t->slot[i] * t->dim;
}
/* Cuts t to its cap largest (at most cap entries, in no order): what
 * reads the entries without sorting them first calls it. */
void strata_khat_top_settle(strata_khat_top *t);
/* Another list's entries into t: the result is the cap largest of both,
 * whatever the order of merging. */
void strata_khat_top_merge(strata_khat_top *t, const strata_khat_top *other);
/* strata_khat_top_merge, but other is left empty: where t holds nothing
 * and has other's cap and dim, the two exchange their storage, and no
 * entry is copied. */
void strata_khat_top_take(strata_khat_top *t, strata_khat_top *other);
/* The cap largest entries in order, largest first (weight descending,
 * index ascending), and still a list to add to; STRATA_OK. */
int strata_khat_top_sort(strata_khat_top *t);
/* k-hat of the S weights whose largest t holds (cap >= strata_khat_tail(S)
 * + 1); sorts t.  NaN where t holds too few. */
double strata_khat_top_fit(strata_khat_top *t, int64_t S);
#ifdef __cplusplus
}
#endif
#endif
