/* A product of 1-D profiles read from a table, times a 2-D table: the
 * table helpers on the CPU and inside the GPU kernel. */
#include <strata/integrand.h>

void tabulated(const double *x, int dim, const double *params, const strata_table *tables,
               double *out)
{
  (void)params;
  double p = 1.0;
  for (int i = 0; i < dim; i++) p *= strata_interp1(STRATA_TABLE(tables, profile), x[i]);
  out[0] = p * strata_interp2(STRATA_TABLE(tables, plane), x[0], x[1]);
}
