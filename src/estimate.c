#include "estimate.h"

#include <math.h>

static int stratified(const strata_strat *c, const double *s1, const double *s2, double shift,
                      double *I, double *var, int64_t *bad)
{
  const double V = 1.0 / (double)c->nhcube;
  double sum = 0.0, v2 = 0.0;
  for (int64_t h = 0; h < c->nhcube; h++) {
    double n = (double)c->nh[h];
    double m1 = s1[h] / n;
    double v = (s2[h] / n - m1 * m1) / (n - 1.0);
    if (!isfinite(v) || !isfinite(m1)) {
      *bad = h;
      return -1;
    }
    sum += V * (shift + m1);
    if (v > 0.0) v2 += V * V * v;
  }
  *I = sum;
  *var = v2;
  return 0;
}

static int pooled(const strata_strat *c, const double *s1, const double *s2, double shift,
                  double *I, double *var, int64_t *bad)
{
  double S1 = 0.0, S2 = 0.0;
  for (int64_t h = 0; h < c->nhcube; h++) {
    if (!isfinite(s1[h]) || !isfinite(s2[h])) {
      *bad = h;
      return -1;
    }
    S1 += s1[h];
    S2 += s2[h];
  }
  double n = (double)c->start[c->nhcube], m1 = S1 / n;
  double v = (S2 / n - m1 * m1) / (n - 1.0);
  *I = shift + m1;
  *var = v > 0.0 ? v : 0.0;
  return 0;
}

static int randomized(const strata_strat *c, const double *s1, double shift, int ngroup,
                      double *I, double *var, int64_t *bad)
{
  const int64_t per = c->nhcube / ngroup;
  double mean[ngroup], sum = 0.0;
  for (int r = 0; r < ngroup; r++) {
    double S1 = 0.0;
    for (int64_t h = r * per; h < (r + 1) * per; h++) {
      if (!isfinite(s1[h])) {
        *bad = h;
        return -1;
      }
      S1 += s1[h];
    }
    mean[r] = S1 / (double)(c->start[(r + 1) * per] - c->start[r * per]);
    sum += mean[r];
  }
  double m = sum / ngroup, ss = 0.0;
  for (int r = 0; r < ngroup; r++) ss += (mean[r] - m) * (mean[r] - m);
  *I = shift + m;
  *var = ss / ((double)ngroup * (double)(ngroup - 1));
  return 0;
}

int strata_estimate(strata_estimator kind, const strata_strat *cells, const double *s1,
                    const double *s2, double shift, int ngroup, double *I, double *var,
                    int64_t *bad)
{
  switch (kind) {
  case STRATA_EST_POOLED: return pooled(cells, s1, s2, shift, I, var, bad);
  case STRATA_EST_RANDOMIZED: return randomized(cells, s1, shift, ngroup, I, var, bad);
  default: return stratified(cells, s1, s2, shift, I, var, bad);
  }
}
