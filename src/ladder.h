/* x^e for x >= 0, rounded onto a fixed ladder of values: log2 x is read to
 * 1/16 from the exponent and the top four bits of the mantissa, and the
 * power is then one of 128 steps per octave, from a table.
 *
 * The VEGAS+ shares sigma_h^beta need only a few significant bits (an
 * allocation is whole samples), and must not move with the last bits of
 * sigma_h: backends, rank counts and GPU atomics add the same samples in
 * different orders, and a share that moved would shift every later one
 * and the next iteration would draw other samples altogether.  The steps
 * are as coarse as the 6-bit rounding of the shares they once replaced
 * (4.4% in sigma_h^2, which measurements showed to be stable where 10 bits
 * were not).  Integer arithmetic, exact square roots and exact scaling:
 * the same bits on every machine.  The allocation itself works on the
 * levels (shares.h); the power is for tests and messages. */
#ifndef STRATA_LADDER_H
#define STRATA_LADDER_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "shares.h"

typedef struct strata_ladder_s {
  double slope;      /* 8 e: levels are 128 log2 x^e, slope levels per 1/16 of log2 x */
  double step[STRATA_SHARE_STEPS]; /* 2^(i/128) */
} strata_ladder;

/* 0, with the ladder set, for 0 < e <= 2; -1 otherwise. */
static inline int strata_ladder_init(strata_ladder *l, double e)
{
  if (!(e > 0.0 && e <= 2.0)) return -1;
  l->slope = 8.0 * e;
  double root[7]; /* root[i] = 2^(2^i / 128), by square roots of 2 */
  root[6] = sqrt(2.0);
  for (int i = 5; i >= 0; i--) root[i] = sqrt(root[i + 1]);
  for (int r = 0; r < STRATA_SHARE_STEPS; r++) {
    double v = 1.0;
    for (int i = 0; i < 7; i++)
      if (r >> i & 1) v *= root[i];
    l->step[r] = v;
  }
  return 0;
}

static inline double strata_ladder_pow(const strata_ladder *l, double x)
{
  if (isinf(x)) return x;
  const double t = strata_share_level(x, l->slope);
  if (!(t > -INFINITY)) return 0.0;
  const int64_t ti = (int64_t)t;
  const int64_t r = ((ti % STRATA_SHARE_STEPS) + STRATA_SHARE_STEPS) % STRATA_SHARE_STEPS;
  return ldexp(l->step[r], (int)((ti - r) / STRATA_SHARE_STEPS));
}
#endif
