/* The sampling channels beside the map (channels.h, doc/peaks.md). */
#include "channels.h"

#include <math.h>
#include <string.h>

void strata_channels_init(strata_channels *ch, int dim, double uniform)
{
  memset(ch, 0, sizeof *ch);
  ch->dim = dim;
  ch->uniform = uniform;
  ch->alpha[0] = 1.0 - uniform;
  ch->alpha[1] = uniform;
}

static double t_lognorm(int dim, const double *L)
{
  const double nu = STRATA_CHANNEL_NU;
  double logdet = 0.0;
  for (int d = 0; d < dim; d++) logdet += log(L[d * dim + d]);
  return lgamma(0.5 * (nu + dim)) - lgamma(0.5 * nu) - 0.5 * dim * log(nu * M_PI) - logdet;
}

int strata_channels_add(strata_channels *ch, const double *m, const double *chol)
{
  if (ch->nmode >= STRATA_MAX_CHANNELS) return -1;
  const int dim = ch->dim, c = ++ch->nmode;
  memcpy(ch->m[c - 1], m, sizeof(double) * (size_t)dim);
  memcpy(ch->chol[c - 1], chol, sizeof(double) * (size_t)dim * (size_t)dim);
  ch->lognorm[c - 1] = t_lognorm(dim, chol);
  /* The uniform part moves one place on; the new mode takes the mean
   * weight of the map and the modes before it, and all are renormalised
   * to 1 - uniform (the prototype's start). */
  ch->alpha[c + 1] = ch->uniform;
  double sum = 0.0;
  for (int k = 0; k < c; k++) sum += ch->alpha[k];
  ch->alpha[c] = sum / c;
  const double scale = (1.0 - ch->uniform) / (sum + ch->alpha[c]);
  for (int k = 0; k <= c; k++) ch->alpha[k] *= scale;
  return c;
}

int64_t strata_channels_nmin(const strata_channels *ch)
{
  return 4 * ch->dim > 32 ? 4 * ch->dim : 32;
}

void strata_channels_plan(strata_channels *ch, int64_t N)
{
  const int nm = ch->nmode;
  const int64_t nmin = strata_channels_nmin(ch);
  int64_t rest = N;
  for (int c = 1; c <= nm + 1; c++) {
    int64_t n = llround(ch->alpha[c] * (double)N);
    if (c <= nm && n < nmin) n = nmin;
    if (c == nm + 1 && n < 1) n = 1;
    ch->n[c] = n;
    rest -= n;
  }
  const int64_t floor0 = (int64_t)ceil(STRATA_CHANNEL_MAP_MIN * (double)N);
  ch->n[0] = rest < floor0 ? floor0 : rest;
  strata_channels_realise(ch, ch->n[0]);
}

void strata_channels_realise(strata_channels *ch, int64_t n0)
{
  ch->n[0] = n0;
  ch->N = 0;
  for (int c = 0; c <= ch->nmode + 1; c++) ch->N += ch->n[c];
}

double strata_channels_parts(const strata_channels *ch, const double *z, double *a)
{
  return strata_chan_parts(ch, z, a);
}

double strata_channels_density(const strata_channels *ch, const double *z)
{
  double a[STRATA_MAX_CHANNELS + 2];
  return strata_channels_parts(ch, z, a);
}

int strata_channels_point(const strata_channels *ch, uint64_t seed, uint32_t k, int c,
                          int64_t j, double *z)
{
  return strata_chan_point(ch, seed, k, c, j, z);
}

void strata_channels_adapt(strata_channels *ch, const double *W)
{
  const int nm = ch->nmode;
  double a[STRATA_MAX_CHANNELS + 1], sum = 0.0;
  for (int c = 0; c <= nm; c++) {
    const double share = (double)ch->n[c] / (double)ch->N;
    a[c] = W[c] > 0.0 && isfinite(W[c]) ? share * sqrt(W[c]) : 0.0;
    sum += a[c];
  }
  if (!(sum > 0.0) || !isfinite(sum)) return; /* nothing measured: the weights stay */
  const double keep = 1.0 - ch->uniform;
  for (int c = 0; c <= nm; c++) a[c] *= keep / sum;
  if (a[0] < STRATA_CHANNEL_MAP_MIN) {
    const double modes = keep - a[0], want = keep - STRATA_CHANNEL_MAP_MIN;
    for (int c = 1; c <= nm; c++) a[c] = modes > 0.0 ? a[c] * want / modes : want / nm;
    a[0] = STRATA_CHANNEL_MAP_MIN;
  }
  for (int c = 0; c <= nm; c++) ch->alpha[c] = a[c];
  ch->alpha[nm + 1] = ch->uniform;
}

int64_t strata_channels_nblocks(const strata_channels *ch)
{
  int64_t nb = 0;
  for (int c = 1; c <= ch->nmode + 1; c++) nb += strata_chan_blocks_of(ch->n[c]);
  return nb;
}

void strata_channels_block(const strata_channels *ch, int64_t b, int *c, int64_t *j0, int64_t *j1)
{
  strata_chan_block(ch, b, c, j0, j1);
}

int64_t strata_channels_index(const strata_channels *ch, int c, int64_t j)
{
  return strata_chan_index(ch, c, j);
}

void strata_channels_estimate(const strata_channels *ch, const double *blocks, double *I,
                              double *var, double *mean)
{
  int64_t b = 0;
  for (int c = 1; c <= ch->nmode + 1; c++) {
    /* Chan, Golub and LeVeque's pairwise update, block after block. */
    double n = 0.0, mu = 0.0, m2 = 0.0;
    for (int64_t k = 0; k < strata_chan_blocks_of(ch->n[c]); k++, b++) {
      const double *s = blocks + b * STRATA_CHANNEL_BLOCK_SUMS;
      const double nb = s[0], d = s[1] - mu, tot = n + nb;
      if (!(nb > 0.0)) continue;
      mu += d * nb / tot;
      m2 += s[2] + d * d * n * nb / tot;
      n = tot;
    }
    *I += mu;
    if (n > 1.0) *var += m2 / (n - 1.0) / n;
    if (mean) mean[c] = mu;
  }
}

/* dim, nmode, uniform; the modes' m and L; the weights. */
size_t strata_channels_state_size(int dim)
{
  return 3 + (size_t)STRATA_MAX_CHANNELS * ((size_t)dim + (size_t)dim * (size_t)dim) +
         STRATA_MAX_CHANNELS + 2;
}

void strata_channels_state_get(const strata_channels *ch, double *buf)
{
  const int dim = ch->dim;
  memset(buf, 0, sizeof(double) * strata_channels_state_size(dim));
  buf[0] = dim;
  buf[1] = ch->nmode;
  buf[2] = ch->uniform;
  double *p = buf + 3;
  for (int c = 0; c < STRATA_MAX_CHANNELS; c++, p += dim + dim * dim) {
    memcpy(p, ch->m[c], sizeof(double) * (size_t)dim);
    memcpy(p + dim, ch->chol[c], sizeof(double) * (size_t)dim * (size_t)dim);
  }
  memcpy(p, ch->alpha, sizeof(double) * (STRATA_MAX_CHANNELS + 2));
}

int strata_channels_state_set(strata_channels *ch, const double *buf, size_t n)
{
  const int dim = ch->dim;
  if (n != strata_channels_state_size(dim) || buf[0] != dim || !(buf[1] >= 0) ||
      buf[1] > STRATA_MAX_CHANNELS || !(buf[2] > 0.0 && buf[2] < 1.0))
    return -1;
  strata_channels_init(ch, dim, buf[2]);
  const double *p = buf + 3;
  for (int c = 0; c < STRATA_MAX_CHANNELS; c++, p += dim + dim * dim) {
    memcpy(ch->m[c], p, sizeof(double) * (size_t)dim);
    memcpy(ch->chol[c], p + dim, sizeof(double) * (size_t)dim * (size_t)dim);
  }
  ch->nmode = (int)buf[1];
  for (int c = 0; c < ch->nmode; c++) {
    for (int d = 0; d < dim; d++)
      if (!(ch->chol[c][d * dim + d] > 0.0)) return -1;
    ch->lognorm[c] = t_lognorm(dim, ch->chol[c]);
  }
  memcpy(ch->alpha, p, sizeof(double) * (STRATA_MAX_CHANNELS + 2));
  return 0;
}
