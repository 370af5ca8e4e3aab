#include "run.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "estimate.h"
#include "hash.h"
#include "lostpeak.h"
#include "stamp.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int vegas_mode(const strata_params *p)
{
  return p->mode != STRATA_MODE_PLAIN && p->mode != STRATA_MODE_QMC;
}

/* Iteration k (0-based) adapts the map and the allocation. */
static int adapting(const strata_run *r, int k)
{
  return vegas_mode(&r->params) && k < r->params.adapt_iters;
}

/* Iteration k draws QMC points: always in mode qmc, and once the map is
 * frozen with qmc_map. */
static int qmc_points(const strata_run *r, int k)
{
  return r->qmc && !adapting(r, k);
}

/* The cells iteration k samples. */
static const strata_strat *cells_of(const strata_run *r, int k)
{
  return qmc_points(r, k) && r->qcells ? r->qcells : r->strat;
}

/* The first iteration in the average: skip drops the ones made while the
 * map was still poor, which only the adapting modes have. */
static int first_kept(const strata_params *p)
{
  return vegas_mode(p) ? p->skip : 0;
}

/* Plain MC's batches: only there for threads and ranks to share the work
 * (the estimate pools them), so a few thousand samples each. */
static int64_t plain_batches(int64_t neval)
{
  int64_t n = neval / 4096;
  return n < 1 ? 1 : n > 1024 ? 1024 : n;
}

/* A QMC point set's blocks: cells of at least 4096 points, up to 256 per
 * randomization, so that threads and ranks can split one randomization. */
static strata_strat *qmc_cells(const strata_params *p, int dim, int log2n)
{
  int lb = log2n - 12;
  lb = lb < 0 ? 0 : lb > 8 ? 8 : lb;
  return strata_strat_alloc_cells(dim, (int64_t)p->nrand << lb, (int64_t)p->nrand << log2n);
}

/* The components' sums per cell (c1 and c2 of backend.h); none for a
 * scalar integrand, whose s1 and s2 say it all. */
static size_t comp_sums_per_cell(int ncomp)
{
  return ncomp > 1 ? (size_t)ncomp + (size_t)ncomp * (size_t)(ncomp + 1) / 2 : 0;
}

int strata_run_alloc(const strata_problem *pr, const strata_params *p,
                     strata_backend *be, strata_comm *comm, strata_run **out)
{
  *out = NULL;
  int rc = strata_problem_check(pr);
  if (rc == STRATA_OK) rc = strata_params_check(p);
  if (rc != STRATA_OK) return rc;
  strata_run *r = calloc(1, sizeof *r);
  if (!r) goto nomem;
  r->problem = *pr;
  r->params = *p;
  r->backend = be;
  r->comm = comm;
  /* The adapting iterations' neval trains the map (frozen ones do not). */
  const int ninc = strata_map_ninc_for(p->ninc, p->neval, pr->dim, p->max_nhcube);
  r->map = strata_map_alloc(pr->dim, ninc, p->mode == STRATA_MODE_VEGAS1D);
  /* With no adapting iteration every iteration is a frozen one. */
  const int64_t nfrozen = p->neval_frozen ? p->neval_frozen : p->neval;
  const int64_t nfirst = p->adapt_iters == 0 ? nfrozen : p->neval;
  if (p->mode == STRATA_MODE_QMC || (p->qmc_map && vegas_mode(p))) {
    int log2n = strata_qmc_log2n(nfrozen, p->nrand);
    r->qmc = strata_qmc_alloc(p->qmc, pr->dim, p->nrand, log2n);
    if (!r->qmc) {
      strata_run_free(r);
      return STRATA_EINVAL;
    }
    strata_strat **dst = p->mode == STRATA_MODE_QMC ? &r->strat : &r->qcells;
    if (!(*dst = qmc_cells(p, pr->dim, log2n))) goto nomem;
    if (strata_strat_total(*dst) > p->maxeval) {
      strata_run_free(r);
      return strata_error(STRATA_EINVAL, "maxeval = %lld is below one QMC iteration: %d "
                          "randomizations of 2^%d points", (long long)p->maxeval, p->nrand,
                          log2n);
    }
  }
  if (p->mode == STRATA_MODE_PLAIN)
    r->strat = strata_strat_alloc_cells(pr->dim, plain_batches(p->neval), p->neval);
  else if (vegas_mode(p))
    r->strat = strata_strat_alloc_even(pr->dim, nfirst, p->max_nhcube, p->beta,
                                       p->mode != STRATA_MODE_VEGAS);
  r->hist = calloc((size_t)p->maxiter, sizeof *r->hist);
  r->ncomp = pr->ncomp > 1 ? pr->ncomp : 1;
  r->cweights = calloc((size_t)p->maxiter * (size_t)r->ncomp, sizeof(double));
  if (!r->map || !r->strat || !r->hist || !r->cweights) goto nomem;
  if (r->ncomp > 1) {
    r->chist = calloc((size_t)p->maxiter * STRATA_CHIST_ROW(r->ncomp), sizeof(double));
    r->creport = calloc((size_t)p->maxiter * (size_t)r->ncomp *
                            (size_t)STRATA_COMP_ROW(r->ncomp), sizeof(double));
    if (!r->chist || !r->creport) goto nomem;
  }
  strata_map_init(r->map, pr->lower, pr->upper);
  size_t cells = (size_t)pr->dim * (size_t)r->map->ninc;
  int64_t ncell = r->strat->nhcube;
  if (r->qcells && r->qcells->nhcube > ncell) ncell = r->qcells->nhcube;
  r->buf = malloc(sizeof(double) * ((2 + comp_sums_per_cell(r->ncomp)) * (size_t)ncell +
                                    STRATA_EST_PART(r->ncomp) + 2 * cells));
  r->slices = malloc(sizeof(int64_t) * ((size_t)comm->size + 1));
  if (!r->buf || !r->slices) goto nomem;
  if (strata_strat_moves(r->strat) &&
      !(r->levels = malloc(sizeof(double) * (size_t)r->strat->nhcube)))
    goto nomem;
  if (comm->size > 1 && vegas_mode(p) && !(r->split = strata_split_alloc(comm->size)))
    goto nomem;
  r->first_kept = first_kept(p);
  *out = r;
  return STRATA_OK;
nomem:
  strata_run_free(r);
  return strata_error(STRATA_ENOMEM,
                      "out of memory setting up the integration (neval %lld, ninc %d)",
                      (long long)p->neval, p->ninc);
}

void strata_run_free(strata_run *r)
{
  if (!r) return;
  strata_map_free(r->map);
  strata_strat_free(r->strat);
  strata_strat_free(r->qcells);
  strata_qmc_free(r->qmc);
  free(r->buf);
  free(r->slices);
  strata_split_free(r->split);
  free(r->levels);
  free(r->hist);
  free(r->cweights);
  free(r->chist);
  free(r->creport);
  free(r);
}

/* Smallest h with start[h] >= i, of an allocation the host holds or the
 * even one. */
static int64_t lower_bound(const strata_strat *s, int64_t i)
{
  int64_t lo = 0, hi = s->nhcube;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (strata_strat_start_at(s, mid) < i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void strata_run_slice(const strata_strat *s, int rank, int size, int64_t *h0,
                      int64_t *h1)
{
  int64_t total = strata_strat_total(s);
  *h0 = rank == 0 ? 0 : lower_bound(s, (int64_t)((double)total * rank / size));
  *h1 = rank == size - 1 ? s->nhcube
                         : lower_bound(s, (int64_t)((double)total * (rank + 1) / size));
}

/* What an iteration's estimate can vouch for, in rising order.  sigma = 0
 * is an exact answer for an integrand constant under the map; it also
 * comes out when every sample was exactly zero (the integrand is 0, or a
 * peak was not found yet), and when the samples were so small (1e-160)
 * that their squares underflowed: then the error is unknown, not 0. */
enum { ITN_TINY = 1, ITN_ZERO = 2, ITN_MEASURED = 3 };

static int itn_class(double integral, double sigma)
{
  if (sigma > 0.0) return ITN_MEASURED;
  if (integral == 0.0) return ITN_ZERO;
  return fabs(integral) >= sqrt(DBL_MIN) ? ITN_MEASURED : ITN_TINY;
}

/* Component c of iteration k: its estimate, and its error in *sigma.  The
 * history holds component 0 (the only one of a scalar integrand), so every
 * rule below is written once, for any component. */
static double comp_value(const strata_run *r, int k, int c, double *sigma)
{
  if (c == 0) {
    *sigma = r->hist[k].sigma;
    return r->hist[k].integral;
  }
  const double *row = r->chist + (size_t)k * STRATA_CHIST_ROW(r->ncomp);
  *sigma = sqrt(row[r->ncomp + c * r->ncomp + c]);
  return row[c];
}

/* This iteration's covariance of components a and b (vector integrands). */
static double comp_cov(const strata_run *r, int k, int a, int b)
{
  return r->chist[(size_t)k * STRATA_CHIST_ROW(r->ncomp) + (size_t)(r->ncomp + a * r->ncomp + b)];
}

/* Every iteration is an estimate; which ones an average takes is the
 * average's choice: the best class among iterations [from, itn) of
 * component c.  One of zeros says nothing against measured ones, but a run
 * of only zeros is exactly 0. */
static int comp_class(const strata_run *r, int c, int from)
{
  int best = 0;
  for (int k = from; k < r->itn; k++) {
    double s, v = comp_value(r, k, c, &s);
    int cl = itn_class(v, s);
    if (cl > best) best = cl;
  }
  return best;
}

/* Whether iteration k of component c is in the current average. */
static int comp_kept(const strata_run *r, int k, int c)
{
  double s, v = comp_value(r, k, c, &s);
  return k >= r->first_kept && k < r->itn && itn_class(v, s) == comp_class(r, c, r->first_kept);
}

static int kept_count_comp(const strata_run *r, int c)
{
  int n = 0, best = comp_class(r, c, r->first_kept);
  for (int k = r->first_kept; k < r->itn; k++) {
    double s, v = comp_value(r, k, c, &s);
    n += itn_class(v, s) == best;
  }
  return n;
}

/* Iteration k's error if it were iteration j's size: errors go as
 * 1/sqrt(neval). */
static double error_at(const strata_run *r, int k, int c, int j)
{
  double s;
  comp_value(r, k, c, &s);
  return s * sqrt((double)r->hist[k].neval / (double)r->hist[j].neval);
}

/* Whether iteration k draws pseudo-random points of a frozen map (or plain
 * MC's): such iterations are alike but for their random numbers. */
static int frozen_alike(const strata_run *r, int k)
{
  return !adapting(r, k) && !qmc_points(r, k);
}

/* Whether iteration j can lend its error to a neighbour in the average of
 * component c over [from, itn): kept, adapting, measured. */
static int lends_error(const strata_run *r, int c, int from, int best, int j)
{
  if (j < from || j >= r->itn || !adapting(r, j)) return 0;
  double sj, vj = comp_value(r, j, c, &sj);
  return sj > 0.0 && itn_class(vj, sj) == best;
}

/* The error an adapting iteration k is weighed by, from its neighbours
 * alone.  While the map improves, errors fall from one iteration to the
 * next: one neighbour's error gave each iteration the weight of a worse
 * map (the last, best one weighed as the one before it) and the first the
 * weight of a better, so in a run of few iterations the best counted for
 * too little (doc/algorithm.md, "Combining iterations").  Between two
 * neighbours: the geometric mean of their errors; at either end of the
 * run: the nearest one's, carried one step along the trend of the two
 * nearest, sqrt of their ratio, bounded to a factor 2; with one neighbour
 * its error; with none, k's own. */
static double neighbour_error(const strata_run *r, int c, int from, int best, int k, double own)
{
  const int before = lends_error(r, c, from, best, k - 1),
            after = lends_error(r, c, from, best, k + 1);
  if (before && after)
    return sqrt(error_at(r, k - 1, c, k)) * sqrt(error_at(r, k + 1, c, k));
  if (!before && !after) return own;
  const int step = before ? -1 : 1;
  const double near = error_at(r, k + step, c, k);
  if (!lends_error(r, c, from, best, k + 2 * step)) return near;
  const double far = error_at(r, k + 2 * step, c, k),
               trend = fmin(fmax(sqrt(near / far), 0.5), 2.0);
  const double e = near * trend;
  return isfinite(e) ? e : near;
}

/* The errors by which the measured iterations [from, itn) of component c,
 * of class best, are weighed in their average: w[k - from], 0 for an
 * iteration not in the average.  An iteration whose samples fell short of
 * a peak comes out low with a small error: weighed by its own error it
 * pulls the average down (a vector integrand's component that the map does
 * not follow, and small budgets: doc/algorithm.md, "Combining iterations").
 * So the weight knows nothing of the iteration's
 * own samples, but to lower it:
 * - an adapting iteration takes its neighbours' errors (consecutive maps are
 *   nearly the same; neighbour_error says how), and its own only when alone;
 *   but no less than 1/STRATA_LEND_SPAN of its own: an iteration a hundred
 *   times less precise than its neighbours was not made by a like map (the
 *   first iteration of a constant integrand, whose unshifted sums leave a
 *   variance of rounding, 2e-11 beside the shifted ones' 1e-16, made the
 *   average's error 1e-11), and its own error can only lower its weight;
 * - iterations of the frozen map (and plain MC's) are alike, and weigh
 *   alike: by their pooled error, sqrt(mean of sigma_j^2 neval_j / neval_k);
 * - QMC points keep their own: a randomized rule may integrate a smooth
 *   component exactly in one iteration (1e-16 beside 1e-9), their errors
 *   come from the scatter of independent randomizations, and a neighbour
 *   or pool would carry rounding noise into the weights. */
#define STRATA_LEND_SPAN 100.0

static void weight_errors(const strata_run *r, int c, int from, int best, double *w)
{
  /* The pooled error of one sample, sqrt(mean of sigma_j^2 neval_j), in
   * units of the first one's, so that no square over- or underflows for
   * any finite errors of like size. */
  double ref = 0.0, pool = 0.0;
  int m = 0;
  for (int j = from; j < r->itn; j++) {
    double sj, vj = comp_value(r, j, c, &sj);
    if (!frozen_alike(r, j) || !(sj > 0.0) || itn_class(vj, sj) != best) continue;
    const double e = sj * sqrt((double)r->hist[j].neval);
    if (m == 0) ref = e;
    pool += (e / ref) * (e / ref);
    m++;
  }
  const double per_sample = m > 0 ? ref * sqrt(pool / m) : 0.0;
  for (int k = from; k < r->itn; k++) {
    double s, v = comp_value(r, k, c, &s);
    double *wk = &w[k - from];
    if (itn_class(v, s) != best) *wk = 0.0;
    else if (!(s > 0.0) || qmc_points(r, k)) *wk = s;
    else if (!adapting(r, k)) *wk = per_sample / sqrt((double)r->hist[k].neval);
    else *wk = fmax(neighbour_error(r, c, from, best, k, s), s / STRATA_LEND_SPAN);
  }
}

/* Measured iterations (and exact ones) are averaged by the errors
 * weight_errors gives, which it leaves in w[0 .. itn - from); with none,
 * zeros give 0 +- 0; with neither, tiny estimates whose errors underflowed
 * give their mean, with the error from their scatter. */
static void average_from(const strata_run *r, int c, int from, double *w, strata_average *out)
{
  int n = 0, span = r->itn - from, best = comp_class(r, c, from);
  double I[span > 0 ? span : 1], sig[span > 0 ? span : 1], wsig[span > 0 ? span : 1];
  weight_errors(r, c, from, best, w);
  for (int k = from; k < r->itn; k++) {
    double s, v = comp_value(r, k, c, &s);
    if (itn_class(v, s) == best) {
      I[n] = v;
      sig[n] = s;
      wsig[n] = w[k - from];
      n++;
    }
  }
  if (best == ITN_TINY) strata_stats_scatter(I, n, out);
  else strata_stats_average_by(I, sig, wsig, n, out);
}

static double *comp_weights(const strata_run *r, int c)
{
  return r->cweights + (size_t)c * (size_t)r->params.maxiter;
}

/* The covariance of the averages of components a and b: the iterations'
 * covariances enter with the product of the two averages' weights, as
 * average() left them.  An iteration that does not count for a component
 * has weight 0 there. */
static double average_cov(const strata_run *r, int a, int b)
{
  const strata_average *A = &r->cavg[a], *B = &r->cavg[b];
  if (!(A->sigma > 0.0) || !(B->sigma > 0.0))
    return isnan(A->sigma) || isnan(B->sigma) ? NAN : 0.0; /* no data, or exact */
  if (a == b) return A->sigma * A->sigma;
  int span = r->itn - r->first_kept, n = 0;
  double cab[span > 0 ? span : 1];
  for (int k = r->first_kept; k < r->itn; k++, n++) cab[n] = comp_cov(r, k, a, b);
  return strata_stats_average_cov(comp_weights(r, a), comp_weights(r, b), cab, n);
}

/* An average that restarted on the newest iteration stands on that one
 * alone, made with a map that was still moving: nothing has checked it yet
 * (no chi^2 for one iteration), and the jump from the average it replaced
 * is the size of the map's last step.  Its error carries that jump, so
 * that a run ending there (fB d=9, the peak found in the last iteration:
 * 0.55(11) after 0.14(13) and 0.40(30)) does not report the climb as a
 * result.  Such an average is never claimed converged (comp_converged
 * wants two iterations).  The next iteration drops the jump if it agrees
 * with the average without climbing above it; one that climbs again
 * carries a share of its own step (update_average). */
static void average(strata_run *r)
{
  for (int c = 0; c < r->ncomp; c++) {
    average_from(r, c, r->first_kept, comp_weights(r, c), &r->cavg[c]);
    if (r->cjump[c] != 0.0) r->cavg[c].sigma = hypot(r->cavg[c].sigma, r->cjump[c]);
  }
  r->avg = r->cavg[0];
  if (r->ncomp > 1)
    for (int a = 0; a < r->ncomp; a++)
      for (int b = 0; b < r->ncomp; b++) r->cavg_cov[a * r->ncomp + b] = average_cov(r, a, b);
}

/* While the map still adapts, an iteration that disagrees with the average
 * beyond reasonable chance (Q < 1e-3) shows that the kept iterations were
 * made with a map that had not found all of the integrand: a part the
 * samples missed is missing from their estimates, and from their errors.
 * Those small errors are not to be trusted, so the average restarts from
 * the newest iteration.  Unless the newest is the one nearest 0 of all: then
 * it is the iteration that missed a part (its samples fell short of a peak
 * the map already follows), and it is kept beside the others, not followed,
 * so that a single low iteration does not throw away the good ones before
 * it.  The newest farthest from 0 of all is the other way round: a map that
 * has not yet found all of a peak reads low, so an iteration well above
 * every kept one (climbs) is what a climbing map looks like, and weaker
 * evidence (Q < 0.02) restarts the average there (fB d=9 at 1e7 per
 * iteration: 0.66(11), 0.943(44), 0.984(11) averaged to 0.83(5), 3.5 sigma
 * low).  A climb by a factor STRATA_CLIMB_RATIO restarts it whatever chi^2
 * says: an iteration that caught a peak with few samples has an error as
 * large as its estimate, so chi^2 cannot see that 1.2(4) disagrees with
 * 2e-7(2e-7), 6e-5(3e-5) and 0.026(15) before it (fB d=9, where those
 * kept the average at 6e-6); but an estimate of a one-signed integrand
 * exceeds 20 times its mean with a probability below 1/20 (Markov's
 * inequality), so such a rise says that the iterations before it had not
 * found the integral.  Once the map is frozen no restart happens: a
 * disagreement then is reported, not hidden. */
#define STRATA_RESTART_Q 1e-3
#define STRATA_CLIMB_Q 0.02
#define STRATA_CLIMB_RATIO 20.0

/* Whether the newest iteration of component c is nearer 0 than every kept
 * one (side -1), or farther (side +1). */
static int newest_beyond_kept(const strata_run *r, int c, int side)
{
  const int last = r->itn - 1, best = comp_class(r, c, r->first_kept);
  double s, v = comp_value(r, last, c, &s);
  for (int k = r->first_kept; k < last; k++) {
    double sk, vk = comp_value(r, k, c, &sk);
    if (itn_class(vk, sk) == best && !(side * (fabs(v) - fabs(vk)) > 0.0)) return 0;
  }
  return 1;
}

/* A climb is a rise above every kept iteration by more than STRATA_CLIMB_RISE
 * of the average before it: finding more of a peak moves the estimate by
 * percents, while a map that has settled moves it by its errors, and
 * without the bound a settled map's chance rise restarts the average and
 * throws good iterations away (doc/benchmarks.md, R28, "The climb's 1%
 * bound"). */
#define STRATA_CLIMB_RISE 0.01

static int climbs(const strata_run *r, int c, double before)
{
  double s, v = comp_value(r, r->itn - 1, c, &s);
  return newest_beyond_kept(r, c, 1) && fabs(v) - fabs(before) > STRATA_CLIMB_RISE * fabs(before);
}

/* Any component that disagrees so tells that the map had not found the
 * integrand; all components keep one set of iterations, so that the
 * covariance of their averages stays defined.  before[c]: component c's
 * average without the newest iteration; climb[c]: whether the newest
 * climbs (climbs, with at least two kept iterations). */
static int disagrees(const strata_run *r, const double *before, const int *climb)
{
  for (int c = 0; c < r->ncomp; c++) {
    if (kept_count_comp(r, c) < 2 || newest_beyond_kept(r, c, -1)) continue;
    double s, v = comp_value(r, r->itn - 1, c, &s);
    /* (Signs compared, not the product taken: 1e-200 times 1e-150 is 0.) */
    const int same_sign = v != 0.0 && before[c] != 0.0 && !signbit(v) == !signbit(before[c]);
    if (climb[c] && same_sign && fabs(v) >= STRATA_CLIMB_RATIO * fabs(before[c])) return 1;
    if (r->cavg[c].q < (climb[c] ? STRATA_CLIMB_Q : STRATA_RESTART_Q)) return 1;
  }
  return 0;
}

/* After a restart the map may go on climbing: the iterations that follow
 * agree with the one it restarted on (their errors leave room) while each
 * rises above all before it, and their average, still short of the peak,
 * claims an error that knows nothing of the part not yet found (fB d=9:
 * 0.68(11) then 0.930(87) averaged to 0.781(72)).  While every iteration
 * since the restart climbs, the average's error carries STRATA_CLIMB_CARRY
 * of the last step (the newest iteration less the average before it).  A
 * share, not the whole step: the average's own error already covers part
 * of the shortfall, and a whole step made the error bars too wide
 * (doc/algorithm.md, "A climbing map"). */
#define STRATA_CLIMB_CARRY 0.3

/* What component c's error carries of the newest iteration's step, which
 * climbs, while it climbs on from a restart (cjump nonzero: the iteration
 * before it restarted or climbed); 0 otherwise. */
static double climb_carry(const strata_run *r, int c, double before)
{
  if (r->cjump[c] == 0.0) return 0.0;
  double s, step = comp_value(r, r->itn - 1, c, &s) - before;
  return isfinite(step) ? STRATA_CLIMB_CARRY * step : 0.0;
}

/* cavg holds the average of the iterations before the newest when this
 * runs: the one a restart replaces.  The average restarted on the newest
 * iteration is that iteration's estimate.  A carry is set before the
 * average is taken (nothing it depends on comes from the average, and
 * disagrees reads only Q, which the carry leaves alone); a restart
 * replaces it by the jump. */
static int update_average(strata_run *r, int adapt)
{
  double before[STRATA_MAX_COMP];
  int climb[STRATA_MAX_COMP];
  const int may_restart = adapt && r->itn - 1 > r->first_kept;
  for (int c = 0; c < r->ncomp; c++) {
    before[c] = r->cavg[c].mean;
    /* Read once for the carry and the restart: neither the average nor
     * the carry changes what it reads. */
    climb[c] = may_restart && kept_count_comp(r, c) >= 2 && climbs(r, c, before[c]);
    r->cjump[c] = climb[c] ? climb_carry(r, c, before[c]) : 0.0;
  }
  average(r);
  if (!(may_restart && disagrees(r, before, climb))) return 0;
  r->first_kept = r->itn - 1;
  for (int c = 0; c < r->ncomp; c++) {
    double s, jump = comp_value(r, r->itn - 1, c, &s) - before[c];
    r->cjump[c] = isfinite(jump) ? jump : 0.0;
  }
  average(r);
  return 1;
}

/* An error of 0 is the truth only for a constant integrand.  0 +- 0 from
 * zeros alone meets any epsrel, yet a peak not found yet (fB's first
 * iterations) looks the same: only epsabs, the user's word that a small
 * enough answer is an answer, makes it one.  Beside a nonzero average it
 * needs every kept iteration to give that average, to rounding; otherwise
 * a variance underflowed, and no error is known.  Below sqrt(DBL_MIN) equal
 * iterations prove nothing: subnormal values are so coarse that unrelated
 * estimates coincide (fB's far tails gave 4.13e-320 five times over). */
static int zero_error_trusted(const strata_run *r, int c)
{
  const strata_average *a = &r->cavg[c];
  if (!(a->sigma == 0.0)) return 1;
  if (a->mean == 0.0) return r->params.epsabs > 0.0;
  if (fabs(a->mean) < sqrt(DBL_MIN)) return 0;
  for (int k = 0; k < r->itn; k++) {
    double sg;
    if (comp_kept(r, k, c) && fabs(comp_value(r, k, c, &sg) - a->mean) > 1e-13 * fabs(a->mean))
      return 0;
  }
  return 1;
}

/* One component's stopping rule: enough agreeing iterations, and an error
 * within max(epsrel |average|, epsabs) (a tolerance of 0 is off) that can
 * be trusted. */
static int comp_converged(const strata_run *r, int c)
{
  const strata_params *p = &r->params;
  const strata_average *a = &r->cavg[c];
  if (kept_count_comp(r, c) < 2) return 0;
  if (!(a->q >= p->min_q)) return 0;
  double s = a->sigma;
  return ((p->epsrel > 0.0 && s <= p->epsrel * fabs(a->mean)) ||
          (p->epsabs > 0.0 && s <= p->epsabs)) &&
         zero_error_trusted(r, c);
}

/* The iterations of component c that the average leaves out (the warm-up,
 * and those before a restart) against it (lostpeak.c): the adapting ones
 * of the average's class, measured.  Only an average of two or more kept
 * iterations is a claim to test. */
static int comp_lost(const strata_run *r, int c, strata_lost *out)
{
  const int n = r->first_kept > 0 ? r->first_kept : 1, best = comp_class(r, c, r->first_kept);
  double I[n], s[n];
  int itn[n], m = 0;
  for (int k = 0; k < r->first_kept && k < r->itn; k++) {
    double sk, vk = comp_value(r, k, c, &sk);
    if (!adapting(r, k) || !(sk > 0.0) || itn_class(vk, sk) != best) continue;
    I[m] = vk;
    s[m] = sk;
    itn[m++] = k + 1;
  }
  if (kept_count_comp(r, c) < 2 || best != ITN_MEASURED) m = 0;
  return strata_lost_check(I, s, itn, m, r->cavg[c].mean, r->cavg[c].sigma, out);
}

/* The component with the strongest evidence of a lost part, in *out;
 * nonzero when any has it. */
static int run_lost(const strata_run *r, strata_lost *out)
{
  int any = 0;
  out->z = 0.0;
  out->itn = 0;
  for (int c = 0; c < r->ncomp; c++) {
    strata_lost l;
    const int lost = comp_lost(r, c, &l);
    if ((lost && !any) || (lost == any && l.z > out->z)) *out = l;
    any |= lost;
  }
  return any;
}

/* A stratification too coarse to show a part of the integrand that the
 * map lost (lostpeak.c): the samples per iteration that make it fine
 * enough; 0 where it is, where the map does not adapt, or where every
 * component is exact (a constant's error of 0 is no claim on the map). */
static double run_thin(const strata_run *r)
{
  const strata_params *p = &r->params;
  if (!vegas_mode(p) || p->adapt_iters <= 0 || !(p->alpha > 0.0)) return 0.0;
  int exact = 1;
  for (int c = 0; c < r->ncomp; c++) exact &= r->cavg[c].sigma == 0.0;
  return exact ? 0.0 : strata_lost_thin(r->problem.dim, r->strat->M, p->max_nhcube);
}

static int check_converged(const strata_run *r)
{
  for (int c = 0; c < r->ncomp; c++)
    if (!comp_converged(r, c)) return 0;
  strata_lost l;
  return !run_lost(r, &l) && !(run_thin(r) > 0.0);
}

/* Component c's target: the larger of epsrel |average| and epsabs. */
static double comp_target(const strata_run *r, int c)
{
  const strata_params *p = &r->params;
  return fmax(p->epsrel * fabs(r->cavg[c].mean), p->epsabs);
}

/* The evaluations a run that stopped short of its target needs at the rate
 * it has seen: the kept iterations' N_kept evaluations gave an error sigma,
 * and errors fall as 1/sqrt(N) once the map is trained, so the kept ones
 * need N_kept (sigma / target)^2, and a run of as many iterations, each
 * (sigma / target)^2 times larger, its whole total that much more.  0 where
 * every error is within its target, or there is no target. */
static double neval_needed(const strata_run *r)
{
  if (r->converged || r->itn == 0 || !(r->params.epsrel > 0.0 || r->params.epsabs > 0.0))
    return 0.0;
  double need = 0.0;
  for (int c = 0; c < r->ncomp; c++) {
    const double s = r->cavg[c].sigma, t = comp_target(r, c);
    /* Tiny estimates whose errors underflowed (their scatter is the
     * error) or zeros: no rate to scale. */
    if (kept_count_comp(r, c) == 0 || comp_class(r, c, r->first_kept) != ITN_MEASURED ||
        !(t > 0.0) || !(s > t) || !isfinite(s))
      continue;
    const double total = (double)r->neval_total * (s / t) * (s / t);
    if (total > need) need = total;
  }
  return need;
}

/* The components' rows of iteration k's report (strata.h), made from the
 * averages as they stand now. */
static const double *describe_comp(strata_run *r, int k)
{
  const int nc = r->ncomp, w = STRATA_COMP_ROW(nc);
  double *rows = r->creport + (size_t)k * (size_t)nc * (size_t)w;
  for (int c = 0; c < nc; c++) {
    double *row = rows + c * w;
    row[STRATA_COMP_INTEGRAL] = comp_value(r, k, c, &row[STRATA_COMP_SIGMA]);
    row[STRATA_COMP_AVG] = r->cavg[c].mean;
    row[STRATA_COMP_AVG_SIGMA] = r->cavg[c].sigma;
    row[STRATA_COMP_CHI2_DOF] = r->cavg[c].chi2_dof;
    row[STRATA_COMP_Q] = r->cavg[c].q;
    for (int b = 0; b < nc; b++) {
      row[STRATA_COMP_COV + b] = comp_cov(r, k, c, b);
      row[STRATA_COMP_COV + nc + b] = r->cavg_cov[c * nc + b];
    }
  }
  return rows;
}

/* The report of the iteration just combined (hist[itn - 1]). */
static void describe(strata_run *r, int restarted, int adapt, strata_iteration *out)
{
  const strata_itn_record *rec = &r->hist[r->itn - 1];
  memset(out, 0, sizeof *out);
  out->itn = r->itn;
  out->integral = rec->integral;
  out->sigma = rec->sigma;
  out->neval = rec->neval;
  out->kept = comp_kept(r, r->itn - 1, 0);
  out->restarted = restarted;
  out->avg = r->avg.mean;
  out->avg_sigma = r->avg.sigma;
  out->chi2_dof = r->avg.chi2_dof;
  out->q = r->avg.q;
  out->adapting = adapt;
  out->time_s = rec->time_s;
  out->ncomp = r->ncomp;
  if (r->ncomp > 1) out->comp = describe_comp(r, r->itn - 1);
}

/* Replays the averaging exactly as the iterations first ran it, so that
 * restarts, the kept flags and every reported row come out the same. */
static void replay(strata_run *r, strata_iteration_cb cb, void *ctx)
{
  int done = r->itn;
  r->first_kept = first_kept(&r->params);
  for (int c = 0; c < r->ncomp; c++) r->cjump[c] = 0.0;
  for (r->itn = 1; r->itn <= done; r->itn++) {
    int adapt = adapting(r, r->itn - 1);
    int restarted = update_average(r, adapt);
    if (cb) {
      r->converged = check_converged(r);
      strata_iteration it;
      describe(r, restarted, adapt, &it);
      cb(&it, ctx);
    }
  }
  r->itn = done;
  average(r);
  r->converged = check_converged(r);
}


int strata_run_kept(const strata_run *r, int k)
{
  return comp_kept(r, k, 0);
}

/* The host's copies of a map and allocation adapted on a device are only
 * brought up to date when read: these readers take a const run, since its
 * state does not change, only where it is kept.  A failed copy is kept and
 * returned by the next step, which cannot run on that device either. */
static void sync_for_reading(const strata_run *r)
{
  strata_run *w = (strata_run *)r;
  int rc = strata_run_sync(w);
  if (rc != STRATA_OK && w->sync_rc == STRATA_OK) w->sync_rc = rc;
}

const double *strata_run_edges(const strata_run *r)
{
  sync_for_reading(r);
  return r->map->edges;
}

void strata_run_state_get(const strata_run *r, strata_run_state *st)
{
  sync_for_reading(r);
  st->itn = r->itn;
  st->neval_total = r->neval_total;
  st->time_s = r->time_s;
  st->naxes = strata_map_naxes(r->map);
  st->ninc = r->map->ninc;
  st->edges = r->map->edges;
  st->nhcube = r->strat->nhcube;
  st->nh = r->strat->nh;
  st->hist = r->hist;
  st->ncomp = r->ncomp > 1 ? r->ncomp : 0;
  st->comp_hist = r->chist;
}

/* A vector integrand's saved records: as many components as the job's,
 * finite estimates, a symmetric covariance with a non-negative diagonal,
 * and component 0 equal to the history (both are saved). */
static int check_comp_state(const strata_run *r, const strata_run_state *st)
{
  const int nc = st->ncomp > 1 ? st->ncomp : 1;
  if (nc != r->ncomp)
    return strata_error(STRATA_EINVAL, "saved state has %d component%s, this job %d", nc,
                        nc == 1 ? "" : "s", r->ncomp);
  if (nc == 1) return STRATA_OK;
  if (st->itn > 0 && !st->comp_hist)
    return strata_error(STRATA_EINVAL, "saved state lacks the components' history");
  for (int k = 0; k < st->itn; k++) {
    const double *row = st->comp_hist + (size_t)k * STRATA_CHIST_ROW(nc), *cov = row + nc;
    int ok = row[0] == st->hist[k].integral && sqrt(cov[0]) == st->hist[k].sigma;
    for (int a = 0; ok && a < nc; a++) {
      ok = isfinite(row[a]) && cov[a * nc + a] >= 0.0;
      for (int b = 0; ok && b < nc; b++)
        ok = isfinite(cov[a * nc + b]) && cov[a * nc + b] == cov[b * nc + a];
    }
    if (!ok)
      return strata_error(STRATA_EINVAL, "saved iteration %d's component records are not "
                          "valid (non-finite, not symmetric, or not its history)", k + 1);
  }
  return STRATA_OK;
}

/* A saved state is checked as a whole before any of it is used: a file
 * that passed its checksums may still come from a build with other rules,
 * and a half-applied state would sample garbage without saying so. */
static int check_state(const strata_run *r, const strata_run_state *st)
{
  const int naxes = strata_map_naxes(r->map), ninc = r->map->ninc;
  if (st->naxes != naxes || st->ninc != ninc || st->nhcube != r->strat->nhcube)
    return strata_error(STRATA_EINVAL, "saved state does not fit this job: map %d x %d and "
                        "%lld hypercubes saved, %d x %d and %lld here", st->naxes, st->ninc,
                        (long long)st->nhcube, naxes, ninc, (long long)r->strat->nhcube);
  if (st->itn < 0 || st->itn > r->params.maxiter)
    return strata_error(STRATA_EINVAL, "saved state holds %d iterations, more than "
                        "vegas.maxiter = %d", st->itn, r->params.maxiter);
  const int bad = strata_map_edges_bad_axis(st->edges, naxes, ninc);
  if (bad)
    return strata_error(STRATA_EINVAL, "saved map of axis %d does not increase from 0 "
                        "to 1", bad);
  /* No allocation of this job exceeds its budget (neval, neval_frozen, or
   * a fixed layout's own total) by more than the floor of 2 per hypercube.
   * A larger one, edited under a valid checksum, would run iterations of
   * another size, or none at all (2^62 samples are past any maxeval). */
  const strata_params *p = &r->params;
  int64_t budget = p->neval > p->neval_frozen ? p->neval : p->neval_frozen;
  if (strata_strat_total(r->strat) > budget) budget = strata_strat_total(r->strat);
  const int64_t most = budget + 2 * r->strat->nhcube;
  int64_t sum = 0;
  for (int64_t h = 0; h < st->nhcube; h++) {
    if (st->nh[h] < 2)
      return strata_error(STRATA_EINVAL, "saved allocation gives hypercube %lld %lld "
                          "samples (at least 2)", (long long)h, (long long)st->nh[h]);
    if (st->nh[h] > most - sum) /* sum + nh[h] > most, without overflow */
      return strata_error(STRATA_EINVAL, "saved allocation gives hypercube %lld %lld "
                          "samples, beyond the %lld this job can allocate in all (%lld and "
                          "2 per hypercube)", (long long)h, (long long)st->nh[h],
                          (long long)most, (long long)budget);
    sum += st->nh[h];
  }
  int64_t total = 0;
  for (int k = 0; k < st->itn; k++) {
    const strata_itn_record *h = &st->hist[k];
    if (!isfinite(h->integral) || !(h->sigma >= 0.0) || !isfinite(h->sigma) || h->neval < 2)
      return strata_error(STRATA_EINVAL, "saved iteration %d is not a valid result "
                          "(%g +- %g, %lld evaluations)", k + 1, h->integral, h->sigma,
                          (long long)h->neval);
    total += h->neval;
  }
  if (total != st->neval_total)
    return strata_error(STRATA_EINVAL, "saved iterations add up to %lld evaluations, the "
                        "saved total is %lld", (long long)total, (long long)st->neval_total);
  return check_comp_state(r, st);
}

int strata_run_restore(strata_run *r, const strata_run_state *st, strata_iteration_cb cb,
                       void *ctx)
{
  int rc = check_state(r, st);
  if (rc != STRATA_OK) return rc;
  memcpy(r->map->edges, st->edges,
         sizeof(double) * (size_t)st->naxes * (size_t)(st->ninc + 1));
  r->map->generation = strata_stamp_next(); /* devices holding a copy of the map re-upload it */
  strata_strat_restore(r->strat, st->nh);
  if (st->itn > 0) memcpy(r->hist, st->hist, sizeof *r->hist * (size_t)st->itn);
  if (st->itn > 0 && r->ncomp > 1)
    memcpy(r->chist, st->comp_hist,
           sizeof(double) * STRATA_CHIST_ROW(r->ncomp) * (size_t)st->itn);
  r->itn = st->itn;
  r->neval_total = st->neval_total;
  r->time_s = st->time_s;
  replay(r, cb, ctx);
  return STRATA_OK;
}

uint64_t strata_run_state_hash(const strata_run *r)
{
  sync_for_reading(r);
  uint64_t h = STRATA_HASH64_INIT;
  const size_t nedges = (size_t)strata_map_naxes(r->map) * (size_t)(r->map->ninc + 1);
  h = strata_hash64(h, r->map->edges, sizeof(double) * nedges);
  h = strata_hash64(h, r->strat->nh, sizeof(int64_t) * (size_t)r->strat->nhcube);
  for (int k = 0; k < r->itn; k++) { /* wall times differ by nature: left out */
    h = strata_hash64(h, &r->hist[k].integral, sizeof(double));
    h = strata_hash64(h, &r->hist[k].sigma, sizeof(double));
    h = strata_hash64(h, &r->hist[k].neval, sizeof(int64_t));
    if (r->ncomp > 1)
      h = strata_hash64(h, r->chist + (size_t)k * STRATA_CHIST_ROW(r->ncomp),
                sizeof(double) * STRATA_CHIST_ROW(r->ncomp));
  }
  int head[3] = {r->itn, r->first_kept, r->converged};
  h = strata_hash64(h, head, sizeof head);
  return strata_hash64(h, &r->neval_total, sizeof r->neval_total);
}

/* The debug check of identical state: every rank's hash reaches every rank
 * through one gather (in 16-bit pieces that doubles carry exactly), so that
 * every rank ends with the same message, naming the first rank that
 * differs from rank 0, whichever rank's message is printed. */
static uint64_t hash_from_pieces(const double *b)
{
  uint64_t h = 0;
  for (int i = 0; i < 4; i++) h |= (uint64_t)b[i] << (16 * i);
  return h;
}

static int check_ranks(strata_run *r)
{
  uint64_t mine = strata_run_state_hash(r);
  /* A test hook: make one rank's state differ, to see the check catch it. */
  const char *diverge = getenv("STRATA_TEST_DIVERGE_RANK");
  if (diverge && atoi(diverge) == r->comm->rank) mine ^= 1;
  r->error_agreed = 0;
  const int size = r->comm->size;
  double *hash = calloc(4 * (size_t)size, sizeof(double));
  int64_t *off = calloc((size_t)size + 1, sizeof *off);
  if (!hash || !off) {
    free(hash);
    free(off);
    return strata_error(STRATA_ENOMEM, "rank %d: out of memory", r->comm->rank);
  }
  for (int k = 0; k <= size; k++) off[k] = 4 * (int64_t)k;
  for (int i = 0; i < 4; i++)
    hash[4 * r->comm->rank + i] = (double)((mine >> (16 * i)) & 0xffff);
  int rc = r->comm->allgather(r->comm, hash, off);
  free(off);
  if (rc != 0) {
    free(hash);
    return strata_error(STRATA_ECOMM, "rank %d: the state check failed to communicate",
                        r->comm->rank);
  }
  const uint64_t root = hash_from_pieces(hash);
  int first = -1, ndiff = 0;
  for (int k = 1; k < size; k++)
    if (hash_from_pieces(hash + 4 * k) != root) {
      if (first < 0) first = k;
      ndiff++;
    }
  r->error_agreed = first >= 0;
  if (first >= 0)
    rc = strata_error(STRATA_ECOMM, "the state of rank %d differs from rank 0's after iteration "
                      "%d (checksum %016llx, rank 0 %016llx; %d of %d ranks differ; "
                      "run.check_ranks)", first, r->itn,
                      (unsigned long long)hash_from_pieces(hash + 4 * first),
                      (unsigned long long)root, ndiff, size);
  free(hash);
  return rc;
}

/* The iteration whose estimate iteration k shifts its sums by: the one
 * before it, but for iterations of the frozen map from the third on, the
 * one two before.  A frozen map's estimates all sit as near J f, and each
 * such iteration's shift is then known while the iteration before it
 * runs, so that it can start before that one's estimate is combined
 * (strata_sample_job's next_alike). */
static int shift_source(const strata_run *r, int k)
{
  const int k0 = r->params.adapt_iters;
  if (vegas_mode(&r->params) && k0 >= 1 && k >= k0 + 2 && frozen_alike(r, k)) return k - 2;
  return k - 1;
}

/* The shift of component c for iteration k: the estimate shift_source
 * names, where it is near enough to J f_c; a wild one (early iterations of
 * a peaked integrand) would only add rounding. */
static double comp_shift(const strata_run *r, int k, int c)
{
  const int src = shift_source(r, k);
  if (src < 0) return 0.0;
  double sigma, I = comp_value(r, src, c, &sigma);
  return sigma < 0.1 * fabs(I) ? I : 0.0;
}

/* The shift of the quantity that adapts (backend.h): its component's, or
 * for the sum of magnitudes the sum of the components' magnitudes, which
 * it approaches where no component changes sign. */
static double sum_shift(const strata_run *r, const double *cshift)
{
  if (r->ncomp == 1 || r->problem.adapt_comp >= 0)
    return cshift[r->ncomp == 1 ? 0 : r->problem.adapt_comp];
  double s = 0.0;
  for (int c = 0; c < r->ncomp; c++) s += fabs(cshift[c]);
  return s;
}

/* The map learns from (J f)^2, which underflows to 0 below |J f| = 1.5e-162:
 * fB's first iterations often see only values like 1e-181, and a map
 * trained on zeros never moves towards the peak (the default fB job:
 * doc/algorithm.md).  After
 * an iteration whose estimate m of the adapting quantity was that small, J f
 * is scaled by the power of two that brings m * neval, about its largest
 * sample, near 1.  A power of two scales exactly, and the map only reads the
 * weights' ratios. */
static double map_scale(const strata_run *r)
{
  if (r->itn == 0) return 1.0;
  double m = 0.0, sigma;
  if (r->ncomp == 1 || r->problem.adapt_comp >= 0)
    m = fabs(comp_value(r, r->itn - 1, r->ncomp == 1 ? 0 : r->problem.adapt_comp, &sigma));
  else
    for (int c = 0; c < r->ncomp; c++) m += fabs(comp_value(r, r->itn - 1, c, &sigma));
  if (!(m > 0.0) || m >= sqrt(DBL_MIN)) return 1.0;
  int e = -(ilogb(m) + ilogb((double)r->params.neval));
  return ldexp(1.0, e > 1000 ? 1000 : e);
}

static int overflowed(const strata_run *r, const strata_strat *cells, int64_t bad, double near)
{
  return strata_error(STRATA_ENOTFINITE,
                      "integrand '%s': iteration %d: the sums of %s %lld overflowed "
                      "(values near %g); rescale the integrand",
                      r->problem.name ? r->problem.name : "(unnamed)", r->itn + 1,
                      cells->M > 1 ? "hypercube" : "batch", (long long)bad, near);
}

/* The iteration's estimates and their covariance (STRATA_EST_PART(ncomp)
 * doubles) into the history, after checking that they are finite. */
static int record_estimate(strata_run *r, const double *est)
{
  const int nc = r->ncomp;
  for (int c = 0; c < nc; c++) {
    int ok = isfinite(est[c]);
    for (int b = 0; b < nc; b++) ok = ok && isfinite(est[nc + c * nc + b]);
    if (!ok)
      return nc == 1 ? strata_error(STRATA_ENOTFINITE,
                                    "integrand '%s': iteration %d overflowed (estimate %g, "
                                    "variance %g); rescale the integrand",
                                    r->problem.name ? r->problem.name : "(unnamed)",
                                    r->itn + 1, est[0], est[1])
                     : strata_error(STRATA_ENOTFINITE,
                                    "integrand '%s': iteration %d overflowed (component %d: "
                                    "estimate %g, variance %g); rescale the integrand",
                                    r->problem.name ? r->problem.name : "(unnamed)",
                                    r->itn + 1, c, est[c], est[nc + c * nc + c]);
  }
  if (nc > 1)
    memcpy(r->chist + (size_t)r->itn * STRATA_CHIST_ROW(nc), est,
           sizeof(double) * STRATA_CHIST_ROW(nc));
  r->hist[r->itn].integral = est[0];
  r->hist[r->itn].sigma = sqrt(est[nc]);
  return STRATA_OK;
}

/* The hypercubes of each rank's slice, as bounds off[0..size]. */
static void slice_bounds(const strata_run *r, const strata_strat *cells, int64_t *off)
{
  int64_t h0, h1;
  for (int k = 0; k < r->comm->size; k++) {
    strata_run_slice(cells, k, r->comm->size, &h0, &h1);
    off[k] = h0;
    off[k + 1] = h1;
  }
}

/* Brings a map and allocation that a backend adapted on its device back
 * into the run's own, for whatever reads them on the host. */
int strata_run_sync(strata_run *r)
{
  strata_strat_materialize(r->strat);
  return r->backend->pull ? r->backend->pull(r->backend, r->map, r->strat) : STRATA_OK;
}

/* Whether the iteration after the coming one, should the run go on, is
 * the coming one's job but for its number and shift (strata_sample_job's
 * next_alike): both draw pseudo-random points of the frozen map, the
 * later one's shift is known already, and the budget allows it. */
static int next_alike(const strata_run *r, int exchange)
{
  const int k = r->itn;
  const int64_t n = strata_strat_total(cells_of(r, k));
  return exchange && k + 1 < r->params.maxiter && frozen_alike(r, k) && frozen_alike(r, k + 1) &&
         shift_source(r, k + 1) < k && r->neval_total + 2 * n <= r->params.maxeval;
}

int strata_run_step(strata_run *r, strata_iteration *out)
{
  if (r->sync_rc != STRATA_OK) return r->sync_rc;
  const strata_params *p = &r->params;
  const int dim = r->problem.dim;
  const int adapt = adapting(r, r->itn), qmc = qmc_points(r, r->itn);
  const strata_strat *cells = cells_of(r, r->itn);
  const int64_t nhc = cells->nhcube;
  const size_t mapcells = (size_t)dim * (size_t)r->map->ninc;
  double t0 = now_s();

  const int nc = r->ncomp;
  const size_t ncs = comp_sums_per_cell(nc) * (size_t)nhc;
  double *s1 = r->buf, *s2 = r->buf + nhc, *c1 = r->buf + 2 * nhc;
  double *c2 = c1 + (size_t)nc * (size_t)nhc, *part = c1 + ncs;
  double *wsum = part + STRATA_EST_PART(nc), *wcount = wsum + mapcells;
  strata_estimator est = qmc ? STRATA_EST_RANDOMIZED
                         : p->mode == STRATA_MODE_PLAIN ? STRATA_EST_POOLED
                                                        : STRATA_EST_STRATIFIED;
  /* A stratified estimate is a sum over hypercubes, so each rank's backend
   * adds its own and only those sums cross the network
   * (doc/distributed.md); plain MC and QMC have few cells and combine their
   * sums per cell, which keeps their results the same bits on any number
   * of ranks. */
  const int by_part = est == STRATA_EST_STRATIFIED;
  const int realloc = adapt && strata_strat_moves(r->strat);
  /* One rank with a backend that adapts on its device, or ranks whose
   * backends exchange among themselves (on their devices): the map sums
   * stay there, and only the estimate comes back, every rank's combined.
   * Those ranks split the samples themselves, not the hypercubes, so that
   * none waits for another's larger share. */
  const int local = r->comm->size == 1;
  const int exchange = by_part && !local && r->backend->exchanges;
  const int sums_here = !((local || exchange) && by_part && r->backend->pull);
  /* A backend that keeps the stratified iteration on its device (on any
   * number of ranks) makes its own copy of the first, even allocation, and
   * the ranks' slices of it follow from its formula; everything else reads
   * the host's. */
  if (!(by_part && r->backend->pull)) strata_strat_materialize(r->strat);
  int64_t h0, h1, i0 = 0, i1 = 0;
  if (exchange) {
    /* A vector integrand's ranks hold whole hypercubes: the covariance of
     * a hypercube shared between ranks is not combined. */
    if (!strata_split_current(r->split, r->strat)) strata_split_make(r->split, r->strat, nc > 1);
    strata_split_part(r->split, r->comm->rank, &i0, &i1, &h0, &h1);
  } else {
    strata_run_slice(cells, r->comm->rank, r->comm->size, &h0, &h1);
  }
  double *red = by_part ? part : r->buf;
  const size_t nred = (size_t)(wsum - red) + (adapt && sums_here ? 2 * mapcells : 0);
  memset(red, 0, sizeof(double) * nred);
  if (qmc) strata_qmc_randomize(r->qmc, p->seed, (uint32_t)r->itn);
  double cshift[STRATA_MAX_COMP], next_cshift[STRATA_MAX_COMP];
  const int alike = next_alike(r, exchange);
  for (int c = 0; c < nc; c++) {
    cshift[c] = comp_shift(r, r->itn, c);
    next_cshift[c] = alike ? comp_shift(r, r->itn + 1, c) : 0.0;
  }

  strata_sample_job job = {
      .problem = &r->problem, .map = r->map, .strat = cells,
      .qmc = qmc ? r->qmc : NULL,
      .seed = p->seed, .iteration = (uint32_t)r->itn, .adapt = adapt,
      .shift = sum_shift(r, cshift), .map_scale = map_scale(r), .h0 = h0, .h1 = h1,
      .s1 = s1, .s2 = s2, .wsum = wsum, .wcount = wcount,
      .cshift = nc > 1 ? cshift : NULL, .c1 = nc > 1 ? c1 : NULL, .c2 = nc > 1 ? c2 : NULL,
      .part = by_part ? part : NULL, .level = by_part && realloc ? r->levels : NULL,
      .local = local, .alpha = p->alpha, .exchange = exchange, .split = r->split,
      .i0 = i0, .i1 = i1,
      .next_alike = alike, .next_shift = sum_shift(r, next_cshift),
      .next_cshift = nc > 1 ? next_cshift : NULL, .bad = -1};
  double ts = now_s();
  int rc = r->backend->sample(r->backend, &job);
  r->sample_time_s = now_s() - ts;
  if (rc != STRATA_OK) return rc;
  /* Sums beyond the largest double are this rank's to report when it
   * holds them alone (main ends the other ranks). */
  if (job.bad >= 0) return overflowed(r, cells, job.bad, job.bad_near);

  double tc = now_s();
  int crc = exchange ? 0 : r->comm->allreduce_sum(r->comm, red, nred);
  if (crc == 0 && realloc && by_part && !local && !exchange) {
    slice_bounds(r, cells, r->slices);
    crc = r->comm->allgather(r->comm, r->levels, r->slices);
  }
  r->comm_time_s += now_s() - tc;
  if (crc != 0)
    return strata_error(STRATA_ECOMM, "rank %d: combining the iteration's sums failed",
                        r->comm->rank);
  if (!by_part) {
    /* Every cell's sums are here now: the same estimate on every rank. */
    const double *e1 = nc > 1 ? c1 : s1, *e2 = nc > 1 ? c2 : s2;
    const double *eshift = nc > 1 ? cshift : &job.shift;
    int64_t bad = -1, adapt_bad = -1;
    double scratch[2];
    if (strata_estimate_cov(est, cells, nc, e1, e2, eshift, p->nrand, part, part + nc,
                            &bad) != 0)
      return overflowed(r, cells, bad, e1[bad * nc] / (double)cells->nh[bad] + eshift[0]);
    if (nc > 1 && strata_estimate(est, cells, s1, s2, job.shift, p->nrand, &scratch[0],
                                  &scratch[1], &adapt_bad) != 0)
      return overflowed(r, cells, adapt_bad,
                        s1[adapt_bad] / (double)cells->nh[adapt_bad] + job.shift);
  }
  if ((rc = record_estimate(r, part)) != STRATA_OK) return rc;
  strata_itn_record *rec = &r->hist[r->itn];
  rec->neval = strata_strat_total(cells);
  r->neval_total += rec->neval;
  r->itn++;

  if (adapt) {
    strata_adapt_job aj = {.map = r->map, .strat = r->strat, .alpha = p->alpha,
                           .reallocate = realloc, .wsum = wsum, .wcount = wcount,
                           .level = r->levels, .split = r->split};
    if ((rc = r->backend->adapt(r->backend, &aj)) != STRATA_OK) return rc;
    /* After the last adapting iteration, so that a checkpoint written now
     * already holds the frozen iterations' allocation. */
    if (r->itn == p->adapt_iters && p->neval_frozen && p->neval_frozen != r->strat->neval) {
      if ((rc = strata_run_sync(r)) != STRATA_OK) return rc;
      strata_strat_rescale(r->strat, p->neval_frozen);
    }
  }
  int restarted = update_average(r, adapt);
  r->converged = check_converged(r);
  double dt = now_s() - t0;
  r->time_s += dt;
  rec->time_s = dt;
  if (out) describe(r, restarted, adapt, out);
  return r->check_ranks && r->comm->size > 1 ? check_ranks(r) : STRATA_OK;
}

int strata_run_finished(const strata_run *r)
{
  if (r->converged || r->itn >= r->params.maxiter) return 1;
  /* The next iteration draws about neval samples (its cells' current
   * total); do not start one that would break maxeval. */
  return r->neval_total + strata_strat_total(cells_of(r, r->itn)) > r->params.maxeval;
}

void strata_run_result(const strata_run *r, strata_result *res)
{
  memset(res, 0, sizeof *res);
  const int nc = r->ncomp;
  res->ncomp = nc;
  for (int c = 0; c < nc; c++) {
    /* A run that maxeval stopped inside the warm-up still has estimates:
     * their average stands (converged stays no) rather than none. */
    strata_average warm;
    const strata_average *a = &r->cavg[c];
    if (kept_count_comp(r, c) == 0 && r->itn > 0) {
      double w[r->itn];
      average_from(r, c, 0, w, &warm);
      a = &warm;
    }
    if (r->itn > 0) {
      res->comp_integral[c] = a->mean;
      res->comp_sigma[c] = a->sigma;
      res->comp_chi2_dof[c] = a->chi2_dof;
      res->comp_q[c] = a->q;
    } else {
      res->comp_integral[c] = res->comp_sigma[c] = res->comp_q[c] = NAN;
    }
    for (int b = 0; b < nc; b++)
      res->comp_cov[c * nc + b] = nc > 1 ? r->cavg_cov[c * nc + b]
                                         : res->comp_sigma[0] * res->comp_sigma[0];
  }
  res->integral = res->comp_integral[0];
  res->sigma = res->comp_sigma[0];
  res->chi2_dof = res->comp_chi2_dof[0];
  res->q = res->comp_q[0];
  res->neval = r->neval_total;
  res->iterations = r->itn;
  res->converged = r->converged;
  res->no_target = !(r->params.epsrel > 0.0) && !(r->params.epsabs > 0.0);
  strata_lost l;
  res->lost = r->itn > 0 && run_lost(r, &l);
  if (res->lost) {
    res->lost_z = l.z;
    res->lost_itn = l.itn;
    res->lost_integral = l.integral;
    res->lost_sigma = l.sigma;
  }
  res->neval_needed = neval_needed(r);
  res->thin_neval = r->itn > 0 && !res->no_target ? run_thin(r) : 0.0;
  res->thin = res->thin_neval > 0.0;
  res->nhcube = (int)r->strat->nhcube;
  res->time_s = r->time_s;
  res->comm_time_s = r->comm_time_s;
}

int strata_run_integrate(strata_run *r, strata_iteration_cb cb, void *ctx,
                         strata_result *res)
{
  while (!strata_run_finished(r)) {
    strata_iteration it;
    int rc = strata_run_step(r, &it);
    if (rc != STRATA_OK) return rc;
    if (cb) cb(&it, ctx);
  }
  if (res) strata_run_result(r, res);
  return STRATA_OK;
}
