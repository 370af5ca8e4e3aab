#include "qmc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "philox.h"
#include "stamp.h"

/* Joe and Kuo's primitive polynomials and initial direction numbers
 * (new-joe-kuo-6.21201, axes 2..32): degree s, coefficients a, m_1..m_s.
 * Axis 1 is van der Corput's (every m_k = 1).  tests/test_qmc.c checks the
 * numbers they generate against cuRAND's own table where cuRAND is built. */
static const struct {
  int s;
  unsigned a;
  unsigned m[7];
} joe_kuo[STRATA_MAX_DIM - 1] = {
    {1, 0, {1}},                        {2, 1, {1, 3}},
    {3, 1, {1, 3, 1}},                  {3, 2, {1, 1, 1}},
    {4, 1, {1, 1, 3, 3}},               {4, 4, {1, 3, 5, 13}},
    {5, 2, {1, 1, 5, 5, 17}},           {5, 4, {1, 1, 5, 5, 5}},
    {5, 7, {1, 1, 7, 11, 19}},          {5, 11, {1, 1, 5, 1, 1}},
    {5, 13, {1, 1, 1, 3, 11}},          {5, 14, {1, 3, 5, 5, 31}},
    {6, 1, {1, 3, 3, 9, 7, 49}},        {6, 13, {1, 1, 1, 15, 21, 21}},
    {6, 16, {1, 3, 1, 13, 27, 49}},     {6, 19, {1, 1, 1, 15, 7, 5}},
    {6, 22, {1, 3, 1, 15, 13, 25}},     {6, 25, {1, 1, 5, 5, 19, 61}},
    {7, 1, {1, 3, 7, 11, 23, 15, 103}}, {7, 4, {1, 3, 7, 13, 13, 15, 69}},
    {7, 7, {1, 1, 3, 13, 7, 35, 63}},   {7, 8, {1, 3, 5, 9, 1, 25, 53}},
    {7, 14, {1, 3, 1, 13, 9, 35, 107}}, {7, 19, {1, 3, 1, 5, 27, 61, 31}},
    {7, 21, {1, 1, 5, 11, 19, 41, 61}}, {7, 28, {1, 3, 5, 3, 3, 13, 69}},
    {7, 31, {1, 1, 7, 13, 1, 19, 1}},   {7, 32, {1, 3, 7, 5, 13, 19, 59}},
    {7, 37, {1, 1, 3, 9, 25, 29, 41}},  {7, 41, {1, 3, 5, 13, 23, 1, 55}},
    {7, 42, {1, 3, 7, 3, 13, 59, 17}},
};

void strata_sobol_directions(int d, uint64_t v[64])
{
  uint64_t m[64];
  if (d == 0) {
    for (int k = 0; k < 64; k++) m[k] = 1;
  } else {
    const int s = joe_kuo[d - 1].s;
    const unsigned a = joe_kuo[d - 1].a;
    for (int k = 0; k < s; k++) m[k] = joe_kuo[d - 1].m[k];
    for (int k = s; k < 64; k++) {
      uint64_t x = m[k - s] ^ (m[k - s] << s);
      for (int j = 1; j < s; j++)
        if ((a >> (s - 1 - j)) & 1u) x ^= m[k - j] << j;
      m[k] = x;
    }
  }
  for (int k = 0; k < 64; k++) v[k] = m[k] << (63 - k);
}

/* Product weights of the lattice search: every axis counts, later ones a
 * little less, so that no interaction order is ignored (a rule tuned only
 * for pairs of axes can be poor on an integrand like cos(sum_i i x_i)). */
static double lattice_weight(int d) { return 1.0 / (1.0 + d); }

/* Samples of the candidate search: the search costs about this many
 * operations per axis whatever N, a fraction of a second. */
#define CBC_WORK (INT64_C(1) << 25)

/* A rank-1 lattice rule for N = 2^log2n points, built component by
 * component: axis after axis, the generator (an odd number below N) that
 * minimises the worst-case error P_2 of the rule so far in the weighted
 * Korobov space of smoothness 1, with the kernel 2 pi^2 B_2(x).  For small N
 * every odd number is tried; beyond that a fixed random subset (CBC with a
 * random candidate set loses little in practice, and keeps the search
 * cheap).  The candidates come from a fixed stream, not the job's seed, and
 * every sum runs in one order: all ranks build the same rule. */
static int lattice_cbc(int dim, int log2n, uint32_t *z)
{
  const int64_t N = INT64_C(1) << log2n;
  const uint64_t mask = (uint64_t)N - 1;
  double *omega = malloc(sizeof(double) * (size_t)N), *prod = malloc(sizeof(double) * (size_t)N);
  if (!omega || !prod) {
    free(omega);
    free(prod);
    return -1;
  }
  for (int64_t k = 0; k < N; k++) {
    double x = (double)k / (double)N;
    omega[k] = 2.0 * M_PI * M_PI * (x * x - x + 1.0 / 6.0);
  }
  z[0] = 1;
  for (int64_t k = 0; k < N; k++) prod[k] = 1.0 + lattice_weight(0) * omega[k];
  int64_t ncand = N / 2, all = 1;
  if (ncand * N > CBC_WORK) {
    ncand = CBC_WORK / N;
    if (ncand < 16) ncand = 16;
    all = 0;
  }
  for (int d = 1; d < dim; d++) {
    const double g = lattice_weight(d);
    double best = INFINITY;
    uint32_t bestz = 1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t c = 0; c < ncand; c++) {
      uint32_t cand;
      if (all) {
        cand = (uint32_t)(2 * c + 1);
      } else {
        uint32_t w[4] = {0x4C000000u | (uint32_t)d, (uint32_t)log2n, (uint32_t)c, 0};
        strata_philox4x32_10(w, UINT64_C(0x5EED1A771CE));
        cand = (uint32_t)((w[0] | 1u) & mask);
      }
      double e = 0.0;
      for (int64_t k = 0; k < N; k++) e += prod[k] * (1.0 + g * omega[((uint64_t)k * cand) & mask]);
#pragma omp critical
      if (e < best || (e == best && cand < bestz)) {
        best = e;
        bestz = cand;
      }
    }
    z[d] = bestz;
    for (int64_t k = 0; k < N; k++) prod[k] *= 1.0 + g * omega[((uint64_t)k * bestz) & mask];
  }
  free(omega);
  free(prod);
  return 0;
}

int strata_qmc_log2n(int64_t neval, int nrand)
{
  double per = (double)neval / (double)nrand;
  int l = 1;
  /* nearest on a log scale: up while 2^(l+1/2) <= per */
  while (l < 62 && (double)(UINT64_C(1) << l) * 1.4142135623730951 <= per) l++;
  return l;
}

strata_qmc *strata_qmc_alloc(strata_qmc_rule rule, int dim, int nrand, int log2n)
{
  if (rule == STRATA_QMC_LATTICE && log2n > STRATA_LATTICE_MAX_LOG2N) {
    strata_error(STRATA_EINVAL, "qmc = lattice: 2^%d points per randomization (neval/nrand) "
                 "is more than the 2^%d a lattice rule is built for here; lower neval, "
                 "raise nrand or use qmc = sobol", log2n, STRATA_LATTICE_MAX_LOG2N);
    return NULL;
  }
  strata_qmc *q = calloc(1, sizeof *q);
  if (!q) goto nomem;
  q->rule = rule;
  q->dim = dim;
  q->nrand = nrand;
  q->log2n = log2n;
  size_t nd = (size_t)nrand * (size_t)dim;
  if (rule == STRATA_QMC_SOBOL) {
    q->dirs = malloc(sizeof(uint64_t) * nd * 64);
    q->dshift = malloc(sizeof(uint64_t) * nd);
    if (!q->dirs || !q->dshift) goto nomem;
  } else {
    q->shift = malloc(sizeof(double) * nd);
    if (!q->shift || lattice_cbc(dim, log2n, q->z) != 0) goto nomem;
  }
  return q;
nomem:
  strata_qmc_free(q);
  strata_error(STRATA_ENOMEM, "out of memory for %d randomizations of %d axes", nrand, dim);
  return NULL;
}

void strata_qmc_free(strata_qmc *q)
{
  if (!q) return;
  free(q->dirs);
  free(q->dshift);
  free(q->shift);
  free(q);
}

/* Counter tags for the randomizations' random bits: the sample streams use
 * tags 0..7 (groups of four axes), so these never meet them. */
enum { TAG_SCRAMBLE = 0x51000000u, TAG_SHIFT = 0x52000000u };

static void random_pair(uint64_t seed, uint32_t tag, uint32_t iteration, uint32_t a,
                        uint32_t b, uint64_t out[2])
{
  uint32_t c[4] = {tag, iteration, a, b};
  strata_philox4x32_10(c, seed);
  out[0] = (uint64_t)c[0] | (uint64_t)c[1] << 32;
  out[1] = (uint64_t)c[2] | (uint64_t)c[3] << 32;
}

/* Matousek's linear matrix scramble of one axis: digit t (bit 63 - t) of
 * every direction number becomes itself plus random multiples of the digits
 * before it, a random lower-triangular matrix with a unit diagonal. */
static void scramble_axis(uint64_t seed, uint32_t iteration, int r, int d,
                          const uint64_t *v, uint64_t *out)
{
  uint64_t row[64];
  for (int t = 0; t < 64; t += 2) {
    uint64_t w[2];
    random_pair(seed, TAG_SCRAMBLE | (uint32_t)d, iteration, (uint32_t)r, (uint32_t)t / 2, w);
    for (int u = 0; u < 2; u++) {
      int tt = t + u;
      uint64_t above = tt == 0 ? 0 : ~((UINT64_C(1) << (64 - tt)) - 1);
      row[tt] = (UINT64_C(1) << (63 - tt)) | (w[u] & above);
    }
  }
  for (int k = 0; k < 64; k++) {
    uint64_t x = 0;
    for (int t = 0; t < 64; t++) x |= (uint64_t)(__builtin_popcountll(v[k] & row[t]) & 1)
                                      << (63 - t);
    out[k] = x;
  }
}

void strata_qmc_randomize(strata_qmc *q, uint64_t seed, uint32_t iteration)
{
  const int dim = q->dim;
  for (int r = 0; r < q->nrand; r++) {
    for (int d = 0; d < dim; d += 2) {
      uint64_t w[2];
      random_pair(seed, TAG_SHIFT, iteration, (uint32_t)r, (uint32_t)d / 2, w);
      for (int u = 0; u < 2 && d + u < dim; u++) {
        size_t at = (size_t)r * (size_t)dim + (size_t)(d + u);
        if (q->rule == STRATA_QMC_SOBOL) q->dshift[at] = w[u];
        else q->shift[at] = strata_qmc_unit(w[u]);
      }
    }
    if (q->rule == STRATA_QMC_SOBOL)
      for (int d = 0; d < dim; d++) {
        uint64_t v[64];
        strata_sobol_directions(d, v);
        scramble_axis(seed, iteration, r, d, v,
                      q->dirs + ((size_t)r * (size_t)dim + (size_t)d) * 64);
      }
  }
  q->generation = strata_stamp_next();
}

static const char *rule_names[] = {"sobol", "lattice"};

const char *strata_qmc_rule_name(strata_qmc_rule r)
{
  return (unsigned)r < 2 ? rule_names[r] : "?";
}

int strata_qmc_rule_parse(const char *s, strata_qmc_rule *r)
{
  STRATA_GIVEN(s, "name");
  STRATA_GIVEN(r, "rule to set");
  for (int i = 0; i < 2; i++)
    if (strcasecmp(s, rule_names[i]) == 0) {
      *r = (strata_qmc_rule)i;
      return 0;
    }
  char shown[64];
  strata_escape(shown, sizeof shown, s);
  return strata_error(STRATA_EINVAL, "qmc rule '%s': must be sobol or lattice", shown);
}
