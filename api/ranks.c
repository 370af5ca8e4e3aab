#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "ranks.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "jobdef.h"

/* Of "key = value" lines: the first key of mine whose value in theirs
 * differs or is missing, with both values. */
static int first_difference(const char *mine, const char *theirs, char *key, size_t klen,
                            char *a, char *b, size_t vlen)
{
  for (const char *s = mine; *s;) {
    size_t n = strcspn(s, "\n");
    const char *eq = strstr(s, " = ");
    if (eq && eq > s && (size_t)(eq - s) + 3 <= n) {
      size_t kn = (size_t)(eq - s);
      snprintf(key, klen, "%.*s", (int)kn, s);
      snprintf(a, vlen, "%.*s", (int)(n - kn - 3), eq + 3);
      snprintf(b, vlen, "(missing)");
      for (const char *t = theirs; *t;) {
        size_t m = strcspn(t, "\n");
        if (m >= kn + 3 && !strncmp(t, s, kn + 3)) {
          snprintf(b, vlen, "%.*s", (int)(m - kn - 3), t + kn + 3);
          break;
        }
        t += m;
        if (*t) t++;
      }
      if (strcmp(a, b)) return 1;
    }
    s += n;
    if (*s) s++;
  }
  return 0;
}

int strata_ranks_same_job(strata_comm *comm, const strata_problem *pr, const strata_params *p,
                          int check_ranks, const char *name)
{
  /* The whole definition, the keys that only decide when to stop too
   * (maxiter decides how many collectives a rank makes), and check_ranks
   * (whether it makes the state comparisons).  Ranks that disagree on any
   * of it would take part in different collectives with buffers of
   * different sizes. */
  char mine[STRATA_JOBDEF_MAX + 64], root[STRATA_JOBDEF_MAX + 64];
  int rc = strata_jobdef_text(pr, p, mine, STRATA_JOBDEF_MAX);
  if (rc == STRATA_OK)
    snprintf(mine + strlen(mine), sizeof mine - strlen(mine), "run.check_ranks = %s\n",
             check_ranks ? "on" : "off");
  if (comm->size < 2) return rc;
  memcpy(root, mine, sizeof root);
  /* A rank whose text failed still takes part, or the others would wait. */
  if (comm->broadcast(comm, root, sizeof root, 0) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot receive rank 0's job definition",
                        comm->rank);
  char key[128], a[STRATA_JOBDEF_MAX], b[STRATA_JOBDEF_MAX];
  if (rc == STRATA_OK && (first_difference(mine, root, key, sizeof key, a, b, sizeof a) ||
                          first_difference(root, mine, key, sizeof key, b, a, sizeof a)))
    rc = strata_error(STRATA_EINVAL, "%s: not the job of rank 0: %s = %s here, %s on rank 0%s "
                      "(every rank must run the same job)", name, key, a, b,
                      !strcmp(key, "integral.source") ? " (the integrand's code or "
                      "tables differ)" : "");
  return rc;
}

int strata_ranks_agree(strata_comm *comm, int rc)
{
  if (comm->size == 1) return rc;
  double bad = rc != STRATA_OK;
  if (comm->allreduce_sum(comm, &bad, 1) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot reach the other ranks", comm->rank);
  if (rc != STRATA_OK) return rc;
  return bad > 0 ? strata_error(STRATA_EPEER, "rank %d: %g other rank%s failed (see their "
                                "messages)", comm->rank, bad, bad == 1 ? "" : "s")
                 : STRATA_OK;
}

int strata_ranks_follow_root(strata_comm *comm, int rc, double *count, int with_message,
                             int *lost)
{
  if (lost) *lost = 0;
  if (comm->size == 1) return rc;
  if (with_message) {
    struct {
      int rc;
      char msg[1024];
    } o = {rc, ""};
    if (comm->rank == 0 && rc != STRATA_OK)
      snprintf(o.msg, sizeof o.msg, "%s", strata_last_error());
    if (comm->broadcast(comm, &o, sizeof o, 0) != 0) {
      if (lost) *lost = 1;
      return strata_error(STRATA_ECOMM, "rank %d: cannot reach rank 0", comm->rank);
    }
    if (comm->rank != 0 && o.rc != STRATA_OK) return strata_error(o.rc, "%s", o.msg);
    return o.rc;
  }
  /* Ranks that know nothing add zeros: x + 0 = x exactly. */
  double v[2] = {comm->rank == 0 ? (double)rc : 0.0, count ? *count : 0.0};
  if (comm->allreduce_sum(comm, v, 2) != 0) {
    if (lost) *lost = 1;
    return strata_error(STRATA_ECOMM, "rank %d: agreeing with the other ranks failed",
                        comm->rank);
  }
  if (count) *count = v[1];
  if (v[0] != 0.0 && comm->rank != 0) return strata_error((int)v[0], "(see rank 0)");
  return (int)v[0];
}
