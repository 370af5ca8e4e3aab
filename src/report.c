#include "report.h"

#include <math.h>

#include "stats.h"

void strata_report_header(FILE *out)
{
  fprintf(out, "itn   integral              wgt average           chi2/dof       Q\n");
  fprintf(out, "---------------------------------------------------------------------\n");
}

void strata_report_iteration(FILE *out, const strata_iteration *it)
{
  char a[64], b[64];
  strata_format_value_error(a, sizeof a, it->integral, it->sigma);
  if (it->kept) {
    strata_format_value_error(b, sizeof b, it->avg, it->avg_sigma);
    fprintf(out, "%3d   %-20s  %-20s  %8.2f  %6.2f%s\n", it->itn, a, b, it->chi2_dof, it->q,
            it->restarted ? "  restart" : "");
  } else {
    fprintf(out, "%3d   %-20s  %-20s  %8s  %6s\n", it->itn, a,
            it->itn > 0 && it->sigma == 0.0 ? "(no information)" : "(warm-up)", "-", "-");
  }
  fflush(out);
}

void strata_report_summary(FILE *out, const strata_result *res, double exact)
{
  char a[64];
  strata_format_value_error(a, sizeof a, res->integral, res->sigma);
  fprintf(out, "\nresult     = %s   (%.17g +- %.3g)\n", a, res->integral, res->sigma);
  fprintf(out, "chi2/dof   = %.2f   Q = %.2f\n", res->chi2_dof, res->q);
  fprintf(out, "converged  = %s after %d iterations, %lld evaluations, %.3f s\n",
          res->converged ? "yes" : "NO", res->iterations, (long long)res->neval,
          res->time_s);
  if (isfinite(exact)) {
    double dev = res->sigma > 0 ? (res->integral - exact) / res->sigma : NAN;
    fprintf(out, "exact      = %.17g   (deviation %+.2f sigma)\n", exact, dev);
  }
}

static void json_number(FILE *out, const char *key, double v, int last)
{
  if (isfinite(v)) fprintf(out, "\"%s\":%.17g%s", key, v, last ? "" : ",");
  else fprintf(out, "\"%s\":null%s", key, last ? "" : ",");
}

void strata_report_json(FILE *out, const strata_result *res, const strata_report_info *info)
{
  fprintf(out, "{\"integrand\":\"%s\",\"dim\":%d,\"mode\":\"%s\",", info->integrand,
          info->dim, info->mode);
  json_number(out, "integral", res->integral, 0);
  json_number(out, "sigma", res->sigma, 0);
  json_number(out, "chi2_dof", res->chi2_dof, 0);
  json_number(out, "Q", res->q, 0);
  json_number(out, "exact", info->exact, 0);
  fprintf(out, "\"neval\":%lld,\"iterations\":%d,\"converged\":%s,\"backend\":\"%s\","
          "\"ranks\":%d,\"nhcube\":%d,",
          (long long)res->neval, res->iterations, res->converged ? "true" : "false",
          info->backend, info->ranks, res->nhcube);
  json_number(out, "allreduce_s", res->comm_time_s, 0);
  json_number(out, "time_s", res->time_s, 1);
  fprintf(out, "}\n");
  fflush(out);
}
