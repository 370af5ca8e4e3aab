#include "compstream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t npair(int nc) { return (size_t)nc * (size_t)(nc + 1) / 2; }

strata_compstream *strata_compstream_alloc(int nc)
{
  strata_compstream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nc = nc;
  s->rowstart = malloc(sizeof(size_t) * (size_t)nc);
  s->s1 = calloc((size_t)nc, sizeof(double));
  s->s2 = calloc((size_t)nc, sizeof(double));
  s->touched = malloc(sizeof(int) * (size_t)nc);
  s->mark = calloc((size_t)nc, 1);
  s->nz = malloc(sizeof(int) * (size_t)nc);
  s->nzv = malloc(sizeof(double) * (size_t)nc);
  s->I = malloc(sizeof(double) * (size_t)nc);
  s->diag = malloc(sizeof(double) * (size_t)nc);
  s->cross = malloc(sizeof(double) * npair(nc));
  if (!s->rowstart || !s->s1 || !s->s2 || !s->touched || !s->mark || !s->nz || !s->nzv ||
      !s->I || !s->diag || !s->cross) {
    strata_compstream_free(s);
    return NULL;
  }
  for (int a = 0; a < nc; a++)
    s->rowstart[a] = (size_t)a * (size_t)nc - (size_t)a * (size_t)(a + 1) / 2;
  strata_compstream_clear(s);
  return s;
}

void strata_compstream_free(strata_compstream *s)
{
  if (!s) return;
  free(s->rowstart);
  free(s->s1);
  free(s->s2);
  free(s->touched);
  free(s->mark);
  free(s->nz);
  free(s->nzv);
  free(s->I);
  free(s->diag);
  free(s->cross);
  free(s);
}

void strata_compstream_clear(strata_compstream *s)
{
  /* A hypercube left open by a sample that was not finite, too. */
  for (int i = 0; i < s->ntouched; i++) {
    s->s1[s->touched[i]] = s->s2[s->touched[i]] = 0.0;
    s->mark[s->touched[i]] = 0;
  }
  s->ntouched = 0;
  memset(s->I, 0, sizeof(double) * (size_t)s->nc);
  memset(s->diag, 0, sizeof(double) * (size_t)s->nc);
  memset(s->cross, 0, sizeof(double) * npair(s->nc));
  s->bad = -1;
  s->bad_near = 0.0;
}

int strata_compstream_scan(strata_compstream *s, const double *f, double *abs_sum)
{
  const int nc = s->nc;
  int n = 0;
  /* Without a branch: a histogram's zeros and nonzeros come unpredictably. */
  for (int c = 0; c < nc; c++) {
    s->nz[n] = c;
    n += f[c] != 0.0;
  }
  double sum = 0.0;
  for (int i = 0; i < n; i++) {
    const double v = f[s->nz[i]];
    if (!isfinite(v)) return s->nz[i];
    s->nzv[i] = v;
    sum += fabs(v);
  }
  s->nnz = n;
  *abs_sum = sum;
  return -1;
}

void strata_compstream_add(strata_compstream *s, double jac)
{
  const int nc = s->nc, n = s->nnz;
  for (int i = 0; i < n; i++) {
    const int c = s->nz[i];
    const double w = (s->nzv[i] *= jac);
    s->s1[c] += w;
    s->s2[c] += w * w;
    if (!s->mark[c]) {
      s->mark[c] = 1;
      s->touched[s->ntouched++] = c;
    }
  }
  const double alpha = s->alpha;
  if (n == nc) {
    /* Dense: rows in a stretch, which the compiler vectorizes. */
    for (int a = 0; a < nc; a++) {
      double *row = s->cross + s->rowstart[a];
      const double x = alpha * s->nzv[a];
      for (int b = a + 1; b < nc; b++) row[b] += x * s->nzv[b];
    }
    return;
  }
  for (int i = 0; i < n; i++) {
    double *row = s->cross + s->rowstart[s->nz[i]];
    const double x = alpha * s->nzv[i];
    for (int j = i + 1; j < n; j++) row[s->nz[j]] += x * s->nzv[j];
  }
}

int strata_compstream_close(strata_compstream *s, int64_t h, int64_t n, double V)
{
  const double dn = (double)n, nn1 = dn * (dn - 1.0), beta = s->alpha / dn;
  int ok = 1;
  for (int i = 0; i < s->ntouched; i++) {
    const int a = s->touched[i];
    const double m = s->s1[a] / dn, v = (s->s2[a] - s->s1[a] * m) / nn1;
    if (!isfinite(m) || !isfinite(v)) {
      if (ok && s->bad < 0) {
        s->bad = h;
        s->bad_near = m;
      }
      ok = 0;
    }
    s->I[a] += V * m;
    if (v > 0.0) s->diag[a] += V * V * v;
    /* The hypercube's own outer product, over the pairs of its nonzero
     * components. */
    const double x = beta * s->s1[a];
    for (int j = 0; j < i; j++) {
      const int b = s->touched[j], lo = a < b ? a : b, hi = a < b ? b : a;
      s->cross[s->rowstart[lo] + (size_t)hi] -= x * s->s1[b];
    }
  }
  for (int i = 0; i < s->ntouched; i++) {
    const int a = s->touched[i];
    s->s1[a] = s->s2[a] = 0.0;
    s->mark[a] = 0;
  }
  s->ntouched = 0;
  return ok ? 0 : -1;
}

void strata_compstream_into_part(const strata_compstream *s, double *part)
{
  const int nc = s->nc;
  double *cov = part + nc;
  for (int a = 0; a < nc; a++) {
    part[a] += s->I[a];
    double *row = cov + (size_t)a * (size_t)nc;
    const double *src = s->cross + s->rowstart[a];
    row[a] += s->diag[a];
    for (int b = a + 1; b < nc; b++) row[b] += src[b];
  }
}

void strata_compstream_mirror(int nc, double *part)
{
  double *cov = part + nc;
  for (int a = 0; a < nc; a++)
    for (int b = a + 1; b < nc; b++) cov[(size_t)b * (size_t)nc + a] = cov[(size_t)a * (size_t)nc + b];
}
