/* The iteration plan (plan.h): each decision about the next iteration,
 * made here and nowhere else. */
#include "plan.h"

#include <math.h>

#include "run.h"
#include "sumscale.h"

/* Iteration k draws QMC points: always in mode qmc, and once the map is
 * frozen with qmc_map. */
static int qmc_points(const strata_run *r, int k)
{
  return r->qmc && !strata_ravg_adapting(&r->ravg, k);
}

const strata_strat *strata_plan_cells(const strata_run *r, int k)
{
  if (qmc_points(r, k) && r->qcells) return r->qcells;
  return strata_run_finer(r, k) ? r->fine : r->strat;
}

/* The components' sums per cell (c1 and c2); none for a scalar integrand,
 * whose s1 and s2 say it all, nor for more components than
 * STRATA_MAX_COMP, whose backend adds each hypercube's moments into the
 * estimate as it completes it (plan.h, c1 and c2). */
static size_t comp_sums_per_cell(int ncomp)
{
  return ncomp > 1 && ncomp <= STRATA_MAX_COMP
             ? (size_t)ncomp + (size_t)ncomp * (size_t)(ncomp + 1) / 2 : 0;
}

/* The buffer's layout: s1, s2 (per cell); for a vector integrand the
 * components' c1, c2 (per cell); the estimate's part; then wsum, wcount.
 * One allreduce combines the part and the map's sums, or, for plain MC and
 * QMC, all of it. */
size_t strata_plan_buffer_size(int64_t ncell, int ncomp, size_t mapcells)
{
  return (2 + comp_sums_per_cell(ncomp)) * (size_t)ncell + STRATA_EST_PART(ncomp) +
         2 * mapcells;
}

/* The iteration whose estimate iteration k shifts its sums by: the one
 * before it, but for iterations of the frozen map from the third on, the
 * one two before.  A frozen map's estimates all sit as near J f, and each
 * such iteration's shift is then known while the iteration before it
 * runs, so that it can start before that one's estimate is combined
 * (next_alike). */
static int shift_source(const strata_run *r, int k)
{
  const int k0 = r->ravg.nadapt;
  if (k0 >= 1 && k - 2 >= k0 && strata_ravg_frozen_alike(&r->ravg, k)) return k - 2;
  return k - 1;
}

/* The shift of component c for iteration k: from the estimate
 * shift_source names (sumscale.h). */
static double comp_shift(const strata_run *r, int k, int c)
{
  const int src = shift_source(r, k);
  if (src < 0) return 0.0;
  double sigma, I = strata_ravg_value(&r->ravg, src, c, &sigma);
  return strata_sum_shift(I, sigma);
}

/* The shift of the quantity that adapts: its component's, or for the sum
 * of magnitudes the sum of the components' magnitudes, which it approaches
 * where no component changes sign. */
static double sum_shift(const strata_run *r, const double *cshift)
{
  if (r->ncomp == 1 || r->problem.adapt_comp >= 0)
    return cshift[r->ncomp == 1 ? 0 : r->problem.adapt_comp];
  double s = 0.0;
  for (int c = 0; c < r->ncomp; c++) s += fabs(cshift[c]);
  return s;
}

/* The map's scale (sumscale.h) from the last iteration's estimate of the
 * adapting quantity. */
static double map_scale(const strata_run *r)
{
  if (r->ravg.n == 0) return 1.0;
  double m = 0.0, sigma;
  if (r->ncomp == 1 || r->problem.adapt_comp >= 0)
    m = fabs(strata_ravg_value(&r->ravg, r->ravg.n - 1, r->ncomp == 1 ? 0 : r->problem.adapt_comp,
                               &sigma));
  else
    for (int c = 0; c < r->ncomp; c++)
      m += fabs(strata_ravg_value(&r->ravg, r->ravg.n - 1, c, &sigma));
  return strata_map_scale(m, r->params.neval);
}

/* Whether the iteration after the coming one, should the run go on, is
 * the coming one's plan but for its number and shift: both draw
 * pseudo-random points of the frozen map, the later one's shift is known
 * already, and the budget allows it.  Only backends that exchange among
 * themselves start it early. */
static int next_alike(const strata_run *r, strata_combine combine)
{
  const int k = r->ravg.n;
  const int64_t n = strata_strat_total(strata_plan_cells(r, k));
  return combine == STRATA_COMBINE_EXCHANGE && k + 1 < r->params.maxiter &&
         strata_ravg_frozen_alike(&r->ravg, k) && strata_ravg_frozen_alike(&r->ravg, k + 1) &&
         strata_plan_cells(r, k + 1) == strata_plan_cells(r, k) &&
         shift_source(r, k + 1) < k && r->neval_total + 2 * n <= r->params.maxeval;
}

/* Where the sums meet.  A stratified estimate is a sum over hypercubes, so
 * each rank's backend adds its own and only those sums cross the network
 * (doc/distributed.md); plain MC and QMC have few cells and combine their
 * sums per cell, which keeps their results the same bits on any number of
 * ranks. */
static strata_combine combine_at(const strata_run *r, strata_estimator est, int regrid)
{
  if (est != STRATA_EST_STRATIFIED) return STRATA_COMBINE_CELLS;
  return r->comm->size > 1 && r->backend->exchanges && !r->peaks && !regrid
             ? STRATA_COMBINE_EXCHANGE
             : STRATA_COMBINE_PARTS;
}

/* Whether iteration k samples the finer stratification of a long run
 * (run.h) and its allocation adapts after it, the map frozen: the levels
 * come back to the host, which allocates (run.c), so that the backends
 * that exchange among themselves add their parts on the host for it. */
static int regrid(const strata_run *r, int k)
{
  return strata_run_finer(r, k) && strata_strat_moves(r->fine);
}

/* A run that searches for peaks keeps its map and allocation on the host,
 * current at every iteration: the largest weights' points are made again
 * from them where a backend keeps only the weights, and each rank splits
 * the hypercubes, not the samples (doc/peaks.md, "On the GPU"). */
static int host_keeps(const strata_run *r)
{
  return !r->backend->keeps_state || r->peaks;
}

/* Where the adaptation happens: by a backend that keeps the stratified
 * iteration where it sampled, when it holds every sum that adapts (one
 * rank, or ranks that exchange); else on the host. */
static strata_adapt_at adapt_at(const strata_run *r, int adapt, strata_combine combine)
{
  if (!adapt) return STRATA_ADAPT_NONE;
  const int holds_all = r->comm->size == 1 || combine == STRATA_COMBINE_EXCHANGE;
  return combine != STRATA_COMBINE_CELLS && holds_all && !host_keeps(r)
             ? STRATA_ADAPT_BACKEND
             : STRATA_ADAPT_HOST;
}

/* The plan's buffers in the run's one buffer (strata_plan_buffer_size),
 * and what of it the host adds over the ranks. */
static void lay_out(strata_run *r, strata_plan *p)
{
  const int64_t nhc = p->strat->nhcube;
  const int nc = p->ncomp;
  const size_t mapcells = (size_t)r->problem.dim * (size_t)strata_map_res(r->map);
  double *c1 = r->buf + 2 * nhc;
  p->s1 = r->buf;
  p->s2 = r->buf + nhc;
  p->c1 = comp_sums_per_cell(nc) ? c1 : NULL;
  p->c2 = comp_sums_per_cell(nc) ? c1 + (size_t)nc * (size_t)nhc : NULL;
  p->part = c1 + comp_sums_per_cell(nc) * (size_t)nhc;
  p->wsum = p->part + STRATA_EST_PART(nc);
  p->wcount = p->wsum + mapcells;
  p->level = p->reallocate ? r->levels : NULL;
  p->reduce = p->combine == STRATA_COMBINE_CELLS ? r->buf : p->part;
  p->nreduce = (size_t)(p->wsum - p->reduce) +
               (p->adapt_at == STRATA_ADAPT_HOST ? 2 * mapcells : 0);
}

/* This rank's slice: of the samples where the backends exchange (a vector
 * integrand's ranks hold whole hypercubes: the covariance of a hypercube
 * shared between ranks is not combined), else of the hypercubes. */
static void slice(strata_run *r, strata_plan *p)
{
  p->i0 = p->i1 = 0;
  if (p->combine == STRATA_COMBINE_EXCHANGE) {
    if (!strata_split_current(r->split, p->strat))
      strata_split_make(r->split, p->strat, p->ncomp > 1);
    strata_split_part(r->split, r->comm->rank, &p->i0, &p->i1, &p->h0, &p->h1);
  } else {
    strata_run_slice(p->strat, r->comm->rank, r->comm->size, &p->h0, &p->h1);
  }
}

/* Whether the run may well stop on its tolerance after the coming
 * iteration: its average with one more iteration of half the last one's
 * error (the map still learning) within the target.  A guess, which spares
 * a backend that starts the next iteration early (next_adapts_alike) the
 * samples of the iteration after a run's last: a wrong guess costs only
 * that start. */
static int may_stop_after(const strata_run *r)
{
  const strata_params *prm = &r->params;
  const int k = r->ravg.n, m = strata_ravg_nkept(&r->ravg, 0);
  if (k == 0 || m == 0 || !(prm->epsrel > 0.0 || prm->epsabs > 0.0)) return 0;
  const strata_average *a = &r->ravg.cavg[0];
  double last;
  strata_ravg_value(&r->ravg, k - 1, 0, &last);
  const double next = 0.5 * last;
  if (!(a->sigma > 0.0 && next > 0.0)) return 1;
  const double s = 1.0 / sqrt(1.0 / (a->sigma * a->sigma) + 1.0 / (next * next));
  return s <= fmax(prm->epsrel * fabs(a->mean), prm->epsabs);
}

/* Whether the iteration after the coming one (plan p), should the run go
 * on, adapts on the backend as p does: one rank, no peak search, points of
 * Philox, one component, the same cells and map resolution, the budget
 * allows it, and the run is not likely to stop on its tolerance first. */
static int next_adapts_alike(const strata_run *r, const strata_plan *p)
{
  const int k = r->ravg.n;
  const int64_t n = strata_strat_total(p->strat);
  return p->adapt_at == STRATA_ADAPT_BACKEND && r->comm->size == 1 && !r->peaks && !p->qmc &&
         p->ncomp == 1 && k + 1 < r->params.maxiter && strata_ravg_adapting(&r->ravg, k + 1) &&
         !qmc_points(r, k + 1) && strata_plan_cells(r, k + 1) == p->strat && !regrid(r, k + 1) &&
         strata_run_map_group(r, k + 1) == r->map->group &&
         r->neval_total + 2 * n <= r->params.maxeval && !may_stop_after(r);
}

void strata_plan_make(strata_run *r, strata_plan *p)
{
  const strata_params *prm = &r->params;
  const int k = r->ravg.n, adapt = strata_ravg_adapting(&r->ravg, k);
  const int qmc = qmc_points(r, k);
  const strata_estimator est = qmc ? STRATA_EST_RANDOMIZED
                               : prm->mode == STRATA_MODE_PLAIN ? STRATA_EST_POOLED
                                                                : STRATA_EST_STRATIFIED;
  const int fine = regrid(r, k);
  const strata_combine combine = combine_at(r, est, fine);
  const strata_adapt_at where = adapt_at(r, adapt, combine);
  *p = (strata_plan){
      .problem = &r->problem, .map = r->map, .strat = strata_plan_cells(r, k),
      .qmc = qmc ? r->qmc : NULL, .seed = prm->seed, .iteration = (uint32_t)k,
      .estimator = est, .ncomp = r->ncomp, .nchannels = 1, .split = r->split,
      .combine = combine, .adapt_at = where, .adapt = where != STRATA_ADAPT_NONE,
      .reallocate = (adapt && strata_strat_moves(r->strat)) || fine,
      .refine = prm->alpha != 0.0, .alpha = prm->alpha,
      .host_allocation = combine == STRATA_COMBINE_CELLS || host_keeps(r) || fine,
      .cshift = r->cshift, .next_cshift = r->next_cshift, .bad = -1};
  p->ubits = !p->adapt && !p->qmc && r->packed_uniforms
                 ? strata_uniform_bits(r->problem.dim, strata_map_res(p->map), p->strat->M)
                 : 32;
  strata_uniform_shifts(p->seed, p->iteration, r->problem.dim, p->ubits, p->ushift);
  p->gather_levels = p->reallocate && where != STRATA_ADAPT_BACKEND &&
                     combine == STRATA_COMBINE_PARTS && r->comm->size > 1;
  p->next_alike = next_alike(r, combine);
  for (int c = 0; c < r->ncomp; c++) {
    r->cshift[c] = comp_shift(r, k, c);
    r->next_cshift[c] = p->next_alike ? comp_shift(r, k + 1, c) : 0.0;
  }
  p->shift = sum_shift(r, r->cshift);
  p->next_shift = sum_shift(r, r->next_cshift);
  p->map_scale = map_scale(r);
  p->next_adapts_alike = next_adapts_alike(r, p);
  if (p->host_allocation) strata_strat_materialize(r->strat);
  slice(r, p);
  lay_out(r, p);
}
