/* Three components sharing one sample: a gaussian peak, its first moment
 * in x_1, and a smooth polynomial.  With a = params[0] the exact integrals
 * over the unit cube are g^d, g^d / 2 and 1 + 1/4 (d >= 2), where
 * g = sqrt(pi/a) erf(sqrt(a)/2). */
#include <math.h>

void three(const double *x, int dim, const double *params, const strata_table *tables,
           double *out)
{
  (void)tables;
  double s = 0.0;
  for (int i = 0; i < dim; i++) {
    double t = x[i] - 0.5;
    s += t * t;
  }
  const double g = exp(-params[0] * s);
  out[0] = g;
  out[1] = x[0] * g;
  out[2] = 1.0 + x[0] * x[1];
}
