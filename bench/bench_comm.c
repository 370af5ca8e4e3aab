/* What the ranks' exchange costs per iteration, through strata's own MPI
 * communicator, for one job's shape:
 *
 *   mpirun -n R bench/bench_comm [NHCUBE [DIM [NINC [NCOMP [REPS]]]]]
 *
 * (defaults 1e6 hypercubes, dim 6, ninc 1000, one component, 20 repetitions;
 * the first 5 are not timed).  Rows: an adapting vegas+ iteration (the
 * estimate's part and the map's sums summed, every hypercube's share
 * gathered), a frozen one (the part alone), and, for comparison, the one
 * sum of every hypercube's sums that strata's exchange once was.  Each
 * is timed on rank 0 after a barrier, so load imbalance is left out: the
 * time is the transfer's own.  The payload formula is doc/distributed.md's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "world.h"
#include "estimate.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void barrier(strata_comm *c)
{
  double x = 0.0;
  c->allreduce_sum(c, &x, 1);
}

int main(int argc, char **argv)
{
  strata_comm *c;
  if (strata_comm_world_open(&argc, &argv, &c) != 0) return 1;
  const int64_t nh = argc > 1 ? (int64_t)atof(argv[1]) : 1000000;
  const int dim = argc > 2 ? atoi(argv[2]) : 6, ninc = argc > 3 ? atoi(argv[3]) : 1000;
  const int nc = argc > 4 ? atoi(argv[4]) : 1, reps = argc > 5 ? atoi(argv[5]) : 20;
  const size_t part = STRATA_EST_PART(nc), map = 2 * (size_t)dim * (size_t)ninc;
  const size_t percell = (2 + (nc > 1 ? (size_t)nc + (size_t)nc * (nc + 1) / 2 : 0)) * (size_t)nh;
  double *buf = calloc(percell + map + part, sizeof(double));
  int64_t *off = malloc(sizeof(int64_t) * ((size_t)c->size + 1));
  if (!buf || !off || nh < 1 || dim < 1 || ninc < 1 || nc < 1 || reps < 6) {
    fprintf(stderr, "bench_comm: bad arguments or out of memory\n");
    strata_comm_world_close(c, 1);
    return 1;
  }
  for (int r = 0; r <= c->size; r++) off[r] = nh * r / c->size;
  double t[3] = {0, 0, 0};
  for (int k = 0; k < reps; k++) {
    double a[3];
    barrier(c);
    a[0] = now_s();
    int rc = c->allreduce_sum(c, buf, part + map);
    rc |= c->allgather(c, buf, off);
    a[0] = now_s() - a[0];
    barrier(c);
    a[1] = now_s();
    rc |= c->allreduce_sum(c, buf, part);
    a[1] = now_s() - a[1];
    barrier(c);
    a[2] = now_s();
    rc |= c->allreduce_sum(c, buf, percell + map);
    a[2] = now_s() - a[2];
    if (rc != 0) {
      fprintf(stderr, "bench_comm: rank %d: a collective failed\n", c->rank);
      strata_comm_abort(c, 1);
    }
    if (k >= 5)
      for (int i = 0; i < 3; i++) t[i] += a[i];
  }
  if (c->rank == 0) {
    const double n = reps - 5;
    printf("# %d ranks, %lld hypercubes, dim %d, ninc %d, ncomp %d; mean of %d, ms\n", c->size,
           (long long)nh, dim, ninc, nc, reps - 5);
    printf("| exchange | doubles summed | doubles gathered | ms |\n|---|---|---|---|\n");
    printf("| adapting iteration | %zu | %lld | %.4f |\n", part + map, (long long)nh,
           1e3 * t[0] / n);
    printf("| frozen iteration | %zu | 0 | %.4f |\n", part, 1e3 * t[1] / n);
    printf("| every hypercube's sums (before) | %zu | 0 | %.4f |\n", percell + map,
           1e3 * t[2] / n);
  }
  free(buf);
  free(off);
  strata_comm_world_close(c, 0);
  return 0;
}
