/* The stratified estimate of a vector integrand of many components (more
 * than STRATA_MAX_COMP: histograms), made as the samples come, without
 * per-hypercube sums of every pair of components.
 *
 * A hypercube h of n samples (volume V) adds V m to the estimate and
 * V^2 v to its covariance, where m = S1 / n and v = (S2 - S1 m^T) /
 * (n (n - 1)) (cellmoments.h).  Written as
 *
 *   V^2 v = alpha_h sum_i f_i f_i^T - (alpha_h / n) S1 S1^T,
 *   alpha_h = V^2 / (n (n - 1)),
 *
 * both terms are outer products of vectors known as the samples come: each
 * sample's own (alpha_h is known before sampling, from the allocation)
 * and, when the hypercube is complete, its sums'.  Only a sample's nonzero
 * components enter them: a histogram's sample costs one product, a dense
 * integrand's ncomp (ncomp + 1) / 2.  Each component's variance, the
 * diagonal, is summed per hypercube as it completes, from its own S1 and
 * S2, and counted only where positive, as cellmoments.h counts it.
 *
 * The values are J f, unshifted (the few-component path subtracts the
 * previous estimate to keep its sums from cancelling): a shift would make
 * every component of every sample nonzero.  A hypercube's variance thus
 * loses relative precision eps * m^2 / v to rounding, which matters only
 * for a component that is nearly constant under the map. */
#ifndef STRATA_COMPSTREAM_H
#define STRATA_COMPSTREAM_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int nc;
  size_t *rowstart;     /* packed upper triangle: (a, b), a <= b, at rowstart[a] + b */
  /* The open hypercube: its components' sums and sums of squares, which
   * components are nonzero there (touched, ntouched; mark), and alpha_h. */
  double *s1, *s2;
  int *touched, ntouched;
  unsigned char *mark;
  double alpha;
  /* One sample's nonzero components and their values. */
  int *nz, nnz;
  double *nzv;
  /* The hypercubes' sums so far: sum V m, sum V^2 v_cc (where positive),
   * and the packed sums of the two outer products (their diagonal unused). */
  double *I, *diag, *cross;
  /* The first hypercube whose moments are not finite, or -1, and the mean
   * near which they overflowed. */
  int64_t bad;
  double bad_near;
} strata_compstream;

/* NULL when out of memory. */
strata_compstream *strata_compstream_alloc(int nc);
void strata_compstream_free(strata_compstream *s);
/* Empties the sums, for another range of hypercubes. */
void strata_compstream_clear(strata_compstream *s);
/* Hypercube h of n samples and volume V opens. */
static inline void strata_compstream_open(strata_compstream *s, int64_t n, double V)
{
  s->alpha = n > 1 ? V * V / ((double)n * (double)(n - 1)) : 0.0;
}
/* One sample's nc values f: which are nonzero, into nz and nzv.  Returns
 * the first that is not finite, or -1 with *abs_sum the sum of their
 * magnitudes (in component order, as the zeros would leave it). */
int strata_compstream_scan(strata_compstream *s, const double *f, double *abs_sum);
/* The sample just scanned, at the point of Jacobian jac, into the sums. */
void strata_compstream_add(strata_compstream *s, double jac);
/* The open hypercube (h, of n samples and volume V) is complete: its
 * moments into the sums.  -1, with bad set, where they are not finite. */
int strata_compstream_close(strata_compstream *s, int64_t h, int64_t n, double V);
/* The sums into an estimate's part (estimate.h, STRATA_EST_PART(nc)): the
 * estimates added into part[0 .. nc), the covariance into the upper
 * triangle and the diagonal of part[nc + a nc + b]. */
void strata_compstream_into_part(const strata_compstream *s, double *part);
/* The part's lower triangle from its upper, once every range is in. */
void strata_compstream_mirror(int nc, double *part);
#endif
