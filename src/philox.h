/* Counter-based random numbers: cuRAND's Philox4_32_10, written out for the
 * host so that the CPU draws exactly what curand_Philox4x32_10() draws on the
 * device (tests/test_philox.c checks it against cuRAND's own generator).
 *
 * A sample's uniforms are a pure function of (seed, iteration, global sample
 * index): counter = (block, iteration, index_lo, index_hi), key = seed, where
 * block numbers the Philox calls a sample needs.  No state is carried
 * between samples, so threads, GPUs and ranks can take any share of the
 * samples and still draw the same points.
 *
 * A sample makes the fewest calls that give each of its coordinates at
 * least 16 bits, and shares their 128 bits evenly among the coordinates,
 * at most 32 each: one call up to dimension 8, two up to 16 (doc/design.md,
 * "Random bits per coordinate").  A coordinate of B bits is the midpoint of
 * one of 2^B equal steps: inside a hypercube, whose width is 1/M of the
 * map's unit axis, the step is 1/(M 2^B) of it. */
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

static inline void strata_philox4x32_10(uint32_t c[4], uint64_t seed)
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

/* The least bits a coordinate gets, and the most. */
#define STRATA_UNIFORM_MIN_BITS 16
#define STRATA_UNIFORM_MAX_BITS 32
/* Philox calls (of four 32-bit words) per sample of dim coordinates. */
STRATA_HD int strata_uniform_calls(int dim)
{
  return (dim * STRATA_UNIFORM_MIN_BITS + 127) / 128;
}
/* The words of a sample's calls, with the spare word of 0 after them. */
#define STRATA_UNIFORM_WORDS(dim) (4 * (((dim) * STRATA_UNIFORM_MIN_BITS + 127) / 128) + 1)
/* Bits per coordinate: the calls' 128 bits shared evenly, at most 32. */
STRATA_HD int strata_uniform_bits(int dim)
{
  const int b = 128 * strata_uniform_calls(dim) / dim;
  return b < STRATA_UNIFORM_MAX_BITS ? b : STRATA_UNIFORM_MAX_BITS;
}
/* The B bits of coordinate d: bits [d B, d B + B) of the words w (call c's
 * word j at w[4 c + j], then one word of 0 past the last call's). */
STRATA_HD uint32_t strata_uniform_field(const uint32_t *w, int d, int B)
{
  const int o = d * B;
  const uint64_t two = (uint64_t)w[o >> 5] | (uint64_t)w[(o >> 5) + 1] << 32;
  return (uint32_t)(two >> (o & 31)) & (0xffffffffu >> (32 - B));
}
/* A field of B bits to a double strictly inside (0,1), given scale = 2^-B:
 * the midpoint of its step, so that both ends stay out and a map increment
 * edge is never hit exactly. */
#define STRATA_FIELD_TO_UNIT(v, scale) (((double)(v) + 0.5) * (scale))
/* 32 random bits to a double strictly inside (0,1). */
#define STRATA_U32_TO_UNIT(v) STRATA_FIELD_TO_UNIT((v), 0x1p-32)

/* The dim uniforms of one sample. */
static inline void strata_sample_uniforms(uint64_t seed, uint32_t iteration,
                                          uint64_t index, int dim, double *u)
{
  const int calls = strata_uniform_calls(dim), B = strata_uniform_bits(dim);
  const double scale = 1.0 / (double)(UINT64_C(1) << B);
  uint32_t w[STRATA_UNIFORM_WORDS(32)]; /* STRATA_MAX_DIM */
  for (int b = 0; b < calls; b++) {
    uint32_t c[4] = {(uint32_t)b, iteration, (uint32_t)index, (uint32_t)(index >> 32)};
    strata_philox4x32_10(c, seed);
    for (int j = 0; j < 4; j++) w[4 * b + j] = c[j];
  }
  w[4 * calls] = 0;
  for (int d = 0; d < dim; d++) u[d] = STRATA_FIELD_TO_UNIT(strata_uniform_field(w, d, B), scale);
}
#ifdef __cplusplus
}
#endif
#endif
