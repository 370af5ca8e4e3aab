#include "backend.h"

#include <math.h>
#include <stdio.h>

#include "error.h"
#include "estimate.h"

void strata_backend_free(strata_backend *b)
{
  if (b && b->free) b->free(b);
}

void strata_backend_point(const strata_sample_job *job, int64_t i, double *y)
{
  const strata_strat *s = job->strat;
  if (job->qmc) {
    strata_qmc_cursor cur = {.next = -1};
    strata_qmc_point(job->qmc, &cur, i, y);
    return;
  }
  int k[STRATA_MAX_DIM];
  double u[STRATA_MAX_DIM];
  strata_strat_coords(s, strata_strat_find(s, i), k);
  strata_sample_point(job, k, i, u, y);
}

int strata_backend_report_nonfinite(const strata_sample_job *job, double fx,
                                    int64_t index, const double *x)
{
  char pt[STRATA_MAX_DIM * 26 + 8];
  int len = 0;
  for (int d = 0; d < job->problem->dim && len < (int)sizeof pt - 26; d++)
    len += snprintf(pt + len, sizeof pt - (size_t)len, "%s%.17g", d ? ", " : "", x[d]);
  return strata_error(STRATA_ENOTFINITE,
                      "integrand '%s' returned %s at x = (%s) (iteration %u, sample %lld)",
                      job->problem->name ? job->problem->name : "(unnamed)",
                      isnan(fx) ? "NaN" : (fx > 0 ? "+Inf" : "-Inf"), pt,
                      job->iteration + 1, (long long)index);
}

int strata_backend_host_part(strata_sample_job *job)
{
  const int nc = job->problem->ncomp > 1 ? job->problem->ncomp : 1;
  const double *e1 = nc > 1 ? job->c1 : job->s1, *e2 = nc > 1 ? job->c2 : job->s2;
  const double *eshift = nc > 1 ? job->cshift : &job->shift;
  double scratch[2];
  job->bad = -1;
  /* Many components (no c1): the backend streamed their part already. */
  if ((nc == 1 || job->c1) &&
      strata_estimate_part(job->strat, nc, e1, e2, eshift, job->h0, job->h1, job->part,
                           &job->bad) != 0) {
    job->bad_near = e1[job->bad * nc] / (double)job->strat->nh[job->bad] + eshift[0];
    return STRATA_OK;
  }
  /* A vector integrand adapts to its own quantity, whose sums can
   * overflow where no component's do. */
  if (nc > 1 && strata_estimate_part(job->strat, 1, job->s1, job->s2, &job->shift, job->h0,
                                     job->h1, scratch, &job->bad) != 0) {
    job->bad_near = job->s1[job->bad] / (double)job->strat->nh[job->bad] + job->shift;
    return STRATA_OK;
  }
  if (job->level)
    strata_strat_levels(job->strat, job->s1, job->s2, job->h0, job->h1, job->level);
  return STRATA_OK;
}

int strata_backend_host_adapt(strata_backend *b, const strata_adapt_job *job)
{
  (void)b;
  strata_map_refine(job->map, job->wsum, job->wcount, job->alpha);
  if (job->reallocate) strata_strat_allocate(job->strat, job->level);
  return STRATA_OK;
}
