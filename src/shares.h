/* VEGAS+ allocation arithmetic, written once for the host (strat.c) and the
 * device (gpu/adapt.cuh), in integers wherever a sum is taken, so that the
 * allocation is the same on every backend and rank count, whatever order a
 * GPU adds in.
 *
 * A hypercube's share sigma_h^beta is kept as a level: t = round(128 log2
 * of the share), read from the bits of sigma_h^2 to 1/16 octave (ladder.h
 * explains why so coarse).  Relative to the largest level tmax a share is
 * the whole number D = 2^32 * 2^((t - tmax)/128) with the power taken from
 * a table of 128 steps per octave; shares more than 32 octaves below the
 * largest count as none (D = 0: such a hypercube would get less than a
 * sample in 2^32).  Sums of D are exact in 64 bits (at most 2^32
 * hypercubes), and every decision below is a fixed function of them. */
#ifndef STRATA_SHARES_H
#define STRATA_SHARES_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hostdev.h"

#define STRATA_SHARE_STEPS 128 /* levels per octave */
#define STRATA_SHARE_BINS 4096 /* levels kept below the largest: 32 octaves */

/* a * b + c, rounded twice: never fused into one rounding, so that host
 * and device give the same bits. */
STRATA_HD double strata_mul_add_rn(double a, double b, double c)
{
#ifdef __CUDA_ARCH__
  return __dadd_rn(__dmul_rn(a, b), c);
#else
  volatile double p = a * b;
  return p + c;
#endif
}

STRATA_HD uint64_t strata_double_bits(double x)
{
#ifdef __CUDA_ARCH__
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
#endif
}

/* The variance of a hypercube's values from the sums of n of them (shifted
 * by any constant), as the shares take it: below 1e-6 of the second moment
 * the difference is mostly cancellation (a hypercube in the tail, where J f
 * << the shift), and its last digits differ between backends and ranks:
 * counted as zero, a hypercube that needs only its 2 samples, not as a
 * share that changes from run to run. */
STRATA_HD double strata_share_var(double s1, double s2, double n)
{
  const double m1 = s1 / n, m2 = s2 / n;
  const double var = strata_mul_add_rn(-m1, m1, m2);
  return var > 1e-6 * m2 ? var : 0.0;
}

/* The level of the share var^(slope/8) (slope = 4 beta): -INFINITY for none.
 * log2 var is read to 1/16 from the exponent and the top four bits of the
 * mantissa (16 log2(1 + (j + 1/2)/16), rounded, minus one, in the nibbles
 * of the constant), so the level cannot move with the last bits of var. */
STRATA_HD double strata_share_level(double var, double slope)
{
  const uint64_t log16 = 0xFEDCCBA987654210ull; /* nibble j: entry j - 1 */
  if (!(var > 0.0) || !(var < INFINITY)) return -INFINITY;
  const uint64_t b = strata_double_bits(var);
  /* (A subnormal var reads as about 2^-1023: its share is as good as 0.) */
  const double L = 16.0 * (double)((int64_t)(b >> 52) - 1023) +
                   (double)((log16 >> (4 * ((b >> 48) & 15))) & 15) + 1.0;
  return floor(strata_mul_add_rn(L, slope, 0.5));
}

/* The histogram bin of a level, 0..STRATA_SHARE_BINS-1 upwards, or -1 for
 * a share that counts as none. */
STRATA_HD int strata_share_bin(double level, double tmax)
{
  const double rel = level - tmax;
  return rel > -(double)STRATA_SHARE_BINS ? (int)rel + STRATA_SHARE_BINS - 1 : -1;
}

/* D of a bin; step[r] = 2^(r/128) (ladder.h), in [1, 2): scaled by the
 * power of two 2^(q + 32) <= 2^32, exactly, as ldexp would. */
STRATA_HD uint64_t strata_share_of_bin(int bin, const double *step)
{
  if (bin < 0) return 0;
  const int rel = bin - (STRATA_SHARE_BINS - 1); /* -4095 .. 0 */
  const int r = rel & (STRATA_SHARE_STEPS - 1);  /* rel mod 128 */
  const int q = (rel - r) / STRATA_SHARE_STEPS;  /* -32 .. 0 */
  return (uint64_t)(step[r] * (double)(UINT64_C(1) << (q + 32)));
}

/* Water-filling: hypercubes whose share of what is left falls below the
 * floor of 2 samples are pinned there, smallest first, and the others
 * share the rest.  Walking the bins upwards, bin b is pinned when
 * D_b left < 2 Dfree with the bins below it pinned (left = neval - 2 *
 * pinned, Dfree the free shares' sum); the first bin that is not pinned
 * ends the walk, and since pinning only raises the threshold every bin
 * above stays free.  This is the test for one bin, given the counts
 * pinned below it; all bins can be tested at once from prefix sums. */
STRATA_HD int strata_share_pinned(uint64_t D, uint64_t dfree, int64_t left)
{
  return (double)D * (double)left < 2.0 * (double)dfree;
}

/* Samples of a free hypercube: cumulative rounding of its share of what
 * is left, so that each count is within one of its share and they add up
 * to exactly left.  cum is the sum of the free shares up to and including
 * this hypercube's D. */
STRATA_HD int64_t strata_share_upto(uint64_t cum, uint64_t dfree, int64_t left, double per)
{
  return cum == dfree ? left : (int64_t)floor(strata_mul_add_rn((double)cum, per, 0.5));
}

STRATA_HD int64_t strata_share_count(uint64_t cum, uint64_t D, uint64_t dfree, int64_t left,
                                     double per)
{
  const int64_t n = strata_share_upto(cum, dfree, left, per) -
                    strata_share_upto(cum - D, dfree, left, per);
  return n < 2 ? 2 : n;
}
#endif
