/* The prelude of user integrands: strata puts it before the user's code,
 * which it compiles at run time with the system C compiler (C11) for the
 * CPU and with NVRTC (C++, -default-device) for the GPU.  So everything
 * here is plain C that is also valid device C++: no library calls but the
 * math functions (builtins under NVRTC, <math.h> in C), no static data,
 * no other includes.  See doc/integrands.md. */
#ifndef STRATA_INTEGRAND_H
#define STRATA_INTEGRAND_H
#include "strata/table.h"
#ifndef __CUDACC_RTC__
#include <math.h>
#endif

/* Helpers are inlined into the integrand; force it on the device, where a
 * call costs registers. */
#if defined(__CUDACC__)
#define STRATA_INLINE static __forceinline__
#else
#define STRATA_INLINE static inline
#endif

/* Constants to full double precision (more digits than a double holds, so
 * the literal rounds correctly). */
#define STRATA_PI 3.14159265358979323846264338327950288     /* pi */
#define STRATA_2PI 6.28318530717958647692528676655900577    /* 2 pi */
#define STRATA_PI_2 1.57079632679489661923132169163975144   /* pi / 2 */
#define STRATA_1_PI 0.318309886183790671537767526745028724  /* 1 / pi */
#define STRATA_SQRT2 1.41421356237309504880168872420969808  /* sqrt(2) */
#define STRATA_SQRTPI 1.77245385090551602729816748334114518 /* sqrt(pi) */
#define STRATA_1_SQRT2PI 0.398942280401432677939946059934381868 /* 1 / sqrt(2 pi): normal pdf */
#define STRATA_LN2 0.693147180559945309417232121458176568   /* log(2) */
#define STRATA_LN10 2.30258509299404568401799145468436421   /* log(10) */
#define STRATA_E 2.71828182845904523536028747135266250      /* e */
#define STRATA_EULER 0.577215664901532860606512090082402431 /* Euler-Mascheroni gamma */

/* Table number k of the job's `tables =` list by its name there: strata
 * puts `#define STRATA_TABLE_INDEX_<name> k` before the user's code, so a
 * misspelt name fails to compile instead of reading the wrong table.
 *   const strata_table *pdf = STRATA_TABLE(tables, pdf); */
#define STRATA_TABLE(tables, name) (&(tables)[STRATA_TABLE_INDEX_##name])

/* The raw value at grid point (i, j); j = 0 on a 1-D table.  No bounds
 * check: 0 <= i < nx, 0 <= j < ny. */
STRATA_INLINE double strata_table_at(const strata_table *t, int i, int j)
{
  return t->v[(long long)i * t->ny + j];
}

/* The interval of an axis of n points that holds u: returns i in
 * [0, n - 2] and *w in [0, 1] with u = (1 - w) g_i + w g_{i+1}, where g is
 * the array xs or, when xs is NULL, g_i = lo + i * (hi - lo) / (n - 1).
 * Outside [lo, hi] it clamps (i = 0, w = 0 below; i = n - 2, w = 1 above),
 * so the caller never reads past the end; at a grid point w is exactly 0
 * (or 1 at hi), so the interpolant gives the stored value exactly.  A NaN
 * u gives a NaN *w, so that the integrand's result shows it. */
STRATA_INLINE int strata_table_locate_(int n, const double *xs, double lo, double hi, double u,
                                       double *w)
{
  if (!(u > lo)) {
    *w = u == u ? 0.0 : u;
    return 0;
  }
  if (!(u < hi)) {
    *w = 1.0;
    return n - 2;
  }
  int i;
  if (xs) {
    /* xs[i] <= u < xs[j] throughout. */
    int j = n - 1;
    i = 0;
    while (j - i > 1) {
      const int m = i + (j - i) / 2;
      if (u < xs[m]) j = m;
      else i = m;
    }
    *w = (u - xs[i]) / (xs[i + 1] - xs[i]);
    return i;
  }
  const double h = (hi - lo) / (double)(n - 1);
  i = (int)((u - lo) / h); /* u > lo: truncation is floor */
  if (i > n - 2) i = n - 2;
  /* The quotient may round across a grid point: settle i against the
   * grid points themselves, so that u == g_i gives w == 0 exactly. */
  if (u < lo + (double)i * h) i--;
  else if (i < n - 2 && u >= lo + (double)(i + 1) * h) i++;
  if (i < 0) i = 0;
  *w = (u - (lo + (double)i * h)) / h;
  return i;
}

/* Linear interpolation in a 1-D table (uniform grid: O(1); grid array:
 * binary search).  Outside [t->x0, t->x1] the value at the nearer end. */
STRATA_INLINE double strata_interp1(const strata_table *t, double x)
{
  double w;
  const int i = strata_table_locate_(t->nx, t->x, t->x0, t->x1, x, &w);
  return (1.0 - w) * t->v[i] + w * t->v[i + 1];
}

/* Bilinear interpolation in a 2-D table, each axis uniform or not, each
 * clamped to its ends separately (so outside the rectangle: the value on
 * its nearest edge). */
STRATA_INLINE double strata_interp2(const strata_table *t, double x, double y)
{
  double wx, wy;
  const int i = strata_table_locate_(t->nx, t->x, t->x0, t->x1, x, &wx);
  const int j = strata_table_locate_(t->ny, t->y, t->y0, t->y1, y, &wy);
  const double *r0 = t->v + (long long)i * t->ny + j, *r1 = r0 + t->ny;
  return (1.0 - wx) * ((1.0 - wy) * r0[0] + wy * r0[1]) +
         wx * ((1.0 - wy) * r1[0] + wy * r1[1]);
}
#endif
