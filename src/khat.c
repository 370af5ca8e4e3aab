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

/* An entry as the sort moves it: its weight and index, which rank it,
 * and the row of its point, which stays where it is. */
typedef struct {
  double w;
  int64_t index, slot;
} ranked;

int64_t strata_khat_tail(int64_t S)
{
  const double m = fmin(0.2 * (double)S, 3.0 * sqrt((double)S));
  return (int64_t)ceil(m);
}

double strata_khat_limit(int64_t S)
{
  return fmin(1.0 - 1.0 / log10((double)S), 0.7);
}

/* The mean of log1p(-b x_i) over x[0..n), with one logarithm per run of
 * LOG_RUN terms, the log of their product: the fit takes the mean at each
 * of its grid's 30 + sqrt(n) points, where a log1p a term would be most of
 * the fit's cost.  A run whose product leaves the normal range takes a
 * log1p a term.  k-hat stays within 1e-12 of the fit a term at a time
 * (tests/test_khat.c). */
#define LOG_RUN 16
#define LOG_LANES 8 /* runs side by side, for the instructions' overlap */

/* The sum of log1p(-b x_i) over the run x[0..len), whose product is P. */
static double run_sum(double P, double b, const double *x, int len)
{
  if (P > DBL_MIN && P < DBL_MAX) return log(P);
  double s = 0.0;
  for (int r = 0; r < len; r++) s += log1p(-b * x[r]);
  return s;
}

/* x's whole blocks of LOG_RUN * LOG_LANES with each block's lanes side by
 * side: xt[r * LOG_LANES + l] is the block's x[l * LOG_RUN + r], so that
 * the lanes' products take their terms from one vector load. */
static void lanes_side_by_side(const double *x, int64_t n, double *xt)
{
  for (int64_t i = 0; i + LOG_RUN * LOG_LANES <= n; i += LOG_RUN * LOG_LANES)
    for (int r = 0; r < LOG_RUN; r++)
      for (int l = 0; l < LOG_LANES; l++)
        xt[i + r * LOG_LANES + l] = x[i + l * LOG_RUN + r];
}

/* The mean with xt from lanes_side_by_side: each lane's product takes its
 * terms in the order of x, and the runs' logarithms add in it. */
static double mean_log1p(double b, const double *x, const double *xt, int64_t n)
{
  double s = 0.0;
  int64_t i = 0;
  for (; i + LOG_RUN * LOG_LANES <= n; i += LOG_RUN * LOG_LANES) {
    /* The lanes' products in eight scalars, which the compiler keeps in
     * registers (an array of them it kept in memory, a store and a load a
     * step). */
    _Static_assert(LOG_LANES == 8, "eight lanes, eight products");
    double p0 = 1.0, p1 = 1.0, p2 = 1.0, p3 = 1.0, p4 = 1.0, p5 = 1.0, p6 = 1.0, p7 = 1.0;
    for (int r = 0; r < LOG_RUN; r++) {
      const double *v = xt + i + r * LOG_LANES;
      p0 *= 1.0 - b * v[0];
      p1 *= 1.0 - b * v[1];
      p2 *= 1.0 - b * v[2];
      p3 *= 1.0 - b * v[3];
      p4 *= 1.0 - b * v[4];
      p5 *= 1.0 - b * v[5];
      p6 *= 1.0 - b * v[6];
      p7 *= 1.0 - b * v[7];
    }
    const double P[LOG_LANES] = {p0, p1, p2, p3, p4, p5, p6, p7};
    for (int l = 0; l < LOG_LANES; l++) s += run_sum(P[l], b, x + i + l * LOG_RUN, LOG_RUN);
  }
  for (; i < n; i += LOG_RUN) { /* the last runs, one at a time */
    const int len = n - i < LOG_RUN ? (int)(n - i) : LOG_RUN;
    double P = 1.0;
    for (int r = 0; r < len; r++) P *= 1.0 - b * x[i + r];
    s += run_sum(P, b, x + i, len);
  }
  return s / (double)n;
}

/* Zhang and Stephens' k for the exceedances x[0..n) in ascending order. */
static double gpd_fit(const double *x, int64_t n)
{
  const int mq = 30 + (int)sqrt((double)n);
  double q = x[(int64_t)((double)n / 4.0 + 0.5) - 1];
  for (int64_t i = 0; !(q > 0.0) && i < n; i++) q = x[i]; /* ties at the threshold */
  double *b = malloc(sizeof(double) * ((size_t)mq * 3 + (size_t)n));
  if (!b) return NAN;
  double *k = b + mq, *l = k + mq, *xt = l + mq;
  lanes_side_by_side(x, n, xt);
  for (int j = 0; j < mq; j++) {
    b[j] = (1.0 - sqrt(mq / (j + 1 - 0.5))) / (3.0 * q) + 1.0 / x[n - 1];
    k[j] = mean_log1p(b[j], x, xt, n);
    l[j] = (double)n * (log(-b[j] / k[j]) - k[j] - 1.0);
  }
  /* The weights 1 / sum_j exp(l_j - l_i), as exp(l_i - L) / sum_j exp(l_j
   * - L) with L the largest l: an exponential a grid point, not mq of them;
   * those below 10 eps dropped. */
  double L = -INFINITY, esum = 0.0;
  for (int j = 0; j < mq; j++)
    if (l[j] > L) L = l[j];
  double *e = k; /* k's values are in l */
  for (int j = 0; j < mq; j++) esum += e[j] = exp(l[j] - L);
  double wsum = 0.0, bpost = 0.0;
  for (int i = 0; i < mq; i++) {
    const double w = e[i] / esum;
    if (!(w >= 10.0 * DBL_EPSILON)) continue;
    wsum += w;
    bpost += b[i] * w;
  }
  bpost /= wsum;
  const double kk = mean_log1p(bpost, x, xt, n);
  free(b);
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
  const size_t room = 2 * (size_t)t->cap;
  t->w = malloc(sizeof(double) * room);
  t->index = malloc(sizeof(int64_t) * room);
  t->x = malloc(sizeof(double) * room * (size_t)(dim > 0 ? dim : 1));
  t->ranks = malloc(sizeof(ranked) * 2 * (size_t)t->cap);
  t->order = malloc(sizeof(int64_t) * room);
  t->scratch = malloc(sizeof(double) * room);
  t->slot = malloc(sizeof(int64_t) * room);
  t->spare = malloc(sizeof(int64_t) * room);
  if (!t->w || !t->index || !t->x || !t->ranks || !t->order || !t->scratch || !t->slot ||
      !t->spare) {
    strata_khat_top_free(t);
    return strata_error(STRATA_ENOMEM, "k-hat: no memory for the %lld largest weights",
                        (long long)cap);
  }
  strata_khat_top_clear(t);
  return STRATA_OK;
}

void strata_khat_top_free(strata_khat_top *t)
{
  free(t->w);
  free(t->index);
  free(t->x);
  free(t->ranks);
  free(t->order);
  free(t->scratch);
  free(t->slot);
  free(t->spare);
  memset(t, 0, sizeof *t);
}

/* Rows n .. room - 1 spare, row n the next taken. */
static void spare_from(strata_khat_top *t, int64_t n)
{
  const int64_t room = 2 * t->cap;
  t->nspare = room - n;
  for (int64_t k = 0; k < t->nspare; k++) t->spare[k] = room - 1 - k;
}

void strata_khat_top_clear(strata_khat_top *t)
{
  t->n = 0;
  t->cut = 0;
  spare_from(t, 0);
}

/* The k-th largest of v[0 .. n) (1 <= k <= n, no NaN), v rearranged:
 * Hoare's selection with partitions that do not branch on the values (a
 * list's weights near its least are in no order a branch predictor could
 * learn, and a mispredicted branch an element cost more than the rest of
 * the cut), pivot the median of three.  Each round moves the values above
 * the pivot to the front, then, where the k-th is not among them, those
 * equal to it: ties end a round, not the selection's progress. */
static double kth_largest(double *v, int64_t n, int64_t k)
{
  int64_t lo = 0, hi = n; /* the k-th lies in v[lo .. hi) */
  const int64_t want = k - 1;
  while (hi - lo > 8) {
    const double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi - 1];
    const double pivot = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    int64_t above = lo;
    for (int64_t i = lo; i < hi; i++) {
      const double t = v[i];
      v[i] = v[above];
      v[above] = t;
      above += t > pivot;
    }
    if (want < above) {
      hi = above;
      continue;
    }
    int64_t equal = above;
    for (int64_t i = above; i < hi; i++) {
      const double t = v[i];
      v[i] = v[equal];
      v[equal] = t;
      equal += t == pivot;
    }
    if (want < equal) return pivot;
    lo = equal;
  }
  for (int64_t i = lo + 1; i < hi; i++) /* a few left: sorted, largest first */
    for (int64_t j = i; j > lo && v[j] > v[j - 1]; j--) {
      const double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return v[want];
}

/* The k-th largest of w[0 .. n) (1 <= k <= n, no NaN), w left as it is
 * and v, with room for n, its scratch, with the number of weights above it
 * (*above) and equal to it (*ties): Floyd and Rivest's sampling.  Of
 * SAMPLE weights spread over w, two bracket the place where the k-th
 * should fall; one pass counts the weights above the bracket and copies
 * those within it, and kth_largest selects among those alone, a quarter
 * of them.  Where the bracket misses the k-th (the weights' order is no
 * help to it, only their values' spread), the selection runs on a copy of
 * them all. */
#define SAMPLE 64
#define BRACKET 9 /* sample places either side: the k-th's place in the sample strays by 4 */
static double kth_largest_sampled(const double *w, double *v, int64_t n, int64_t k,
                                  int64_t *above, int64_t *ties)
{
  int64_t over = 0, m = 0; /* the weights above the bracket, and within it (v) */
  if (n >= 8 * SAMPLE) {
    double s[SAMPLE];
    for (int i = 0; i < SAMPLE; i++) s[i] = w[(int64_t)i * n / SAMPLE];
    const int at = (int)(k * SAMPLE / n);
    const double high = kth_largest(s, SAMPLE, at >= BRACKET ? at - BRACKET + 1 : 1);
    const double low = kth_largest(s, SAMPLE, at + BRACKET < SAMPLE ? at + BRACKET + 1 : SAMPLE);
    for (int64_t i = 0; i < n; i++) { /* without branches, as the selection */
      const double x = w[i];
      over += x > high;
      v[m] = x;
      m += (x <= high) & (x >= low);
    }
  }
  if (!(over < k && k <= over + m)) {
    memcpy(v, w, sizeof(double) * (size_t)n);
    over = 0;
    m = n;
  }
  const double wk = kth_largest(v, m, k - over);
  int64_t a = 0, e = 0; /* the k-th's ties lie within the bracket */
  for (int64_t i = 0; i < m; i++) {
    a += v[i] > wk;
    e += v[i] == wk;
  }
  *above = over + a;
  *ties = e;
  return wk;
}

/* The list cut to the entries above wk and those equal to it up to index
 * last, in the order they were held.  Every entry is copied to the next
 * place and the place taken where it stays, its row spare where it does
 * not: a branch on whether it stays would be mispredicted half the time
 * (hence | and &, not || and &&, and the counts in locals, not in t, which
 * the stores could alias).  The rows stay where they are.  The least entry
 * kept is (wk, the largest index kept at wk) where exact, else (wk, any
 * index): a later weight equal to wk is then kept whatever its index. */
static inline __attribute__((always_inline)) void keep_ranked(strata_khat_top *t, double wk,
                                                              int64_t last, int exact)
{
  const int64_t n = t->n;
  double *tw = t->w;
  int64_t *tindex = t->index, *tslot = t->slot, *spare = t->spare;
  int64_t j = 0, nspare = t->nspare, least_index = exact ? INT64_MIN : INT64_MAX;
  for (int64_t i = 0; i < n; i++) {
    const double w = tw[i];
    const int64_t index = tindex[i], row = tslot[i];
    const int tie_stays = (w == wk) & (index <= last), stays = (w > wk) | tie_stays;
    if (exact) least_index = tie_stays & (index > least_index) ? index : least_index;
    tw[j] = w;
    tindex[j] = index;
    tslot[j] = row;
    spare[nspare] = row;
    j += stays;
    nspare += !stays;
  }
  t->nspare = nspare;
  t->n = j;
  t->cut = 1;
  t->least_w = wk;
  t->least_index = least_index;
}

/* The list cut to its cap largest, kept in the order they were held: the
 * cap-th largest weight is found first, and of the entries that tie with
 * it those of the smallest indices are kept. */
static void cut(strata_khat_top *t)
{
  const int64_t k = t->cap, n = t->n;
  double *v = t->scratch;
  int64_t nabove, ties;
  const double wk = kth_largest_sampled(t->w, v, n, k, &nabove, &ties);
  /* The entries above wk all stay; of those that tie with it, the
   * (k - nabove) of the smallest indices, up to last.  Nearly always they
   * all stay (weights seldom tie), and the compaction finds the largest
   * index among them, the least entry kept. */
  const int64_t keep_ties = k - nabove;
  int64_t last = INT64_MAX;
  if (keep_ties < ties) {
    int64_t *tie = t->order, m = 0;
    for (int64_t i = 0; i < n; i++) { /* without branches, as the selection */
      tie[m] = t->index[i];
      m += t->w[i] == wk;
    }
    for (int64_t i = 0; i < m; i++) v[i] = -(double)tie[i]; /* exact below 2^53 */
    last = (int64_t)-kth_largest(v, m, keep_ties);
  }
  keep_ranked(t, wk, last, 1);
}

/* Room for more: the list cut to the entries at or above a weight that
 * at least cap of them reach, which ranks at or below the cap-th, so that
 * no entry of the cap largest goes.  The weight is a sample's: of SAMPLE
 * weights spread over the list, the one NEAR places below the cap-th's
 * place in the sample, a weight whose entries above it are nearly always
 * at least cap and seldom many more; one pass counts them, with no
 * selection among the entries, and a second keeps them.  Where fewer than
 * cap or all of them reach it (the sample misled, ties), the exact cut.
 * The cap largest are the same as after the exact cut: the cuts before
 * the last only make room, and the last, in strata_khat_top_settle, is
 * exact. */
#define NEAR 4
static void cut_for_room(strata_khat_top *t)
{
  const int64_t k = t->cap, n = t->n;
  if (n < 8 * SAMPLE) {
    cut(t);
    return;
  }
  double s[SAMPLE];
  for (int i = 0; i < SAMPLE; i++) s[i] = t->w[(int64_t)i * n / SAMPLE];
  const int at = (int)(k * SAMPLE / n) + NEAR;
  const double bar = kth_largest(s, SAMPLE, at < SAMPLE ? at + 1 : SAMPLE);
  const double *tw = t->w;
  int64_t reach = 0;
  for (int64_t i = 0; i < n; i++) reach += tw[i] >= bar;
  if (reach < k || reach == n) {
    cut(t);
    return;
  }
  /* The entries at the bar all stay, and one more entry than needed
   * costs nothing: no largest index among them to track. */
  keep_ranked(t, bar, INT64_MAX, 0);
}

void strata_khat_top_settle(strata_khat_top *t)
{
  if (t->n > t->cap) cut(t);
}

double *strata_khat_top_slot_cut(strata_khat_top *t, double w, int64_t index)
{
  cut_for_room(t);
  return strata_khat_top_slot(t, w, index);
}

void strata_khat_top_add(strata_khat_top *t, double w, int64_t index, const double *x)
{
  double *row = strata_khat_top_slot(t, w, index);
  if (row && x && t->dim > 0) memcpy(row, x, sizeof(double) * (size_t)t->dim);
}

void strata_khat_top_merge(strata_khat_top *t, const strata_khat_top *other)
{
  for (int64_t i = 0; i < other->n; i++)
    strata_khat_top_add(t, other->w[i], other->index[i],
                        other->dim == t->dim ? strata_khat_top_point(other, i) : NULL);
}

void strata_khat_top_take(strata_khat_top *t, strata_khat_top *other)
{
  if (t->n == 0 && !t->cut && t->cap == other->cap && t->dim == other->dim) {
    const strata_khat_top empty = *t;
    *t = *other;
    *other = empty;
    return;
  }
  strata_khat_top_merge(t, other);
  strata_khat_top_clear(other);
}

/* Record a ranks above record b: a larger weight, or the same weight at
 * a smaller index (the order is total); | and &, not || and &&, so that
 * the compiler makes no branch of it. */
static inline int ranks_above(const ranked *a, const ranked *b)
{
  return (a->w > b->w) | ((a->w == b->w) & (a->index < b->index));
}

/* a[0 .. n) in ranking order, largest first: a merge sort of the entries'
 * records, whose merges pick their next record without a branch on the
 * weights (with qsort, its calls to a comparison would be most of the
 * sort's cost; with the entries' places alone, every comparison would
 * wait for their weights' loads).  Each merge fills its run from both
 * ends at once, the largest of the two runs' heads at the front and the
 * least of their tails at the back: two chains of loads and comparisons
 * that do not wait for each other.  tmp has room for n; returns the
 * array that holds the result. */
static ranked *sort_ranked(ranked *a, ranked *tmp, int64_t n)
{
  ranked *src = a, *dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = lo + width < n ? lo + width : n;
      const int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      if (mid == hi) { /* one run: as it is */
        memcpy(dst + lo, src + lo, sizeof(ranked) * (size_t)(hi - lo));
        continue;
      }
      /* A's records left are src[i .. ie], B's src[j .. je]; the front
       * takes the better head, the back the worse tail.  A run used up
       * reads its first record (lo), never taken. */
      int64_t i = lo, j = mid, ie = mid - 1, je = hi - 1, kf = lo, kb = hi - 1;
      for (int64_t step = 0; step < (hi - lo + 1) / 2; step++) {
        int a = i <= ie, b = j <= je;
        const ranked *pa = &src[a ? i : lo], *pb = &src[b ? j : lo];
        const int right = (a == 0) | (b & ranks_above(pb, pa));
        dst[kf++] = *(right ? pb : pa);
        j += right;
        i += !right;
        if (kf > kb) break; /* an odd run's middle: the front took it */
        a = i <= ie;
        b = j <= je;
        const ranked *qa = &src[a ? ie : lo], *qb = &src[b ? je : lo];
        const int take_a = (b == 0) | (a & ranks_above(qb, qa));
        dst[kb--] = *(take_a ? qa : qb);
        ie -= take_a;
        je -= !take_a;
      }
    }
    ranked *swap = src;
    src = dst;
    dst = swap;
  }
  return src;
}

/* A weight as a key whose unsigned order is the weights' descending
 * order: its bits, the sign's and the rest's order turned as IEEE's
 * comparison wants them (-0 is +0). */
static inline uint64_t descending_key(double w)
{
  uint64_t b;
  if (w == 0.0) w = 0.0;
  memcpy(&b, &w, sizeof b);
  return b >> 63 ? b : ~(b | UINT64_C(1) << 63);
}

/* The entries in ranking order where their indices ascend, as those of a
 * list that one thread filled in sample order do: a radix sort of the
 * upper half of the weights' keys, a byte a pass (a byte that every key
 * shares takes no pass), which keeps equal keys in index order, then an
 * insertion sort on the whole keys, which moves only the few entries
 * whose keys' upper halves tie (the largest weights of an iteration lie
 * within a few per cent of each other, and the upper half resolves a
 * millionth).  The merge sort's comparisons cost several times these
 * passes.  Returns 0, sorting nothing, where the indices do not ascend or
 * too many entries tie in their keys' upper halves. */
static int sort_by_keys(strata_khat_top *t)
{
  const int64_t n = t->n;
  for (int64_t i = 1; i < n; i++)
    if (t->index[i - 1] >= t->index[i]) return 0;
  /* ranks has room for 2 cap records of 3 words: keys and places twice */
  uint64_t *key = t->ranks, *at = key + n, *key2 = at + n, *at2 = key2 + n;
  uint32_t count[4][256];
  memset(count, 0, sizeof count);
  for (int64_t i = 0; i < n; i++) {
    key[i] = descending_key(t->w[i]);
    at[i] = (uint64_t)i;
    for (int b = 4; b < 8; b++) count[b - 4][(key[i] >> 8 * b) & 255]++;
  }
  for (int b = 4; b < 8; b++) {
    uint32_t *c = count[b - 4];
    if (n == 0 || c[(key[0] >> 8 * b) & 255] == (uint32_t)n) continue;
    for (uint32_t v = 0, sum = 0; v < 256; v++) {
      const uint32_t m = c[v];
      c[v] = sum;
      sum += m;
    }
    for (int64_t i = 0; i < n; i++) {
      const uint32_t o = c[(key[i] >> 8 * b) & 255]++;
      key2[o] = key[i];
      at2[o] = at[i];
    }
    uint64_t *swap = key;
    key = key2;
    key2 = swap;
    swap = at;
    at = at2;
    at2 = swap;
  }
  /* Equal keys keep their order, the indices'.  Weights that differ only
   * below the upper half (a nearly flat integrand) would make this pass's
   * moves grow as n^2: past 4 n the merge sort takes over. */
  for (int64_t i = 1, moves = 0; i < n; i++)
    for (int64_t j = i; j > 0 && key[j] < key[j - 1]; j--) {
      if (++moves > 4 * n) return 0;
      const uint64_t k = key[j], a = at[j];
      key[j] = key[j - 1];
      at[j] = at[j - 1];
      key[j - 1] = k;
      at[j - 1] = a;
    }
  double *w = t->scratch;
  int64_t *index = t->order, *slot = (int64_t *)key2;
  memcpy(w, t->w, sizeof(double) * (size_t)n);
  memcpy(index, t->index, sizeof(int64_t) * (size_t)n);
  memcpy(slot, t->slot, sizeof(int64_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    t->w[i] = w[at[i]];
    t->index[i] = index[at[i]];
    t->slot[i] = slot[at[i]];
  }
  return 1;
}

int strata_khat_top_sort(strata_khat_top *t)
{
  strata_khat_top_settle(t);
  const int64_t n = t->n;
  if (!sort_by_keys(t)) {
    ranked *r = t->ranks, *tmp = r + t->cap;
    for (int64_t i = 0; i < n; i++) r[i] = (ranked){t->w[i], t->index[i], t->slot[i]};
    r = sort_ranked(r, tmp, n);
    for (int64_t i = 0; i < n; i++) { /* the entries in order, their rows where they were */
      t->w[i] = r[i].w;
      t->index[i] = r[i].index;
      t->slot[i] = r[i].slot;
    }
  }
  if (n == t->cap) { /* full: its last is the least it keeps */
    t->cut = 1;
    t->least_w = t->w[n - 1];
    t->least_index = t->index[n - 1];
  }
  return STRATA_OK;
}

double strata_khat_top_fit(strata_khat_top *t, int64_t S)
{
  const int64_t m = strata_khat_tail(S);
  if (strata_khat_top_sort(t) != STRATA_OK || t->n < m + 1) return NAN;
  return strata_khat_fit(t->w, m + 1);
}
