#include <math.h>
/* f4 of the m-CUBES suite, written as a user would. */
double gauss(const double *x, int dim, const double *params)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) {
    double t = x[i] - 0.5;
    s += t * t;
  }
  return exp(-params[0] * s);
}
