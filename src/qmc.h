/* Randomized quasi-Monte Carlo point sets: nrand independent randomizations
 * of one base point set of N = 2^log2n points, redrawn every iteration.
 *
 * Samples are numbered as everywhere else in strata: iteration by iteration,
 * global index i = r * N + j for point j of randomization r.  A point is a
 * pure function of (seed, iteration, i), so any split of the indices over
 * threads, GPUs and ranks draws the same points.
 *
 * Sobol' (Joe-Kuo direction numbers, the set cuRAND calls JOEKUO6): each
 * randomization applies a random linear matrix scramble and a random digital
 * shift (Matousek), so every point is uniform on the cube and the nets stay
 * nets.  Lattice (a rule for the job's N, built at start by a
 * component-by-component search, see qmc.c): each randomization adds a
 * uniform random shift modulo 1.  Either way the nrand
 * estimates are independent and unbiased, and their spread is the error. */
#ifndef STRATA_QMC_H
#define STRATA_QMC_H
#include <stdint.h>

#include "qmc_points.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The largest lattice built here (j * z must stay within 64 bits). */
#define STRATA_LATTICE_MAX_LOG2N 30

typedef struct {
  strata_qmc_rule rule;
  int dim, nrand, log2n;   /* N = 2^log2n points per randomization */
  uint64_t *dirs;          /* sobol: [nrand][dim][64] scrambled direction numbers */
  uint64_t *dshift;        /* sobol: [nrand][dim] digital shifts */
  double *shift;           /* lattice: [nrand][dim] shifts in [0,1) */
  uint32_t z[STRATA_MAX_DIM]; /* lattice: generating vector */
  uint64_t generation;     /* a new stamp (stamp.h) with every randomization */
} strata_qmc;

/* Points per randomization for a budget: the power of two nearest (on a log
 * scale) to neval / nrand, at least 2. */
int strata_qmc_log2n(int64_t neval, int nrand);

/* NULL and strata_last_error() set when the rule cannot serve (a lattice
 * beyond 2^30 points). */
strata_qmc *strata_qmc_alloc(strata_qmc_rule rule, int dim, int nrand, int log2n);
void strata_qmc_free(strata_qmc *q);

/* Draws the randomizations of one iteration from (seed, iteration). */
void strata_qmc_randomize(strata_qmc *q, uint64_t seed, uint32_t iteration);

/* Walks consecutive points cheaply; a jump costs one skip-ahead. */
typedef struct {
  int64_t next;            /* index the state holds, or -1 */
  uint64_t x[STRATA_MAX_DIM];
} strata_qmc_cursor;

static inline void strata_qmc_point(const strata_qmc *q, strata_qmc_cursor *c, int64_t i,
                                    double *y)
{
  const int dim = q->dim;
  const int64_t r = i >> q->log2n;
  const uint64_t j = (uint64_t)i & ((UINT64_C(1) << q->log2n) - 1);
  if (q->rule == STRATA_QMC_LATTICE) {
    for (int d = 0; d < dim; d++)
      y[d] = strata_lattice_coord(j, q->z[d], q->log2n, q->shift[r * dim + d]);
    return;
  }
  const uint64_t *v = q->dirs + (size_t)r * (size_t)dim * 64;
  if (i != c->next || j == 0) {
    for (int d = 0; d < dim; d++)
      c->x[d] = q->dshift[r * dim + d] ^ strata_sobol_digits(v + 64 * d, j);
  } else {
    const int k = strata_sobol_step(j);
    for (int d = 0; d < dim; d++) c->x[d] ^= v[64 * d + k];
  }
  c->next = i + 1;
  for (int d = 0; d < dim; d++) y[d] = strata_qmc_unit(c->x[d]);
}

/* The unscrambled Sobol' direction numbers of axis d (0-based), 64 of them,
 * as cuRAND's curandGetDirectionVectors64(JOEKUO6) gives them. */
void strata_sobol_directions(int d, uint64_t v[64]);

const char *strata_qmc_rule_name(strata_qmc_rule r);
#ifdef __cplusplus
}
#endif
#endif
