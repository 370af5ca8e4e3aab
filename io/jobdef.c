#include "jobdef.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "hash.h"
#include "qmc.h"
#include "usercode.h"

typedef struct {
  char *buf;
  size_t len, used;
  int overflow;
} text;

static void add(text *t, const char *fmt, ...) STRATA_PRINTF(2, 3);
static void add(text *t, const char *fmt, ...)
{
  if (t->overflow) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->len - t->used) t->overflow = 1;
  else t->used += (size_t)n;
}

static void add_list(text *t, const char *key, const double *v, int n)
{
  add(t, "%s =", key);
  for (int i = 0; i < n; i++) add(t, "%s %.17g", i ? "," : "", v[i]);
  add(t, "\n");
}

int strata_jobdef_text(const strata_problem *pr, const strata_params *p, char *buf, size_t len)
{
  text t = {buf, len, 0, 0};
  buf[0] = '\0';
  add(&t, "integral.integrand = %s\n", pr->name ? pr->name : "(unnamed)");
  add(&t, "integral.dim = %d\n", pr->dim);
  add_list(&t, "integral.lower", pr->lower, pr->dim);
  add_list(&t, "integral.upper", pr->upper, pr->dim);
  add_list(&t, "integral.params", pr->params, pr->nparams);
  /* User code: its hash stands for the source, the form and the tables'
   * contents, so a checkpoint refuses to continue with different code. */
  if (pr->source)
    add(&t, "integral.source = %016llx\n", (unsigned long long)strata_source_hash(pr->source));
  /* ... and how it was compiled, where not by default. */
  if (pr->source && strata_source_compiler(pr->source)[0])
    add(&t, "integral.compiler = %s\n", strata_source_compiler(pr->source));
  if (pr->ncomp > 1) {
    add(&t, "integral.ncomp = %d\n", pr->ncomp);
    add(&t, "integral.adapt = %d\n", pr->adapt_comp);
  }
  add(&t, "vegas.mode = %s\n", strata_mode_name(p->mode));
  add(&t, "vegas.neval = %lld\n", (long long)p->neval);
  add(&t, "vegas.ninc = %d\n", p->ninc);
  add(&t, "vegas.alpha = %.17g\n", p->alpha);
  add(&t, "vegas.beta = %.17g\n", p->beta);
  add(&t, "vegas.max_nhcube = %lld\n", (long long)p->max_nhcube);
  add(&t, "vegas.adapt_iters = %d\n", p->adapt_iters);
  add(&t, "vegas.seed = %llu\n", (unsigned long long)p->seed);
  add(&t, "vegas.maxiter = %d\n", p->maxiter);
  add(&t, "vegas.maxeval = %lld\n", (long long)p->maxeval);
  add(&t, "vegas.skip = %d\n", p->skip);
  add(&t, "vegas.epsrel = %.17g\n", p->epsrel);
  add(&t, "vegas.epsabs = %.17g\n", p->epsabs);
  add(&t, "vegas.min_q = %.17g\n", p->min_q);
  /* Only where they matter, so that checkpoints of the other modes keep
   * the definition they were written with. */
  if (p->mode == STRATA_MODE_QMC || p->qmc_map) {
    add(&t, "vegas.qmc = %s\n", strata_qmc_rule_name(p->qmc));
    add(&t, "vegas.nrand = %d\n", p->nrand);
  }
  if (p->qmc_map) add(&t, "vegas.qmc_map = on\n");
  if (p->neval_frozen) add(&t, "vegas.neval_frozen = %lld\n", (long long)p->neval_frozen);
  /* The peak search where it may run (doc/peaks.md, "Settings"): off, in
   * modes plain and qmc, for a vector integrand and with qmc_map, nothing,
   * so that such a definition is the one strata wrote before it had a
   * search, and the checkpoints of that time resume with it off. */
  const strata_peaks_params *k = &p->peaks;
  if (k->search != STRATA_PEAKS_OFF && p->mode != STRATA_MODE_PLAIN &&
      p->mode != STRATA_MODE_QMC && pr->ncomp <= 1 && !p->qmc_map) {
    add(&t, "peaks.search = %s\n", k->search == STRATA_PEAKS_ON ? "on" : "auto");
    add(&t, "peaks.starts = %d\n", k->starts);
    add(&t, "peaks.ascents = %d\n", k->ascents);
    add(&t, "peaks.uniform = %.17g\n", k->uniform);
    if (k->nknown) {
      add(&t, "peaks.known =");
      for (int i = 0; i < k->nknown; i++)
        for (int d = 0; d < pr->dim; d++) add(&t, "%s %.17g", i && !d ? ";" : "", k->known[i][d]);
      add(&t, "\n");
    }
  }
  if (t.overflow) return strata_error(STRATA_EINVAL, "job definition longer than %zu bytes", len);
  return STRATA_OK;
}

int strata_jobdef_safe_key(const char *key)
{
  static const char *safe[] = {"vegas.maxiter", "vegas.maxeval", "vegas.skip",
                               "vegas.epsrel",  "vegas.epsabs",  "vegas.min_q"};
  for (size_t i = 0; i < sizeof safe / sizeof *safe; i++)
    if (!strcmp(key, safe[i])) return 1;
  return 0;
}

/* Splits "key = value" at the first " = "; key and value are copied. */
static int split(const char *line, size_t n, char *key, size_t klen, char *val, size_t vlen)
{
  const char *eq = NULL;
  for (size_t i = 0; i + 3 <= n; i++)
    if (!memcmp(line + i, " = ", 3)) {
      eq = line + i;
      break;
    }
  if (!eq || (size_t)(eq - line) >= klen || n - (size_t)(eq - line) - 3 >= vlen) return -1;
  memcpy(key, line, (size_t)(eq - line));
  key[eq - line] = '\0';
  size_t vn = n - (size_t)(eq - line) - 3;
  memcpy(val, eq + 3, vn);
  val[vn] = '\0';
  return 0;
}

void strata_jobdef_hash(const char *s, char out[17])
{
  uint64_t h = STRATA_HASH64_INIT;
  while (*s) {
    size_t n = strcspn(s, "\n");
    char key[128], val[STRATA_JOBDEF_MAX];
    if (split(s, n, key, sizeof key, val, sizeof val) != 0 || !strata_jobdef_safe_key(key))
      h = strata_hash64(h, s, n + (s[n] == '\n')); /* the line and its newline */
    s += n;
    if (*s) s++;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The value of key in text, or -1 when text has no such line. */
static int lookup(const char *s, const char *want, char *val, size_t vlen)
{
  while (*s) {
    size_t n = strcspn(s, "\n");
    char key[128];
    if (split(s, n, key, sizeof key, val, vlen) == 0 && !strcmp(key, want)) return 0;
    s += n;
    if (*s) s++;
  }
  return -1;
}

static int differs(const char *key, const char *a, const char *b, int force,
                   const char *override, const char *saved_name, const char *kind,
                   const char *job_name)
{
  if (strata_jobdef_safe_key(key)) {
    if (force) return STRATA_OK;
    /* An option is added, a field set. */
    return strata_error(STRATA_EINVAL, "%s: %s = %s in the %s, %s in %s: %s %s to continue "
                        "with the new value", saved_name, key, a, kind, b, job_name,
                        override[0] == '-' ? "add" : "set", override);
  }
  if (!strcmp(key, "integral.identity"))
    return strata_error(STRATA_EINVAL, "%s: made for other data: the identity of the caller's "
                        "data is '%s' in the %s, '%s' in %s", saved_name, a, kind, b, job_name);
  /* Written before the peak search, or with it off: continues with it off. */
  if (!strncmp(key, "peaks.", 6) && !strcmp(a, "(missing)"))
    return strata_error(STRATA_EINVAL, "%s: made without the peak search (no %s in the %s, %s "
                        "in %s): continue it with peaks.search = off", saved_name, key, kind, b,
                        job_name);
  if (!strncmp(key, "peaks.", 6) && !strcmp(b, "(missing)"))
    return strata_error(STRATA_EINVAL, "%s: made with the peak search (%s = %s in the %s), "
                        "which is off in %s: it cannot continue without it", saved_name, key, a,
                        kind, job_name);
  return strata_error(STRATA_EINVAL, "%s: made for a different job: %s = %s in the %s, %s in "
                      "%s (this key decides the samples: %s cannot change it)",
                      saved_name, key, a, kind, b, job_name, override);
}

/* peaks.search = auto and on are one run: the definition has the key only
 * where the search may run, and there auto runs it as on does (a backend
 * without it refuses on, and a checkpoint without its state is refused on
 * restoring). */
static int same_search(const char *key, const char *a, const char *b)
{
  return !strcmp(key, "peaks.search") && (!strcmp(a, "auto") || !strcmp(a, "on")) &&
         (!strcmp(b, "auto") || !strcmp(b, "on"));
}

int strata_jobdef_compare(const char *saved, const char *now, int force,
                          const char *saved_name, const char *kind, const char *job_name)
{
  return strata_jobdef_compare_as(saved, now, force, "--force", saved_name, kind, job_name);
}

int strata_jobdef_compare_as(const char *saved, const char *now, int force,
                             const char *override, const char *saved_name, const char *kind,
                             const char *job_name)
{
  static char a[STRATA_JOBDEF_MAX], b[STRATA_JOBDEF_MAX];
  /* The job's keys in the job's order, then any the checkpoint has beyond
   * them (a file from another version): either way the first difference. */
  for (int pass = 0; pass < 2; pass++) {
    const char *s = pass == 0 ? now : saved, *other = pass == 0 ? saved : now;
    while (*s) {
      size_t n = strcspn(s, "\n");
      char key[128];
      if (split(s, n, key, sizeof key, pass == 0 ? b : a, STRATA_JOBDEF_MAX) == 0) {
        char *mine = pass == 0 ? b : a, *theirs = pass == 0 ? a : b;
        if (lookup(other, key, theirs, STRATA_JOBDEF_MAX) != 0) strcpy(theirs, "(missing)");
        if (strcmp(mine, theirs) && !same_search(key, mine, theirs)) {
          int rc = differs(key, a, b, force, override, saved_name, kind, job_name);
          if (rc != STRATA_OK) return rc;
        }
      }
      s += n;
      if (*s) s++;
    }
  }
  return STRATA_OK;
}
