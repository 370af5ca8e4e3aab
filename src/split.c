#include "split.h"

#include <stdlib.h>

strata_split *strata_split_alloc(int nranks)
{
  strata_split *sp = calloc(1, sizeof *sp);
  if (!sp) return NULL;
  sp->h = malloc(4 * sizeof(int64_t) * ((size_t)nranks + 1));
  if (!sp->h) {
    free(sp);
    return NULL;
  }
  sp->first = sp->h + nranks + 1;
  sp->hs = sp->first + nranks + 1;
  sp->he = sp->hs + nranks + 1;
  sp->nranks = nranks;
  return sp;
}

void strata_split_free(strata_split *sp)
{
  if (!sp) return;
  free(sp->h);
  free(sp);
}

void strata_split_part(const strata_split *sp, int k, int64_t *i0, int64_t *i1, int64_t *h0,
                       int64_t *h1)
{
  *i0 = sp->first[k];
  *i1 = sp->first[k + 1];
  *h0 = sp->h[k];
  *h1 = *i1 > sp->hs[k + 1] ? sp->h[k + 1] + 1 : sp->h[k + 1];
  if (*i1 <= *i0) *h1 = *h0;
}

/* start[h] of an allocation the host holds, written or even. */
static int64_t host_start(const strata_strat *s, int64_t h)
{
  return s->even ? strata_even_start(h, s->even_q, s->even_rem) : s->start[h];
}

void strata_split_make(strata_split *sp, const strata_strat *s, int whole)
{
  const int64_t R = sp->nranks, N = s->total;
  for (int64_t k = 0; k <= R; k++) {
    const int64_t p = N / R * k + N % R * k / R; /* floor(N k / R), no overflow */
    int64_t h;
    if (k == R) {
      h = s->nhcube;
    } else if (whole) { /* the first hypercube starting at or after p */
      int64_t lo = 0, hi = s->nhcube;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (host_start(s, mid) < p) lo = mid + 1;
        else hi = mid;
      }
      h = lo;
    } else { /* the hypercube holding sample p */
      h = s->even ? strata_even_find(p, s->even_q, s->even_rem) : strata_strat_find(s, p);
    }
    sp->h[k] = h;
    sp->hs[k] = host_start(s, h);
    sp->he[k] = h < s->nhcube ? host_start(s, h + 1) : N;
    sp->first[k] = whole || k == R ? sp->hs[k] : p;
  }
  sp->of = s->generation;
}
