/* An instance of bench/peaks's family as bench/peaks/family_table.py
 * writes it, and its density: shared by tests/test_search.c and
 * bench/peaks/search_family.c. */
#ifndef STRATA_TEST_PEAKS_FAMILY_H
#define STRATA_TEST_PEAKS_FAMILY_H
#include <math.h>

#define MAXK 5
#define MAXD 10
typedef struct {
  int seed, d, K;
  const char *kind;
  double c[MAXK][MAXD];
  double u[MAXK][MAXD * (MAXD + 1) / 2]; /* U = L^-1 row by row: precision U^T U */
  double lognorm[MAXK];
} instance;

/* |U (x - c)|^2 of component k */
static inline double q2(const instance *in, int k, const double *x)
{
  double q = 0.0;
  for (int i = 0, t = 0; i < in->d; i++) {
    double s = 0.0;
    for (int j = 0; j <= i; j++, t++) s += in->u[k][t] * (x[j] - in->c[k][j]);
    q += s * s;
  }
  return q;
}

static inline double mixture(const instance *in, const double *x)
{
  double s = 0.0;
  for (int k = 0; k < in->K; k++) s += exp(in->lognorm[k] - 0.5 * q2(in, k, x));
  return s;
}
#endif
