/* Two narrow gaussians off the diagonal, where a product map puts most of
 * its samples on the two empty combinations of its bumps: a peak at
 * (0.3, 0.7, 0.3, 0.7, ...) of sd 0.03 and one of half its height at
 * (0.7, 0.3, 0.7, 0.3, ...) of sd 0.05.  Over the unit cube each is within
 * 1e-30 of its integral over all space, so the exact value is
 * (2 pi)^(d/2) (0.03^d + 0.5 * 0.05^d). */
#include <math.h>

double two_peaks(const double *x, int dim, const double *params)
{
  (void)params;
  double a = 0.0, b = 0.0;
  for (int i = 0; i < dim; i++) {
    const double u = x[i] - (i % 2 ? 0.7 : 0.3), v = x[i] - (i % 2 ? 0.3 : 0.7);
    a += u * u;
    b += v * v;
  }
  return exp(-a / (2 * 0.03 * 0.03)) + 0.5 * exp(-b / (2 * 0.05 * 0.05));
}
