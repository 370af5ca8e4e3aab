/* A table an integrand reads: values on a grid, 1-D or 2-D.  Shared by the
 * host program (which loads tables from HDF5) and the integrand prelude
 * (which interpolates in them, on the CPU and inside GPU kernels), so the
 * layout is plain C with no includes. */
#ifndef STRATA_TABLE_H
#define STRATA_TABLE_H

typedef struct {
  const double *v;   /* values: v[i * ny + j] = value at (x_i, y_j); 1-D: ny = 1 */
  const double *x;   /* nx increasing grid points, or NULL: uniform from x0 to x1 */
  const double *y;   /* ny increasing grid points, or NULL: uniform from y0 to y1 */
  int nx, ny;
  int rank;          /* 1 or 2 */
  double x0, x1, y0, y1; /* the grid's ends (also set for non-uniform grids) */
} strata_table;

#endif
