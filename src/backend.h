/* The narrow interface between the algorithm and whatever evaluates samples
 * (CPU threads here, CUDA in gpu/).  A backend fills the sums of one
 * iteration for a range of hypercubes; everything else stays in src/. */
#ifndef STRATA_BACKEND_H
#define STRATA_BACKEND_H
#include "grid.h"
#include "philox.h"
#include "qmc.h"
#include "strat.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const strata_problem *problem;
  const strata_grid *grid;
  const strata_strat *strat; /* the cells: hypercubes, or whole-cube batches (M = 1) */
  /* NULL: pseudo-random points, (k + u) / M in hypercube k.  Otherwise the
   * cells are blocks of this iteration's QMC point sets (M = 1), and sample
   * i is the QMC point of global index i. */
  const strata_qmc *qmc;
  uint64_t seed;
  uint32_t iteration;   /* 0-based, keys the random streams */
  int adapt;            /* also accumulate the map's training sums */
  int64_t h0, h1;       /* hypercubes [h0, h1) are this caller's */
  /* J f is summed as J f - shift (the previous iteration's estimate, which J f
   * approaches as the map improves): the variance then comes from sums that
   * do not cancel, and so agrees between backends that add in other orders. */
  double shift;
  /* Outputs, zeroed by the caller: per hypercube sums of J f - shift and its
   * square for h in [h0, h1); with adapt, per axis and increment the summed
   * (J f)^2 and sample counts (dim * ninc each). */
  double *s1, *s2;
  double *wsum, *wcount;
  /* Vector integrands (problem->ncomp > 1; NULL otherwise): s1, s2 and the
   * map sums above then carry the quantity that adapts, g = J f_k for the
   * component k = problem->adapt_comp, or J sum_c |f_c| for adapt_comp -1.
   * Per cell h, c1[h * ncomp + c] sums J f_c - cshift[c], and
   * c2[h * npair + p] the products (J f_a - cshift[a]) (J f_b - cshift[b])
   * for a <= b, packed row by row (p = 0 is (0,0), 1 is (0,1), ...),
   * npair = ncomp (ncomp + 1) / 2.  Zeroed by the caller like s1, s2. */
  const double *cshift;
  double *c1, *c2;
} strata_sample_job;

typedef struct strata_backend strata_backend;
struct strata_backend {
  const char *name;
  void *self;
  /* Returns STRATA_OK, or an error code with strata_last_error() set (for a
   * non-finite integrand value: the point, iteration and sample index). */
  int (*sample)(strata_backend *b, const strata_sample_job *job);
  void (*free)(strata_backend *b);
};

/* nthreads 0: all available. */
strata_backend *strata_backend_cpu_new(int nthreads);
void strata_backend_free(strata_backend *b);

/* The pseudo-random point y of global sample i in the hypercube with
 * coordinates k: what every backend draws, so that a reported point is the
 * one that was evaluated. */
static inline void strata_sample_point(const strata_sample_job *job, const int *k, int64_t i,
                                       double *u, double *y)
{
  const int dim = job->problem->dim;
  const double invM = 1.0 / job->strat->M;
  strata_sample_uniforms(job->seed, job->iteration, (uint64_t)i, dim, u);
  for (int d = 0; d < dim; d++) y[d] = (k[d] + u[d]) * invM;
}

/* The point y in (0,1)^dim of global sample i, computed alone: for messages
 * about one sample, not for sampling. */
void strata_backend_point(const strata_sample_job *job, int64_t i, double *y);

/* Names the first non-finite value: shared by the backends so the user sees
 * one message whatever ran the sample. */
int strata_backend_report_nonfinite(const strata_sample_job *job, double fx,
                                    int64_t index, const double *x);
#ifdef __cplusplus
}
#endif
#endif
