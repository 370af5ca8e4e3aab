/* Philox4x32-10 for many counters at once (philox_lanes.h). */
#include "philox_lanes.h"

/* STRATA_CPU_PLAIN builds the plain code alone: tests/test_points_plain
 * runs it on machines whose AVX2 the library would otherwise choose. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(STRATA_CPU_PLAIN)
#define PHILOX_AVX2 1
#include <immintrin.h>
#endif

void strata_philox4x32_10_lanes_plain(strata_philox_lanes *c, int n, uint64_t seed)
{
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    /* Fixed runs of STRATA_PHILOX_LANE_STEP lanes: loops the compiler
     * vectorises whole. */
    for (int l0 = 0; l0 < n; l0 += STRATA_PHILOX_LANE_STEP)
      for (int l = l0; l < l0 + STRATA_PHILOX_LANE_STEP; l++) {
        /* The 32 x 32 -> 64-bit products as their two halves: the low
         * word a 32-bit product, the high the 64-bit product shifted. */
        const uint32_t a = c->w[0][l], b = c->w[2][l];
        const uint32_t hi0 = (uint32_t)(((uint64_t)STRATA_PHILOX_M0 * a) >> 32);
        const uint32_t hi1 = (uint32_t)(((uint64_t)STRATA_PHILOX_M1 * b) >> 32);
        c->w[0][l] = hi1 ^ c->w[1][l] ^ k0;
        c->w[1][l] = STRATA_PHILOX_M1 * b;
        c->w[2][l] = hi0 ^ c->w[3][l] ^ k1;
        c->w[3][l] = STRATA_PHILOX_M0 * a;
      }
    k0 += STRATA_PHILOX_W0;
    k1 += STRATA_PHILOX_W1;
  }
}

#ifdef PHILOX_AVX2
/* Eight counters per register.  _mm256_mul_epu32 multiplies the even
 * 32-bit lanes into 64-bit products; the odd lanes, shifted down, make the
 * other four; blends put the high and the low words back in lane order.
 * Rounds outermost: the registers of different counters are independent
 * work for the processor while one multiply waits. */
__attribute__((target("avx2"))) static void philox_lanes_avx2(strata_philox_lanes *c, int n,
                                                               uint64_t seed)
{
  const __m256i m0 = _mm256_set1_epi64x(STRATA_PHILOX_M0);
  const __m256i m1 = _mm256_set1_epi64x(STRATA_PHILOX_M1);
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < 10; r++) {
    const __m256i key0 = _mm256_set1_epi32((int)k0), key1 = _mm256_set1_epi32((int)k1);
    for (int l = 0; l < n; l += 8) {
      const __m256i a = _mm256_loadu_si256((const __m256i *)&c->w[0][l]);
      const __m256i b = _mm256_loadu_si256((const __m256i *)&c->w[2][l]);
      const __m256i ae = _mm256_mul_epu32(a, m0);
      const __m256i ao = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m0);
      const __m256i be = _mm256_mul_epu32(b, m1);
      const __m256i bo = _mm256_mul_epu32(_mm256_srli_epi64(b, 32), m1);
      const __m256i hi0 = _mm256_blend_epi32(_mm256_srli_epi64(ae, 32), ao, 0xAA);
      const __m256i lo0 = _mm256_blend_epi32(ae, _mm256_slli_epi64(ao, 32), 0xAA);
      const __m256i hi1 = _mm256_blend_epi32(_mm256_srli_epi64(be, 32), bo, 0xAA);
      const __m256i lo1 = _mm256_blend_epi32(be, _mm256_slli_epi64(bo, 32), 0xAA);
      const __m256i w1 = _mm256_loadu_si256((const __m256i *)&c->w[1][l]);
      const __m256i w3 = _mm256_loadu_si256((const __m256i *)&c->w[3][l]);
      const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, w1), key0);
      const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, w3), key1);
      _mm256_storeu_si256((__m256i *)&c->w[0][l], n0);
      _mm256_storeu_si256((__m256i *)&c->w[1][l], lo1);
      _mm256_storeu_si256((__m256i *)&c->w[2][l], n2);
      _mm256_storeu_si256((__m256i *)&c->w[3][l], lo0);
    }
    k0 += STRATA_PHILOX_W0;
    k1 += STRATA_PHILOX_W1;
  }
}
#endif

void strata_philox4x32_10_lanes(strata_philox_lanes *c, int n, uint64_t seed)
{
#ifdef PHILOX_AVX2
  if (__builtin_cpu_supports("avx2")) {
    philox_lanes_avx2(c, n, seed);
    return;
  }
#endif
  strata_philox4x32_10_lanes_plain(c, n, seed);
}
