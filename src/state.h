/* A run's state as it is saved and restored (strata_run_state_get and
 * strata_run_restore, run.h): what checkpoints serialise without knowing
 * the run. */
#ifndef STRATA_STATE_H
#define STRATA_STATE_H
#include <stdint.h>

#include "average.h"

/* Everything needed to continue a run exactly where it stopped.  A sample's
 * random numbers depend only on (seed, iteration, sample index), and the
 * next iteration's shift is the last iteration's estimate, so the map, the
 * allocation and the history are the whole state (doc/algorithm.md). */
typedef struct {
  int itn;                        /* iterations done; the next draws as iteration itn */
  int64_t neval_total;
  double time_s;
  int naxes, ninc;                /* the map: naxes * (ninc + 1) unit edges */
  const double *edges;
  int64_t nhcube;
  const int64_t *nh;              /* the allocation for the next iteration */
  const strata_itn_record *hist;  /* [itn] */
  /* Vector integrands: ncomp > 1 and comp_hist [itn][STRATA_CHIST_ROW(ncomp)]
   * (hist then holds component 0).  Scalar: ncomp 0 or 1, comp_hist NULL. */
  int ncomp;
  const double *comp_hist;
  /* The peak search's and the channels' state (doc/peaks.md, "What is
   * reported"): npeaks doubles, opaque to the checkpoint, which saves them
   * as they are and hands them back; 0 and NULL where the search is off. */
  size_t npeaks;
  const double *peaks;
  /* Whether the map went on adapting past adapt_iters while it improved
   * (average.h), which the restored run replays from hist; 0 for a state
   * saved by a strata without that rule, whose map froze at adapt_iters. */
  int adapt_more;
  /* Whether the run stratifies finer once its map is frozen (average.h,
   * strata_ravg_finer), which the restored run replays from hist; 0 for a
   * state saved by a strata without that rule, or a run without a finer
   * stratification. */
  int finer;
  /* Whether iterations that do not train the map draw packed uniforms
   * (plan.h's ubits); 0 for a state saved by a strata that drew 32 bits a
   * coordinate always, whose restored run goes on doing so. */
  int packed_uniforms;
  /* The finer stratification's allocation, nfine counts, once the run has
   * written one; 0 and NULL before. */
  int64_t nfine;
  const int64_t *fine_nh;
  /* What a saved state records for its readers, besides what continues the
   * run: filled by strata_run_state_get, not read by strata_run_restore. */
  uint64_t seed;
  int converged;
  const strata_ravg *ravg;        /* the running average of hist: its kept
                                   * iterations, its current value */
} strata_run_state;
#endif
