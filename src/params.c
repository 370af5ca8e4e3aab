#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "strata/strata.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

const char *strata_version(void) { return PACKAGE_VERSION; }

void strata_params_default(strata_params *p)
{
  if (!p) {
    strata_error_null(__func__, "params");
    return;
  }
  memset(p, 0, sizeof *p);
#define STRATA_KEY_DEFAULT(type, field, kind, key, keyword, lo, hi, def, choices) p->field = def;
  STRATA_PARAMS_KEYS(STRATA_KEY_DEFAULT)
#undef STRATA_KEY_DEFAULT
  p->peaks.search = STRATA_PEAKS_AUTO;
  p->peaks.starts = 1024;
  p->peaks.ascents = 4;
  p->peaks.uniform = 0.02;
  p->peaks.nknown = 0;
}

static const char *mode_names[] = {"vegas+", "vegas", "vegas1d", "plain", "qmc"};
#define NMODES ((int)(sizeof mode_names / sizeof *mode_names))

const char *strata_mode_name(strata_mode m)
{
  return (unsigned)m < NMODES ? mode_names[m] : "?";
}

int strata_mode_parse(const char *s, strata_mode *m)
{
  STRATA_GIVEN(s, "name");
  STRATA_GIVEN(m, "mode to set");
  for (int i = 0; i < NMODES; i++)
    if (strcasecmp(s, mode_names[i]) == 0) {
      *m = (strata_mode)i;
      return 0;
    }
  char shown[64];
  strata_escape(shown, sizeof shown, s);
  return strata_error(STRATA_EINVAL, "mode '%s': must be vegas+, vegas, vegas1d, plain or qmc",
                      shown);
}

static int peaks_check(const strata_params *p)
{
  const strata_peaks_params *k = &p->peaks;
  if (k->search < STRATA_PEAKS_AUTO || k->search > STRATA_PEAKS_ON)
    return strata_error(STRATA_EINVAL, "peaks.search = %d: must be auto (-1), off (0) or on (1)",
                        k->search);
  if (k->search == STRATA_PEAKS_ON && (p->mode == STRATA_MODE_PLAIN || p->mode == STRATA_MODE_QMC))
    return strata_error(STRATA_EINVAL, "peaks.search = on: mode %s has no map to add channels "
                        "to; use a vegas mode or peaks.search = off", strata_mode_name(p->mode));
  if (k->starts < 0 || k->starts > 1 << 20)
    return strata_error(STRATA_EINVAL, "peaks.starts = %d: must be in 0..%d", k->starts, 1 << 20);
  if (k->ascents < 1 || k->ascents > 64)
    return strata_error(STRATA_EINVAL, "peaks.ascents = %d: must be in 1..64", k->ascents);
  if (!(k->uniform > 0.0) || !(k->uniform <= 0.5))
    return strata_error(STRATA_EINVAL, "peaks.uniform = %g: must be in (0, 0.5]", k->uniform);
  if (k->nknown < 0 || k->nknown > STRATA_MAX_KNOWN)
    return strata_error(STRATA_EINVAL, "peaks.known: %d points, at most %d", k->nknown,
                        STRATA_MAX_KNOWN);
  for (int i = 0; i < k->nknown; i++)
    for (int d = 0; d < STRATA_MAX_DIM; d++)
      if (!isfinite(k->known[i][d]))
        return strata_error(STRATA_EINVAL, "peaks.known: point %d, axis %d is not a finite "
                            "number", i + 1, d + 1);
  return STRATA_OK;
}

int strata_params_check(const strata_params *p)
{
  STRATA_GIVEN(p, "params");
  if ((unsigned)p->mode >= NMODES)
    return strata_error(STRATA_EINVAL, "mode must be vegas+, vegas, vegas1d, plain or qmc");
  if ((unsigned)p->qmc > STRATA_QMC_LATTICE)
    return strata_error(STRATA_EINVAL, "qmc must be sobol or lattice");
  if (p->nrand < 2 || p->nrand > 4096)
    return strata_error(STRATA_EINVAL, "nrand = %d: must be in 2..4096 (the error comes from "
                        "the spread of the randomizations)", p->nrand);
  if (p->mode == STRATA_MODE_QMC && p->neval < 2 * (int64_t)p->nrand)
    return strata_error(STRATA_EINVAL, "neval = %lld: mode qmc needs at least 2 points per "
                        "randomization (nrand = %d)", (long long)p->neval, p->nrand);
  if (p->neval < 2)
    return strata_error(STRATA_EINVAL, "neval = %lld: must be at least 2", (long long)p->neval);
  if (p->maxeval < p->neval)
    return strata_error(STRATA_EINVAL, "maxeval = %lld is smaller than neval = %lld",
                        (long long)p->maxeval, (long long)p->neval);
  if (p->maxiter < 1 || p->maxiter > 1000000)
    return strata_error(STRATA_EINVAL, "maxiter = %d: must be in 1..1000000", p->maxiter);
  if (p->adapt_iters < 0)
    return strata_error(STRATA_EINVAL, "adapt_iters = %d: must be >= 0", p->adapt_iters);
  /* skip leaves out iterations of a poor map: only the adapting modes
   * have one, the others keep every iteration. */
  if (p->skip < 0 || (p->skip >= p->maxiter && p->mode != STRATA_MODE_PLAIN &&
                      p->mode != STRATA_MODE_QMC))
    return strata_error(STRATA_EINVAL, "skip = %d: must be in 0..maxiter-1 (maxiter = %d)",
                        p->skip, p->maxiter);
  if (!(p->epsrel >= 0.0) || !(p->epsabs >= 0.0))
    return strata_error(STRATA_EINVAL, "epsrel and epsabs must be >= 0");
  if (p->ninc < 1 || p->ninc > 1000000)
    return strata_error(STRATA_EINVAL, "ninc = %d: must be in 1..1000000", p->ninc);
  if (!(p->alpha >= 0.0) || !isfinite(p->alpha))
    return strata_error(STRATA_EINVAL, "alpha = %g: must be a finite number >= 0", p->alpha);
  if (!(p->beta >= 0.0) || !(p->beta <= 1.0))
    return strata_error(STRATA_EINVAL, "beta = %g: must be in [0, 1]", p->beta);
  if (p->max_nhcube < 1)
    return strata_error(STRATA_EINVAL, "max_nhcube = %lld: must be >= 1",
                        (long long)p->max_nhcube);
  if (!(p->min_q >= 0.0) || !(p->min_q < 1.0))
    return strata_error(STRATA_EINVAL, "min_q = %g: must be in [0, 1)", p->min_q);
  if (p->nthreads < 0 || p->nthreads > STRATA_MAX_THREADS)
    return strata_error(STRATA_EINVAL, "threads = %d: must be in 0..%d (0: every core)",
                        p->nthreads, STRATA_MAX_THREADS);
  if (p->neval_frozen != 0 && p->neval_frozen < 2)
    return strata_error(STRATA_EINVAL, "neval_frozen = %lld: must be at least 2 (or 0: neval)",
                        (long long)p->neval_frozen);
  if (p->neval_frozen && (p->mode == STRATA_MODE_PLAIN || p->mode == STRATA_MODE_QMC))
    return strata_error(STRATA_EINVAL, "neval_frozen: mode %s has no adapting iterations; "
                        "set neval instead", strata_mode_name(p->mode));
  if (p->maxeval < p->neval_frozen)
    return strata_error(STRATA_EINVAL, "maxeval = %lld is smaller than neval_frozen = %lld",
                        (long long)p->maxeval, (long long)p->neval_frozen);
  return peaks_check(p);
}

int strata_problem_check(const strata_problem *pr)
{
  STRATA_GIVEN(pr, "problem");
  if (!pr->f && !pr->fv && !pr->fu && !pr->fb)
    return strata_error(STRATA_EINVAL, "no integrand given");
  /* One form only: which one a run would take is nobody's guess. */
  const char *forms[] = {pr->f ? "f" : NULL, pr->fv ? "fv" : NULL, pr->fu ? "fu" : NULL,
                         pr->fb ? "fb" : NULL};
  const char *one = NULL;
  for (int k = 0; k < 4; k++) {
    if (!forms[k]) continue;
    if (one)
      return strata_error(STRATA_EINVAL, "%s and %s are both set: give one of f, fv, fu and fb",
                          one, forms[k]);
    one = forms[k];
  }
  if (pr->batch < 0 || pr->batch > 1000000)
    return strata_error(STRATA_EINVAL, "batch = %d: must be in 1..1000000 (or 0: 1024)",
                        pr->batch);
  if (pr->ncomp < 0 || pr->ncomp > STRATA_MAX_NCOMP)
    return strata_error(STRATA_EINVAL, "ncomp = %d: must be in 1..%d", pr->ncomp, STRATA_MAX_NCOMP);
  if (pr->ncomp > 1 && !pr->fv && !pr->fu && !pr->fb)
    return strata_error(STRATA_EINVAL, "ncomp = %d needs a vector form (fv, fu or fb)",
                        pr->ncomp);
  if (pr->ncomp > 1 && (pr->adapt_comp < -1 || pr->adapt_comp >= pr->ncomp))
    return strata_error(STRATA_EINVAL, "adapt_comp = %d: must be -1 (sum) or 0..%d",
                        pr->adapt_comp, pr->ncomp - 1);
  if (pr->ncomp <= 1 && pr->adapt_comp != 0 && pr->adapt_comp != -1)
    return strata_error(STRATA_EINVAL, "adapt_comp = %d: a scalar integrand has one component, "
                        "0 (or -1, the sum, the same)", pr->adapt_comp);
  if (pr->ntables < 0 || pr->ntables > STRATA_MAX_TABLES || (pr->ntables && !pr->tables))
    return strata_error(STRATA_EINVAL, "%d tables: at most %d, and given", pr->ntables,
                        STRATA_MAX_TABLES);
  if (pr->dim < 1 || pr->dim > STRATA_MAX_DIM)
    return strata_error(STRATA_EINVAL, "dim = %d: must be in 1..%d", pr->dim, STRATA_MAX_DIM);
  if (pr->nparams < 0 || pr->nparams > STRATA_MAX_PARAMS)
    return strata_error(STRATA_EINVAL, "%d params: at most %d", pr->nparams, STRATA_MAX_PARAMS);
  for (int d = 0; d < pr->dim; d++) {
    if (!isfinite(pr->lower[d]) || !isfinite(pr->upper[d]))
      return strata_error(STRATA_EINVAL, "axis %d: bounds must be finite", d + 1);
    if (!(pr->lower[d] < pr->upper[d]))
      return strata_error(STRATA_EINVAL, "axis %d: lower %g must be below upper %g", d + 1,
                          pr->lower[d], pr->upper[d]);
    if (!isfinite(pr->upper[d] - pr->lower[d]))
      return strata_error(STRATA_EINVAL, "axis %d: the width from %g to %g is beyond the "
                          "largest double", d + 1, pr->lower[d], pr->upper[d]);
  }
  /* The volume is a factor of every sample's weight (the map's Jacobian). */
  double vol = 1.0;
  for (int d = 0; d < pr->dim; d++) vol *= pr->upper[d] - pr->lower[d];
  if (!isfinite(vol) || vol < DBL_MIN)
    return strata_error(STRATA_EINVAL, "the box's volume %g is beyond the range of doubles "
                        "(rescale the variables)", vol);
  return STRATA_OK;
}
