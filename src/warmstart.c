#include "warmstart.h"

#include <stdint.h>
#include <string.h>

#include "error.h"
#include "stamp.h"

/* The saved map at unit position j / nnew, interpolated linearly inside
 * its increment; integer arithmetic finds the increment, so that equal
 * ninc copies the edges bit for bit. */
static void rebin_axis(const double *e, int nold, double *out, int nnew)
{
  out[0] = 0.0;
  for (int j = 1; j < nnew; j++) {
    int64_t pos = (int64_t)j * nold;
    int i = (int)(pos / nnew);
    double f = (double)(pos % nnew) / (double)nnew;
    out[j] = f == 0.0 ? e[i] : e[i] + f * (e[i + 1] - e[i]);
  }
  out[nnew] = 1.0;
}

int strata_run_start_from(strata_run *r, int naxes, int ninc, const double *edges,
                          int64_t nhcube, const int64_t *nh, int *took_allocation)
{
  if (took_allocation) *took_allocation = 0;
  const int mode = r->params.mode;
  if (mode == STRATA_MODE_PLAIN || mode == STRATA_MODE_QMC)
    return strata_error(STRATA_EINVAL, "mode %s has no map to start from",
                        strata_mode_name(mode));
  if (r->ravg.n > 0)
    return strata_error(STRATA_EINVAL, "a map can only start a run, not one at iteration %d",
                        r->ravg.n);
  const int want = strata_map_naxes(r->map);
  if (naxes != want)
    return strata_error(STRATA_EINVAL, "the map has %d ax%s, this job needs %d (%s)", naxes,
                        naxes == 1 ? "is" : "es", want,
                        want == 1 ? "vegas1d shares one map" : "one per dimension");
  if (ninc < 1)
    return strata_error(STRATA_EINVAL, "the map has %d increments", ninc);
  const int bad = strata_map_edges_bad_axis(edges, naxes, ninc);
  if (bad)
    return strata_error(STRATA_EINVAL, "the map of axis %d does not increase from 0 to 1", bad);
  const int rc = strata_run_sync(r);
  if (rc != STRATA_OK) return rc;
  const int n = r->map->ninc;
  for (int a = 0; a < naxes; a++)
    rebin_axis(edges + (size_t)a * (size_t)(ninc + 1), ninc,
               r->map->edges + (size_t)a * (size_t)(n + 1), n);
  r->map->generation = strata_stamp_next(); /* devices holding the old map upload this one */

  strata_strat *s = r->strat;
  if (!nh || nhcube != s->nhcube || !strata_strat_moves(s)) return STRATA_OK;
  for (int64_t h = 0; h < nhcube; h++)
    if (nh[h] < 2) return STRATA_OK; /* not an allocation strata wrote: the even one stays */
  const int64_t budget = s->neval;
  strata_strat_restore(s, nh);
  strata_strat_rescale(s, budget);
  if (took_allocation) *took_allocation = 1;
  return STRATA_OK;
}
