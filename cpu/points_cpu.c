/* The CPU backend's points, a block at a time (points_cpu.h). */
#include "points_cpu.h"

#include <string.h>

#include "maplookup.h"

/* AVX2 code where the processor has it, chosen when the library loads:
 * the steps below are integer operations and IEEE double arithmetic
 * without contraction (-std=c11), whose results no instruction set
 * changes. */
#if defined(__x86_64__) && defined(__linux__) && defined(__has_attribute) && \
    !defined(STRATA_CPU_PLAIN)
#if __has_attribute(target_clones)
#define POINTS_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef POINTS_CLONES
#define POINTS_CLONES
#endif

enum { L = STRATA_POINT_BLOCK };
_Static_assert(L % STRATA_PHILOX_LANE_STEP == 0 &&
                   L * ((STRATA_MAX_DIM + 3) / 4) <= STRATA_PHILOX_LANES_MAX,
               "a block's counters fit one Philox call");

void strata_points_start(const strata_plan *plan, int64_t h, strata_points_walk *w)
{
  w->h = h;
  w->qmc.next = -1;
  if (!plan->qmc) strata_strat_coords(plan->strat, h, w->k);
}

/* strata_sample_point's y for the block, each in its sample's hypercube,
 * from one Philox call for all their uniforms.  Lanes past n repeat the
 * last sample's hypercube, so that their points stay in the unit cube;
 * nobody reads them.  Inlined into each of strata_points_block's clones. */
static inline __attribute__((always_inline)) void
uniform_points(const strata_plan *plan, strata_points_walk *w, int64_t i0, int n,
               double y[][L])
{
  const strata_strat *s = plan->strat;
  const int dim = plan->problem->dim;
  const double invM = 1.0 / s->M;
  /* Each lane's hypercube, run by run of lanes in one: a run writes its
   * coordinates to all the L lanes from its first, a loop of fixed length,
   * and the runs after it overwrite theirs. */
  int k[STRATA_MAX_DIM][2 * L];
  for (int j = 0; j < L;) {
    while (j < n && i0 + j >= s->start[w->h + 1]) {
      w->h++;
      strata_hcube_next(w->k, dim, s->M);
    }
    for (int d = 0; d < dim; d++)
      for (int l = 0; l < L; l++) k[d][j + l] = w->k[d];
    j = j < n && s->start[w->h + 1] - i0 < L ? (int)(s->start[w->h + 1] - i0) : L;
  }
  /* Counter b * L + j: block b of sample i0 + j, strata_philox_counter's
   * layout written out lane by lane: four stores a lane into contiguous
   * arrays, a loop the compiler vectorises, where the helper's array a
   * lane kept it scalar. */
  const int bits = plan->ubits, nb = strata_uniform_blocks(dim, bits);
  strata_philox_lanes c;
  for (int b = 0; b < nb; b++)
    for (int j = 0; j < L; j++) {
      const uint64_t index = (uint64_t)(i0 + j);
      c.w[0][b * L + j] = (uint32_t)b;
      c.w[1][b * L + j] = plan->iteration;
      c.w[2][b * L + j] = (uint32_t)index;
      c.w[3][b * L + j] = (uint32_t)(index >> 32);
    }
  strata_philox4x32_10_lanes(&c, nb * L, plan->seed);
  if (bits == 32) {
    for (int d = 0; d < dim; d++)
      for (int j = 0; j < L; j++)
        y[d][j] = (k[d][j] + STRATA_U32_TO_UNIT(c.w[d % 4][d / 4 * L + j])) * invM;
    return;
  }
  /* Packed: coordinate d's field sits at the same place in every lane's
   * words (strata_uniform_field), so it is taken lane by lane from one or
   * two of the block's word arrays, a loop the compiler vectorises. */
  const uint32_t mask = (1u << bits) - 1u;
  for (int d = 0; d < dim; d++) {
    const int off = d * bits, q = off >> 5, sh = off & 31;
    const uint32_t *lo = c.w[q % 4] + q / 4 * L;
    const double s = plan->ushift[d];
    if (sh + bits > 32) { /* (the field runs into the next word: sh >= 1) */
      const uint32_t *hi = c.w[(q + 1) % 4] + (q + 1) / 4 * L;
      for (int j = 0; j < L; j++)
        y[d][j] = (k[d][j] + strata_uniform_unit(((lo[j] >> sh) | (hi[j] << (32 - sh))) & mask,
                                                 bits, s)) *
                  invM;
    } else {
      for (int j = 0; j < L; j++)
        y[d][j] = (k[d][j] + strata_uniform_unit((lo[j] >> sh) & mask, bits, s)) * invM;
    }
  }
}

POINTS_CLONES
void strata_points_block(const strata_plan *plan, strata_points_walk *w, int64_t i0, int n,
                         double *x, double *jac, int *inc, size_t istride)
{
  const strata_map *g = plan->map;
  const int dim = g->dim, ninc = strata_map_res(g), G = g->group;
  double y[STRATA_MAX_DIM][L], xs[STRATA_MAX_DIM][L], jl[L];
  int il[STRATA_MAX_DIM][L];
  if (plan->qmc) {
    /* The QMC rule's cursor steps from point to point: one at a time. */
    double yi[STRATA_MAX_DIM];
    for (int j = 0; j < L; j++) {
      if (j < n) strata_qmc_point(plan->qmc, &w->qmc, i0 + j, yi);
      for (int d = 0; d < dim; d++) y[d][j] = yi[d];
    }
  } else {
    uniform_points(plan, w, i0, n, y);
  }
  /* strata_map_apply, axis by axis over the block. */
  for (int j = 0; j < L; j++) jl[j] = 1.0;
  for (int d = 0; d < dim; d++) {
    const double *e = strata_map_axis_edges(g, d);
    const double lower = g->lower[d], width = g->width[d];
    for (int j = 0; j < L; j++)
      il[d][j] = strata_map_axis(e, ninc, G, lower, width, y[d][j], &xs[d][j], &jl[j]);
  }
  for (int j = 0; j < n; j++) {
    jac[j] = jl[j];
    for (int d = 0; d < dim; d++) x[(size_t)j * (size_t)dim + (size_t)d] = xs[d][j];
  }
  for (int d = 0; d < dim; d++) memcpy(inc + (size_t)d * istride, il[d], sizeof(int) * (size_t)n);
}
