/* strata's Philox must be cuRAND's Philox4_32_10 bit for bit: the CPU and
 * the GPU backends draw with it and must see the same points as any
 * program that draws with cuRAND's generator. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "philox.h"
#include "philox_lanes.h"
#ifdef HAVE_CURAND
#include <curand.h>
#include "testutil.h"
#endif

/* Known-answer vectors of Philox4x32-10 published with Random123 (Salmon
 * et al., SC11), the algorithm cuRAND implements: counter, key, output. */
START_TEST(test_known_answers)
{
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
       0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
       0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int t = 0; t < 3; t++) {
    uint32_t c[4] = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]};
    uint64_t key = (uint64_t)kat[t][4] | ((uint64_t)kat[t][5] << 32);
    strata_philox4x32_10(c, key);
    for (int i = 0; i < 4; i++)
      ck_assert_msg(c[i] == kat[t][6 + i], "vector %d word %d: %08x != %08x", t, i, c[i],
                    kat[t][6 + i]);
  }
}
END_TEST

START_TEST(test_uniforms_layout)
{
  /* dim 6 takes block 0 whole and half of block 1; the uniforms are the
   * blocks' words in order, mapped to (0,1). */
  const uint64_t seed = 0x0123456789abcdefULL, index = 0x1234567890ULL;
  const uint32_t itn = 7;
  double u[6];
  strata_sample_uniforms(seed, itn, index, 6, 32, NULL, u);
  for (uint32_t b = 0; b < 2; b++) {
    uint32_t c[4] = {b, itn, (uint32_t)index, (uint32_t)(index >> 32)};
    strata_philox4x32_10(c, seed);
    for (int j = 0; j < 4 && 4 * (int)b + j < 6; j++) {
      double expect = ((double)c[j] + 0.5) / 4294967296.0;
      ck_assert(u[4 * b + j] == expect);
    }
  }
  /* Extremes of the 32-bit word stay strictly inside (0,1). */
  ck_assert(STRATA_U32_TO_UNIT(0u) > 0.0);
  ck_assert(STRATA_U32_TO_UNIT(0xffffffffu) < 1.0);
}
END_TEST

/* Packed uniforms: coordinate d holds bits d b .. (d + 1) b - 1 of the
 * sample's blocks read as one string (word 0's bit 0 first, block after
 * block), for every dimension; the blocks are the fewest that give each
 * coordinate STRATA_UNIFORM_MIN_BITS bits, the width the most they hold. */
START_TEST(test_packed_layout)
{
  const uint64_t seed = 0xfedcba9876543210ULL, index = 0x2345678901ULL;
  const uint32_t itn = 5;
  for (int dim = 1; dim <= STRATA_MAX_DIM; dim++) {
    const int b = STRATA_UNIFORM_PACKED_BITS(dim), nb = strata_uniform_blocks(dim, b);
    ck_assert_msg(b >= STRATA_UNIFORM_MIN_BITS && b <= 32, "dim %d: %d bits", dim, b);
    ck_assert_msg(128 * nb >= dim * b && 128 * (nb - 1) < dim * STRATA_UNIFORM_MIN_BITS,
                  "dim %d: %d blocks of %d bits", dim, nb, b);
    ck_assert_msg(b == 32 || 128 * nb < dim * (b + 1), "dim %d: %d bits, room for more", dim,
                  b);
    ck_assert(nb <= strata_uniform_blocks(dim, 32));
    uint32_t w[4 * ((STRATA_MAX_DIM + 3) / 4)];
    for (int k = 0; k < nb; k++) {
      uint32_t c[4] = {(uint32_t)k, itn, (uint32_t)index, (uint32_t)(index >> 32)};
      strata_philox4x32_10(c, seed);
      for (int j = 0; j < 4; j++) w[4 * k + j] = c[j];
    }
    double u[STRATA_MAX_DIM], shift[STRATA_MAX_DIM];
    strata_uniform_shifts(seed, itn, dim, b, shift);
    strata_sample_uniforms(seed, itn, index, dim, b, shift, u);
    for (int d = 0; d < dim; d++) {
      uint64_t v = 0;
      for (int t = 0; t < b; t++) {
        const int bit = d * b + t;
        v |= (uint64_t)((w[bit / 32] >> (bit % 32)) & 1u) << t;
      }
      const double expect = ldexp((double)v + shift[d], -b);
      ck_assert_msg(u[d] == expect, "dim %d coordinate %d: %.17g != %.17g", dim, d, u[d],
                    expect);
      ck_assert(u[d] > 0.0 && u[d] < 1.0);
    }
  }
}
END_TEST

/* The widths the docs name, and the resolution rule: the packed width
 * only where each of ninc increments per axis holds 2^12 positions of a
 * coordinate among M hypercubes' 2^b each. */
START_TEST(test_packed_rule)
{
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(4), 32);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(5), 25);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(6), 21);
  ck_assert_int_eq(strata_uniform_blocks(6, 21), 1);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(7), 32);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(8), 32);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(9), 28);
  ck_assert_int_eq(strata_uniform_blocks(9, 28), 2);
  ck_assert_int_eq(STRATA_UNIFORM_PACKED_BITS(12), 21);
  /* d = 6, 21 bits: ninc / M up to 2^9 */
  ck_assert_int_eq(strata_uniform_bits(6, 512, 1), 21);
  ck_assert_int_eq(strata_uniform_bits(6, 513, 1), 32);
  ck_assert_int_eq(strata_uniform_bits(6, 1024, 2), 21);
  ck_assert_int_eq(strata_uniform_bits(6, 1025, 2), 32);
  ck_assert_int_eq(strata_uniform_bits(6, 1000, 25), 21);
  /* d = 5, 25 bits: up to 2^13 */
  ck_assert_int_eq(strata_uniform_bits(5, 8192, 1), 25);
  ck_assert_int_eq(strata_uniform_bits(5, 8193, 1), 32);
  ck_assert_int_eq(strata_uniform_bits(4, 1, 100), 32);
}
END_TEST

/* The packed fields are uniform too: mean 1/2 and variance 1/12 of each
 * coordinate of d = 6 (21 bits) and d = 9 (28 bits, fields that straddle
 * words), within 5 standard errors. */
START_TEST(test_packed_mean_and_variance)
{
  const int n = 200000, dims[2] = {6, 9};
  for (int t = 0; t < 2; t++) {
    const int dim = dims[t], b = STRATA_UNIFORM_PACKED_BITS(dim);
    double s[9] = {0}, s2[9] = {0}, u[9], shift[9];
    strata_uniform_shifts(7, 2, dim, b, shift);
    for (int i = 0; i < n; i++) {
      strata_sample_uniforms(7, 2, (uint64_t)i, dim, b, shift, u);
      for (int d = 0; d < dim; d++) {
        s[d] += u[d];
        s2[d] += u[d] * u[d];
      }
    }
    for (int d = 0; d < dim; d++) {
      const double m = s[d] / n, v = s2[d] / n - m * m, se = 0.2887 / sqrt((double)n);
      ck_assert_msg(fabs(m - 0.5) < 5 * se, "dim %d coordinate %d: mean %g", dim, d, m);
      ck_assert_msg(fabs(v - 1.0 / 12) < 5 * 0.0745 / sqrt((double)n),
                    "dim %d coordinate %d: variance %g", dim, d, v);
    }
  }
}
END_TEST

START_TEST(test_streams_differ)
{
  /* Neighbouring samples, iterations and seeds must not share uniforms. */
  double a[4], b[4], c[4], d[4];
  strata_sample_uniforms(1, 0, 0, 4, 32, NULL, a);
  strata_sample_uniforms(1, 0, 1, 4, 32, NULL, b);
  strata_sample_uniforms(1, 1, 0, 4, 32, NULL, c);
  strata_sample_uniforms(2, 0, 0, 4, 32, NULL, d);
  for (int i = 0; i < 4; i++) {
    ck_assert(a[i] != b[i]);
    ck_assert(a[i] != c[i]);
    ck_assert(a[i] != d[i]);
  }
}
END_TEST

START_TEST(test_mean_and_variance)
{
  /* A gross check of uniformity: mean 1/2 and variance 1/12 over 1e6 draws,
   * within 5 standard errors. */
  const int n = 250000;
  double s = 0, s2 = 0, u[4];
  for (int i = 0; i < n; i++) {
    strata_sample_uniforms(42, 3, (uint64_t)i, 4, 32, NULL, u);
    for (int j = 0; j < 4; j++) {
      s += u[j];
      s2 += u[j] * u[j];
    }
  }
  double m = s / (4.0 * n), v = s2 / (4.0 * n) - m * m;
  ck_assert_msg(m > 0.5 - 5 * 0.2887 / 1000 && m < 0.5 + 5 * 0.2887 / 1000, "mean %g", m);
  ck_assert_msg(v > 1.0 / 12 - 0.0005 && v < 1.0 / 12 + 0.0005, "variance %g", v);
}
END_TEST

/* The many-counter forms (the vector one, AVX2 where the processor has it,
 * and the plain one) give every counter what the one-counter form gives
 * it: extreme words, neighbouring indices and random ones, under several
 * keys, in calls of every size they take. */
START_TEST(test_lanes_match_one_by_one)
{
  const uint64_t seeds[] = {0, 1, 0x0123456789abcdefULL, 0xffffffffffffffffULL};
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++)
    for (int n = STRATA_PHILOX_LANE_STEP; n <= STRATA_PHILOX_LANES_MAX;
         n += n < 64 ? STRATA_PHILOX_LANE_STEP : 64) {
      static strata_philox_lanes in, vec, plain;
      for (int l = 0; l < n; l++)
        for (int w = 0; w < 4; w++) {
          r = r * 6364136223846793005ULL + 1442695040888963407ULL;
          uint32_t v = (uint32_t)(r >> 32);
          if (l % 8 == 1) v = 0;
          if (l % 8 == 2) v = 0xffffffffu;
          if (l % 8 == 3 && w == 2) v = (uint32_t)l; /* consecutive sample indices */
          in.w[w][l] = v;
        }
      vec = in;
      plain = in;
      strata_philox4x32_10_lanes(&vec, n, seeds[s]);
      strata_philox4x32_10_lanes_plain(&plain, n, seeds[s]);
      for (int l = 0; l < n; l++) {
        uint32_t c[4] = {in.w[0][l], in.w[1][l], in.w[2][l], in.w[3][l]};
        strata_philox4x32_10(c, seeds[s]);
        for (int w = 0; w < 4; w++) {
          ck_assert_msg(vec.w[w][l] == c[w], "seed %zu n %d lane %d word %d: %08x != %08x", s,
                        n, l, w, vec.w[w][l], c[w]);
          ck_assert_msg(plain.w[w][l] == c[w], "plain: seed %zu n %d lane %d word %d", s, n, l,
                        w);
        }
      }
    }
}
END_TEST

#ifdef HAVE_CURAND
/* cuRAND's host generator (it runs without a GPU) lays out its output as
 * four words per subsequence j at position 0 first: word 4j+r is
 * Philox(counter = (0, 0, j, 0), key = seed)[r]. */
START_TEST(test_against_curand)
{
  const unsigned long long seeds[] = {0, 1, 0x123456789abcULL, 0xfedcba9876543210ULL};
  const size_t n = 4096;
  unsigned int *out = malloc(n * sizeof *out);
  ck_assert(out != NULL);
  for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
    curandGenerator_t g;
    ck_assert_int_eq(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10),
                     CURAND_STATUS_SUCCESS);
    ck_assert_int_eq(curandSetPseudoRandomGeneratorSeed(g, seeds[s]), CURAND_STATUS_SUCCESS);
    ck_assert_int_eq(curandGenerate(g, out, n), CURAND_STATUS_SUCCESS);
    curandDestroyGenerator(g);
    for (size_t j = 0; j < n / 4; j++) {
      uint32_t c[4] = {0, 0, (uint32_t)j, 0};
      strata_philox4x32_10(c, seeds[s]);
      for (int r = 0; r < 4; r++)
        ck_assert_msg(c[r] == out[4 * j + (size_t)r], "seed %llx block %zu word %d", seeds[s],
                      j, r);
    }
  }
  free(out);
}
END_TEST
#endif

int main(void)
{
  Suite *s = suite_create("philox");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_known_answers);
  tcase_add_test(tc, test_uniforms_layout);
  tcase_add_test(tc, test_packed_layout);
  tcase_add_test(tc, test_packed_rule);
  tcase_add_test(tc, test_packed_mean_and_variance);
  tcase_add_test(tc, test_streams_differ);
  tcase_add_test(tc, test_mean_and_variance);
  tcase_add_test(tc, test_lanes_match_one_by_one);
#ifdef HAVE_CURAND
  tcase_add_test(tc, test_against_curand);
#else
  printf("test_philox: cuRAND not found at configure time; the comparison with "
         "cuRAND's generator is skipped (the known-answer vectors still run)\n");
#endif
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
