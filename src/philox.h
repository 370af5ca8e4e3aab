/* Counter-based random numbers: Philox4x32-10 (Salmon et al., SC11), the
 * generator cuRAND calls PHILOX4_32_10, written once for the host and the
 * device, so that the CPU and the GPU draw the same bits
 * (tests/test_philox.c checks it against Random123's known answers and
 * cuRAND's own generator).
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
#ifndef STRATA_MAX_DIM /* (NVRTC has it as an option, and no strata.h) */
#include "strata/strata.h"
#endif
#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_PHILOX_M0 0xD2511F53u
#define STRATA_PHILOX_M1 0xCD9E8D57u
#define STRATA_PHILOX_W0 0x9E3779B9u
#define STRATA_PHILOX_W1 0xBB67AE85u

/* The counter of Philox block b of a sample: (block, iteration, index_lo,
 * index_hi), the layout every draw of a sample's uniforms takes, on every
 * backend. */
STRATA_HD void strata_philox_counter(uint32_t c[4], int b, uint32_t iteration, uint64_t index)
{
  c[0] = (uint32_t)b;
  c[1] = iteration;
  c[2] = (uint32_t)index;
  c[3] = (uint32_t)(index >> 32);
}

/* The ten round keys of a seed, key + r (W0, W1) for r = 0..9, in rk[2r]
 * and rk[2r + 1]: a kernel that takes them with its arguments reads each
 * round's key instead of adding it anew for every block it draws. */
STRATA_HD void strata_philox_round_keys(uint64_t seed, uint32_t rk[20])
{
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    rk[2 * r] = k0;
    rk[2 * r + 1] = k1;
    k0 += STRATA_PHILOX_W0;
    k1 += STRATA_PHILOX_W1;
  }
}

/* One of the ten rounds, under its key (k0, k1). */
STRATA_HD void strata_philox_round(uint32_t c[4], uint32_t k0, uint32_t k1)
{
  uint64_t p0 = (uint64_t)STRATA_PHILOX_M0 * c[0];
  uint64_t p1 = (uint64_t)STRATA_PHILOX_M1 * c[2];
  uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
  uint32_t n1 = (uint32_t)p1;
  uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
  uint32_t n3 = (uint32_t)p0;
  c[0] = n0; c[1] = n1; c[2] = n2; c[3] = n3;
}

/* Philox4x32-10 of counter c under the round keys rk. */
STRATA_HD void strata_philox4x32_10_keyed(uint32_t c[4], const uint32_t rk[20])
{
#ifdef __CUDACC__
#pragma unroll
#endif
  for (int r = 0; r < 10; r++) strata_philox_round(c, rk[2 * r], rk[2 * r + 1]);
}

/* Philox4x32-10 of counter c under key seed. */
STRATA_HD void strata_philox4x32_10(uint32_t c[4], uint64_t seed)
{
  uint32_t rk[20];
  strata_philox_round_keys(seed, rk);
  strata_philox4x32_10_keyed(c, rk);
}

/* 32 random bits to a double strictly inside (0,1): the half-step offset keeps
 * both ends out, so a map increment edge is never hit exactly. */
#define STRATA_U32_TO_UNIT(v) ((double)(v) * 0x1p-32 + 0x1p-33)

/* Packed uniforms.  An iteration that does not train the map may give each
 * coordinate fewer than 32 bits, packed one after another into the words
 * of its Philox blocks, so that a sample needs fewer blocks: 21 bits at
 * least, as many more as the blocks that 21 need hold (d = 6: one block of
 * 128 bits instead of two, 21 bits a coordinate; d = 5: 25; d = 9: two
 * blocks instead of three, 28).  STRATA_UNIFORM_PACKED_BITS(dim) is that
 * width, a constant expression; where it is 32 the packed and the plain
 * layouts are the same.  A field v of b bits becomes (v + s) 2^-b, s the
 * iteration's shift of that axis (strata_uniform_shifts): the points lie
 * on a grid of pitch 2^-b shifted at random, whose sum is the integral in
 * expectation (doc/algorithm.md, "Random numbers"). */
#define STRATA_UNIFORM_MIN_BITS 21
#define STRATA_UNIFORM_PACKED_BITS(dim)                                                       \
  ((128 * ((STRATA_UNIFORM_MIN_BITS * (dim) + 127) / 128) / (dim)) < 32                       \
       ? (128 * ((STRATA_UNIFORM_MIN_BITS * (dim) + 127) / 128) / (dim))                      \
       : 32)
/* The packed width is used only where every map increment holds
 * 2^STRATA_UNIFORM_INC_BITS positions of a coordinate: 2^b M / ninc >=
 * 2^12, M hypercubes and ninc increments per axis. */
#define STRATA_UNIFORM_INC_BITS 12
/* The counter tag of the shifts' Philox blocks: the samples' blocks are
 * tagged 0..7, the QMC randomizations' 0x51000000 and 0x52000000. */
#define STRATA_UNIFORM_SHIFT_TAG 0x53000000u

/* The bits a coordinate's uniform takes: the packed width in dim where
 * the resolution allows it, else 32. */
STRATA_HD int strata_uniform_bits(int dim, int ninc, int M)
{
  const int b = STRATA_UNIFORM_PACKED_BITS(dim);
  return b < 32 && (double)M * (double)(1u << (b - STRATA_UNIFORM_INC_BITS)) >= (double)ninc
             ? b
             : 32;
}

/* The Philox blocks (four words each) of a sample of dim uniforms of bits
 * bits. */
STRATA_HD int strata_uniform_blocks(int dim, int bits)
{
  return (dim * bits + 127) / 128;
}

/* Coordinate d's bits among the words w of a sample's blocks (block b's
 * words are w[4b .. 4b + 3]): bits d * bits .. (d + 1) * bits - 1 of the
 * words read as one little-endian string. */
STRATA_HD uint32_t strata_uniform_field(const uint32_t *w, int d, int bits)
{
  if (bits == 32) return w[d];
  const int off = d * bits, q = off >> 5, s = off & 31;
  uint64_t v = w[q];
  if (s + bits > 32) v |= (uint64_t)w[q + 1] << 32;
  return (uint32_t)(v >> s) & ((1u << bits) - 1u);
}

/* An iteration's shift of each axis's grid, for bits < 32: a uniform in
 * (0,1) of 32 bits, a function of (seed, iteration, axis); 1/2 (the
 * grid's midpoints, STRATA_U32_TO_UNIT's offset) at 32 bits. */
STRATA_HD void strata_uniform_shifts(uint64_t seed, uint32_t iteration, int dim, int bits,
                                     double *shift)
{
  for (int b = 0; 4 * b < dim; b++) {
    uint32_t c[4] = {STRATA_UNIFORM_SHIFT_TAG + (uint32_t)b, iteration, 0u, 0u};
    if (bits < 32) strata_philox4x32_10(c, seed);
    for (int j = 0; j < 4 && 4 * b + j < dim; j++)
      shift[4 * b + j] = bits < 32 ? STRATA_U32_TO_UNIT(c[j]) : 0.5;
  }
}

/* A field v of bits bits with its axis's shift s to a double strictly
 * inside (0,1), (v + s) 2^-bits, exactly (v + s has at most 53 bits):
 * STRATA_U32_TO_UNIT's value at 32 bits and s = 1/2. */
STRATA_HD double strata_uniform_unit(uint32_t v, int bits, double s)
{
  return ((double)v + s) * (1.0 / (double)(UINT64_C(1) << bits));
}

/* The dim uniforms of one sample, bits bits each (32, or
 * strata_uniform_bits's packed width) with the axes' shifts (NULL at 32
 * bits: the midpoints). */
STRATA_HD void strata_sample_uniforms(uint64_t seed, uint32_t iteration, uint64_t index,
                                      int dim, int bits, const double *shift, double *u)
{
  uint32_t w[4 * ((STRATA_MAX_DIM + 3) / 4)];
  const int nb = strata_uniform_blocks(dim, bits);
  for (int b = 0; b < nb; b++) {
    uint32_t c[4];
    strata_philox_counter(c, b, iteration, index);
    strata_philox4x32_10(c, seed);
    if (bits == 32) { /* (no copy: the common case keeps no array) */
      for (int j = 0; j < 4 && 4 * b + j < dim; j++) u[4 * b + j] = STRATA_U32_TO_UNIT(c[j]);
      continue;
    }
    for (int j = 0; j < 4; j++) w[4 * b + j] = c[j];
  }
  if (bits == 32) return;
  for (int d = 0; d < dim; d++)
    u[d] = strata_uniform_unit(strata_uniform_field(w, d, bits), bits, shift[d]);
}
#ifdef __cplusplus
}
#endif
#endif
