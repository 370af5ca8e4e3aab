/* x^e for x >= 0, by square roots when 8e is a whole number from 1 to 16
 * (the defaults alpha = 0.5 and beta = 0.75 give x^0.5 and x^0.375), and by
 * pow() otherwise.  The map and the allocation take one such power per
 * increment and per hypercube after every adapting iteration, a third of
 * the host's work beside the GPU's sampling in a profile of short runs; a
 * square root costs a fraction of pow().  Deterministic like pow(): the
 * same bits on every rank. */
#ifndef STRATA_POWFRAC_H
#define STRATA_POWFRAC_H
#include <math.h>

#include "hostdev.h"

STRATA_HD double strata_powfrac(double x, double e)
{
  const double k8 = 8.0 * e;
  if (!(k8 >= 1.0 && k8 <= 16.0) || k8 != floor(k8)) return pow(x, e);
  int k = (int)k8;
  double b = x; /* b = x^(1/q) with q the denominator of k/8 in lowest terms */
  if (k % 8 != 0) b = sqrt(b);
  if (k % 4 != 0) b = sqrt(b);
  if (k % 2 != 0) b = sqrt(b);
  int n = k % 2 ? k : k % 4 ? k / 2 : k % 8 ? k / 4 : k / 8; /* x^e = b^n */
  double r = b;
  for (int i = 1; i < n; i++) r *= b;
  return r;
}
#endif
