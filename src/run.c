#include "run.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "estimate.h"
#include "hash.h"
#include "lostpeak.h"
#include "maprefine.h"
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
  return strata_ravg_adapting(&r->ravg, k);
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

/* Iterations whose rows strata_iteration.comp keeps: every one up to
 * STRATA_MAX_COMP components, beyond that only the newest (8 ncomp^2
 * bytes each). */
static int creport_slots(const strata_run *r)
{
  return r->ncomp > STRATA_MAX_COMP ? 1 : r->params.maxiter;
}

static void map_resolution(strata_run *r);

/* The samples of a frozen-map iteration. */
static int64_t frozen_neval(const strata_params *p)
{
  return p->neval_frozen ? p->neval_frozen : p->neval;
}

/* The finer stratification of the frozen map's iterations in a long run
 * (average.h, strata_ravg_finer): a budget of neval/2 hypercubes where the
 * run's stratification takes neval/4 (strat.h), so that each still holds
 * 2 samples at least.  Only where the rule can act (a scalar integrand of
 * a vegas mode drawing pseudo-random points, at least
 * STRATA_ADAPT_MORE_AFTER adapting iterations) and the budget
 * gives more hypercubes per axis; its counts are written when it is first
 * sampled (finer_ready).  Allocated now, so that no rank can fail to
 * switch where the others do, and whatever maxiter, which a resumed run
 * may raise (its pages are touched only once sampled). */
static int finer_layout(strata_run *r)
{
  const strata_params *p = &r->params;
  if (!vegas_mode(p) || r->qmc || r->ncomp != 1 || p->adapt_iters < STRATA_ADAPT_MORE_AFTER)
    return STRATA_OK;
  const int M = strata_strat_per_axis(r->problem.dim, frozen_neval(p) / 2, p->max_nhcube);
  if (M <= r->strat->M) return STRATA_OK;
  if (!(r->fine = strata_strat_alloc_finer(r->strat, M))) return STRATA_ENOMEM;
  r->ravg.finer = 1;
  return STRATA_OK;
}

int strata_run_finer(const strata_run *r, int k)
{
  return r->fine && strata_ravg_finer(&r->ravg, k) && !(r->peaks && r->peaks->active);
}

/* The finer stratification's counts carried over from the coarse
 * allocation as it stands, where the coming iteration samples it: the
 * coarse one does not move once the map is frozen, so this happens once,
 * at the switch (and again on a resume, from the saved allocation). */
static int finer_ready(strata_run *r)
{
  if (!strata_run_finer(r, r->ravg.n) || r->fine_of == r->strat->generation) return STRATA_OK;
  int rc = strata_run_sync(r);
  if (rc != STRATA_OK) return rc;
  /* (The levels are free between iterations: the scratch of the carry.) */
  if (strata_strat_carry(r->fine, r->strat, frozen_neval(&r->params), r->levels) != 0)
    return strata_error(STRATA_ENOMEM, "out of memory for the finer stratification");
  r->fine_of = r->strat->generation;
  return STRATA_OK;
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
  r->packed_uniforms = 1;
  /* A vector integrand's map follows one component, and the sharper it
   * gets the fewer samples the others see where it is small: their
   * estimates come out low with errors blind to it (doc/design.md, "The
   * map's resolution").  So its map does not split. */
  const int split = vegas_mode(p) && pr->ncomp <= 1,
            ninc = strata_map_ninc_for(p->ninc, p->neval, pr->dim, p->max_nhcube, split);
  r->map = strata_map_alloc(pr->dim, ninc, p->mode == STRATA_MODE_VEGAS1D);
  /* With no adapting iteration every iteration is a frozen one. */
  const int64_t nfrozen = frozen_neval(p);
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
  r->ncomp = pr->ncomp > 1 ? pr->ncomp : 1;
  /* Plain MC's and QMC's estimates combine every cell's sums (the same
   * bits on any number of ranks), which would be ncomp^2 / 2 numbers a
   * cell. */
  if (r->ncomp > STRATA_MAX_COMP && (!vegas_mode(p) || p->qmc_map)) {
    strata_run_free(r);
    return strata_error(STRATA_EINVAL, "ncomp = %d: mode %s%s takes at most %d components "
                        "(modes vegas+, vegas and vegas1d up to %d)", pr->ncomp,
                        strata_mode_name(p->mode), p->qmc_map ? " with qmc_map" : "",
                        STRATA_MAX_COMP, STRATA_MAX_NCOMP);
  }
  if (strata_ravg_init(&r->ravg, r->ncomp, p->maxiter, vegas_mode(p) ? p->adapt_iters : 0,
                       r->qmc != NULL, first_kept(p)) != STRATA_OK)
    goto nomem;
  if (!r->map || !r->strat) goto nomem;
  if (finer_layout(r) != STRATA_OK) goto nomem;
  if (r->ncomp > 1) {
    r->creport = calloc((size_t)creport_slots(r) * (size_t)r->ncomp *
                            (size_t)STRATA_COMP_ROW(r->ncomp), sizeof(double));
    if (!r->creport) goto nomem;
  }
  strata_map_init(r->map, pr->lower, pr->upper);
  map_resolution(r);
  size_t cells = (size_t)pr->dim * (size_t)r->map->ninc;
  int64_t ncell = r->strat->nhcube;
  if (r->qcells && r->qcells->nhcube > ncell) ncell = r->qcells->nhcube;
  if (r->fine && r->fine->nhcube > ncell) ncell = r->fine->nhcube;
  r->buf = malloc(sizeof(double) * strata_plan_buffer_size(ncell, r->ncomp, cells));
  r->slices = malloc(sizeof(int64_t) * ((size_t)comm->size + 1));
  r->cshift = calloc(2 * (size_t)r->ncomp, sizeof(double));
  if (!r->buf || !r->slices || !r->cshift) goto nomem;
  r->next_cshift = r->cshift + r->ncomp;
  if (strata_strat_moves(r->strat) &&
      !(r->levels = malloc(sizeof(double) * (size_t)ncell)))
    goto nomem;
  if (comm->size > 1 && vegas_mode(p) && !(r->split = strata_split_alloc(comm->size)))
    goto nomem;
  int search;
  rc = strata_peakrun_wanted(pr, p, be, &search, r->peaks_note);
  if (rc == STRATA_OK && search) rc = strata_peakrun_alloc(pr, p, &r->peaks);
  if (rc != STRATA_OK) {
    strata_run_free(r);
    return rc;
  }
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
  strata_strat_free(r->fine);
  strata_qmc_free(r->qmc);
  free(r->buf);
  free(r->slices);
  strata_split_free(r->split);
  free(r->levels);
  strata_ravg_free(&r->ravg);
  free(r->creport);
  free(r->cshift);
  strata_peakrun_free(r->peaks);
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
  const strata_average *a = &r->ravg.cavg[c];
  if (!(a->sigma == 0.0)) return 1;
  if (a->mean == 0.0) return r->params.epsabs > 0.0;
  if (fabs(a->mean) < sqrt(DBL_MIN)) return 0;
  for (int k = 0; k < r->ravg.n; k++) {
    double sg;
    if (strata_ravg_kept(&r->ravg, k, c) &&
        fabs(strata_ravg_value(&r->ravg, k, c, &sg) - a->mean) > 1e-13 * fabs(a->mean))
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
  const strata_average *a = &r->ravg.cavg[c];
  if (strata_ravg_nkept(&r->ravg, c) < 2) return 0;
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
  const int n = r->ravg.first_kept > 0 ? r->ravg.first_kept : 1,
            best = strata_ravg_best(&r->ravg, c, r->ravg.first_kept);
  double I[n], s[n];
  int itn[n], m = 0;
  for (int k = 0; k < r->ravg.first_kept && k < r->ravg.n; k++) {
    double sk, vk = strata_ravg_value(&r->ravg, k, c, &sk);
    if (!adapting(r, k) || !(sk > 0.0) || strata_ravg_class(vk, sk) != best) continue;
    I[m] = vk;
    s[m] = sk;
    itn[m++] = k + 1;
  }
  if (strata_ravg_nkept(&r->ravg, c) < 2 || best != STRATA_ITN_MEASURED) m = 0;
  return strata_lost_check(I, s, itn, m, r->ravg.cavg[c].mean, r->ravg.cavg[c].sigma, out);
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
  return any && (r->ncomp <= STRATA_MAX_COMP || out->z > strata_lost_z_family(r->ncomp));
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
  for (int c = 0; c < r->ncomp; c++) exact &= r->ravg.cavg[c].sigma == 0.0;
  return exact ? 0.0 : strata_lost_thin(r->problem.dim, r->strat->M, p->max_nhcube);
}

/* The rule without the peaks' gate. */
static int rule_met(const strata_run *r)
{
  for (int c = 0; c < r->ncomp; c++)
    if (!comp_converged(r, c)) return 0;
  strata_lost l;
  return !run_lost(r, &l) && !(run_thin(r) > 0.0);
}

static int check_converged(const strata_run *r)
{
  return rule_met(r) && strata_peakrun_gate(r, NULL, 0, NULL);
}

/* Iteration k (0-based, just recorded) into the average: the average
 * restarts on it where a new channel began with it, or where the map's
 * adaptation says so. */
static int update_average(strata_run *r, int k, int adapt)
{
  const int forced = strata_peakrun_restarts(r, k) && r->ravg.first_kept < k;
  if (forced) r->ravg.first_kept = k;
  return strata_ravg_update(&r->ravg, adapt) || forced;
}

/* Component c's target: the larger of epsrel |average| and epsabs. */
static double comp_target(const strata_run *r, int c)
{
  const strata_params *p = &r->params;
  return fmax(p->epsrel * fabs(r->ravg.cavg[c].mean), p->epsabs);
}

/* The evaluations a run that stopped short of its target needs at the rate
 * it has seen: the kept iterations' N_kept evaluations gave an error sigma,
 * and errors fall as 1/sqrt(N) once the map is trained, so the kept ones
 * need N_kept (sigma / target)^2, and a run of as many iterations, each
 * (sigma / target)^2 times larger, its whole total that much more.  0 where
 * every error is within its target, or there is no target. */
static double neval_needed(const strata_run *r)
{
  if (r->converged || r->ravg.n == 0 || !(r->params.epsrel > 0.0 || r->params.epsabs > 0.0))
    return 0.0;
  double need = 0.0;
  for (int c = 0; c < r->ncomp; c++) {
    const double s = r->ravg.cavg[c].sigma, t = comp_target(r, c);
    /* Tiny estimates whose errors underflowed (their scatter is the
     * error) or zeros: no rate to scale. */
    if (strata_ravg_nkept(&r->ravg, c) == 0 ||
        strata_ravg_best(&r->ravg, c, r->ravg.first_kept) != STRATA_ITN_MEASURED || !(t > 0.0) ||
        !(s > t) || !isfinite(s))
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
  double *rows = r->creport + (size_t)(k % creport_slots(r)) * (size_t)nc * (size_t)w;
  for (int c = 0; c < nc; c++) {
    double *row = rows + c * w;
    row[STRATA_COMP_INTEGRAL] = strata_ravg_value(&r->ravg, k, c, &row[STRATA_COMP_SIGMA]);
    row[STRATA_COMP_AVG] = r->ravg.cavg[c].mean;
    row[STRATA_COMP_AVG_SIGMA] = r->ravg.cavg[c].sigma;
    row[STRATA_COMP_CHI2_DOF] = r->ravg.cavg[c].chi2_dof;
    row[STRATA_COMP_Q] = r->ravg.cavg[c].q;
    for (int b = 0; b < nc; b++) {
      row[STRATA_COMP_COV + b] = strata_ravg_cov(&r->ravg, k, c, b);
      row[STRATA_COMP_COV + nc + b] = r->ravg.cov[c * nc + b];
    }
  }
  return rows;
}

/* The report of the iteration just combined (hist[itn - 1]). */
static void describe(strata_run *r, int restarted, int adapt, strata_iteration *out)
{
  const strata_itn_record *rec = &r->ravg.hist[r->ravg.n - 1];
  memset(out, 0, sizeof *out);
  out->itn = r->ravg.n;
  out->integral = rec->integral;
  out->sigma = rec->sigma;
  out->neval = rec->neval;
  out->kept = strata_ravg_kept(&r->ravg, r->ravg.n - 1, 0);
  out->restarted = restarted;
  out->avg = r->ravg.cavg[0].mean;
  out->avg_sigma = r->ravg.cavg[0].sigma;
  out->chi2_dof = r->ravg.cavg[0].chi2_dof;
  out->q = r->ravg.cavg[0].q;
  out->adapting = adapt;
  out->time_s = rec->time_s;
  out->ncomp = r->ncomp;
  if (r->ncomp > 1) out->comp = describe_comp(r, r->ravg.n - 1);
  out->khat = NAN;
  out->nchannels = 1;
  if (r->peaks) strata_peakrun_iteration(r, r->ravg.n - 1, out);
}

/* Replays the averaging exactly as the iterations first ran it, so that
 * restarts, the kept flags and every reported row come out the same. */
static void replay(strata_run *r, strata_iteration_cb cb, void *ctx)
{
  int done = r->ravg.n;
  strata_ravg_reset(&r->ravg);
  for (r->ravg.n = 1; r->ravg.n <= done; r->ravg.n++) {
    int adapt = adapting(r, r->ravg.n - 1);
    int restarted = update_average(r, r->ravg.n - 1, adapt);
    if (cb) {
      r->converged = check_converged(r);
      strata_iteration it;
      describe(r, restarted, adapt, &it);
      cb(&it, ctx);
    }
  }
  r->ravg.n = done;
  strata_ravg_average(&r->ravg);
  r->converged = check_converged(r);
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
  st->itn = r->ravg.n;
  st->neval_total = r->neval_total;
  st->time_s = r->time_s;
  st->naxes = strata_map_naxes(r->map);
  st->ninc = r->map->ninc;
  st->edges = r->map->edges;
  st->nhcube = r->strat->nhcube;
  st->nh = r->strat->nh;
  st->hist = r->ravg.hist;
  st->ncomp = r->ncomp > 1 ? r->ncomp : 0;
  st->comp_hist = r->ravg.chist;
  st->seed = r->params.seed;
  st->converged = r->converged;
  st->ravg = &r->ravg;
  st->peaks = r->peaks ? strata_peakrun_state_get(r) : NULL;
  st->npeaks = st->peaks ? strata_peakrun_state_size(r) : 0;
  st->adapt_more = 1;
  st->finer = r->ravg.finer;
  st->packed_uniforms = r->packed_uniforms;
  st->nfine = r->fine && r->fine_of ? r->fine->nhcube : 0;
  st->fine_nh = st->nfine ? r->fine->nh : NULL;
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

/* A saved allocation of n hypercubes: at least 2 samples each, and no
 * more in all than budget and the floor of 2 per hypercube. */
static int check_allocation(const int64_t *nh, int64_t n, int64_t budget, const char *which)
{
  const int64_t most = budget + 2 * n;
  int64_t sum = 0;
  for (int64_t h = 0; h < n; h++) {
    if (nh[h] < 2)
      return strata_error(STRATA_EINVAL, "saved%s allocation gives hypercube %lld %lld "
                          "samples (at least 2)", which, (long long)h, (long long)nh[h]);
    if (nh[h] > most - sum) /* sum + nh[h] > most, without overflow */
      return strata_error(STRATA_EINVAL, "saved%s allocation gives hypercube %lld %lld "
                          "samples, beyond the %lld this job can allocate in all (%lld and "
                          "2 per hypercube)", which, (long long)h, (long long)nh[h],
                          (long long)most, (long long)budget);
    sum += nh[h];
  }
  return STRATA_OK;
}

/* A saved state is checked as a whole before any of it is used: a file
 * that passed its checksums may still come from a build with other rules,
 * and a half-applied state would sample garbage without saying so. */
static int check_state(const strata_run *r, const strata_run_state *st)
{
  const int naxes = strata_map_naxes(r->map), ninc = r->map->ninc;
  if (st->naxes != naxes || (st->ninc != ninc && st->ninc != strata_run_map_base(r)) ||
      st->nhcube != r->strat->nhcube)
    return strata_error(STRATA_EINVAL, "saved state does not fit this job: map %d x %d and "
                        "%lld hypercubes saved, %d x %d and %lld here", st->naxes, st->ninc,
                        (long long)st->nhcube, naxes, ninc, (long long)r->strat->nhcube);
  if (st->itn < 0 || st->itn > r->params.maxiter)
    return strata_error(STRATA_EINVAL, "saved state holds %d iterations, more than "
                        "vegas.maxiter = %d", st->itn, r->params.maxiter);
  const int bad = strata_map_edges_bad_axis(st->edges, naxes, st->ninc);
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
  int rc = check_allocation(st->nh, st->nhcube, budget, "");
  if (rc != STRATA_OK) return rc;
  if (st->nfine && (!r->fine || st->nfine != r->fine->nhcube))
    return strata_error(STRATA_EINVAL, "saved state has a finer stratification of %lld "
                        "hypercubes, this job %lld", (long long)st->nfine,
                        (long long)(r->fine ? r->fine->nhcube : 0));
  if (st->nfine && (rc = check_allocation(st->fine_nh, st->nfine, budget, " finer")) != STRATA_OK)
    return rc;
  int64_t total = 0;
  for (int k = 0; k < st->itn; k++) {
    const strata_itn_record *h = &st->hist[k];
    if (!isfinite(h->integral) || !(h->sigma >= 0.0) || !isfinite(h->sigma) || h->neval < 2)
      return strata_error(STRATA_EINVAL, "saved iteration %d is not a valid result "
                          "(%g +- %g, %lld evaluations)", k + 1, h->integral, h->sigma,
                          (long long)h->neval);
    total += h->neval;
  }
  if (st->npeaks) total += strata_peakrun_state_evals(st->peaks, st->npeaks);
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
  const int n = r->map->ninc, group = n / st->ninc;
  for (int a = 0; a < st->naxes; a++)
    for (int k = 0; k <= n; k++)
      r->map->edges[(size_t)a * (size_t)(n + 1) + (size_t)k] =
          strata_map_subdivide(st->edges + (size_t)a * (size_t)(st->ninc + 1), group, k);
  r->map->generation = strata_stamp_next(); /* devices holding a copy of the map re-upload it */
  strata_strat_restore(r->strat, st->nh);
  if (st->itn > 0) memcpy(r->ravg.hist, st->hist, sizeof *r->ravg.hist * (size_t)st->itn);
  if (st->itn > 0 && r->ncomp > 1)
    memcpy(r->ravg.chist, st->comp_hist,
           sizeof(double) * STRATA_CHIST_ROW(r->ncomp) * (size_t)st->itn);
  r->ravg.n = st->itn;
  const int nadapt = vegas_mode(&r->params) ? r->params.adapt_iters : 0;
  if (st->adapt_more) strata_ravg_adapt_replay(&r->ravg, nadapt);
  else r->ravg.nadapt = nadapt;
  r->ravg.finer = r->fine && st->finer;
  r->packed_uniforms = st->packed_uniforms;
  if (st->nfine) {
    strata_strat_restore(r->fine, st->fine_nh);
    r->fine_of = r->strat->generation;
  }
  map_resolution(r);
  r->neval_total = st->neval_total;
  r->time_s = st->time_s;
  if (r->peaks) {
    rc = st->npeaks ? strata_peakrun_state_set(r, st->peaks, st->npeaks)
                    : strata_error(STRATA_EINVAL, "the saved state lacks the peak search's "
                                   "(peaks.search is on in this job)");
    if (rc != STRATA_OK) return rc;
  }
  replay(r, cb, ctx);
  r->hcubes = st->itn > 0 && strata_run_finer(r, st->itn - 1) ? r->fine->nhcube
                                                               : r->strat->nhcube;
  return finer_ready(r);
}

uint64_t strata_run_state_hash(const strata_run *r)
{
  sync_for_reading(r);
  uint64_t h = STRATA_HASH64_INIT;
  const size_t nedges = (size_t)strata_map_naxes(r->map) * (size_t)(r->map->ninc + 1);
  h = strata_hash64(h, r->map->edges, sizeof(double) * nedges);
  h = strata_hash64(h, r->strat->nh, sizeof(int64_t) * (size_t)r->strat->nhcube);
  if (r->fine && r->fine_of)
    h = strata_hash64(h, r->fine->nh, sizeof(int64_t) * (size_t)r->fine->nhcube);
  for (int k = 0; k < r->ravg.n; k++) { /* wall times differ by nature: left out */
    h = strata_hash64(h, &r->ravg.hist[k].integral, sizeof(double));
    h = strata_hash64(h, &r->ravg.hist[k].sigma, sizeof(double));
    h = strata_hash64(h, &r->ravg.hist[k].neval, sizeof(int64_t));
    if (r->ncomp > 1)
      h = strata_hash64(h, r->ravg.chist + (size_t)k * STRATA_CHIST_ROW(r->ncomp),
                sizeof(double) * STRATA_CHIST_ROW(r->ncomp));
  }
  int head[3] = {r->ravg.n, r->ravg.first_kept, r->converged};
  h = strata_hash64(h, head, sizeof head);
  const double *peaks = r->peaks ? strata_peakrun_state_get(r) : NULL;
  if (peaks) h = strata_hash64(h, peaks, sizeof(double) * strata_peakrun_state_size(r));
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
                      "run.check_ranks)", first, r->ravg.n,
                      (unsigned long long)hash_from_pieces(hash + 4 * first),
                      (unsigned long long)root, ndiff, size);
  free(hash);
  return rc;
}

static int overflowed(const strata_run *r, const strata_strat *cells, int64_t bad, double near)
{
  return strata_error(STRATA_ENOTFINITE,
                      "integrand '%s': iteration %d: the sums of %s %lld overflowed "
                      "(values near %g); rescale the integrand",
                      r->problem.name ? r->problem.name : "(unnamed)", r->ravg.n + 1,
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
                                    r->ravg.n + 1, est[0], est[1])
                     : strata_error(STRATA_ENOTFINITE,
                                    "integrand '%s': iteration %d overflowed (component %d: "
                                    "estimate %g, variance %g); rescale the integrand",
                                    r->problem.name ? r->problem.name : "(unnamed)",
                                    r->ravg.n + 1, c, est[c], est[nc + c * nc + c]);
  }
  if (nc > 1)
    memcpy(r->ravg.chist + (size_t)r->ravg.n * STRATA_CHIST_ROW(nc), est,
           sizeof(double) * STRATA_CHIST_ROW(nc));
  r->ravg.hist[r->ravg.n].integral = est[0];
  r->ravg.hist[r->ravg.n].sigma = sqrt(est[nc]);
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

/* The plan's samples drawn by the backend, into the sums it names. */
static int sample(strata_run *r, strata_plan *p)
{
  memset(p->reduce, 0, sizeof(double) * p->nreduce);
  if (p->qmc) strata_qmc_randomize(r->qmc, r->params.seed, p->iteration);
  double ts = now_s();
  int rc = r->backend->sample(r->backend, p);
  r->sample_time_s = now_s() - ts;
  if (rc != STRATA_OK) return rc;
  /* Sums beyond the largest double are this rank's to report when it
   * holds them alone (main ends the other ranks). */
  return p->bad >= 0 ? overflowed(r, p->strat, p->bad, p->bad_near) : STRATA_OK;
}

/* The ranks' sums added where the plan says, and from the cells' sums of
 * plain MC and QMC the estimate, the same on every rank. */
static int combine(strata_run *r, strata_plan *p)
{
  double tc = now_s();
  int crc = 0;
  if (p->combine != STRATA_COMBINE_EXCHANGE)
    crc = r->comm->allreduce_sum(r->comm, p->reduce, p->nreduce);
  if (crc == 0 && p->gather_levels) {
    slice_bounds(r, p->strat, r->slices);
    crc = r->comm->allgather(r->comm, p->level, r->slices);
  }
  r->comm_time_s += now_s() - tc;
  if (crc != 0)
    return strata_error(STRATA_ECOMM, "rank %d: combining the iteration's sums failed",
                        r->comm->rank);
  if (p->combine != STRATA_COMBINE_CELLS) return STRATA_OK;
  const strata_strat *cells = p->strat;
  const int nc = p->ncomp;
  const double *sum1 = nc > 1 ? p->c1 : p->s1, *sum2 = nc > 1 ? p->c2 : p->s2;
  const double *shifts = nc > 1 ? p->cshift : &p->shift;
  int64_t bad = -1, adapt_bad = -1;
  double scratch[2];
  if (strata_estimate_cov(p->estimator, cells, nc, sum1, sum2, shifts, r->params.nrand, p->part,
                          p->part + nc, &bad) != 0)
    return overflowed(r, cells, bad, sum1[bad * nc] / (double)cells->nh[bad] + shifts[0]);
  if (nc > 1 && strata_estimate(p->estimator, cells, p->s1, p->s2, p->shift, r->params.nrand,
                                &scratch[0], &scratch[1], &adapt_bad) != 0)
    return overflowed(r, cells, adapt_bad,
                      p->s1[adapt_bad] / (double)cells->nh[adapt_bad] + p->shift);
  return STRATA_OK;
}

/* The iteration's estimate into the history. */
static int record(strata_run *r, const strata_plan *p)
{
  int rc = record_estimate(r, p->part);
  if (rc != STRATA_OK) return rc;
  strata_itn_record *rec = &r->ravg.hist[r->ravg.n];
  rec->neval = strata_strat_total(p->strat);
  if (p->channels) rec->neval += p->channels->N - p->channels->n[0];
  r->neval_total += rec->neval;
  r->ravg.n++;
  return STRATA_OK;
}

/* The map and the allocation adapted where the plan says. */
static int adapt(strata_run *r, const strata_plan *p)
{
  /* The finer stratification of a long run's frozen map goes on
   * allocating among its hypercubes (average.h, strata_ravg_finer). */
  if (p->adapt_at == STRATA_ADAPT_NONE) {
    if (p->reallocate) strata_strat_allocate(r->fine, p->level);
    return STRATA_OK;
  }
  const strata_params *prm = &r->params;
  int rc = r->backend->adapt(r->backend, p, r->map, r->strat);
  if (rc != STRATA_OK) return rc;
  /* After the last adapting iteration, so that a checkpoint written now
   * already holds the frozen iterations' allocation. */
  if (r->ravg.n == r->ravg.nadapt && prm->neval_frozen &&
      prm->neval_frozen != r->strat->neval) {
    if ((rc = strata_run_sync(r)) != STRATA_OK) return rc;
    strata_strat_rescale(r->strat, prm->neval_frozen);
  }
  return STRATA_OK;
}

int strata_run_map_base(const strata_run *r)
{
  const strata_params *p = &r->params;
  return strata_map_base_ninc(p->ninc, p->neval, r->problem.dim, p->max_nhcube);
}

int strata_run_map_group(const strata_run *r, int k)
{
  const strata_params *p = &r->params;
  const int dim = r->problem.dim, base = strata_run_map_base(r),
            most = strata_map_max_splits(base, p->neval, dim, r->map->ninc),
            refined = k < r->ravg.nadapt ? k : r->ravg.nadapt;
  return strata_map_group_for(r->map->ninc, base, strata_map_splits_at(refined, most));
}

/* The resolution the map samples the next iteration at, and refines at
 * after it: the splits of the refinements so far (map.h). */
static void map_resolution(strata_run *r)
{
  r->map->group = strata_run_map_group(r, r->ravg.n);
}

/* Converged or at maxiter: no iteration follows, whatever the budget. */
static int run_ended(const strata_run *r)
{
  return r->converged || r->ravg.n >= r->params.maxiter;
}

int strata_run_step(strata_run *r, strata_iteration *out)
{
  if (r->sync_rc != STRATA_OK) return r->sync_rc;
  double t0 = now_s();
  map_resolution(r);
  strata_plan plan;
  int rc = r->peaks ? strata_peakrun_before(r) : STRATA_OK;
  if (rc != STRATA_OK) return rc;
  if ((rc = finer_ready(r)) != STRATA_OK) return rc;
  strata_plan_make(r, &plan);
  if (r->peaks) strata_peakrun_plan(r, &plan);
  rc = sample(r, &plan);
  if (rc == STRATA_OK) rc = combine(r, &plan);
  if (rc == STRATA_OK && r->peaks) rc = strata_peakrun_combine(r, &plan);
  if (rc == STRATA_OK) rc = record(r, &plan);
  if (rc == STRATA_OK) strata_ravg_adapt_more(&r->ravg);
  if (rc == STRATA_OK) rc = adapt(r, &plan);
  if (rc == STRATA_OK && r->peaks) rc = strata_peakrun_after(r, &plan);
  if (rc != STRATA_OK) return rc;
  r->hcubes = plan.strat == r->fine ? r->fine->nhcube : r->strat->nhcube;
  int restarted = update_average(r, r->ravg.n - 1, plan.adapt);
  r->converged = check_converged(r);
  /* The finer stratification made ready for the next iteration, unless
   * the run has ended: a resumed run that goes on carries it over then
   * (strata_run_restore), to the same counts. */
  if (!run_ended(r) && (rc = finer_ready(r)) != STRATA_OK) return rc;
  double dt = now_s() - t0;
  r->time_s += dt;
  r->ravg.hist[r->ravg.n - 1].time_s = dt;
  if (out) describe(r, restarted, plan.adapt, out);
  return r->check_ranks && r->comm->size > 1 ? check_ranks(r) : STRATA_OK;
}

int strata_run_finished(const strata_run *r)
{
  if (run_ended(r)) return 1;
  /* The next iteration draws about neval samples (its cells' current
   * total); do not start one that would break maxeval. */
  int64_t next = strata_strat_total(strata_plan_cells(r, r->ravg.n));
  if (r->peaks && r->peaks->active) next += r->peaks->ch.N - r->peaks->ch.n[0];
  return r->neval_total + next > r->params.maxeval;
}

void strata_run_components(const strata_run *r, int n, double *integral, double *sigma,
                           double *chi2_dof, double *q, double *cov)
{
  const int nc = r->ncomp;
  for (int c = 0; c < n; c++) {
    /* A run that maxeval stopped inside the warm-up still has estimates:
     * their average stands (converged stays no) rather than none. */
    strata_average warm;
    const strata_average *a = &r->ravg.cavg[c];
    if (strata_ravg_nkept(&r->ravg, c) == 0 && r->ravg.n > 0) {
      strata_ravg_all(&r->ravg, c, &warm);
      a = &warm;
    }
    const int some = r->ravg.n > 0;
    if (integral) integral[c] = some ? a->mean : NAN;
    if (sigma) sigma[c] = some ? a->sigma : NAN;
    if (chi2_dof) chi2_dof[c] = some ? a->chi2_dof : 0.0;
    if (q) q[c] = some ? a->q : NAN;
    for (int b = 0; cov && b < n; b++)
      cov[c * n + b] = nc > 1 ? r->ravg.cov[c * nc + b] : (some ? a->sigma * a->sigma : NAN);
  }
}

void strata_run_result(const strata_run *r, strata_result *res)
{
  memset(res, 0, sizeof *res);
  res->ncomp = r->ncomp;
  res->dim = r->problem.dim;
  strata_run_components(r, r->ncomp < STRATA_MAX_COMP ? r->ncomp : STRATA_MAX_COMP,
                        res->comp_integral, res->comp_sigma, res->comp_chi2_dof, res->comp_q,
                        res->comp_cov);
  res->integral = res->comp_integral[0];
  res->sigma = res->comp_sigma[0];
  res->chi2_dof = res->comp_chi2_dof[0];
  res->q = res->comp_q[0];
  res->neval = r->neval_total;
  res->iterations = r->ravg.n;
  res->converged = r->converged;
  res->no_target = !(r->params.epsrel > 0.0) && !(r->params.epsabs > 0.0);
  strata_lost l;
  res->lost = r->ravg.n > 0 && run_lost(r, &l);
  if (res->lost) {
    res->lost_z = l.z;
    res->lost_itn = l.itn;
    res->lost_integral = l.integral;
    res->lost_sigma = l.sigma;
  }
  res->neval_needed = neval_needed(r);
  res->thin_neval = r->ravg.n > 0 && !res->no_target ? run_thin(r) : 0.0;
  res->thin = res->thin_neval > 0.0;
  res->nhcube = (int)(r->hcubes ? r->hcubes : r->strat->nhcube);
  res->time_s = r->time_s;
  res->comm_time_s = r->comm_time_s;
  res->nchannels = 1;
  res->alpha_map = 1.0;
  res->khat = res->khat_limit = NAN;
  snprintf(res->peaks_reason, sizeof res->peaks_reason, "%s", r->peaks_note);
  if (!r->peaks) return;
  strata_peakrun_result(r, res);
  if (!r->converged && r->ravg.n > 0 && !res->no_target && rule_met(r))
    res->peaks_held = !strata_peakrun_gate(r, res->peaks_reason, sizeof res->peaks_reason,
                                           &res->peaks_neval);
}

int strata_run_loop(strata_run *r, strata_run_after after, void *ctx)
{
  while (!strata_run_finished(r)) {
    strata_iteration it;
    int stop = 0, rc = strata_run_step(r, &it);
    if (rc == STRATA_OK && after) rc = after(r, &it, &stop, ctx);
    if (rc != STRATA_OK) return rc;
    if (stop) break;
  }
  return STRATA_OK;
}

/* strata_run_integrate's callback, which cannot stop the run. */
typedef struct {
  strata_iteration_cb cb;
  void *ctx;
} report;

static int call_report(strata_run *r, const strata_iteration *it, int *stop, void *ctx)
{
  (void)r;
  (void)stop;
  const report *rep = ctx;
  if (rep->cb) rep->cb(it, rep->ctx);
  return STRATA_OK;
}

int strata_run_integrate(strata_run *r, strata_iteration_cb cb, void *ctx,
                         strata_result *res)
{
  report rep = {cb, ctx};
  int rc = strata_run_loop(r, call_report, &rep);
  if (rc == STRATA_OK && res) strata_run_result(r, res);
  return rc;
}
