/* The CPU backend's sampling loop alone, one thread: nanoseconds per
 * sample of one iteration's sampling call (points, integrand, sums), the
 * median over REPEATS calls, adapting (with the map's sums) and frozen.
 *
 *   bench/bench_cpu [INTEGRAND [DIM [NEVAL [REPEATS]]]]   (default f4 6 1e6 11)
 *
 * The map and the allocation are synthetic but shaped like an adapted
 * run's: increments that crowd towards the middle of each axis, hypercubes
 * with uneven shares (at least 2 samples, a few with many).  The last line
 * sums what the calls produced, printed to the last bit: builds that must
 * give the same results print the same line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend_cpu.h"
#include "map.h"
#include "strat.h"
#include "strata/strata.h"

static double cpu_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "f4";
  const int dim = argc > 2 ? atoi(argv[2]) : 6;
  const int64_t neval = argc > 3 ? (int64_t)atof(argv[3]) : 1000000;
  const int reps = argc > 4 ? atoi(argv[4]) : 11;
  const strata_builtin *b = strata_builtin_find(name);
  if (!b || dim < 1 || dim > STRATA_MAX_DIM || neval < 16 || reps < 1) {
    fprintf(stderr, "usage: bench_cpu [INTEGRAND [DIM [NEVAL [REPEATS]]]]\n");
    return 2;
  }
  strata_problem pr = {.f = b->f, .dim = dim, .nparams = b->nparams, .name = b->name};
  double lo[STRATA_MAX_DIM], hi[STRATA_MAX_DIM];
  for (int d = 0; d < dim; d++) {
    pr.lower[d] = lo[d] = b->lower;
    pr.upper[d] = hi[d] = b->upper;
  }
  for (int i = 0; i < b->nparams; i++) pr.params[i] = b->params[i];

  const int ninc = 1000;
  strata_map *g = strata_map_alloc(dim, ninc, 0);
  strata_strat *s = strata_strat_alloc(dim, neval, INT64_C(1) << 40, 0.75, 1);
  if (!g || !s) {
    fprintf(stderr, "bench_cpu: out of memory\n");
    return 1;
  }
  strata_map_init(g, lo, hi);
  for (int d = 0; d < dim; d++)
    for (int i = 0; i <= ninc; i++) {
      const double t = 2.0 * i / ninc - 1.0;
      g->edges[(size_t)d * (ninc + 1) + (size_t)i] = 0.5 + 0.5 * t * t * t;
    }
  strata_strat_init(s);
  const int64_t nh = s->nhcube;
  int64_t *share = malloc(sizeof(int64_t) * (size_t)nh);
  double *s1 = malloc(sizeof(double) * (size_t)nh), *s2 = malloc(sizeof(double) * (size_t)nh);
  const size_t cells = (size_t)dim * (size_t)ninc;
  double *wsum = calloc(cells, sizeof(double)), *wcount = calloc(cells, sizeof(double));
  double *t = malloc(sizeof(double) * (size_t)reps);
  if (!share || !s1 || !s2 || !wsum || !wcount || !t) {
    fprintf(stderr, "bench_cpu: out of memory\n");
    return 1;
  }
  /* About neval samples: 2 to 4 in most hypercubes, some ten times the mean
   * in a few. */
  const double mean = (double)neval / (double)nh;
  uint32_t r = 12345;
  for (int64_t h = 0; h < nh; h++) {
    r = r * 1103515245u + 12345u;
    const int v = (int)((r >> 16) % 100);
    share[h] = 2 + (int64_t)((mean - 2.0) / 8.4 * (v < 70 ? v % 3 : v < 95 ? v % 20 : v % 60 * 3));
  }
  strata_strat_restore(s, share);

  strata_backend *be = strata_backend_cpu_new(1);
  strata_plan plan = {.problem = &pr, .map = g, .strat = s, .seed = 1, .h0 = 0, .h1 = nh,
                           .shift = 0.0, .map_scale = 1.0, .s1 = s1, .s2 = s2, .wsum = wsum,
                           .wcount = wcount, .ubits = 32};
  const int64_t total = s->start[nh];
  double check = 0.0;
  printf("# bench_cpu: %s d=%d, %lld samples in %lld hypercubes, ninc %d, one thread\n", name,
         dim, (long long)total, (long long)nh, ninc);
  for (int adapt = 1; adapt >= 0; adapt--) {
    plan.adapt = adapt;
    for (int k = 0; k < reps; k++) {
      plan.iteration = (uint32_t)k;
      const double t0 = cpu_s();
      if (be->sample(be, &plan) != STRATA_OK) {
        fprintf(stderr, "bench_cpu: %s\n", strata_last_error());
        return 1;
      }
      t[k] = cpu_s() - t0;
      for (int64_t h = 0; h < nh; h++) check += s1[h] + s2[h];
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%-9s %7.1f ns/sample (median of %d; fastest %.1f)\n",
           adapt ? "adapting" : "frozen", 1e9 * t[reps / 2] / (double)total, reps,
           1e9 * t[0] / (double)total);
  }
  for (size_t c = 0; c < cells; c++) check += wsum[c] + wcount[c];
  printf("# results %.17g\n", check);
  strata_backend_free(be);
  return 0;
}
