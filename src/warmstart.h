/* Starting a run from a map trained by another run: the sweep's tasks, or
 * a production run after a cheap training run, need not adapt from the
 * uniform map again. */
#ifndef STRATA_WARMSTART_H
#define STRATA_WARMSTART_H
#include <stdint.h>

#include "run.h"

/* Makes edges (naxes x (ninc + 1) unit edges, increasing from 0 to 1 on
 * every axis) r's map before its first iteration.  A map of another ninc is
 * rebinned to r's: the new edges follow the saved piecewise-linear map, so
 * a ninc that divides r's reproduces it exactly.  nh (may be NULL), the
 * allocation of nhcube hypercubes, is taken too where r has the same
 * hypercubes and moves samples between them (vegas+, vegas1d with
 * beta > 0), rescaled to r's own first budget; otherwise r keeps its even
 * first allocation.  *took_allocation (may be NULL) says which.  Nothing
 * else of r changes: its seed, neval, adapt_iters and integrand are its
 * own, and it draws as iteration 0.  Refuses a run that has iterated, a
 * mode without a map (plain, qmc), another number of axes, and a map that
 * is not increasing. */
int strata_run_start_from(strata_run *r, int naxes, int ninc, const double *edges,
                          int64_t nhcube, const int64_t *nh, int *took_allocation);
#endif
