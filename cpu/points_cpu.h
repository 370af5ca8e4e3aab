/* The CPU backend's points: those of consecutive samples, a block at a time.
 *
 * Each step (the uniforms, the point in its hypercube, the map) runs over
 * the whole block before the next, on arrays with one entry per sample, so
 * that the compiler makes vector code of it; every sample still goes
 * through the operations that backend.h's strata_sample_point (or the QMC
 * rule) and maplookup.h apply to it alone, so the points are those of
 * every other backend, bit for bit. */
#ifndef STRATA_POINTS_CPU_H
#define STRATA_POINTS_CPU_H
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "philox_lanes.h"

/* Samples whose points are made together: a Philox call draws all their
 * uniforms (a counter for every 4 axes), enough independent counters to
 * keep the processor's vector units busy. */
#define STRATA_POINT_BLOCK 32

/* Where a walk through consecutive samples stands: the hypercube of the
 * next sample and its coordinates, or the QMC rule's cursor. */
typedef struct {
  int64_t h;
  int k[STRATA_MAX_DIM];
  strata_qmc_cursor qmc;
} strata_points_walk;

/* A walk that starts at hypercube h's first sample. */
void strata_points_start(const strata_plan *plan, int64_t h, strata_points_walk *w);

/* The points of the next n samples of the walk, i0 .. i0 + n - 1 with
 * 1 <= n <= STRATA_POINT_BLOCK: sample i0 + j's point in the box at
 * x[j * dim ..], its Jacobian at jac[j] and its map increment on axis d at
 * inc[d * istride + j]. */
void strata_points_block(const strata_plan *plan, strata_points_walk *w, int64_t i0, int n,
                         double *x, double *jac, int *inc, size_t istride);
#endif
