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
#include "strata/strata.h"

#define STRATA_EST_MAX_COMP STRATA_MAX_COMP

typedef enum {
  STRATA_EST_STRATIFIED,
  STRATA_EST_POOLED,
  STRATA_EST_RANDOMIZED
} strata_estimator;

/* 0 with *I and *var set, or -1 with *bad the first cell whose sums are not
 * finite (values beyond the largest double).  The case ncomp = 1 of the
 * function below. */
int strata_estimate(strata_estimator kind, const strata_strat *cells, const double *s1,
                    const double *s2, double shift, int ngroup, double *I, double *var,
                    int64_t *bad);

/* The same for ncomp (1..STRATA_MAX_COMP) components at once.  Per cell h,
 * c1[h * ncomp + c] is the sum of J f_c - shift[c] and c2[h * npair + p]
 * the sum of the products of those shifted values for the pair p = (a, b),
 * a <= b, packed row by row (npair = ncomp (ncomp + 1) / 2), as the
 * backends fill them (backend.h).  Sets I[ncomp] and the covariance of the
 * iteration's estimates cov[a * ncomp + b] (symmetric, positive
 * semi-definite); its diagonal is, bit for bit, what strata_estimate gives
 * for that component's own sums. */
int strata_estimate_cov(strata_estimator kind, const strata_strat *cells, int ncomp,
                        const double *c1, const double *c2, const double *shift, int ngroup,
                        double *I, double *cov, int64_t *bad);

/* Ranks that sampled disjoint ranges of hypercubes can form the stratified
 * estimate without exchanging per-hypercube sums: each adds the terms of
 * its own hypercubes [h0, h1) into part (STRATA_EST_PART(ncomp) doubles:
 * the ncomp estimates, then the ncomp x ncomp covariance, as
 * strata_estimate_cov sets them), and the element-wise sum of the parts is
 * the estimate.  Over [0, nhcube) the part is, bit for bit, what
 * strata_estimate_cov gives; split between ranks it differs by the
 * rounding of the order of addition.  0, or -1 with *bad as above. */
#define STRATA_EST_PART(ncomp) ((size_t)(ncomp) * (size_t)((ncomp) + 1))
int strata_estimate_part(const strata_strat *cells, int ncomp, const double *c1,
                         const double *c2, const double *shift, int64_t h0, int64_t h1,
                         double *part, int64_t *bad);
#endif
