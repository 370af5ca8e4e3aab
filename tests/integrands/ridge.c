/* A dear integrand: 2000 gaussians of sd 0.05 with their centres spread
 * evenly along the diagonal of the cube, 2000 exponentials a sample (the
 * shape of cuVegas's ridge, longer).  test_cuda uses it where the kernel's
 * time per sample matters, not its value. */
#include <math.h>

double ridge(const double *x, int dim, const double *params)
{
  (void)params;
  const int n = 2000;
  double f = 0.0;
  for (int i = 0; i < n; i++) {
    const double c = i / (n - 1.0);
    double d2 = 0.0;
    for (int j = 0; j < dim; j++) d2 += (x[j] - c) * (x[j] - c);
    f += exp(-200.0 * d2);
  }
  return f / n;
}
