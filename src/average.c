#include "average.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

int strata_ravg_init(strata_ravg *ra, int ncomp, int maxiter, int nadapt, int qmc, int skip)
{
  *ra = (strata_ravg){.ncomp = ncomp, .maxiter = maxiter, .nadapt = nadapt, .qmc = qmc,
                      .skip = skip, .first_kept = skip};
  ra->hist = calloc((size_t)maxiter, sizeof *ra->hist);
  ra->cweights = calloc((size_t)maxiter * (size_t)ncomp, sizeof(double));
  ra->cavg = calloc((size_t)ncomp, sizeof *ra->cavg);
  ra->cov = calloc((size_t)ncomp * (size_t)ncomp, sizeof(double));
  ra->cjump = calloc((size_t)ncomp, sizeof(double));
  /* calloc: a history of many components takes memory as iterations fill
   * it, not for maxiter of them up front. */
  if (ncomp > 1) ra->chist = calloc((size_t)maxiter * STRATA_CHIST_ROW(ncomp), sizeof(double));
  if (ncomp > STRATA_MAX_COMP) ra->csum = calloc((size_t)maxiter * 2, sizeof(double));
  if (!ra->hist || !ra->cweights || !ra->cavg || !ra->cov || !ra->cjump ||
      (ncomp > 1 && !ra->chist) || (ncomp > STRATA_MAX_COMP && !ra->csum)) {
    strata_ravg_free(ra);
    return STRATA_ENOMEM;
  }
  return STRATA_OK;
}

void strata_ravg_free(strata_ravg *ra)
{
  free(ra->hist);
  free(ra->chist);
  free(ra->cweights);
  free(ra->cavg);
  free(ra->cov);
  free(ra->cjump);
  free(ra->csum);
  ra->hist = NULL;
  ra->cavg = NULL;
  ra->chist = ra->cweights = ra->cov = ra->cjump = ra->csum = NULL;
}

void strata_ravg_reset(strata_ravg *ra)
{
  ra->first_kept = ra->skip;
  ra->nsum = 0; /* a restored history may hold other iterations */
  for (int c = 0; c < ra->ncomp; c++) ra->cjump[c] = 0.0;
}

int strata_ravg_adapting(const strata_ravg *ra, int k)
{
  return k < ra->nadapt;
}

/* Iteration k's error per sample, or 0 where it is not measured. */
static double error_per_sample(const strata_ravg *ra, int k)
{
  const double s = ra->hist[k].sigma;
  return s > 0.0 && isfinite(s) ? s * sqrt((double)ra->hist[k].neval) : 0.0;
}

int strata_ravg_adapt_more(strata_ravg *ra)
{
  const int n = ra->n, w = STRATA_ADAPT_MORE_WINDOW;
  if (ra->ncomp != 1 || n != ra->nadapt || n < STRATA_ADAPT_MORE_AFTER || n >= ra->maxiter ||
      n < 2 * w)
    return 0;
  double recent = 0.0, before = 0.0;
  for (int k = n - w; k < n; k++) {
    const double a = error_per_sample(ra, k), b = error_per_sample(ra, k - w);
    if (!(a > 0.0) || !(b > 0.0)) return 0;
    recent += a;
    before += b;
  }
  if (!(recent < STRATA_ADAPT_MORE_FALL * before)) return 0;
  ra->nadapt++;
  return 1;
}

int strata_ravg_finer(const strata_ravg *ra, int k)
{
  const int n0 = ra->nadapt, w = STRATA_ADAPT_MORE_WINDOW, judged = n0 + STRATA_FINER_TRIAL - 1;
  if (!ra->finer || ra->ncomp != 1 || ra->qmc || n0 < STRATA_ADAPT_MORE_AFTER || k < n0)
    return 0;
  if (k <= judged) return 1;
  if (judged >= ra->n) return 0;
  double before = 0.0;
  for (int j = n0 - w; j < n0; j++) before += error_per_sample(ra, j);
  const double trial = error_per_sample(ra, judged);
  return trial > 0.0 && before > 0.0 && trial < STRATA_FINER_KEEP * before / w;
}

void strata_ravg_adapt_replay(strata_ravg *ra, int nadapt)
{
  const int n = ra->n;
  ra->nadapt = nadapt;
  for (ra->n = 1; ra->n <= n; ra->n++) strata_ravg_adapt_more(ra);
  ra->n = n;
}

/* Iteration k draws QMC points: always in mode qmc, and once the map is
 * frozen with qmc_map. */
static int qmc_points(const strata_ravg *ra, int k)
{
  return ra->qmc && !strata_ravg_adapting(ra, k);
}

int strata_ravg_class(double integral, double sigma)
{
  if (sigma > 0.0) return STRATA_ITN_MEASURED;
  if (integral == 0.0) return STRATA_ITN_ZERO;
  return fabs(integral) >= sqrt(DBL_MIN) ? STRATA_ITN_MEASURED : STRATA_ITN_TINY;
}

/* Component c of iteration k: its estimate, and its error in *sigma.  The
 * history holds component 0 (the only one of a scalar integrand), so every
 * rule below is written once, for any component. */
double strata_ravg_value(const strata_ravg *ra, int k, int c, double *sigma)
{
  if (c == STRATA_RAVG_SUM) {
    *sigma = sqrt(ra->csum[2 * k + 1]);
    return ra->csum[2 * k];
  }
  if (c == 0) {
    *sigma = ra->hist[k].sigma;
    return ra->hist[k].integral;
  }
  const double *row = ra->chist + (size_t)k * STRATA_CHIST_ROW(ra->ncomp);
  *sigma = sqrt(row[ra->ncomp + c * ra->ncomp + c]);
  return row[c];
}

/* This iteration's covariance of components a and b (vector integrands). */
double strata_ravg_cov(const strata_ravg *ra, int k, int a, int b)
{
  return ra
      ->chist[(size_t)k * STRATA_CHIST_ROW(ra->ncomp) + (size_t)(ra->ncomp + a * ra->ncomp + b)];
}

/* Every iteration is an estimate; which ones an average takes is the
 * average's choice: the best class among iterations [from, itn) of
 * component c.  One of zeros says nothing against measured ones, but a run
 * of only zeros is exactly 0. */
int strata_ravg_best(const strata_ravg *ra, int c, int from)
{
  int best = 0;
  for (int k = from; k < ra->n; k++) {
    double s, v = strata_ravg_value(ra, k, c, &s);
    int cl = strata_ravg_class(v, s);
    if (cl > best) best = cl;
  }
  return best;
}

/* Whether iteration k of component c is in the current average. */
int strata_ravg_kept(const strata_ravg *ra, int k, int c)
{
  double s, v = strata_ravg_value(ra, k, c, &s);
  return k >= ra->first_kept && k < ra->n &&
         strata_ravg_class(v, s) == strata_ravg_best(ra, c, ra->first_kept);
}

int strata_ravg_nkept(const strata_ravg *ra, int c)
{
  int n = 0, best = strata_ravg_best(ra, c, ra->first_kept);
  for (int k = ra->first_kept; k < ra->n; k++) {
    double s, v = strata_ravg_value(ra, k, c, &s);
    n += strata_ravg_class(v, s) == best;
  }
  return n;
}

/* Iteration k's error if it were iteration j's size: errors go as
 * 1/sqrt(neval). */
static double error_at(const strata_ravg *ra, int k, int c, int j)
{
  double s;
  strata_ravg_value(ra, k, c, &s);
  return s * sqrt((double)ra->hist[k].neval / (double)ra->hist[j].neval);
}

/* Whether iteration k draws pseudo-random points of a frozen map (or plain
 * MC's): such iterations are alike but for their random numbers. */
int strata_ravg_frozen_alike(const strata_ravg *ra, int k)
{
  return !strata_ravg_adapting(ra, k) && !qmc_points(ra, k);
}

/* Whether iteration j can lend its error to a neighbour in the average of
 * component c over [from, itn): kept, adapting, measured. */
static int lends_error(const strata_ravg *ra, int c, int from, int best, int j)
{
  if (j < from || j >= ra->n || !strata_ravg_adapting(ra, j)) return 0;
  double sj, vj = strata_ravg_value(ra, j, c, &sj);
  return sj > 0.0 && strata_ravg_class(vj, sj) == best;
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
static double neighbour_error(const strata_ravg *ra, int c, int from, int best, int k, double own)
{
  const int before = lends_error(ra, c, from, best, k - 1),
            after = lends_error(ra, c, from, best, k + 1);
  if (before && after)
    return sqrt(error_at(ra, k - 1, c, k)) * sqrt(error_at(ra, k + 1, c, k));
  if (!before && !after) return own;
  const int step = before ? -1 : 1;
  const double near = error_at(ra, k + step, c, k);
  if (!lends_error(ra, c, from, best, k + 2 * step)) return near;
  const double far = error_at(ra, k + 2 * step, c, k),
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
 *   alike: by their pooled error, sqrt(mean of sigma_j^2 neval_j / neval_k),
 *   pooled over the iterations of the same stratification;
 * - QMC points keep their own: a randomized rule may integrate a smooth
 *   component exactly in one iteration (1e-16 beside 1e-9), their errors
 *   come from the scatter of independent randomizations, and a neighbour
 *   or pool would carry rounding noise into the weights. */
#define STRATA_LEND_SPAN 100.0

static void weight_errors(const strata_ravg *ra, int c, int from, int best, double *w)
{
  /* The pooled error of one sample, sqrt(mean of sigma_j^2 neval_j), in
   * units of the first one's, so that no square over- or underflows for
   * any finite errors of like size; one pool per stratification (coarse,
   * finer), whose iterations are alike among themselves. */
  double ref[2] = {0.0, 0.0}, pool[2] = {0.0, 0.0};
  int m[2] = {0, 0};
  for (int j = from; j < ra->n; j++) {
    double sj, vj = strata_ravg_value(ra, j, c, &sj);
    if (!strata_ravg_frozen_alike(ra, j) || !(sj > 0.0) || strata_ravg_class(vj, sj) != best)
      continue;
    const int f = strata_ravg_finer(ra, j);
    const double e = sj * sqrt((double)ra->hist[j].neval);
    if (m[f] == 0) ref[f] = e;
    pool[f] += (e / ref[f]) * (e / ref[f]);
    m[f]++;
  }
  double per_sample[2];
  for (int f = 0; f < 2; f++) per_sample[f] = m[f] > 0 ? ref[f] * sqrt(pool[f] / m[f]) : 0.0;
  for (int k = from; k < ra->n; k++) {
    double s, v = strata_ravg_value(ra, k, c, &s);
    double *wk = &w[k - from];
    if (strata_ravg_class(v, s) != best) *wk = 0.0;
    else if (!(s > 0.0) || qmc_points(ra, k)) *wk = s;
    else if (!strata_ravg_adapting(ra, k))
      *wk = per_sample[strata_ravg_finer(ra, k)] / sqrt((double)ra->hist[k].neval);
    else *wk = fmax(neighbour_error(ra, c, from, best, k, s), s / STRATA_LEND_SPAN);
  }
}

static double *comp_weights(const strata_ravg *ra, int c)
{
  return ra->cweights + (size_t)c * (size_t)ra->maxiter;
}

/* Many components: the sums of the iterations not summed yet (csum). */
static void sum_components(strata_ravg *ra)
{
  const size_t nc = (size_t)ra->ncomp;
  for (; ra->csum && ra->nsum < ra->n; ra->nsum++) {
    const double *row = ra->chist + (size_t)ra->nsum * STRATA_CHIST_ROW(nc);
    double I = 0.0, var = 0.0;
    for (size_t a = 0; a < nc; a++) {
      I += row[a];
      for (size_t b = 0; b < nc; b++) var += row[nc + a * nc + b];
    }
    ra->csum[2 * ra->nsum] = I;
    ra->csum[2 * ra->nsum + 1] = var > 0.0 ? var : 0.0;
  }
}

/* Many components (a histogram's bins) weigh their iterations by their
 * sum's weights, as weight_errors makes them for the sum (into w): an
 * iteration's error of a component with few samples rises and falls with
 * its estimate, and each component weighed by its own (or its
 * neighbours') leaned its average off the truth by a share of its error,
 * which the sum of a thousand bins showed at 7 sigma (doc/design.md, "Many
 * components weigh alike").  The sum's errors say how good each iteration's map was, for every
 * component alike.  0 where the sum has no weight to give (no measured
 * iteration). */
static int shared_weights(const strata_ravg *ra, int from, double *w)
{
  const int sbest = strata_ravg_best(ra, STRATA_RAVG_SUM, from);
  if (sbest != STRATA_ITN_MEASURED) return 0;
  weight_errors(ra, STRATA_RAVG_SUM, from, sbest, w);
  int any = 0;
  for (int k = from; k < ra->n; k++) any |= w[k - from] > 0.0;
  return any;
}

/* Component c's average by the shared weights w (errors; 0: not in it),
 * over every iteration they weigh: one where the component had no sample
 * (0 +- 0) counts as the estimate it is, else the sparse bins' averages
 * rise (and the covariance, whose terms all share the weights, stops
 * adding up).  The error is sqrt(sum u_k^2 sigma_k^2), u_k the normalized
 * weights; chi^2 is taken over the iterations with an error, about the
 * mean their own errors weigh (as strata_stats_average_by takes it: about
 * the shared mean it read high, and restarted the average more often). */
static void shared_average(const strata_ravg *ra, int c, int from, const double *w,
                           strata_average *out)
{
  double wmin = INFINITY;
  for (int k = from; k < ra->n; k++)
    if (w[k - from] > 0.0 && w[k - from] < wmin) wmin = w[k - from];
  double sw = 0.0, si = 0.0;
  for (int k = from; k < ra->n; k++) {
    if (!(w[k - from] > 0.0)) continue;
    const double r = wmin / w[k - from];
    double sk, v = strata_ravg_value(ra, k, c, &sk);
    sw += r * r;
    si += r * r * v;
  }
  double var = 0.0, chi2 = 0.0, own_w = 0.0, own_i = 0.0;
  int m = 0;
  const double mean = si / sw;
  for (int k = from; k < ra->n; k++) {
    if (!(w[k - from] > 0.0)) continue;
    const double r = wmin / w[k - from], u = r * r / sw;
    double sk, v = strata_ravg_value(ra, k, c, &sk);
    var += u * u * sk * sk;
    if (sk > 0.0) {
      own_w += 1.0 / (sk * sk);
      own_i += v / (sk * sk);
    }
  }
  const double cmean = own_w > 0.0 ? own_i / own_w : mean;
  for (int k = from; k < ra->n; k++) {
    double sk, v = strata_ravg_value(ra, k, c, &sk);
    if (!(w[k - from] > 0.0) || !(sk > 0.0)) continue;
    chi2 += (v - cmean) / sk * ((v - cmean) / sk);
    m++;
  }
  *out = (strata_average){.mean = mean, .sigma = sqrt(var), .chi2 = chi2, .dof = m - 1, .q = 1.0};
  if (out->dof > 0) {
    out->chi2_dof = chi2 / out->dof;
    out->q = strata_gamma_q(0.5 * out->dof, 0.5 * chi2);
  } else {
    out->dof = 0;
  }
}

/* Measured iterations (and exact ones) are averaged by the errors
 * weight_errors gives, which it leaves in w[0 .. itn - from); with none,
 * zeros give 0 +- 0; with neither, tiny estimates whose errors underflowed
 * give their mean, with the error from their scatter. */
static void average_from(const strata_ravg *ra, int c, int from, double *w, strata_average *out)
{
  int n = 0, span = ra->n - from, best = strata_ravg_best(ra, c, from);
  double I[span > 0 ? span : 1], sig[span > 0 ? span : 1], wsig[span > 0 ? span : 1];
  if (ra->csum && ra->nsum >= ra->n && best == STRATA_ITN_MEASURED &&
      shared_weights(ra, from, w)) {
    shared_average(ra, c, from, w, out);
    return;
  }
  weight_errors(ra, c, from, best, w);
  for (int k = from; k < ra->n; k++) {
    double s, v = strata_ravg_value(ra, k, c, &s);
    if (strata_ravg_class(v, s) == best) {
      I[n] = v;
      sig[n] = s;
      wsig[n] = w[k - from];
      n++;
    }
  }
  if (best == STRATA_ITN_TINY) strata_stats_scatter(I, n, out);
  else strata_stats_average_by(I, sig, wsig, n, out);
}

/* The covariance of the averages of components a and b: the iterations'
 * covariances enter with the product of the two averages' weights, as
 * strata_ravg_average() left them.  An iteration that does not count for a component
 * has weight 0 there. */
static double average_cov(const strata_ravg *ra, int a, int b)
{
  const strata_average *A = &ra->cavg[a], *B = &ra->cavg[b];
  if (!(A->sigma > 0.0) || !(B->sigma > 0.0))
    return isnan(A->sigma) || isnan(B->sigma) ? NAN : 0.0; /* no data, or exact */
  if (a == b) return A->sigma * A->sigma;
  int span = ra->n - ra->first_kept, n = 0;
  double cab[span > 0 ? span : 1];
  for (int k = ra->first_kept; k < ra->n; k++, n++) cab[n] = strata_ravg_cov(ra, k, a, b);
  const double v = strata_stats_average_cov(comp_weights(ra, a), comp_weights(ra, b), cab, n);
  /* Many components: one whose iterations were all 0 (a bin never hit)
   * but whose error carries a restart's jump has no weights, and no
   * covariance with the others. */
  return isnan(v) && ra->csum ? 0.0 : v;
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
void strata_ravg_average(strata_ravg *ra)
{
  sum_components(ra);
  for (int c = 0; c < ra->ncomp; c++) {
    average_from(ra, c, ra->first_kept, comp_weights(ra, c), &ra->cavg[c]);
    if (ra->cjump[c] != 0.0) ra->cavg[c].sigma = hypot(ra->cavg[c].sigma, ra->cjump[c]);
  }
  /* average_cov is symmetric to the bit: each pair once. */
  const size_t n = (size_t)ra->ncomp;
  if (n > 1)
    for (size_t a = 0; a < n; a++)
      for (size_t b = a; b < n; b++)
        ra->cov[a * n + b] = ra->cov[b * n + a] = average_cov(ra, (int)a, (int)b);
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
static int newest_beyond_kept(const strata_ravg *ra, int c, int side)
{
  const int last = ra->n - 1, best = strata_ravg_best(ra, c, ra->first_kept);
  double s, v = strata_ravg_value(ra, last, c, &s);
  for (int k = ra->first_kept; k < last; k++) {
    double sk, vk = strata_ravg_value(ra, k, c, &sk);
    if (strata_ravg_class(vk, sk) == best && !(side * (fabs(v) - fabs(vk)) > 0.0)) return 0;
  }
  return 1;
}

/* A climb is a rise above every kept iteration by more than STRATA_CLIMB_RISE
 * of the average before it: finding more of a peak moves the estimate by
 * percents, while a map that has settled moves it by its errors, and
 * without the bound a settled map's chance rise restarts the average and
 * throws good iterations away (doc/design.md, "A climb's 1% bound"). */
#define STRATA_CLIMB_RISE 0.01

static int climbs(const strata_ravg *ra, int c, double before)
{
  double s, v = strata_ravg_value(ra, ra->n - 1, c, &s);
  return newest_beyond_kept(ra, c, 1) && fabs(v) - fabs(before) > STRATA_CLIMB_RISE * fabs(before);
}

/* The chance that some component of many reads Q below a bound by chance
 * alone grows with their number: beyond STRATA_MAX_COMP components the
 * bounds shrink as 1/ncomp, so that a histogram of a thousand bins
 * restarts no more often than eight components do (a bound for each at
 * ncomp / 8 times the chance restarted every adapting iteration of a
 * histogram of 1000 bins). */
static double family_scale(const strata_ravg *ra)
{
  return ra->ncomp > STRATA_MAX_COMP ? (double)STRATA_MAX_COMP / ra->ncomp : 1.0;
}

/* Any component that disagrees so tells that the map had not found the
 * integrand; all components keep one set of iterations, so that the
 * covariance of their averages stays defined.  before[c]: component c's
 * average without the newest iteration; climb[c]: whether the newest
 * climbs (climbs, with at least two kept iterations). */
static int disagrees(const strata_ravg *ra, const double *before, const int *climb)
{
  for (int c = 0; c < ra->ncomp; c++) {
    if (strata_ravg_nkept(ra, c) < 2 || newest_beyond_kept(ra, c, -1)) continue;
    double s, v = strata_ravg_value(ra, ra->n - 1, c, &s);
    /* (Signs compared, not the product taken: 1e-200 times 1e-150 is 0.) */
    const int same_sign = v != 0.0 && before[c] != 0.0 && !signbit(v) == !signbit(before[c]);
    /* Markov's bound, 1/ratio for each component, scaled alike. */
    if (climb[c] && same_sign && fabs(v) >= STRATA_CLIMB_RATIO / family_scale(ra) * fabs(before[c]))
      return 1;
    if (ra->cavg[c].q < (climb[c] ? STRATA_CLIMB_Q : STRATA_RESTART_Q) * family_scale(ra))
      return 1;
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
static double climb_carry(const strata_ravg *ra, int c, double before)
{
  if (ra->cjump[c] == 0.0) return 0.0;
  double s, step = strata_ravg_value(ra, ra->n - 1, c, &s) - before;
  return isfinite(step) ? STRATA_CLIMB_CARRY * step : 0.0;
}

/* cavg holds the average of the iterations before the newest when this
 * runs: the one a restart replaces.  The average restarted on the newest
 * iteration is that iteration's estimate.  A carry is set before the
 * average is taken (nothing it depends on comes from the average, and
 * disagrees reads only Q, which the carry leaves alone); a restart
 * replaces it by the jump. */
int strata_ravg_update(strata_ravg *ra, int adapt)
{
  double before[ra->ncomp];
  int climb[ra->ncomp];
  const int may_restart = adapt && ra->n - 1 > ra->first_kept;
  for (int c = 0; c < ra->ncomp; c++) {
    before[c] = ra->cavg[c].mean;
    /* Read once for the carry and the restart: neither the average nor
     * the carry changes what it reads. */
    climb[c] = may_restart && strata_ravg_nkept(ra, c) >= 2 && climbs(ra, c, before[c]);
    ra->cjump[c] = climb[c] ? climb_carry(ra, c, before[c]) : 0.0;
  }
  strata_ravg_average(ra);
  if (!(may_restart && disagrees(ra, before, climb))) return 0;
  ra->first_kept = ra->n - 1;
  for (int c = 0; c < ra->ncomp; c++) {
    double s, jump = strata_ravg_value(ra, ra->n - 1, c, &s) - before[c];
    ra->cjump[c] = isfinite(jump) ? jump : 0.0;
  }
  strata_ravg_average(ra);
  return 1;
}

void strata_ravg_all(const strata_ravg *ra, int c, strata_average *out)
{
  double w[ra->n > 0 ? ra->n : 1];
  average_from(ra, c, 0, w, out);
}
