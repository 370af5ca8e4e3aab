/* What a run prints: Lepage-style iteration table, final summary, JSON. */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H
#include <stdint.h>
#include <stdio.h>

#include "strata/strata.h"

void strata_report_header(FILE *out);
/* A vector integrand's iteration takes a line per component: "  7:0 " for
 * component 0, "   :c " for the others. */
void strata_report_iteration(FILE *out, const strata_iteration *it);
/* exact may be NaN (unknown).  A vector integrand's summary gives every
 * component's average, chi2/dof and Q ("result[c]  = ...") and the
 * correlation matrix of the averages; its JSON adds "ncomp", "components"
 * and "covariance" (the scalar keys are component 0's). */
void strata_report_summary(FILE *out, const strata_result *res, double exact);

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
#endif
