/* Philox4x32-10 (philox.h) for many counters at once, on the host only:
 * word w of counter l is c->w[w][l], so that each round is the same
 * integer operations on whole arrays, which vector instructions do several
 * lanes at a time.  Bit for bit what strata_philox4x32_10 gives each
 * counter alone (tests/test_philox.c). */
#ifndef STRATA_PHILOX_LANES_H
#define STRATA_PHILOX_LANES_H
#include <stdint.h>

#include "philox.h"

/* Counters per call, at most; a call takes a multiple of
 * STRATA_PHILOX_LANE_STEP of them. */
#define STRATA_PHILOX_LANES_MAX 256
#define STRATA_PHILOX_LANE_STEP 8

typedef struct {
  uint32_t w[4][STRATA_PHILOX_LANES_MAX];
} strata_philox_lanes;

/* Counters 0 .. n - 1 of c, in place, all with key seed: with AVX2 where
 * the processor has it. */
void strata_philox4x32_10_lanes(strata_philox_lanes *c, int n, uint64_t seed);
/* The same in plain C, whatever the processor: what the vector form is
 * checked against. */
void strata_philox4x32_10_lanes_plain(strata_philox_lanes *c, int n, uint64_t seed);
#endif
