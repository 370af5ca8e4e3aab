/* The narrow interface between the algorithm and whatever evaluates samples
 * (CPU threads here, CUDA in gpu/).  A backend samples one iteration for a
 * range of hypercubes and, for the stratified estimate, reduces what it
 * sampled to the few numbers the driver needs; then it adapts the map and
 * the allocation where they live.  A GPU thus keeps an iteration's sums,
 * the map and the allocation on the device: the driver sees the estimate,
 * and the full state only when it asks (pull).  The arithmetic both sides
 * share is in hcube.h, maplookup.h, maprefine.h and shares.h. */
#ifndef STRATA_BACKEND_H
#define STRATA_BACKEND_H
#include "map.h"
#include "philox.h"
#include "qmc.h"
#include "split.h"
#include "strat.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const strata_problem *problem;
  const strata_map *map;
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
  /* A power of two J f is multiplied by before it is squared for the map's
   * sums (1 but after an iteration whose estimate was below sqrt(DBL_MIN),
   * whose samples' squares would underflow to 0 and teach the map nothing:
   * run.c's map_scale). */
  double map_scale;
  /* Outputs: per hypercube sums of J f - shift and its square for h in
   * [h0, h1); with adapt, per axis and increment the summed (J f)^2 and
   * sample counts (dim * ninc each), zeroed by the caller, who leaves them
   * alone where the backend keeps them (local, below). */
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
  /* Stratified iterations: part asks the backend for the estimate's part of
   * hypercubes [h0, h1) (STRATA_EST_PART(ncomp) doubles, zeroed by the
   * caller, estimate.h) instead of the cells' sums in s1, s2, c1, c2, which
   * it then uses as it likes.  With level as well, the levels of the shares
   * of those hypercubes (strata_strat_levels) for the next allocation. */
  double *part;
  double *level;
  /* The only rank: the map sums and the levels are nobody else's, so a
   * backend that can adapt where it sampled keeps them there and leaves
   * wsum, wcount and level alone. */
  int local;
  /* With adapt, part and local: the map's damping, for a backend that
   * adapts where it sampled in the same pass (strata_adapt_job then finds
   * the work done).  The allocation moves when level is set. */
  double alpha;
  /* Several ranks whose backends exchange themselves (exchanges, below):
   * this caller samples [i0, i1) of the iteration's samples, its part of
   * split, which may begin and end inside hypercubes h0 and h1 - 1, and
   * part returns the estimate of all ranks; adapting, the map and the
   * allocation are made in the same pass, as with local. */
  int exchange;
  const strata_split *split;
  int64_t i0, i1;
  /* The next iteration, if the run goes on, is this job one iteration on,
   * with shifts next_shift and next_cshift (frozen map): a backend may
   * start it before this one's estimate is combined, and drops it if the
   * next call is another. */
  int next_alike;
  double next_shift;
  const double *next_cshift;
  /* Output with part: the first hypercube whose sums are not finite, or -1,
   * and the value near which they overflowed. */
  int64_t bad;
  double bad_near;
} strata_sample_job;

/* The adaptation after an iteration. */
typedef struct {
  strata_map *map;
  strata_strat *strat;
  double alpha;                /* the map's damping; 0: the map stays */
  int reallocate;              /* VEGAS+: a new allocation from the levels */
  const double *wsum, *wcount; /* every rank's summed map sums, unless kept by the
                                * backend (local in strata_sample_job) */
  const double *level;         /* every hypercube's level, unless kept by the backend */
  /* Ranks whose backends exchange (NULL otherwise): a backend that makes
   * the allocation on its device leaves it there and fills in how the
   * ranks split its samples, which is all the host then reads of it. */
  strata_split *split;
} strata_adapt_job;

typedef struct strata_backend strata_backend;
struct strata_backend {
  const char *name;
  void *self;
  /* Returns STRATA_OK, or an error code with strata_last_error() set (for a
   * non-finite integrand value: the point, iteration and sample index). */
  int (*sample)(strata_backend *b, strata_sample_job *job);
  /* Refines the map and reallocates; a backend that does so on its device
   * keeps the newer map and allocation there, and the host's copies fall
   * behind until pull.  The backend keeps the record of what it holds. */
  int (*adapt)(strata_backend *b, const strata_adapt_job *job);
  /* Brings whatever of map and s the backend holds newer copies of back
   * into them (nothing where it holds none), for whatever reads them on
   * the host; NULL where they never leave the host. */
  int (*pull)(strata_backend *b, strata_map *g, strata_strat *s);
  void (*free)(strata_backend *b);
  /* Set where the backend combines a stratified iteration with its peers
   * itself (its devices' own exchange): the run then splits the samples,
   * not the hypercubes, and leaves the exchange to it. */
  int exchanges;
};

/* What a backend that samples into host memory does with a stratified
 * job's sums (s1, s2, c1, c2 filled): the part of the estimate, the first
 * overflowing hypercube and the levels, as strata_sample_job asks. */
int strata_backend_host_part(strata_sample_job *job);
/* The adaptation on the host's map and allocation. */
int strata_backend_host_adapt(strata_backend *b, const strata_adapt_job *job);

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
