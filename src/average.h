/* The running average of a run's iterations (Lepage's RAvg): the history
 * of estimates, which of them the average keeps (skip, and restarts when a
 * map still adapting disagrees with the iterations before it), the errors
 * each kept one is weighed by, and the average's chi^2 and Q, per
 * component, with the averages' covariance. */
#ifndef STRATA_AVERAGE_H
#define STRATA_AVERAGE_H
#include <stdint.h>

#include "stats.h"
#include "strata/strata.h"

typedef struct {
  double integral, sigma;
  int64_t neval;
  double time_s;            /* wall time: logs rebuilt from a checkpoint keep it */
} strata_itn_record;

/* A vector integrand's iteration k in strata_ravg.chist and in a saved
 * state: the ncomp estimates, then their ncomp x ncomp covariance
 * (row-major), STRATA_CHIST_ROW(ncomp) doubles. */
#define STRATA_CHIST_ROW(ncomp) ((size_t)(ncomp) * (size_t)((ncomp) + 1))

/* What an iteration's estimate can vouch for, in rising order.  sigma = 0
 * is an exact answer for an integrand constant under the map; it also
 * comes out when every sample was exactly zero (the integrand is 0, or a
 * peak was not found yet), and when the samples were so small (1e-160)
 * that their squares underflowed: then the error is unknown, not 0. */
enum { STRATA_ITN_TINY = 1, STRATA_ITN_ZERO = 2, STRATA_ITN_MEASURED = 3 };

typedef struct {
  int ncomp;                /* 1 for a scalar integrand */
  int maxiter;
  int nadapt;               /* iterations [0, nadapt) adapt the map */
  int qmc;                  /* nonzero: the iterations after those draw QMC points */
  int skip;                 /* the first iteration an average may keep */
  int n;                    /* iterations in the history */
  int first_kept;           /* first iteration in the average (skip, or a restart) */
  int finer;                /* the run has a finer stratification for its frozen map
                             * (strata_ravg_finer) */
  /* [maxiter]; for a vector integrand integral and sigma are component 0's. */
  strata_itn_record *hist;
  double *chist;            /* vector integrands: [maxiter][STRATA_CHIST_ROW]; else NULL */
  double *cweights;         /* [ncomp][maxiter]: the errors each component's average weighs
                             * the kept iterations by, from first_kept on (weight_errors);
                             * the averages' covariances reuse them */
  strata_average *cavg;     /* [ncomp]: each component's average */
  double *cov;              /* [ncomp][ncomp]: covariance of the averages */
  double *cjump;            /* [ncomp]: each component's jump at a restart on the newest
                             * iteration, else 0 (strata_ravg_update) */
  /* More than STRATA_MAX_COMP components: each iteration's sum of the
   * components' estimates and its variance (the sum of the covariance),
   * [maxiter][2], for the first nsum iterations; else NULL.  All
   * components weigh their iterations alike, by the sum's weights. */
  double *csum;
  int nsum;
} strata_ravg;

/* The component index that stands for the sum of many components (csum). */
#define STRATA_RAVG_SUM (-1)

/* An empty history for maxiter iterations of ncomp components, the first
 * nadapt adapting the map; qmc: the others draw QMC points.  STRATA_OK or
 * STRATA_ENOMEM (nothing reported). */
int strata_ravg_init(strata_ravg *ra, int ncomp, int maxiter, int nadapt, int qmc, int skip);
void strata_ravg_free(strata_ravg *ra);
/* Forgets restarts: the average keeps every iteration from skip on. */
void strata_ravg_reset(strata_ravg *ra);

/* The class of an estimate integral +- sigma (STRATA_ITN_*). */
int strata_ravg_class(double integral, double sigma);
/* Whether iteration k adapts the map. */
int strata_ravg_adapting(const strata_ravg *ra, int k);

/* A map that still improves goes on adapting past the adapting iterations
 * a job asks for, where it asks for at least STRATA_ADAPT_MORE_AFTER: a
 * sharp integrand's map (the 6-D product of Lorentzians of width 0.02)
 * cuts the error per iteration tenfold from iteration 10 to 30 where a
 * frozen one holds it, while a smooth one's map has settled by iteration
 * 20 and, adapting on, lets it rise (doc/design.md, "When the map
 * freezes").  So after the last adapting iteration n, with n at least
 * STRATA_ADAPT_MORE_AFTER and below maxiter, the map adapts one more
 * iteration where the error per sample (sigma x sqrt(neval)) of
 * iterations n - W + 1 .. n, summed, is below STRATA_ADAPT_MORE_FALL times
 * that of the W iterations before (W = STRATA_ADAPT_MORE_WINDOW).  The
 * rule reads the history alone, so every rank decides alike and a resumed
 * run decides as the uninterrupted one did; a run of
 * STRATA_ADAPT_MORE_AFTER iterations or fewer is what it was without it.
 * A vector integrand's map follows one component and keeps its count. */
#define STRATA_ADAPT_MORE_AFTER 20
#define STRATA_ADAPT_MORE_WINDOW 3
#define STRATA_ADAPT_MORE_FALL 0.85
/* Applies the rule to the newest iteration, hist[n - 1]: nadapt grows by
 * one where it says so.  Returns whether it did. */
int strata_ravg_adapt_more(strata_ravg *ra);
/* The adapting iterations of a restored history: nadapt as the rule grew
 * it over iterations 1 .. n, from the job's nadapt. */
void strata_ravg_adapt_replay(strata_ravg *ra, int nadapt);
/* Long runs stratify finer once the map has frozen (doc/algorithm.md,
 * "Long runs stratify finer"): where the map froze after
 * STRATA_ADAPT_MORE_AFTER adapting iterations or more, the
 * STRATA_FINER_TRIAL iterations from nadapt on sample the run's finer
 * stratification (finer set), whose allocation adapts after each; the
 * later ones keep it where the trial's last iteration's error per sample
 * is below STRATA_FINER_KEEP times the mean of the W adapting iterations'
 * before the freeze (W = STRATA_ADAPT_MORE_WINDOW), and go back to the
 * coarse one otherwise.  The trial's first iteration samples the
 * allocation carried over from the coarse one, worse than the coarse
 * stratification on the two peaks in 8-D where the adapted finer one is
 * better: its second decides.  Every iteration's estimate is unbiased
 * either way; the trial keeps the coarse stratification where VEGAS+'s
 * allocation among few hypercubes does more than their number (a ridge
 * along the diagonal).  The rule reads the history alone, as
 * strata_ravg_adapt_more does: a resumed run decides as the uninterrupted
 * one did, and a run of STRATA_ADAPT_MORE_AFTER iterations or fewer is
 * what it was without it.  Whether iteration k (nadapt decided for it)
 * samples the finer stratification; 0 for iterations after a trial not
 * yet recorded. */
#define STRATA_FINER_KEEP 1.0
#define STRATA_FINER_TRIAL 2
int strata_ravg_finer(const strata_ravg *ra, int k);
/* Component c of iteration k (or their sum, STRATA_RAVG_SUM, for many
 * components): its estimate, and its error in *sigma. */
double strata_ravg_value(const strata_ravg *ra, int k, int c, double *sigma);
/* Iteration k's covariance of components a and b (vector integrands). */
double strata_ravg_cov(const strata_ravg *ra, int k, int a, int b);
/* The best class (STRATA_ITN_*) among iterations [from, n) of component c. */
int strata_ravg_best(const strata_ravg *ra, int c, int from);
/* Whether iteration k of component c is in the current average. */
int strata_ravg_kept(const strata_ravg *ra, int k, int c);
/* How many iterations component c's average keeps. */
int strata_ravg_nkept(const strata_ravg *ra, int c);
/* Whether iteration k draws pseudo-random points of a frozen map (or plain
 * MC's): such iterations are alike but for their random numbers, and
 * their stratification (strata_ravg_finer). */
int strata_ravg_frozen_alike(const strata_ravg *ra, int k);
/* Averages the kept iterations [first_kept, n). */
void strata_ravg_average(strata_ravg *ra);
/* Component c's average of every iteration, skip and restarts ignored
 * (a run stopped inside its warm-up). */
void strata_ravg_all(const strata_ravg *ra, int c, strata_average *out);
/* Takes in the newest iteration, hist[n - 1] (and its chist row): the
 * average, restarted on it where a map still adapting (adapt) disagrees
 * with the iterations before it.  Returns whether it restarted. */
int strata_ravg_update(strata_ravg *ra, int adapt);
#endif
