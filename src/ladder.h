/* x^(k/8) for x >= 0, rounded onto a fixed ladder of values: log2 x is
 * read to 1/16 from the exponent and the top four bits of the mantissa,
 * and the power is then one of 128 steps per octave, from a table.
 *
 * The VEGAS+ shares sigma_h^beta need only a few significant bits (an
 * allocation is whole samples), and must not move with the last bits of
 * sigma_h: backends, rank counts and GPU atomics add the same samples in
 * different orders, and a share that moved would shift every later one
 * and the next iteration would draw other samples altogether.  The steps
 * are as coarse as the 6-bit rounding of the shares they replace (4.4% in
 * sigma_h^2, which measurements showed to be stable where 10 bits were
 * not) and cost a table lookup instead of three square roots, the larger
 * part of the host's work per adapting iteration at 262144 hypercubes.
 * Integer arithmetic, exact square roots and exact scaling: the same bits
 * on every machine. */
#ifndef STRATA_LADDER_H
#define STRATA_LADDER_H
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct strata_ladder_s {
  int k;             /* the power is k/8, 1 <= k <= 16 */
  double step[128];  /* 2^(i/128) */
} strata_ladder;

/* 0, with the ladder set, when 8 e is a whole number from 1 to 16; -1
 * otherwise (then use pow). */
static inline int strata_ladder_init(strata_ladder *l, double e)
{
  const double k8 = 8.0 * e;
  if (!(k8 >= 1.0 && k8 <= 16.0) || k8 != floor(k8)) return -1;
  l->k = (int)k8;
  double root[7]; /* root[i] = 2^(2^i / 128), by square roots of 2 */
  root[6] = sqrt(2.0);
  for (int i = 5; i >= 0; i--) root[i] = sqrt(root[i + 1]);
  for (int r = 0; r < 128; r++) {
    double v = 1.0;
    for (int i = 0; i < 7; i++)
      if (r >> i & 1) v *= root[i];
    l->step[r] = v;
  }
  return 0;
}

static inline double strata_ladder_pow(const strata_ladder *l, double x)
{
  /* 16 log2(1 + (j + 1/2)/16), rounded: the mantissa's share of 16 log2 x. */
  static const int8_t log16[16] = {1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 13, 14, 15, 16};
  if (!(x > 0.0)) return 0.0;
  if (isinf(x)) return x;
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  /* (A subnormal x reads as about 2^-1023: its power is as good as 0.) */
  const int64_t L = 16 * ((int64_t)(b >> 52) - 1023) + log16[(b >> 48) & 15];
  const int64_t t = L * l->k;            /* 128 log2 x^(k/8) */
  const int64_t r = ((t % 128) + 128) % 128, q = (t - r) / 128;
  if (q < -1022 || q > 1023) return ldexp(l->step[r], (int)q);
  const uint64_t e = (uint64_t)(q + 1023) << 52;
  double p;
  memcpy(&p, &e, sizeof p);
  return l->step[r] * p;
}
#endif
