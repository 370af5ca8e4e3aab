#include "estimate.h"
#include "cellmoments.h"

#include <math.h>

/* Every estimator works on ncomp components at once: per cell, c1 holds the
 * components' sums of J f_c - shift_c (stride ncomp) and c2 the sums of the
 * products of the shifted values for pairs a <= b, packed row by row
 * (stride npair).  A scalar integrand is the case ncomp = 1, where c1 and
 * c2 are s1 and s2: so the diagonal of the covariance is, to the bit, what
 * the scalar estimate of that component alone would be. */

static int npair(int ncomp) { return ncomp * (ncomp + 1) / 2; }

/* Adds scale * v to the covariance, where strata_cell_positive allows. */
static void add_cov(int nc, const double *v, double scale, double *cov)
{
  int pd[STRATA_EST_MAX_COMP];
  strata_cell_positive(nc, v, pd);
  for (int a = 0, p = 0; a < nc; a++)
    for (int b = a; b < nc; b++, p++)
      if (pd[a] && pd[b]) {
        cov[a * nc + b] += scale * v[p];
        if (b != a) cov[b * nc + a] = cov[a * nc + b];
      }
}

/* The terms of hypercubes [h0, h1): the whole estimate when that is all of
 * them, one rank's part of it otherwise.  The shift's share, the fraction
 * (h1 - h0) / nhcube of it, is added once: added cell by cell, 1e5 equal
 * terms summed in order came out 1.2e-13 away from their sum, and the
 * integrand 1 that far from 1 with an error of 1e-16. */
static int stratified(const strata_strat *c, int nc, const double *c1, const double *c2,
                      const double *shift, int64_t h0, int64_t h1, double *I, double *cov,
                      int64_t *bad)
{
  const double V = 1.0 / (double)c->nhcube;
  if (nc == 1) {
    /* The general loop below for one component, spelled out: the same
     * operations in the same order (so the same bits), without the
     * per-cell loops over components that cost more than the arithmetic
     * at 1e5 and more hypercubes. */
    double sI = 0.0, sv = 0.0;
    for (int64_t h = h0; h < h1; h++) {
      const double n = (double)c->nh[h], m = c1[h] / n,
                   v = (c2[h] - c1[h] * m) / (n * (n - 1.0));
      if (!isfinite(m) || !isfinite(v)) {
        *bad = h;
        return -1;
      }
      sI += V * m;
      if (v > 0.0) sv += V * V * v;
    }
    I[0] = sI + shift[0] * ((double)(h1 - h0) / (double)c->nhcube);
    cov[0] = sv;
    return 0;
  }
  const int np = npair(nc);
  double m[STRATA_EST_MAX_COMP], v[STRATA_EST_MAX_COMP * (STRATA_EST_MAX_COMP + 1) / 2];
  for (int a = 0; a < nc; a++) I[a] = 0.0;
  for (int a = 0; a < nc * nc; a++) cov[a] = 0.0;
  for (int64_t h = h0; h < h1; h++) {
    if (!strata_cell_moments(nc, c1 + h * nc, c2 + h * np, (double)c->nh[h], m, v)) {
      *bad = h;
      return -1;
    }
    for (int a = 0; a < nc; a++) I[a] += V * m[a];
    add_cov(nc, v, V * V, cov);
  }
  for (int a = 0; a < nc; a++) I[a] = I[a] + shift[a] * ((double)(h1 - h0) / (double)c->nhcube);
  return 0;
}

static int pooled(const strata_strat *c, int nc, const double *c1, const double *c2,
                  const double *shift, double *I, double *cov, int64_t *bad)
{
  const int np = npair(nc);
  double S1[STRATA_EST_MAX_COMP] = {0}, S2[STRATA_EST_MAX_COMP * (STRATA_EST_MAX_COMP + 1) / 2] = {0};
  for (int64_t h = 0; h < c->nhcube; h++) {
    int ok = 1;
    for (int a = 0; a < nc; a++) ok = ok && isfinite(c1[h * nc + a]);
    for (int p = 0; p < np; p++) ok = ok && isfinite(c2[h * np + p]);
    if (!ok) {
      *bad = h;
      return -1;
    }
    for (int a = 0; a < nc; a++) S1[a] += c1[h * nc + a];
    for (int p = 0; p < np; p++) S2[p] += c2[h * np + p];
  }
  double m[STRATA_EST_MAX_COMP], v[STRATA_EST_MAX_COMP * (STRATA_EST_MAX_COMP + 1) / 2];
  strata_cell_moments(nc, S1, S2, (double)c->start[c->nhcube], m, v);
  for (int a = 0; a < nc; a++) I[a] = shift[a] + m[a];
  for (int a = 0; a < nc * nc; a++) cov[a] = 0.0;
  add_cov(nc, v, 1.0, cov);
  return 0;
}

static int randomized(const strata_strat *c, int nc, const double *c1, const double *shift,
                      int ngroup, double *I, double *cov, int64_t *bad)
{
  const int64_t per = c->nhcube / ngroup;
  double mean[ngroup * nc], sum[STRATA_EST_MAX_COMP] = {0};
  for (int r = 0; r < ngroup; r++) {
    double S1[STRATA_EST_MAX_COMP] = {0};
    for (int64_t h = r * per; h < (r + 1) * per; h++)
      for (int a = 0; a < nc; a++) {
        if (!isfinite(c1[h * nc + a])) {
          *bad = h;
          return -1;
        }
        S1[a] += c1[h * nc + a];
      }
    double n = (double)(c->start[(r + 1) * per] - c->start[r * per]);
    for (int a = 0; a < nc; a++) {
      mean[r * nc + a] = S1[a] / n;
      sum[a] += mean[r * nc + a];
    }
  }
  double m[STRATA_EST_MAX_COMP];
  for (int a = 0; a < nc; a++) {
    m[a] = sum[a] / ngroup;
    I[a] = shift[a] + m[a];
  }
  /* The groups are independent: their scatter is the error, and their
   * joint scatter the covariance. */
  for (int a = 0; a < nc; a++)
    for (int b = a; b < nc; b++) {
      double ss = 0.0;
      for (int r = 0; r < ngroup; r++) ss += (mean[r * nc + a] - m[a]) * (mean[r * nc + b] - m[b]);
      cov[a * nc + b] = cov[b * nc + a] = ss / ((double)ngroup * (double)(ngroup - 1));
    }
  return 0;
}

int strata_estimate_cov(strata_estimator kind, const strata_strat *cells, int ncomp,
                        const double *c1, const double *c2, const double *shift, int ngroup,
                        double *I, double *cov, int64_t *bad)
{
  switch (kind) {
  case STRATA_EST_POOLED: return pooled(cells, ncomp, c1, c2, shift, I, cov, bad);
  case STRATA_EST_RANDOMIZED: return randomized(cells, ncomp, c1, shift, ngroup, I, cov, bad);
  default: return stratified(cells, ncomp, c1, c2, shift, 0, cells->nhcube, I, cov, bad);
  }
}

int strata_estimate_part(const strata_strat *cells, int ncomp, const double *c1,
                         const double *c2, const double *shift, int64_t h0, int64_t h1,
                         double *part, int64_t *bad)
{
  return stratified(cells, ncomp, c1, c2, shift, h0, h1, part, part + ncomp, bad);
}

int strata_estimate(strata_estimator kind, const strata_strat *cells, const double *s1,
                    const double *s2, double shift, int ngroup, double *I, double *var,
                    int64_t *bad)
{
  return strata_estimate_cov(kind, cells, 1, s1, s2, &shift, ngroup, I, var, bad);
}
