/* The peak search's Sobol' round alone on instances of the family: the
 * share of the components it finds, by d and K, and the evaluations it
 * spends.  Built and run by search_family.sh, which writes the instances'
 * table (family_table.py) into family_rows.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peaks_family.h"
#include "search.h"

static const instance rows[] = {
#include "family_rows.h"
};

static int64_t calls; /* evaluator calls: the search's batches */

static int density(void *ctx, int64_t n, const double *y, double *f)
{
  calls++;
  const instance *in = ctx;
  for (int64_t i = 0; i < n; i++) f[i] = mixture(in, y + i * in->d);
  return 0;
}

static int by_value(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  const int n = (int)(sizeof rows / sizeof rows[0]);
  int found[MAXD + 1][MAXK + 1] = {{0}}, total[MAXD + 1][MAXK + 1] = {{0}};
  double *evals = malloc(sizeof(double) * (size_t)n), *batches = malloc(sizeof(double) * (size_t)n);
  int all_found = 0, spurious = 0;
  static const char *kinds[3] = {"axis", "rotated", "narrow-broad"};
  int kfound[3] = {0}, ktotal[3] = {0};
  strata_search_params p;
  strata_search_params_default(&p);
  for (int r = 0; r < n; r++) {
    const instance *in = &rows[r];
    strata_search *s;
    if (strata_search_alloc(in->d, &p, &s) != 0) return 1;
    calls = 0;
    if (strata_search_sobol(s, seed + (uint64_t)in->seed, density, (void *)in) != 0) return 1;
    batches[r] = (double)calls;
    int got = 0;
    for (int k = 0; k < in->K; k++) {
      int hit = 0;
      for (int j = 0; j < strata_search_nmodes(s); j++)
        if (q2(in, k, strata_search_mode(s, j)->m) <= 1.0) hit = 1;
      got += hit;
      found[in->d][in->K] += hit;
    }
    for (int j = 0; j < strata_search_nmodes(s); j++) {
      int near = 0;
      for (int k = 0; k < in->K; k++)
        if (q2(in, k, strata_search_mode(s, j)->m) <= 1.0) near = 1;
      spurious += !near;
    }
    total[in->d][in->K] += in->K;
    for (int t = 0; t < 3; t++)
      if (strcmp(in->kind, kinds[t]) == 0) {
        kfound[t] += got;
        ktotal[t] += in->K;
      }
    all_found += got == in->K;
    evals[r] = (double)strata_search_evals(s);
    strata_search_free(s);
  }
  printf("components found by the Sobol' round (default parameters), %d instances\n", n);
  printf("   d   K=2    K=3    K=4    K=5\n");
  int fa = 0, ta = 0;
  for (int d = 4; d <= MAXD; d++) {
    printf("%4d", d);
    for (int k = 2; k <= MAXK; k++) {
      if (total[d][k]) printf("  %5.2f", (double)found[d][k] / total[d][k]);
      else printf("     - ");
      fa += found[d][k];
      ta += total[d][k];
    }
    printf("\n");
  }
  printf("by kind:");
  for (int t = 0; t < 3; t++)
    printf(" %s %d of %d (%.3f)%s", kinds[t], kfound[t], ktotal[t],
           ktotal[t] ? (double)kfound[t] / ktotal[t] : 0.0, t < 2 ? "," : "\n");
  qsort(evals, (size_t)n, sizeof *evals, by_value);
  printf("all: %d of %d components (%.3f); every component in %d of %d instances; "
         "%d modes near no component\n", fa, ta, (double)fa / ta, all_found, n, spurious);
  printf("evaluations: median %.0f, 90%% %.0f, max %.0f\n", evals[n / 2],
         evals[(int)(0.9 * (n - 1))], evals[n - 1]);
  qsort(batches, (size_t)n, sizeof *batches, by_value);
  printf("batches (evaluator calls, the Sobol' set's one included): median %.0f, 90%% %.0f, "
         "max %.0f\n", batches[n / 2], batches[(int)(0.9 * (n - 1))], batches[n - 1]);
  free(evals);
  free(batches);
  return 0;
}
