#include "backend.h"

#include <math.h>
#include <stdio.h>

#include "error.h"

void strata_backend_free(strata_backend *b)
{
  if (b && b->free) b->free(b);
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
