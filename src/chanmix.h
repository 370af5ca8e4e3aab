/* The channels' mixture as a sample sees it, written once for the host
 * (channels.c, the CPU backend) and the device (the CUDA backend's
 * kernels, NVRTC's included): the channels' layout, each mode channel's
 * Student-t density, a channel's points, and which channel and block a
 * point belongs to.  Plain C over one struct, with no headers NVRTC lacks;
 * channels.h has the rest (the weights' adaptation, the estimate, the
 * checkpoint). */
#ifndef STRATA_CHANMIX_H
#define STRATA_CHANMIX_H
#include <math.h>
#include <stdint.h>

#include "hostdev.h"
#include "philox.h"
#ifndef STRATA_MAX_DIM
#include "strata/strata.h"
#endif

/* Student-t degrees of freedom of a mode's channel. */
#define STRATA_CHANNEL_NU 5
/* The map's share of the points, at least. */
#define STRATA_CHANNEL_MAP_MIN 0.1
/* Mode channels, at most (the search's modes). */
#define STRATA_MAX_CHANNELS 16
/* The channels' points go in blocks of this many, each within one channel
 * (channels.h). */
#define STRATA_CHANNEL_BLOCK 256

typedef struct {
  int dim;
  int nmode;                    /* mode channels: 1..nmode; nmode + 1 the uniform */
  double m[STRATA_MAX_CHANNELS][STRATA_MAX_DIM];
  /* L, lower triangular, with L L^T = H^-1 (row-major, dim x dim). */
  double chol[STRATA_MAX_CHANNELS][STRATA_MAX_DIM * STRATA_MAX_DIM];
  double lognorm[STRATA_MAX_CHANNELS]; /* log of the t density's constant, det L included */
  /* The weights the next counts come from: alpha[0] the map's, alpha[1 ..
   * nmode] the modes', alpha[nmode + 1] the uniform part's; they add to 1. */
  double alpha[STRATA_MAX_CHANNELS + 2];
  double uniform;               /* the uniform part's fixed share */
  /* This iteration's points per channel (n[0] the map's, the total of its
   * allocation) and their total N: the realised shares. */
  int64_t n[STRATA_MAX_CHANNELS + 2];
  int64_t N;
} strata_channels;

STRATA_HD int strata_chan_count(const strata_channels *ch) { return ch->nmode + 2; }

/* log t_c(z) of mode channel c (1-based). */
STRATA_HD double strata_chan_t_logpdf(const strata_channels *ch, int c, const double *z)
{
  const int dim = ch->dim;
  const double *L = ch->chol[c - 1], *m = ch->m[c - 1];
  double v[STRATA_MAX_DIM], q = 0.0;
  for (int i = 0; i < dim; i++) { /* v = L^-1 (z - m), forward substitution */
    double s = z[i] - m[i];
    for (int k = 0; k < i; k++) s -= L[i * dim + k] * v[k];
    v[i] = s / L[i * dim + i];
    q += v[i] * v[i];
  }
  const double nu = STRATA_CHANNEL_NU;
  return ch->lognorm[c - 1] - 0.5 * (nu + dim) * log1p(q / nu);
}

STRATA_HD int strata_chan_inside(int dim, const double *z)
{
  for (int d = 0; d < dim; d++)
    if (!(z[d] > 0.0 && z[d] < 1.0)) return 0;
  return 1;
}

/* Each channel's alpha_c g_c(z) (c >= 1, alpha_c the realised shares) into
 * a[c]; returns their sum, the channels' part of g beside the map's.  z
 * outside the cube has only the t's. */
STRATA_HD double strata_chan_parts(const strata_channels *ch, const double *z, double *a)
{
  const double invN = 1.0 / (double)ch->N;
  double sum = 0.0;
  for (int c = 1; c <= ch->nmode; c++) {
    a[c] = (double)ch->n[c] * invN * exp(strata_chan_t_logpdf(ch, c, z));
    sum += a[c];
  }
  const int u = ch->nmode + 1;
  a[u] = strata_chan_inside(ch->dim, z) ? (double)ch->n[u] * invN : 0.0;
  return sum + a[u];
}

/* The tag that keys the channels' streams apart from the map's. */
#define STRATA_CHANNEL_TAG UINT64_C(0x7065616b73636831)

STRATA_HD uint64_t strata_chan_splitmix64(uint64_t x)
{
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

/* Standard normals from a stream of uniforms (Box-Muller, in pairs). */
STRATA_HD void strata_chan_normals(uint64_t key, uint32_t k, int64_t j, int n, double *out)
{
  const double two_pi = 2.0 * 3.14159265358979323846;
  double u[4];
  for (int b = 0, i = 0; i < n; b++) {
    uint32_t cnt[4];
    strata_philox_counter(cnt, b, k, (uint64_t)j);
    strata_philox4x32_10(cnt, key);
    for (int q = 0; q < 4; q++) u[q] = STRATA_U32_TO_UNIT(cnt[q]);
    for (int q = 0; q < 4 && i < n; q += 2) {
      const double r = sqrt(-2.0 * log(u[q])), t = two_pi * u[q + 1];
      out[i++] = r * cos(t);
      if (i < n) out[i++] = r * sin(t);
    }
  }
}

/* Channel c's (1 <= c <= nmode + 1) point j of iteration k, in z: a
 * function of (seed, c, k, j) alone.  A t channel's point may fall outside
 * the cube (its f counts as 0).  Returns 1 when z is inside the cube. */
STRATA_HD int strata_chan_point(const strata_channels *ch, uint64_t seed, uint32_t k, int c,
                                int64_t j, double *z)
{
  const int dim = ch->dim;
  const uint64_t key = strata_chan_splitmix64(seed ^ (STRATA_CHANNEL_TAG + (uint64_t)c));
  if (c == ch->nmode + 1) {
    strata_sample_uniforms(key, k, (uint64_t)j, dim, 32, NULL, z);
    return 1;
  }
  double n[STRATA_MAX_DIM + STRATA_CHANNEL_NU];
  strata_chan_normals(key, k, j, dim + STRATA_CHANNEL_NU, n);
  double chi2 = 0.0;
  for (int i = 0; i < STRATA_CHANNEL_NU; i++) chi2 += n[dim + i] * n[dim + i];
  const double s = sqrt(STRATA_CHANNEL_NU / chi2);
  const double *L = ch->chol[c - 1], *m = ch->m[c - 1];
  for (int i = 0; i < dim; i++) {
    double v = 0.0;
    for (int q = 0; q <= i; q++) v += L[i * dim + q] * n[q];
    z[i] = m[i] + s * v;
  }
  return strata_chan_inside(dim, z);
}

STRATA_HD int64_t strata_chan_blocks_of(int64_t n)
{
  return (n + STRATA_CHANNEL_BLOCK - 1) / STRATA_CHANNEL_BLOCK;
}

/* Block b's channel *c and its points [*j0, *j1) of that channel. */
STRATA_HD void strata_chan_block(const strata_channels *ch, int64_t b, int *c, int64_t *j0,
                                 int64_t *j1)
{
  int k = 1;
  while (k <= ch->nmode && b >= strata_chan_blocks_of(ch->n[k]))
    b -= strata_chan_blocks_of(ch->n[k++]);
  *c = k;
  *j0 = b * STRATA_CHANNEL_BLOCK;
  *j1 = *j0 + STRATA_CHANNEL_BLOCK < ch->n[k] ? *j0 + STRATA_CHANNEL_BLOCK : ch->n[k];
}

/* The global sample index of channel c's point j (the map's come first). */
STRATA_HD int64_t strata_chan_index(const strata_channels *ch, int c, int64_t j)
{
  int64_t i = ch->n[0];
  for (int k = 1; k < c; k++) i += ch->n[k];
  return i + j;
}

/* Its inverse: the channel *c and point *j of global sample index i >= n[0]. */
STRATA_HD void strata_chan_of_index(const strata_channels *ch, int64_t i, int *c, int64_t *j)
{
  int k = 1;
  i -= ch->n[0];
  while (k <= ch->nmode && i >= ch->n[k]) i -= ch->n[k++];
  *c = k;
  *j = i;
}
#endif
