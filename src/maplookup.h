/* The importance map's lookup, written once for the host (map.h, the CPU
 * backend) and the device (the sampling kernels): a point is mapped by the
 * same operations whatever computes it.  Plain C on flat arrays, no
 * structs and no headers: NVRTC compiles it into users' kernels too. */
#ifndef STRATA_MAPLOOKUP_H
#define STRATA_MAPLOOKUP_H
#include "hostdev.h"

/* y in (0,1) on one axis through a map of ninc increments to x in
 * [lower, lower + width]; multiplies *jac by the axis's Jacobian and
 * returns the increment y fell in.  The map's edges are every stride-th of
 * e[] (e[0], e[stride], ..., e[ninc stride]): a map stored finer than it
 * samples (map.h) is read at its resolution, by the operations of a map
 * stored with ninc increments. */
STRATA_HD int strata_map_axis(const double *e, int ninc, int stride, double lower, double width,
                              double y, double *x, double *jac)
{
  const double t = y * ninc;
  int i = (int)t;
  if (i >= ninc) i = ninc - 1;
  const double e0 = STRATA_LOAD(e + i * stride),
               du = STRATA_LOAD(e + (i + 1) * stride) - e0;
  *x = lower + width * (e0 + (t - i) * du);
  *jac *= ninc * du * width;
  return i;
}
#endif
