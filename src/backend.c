#include "backend.h"

#include <math.h>
#include <stdio.h>

#include "error.h"

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
