/* A run's peaks (peakrun.h, doc/peaks.md). */
#include "peakrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "run.h"

int strata_peakrun_wanted(const strata_problem *pr, const strata_params *p,
                          const strata_backend *be, int *on, char *note)
{
  const int asked = p->peaks.search;
  const char *why = NULL;
  *on = 0;
  note[0] = '\0';
  if (asked == STRATA_PEAKS_OFF) return STRATA_OK;
  if (p->mode == STRATA_MODE_PLAIN || p->mode == STRATA_MODE_QMC)
    why = "modes plain and qmc have no map to add channels to";
  else if (pr->ncomp > 1)
    why = "a vector integrand has no channels yet";
  else if (p->qmc_map)
    why = "qmc_map draws the frozen map's points from QMC sets, which have no channels";
  else if (!be->eval)
    why = "the backend cannot evaluate the search's points";
  else if (be->keeps_state && asked == STRATA_PEAKS_AUTO)
    why = "the cuda backend searches only where asked (peaks.search = on)";
  if (!why) {
    *on = 1;
    return STRATA_OK;
  }
  if (asked == STRATA_PEAKS_ON)
    return strata_error(STRATA_EINVAL, "peaks.search = on: %s; set peaks.search = off", why);
  snprintf(note, 200, "off: %s", why);
  return STRATA_OK;
}

/* The Sobol' round's points: peaks.starts, or half an iteration's points
 * where that is more, up to SOBOL_MOST; none where peaks.starts is 0.  A
 * narrow peak that dominates f in a thousandth of the cube or less, beside
 * a broad peak that explains f everywhere else, is reached by few samples
 * of a run's, and by the round only when the round is large enough
 * (doc/peaks.md, "The search"); half an iteration keeps its cost a small
 * share of a run's. */
#define SOBOL_MOST 16384

static int sobol_starts(const strata_params *p)
{
  const int64_t half = p->neval / 2 < SOBOL_MOST ? p->neval / 2 : SOBOL_MOST;
  return p->peaks.starts > 0 && half > p->peaks.starts ? (int)half : p->peaks.starts;
}

int strata_peakrun_alloc(const strata_problem *pr, const strata_params *p, strata_peakrun **out)
{
  *out = NULL;
  strata_peakrun *pk = calloc(1, sizeof *pk);
  if (!pk) return strata_error(STRATA_ENOMEM, "out of memory for the peak search");
  strata_search_params sp;
  strata_search_params_default(&sp);
  sp.starts = sobol_starts(p);
  sp.ascents = p->peaks.ascents;
  int rc = strata_search_alloc(pr->dim, &sp, &pk->search);
  const size_t n = (size_t)p->maxiter;
  pk->khat = calloc(n, sizeof(double));
  pk->npoints = calloc(n, sizeof(double));
  pk->spread = calloc(n, sizeof(double));
  pk->nchannels = calloc(n, sizeof(int));
  pk->short_of = calloc(n, sizeof(int));
  pk->restart = calloc(n + 1, sizeof(int));
  if (rc == STRATA_OK && (!pk->khat || !pk->npoints || !pk->spread || !pk->nchannels ||
                          !pk->short_of || !pk->restart))
    rc = strata_error(STRATA_ENOMEM, "out of memory for the peak search");
  if (rc != STRATA_OK) {
    strata_peakrun_free(pk);
    return rc;
  }
  strata_channels_init(&pk->ch, pr->dim, p->peaks.uniform);
  *out = pk;
  return STRATA_OK;
}

void strata_peakrun_free(strata_peakrun *pk)
{
  if (!pk) return;
  strata_search_free(pk->search);
  strata_khat_top_free(&pk->top);
  free(pk->chsum);
  free(pk->gather);
  free(pk->khat);
  free(pk->npoints);
  free(pk->spread);
  free(pk->nchannels);
  free(pk->short_of);
  free(pk->restart);
  free(pk->state);
  free(pk);
}

/* A mode whose density a product of per-axis densities gives at least
 * this share of is the map's to sample (doc/peaks.md, "Which modes get a
 * channel"). */
#define MAP_COVERS 0.5

/* Channels for the search's modes, once it has found two or more (one
 * mode is the map's to sample) and one of them is beyond the map's cover
 * or a user's point: then every mode gets one, so that the map, trained
 * on what the channels leave, goes on to mass that no mode explains yet;
 * a run whose modes the map covers, every one, has no channel (doc/peaks.md,
 * "Which modes get a channel").  Returns whether a channel was added. */
static int sync_channels(strata_peakrun *pk)
{
  const int nm = strata_search_nmodes(pk->search);
  if (nm < 2) return 0;
  int beyond = pk->ch.nmode > 0;
  for (int j = 0; j < nm && !beyond; j++)
    beyond = strata_search_mode(pk->search, j)->known ||
             strata_search_product_cover(pk->search, j) < MAP_COVERS;
  if (!beyond) return 0;
  int added = 0;
  for (int j = pk->ch.nmode; j < nm && j < STRATA_MAX_CHANNELS; j++) {
    const strata_peak *md = strata_search_mode(pk->search, j);
    strata_channels_add(&pk->ch, md->m, md->chol);
    pk->share[j + 1] = NAN;
    added = 1;
  }
  pk->active = 1;
  return added;
}

/* The search's evaluator on the run's ranks: every rank runs the same
 * search and asks for the same batches, so each evaluates its share of a
 * batch and the ranks gather the values; the integrand sees every point
 * once, as the run's count says.  A failure on any rank is every rank's. */
typedef struct {
  strata_backend_evaluator one;
  strata_comm *comm;
} ranks_evaluator;

static int evaluate_on_ranks(void *ctx, int64_t n, const double *y, double *f)
{
  ranks_evaluator *e = ctx;
  strata_comm *comm = e->comm;
  const int size = comm->size, rank = comm->rank, dim = e->one.problem->dim;
  if (size < 2) return strata_backend_evaluate(&e->one, n, y, f);
  int64_t off[size + 1];
  for (int k = 0; k <= size; k++) off[k] = n * k / size;
  int rc = off[rank + 1] > off[rank]
               ? strata_backend_evaluate(&e->one, off[rank + 1] - off[rank],
                                         y + off[rank] * dim, f + off[rank])
               : STRATA_OK;
  double failed = rc != STRATA_OK;
  if (comm->allreduce_sum(comm, &failed, 1) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: the peak search's exchange failed", rank);
  if (failed > 0.0)
    return rc != STRATA_OK ? rc
                           : strata_error(STRATA_EPEER, "rank %d: the peak search's evaluation "
                                          "failed on another rank", rank);
  if (comm->allgather(comm, f, off) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: the peak search's exchange failed", rank);
  return STRATA_OK;
}

static int64_t iteration_neval(const strata_run *r, int k)
{
  const strata_params *p = &r->params;
  return strata_ravg_adapting(&r->ravg, k) || !p->neval_frozen ? p->neval : p->neval_frozen;
}

int strata_peakrun_before(strata_run *r)
{
  strata_peakrun *pk = r->peaks;
  ranks_evaluator ev = {{r->backend, &r->problem}, r->comm};
  const strata_problem *pr = &r->problem;
  const int dim = pr->dim;
  int rc = STRATA_OK;
  if (!pk->sobol_done) {
    const strata_peaks_params *kp = &r->params.peaks;
    if (kp->nknown > 0) {
      double y[STRATA_MAX_KNOWN * STRATA_MAX_DIM], f[STRATA_MAX_KNOWN];
      for (int i = 0; i < kp->nknown; i++)
        for (int d = 0; d < dim; d++)
          y[i * dim + d] = (kp->known[i][d] - pr->lower[d]) / (pr->upper[d] - pr->lower[d]);
      rc = evaluate_on_ranks(&ev, kp->nknown, y, f);
      if (rc == STRATA_OK)
        rc = strata_search_round(pk->search, kp->nknown, y, f, 1, evaluate_on_ranks, &ev);
    }
    if (rc == STRATA_OK)
      rc = strata_search_sobol(pk->search, r->params.seed, evaluate_on_ranks, &ev);
    if (rc != STRATA_OK) return rc;
    pk->sobol_done = 1;
    if (sync_channels(pk)) pk->restart[r->ravg.n] = 1;
  }
  if (!pk->active) return STRATA_OK;
  strata_channels_plan(&pk->ch, iteration_neval(r, r->ravg.n));
  if (r->strat->neval != pk->ch.n[0]) {
    if ((rc = strata_run_sync(r)) != STRATA_OK) return rc;
    strata_strat_rescale(r->strat, pk->ch.n[0]);
  }
  strata_channels_realise(&pk->ch, strata_strat_total(r->strat));
  return STRATA_OK;
}

/* The points the coming iteration draws. */
static int64_t points(const strata_run *r, const strata_plan *p)
{
  return r->peaks->active ? r->peaks->ch.N : strata_strat_total(p->strat);
}

void strata_peakrun_plan(strata_run *r, strata_plan *p)
{
  strata_peakrun *pk = r->peaks;
  p->peaks = 1;
  p->top = &pk->top;
  const int64_t cap = strata_khat_tail(points(r, p)) + 1;
  if (pk->top.cap != cap) {
    strata_khat_top_free(&pk->top);
    strata_khat_top_init(&pk->top, cap, r->problem.dim + 1);
  }
  strata_khat_top_clear(&pk->top);
  if (!pk->active) return;
  const strata_channels *ch = &pk->ch;
  const int64_t nb = strata_channels_nblocks(ch);
  const size_t n = (size_t)strata_channels_count(ch) + (size_t)nb * STRATA_CHANNEL_BLOCK_SUMS;
  if (n > pk->chsum_len) {
    free(pk->chsum);
    pk->chsum = malloc(sizeof(double) * n);
    pk->chsum_len = pk->chsum ? n : 0;
  }
  if (!pk->chsum) return; /* strata_peakrun_combine reports it */
  memset(pk->chsum, 0, sizeof(double) * n);
  p->channels = ch;
  p->nchannels = strata_channels_count(ch);
  p->chsum = pk->chsum;
  p->nchsum = n;
  const int rank = r->comm->rank, size = r->comm->size;
  p->chb0 = nb * rank / size;
  p->chb1 = nb * (rank + 1) / size;
}

/* Every rank's largest weights into every rank's list: the same list on
 * all, whatever the split. */
static int gather_tops(strata_run *r, strata_peakrun *pk)
{
  strata_comm *comm = r->comm;
  if (comm->size < 2) return STRATA_OK;
  strata_khat_top *t = &pk->top;
  strata_khat_top_settle(t); /* at most cap entries, the segment's room */
  const int w = 2 + t->dim;
  const size_t seg = 1 + (size_t)t->cap * (size_t)w, n = seg * (size_t)comm->size;
  if (n > pk->gather_len) {
    free(pk->gather);
    pk->gather = malloc(sizeof(double) * n);
    pk->gather_len = pk->gather ? n : 0;
    if (!pk->gather) return strata_error(STRATA_ENOMEM, "rank %d: out of memory", comm->rank);
  }
  int64_t off[comm->size + 1];
  for (int k = 0; k <= comm->size; k++) off[k] = (int64_t)seg * k;
  double *mine = pk->gather + seg * (size_t)comm->rank;
  mine[0] = (double)t->n;
  for (int64_t i = 0; i < t->n; i++) {
    double *e = mine + 1 + i * w;
    e[0] = t->w[i];
    e[1] = (double)t->index[i];
    memcpy(e + 2, strata_khat_top_point(t, i), sizeof(double) * (size_t)t->dim);
  }
  if (comm->allgather(comm, pk->gather, off) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: gathering the largest weights failed",
                        comm->rank);
  strata_khat_top_clear(t);
  for (int k = 0; k < comm->size; k++) {
    const double *s = pk->gather + seg * (size_t)k;
    for (int64_t i = 0; i < (int64_t)s[0]; i++) {
      const double *e = s + 1 + i * w;
      strata_khat_top_add(t, e[0], (int64_t)e[1], e + 2);
    }
  }
  return STRATA_OK;
}

int strata_peakrun_combine(strata_run *r, strata_plan *p)
{
  strata_peakrun *pk = r->peaks;
  if (pk->active && !p->chsum)
    return strata_error(STRATA_ENOMEM, "out of memory for the channels' sums");
  int rc = gather_tops(r, pk);
  if (rc != STRATA_OK) return rc;
  const int k = r->ravg.n;
  if (pk->active) {
    if (r->comm->size > 1 && r->comm->allreduce_sum(r->comm, p->chsum, p->nchsum) != 0)
      return strata_error(STRATA_ECOMM, "rank %d: combining the channels' sums failed",
                          r->comm->rank);
    strata_channels_estimate(&pk->ch, p->chsum + p->nchannels, &p->part[0], &p->part[1],
                             pk->mean);
    for (int c = 1; c <= pk->ch.nmode; c++)
      pk->short_of[k] |= pk->ch.n[c] < strata_channels_nmin(&pk->ch);
  }
  pk->npoints[k] = (double)points(r, p);
  /* A warm-up iteration is never kept: no claim and no report reads its
   * k-hat, and the fit is the dearest part of the list's upkeep.  Its list
   * is sorted all the same: the search's round takes its starts from it. */
  if (k < r->ravg.skip) {
    strata_khat_top_sort(&pk->top);
    pk->khat[k] = NAN;
  } else {
    pk->khat[k] = strata_khat_top_fit(&pk->top, (int64_t)pk->npoints[k]);
  }
  const strata_khat_top *t = &pk->top;
  pk->spread[k] = t->n > 1 && t->w[t->n - 1] > 0.0 ? t->w[0] / t->w[t->n - 1] : INFINITY;
  pk->nchannels[k] = pk->active ? strata_channels_count(&pk->ch) : 1;
  return STRATA_OK;
}

int strata_peakrun_after(strata_run *r, const strata_plan *p)
{
  strata_peakrun *pk = r->peaks;
  if (pk->active) {
    const double I = r->ravg.hist[r->ravg.n - 1].integral;
    for (int c = 1; c <= pk->ch.nmode; c++) pk->share[c] = I != 0.0 ? pk->mean[c] / I : NAN;
    double W[STRATA_MAX_CHANNELS + 2];
    for (int c = 0; c < p->nchannels; c++)
      W[c] = pk->ch.n[c] > 0 ? p->chsum[c] / (double)pk->ch.n[c] : 0.0;
    strata_channels_adapt(&pk->ch, W);
  }
  if (p->adapt && pk->top.n > 0) {
    strata_khat_top *t = &pk->top;
    const int dim = r->problem.dim;
    double *y = malloc(sizeof(double) * (size_t)t->n * (size_t)dim);
    double *f = malloc(sizeof(double) * (size_t)t->n);
    if (!y || !f) {
      free(y);
      free(f);
      return strata_error(STRATA_ENOMEM, "out of memory for the search's candidates");
    }
    for (int64_t i = 0; i < t->n; i++) {
      memcpy(y + i * dim, strata_khat_top_point(t, i), sizeof(double) * (size_t)dim);
      f[i] = strata_khat_top_point(t, i)[dim];
    }
    ranks_evaluator ev = {{r->backend, &r->problem}, r->comm};
    int rc = strata_search_round(pk->search, t->n, y, f, 0, evaluate_on_ranks, &ev);
    free(y);
    free(f);
    if (rc != STRATA_OK) return rc;
    /* Set after the last iteration too: the gate reads it. */
    if (sync_channels(pk)) pk->restart[r->ravg.n] = 1;
  }
  /* The search's evaluations count in the run's, not in an iteration's. */
  const int64_t spent = strata_search_evals(pk->search) - pk->search_evals;
  pk->search_evals += spent;
  r->neval_total += spent;
  return STRATA_OK;
}

int strata_peakrun_restarts(const strata_run *r, int k)
{
  return r->peaks && k < r->params.maxiter && r->peaks->restart[k];
}

/* The kept iteration whose k-hat is farthest above its limit: of those
 * whose largest weight is far above the rest where judged. */
static double worst_khat(const strata_run *r, int judged, int *itn, double *limit)
{
  const strata_peakrun *pk = r->peaks;
  double worst = -INFINITY, excess = -INFINITY;
  *itn = 0;
  *limit = NAN;
  for (int k = 0; k < r->ravg.n; k++) {
    if (!strata_ravg_kept(&r->ravg, k, 0) || !isfinite(pk->khat[k]) ||
        (judged && !(pk->spread[k] >= STRATA_PEAKS_FAR)))
      continue;
    const double lim = strata_khat_limit((int64_t)pk->npoints[k]);
    if (pk->khat[k] - lim > excess) {
      excess = pk->khat[k] - lim;
      worst = pk->khat[k];
      *itn = k + 1;
      *limit = lim;
    }
  }
  return *itn ? worst : NAN;
}

int strata_peakrun_gate(const strata_run *r, char *why, size_t size, double *budget)
{
  const strata_peakrun *pk = r->peaks;
  if (budget) *budget = 0.0;
  if (!pk) return 1;
  if (!pk->sobol_done) {
    if (why) snprintf(why, size, "the peak search did not run");
    return 0;
  }
  for (int k = 0; k < r->ravg.n; k++)
    if (strata_ravg_kept(&r->ravg, k, 0) && pk->short_of[k]) {
      if (why)
        snprintf(why, size, "a channel drew fewer than %lld points in iteration %d",
                 (long long)strata_channels_nmin(&pk->ch), k + 1);
      if (budget) {
        double least = 1.0;
        for (int c = 1; c <= pk->ch.nmode; c++)
          if (pk->ch.alpha[c] < least) least = pk->ch.alpha[c];
        *budget = (double)strata_channels_nmin(&pk->ch) / least;
      }
      return 0;
    }
  /* A mode that the round after the latest iteration found has a channel
   * no kept iteration sampled: the average lacks its mass.  The weight
   * that led the search to it may have been too lone for k-hat to see. */
  if (r->ravg.n > 0 && pk->restart[r->ravg.n]) {
    if (why)
      snprintf(why, size, "the search found a mode after iteration %d, which no kept iteration "
               "sampled", r->ravg.n);
    return 0;
  }
  int itn;
  double limit, kh = worst_khat(r, 1, &itn, &limit);
  if (itn && kh > limit) {
    if (why)
      snprintf(why, size, "k-hat %.2f in iteration %d's weights (limit %.2f), its largest "
               "%.3g times the tail's threshold: the variance is not trusted", kh, itn, limit,
               r->peaks->spread[itn - 1]);
    /* A weight far above the rest is a region no channel covers yet: more
     * points per iteration let the search's rounds reach it. */
    if (budget) *budget = 4.0 * pk->npoints[itn - 1];
    return 0;
  }
  return 1;
}

void strata_peakrun_iteration(const strata_run *r, int k, strata_iteration *it)
{
  it->khat = r->peaks->khat[k];
  it->nchannels = r->peaks->nchannels[k];
}

void strata_peakrun_result(const strata_run *r, strata_result *res)
{
  const strata_peakrun *pk = r->peaks;
  const strata_problem *pr = &r->problem;
  res->peaks_searched = pk->sobol_done;
  res->nmodes = strata_search_nmodes(pk->search);
  for (int j = 0; j < res->nmodes && j < STRATA_MAX_PEAKS; j++) {
    const strata_peak *md = strata_search_mode(pk->search, j);
    strata_result_peak *o = &res->modes[j];
    for (int d = 0; d < pr->dim; d++)
      o->x[d] = pr->lower[d] + (pr->upper[d] - pr->lower[d]) * md->m[d];
    o->logf = md->logf;
    o->known = md->known;
    o->share = NAN; /* no channel: its part is the map's */
    if (j < pk->ch.nmode) {
      o->weight = pk->ch.alpha[j + 1];
      o->share = pk->share[j + 1];
    }
  }
  /* The weights the last adaptation set, which the next iteration's
   * counts come from: one kind, adding up to 1. */
  res->nchannels = pk->active ? strata_channels_count(&pk->ch) : 1;
  res->alpha_map = pk->active ? pk->ch.alpha[0] : 1.0;
  res->alpha_uniform = pk->active ? pk->ch.alpha[pk->ch.nmode + 1] : 0.0;
  res->khat = worst_khat(r, 0, &res->khat_itn, &res->khat_limit);
  res->search_evals = pk->search_evals;
}

int64_t strata_peakrun_state_evals(const double *buf, size_t n)
{
  return n >= 5 ? (int64_t)buf[2] : 0;
}

/* sobol_done, active, search_evals, the arrays' length; the search's
 * state, with its size first; the channels', then their shares; the
 * per-iteration arrays. */
size_t strata_peakrun_state_size(const strata_run *r)
{
  const strata_peakrun *pk = r->peaks;
  return 5 + strata_search_state_size(pk->search) + strata_channels_state_size(r->problem.dim) +
         STRATA_MAX_CHANNELS + 6 * (size_t)r->ravg.n + 1;
}

const double *strata_peakrun_state_get(const strata_run *r)
{
  strata_peakrun *pk = r->peaks;
  /* The same buffer while it fits: a reader may still hold the last one. */
  const size_t size = strata_peakrun_state_size(r);
  if (size > pk->state_len) {
    double *more = realloc(pk->state, sizeof(double) * size);
    if (!more) return NULL;
    pk->state = more;
    pk->state_len = size;
  }
  double *buf = pk->state;
  /* The iterations done: a resume may run to another maxiter. */
  const size_t ns = strata_search_state_size(pk->search), n = (size_t)r->ravg.n;
  buf[0] = pk->sobol_done;
  buf[1] = pk->active;
  buf[2] = (double)pk->search_evals;
  buf[3] = (double)n;
  buf[4] = (double)ns;
  double *p = buf + 5;
  strata_search_state_get(pk->search, p);
  p += ns;
  strata_channels_state_get(&pk->ch, p);
  p += strata_channels_state_size(r->problem.dim);
  for (int c = 0; c < STRATA_MAX_CHANNELS; c++) *p++ = c < pk->ch.nmode ? pk->share[c + 1] : 0.0;
  for (size_t k = 0; k < n; k++) {
    p[k] = pk->khat[k];
    p[n + k] = pk->npoints[k];
    p[2 * n + k] = pk->nchannels[k];
    p[3 * n + k] = pk->short_of[k];
    p[4 * n + k] = pk->restart[k];
    p[5 * n + k] = pk->spread[k];
  }
  p[6 * n] = pk->restart[n];
  return buf;
}

int strata_peakrun_state_set(strata_run *r, const double *buf, size_t len)
{
  strata_peakrun *pk = r->peaks;
  const size_t nc = strata_channels_state_size(r->problem.dim);
  const size_t n = len >= 5 && buf[3] >= 0 && buf[3] <= r->params.maxiter ? (size_t)buf[3] : 0;
  if (len < 5 || (double)n != buf[3] || !(buf[4] >= 0) ||
      len != 5 + (size_t)buf[4] + nc + STRATA_MAX_CHANNELS + 6 * n + 1)
    return strata_error(STRATA_EINVAL, "the saved peak search's state does not fit this run "
                        "(%zu numbers)", len);
  const size_t ns = (size_t)buf[4];
  const double *p = buf + 5;
  if (strata_search_state_set(pk->search, p, ns) != STRATA_OK ||
      strata_channels_state_set(&pk->ch, p + ns, nc) != 0)
    return strata_error(STRATA_EINVAL, "the saved peak search's state is not valid");
  p += ns + nc;
  for (int c = 0; c < pk->ch.nmode; c++) pk->share[c + 1] = p[c];
  p += STRATA_MAX_CHANNELS;
  pk->sobol_done = buf[0] != 0.0;
  pk->active = buf[1] != 0.0;
  pk->search_evals = (int64_t)buf[2];
  const size_t most = (size_t)r->params.maxiter;
  memset(pk->restart, 0, sizeof(int) * (most + 1));
  for (size_t k = 0; k < n; k++) {
    pk->khat[k] = p[k];
    pk->npoints[k] = p[n + k];
    pk->nchannels[k] = (int)p[2 * n + k];
    pk->short_of[k] = p[3 * n + k] != 0.0;
    pk->restart[k] = p[4 * n + k] != 0.0;
    pk->spread[k] = p[5 * n + k];
  }
  pk->restart[n] = p[6 * n] != 0.0;
  return STRATA_OK;
}
