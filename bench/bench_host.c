/* The host's share of an iteration: what strata_run_step does besides
 * sampling, timed piece by piece.  When the GPU samples 1e6 points in a
 * few hundred microseconds, the map refinement, the VEGAS+ reallocation and
 * the estimate are what a short run waits for.
 *
 *   bench/bench_host [DIM [NINC [NHCUBE_CAP [REPEATS [NEVAL]]]]]   (default 8 1000 1e4 200 1e6)
 *
 * Inputs are synthetic but shaped like an adapted run's: per-increment
 * weights that vary over the axis, per-hypercube sums whose variances span
 * eight decades.  Prints microseconds per call, the median of REPEATS. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "estimate.h"
#include "map.h"
#include "strat.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_us(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return 1e6 * t[n / 2];
}

int main(int argc, char **argv)
{
  const int dim = argc > 1 ? atoi(argv[1]) : 8, ninc = argc > 2 ? atoi(argv[2]) : 1000;
  const int64_t cap = argc > 3 ? (int64_t)atof(argv[3]) : 10000;
  const int reps = argc > 4 ? atoi(argv[4]) : 200;
  const int64_t neval = argc > 5 ? (int64_t)atof(argv[5]) : 1000000;
  if (dim < 1 || dim > 32 || ninc < 2 || cap < 1 || reps < 1 || neval < 2) {
    fprintf(stderr, "usage: bench_host [DIM [NINC [NHCUBE_CAP [REPEATS [NEVAL]]]]]\n");
    return 2;
  }
  double *t = malloc(sizeof(double) * (size_t)reps);
  strata_map *g = strata_map_alloc(dim, ninc, 0);
  double lo[32] = {0}, hi[32];
  for (int d = 0; d < dim; d++) hi[d] = 1.0;
  strata_map_init(g, lo, hi);
  const size_t cells = (size_t)dim * (size_t)ninc;
  double *w = malloc(sizeof(double) * cells), *c = malloc(sizeof(double) * cells);
  strata_strat *s = strata_strat_alloc(dim, neval, cap, 0.75, 1);
  const int64_t nh = s->nhcube;
  double *s1 = malloc(sizeof(double) * (size_t)nh), *s2 = malloc(sizeof(double) * (size_t)nh);
  if (!t || !g || !w || !c || !s || !s1 || !s2) {
    fprintf(stderr, "bench_host: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < cells; i++) {
    double u = (double)(i % (size_t)ninc) / ninc - 0.5;
    w[i] = exp(-40.0 * u * u) + 1e-3;
    c[i] = 1000.0;
  }
  for (int64_t h = 0; h < nh; h++) {
    double n = (double)s->nh[h], sig = pow(10.0, -4.0 * (double)((h * 7919) % 1000) / 1000.0);
    s1[h] = n * sig;
    s2[h] = n * sig * sig * 1.5;
  }
  for (int k = 0; k < reps; k++) {
    double t0 = now_s();
    strata_map_refine(g, w, c, 0.5);
    t[k] = now_s() - t0;
  }
  double refine = median_us(t, reps);
  for (int k = 0; k < reps; k++) {
    double t0 = now_s();
    strata_strat_reallocate(s, s1, s2);
    t[k] = now_s() - t0;
  }
  double realloc = median_us(t, reps);
  double *d = malloc(sizeof(double) * (size_t)nh);
  for (int k = 0; k < reps && d; k++) {
    double t0 = now_s();
    strata_strat_shares(s, s1, s2, 0, nh, d);
    t[k] = now_s() - t0;
  }
  double shares = d ? median_us(t, reps) : NAN;
  free(d);
  double I, var;
  int64_t bad;
  for (int k = 0; k < reps; k++) {
    double t0 = now_s();
    strata_estimate(STRATA_EST_STRATIFIED, s, s1, s2, 0.0, 16, &I, &var, &bad);
    t[k] = now_s() - t0;
  }
  double est = median_us(t, reps);
  printf("dim %d, ninc %d, %lld hypercubes: map refinement %.1f us, reallocation %.1f us "
         "(of which shares %.1f us), estimate %.1f us, sum %.1f us (medians of %d)\n",
         dim, ninc, (long long)nh, refine, realloc, shares, est, refine + realloc + est, reps);
  return 0;
}
