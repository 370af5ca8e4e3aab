/* Pareto k-hat (khat.h).  The fit follows Zhang and Stephens (2009),
 * "A new and efficient estimation method for the generalized Pareto
 * distribution", as PSIS's reference code writes it: a posterior mean of
 * b = -k/sigma over a fixed grid of 30 + sqrt(n) values, then k from it. */
#include "khat.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int64_t strata_khat_tail(int64_t S)
{
  const double m = fmin(0.2 * (double)S, 3.0 * sqrt((double)S));
  return (int64_t)ceil(m);
}

double strata_khat_limit(int64_t S)
{
  return fmin(1.0 - 1.0 / log10((double)S), 0.7);
}

/* Zhang and Stephens' k for the exceedances x[0..n) in ascending order. */
static double gpd_fit(const double *x, int64_t n)
{
  const int mq = 30 + (int)sqrt((double)n);
  double q = x[(int64_t)((double)n / 4.0 + 0.5) - 1];
  for (int64_t i = 0; !(q > 0.0) && i < n; i++) q = x[i]; /* ties at the threshold */
  double *b = malloc(sizeof(double) * (size_t)mq * 3);
  if (!b) return NAN;
  double *k = b + mq, *l = k + mq;
  for (int j = 0; j < mq; j++) {
    b[j] = (1.0 - sqrt(mq / (j + 1 - 0.5))) / (3.0 * q) + 1.0 / x[n - 1];
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += log1p(-b[j] * x[i]);
    k[j] = s / (double)n;
    l[j] = (double)n * (log(-b[j] / k[j]) - k[j] - 1.0);
  }
  /* The weights 1 / sum_j exp(l_j - l_i), those below 10 eps dropped. */
  double wsum = 0.0, bpost = 0.0;
  for (int i = 0; i < mq; i++) {
    double s = 0.0;
    for (int j = 0; j < mq; j++) s += exp(l[j] - l[i]);
    const double w = 1.0 / s;
    if (!(w >= 10.0 * DBL_EPSILON)) continue;
    wsum += w;
    bpost += b[i] * w;
  }
  free(b);
  bpost /= wsum;
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += log1p(-bpost * x[i]);
  const double kk = s / (double)n;
  return ((double)n * kk + 10.0 * 0.5) / ((double)n + 10.0);
}

double strata_khat_fit(const double *top, int64_t m1)
{
  const int64_t m = m1 - 1;
  if (m < 5) return NAN;
  if (!(top[0] > top[m])) return -INFINITY;
  double *x = malloc(sizeof(double) * (size_t)m);
  if (!x) return NAN;
  for (int64_t i = 0; i < m; i++) x[i] = top[m - 1 - i] - top[m];
  const double k = gpd_fit(x, m);
  free(x);
  return k;
}

static int descending(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

double strata_khat(const double *w, int64_t S)
{
  double *c = malloc(sizeof(double) * (size_t)(S > 0 ? S : 1));
  if (!c) return NAN;
  memcpy(c, w, sizeof(double) * (size_t)S);
  qsort(c, (size_t)S, sizeof(double), descending);
  const int64_t m = strata_khat_tail(S);
  const double k = m + 1 <= S ? strata_khat_fit(c, m + 1) : NAN;
  free(c);
  return k;
}

int strata_khat_top_init(strata_khat_top *t, int64_t cap, int dim)
{
  memset(t, 0, sizeof *t);
  t->cap = cap > 0 ? cap : 1;
  t->dim = dim;
  t->w = malloc(sizeof(double) * (size_t)t->cap);
  t->index = malloc(sizeof(int64_t) * (size_t)t->cap);
  t->x = malloc(sizeof(double) * (size_t)t->cap * (size_t)(dim > 0 ? dim : 1));
  t->heap = malloc(sizeof(int64_t) * (size_t)t->cap);
  if (!t->w || !t->index || !t->x || !t->heap) {
    strata_khat_top_free(t);
    return strata_error(STRATA_ENOMEM, "k-hat: no memory for the %lld largest weights",
                        (long long)cap);
  }
  return STRATA_OK;
}

void strata_khat_top_free(strata_khat_top *t)
{
  free(t->w);
  free(t->index);
  free(t->x);
  free(t->heap);
  memset(t, 0, sizeof *t);
}

void strata_khat_top_clear(strata_khat_top *t) { t->n = 0; }

/* Entry a ranks below entry b: a smaller weight, or the same weight at a
 * larger index. */
static int below(const strata_khat_top *t, int64_t a, int64_t b)
{
  return t->w[a] < t->w[b] || (t->w[a] == t->w[b] && t->index[a] > t->index[b]);
}

static void sift_down(strata_khat_top *t, int64_t k)
{
  int64_t *h = t->heap;
  for (;;) {
    int64_t c = 2 * k + 1;
    if (c >= t->n) return;
    if (c + 1 < t->n && below(t, h[c + 1], h[c])) c++;
    if (!below(t, h[c], h[k])) return;
    const int64_t tmp = h[c];
    h[c] = h[k];
    h[k] = tmp;
    k = c;
  }
}

void strata_khat_top_add(strata_khat_top *t, double w, int64_t index, const double *x)
{
  if (!strata_khat_top_wants(t, w, index)) return;
  int64_t slot;
  if (t->n < t->cap) {
    slot = t->n;
    t->heap[t->n++] = slot;
  } else {
    slot = t->heap[0];
  }
  t->w[slot] = w;
  t->index[slot] = index;
  if (x && t->dim > 0) memcpy(t->x + slot * t->dim, x, sizeof(double) * (size_t)t->dim);
  if (t->n == t->cap && slot == t->heap[0]) {
    sift_down(t, 0);
    return;
  }
  /* sift the new last entry up */
  int64_t *h = t->heap;
  for (int64_t k = t->n - 1; k > 0;) {
    const int64_t p = (k - 1) / 2;
    if (!below(t, h[k], h[p])) break;
    const int64_t tmp = h[p];
    h[p] = h[k];
    h[k] = tmp;
    k = p;
  }
}

void strata_khat_top_merge(strata_khat_top *t, const strata_khat_top *other)
{
  for (int64_t i = 0; i < other->n; i++)
    strata_khat_top_add(t, other->w[i], other->index[i],
                        other->dim == t->dim ? other->x + i * other->dim : NULL);
}

static _Thread_local const strata_khat_top *sorting; /* qsort has no context argument */
static int slot_order(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return below(sorting, x, y) - below(sorting, y, x); /* largest first */
}

int strata_khat_top_sort(strata_khat_top *t)
{
  const int64_t n = t->n;
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  double *w = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)(t->dim > 0 ? t->dim : 1));
  const int ok = order && w && idx && x;
  if (ok) {
    for (int64_t i = 0; i < n; i++) order[i] = i;
    sorting = t;
    qsort(order, (size_t)n, sizeof *order, slot_order);
    for (int64_t i = 0; i < n; i++) {
      w[i] = t->w[order[i]];
      idx[i] = t->index[order[i]];
      if (t->dim > 0)
        memcpy(x + i * t->dim, t->x + order[i] * t->dim, sizeof(double) * (size_t)t->dim);
    }
    memcpy(t->w, w, sizeof(double) * (size_t)n);
    memcpy(t->index, idx, sizeof(int64_t) * (size_t)n);
    if (t->dim > 0) memcpy(t->x, x, sizeof(double) * (size_t)n * (size_t)t->dim);
    /* Ascending is a min-heap: the list stays one. */
    for (int64_t i = 0; i < n; i++) t->heap[i] = n - 1 - i;
  }
  free(order);
  free(w);
  free(idx);
  free(x);
  return ok ? STRATA_OK
            : strata_error(STRATA_ENOMEM, "k-hat: no memory to sort %lld weights", (long long)n);
}

double strata_khat_top_fit(strata_khat_top *t, int64_t S)
{
  const int64_t m = strata_khat_tail(S);
  if (strata_khat_top_sort(t) != STRATA_OK || t->n < m + 1) return NAN;
  return strata_khat_fit(t->w, m + 1);
}
