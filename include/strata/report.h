/* What a run prints, as `strata run` prints it: the Lepage-style iteration
 * table, the summary, the JSON line.  To a stream, or as one string for
 * callers without a FILE (bindings). */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strata/strata.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "1.23456(78)": the value with two digits of its error in parentheses,
 * "1.2340(56)e-07" where the plain form would be unreadable, "(0)" or
 * "(?)" for an error that is 0 or unknown (NaN), "inf +- 1" for what is
 * not finite or a negative error.  At most len - 1 characters and the
 * terminating 0 (a short buffer truncates). */
void strata_report_value_error(char *buf, size_t len, double value, double err);

void strata_report_header(FILE *out);
/* A vector integrand's iteration takes a line per component: "  7:0 " for
 * component 0, "   :c " for the others. */
void strata_report_iteration(FILE *out, const strata_iteration *it);
/* A vector integrand's iteration shows its first STRATA_MAX_COMP
 * components and a line that counts the rest. */
/* exact may be NaN (unknown).  A vector integrand's summary gives every
 * component's average, chi2/dof and Q ("result[c]  = ...") and the
 * correlation matrix of the averages, of the first STRATA_MAX_COMP
 * components where there are more (a line counts the rest); its JSON adds
 * "ncomp", "components" and "covariance" (the scalar keys are component
 * 0's). */
void strata_report_summary(FILE *out, const strata_result *res, double exact);

/* The header, the n iterations and, where res is not NULL, the summary, as
 * the functions above print them, in one string: *text is malloc'ed,
 * free() it.  STRATA_OK, or STRATA_ENOMEM (*text NULL). */
int strata_report_text(const strata_iteration *its, int n, const strata_result *res,
                       double exact, char **text);

typedef struct {
  const char *integrand;
  int dim;
  const char *mode;
  const char *backend;
  int ranks;
  double exact;
  /* What tells one task of a sweep from another. */
  uint64_t seed;
  const double *params;
  int nparams;
  const char *source;      /* a user integrand's code hash (16 hex digits), NULL for a built-in */
  const char *job;         /* the job file, or "(default job)" */
  const char *job_hash;    /* definition_hash of the job (doc/file-formats.md) */
  const char *map;         /* [vegas] map, NULL if none */
  /* Several GPU ranks: how they exchange ("nccl ..." or "mpi ..."), and
   * the one-time set-up of that exchange (not in the run's time). */
  const char *exchange;
  double setup_s;
} strata_report_info;

void strata_report_json(FILE *out, const strata_result *res, const strata_report_info *info);
/* Every component of a vector integrand: ncomp of each, cov[a * ncomp + b]
 * (strata_integrator_components). */
typedef struct {
  int ncomp;
  const double *integral, *sigma, *chi2_dof, *q, *cov;
} strata_report_comps;
/* The JSON with all's components and covariance (all NULL: those res
 * holds, the first STRATA_MAX_COMP). */
void strata_report_json_all(FILE *out, const strata_result *res, const strata_report_comps *all,
                            const strata_report_info *info);

#ifdef __cplusplus
}
#endif
#endif
