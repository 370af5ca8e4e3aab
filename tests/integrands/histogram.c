/* A histogram in x_1 of the gaussian peak exp(-a |x - 1/2|^2) on the unit
 * cube, a = params[0], in params[1] equal bins (ncomp): bin b is exactly
 * G^(d-1) sqrt(pi/a)/2 (erf(sqrt(a)(hi - 1/2)) - erf(sqrt(a)(lo - 1/2)))
 * over [lo, hi) = [b, b + 1) / bins, where G = sqrt(pi/a) erf(sqrt(a)/2).
 * A sample is nonzero in one bin alone. */
#include <math.h>

static double peak(const double *x, int dim, double a)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += (x[i] - 0.5) * (x[i] - 0.5);
  return exp(-a * s);
}

void histogram(const double *x, int dim, const double *params, const strata_table *tables,
               double *out)
{
  (void)tables;
  const int nb = (int)params[1];
  for (int b = 0; b < nb; b++) out[b] = 0.0;
  int k = (int)(x[0] * nb);
  if (k >= nb) k = nb - 1;
  out[k] = peak(x, dim, params[0]);
}

/* Every component nonzero (for timing the dense case): the peak times
 * 1 + sin(b x_1) / 2 in component b. */
void dense(const double *x, int dim, const double *params, const strata_table *tables,
           double *out)
{
  (void)tables;
  const int nb = (int)params[1];
  const double g = peak(x, dim, params[0]);
  for (int b = 0; b < nb; b++) out[b] = g * (1.0 + 0.5 * sin(b * x[0]));
}
