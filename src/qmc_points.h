/* Randomized quasi-Monte Carlo points, coordinate by coordinate, for the
 * host and the device alike: both backends compute the very same bits.
 *
 * Sobol': point j of axis d is the XOR of the (scrambled) direction numbers
 * v[k] for the bits k of the Gray code of j, then XOR a digital shift.  Going
 * from j to j+1 changes one Gray-code bit, ctz(j+1), so consecutive points
 * cost one XOR per axis; any other start costs one skip-ahead.
 *
 * Rank-1 lattice: point j of axis d is frac(j z_d / N + shift_d), with
 * j z_d mod N done in integers so that no rounding depends on j. */
#ifndef STRATA_QMC_POINTS_H
#define STRATA_QMC_POINTS_H
#include <math.h>
#include <stdint.h>

#include "hostdev.h"

/* 64 digits to a double strictly inside (0,1): the top 53 bits and half a
 * step, as the pseudo-random path keeps its uniforms off the ends. */
STRATA_HD double strata_qmc_unit(uint64_t x)
{
  return (double)(x >> 11) * 0x1p-53 + 0x1p-54;
}

/* Sobol' digits of point j on one axis from its 64 direction numbers v. */
STRATA_HD uint64_t strata_sobol_digits(const uint64_t *v, uint64_t j)
{
  uint64_t g = j ^ (j >> 1), x = 0;
  for (int k = 0; g; k++, g >>= 1)
    if (g & 1) x ^= v[k];
  return x;
}

/* Which direction number takes point j-1 to point j (j >= 1). */
STRATA_HD int strata_sobol_step(uint64_t j)
{
#ifdef __CUDA_ARCH__
  return __ffsll((long long)j) - 1;
#else
  return __builtin_ctzll(j);
#endif
}

/* Lattice coordinate of point j of N = 2^log2n with generator z and shift,
 * folded by the tent (baker's) map 1 - |2y - 1|.  Lattice rules integrate
 * periodic functions well and others poorly (the jump of the periodic
 * extension at the faces costs the convergence rate); folding makes any
 * smooth integrand's extension continuous and leaves the uniform
 * distribution of each randomized point as it was. */
STRATA_HD double strata_lattice_coord(uint64_t j, uint32_t z, int log2n, double shift)
{
  const uint64_t mask = (UINT64_C(1) << log2n) - 1;
  double y = (double)((j * z) & mask) * (1.0 / (double)(UINT64_C(1) << log2n)) + shift;
  if (y >= 1.0) y -= 1.0;
  return 1.0 - fabs(2.0 * y - 1.0);
}
#endif
