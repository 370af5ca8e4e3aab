/* Hypercube h's integer coordinates, k_d = (h / M^d) % M: written once for
 * the host and the sampling kernels (NVRTC compiles it too). */
#ifndef STRATA_HCUBE_H
#define STRATA_HCUBE_H
#include "hostdev.h"

STRATA_HD void strata_hcube_coords(long long h, int dim, int M, int *k)
{
  for (int d = 0; d < dim; d++) {
    k[d] = (int)(h % M);
    h /= M;
  }
}
#endif
