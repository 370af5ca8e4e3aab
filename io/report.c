/* What a run prints (strata/report.h): the iteration table, the summary,
 * the JSON line; the program, strata_log_print and the bindings share it. */
#include "strata/report.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "error.h"

void strata_report_value_error(char *buf, size_t len, double value, double err)
{
  if (!buf || !len) return;
  /* An error that is not known (NaN: one tiny estimate, whose variance
   * underflowed and has no scatter to measure) is "(?)" after the value. */
  const int unknown = isnan(err) || (err == 0.0 && value != 0.0 && fabs(value) < sqrt(DBL_MIN));
  if (!isfinite(value) || (!isfinite(err) && !unknown) || err < 0.0) {
    snprintf(buf, len, "%.6g +- %.2g", value, err);
    return;
  }
  if (err == 0.0 || unknown) {
    const char *e0 = unknown ? "?" : "0";
    if (value == 0.0 || (fabs(value) >= 1e-5 && fabs(value) < 1e9)) {
      snprintf(buf, len, "%.15g(%s)", value, e0);
      return;
    }
    /* The exponent after the error, as in every other line. */
    int ev = (int)floor(log10(fabs(value)));
    double m = value / pow(10.0, ev);
    if (fabs(m) >= 10.0) {
      m /= 10.0;
      ev++;
    }
    snprintf(buf, len, "%.15g(%s)e%+03d", m, e0, ev);
    return;
  }
  /* Decimals so that the error shows two significant digits. */
  int e = (int)floor(log10(err));
  int decimals = 1 - e;
  double mag = fabs(value) > err ? fabs(value) : err;
  if (decimals < 0 || decimals > 15 || mag >= 1e9 || mag < 1e-5) {
    /* Scientific: scale both to the value's exponent. */
    int ev = value != 0.0 ? (int)floor(log10(fabs(value))) : e;
    if (ev < e) ev = e;
    double scale = pow(10.0, ev);
    int dec = ev - e + 1;
    if (dec > 15) dec = 15;
    long long digits = llround(err / scale * pow(10.0, dec));
    if (digits >= 100 && dec > 0) { /* the error rounded up a decade */
      dec--;
      digits = llround(err / scale * pow(10.0, dec));
    }
    /* Below the 15th place (1 +- 1e-16): one unit of the last place shown,
     * never "(0)" for an error that is not 0. */
    if (digits < 1) digits = 1;
    if (fabs(value / scale) + 0.5 * pow(10.0, -dec) >= 10.0) { /* 9.99.. rounds to 10 */
      ev++;
      scale *= 10.0;
      dec = ev - e + 1 > 15 ? 15 : ev - e + 1;
      digits = llround(err / scale * pow(10.0, dec));
    }
    snprintf(buf, len, "%.*f(%lld)e%+03d", dec, value / scale, digits, ev);
    return;
  }
  long long digits = llround(err * pow(10.0, decimals));
  if (digits >= 100 && decimals > 0) { /* the error rounded up a decade */
    decimals--;
    digits = llround(err * pow(10.0, decimals));
  }
  snprintf(buf, len, "%.*f(%lld)", decimals, value, digits);
}

void strata_report_header(FILE *out)
{
  if (!out) return;
  fprintf(out, "itn   integral              wgt average           chi2/dof       Q\n");
  fprintf(out, "---------------------------------------------------------------------\n");
}

/* chi2/dof or Q with two decimals, or "-" where it is undefined (an
 * average of tiny estimates, whose errors underflowed, has neither). */
static const char *stat2(char *buf, size_t n, double v)
{
  if (isnan(v)) snprintf(buf, n, "-");
  else snprintf(buf, n, "%.2f", v);
  return buf;
}

/* One line of the table; lead is the first column ("  7   ", or for a
 * component of a vector integrand "  7:0 " and "   :1 "). */
static void table_line(FILE *out, const char *lead, int kept, int itn, double integral,
                       double sigma, double avg, double avg_sigma, double chi2_dof, double q,
                       int restarted)
{
  char a[64], b[64], c2[32], qs[32];
  strata_report_value_error(a, sizeof a, integral, sigma);
  if (kept) {
    strata_report_value_error(b, sizeof b, avg, avg_sigma);
    fprintf(out, "%s%-20s  %-20s  %8s  %6s%s\n", lead, a, b, stat2(c2, sizeof c2, chi2_dof),
            stat2(qs, sizeof qs, q), restarted ? "  restart" : "");
  } else {
    fprintf(out, "%s%-20s  %-20s  %8s  %6s\n", lead, a,
            itn > 0 && sigma == 0.0 ? "(no information)" : "(warm-up)", "-", "-");
  }
}

void strata_report_iteration(FILE *out, const strata_iteration *it)
{
  if (!out || !it) return;
  char lead[32];
  /* No run has more components than STRATA_MAX_NCOMP: more is not a row count. */
  if (it->ncomp <= 1 || it->ncomp > STRATA_MAX_NCOMP || !it->comp) {
    snprintf(lead, sizeof lead, "%3d   ", it->itn);
    table_line(out, lead, it->kept, it->itn, it->integral, it->sigma, it->avg, it->avg_sigma,
               it->chi2_dof, it->q, it->restarted);
  } else {
    /* A line per component, up to STRATA_MAX_COMP of them; the
     * iteration's kept flag is component 0's. */
    const int shown = it->ncomp < STRATA_MAX_COMP ? it->ncomp : STRATA_MAX_COMP;
    for (int c = 0; c < shown; c++) {
      const double *row = it->comp + c * STRATA_COMP_ROW(it->ncomp);
      if (c == 0) snprintf(lead, sizeof lead, "%3d:%-2d", it->itn, c);
      else snprintf(lead, sizeof lead, "   :%-2d", c);
      table_line(out, lead, it->kept, it->itn, row[STRATA_COMP_INTEGRAL],
                 row[STRATA_COMP_SIGMA], row[STRATA_COMP_AVG], row[STRATA_COMP_AVG_SIGMA],
                 row[STRATA_COMP_CHI2_DOF], row[STRATA_COMP_Q], c == 0 && it->restarted);
    }
    if (shown < it->ncomp)
      fprintf(out, "   :%d-%d not shown (%d components in all)\n", shown, it->ncomp - 1,
              it->ncomp);
  }
  fflush(out);
}

/* The components a result holds (strata.h): the first STRATA_MAX_COMP. */
static int held(const strata_result *res)
{
  return res->ncomp < STRATA_MAX_COMP ? res->ncomp : STRATA_MAX_COMP;
}

/* The correlation of components a and b of a result's averages. */
static double correlation(const strata_result *res, int a, int b)
{
  const int n = held(res);
  double den = sqrt(res->comp_cov[a * n + a] * res->comp_cov[b * n + b]);
  return den > 0.0 ? res->comp_cov[a * n + b] / den : (a == b ? 1.0 : NAN);
}

/* Every component's average, then their correlation matrix: of the first
 * STRATA_MAX_COMP components where there are more. */
static void summary_comps(FILE *out, const strata_result *res)
{
  char a[64], c2[32], qs[32];
  const int n = held(res);
  fputc('\n', out);
  for (int c = 0; c < n; c++) {
    strata_report_value_error(a, sizeof a, res->comp_integral[c], res->comp_sigma[c]);
    fprintf(out, "result[%d]  = %s   (%.17g +- %.3g)   chi2/dof = %s   Q = %s\n", c, a,
            res->comp_integral[c], res->comp_sigma[c],
            stat2(c2, sizeof c2, res->comp_chi2_dof[c]), stat2(qs, sizeof qs, res->comp_q[c]));
  }
  if (n < res->ncomp)
    fprintf(out, "result[%d-%d] not shown (%d components in all: --json, the log's "
            "/result_comp)\n", n, res->ncomp - 1, res->ncomp);
  fprintf(out, "correlation =");
  for (int i = 0; i < n; i++) {
    fprintf(out, "%s", i ? "\n              " : " ");
    for (int j = 0; j < n; j++) fprintf(out, " %7.4f", correlation(res, i, j));
  }
  fputc('\n', out);
}

/* The modes a result holds (strata.h): the first STRATA_MAX_PEAKS. */
static int peaks_held(const strata_result *res)
{
  return res->nmodes < 0 ? 0 : res->nmodes < STRATA_MAX_PEAKS ? res->nmodes : STRATA_MAX_PEAKS;
}

/* The coordinates of a mode's location: the problem's dim. */
static int peak_dim(const strata_result *res)
{
  return res->dim < 1 ? 0 : res->dim < STRATA_MAX_DIM ? res->dim : STRATA_MAX_DIM;
}

/* Mode j's line: log |f| there, its channel's share of the integral (or
 * that it has none), whether a known point found it, and where it is, its
 * coordinates continued on lines of their own where they would make the
 * line longer than the others of the summary (32 dimensions). */
static void summary_mode(FILE *out, const strata_result *res, int j)
{
  const strata_result_peak *m = &res->modes[j];
  char head[128], x[32], share[32];
  if (m->weight > 0.0) snprintf(share, sizeof share, "share %.3g", m->share);
  else snprintf(share, sizeof share, "no channel");
  int col = snprintf(head, sizeof head, "mode %-6d= log|f| %.6g   %s%s   at", j + 1, m->logf,
                     share, m->known ? "   (known)" : "");
  fputs(head, out);
  for (int d = 0; d < peak_dim(res); d++) {
    const int n = snprintf(x, sizeof x, " %.6g", m->x[d]);
    if (col + n > 90) {
      fputs("\n            ", out);
      col = 12;
    }
    fputs(x, out);
    col += n;
  }
  fputc('\n', out);
}

/* The peak search's lines (doc/peaks.md, "What is reported"): what it
 * found and spent, each mode, the channels' weights, and the gate's
 * verdict with the budget that gives every channel its points. */
static void summary_peaks(FILE *out, const strata_result *res)
{
  if (res->peaks_searched) {
    fprintf(out, "search     = %d mode%s in %lld evaluations", res->nmodes,
            res->nmodes == 1 ? "" : "s", (long long)res->search_evals);
    if (isfinite(res->khat))
      fprintf(out, "; k-hat %.2f (iteration %d, limit %.2f)", res->khat, res->khat_itn,
              res->khat_limit);
    fputc('\n', out);
    for (int j = 0; j < peaks_held(res); j++) summary_mode(out, res, j);
    if (res->nmodes > STRATA_MAX_PEAKS)
      fprintf(out, "mode %d-%d not shown (%d modes in all)\n", STRATA_MAX_PEAKS + 1, res->nmodes,
              res->nmodes);
    if (res->nchannels > 1) {
      fprintf(out, "channels   = %d: map %.3f,", res->nchannels, res->alpha_map);
      for (int j = 0; j < peaks_held(res); j++)
        if (res->modes[j].weight > 0.0) fprintf(out, " mode %d %.3f,", j + 1, res->modes[j].weight);
      fprintf(out, " uniform %.3f\n", res->alpha_uniform);
    }
  }
  if (res->peaks_reason[0] || res->peaks_held) {
    fprintf(out, "peaks      = %.*s", (int)sizeof res->peaks_reason,
            res->peaks_reason[0] ? res->peaks_reason : "the peak search withheld the claim");
    if (res->peaks_held) fputs("; not converged", out);
    if (res->peaks_neval > 0.0)
      fprintf(out, " (neval %.0f per iteration gives every channel its points)", res->peaks_neval);
    fputc('\n', out);
  }
}

void strata_report_summary(FILE *out, const strata_result *res, double exact)
{
  if (!out || !res) return;
  char a[64], c2[32], qs[32];
  if (res->ncomp > 1 && res->ncomp <= STRATA_MAX_NCOMP) {
    summary_comps(out, res);
  } else {
    strata_report_value_error(a, sizeof a, res->integral, res->sigma);
    fprintf(out, "\nresult     = %s   (%.17g +- %.3g)\n", a, res->integral, res->sigma);
    fprintf(out, "chi2/dof   = %s   Q = %s\n", stat2(c2, sizeof c2, res->chi2_dof),
            stat2(qs, sizeof qs, res->q));
  }
  /* Without a tolerance there is nothing to converge to: no verdict. */
  fprintf(out, "converged  = %s after %d iterations, %lld evaluations, %.3f s\n",
          res->no_target ? "no target (epsrel = epsabs = 0)" : res->converged ? "yes" : "NO",
          res->iterations, (long long)res->neval, res->time_s);
  if (res->lost) {
    strata_report_value_error(a, sizeof a, res->lost_integral, res->lost_sigma);
    fprintf(out, "lost peak  = the iterations left out of the average read %.1f sigma above "
            "it (iteration %d: %s): part of the integrand was likely missed; not converged\n",
            res->lost_z, res->lost_itn, a);
  }
  if (res->thin)
    fprintf(out, "thin       = too few hypercubes per axis to show a peak the map lost; "
            "not converged (neval %.0f per iteration gives enough)\n", res->thin_neval);
  summary_peaks(out, res);
  if (res->neval_needed > 0.0 && res->iterations > 0)
    fprintf(out, "target     = needs about %.2g evaluations at the rate seen "
            "(neval %.2g, %d iterations)\n",
            res->neval_needed, res->neval_needed / res->iterations, res->iterations);
  if (isfinite(exact) && !(res->sigma > 0)) {
    /* No spread to measure the distance in (every sample of the kept
     * iterations alike: 0 where an integrand underflowed everywhere the
     * map looked): the distance itself. */
    fprintf(out, "exact      = %.17g   (deviation undefined: sigma = 0, off by %.3g)\n", exact,
            res->integral - exact);
  } else if (isfinite(exact)) {
    /* Three digits of a deviation of 1e300 sigma are all a reader needs.  A
     * subnormal sigma puts the quotient beyond double's range: long double's
     * wider exponent keeps it a number. */
    long double dev = ((long double)res->integral - exact) / res->sigma;
    fprintf(out, fabsl(dev) < 1e6L ? "exact      = %.17g   (deviation %+.2Lf sigma)\n"
                                   : "exact      = %.17g   (deviation %+.3Lg sigma)\n",
            exact, dev);
  }
}

int strata_report_text(const strata_iteration *its, int n, const strata_result *res,
                       double exact, char **text)
{
  if (!text || n < 0 || (n > 0 && !its))
    return strata_error(STRATA_EINVAL, "strata_report_text: %s", !text ? "text is NULL"
                        : n < 0 ? "n < 0" : "its is NULL");
  *text = NULL;
  /* The very functions that print to a stream, so that the string is what
   * the program prints byte for byte. */
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return strata_error(STRATA_ENOMEM, "strata_report_text: out of memory");
  strata_report_header(out);
  for (int i = 0; i < n; i++) strata_report_iteration(out, &its[i]);
  if (res) strata_report_summary(out, res, exact);
  int failed = ferror(out);
  if (fclose(out) != 0 || failed) {
    free(buf);
    return strata_error(STRATA_ENOMEM, "strata_report_text: out of memory");
  }
  *text = buf;
  return STRATA_OK;
}

static void json_number(FILE *out, const char *key, double v, int last)
{
  if (isfinite(v)) fprintf(out, "\"%s\":%.17g%s", key, v, last ? "" : ",");
  else fprintf(out, "\"%s\":null%s", key, last ? "" : ",");
}

/* Vector integrands: "ncomp", every component's result and the covariance
 * of their averages (the scalar keys describe component 0): those of all,
 * or without all those res holds. */
static void json_comps(FILE *out, const strata_result *res, const strata_report_comps *all)
{
  const strata_report_comps mine = {held(res), res->comp_integral, res->comp_sigma,
                                    res->comp_chi2_dof, res->comp_q, res->comp_cov};
  /* A caller's set with a part missing counts as none: the result's own. */
  if (!all || all->ncomp < 1 || !all->integral || !all->sigma || !all->chi2_dof || !all->q ||
      !all->cov)
    all = &mine;
  const int n = all->ncomp;
  fprintf(out, "\"ncomp\":%d,\"components\":[", res->ncomp);
  for (int c = 0; c < n; c++) {
    fprintf(out, "%s{", c ? "," : "");
    json_number(out, "integral", all->integral[c], 0);
    json_number(out, "sigma", all->sigma[c], 0);
    json_number(out, "chi2_dof", all->chi2_dof[c], 0);
    json_number(out, "Q", all->q[c], 1);
    fprintf(out, "}");
  }
  fprintf(out, "],\"covariance\":[");
  for (int a = 0; a < n; a++) {
    fprintf(out, "%s[", a ? "," : "");
    for (int b = 0; b < n; b++) {
      double v = all->cov[(size_t)a * (size_t)n + (size_t)b];
      if (isfinite(v)) fprintf(out, "%s%.17g", b ? "," : "", v);
      else fprintf(out, "%snull", b ? "," : "");
    }
    fprintf(out, "]");
  }
  fprintf(out, "],");
}

/* "key":"value", escaped as JSON needs (paths and names are the user's);
 * a NULL value is null. */
static void json_string(FILE *out, const char *key, const char *v)
{
  fprintf(out, "\"%s\":", key);
  if (!v) {
    fputs("null,", out);
    return;
  }
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
    if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
    else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
    else fputc(*c, out);
  }
  fputs("\",", out);
}

/* The peak search (doc/peaks.md): "peaks" says whether it ran; "modes"
 * (location, log |f|, share of the integral, channel weight, known),
 * "channels" (the weights the last adaptation set, adding up to 1: the
 * map, each mode's channel, the uniform part; [1] for the map alone),
 * "khat" with "khat_itn" and "khat_limit", "search_evals", and the gate's
 * "peaks_held", "peaks_reason" and "peaks_neval" (null where they do not
 * apply). */
static void json_peaks(FILE *out, const strata_result *res)
{
  fprintf(out, "\"peaks\":%s,\"modes\":[", res->peaks_searched ? "true" : "false");
  for (int j = 0; res->peaks_searched && j < peaks_held(res); j++) {
    const strata_result_peak *m = &res->modes[j];
    fprintf(out, "%s{\"x\":[", j ? "," : "");
    for (int d = 0; d < peak_dim(res); d++)
      if (isfinite(m->x[d])) fprintf(out, "%s%.17g", d ? "," : "", m->x[d]);
      else fprintf(out, "%snull", d ? "," : "");
    fputs("],", out);
    json_number(out, "logf", m->logf, 0);
    json_number(out, "share", m->share, 0);
    json_number(out, "weight", m->weight, 0);
    fprintf(out, "\"known\":%s}", m->known ? "true" : "false");
  }
  fputs("],\"channels\":[", out);
  if (res->peaks_searched && res->nchannels > 1) {
    fprintf(out, "%.17g", res->alpha_map);
    for (int j = 0; j < peaks_held(res); j++)
      if (res->modes[j].weight > 0.0) fprintf(out, ",%.17g", res->modes[j].weight);
    fprintf(out, ",%.17g", res->alpha_uniform);
  } else if (res->peaks_searched) {
    fputs("1", out);
  }
  fputs("],", out);
  json_number(out, "khat", res->peaks_searched ? res->khat : NAN, 0);
  fprintf(out, "\"khat_itn\":");
  if (res->peaks_searched && isfinite(res->khat)) fprintf(out, "%d,", res->khat_itn);
  else fputs("null,", out);
  json_number(out, "khat_limit", res->peaks_searched ? res->khat_limit : NAN, 0);
  fprintf(out, "\"search_evals\":%lld,\"peaks_held\":%s,", (long long)res->search_evals,
          res->peaks_held ? "true" : "false");
  char reason[sizeof res->peaks_reason + 1];
  snprintf(reason, sizeof reason, "%.*s", (int)sizeof res->peaks_reason, res->peaks_reason);
  json_string(out, "peaks_reason", reason[0] ? reason : NULL);
  json_number(out, "peaks_neval", res->peaks_neval > 0.0 ? res->peaks_neval : NAN, 0);
}

void strata_report_json(FILE *out, const strata_result *res, const strata_report_info *info)
{
  strata_report_json_all(out, res, NULL, info);
}

void strata_report_json_all(FILE *out, const strata_result *res, const strata_report_comps *all,
                            const strata_report_info *info)
{
  if (!out || !res || !info) return;
  fputc('{', out);
  json_string(out, "integrand", info->integrand);
  fprintf(out, "\"dim\":%d,", info->dim);
  json_string(out, "mode", info->mode);
  /* A string: 64-bit seeds lose digits as JSON numbers (doubles). */
  fprintf(out, "\"seed\":\"%llu\",\"params\":[", (unsigned long long)info->seed);
  for (int i = 0; info->params && i < info->nparams && i < STRATA_MAX_PARAMS; i++) {
    if (isfinite(info->params[i])) fprintf(out, "%s%.17g", i ? "," : "", info->params[i]);
    else fprintf(out, "%snull", i ? "," : "");
  }
  fputs("],", out);
  json_string(out, "source", info->source);
  json_string(out, "job", info->job);
  json_string(out, "job_hash", info->job_hash);
  json_string(out, "map", info->map);
  json_string(out, "strata_version", strata_version());
  json_number(out, "integral", res->integral, 0);
  json_number(out, "sigma", res->sigma, 0);
  json_number(out, "chi2_dof", res->chi2_dof, 0);
  json_number(out, "Q", res->q, 0);
  json_number(out, "exact", info->exact, 0);
  if (res->ncomp > 1) json_comps(out, res, all);
  /* converged is null without a target; lost_z, neval_needed and
   * thin_neval are null where they do not apply. */
  fprintf(out, "\"neval\":%lld,\"iterations\":%d,\"converged\":%s,\"lost\":%s,",
          (long long)res->neval, res->iterations,
          res->no_target ? "null" : res->converged ? "true" : "false",
          res->lost ? "true" : "false");
  json_number(out, "lost_z", res->lost ? res->lost_z : NAN, 0);
  json_number(out, "neval_needed", res->neval_needed > 0.0 ? res->neval_needed : NAN, 0);
  fprintf(out, "\"thin\":%s,", res->thin ? "true" : "false");
  json_number(out, "thin_neval", res->thin ? res->thin_neval : NAN, 0);
  json_peaks(out, res);
  fprintf(out, "\"backend\":\"%s\",\"ranks\":%d,\"nhcube\":%d,",
          info->backend ? info->backend : "", info->ranks,
          res->nhcube);
  json_number(out, "allreduce_s", res->comm_time_s, 0);
  if (info->exchange) {
    json_string(out, "exchange", info->exchange);
    json_number(out, "setup_s", info->setup_s, 0);
  }
  json_number(out, "time_s", res->time_s, 1);
  fprintf(out, "}\n");
  fflush(out);
}
