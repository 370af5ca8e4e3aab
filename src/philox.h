/* Counter-based random numbers: cuRAND's Philox4_32_10, written out for the
 * host so that the CPU draws exactly what curand_Philox4x32_10() draws on the
 * device (tests/test_philox.c checks it against cuRAND's own generator).
 *
 * A sample's uniforms are a pure function of (seed, iteration, global sample
 * index): counter = (block, iteration, index_lo, index_hi), key = seed, where
 * block numbers the groups of four uniforms a sample needs.  No state is
 * carried between samples, so threads, GPUs and ranks can take any share of
 * the samples and still draw the same points. */
#ifndef STRATA_PHILOX_H
#define STRATA_PHILOX_H
#include <stdint.h>

#include "hostdev.h"
#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_PHILOX_M0 0xD2511F53u
#define STRATA_PHILOX_M1 0xCD9E8D57u
#define STRATA_PHILOX_W0 0x9E3779B9u
#define STRATA_PHILOX_W1 0xBB67AE85u

STRATA_HD void strata_philox4x32_10(uint32_t c[4], uint64_t seed)
{
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)STRATA_PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)STRATA_PHILOX_M1 * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c[0] = n0; c[1] = n1; c[2] = n2; c[3] = n3;
    k0 += STRATA_PHILOX_W0;
    k1 += STRATA_PHILOX_W1;
  }
}

/* 32 random bits to a double strictly inside (0,1): the half-step offset keeps
 * both ends out, so a map increment edge is never hit exactly. */
#define STRATA_U32_TO_UNIT(v) ((double)(v) * 0x1p-32 + 0x1p-33)

/* The dim uniforms of one sample. */
STRATA_HD void strata_sample_uniforms(uint64_t seed, uint32_t iteration, uint64_t index,
                                      int dim, double *u)
{
  for (int b = 0; 4 * b < dim; b++) {
    uint32_t c[4] = {(uint32_t)b, iteration, (uint32_t)index,
                     (uint32_t)(index >> 32)};
    strata_philox4x32_10(c, seed);
    for (int j = 0; j < 4 && 4 * b + j < dim; j++)
      u[4 * b + j] = STRATA_U32_TO_UNIT(c[j]);
  }
}
#ifdef __cplusplus
}
#endif
#endif
