/* One iteration's integral and variance from the per-cell sums of J f - shift
 * and of its square, the same on every rank (cells are added in cell order).
 *
 * stratified: cells are hypercubes of equal volume, each its own estimate
 *             (VEGAS, VEGAS+); the variances of the cells add.
 * pooled:     cells are batches of independent points over the whole cube
 *             (plain MC); one mean and one sample variance over all points.
 * randomized: cells come in ngroup groups, each one randomization of a QMC
 *             point set; the groups' means are independent and unbiased, so
 *             their spread is the error (points inside a group are not
 *             independent, and their own variance would say nothing). */
#ifndef STRATA_ESTIMATE_H
#define STRATA_ESTIMATE_H
#include <stdint.h>

#include "strat.h"

typedef enum {
  STRATA_EST_STRATIFIED,
  STRATA_EST_POOLED,
  STRATA_EST_RANDOMIZED
} strata_estimator;

/* 0 with *I and *var set, or -1 with *bad the first cell whose sums are not
 * finite (values beyond the largest double). */
int strata_estimate(strata_estimator kind, const strata_strat *cells, const double *s1,
                    const double *s2, double shift, int ngroup, double *I, double *var,
                    int64_t *bad);
#endif
