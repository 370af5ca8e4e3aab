#include "backend.h"

#include <math.h>
#include <stdio.h>

#include "error.h"
#include "estimate.h"

void strata_backend_free(strata_backend *b)
{
  if (b && b->free) b->free(b);
}

int strata_backend_evaluate(void *ctx, int64_t n, const double *y, double *f)
{
  const strata_backend_evaluator *e = ctx;
  if (!e->backend->eval)
    return strata_error(STRATA_EBACKEND, "the %s backend cannot evaluate the peak search's "
                        "points", e->backend->name);
  return e->backend->eval(e->backend, e->problem, n, y, f);
}

void strata_backend_point(const strata_plan *plan, int64_t i, double *y)
{
  const strata_strat *s = plan->strat;
  if (plan->qmc) {
    strata_qmc_cursor cur = {.next = -1};
    strata_qmc_point(plan->qmc, &cur, i, y);
    return;
  }
  int k[STRATA_MAX_DIM];
  double u[STRATA_MAX_DIM];
  strata_strat_coords(s, strata_strat_find(s, i), k);
  strata_sample_point(plan, k, i, u, y);
}

double strata_backend_box_volume(const strata_plan *plan)
{
  double v = 1.0;
  for (int d = 0; d < plan->problem->dim; d++) v *= plan->map->width[d];
  return v;
}

double strata_backend_map_density(const strata_plan *plan, const double *z)
{
  const strata_map *g = plan->map;
  const strata_strat *s = plan->strat;
  const int ninc = strata_map_res(g), G = g->group, M = s->M;
  double jz = 1.0;
  int64_t h = 0, stride = 1;
  for (int d = 0; d < g->dim; d++, stride *= M) {
    if (!(z[d] > 0.0 && z[d] < 1.0)) return 0.0;
    const double *e = strata_map_axis_edges(g, d);
    int lo = 0, hi = ninc; /* e[lo G] <= z < e[hi G] (the map's edges, map.h) */
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (e[mid * G] <= z[d]) lo = mid;
      else hi = mid;
    }
    const double e0 = e[lo * G], du = e[(lo + 1) * G] - e0, y = (lo + (z[d] - e0) / du) / ninc;
    jz *= ninc * du;
    int k = (int)(y * M);
    h += (int64_t)(k < M ? k : M - 1) * stride;
  }
  const double nh = (double)(s->start[h + 1] - s->start[h]);
  return nh * (double)s->nhcube / ((double)plan->channels->N * jz);
}

int strata_backend_report_nonfinite(const strata_plan *plan, double fx,
                                    int64_t index, const double *x)
{
  char pt[STRATA_MAX_DIM * 26 + 8];
  int len = 0;
  for (int d = 0; d < plan->problem->dim && len < (int)sizeof pt - 26; d++)
    len += snprintf(pt + len, sizeof pt - (size_t)len, "%s%.17g", d ? ", " : "", x[d]);
  return strata_error(STRATA_ENOTFINITE,
                      "integrand '%s' returned %s at x = (%s) (iteration %u, sample %lld)",
                      plan->problem->name ? plan->problem->name : "(unnamed)",
                      isnan(fx) ? "NaN" : (fx > 0 ? "+Inf" : "-Inf"), pt,
                      plan->iteration + 1, (long long)index);
}

int strata_backend_host_part(strata_plan *plan)
{
  const int nc = plan->ncomp;
  const double *sum1 = nc > 1 ? plan->c1 : plan->s1, *sum2 = nc > 1 ? plan->c2 : plan->s2;
  const double *shifts = nc > 1 ? plan->cshift : &plan->shift;
  double scratch[2];
  plan->bad = -1;
  /* Many components (no c1): the backend streamed their part already. */
  if ((nc == 1 || plan->c1) &&
      strata_estimate_part(plan->strat, nc, sum1, sum2, shifts, plan->h0, plan->h1, plan->part,
                           &plan->bad) != 0) {
    plan->bad_near = sum1[plan->bad * nc] / (double)plan->strat->nh[plan->bad] + shifts[0];
    return STRATA_OK;
  }
  /* A vector integrand adapts to its own quantity, whose sums can
   * overflow where no component's do. */
  if (nc > 1 && strata_estimate_part(plan->strat, 1, plan->s1, plan->s2, &plan->shift, plan->h0,
                                     plan->h1, scratch, &plan->bad) != 0) {
    plan->bad_near = plan->s1[plan->bad] / (double)plan->strat->nh[plan->bad] + plan->shift;
    return STRATA_OK;
  }
  if (plan->reallocate)
    strata_strat_levels(plan->strat, plan->s1, plan->s2, plan->h0, plan->h1, plan->level);
  return STRATA_OK;
}

int strata_backend_host_adapt(strata_backend *b, const strata_plan *plan, strata_map *map,
                              strata_strat *s)
{
  (void)b;
  strata_map_refine(map, plan->wsum, plan->wcount, plan->alpha);
  if (plan->reallocate) strata_strat_allocate(s, plan->level);
  return STRATA_OK;
}
