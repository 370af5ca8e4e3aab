/* Evidence that the map missed part of the integrand, read from the
 * iterations that the average leaves out (doc/algorithm.md, "A lost
 * peak"). */
#ifndef STRATA_LOSTPEAK_H
#define STRATA_LOSTPEAK_H

#include <stdint.h>

typedef struct {
  double z;          /* the left-out iterations' combined distance above the average */
  int itn;           /* 1-based: the left-out iteration farthest above it */
  double integral, sigma; /* its estimate */
} strata_lost;

/* n left-out iterations, estimates I[k] +- s[k] numbered itn[k], against an
 * average A +- sA: nonzero when they read above it beyond chance, with
 * what was seen in *out (filled in either case; z = 0 without any). */
int strata_lost_check(const double *I, const double *s, const int *itn, int n, double A,
                      double sA, strata_lost *out);
/* The z the strongest of ncomp components' checks must pass: the check's
 * own bound up to 8 components, and beyond the bound whose one-sided
 * chance is 8/ncomp of it, so that a histogram of a thousand bins does not
 * claim a lost peak from the chance of its most extreme bin. */
double strata_lost_z_family(int ncomp);

/* A stratification of m hypercubes per axis in dim dimensions, at most
 * max_nhcube of them: 0 when it is fine enough to show a part of the
 * integrand that the map lost; otherwise the samples per iteration that
 * give it STRATA_GUARD_STRATA per axis (a claim waits for them). */
double strata_lost_thin(int dim, int m, int64_t max_nhcube);

#endif
