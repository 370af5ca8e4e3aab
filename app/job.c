#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "job.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "message.h"

const char strata_default_job[] =
    "; The default job: a sharp 6-D gaussian, f4 of the m-CUBES suite.\n"
    "[integral]\n"
    "integrand = f4\n"
    "dim = 6\n"
    "[vegas]\n"
    "mode = vegas+\n"
    "neval = 1e6\n"
    "epsrel = 1e-3\n"
    "seed = 1\n"
    "[run]\n"
    "backend = auto\n";

void strata_job_init(strata_job *job)
{
  memset(job, 0, sizeof *job);
  strata_params_default(&job->p);
  job->nparams = -1;
  job->adapt_comp = -2;
  strcpy(job->backend, "auto");
  strata_settings_init(&job->settings);
  /* By time, not by count: a GPU can run an iteration in milliseconds, and
   * a checkpoint after each would cost more than the iteration.  A crash
   * then loses at most a minute; a signal loses nothing. */
  job->settings.checkpoint_every_s = 60;
}

/* The job file's keys of strata_params and strata_settings
 * (strata/keys.h): where each goes and how it is read. */
typedef struct {
  const char *key;      /* "section.key"; "": none */
  int kind;             /* STRATA_KEY_* */
  int setting;          /* a field of strata_settings, else of strata_params */
  size_t offset, size;
  double lo, hi;
  const char *choices;
} job_key;

#define PARAMS_KEY(type, field, kind, key, keyword, lo, hi, def, choices)                     \
  {key, STRATA_KEY_##kind, 0, offsetof(strata_params, field), sizeof(type), lo, hi, choices},
#define SETTINGS_KEY(type, field, kind, key, keyword, lo, hi, def, choices)                   \
  {key, STRATA_KEY_##kind, 1, offsetof(strata_settings, field), sizeof(type), lo, hi, choices},
static const job_key job_keys[] = {STRATA_PARAMS_KEYS(PARAMS_KEY)
                                       STRATA_SETTINGS_KEYS(SETTINGS_KEY)};
#undef PARAMS_KEY
#undef SETTINGS_KEY
#define NKEYS (sizeof job_keys / sizeof *job_keys)

#define STRATA_STR_(x) #x
#define STRATA_STR(x) STRATA_STR_(x)

/* The longest line of a job file, and of a --set value: room for 32
 * bounds at full precision, and an inline body's longest line. */
#define STRATA_JOB_LINE_MAX 4096

/* More than the job keys there are: a key seen once, and where. */
#define STRATA_JOB_MAX_KEYS 64

/* Where a value came from, for messages: "job.ini:12" or "--set ...". */
typedef struct {
  strata_job *job;
  char where[STRATA_JOB_PATH_MAX + 32];
  int line;             /* lines read so far: the handler's line */
  int err_line;         /* line of the first error the handler found */
  int rc;
  FILE *file;           /* the reader's source: a file ... */
  const char *text;     /* ... or a string */
  char *buf;            /* the reader's whole line (getline) */
  size_t bufsize;
  int indented;         /* the line read starts with white space */
  char raw[STRATA_JOB_LINE_MAX + 2]; /* the line as read, its comment included */
  char prev_key[128];   /* "section.key" of the last key line, "" after a [section] */
  struct {
    char key[128];
    int line;
  } seen[STRATA_JOB_MAX_KEYS];
  int nseen;
} parse_ctx;

/* Records the handler's first error, prefixed with where it happened. */
static int fail(parse_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parse_ctx *c, const char *fmt, ...)
{
  if (c->rc != STRATA_OK) return 0;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->err_line = c->line;
  if (c->file || c->text)
    c->rc = app_error(STRATA_EINVAL, "%s:%d: %s", c->where, c->line, msg);
  else
    c->rc = app_error(STRATA_EINVAL, "%s: %s", c->where, msg);
  return 0;
}

static int bad(parse_ctx *c, const char *section, const char *key, const char *value,
               const char *why)
{
  return fail(c, "%s.%s = '%s': %s", section, key, value, why);
}

static int parse_double(const char *v, double *out)
{
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  while (*end == ' ' || *end == '\t') end++;
  if (end == v || *end != '\0' || errno == ERANGE || !isfinite(x)) return -1;
  *out = x;
  return 0;
}

/* A whole number as the docs promise it: decimal digits (010 is ten:
 * strtoull's base 0 would read octal eight, and refuse 08) or 0x and hex
 * digits; with exp, also decimal notation of a whole number (1e6, 2.5e5),
 * through strtod, which by itself would take hex floats, inf and nan. */
static int parse_whole(const char *v, int exp, uint64_t *out)
{
  char *end;
  errno = 0;
  int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  if (!isdigit((unsigned char)v[hex ? 2 : 0]) && !(hex && isxdigit((unsigned char)v[2])))
    return -1;
  unsigned long long x = strtoull(hex ? v + 2 : v, &end, hex ? 16 : 10);
  if (errno == ERANGE) return -1;
  if (*end == '\0') {
    *out = x;
    return 0;
  }
  if (hex || !exp || (*end != '.' && *end != 'e' && *end != 'E')) return -1;
  double d;
  /* 2^64 and beyond do not fit: no count comes near it. */
  if (parse_double(v, &d) != 0 || d != floor(d) || d >= 18446744073709551616.0) return -1;
  *out = (uint64_t)d;
  return 0;
}

/* Counts are often written 1e6; accept that, but only for whole numbers. */
static int parse_count(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
  uint64_t x;
  if (parse_whole(v, 1, &x) != 0 || x < (uint64_t)lo || x > (uint64_t)hi) return -1;
  *out = (int64_t)x;
  return 0;
}

/* The number of values, -1 for a malformed one, -2 for more than max. */
static int parse_list(const char *v, double *out, int max)
{
  char buf[STRATA_JOB_LINE_MAX + 1];
  if (strlen(v) >= sizeof buf) return -1;
  strcpy(buf, v);
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ", \t", &save); tok;
       tok = strtok_r(NULL, ", \t", &save)) {
    double x;
    if (parse_double(tok, &x) != 0) return -1;
    if (n == max) return -2;
    out[n++] = x;
  }
  return n;
}

static int set_int(parse_ctx *c, const char *s, const char *k, const char *v,
                   int64_t lo, int64_t hi, int64_t *out)
{
  if (parse_count(v, lo, hi, out) == 0) return 1;
  char why[96];
  snprintf(why, sizeof why, "expected a whole number in %lld..%lld", (long long)lo,
           (long long)hi);
  return bad(c, s, k, v, why);
}

static int set_real(parse_ctx *c, const char *s, const char *k, const char *v,
                    double lo, double hi, double *out)
{
  double x;
  if (parse_double(v, &x) == 0 && x >= lo && x <= hi) {
    *out = x;
    return 1;
  }
  char why[96];
  snprintf(why, sizeof why, "expected a number in [%g, %g]", lo, hi);
  return bad(c, s, k, v, why);
}

static int handle_integral(parse_ctx *c, const char *k, const char *v)
{
  strata_job *j = c->job;
  int64_t n;
  if (!strcmp(k, "integrand")) {
    if (strlen(v) == 0 || strlen(v) >= sizeof j->integrand ||
        (!strncmp(v, "file:", 5) && !v[5]))
      return bad(c, "integral", k, v, "expected a built-in name (see strata list), "
                 "file:PATH or inline");
    strcpy(j->integrand, v);
    return 1;
  }
  if (!strcmp(k, "function")) {
    int ok = strlen(v) > 0 && strlen(v) < sizeof j->function &&
             (v[0] == '_' || ((v[0] | 32) >= 'a' && (v[0] | 32) <= 'z'));
    for (const char *q = v; ok && *q; q++)
      ok = *q == '_' || (*q >= '0' && *q <= '9') || ((*q | 32) >= 'a' && (*q | 32) <= 'z');
    if (!ok) return bad(c, "integral", k, v, "expected a C function name");
    strcpy(j->function, v);
    return 1;
  }
  if (!strcmp(k, "body")) {
    /* inih hands over an indented continuation line as another value of
     * the same key: a multi-line body is its lines in order. */
    size_t have = strlen(j->body);
    if (have + strlen(v) + 2 > sizeof j->body)
      return bad(c, "integral", k, v, "inline body too long (4095 characters; use "
                 "integrand = file:PATH)");
    if (have) strcat(j->body, "\n");
    strcat(j->body, v);
    return 1;
  }
  if (!strcmp(k, "form")) {
    if (!strcmp(v, "simple")) j->form = STRATA_FORM_SIMPLE;
    else if (!strcmp(v, "extended")) j->form = STRATA_FORM_EXTENDED;
    else return bad(c, "integral", k, v, "expected simple or extended");
    return 1;
  }
  if (!strcmp(k, "ncomp")) {
    if (!set_int(c, "integral", k, v, 1, STRATA_MAX_NCOMP, &n)) return 0;
    j->ncomp = (int)n;
    return 1;
  }
  if (!strcmp(k, "adapt")) {
    if (!strcmp(v, "sum")) {
      j->adapt_comp = -1;
      return 1;
    }
    if (!set_int(c, "integral", k, v, 0, STRATA_MAX_NCOMP - 1, &n)) return 0;
    j->adapt_comp = (int)n;
    return 1;
  }
  if (!strcmp(k, "tables")) {
    if (strlen(v) >= sizeof j->tables) return bad(c, "integral", k, v, "list too long");
    strcpy(j->tables, v);
    return 1;
  }
  if (!strcmp(k, "dim")) {
    if (!set_int(c, "integral", k, v, 1, STRATA_MAX_DIM, &n)) return 0;
    j->dim = (int)n;
    return 1;
  }
  if (!strcmp(k, "lower") || !strcmp(k, "upper")) {
    int lower = !strcmp(k, "lower");
    int m = parse_list(v, lower ? j->lower : j->upper, STRATA_MAX_DIM);
    if (m == -2)
      return bad(c, "integral", k, v, "at most " STRATA_STR(STRATA_MAX_DIM) " values (one per "
                 "axis)");
    if (m < 1) return bad(c, "integral", k, v, "expected one number, or one per axis");
    *(lower ? &j->nlower : &j->nupper) = m;
    return 1;
  }
  if (!strcmp(k, "params")) {
    int m = strlen(v) ? parse_list(v, j->params, STRATA_MAX_PARAMS) : 0;
    if (m == -2)
      return bad(c, "integral", k, v, "at most " STRATA_STR(STRATA_MAX_PARAMS) " parameters");
    if (m < 0) return bad(c, "integral", k, v, "expected a list of numbers");
    j->nparams = m;
    return 1;
  }
  return -1;
}

/* A whole number into a field of strata_params or strata_settings: an
 * int, an enum or an int64_t. */
static void store_whole(void *field, size_t size, int64_t n)
{
  if (size == sizeof(int64_t)) memcpy(field, &n, size);
  else {
    int i = (int)n;
    memcpy(field, &i, sizeof i);
  }
}

/* "expected a, b or c": the words of a CHOICE key. */
static void expected_words(const char *words, char *out, size_t len)
{
  size_t n = strlen(words), at = (size_t)snprintf(out, len, "expected ");
  const char *last = strrchr(words, ' ');
  for (size_t i = 0; i < n && at + 4 < len; i++) {
    if (words + i == last) at += (size_t)snprintf(out + at, len - at, " or ");
    else if (words[i] == ' ') at += (size_t)snprintf(out + at, len - at, ", ");
    else out[at++] = words[i];
    out[at] = '\0';
  }
}

/* The index of v among the words of a CHOICE key (any case), or -1. */
static int choice(const char *words, const char *v)
{
  size_t vl = strlen(v);
  for (int i = 0; *words; i++) {
    size_t wl = strcspn(words, " ");
    if (wl == vl && !strncasecmp(words, v, wl)) return i;
    words += wl + (words[wl] == ' ');
  }
  return -1;
}

/* peaks.known: points "x1 x2 ...; y1 y2 ...", coordinates as lists are
 * written (spaces or commas), checked against dim and the domain when the
 * job is resolved. */
static int set_known(parse_ctx *c, const char *v)
{
  strata_job *j = c->job;
  strata_peaks_params *k = &j->p.peaks;
  /* In a file a ';' after white space starts a comment, which inih cuts
   * off before the handler sees it: "0.3 0.7 ; 0.7 0.3" would be one
   * point, silently. */
  const char *eq = (c->file || c->text) ? strchr(c->raw, '=') : NULL;
  for (const char *q = eq; q && (q = strchr(q + 1, ';'));)
    if (q[-1] == ' ' || q[-1] == '\t') {
      const char *after = q + 1 + strspn(q + 1, " \t");
      if (strchr("+-.0123456789", *after) && *after)
        return bad(c, "peaks", "known", v, "what follows ' ;' is a comment in a job file: "
                   "write the points as 'x1 x2; y1 y2', with no space before ';'");
    }
  if (strlen(v) >= sizeof j->known) return bad(c, "peaks", "known", v, "list too long");
  char buf[sizeof j->known];
  strcpy(buf, v);
  int n = 0;
  for (char *save = NULL, *pt = strtok_r(buf, ";", &save); pt; pt = strtok_r(NULL, ";", &save)) {
    if (!pt[strspn(pt, " \t")]) continue; /* "x1 x2;" ends the list */
    if (n == STRATA_MAX_KNOWN)
      return bad(c, "peaks", "known", v, "at most " STRATA_STR(STRATA_MAX_KNOWN) " points");
    int m = parse_list(pt, k->known[n], STRATA_MAX_DIM);
    if (m == -2)
      return bad(c, "peaks", "known", v, "a point has more than " STRATA_STR(STRATA_MAX_DIM)
                 " coordinates");
    if (m < 1)
      return bad(c, "peaks", "known", v, "expected points 'x1 x2 ...; y1 y2 ...' of numbers");
    j->known_dim[n++] = m;
  }
  k->nknown = n;
  strcpy(j->known, v);
  return 1;
}

static int handle_peaks(parse_ctx *c, const char *k, const char *v)
{
  strata_peaks_params *p = &c->job->p.peaks;
  int64_t n;
  if (!strcmp(k, "search")) {
    if (!strcmp(v, "on")) p->search = STRATA_PEAKS_ON;
    else if (!strcmp(v, "off")) p->search = STRATA_PEAKS_OFF;
    else if (!strcmp(v, "auto")) p->search = STRATA_PEAKS_AUTO;
    else return bad(c, "peaks", k, v, "expected on, off or auto");
    return 1;
  }
  if (!strcmp(k, "starts") || !strcmp(k, "ascents")) {
    int starts = !strcmp(k, "starts");
    if (!set_int(c, "peaks", k, v, starts ? 0 : 1, starts ? 1 << 20 : 64, &n)) return 0;
    *(starts ? &p->starts : &p->ascents) = (int)n;
    return 1;
  }
  if (!strcmp(k, "uniform")) {
    double x;
    if (parse_double(v, &x) == 0 && x > 0.0 && x <= 0.5) {
      p->uniform = x;
      return 1;
    }
    return bad(c, "peaks", k, v, "expected a number in (0, 0.5]");
  }
  if (!strcmp(k, "known")) return set_known(c, v);
  return -1;
}

/* The string of a text key: its own slot of job->text. */
static char *text_slot(strata_job *j, const job_key *k)
{
  size_t slot = 0;
  for (const job_key *o = job_keys; o < k; o++) slot += o->kind >= STRATA_KEY_PATH && o->key[0];
  return j->text[slot];
}

/* A key of strata/keys.h: its value read as its kind says, into the
 * job's params or settings. */
static int set_key(parse_ctx *c, const job_key *k, const char *s, const char *key,
                   const char *v)
{
  strata_job *j = c->job;
  char *field = (k->setting ? (char *)&j->settings : (char *)&j->p) + k->offset;
  int64_t n;
  char why[128];
  switch (k->kind) {
  case STRATA_KEY_COUNT:
    if (!set_int(c, s, key, v, (int64_t)k->lo, (int64_t)k->hi, &n)) return 0;
    store_whole(field, k->size, n);
    return 1;
  case STRATA_KEY_WHOLE: {
    uint64_t u;
    if (parse_whole(v, 0, &u) != 0)
      return bad(c, s, key, v, "expected a whole number in 0..2^64-1, decimal or 0x hex");
    memcpy(field, &u, sizeof u);
    return 1;
  }
  case STRATA_KEY_REAL: return set_real(c, s, key, v, k->lo, k->hi, (double *)(void *)field);
  case STRATA_KEY_SWITCH:
    if (strcmp(v, "on") && strcmp(v, "off")) return bad(c, s, key, v, "expected on or off");
    store_whole(field, k->size, !strcmp(v, "on"));
    return 1;
  case STRATA_KEY_CHOICE:
    if ((n = choice(k->choices, v)) < 0) {
      expected_words(k->choices, why, sizeof why);
      return bad(c, s, key, v, why);
    }
    store_whole(field, k->size, n);
    return 1;
  default: {
    if (strlen(v) >= STRATA_JOB_PATH_MAX) return bad(c, s, key, v, "path too long");
    char *text = text_slot(j, k);
    strcpy(text, v);
    *(const char **)(void *)field = text;
    return 1;
  }
  }
}

/* A key of the sections of strata/keys.h: 1 set, 0 refused, -1 none such. */
static int handle_key(parse_ctx *c, const char *section, const char *key, const char *v)
{
  if (!strcmp(section, "run") && !strcmp(key, "backend")) {
    if (strcmp(v, "auto") && strcmp(v, "cpu") && strcmp(v, "cuda"))
      return bad(c, "run", key, v, "expected auto, cpu or cuda");
    strcpy(c->job->backend, v);
    return 1;
  }
  size_t sl = strlen(section);
  for (const job_key *k = job_keys; k < job_keys + NKEYS; k++)
    if (!strncmp(k->key, section, sl) && k->key[sl] == '.' && !strcmp(k->key + sl + 1, key))
      return set_key(c, k, section, key, v);
  return -1;
}

/* Whether section is [integral], [peaks] or one of strata/keys.h's. */
static int known_section(const char *section)
{
  size_t sl = strlen(section);
  if (!strcmp(section, "integral") || !strcmp(section, "peaks")) return 1;
  for (const job_key *k = job_keys; k < job_keys + NKEYS; k++)
    if (!strncmp(k->key, section, sl) && k->key[sl] == '.') return 1;
  return 0;
}

/* "[integral], [vegas], [run] or [peaks]": the sections, in the order of
 * the keys, and the peak search's (strata_params.peaks, not in the list). */
static void sections_list(char *out, size_t len)
{
  const char *names[NKEYS + 2] = {"integral"};
  int lens[NKEYS + 2] = {8}, n = 1;
  for (const job_key *k = job_keys; k < job_keys + NKEYS; k++) {
    int l = (int)strcspn(k->key, "."), seen = !k->key[0];
    for (int i = 0; i < n && !seen; i++) seen = lens[i] == l && !strncmp(names[i], k->key, l);
    if (!seen) {
      names[n] = k->key;
      lens[n++] = l;
    }
  }
  names[n] = "peaks";
  lens[n++] = 5;
  size_t at = 0;
  for (int i = 0; i < n && at < len; i++) {
    const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
    at += (size_t)snprintf(out + at, len - at, "%s[%.*s]", sep, lens[i], names[i]);
  }
}

/* A key given twice in a file would silently take the last value: refused,
 * also across two [section] headers of one name (a repeated header with
 * other keys is fine).  --set is no file line: it overrides, as it should.
 * inih hands an indented line over as another value of the key above it;
 * only integral.body has lines to continue. */
static int once(parse_ctx *c, const char *section, const char *key)
{
  char name[128];
  snprintf(name, sizeof name, "%s.%s", section, key);
  if (c->indented && !strcmp(name, c->prev_key)) {
    if (!strcmp(name, "integral.body")) return 1;
    return fail(c, "an indented line continues %s, which takes one line (indent only "
                "integral.body's lines)", name);
  }
  snprintf(c->prev_key, sizeof c->prev_key, "%s", name);
  for (int i = 0; i < c->nseen; i++)
    if (!strcmp(c->seen[i].key, name))
      return fail(c, "key %s given twice (first on line %d)", name, c->seen[i].line);
  if (c->nseen < STRATA_JOB_MAX_KEYS) {
    snprintf(c->seen[c->nseen].key, sizeof c->seen[c->nseen].key, "%s", name);
    c->seen[c->nseen++].line = c->line;
  }
  return 1;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
  parse_ctx *c = user;
  int r;
  if (!known_section(section)) {
    char sections[256];
    sections_list(sections, sizeof sections);
    return fail(c, "unknown section [%s] (expected %s)", section, sections);
  }
  if ((c->file || c->text) && !once(c, section, key)) return 0;
  if (!strcmp(section, "integral")) r = handle_integral(c, key, value);
  else if (!strcmp(section, "peaks")) r = handle_peaks(c, key, value);
  else r = handle_key(c, section, key, value);
  if (r < 0) return fail(c, "unknown key '%s' in [%s]", key, section);
  return r;
}

/* inih's own reader does not tell the handler the line it is on; this one
 * counts lines so that every message names its line.  It reads each line
 * whole: inih's buffer (num) would cut a longer one in two, the rest then
 * parsed as a line of its own, and every line number after it one off. */
static char *read_line(char *str, int num, void *stream)
{
  parse_ctx *c = stream;
  size_t n;
  const char *line;
  if (c->file) {
    ssize_t got = getline(&c->buf, &c->bufsize, c->file);
    if (got < 0) return NULL;
    line = c->buf;
    n = (size_t)got;
  } else {
    if (!*c->text) return NULL;
    line = c->text;
    n = strcspn(c->text, "\n");
    if (c->text[n] == '\n') n++;
    c->text += n;
  }
  c->line++;
  size_t len = n;
  while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
  /* inih needs room for "\r\n" and the terminating '\0'. */
  size_t max = (size_t)num - 3 < STRATA_JOB_LINE_MAX ? (size_t)num - 3 : STRATA_JOB_LINE_MAX;
  if (len > max) {
    fail(c, "line too long (%zu characters; at most %zu)", len, max);
    strcpy(str, "\n"); /* a blank line in its place keeps the count */
    return str;
  }
  /* inih would end the line at the NUL and drop the rest unseen. */
  if (memchr(line, '\0', len)) {
    fail(c, "a NUL byte in the line: a job file is text");
    strcpy(str, "\n");
    return str;
  }
  /* What inih is given is what was measured: the line without its ending,
   * then one '\n' if it had one (inih strips '\r' at the end anyway).  The
   * ending itself may be longer than inih's buffer (a run of '\r'). */
  memcpy(str, line, len);
  memcpy(c->raw, line, len);
  c->raw[len] = '\0';
  if (len < n) str[len++] = '\n';
  str[len] = '\0';
  c->indented = isspace((unsigned char)str[0]) && str[0] != '\n' && str[0] != '\r';
  const char *start = str + strspn(str, " \t\r\v\f");
  /* After a [section] line inih continues no key (an indented one is a
   * continuation, inih's rule checked before the section's). */
  if (*start == '[' && (!c->indented || !c->prev_key[0])) c->prev_key[0] = '\0';
  return str;
}

static int load_with(strata_job *job, const char *path, const char *text)
{
  parse_ctx c = {.job = job, .rc = STRATA_OK, .text = text};
  snprintf(c.where, sizeof c.where, "%s", path ? path : "(default job)");
  /* A job file decides what runs (an inline body, a source's path): read
   * only from a file no one else could have written. */
  if (path && !(c.file = strata_trusted_fopen(path, "job file")))
    return app_take_error(STRATA_EIO);
#ifdef HAVE_INI_MAX_LINE_VAR
  /* Never lowered: another user of inih in the process keeps what it set. */
  if (ini_max_line < STRATA_JOB_LINE_MAX + 3) ini_max_line = STRATA_JOB_LINE_MAX + 3;
#endif
  int line = ini_parse_stream(read_line, &c, handler, &c);
  int read_errno = c.file && ferror(c.file) ? errno : 0;
  if (c.file) fclose(c.file);
  free(c.buf);
  if (line == -2) return app_error(STRATA_ENOMEM, "%s: out of memory", c.where);
  if (read_errno)
    return app_error(STRATA_EIO, "%s:%d: cannot read job file: %s", c.where, c.line + 1,
                        strerror(read_errno));
  /* inih goes on after a bad line: report whichever came first. */
  if (line > 0 && (c.rc == STRATA_OK || line < c.err_line))
    return app_error(STRATA_EINVAL, "%s:%d: syntax error (expected [section] or "
                        "key = value)", c.where, line);
  if (c.rc != STRATA_OK) return c.rc;
  snprintf(job->source, sizeof job->source, "%s", c.where);
  return STRATA_OK;
}

int strata_job_load(strata_job *job, const char *path)
{
  return load_with(job, path, strata_default_job);
}

static void trim(char *s)
{
  size_t n = strlen(s), i = 0;
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  while (s[i] == ' ' || s[i] == '\t') i++;
  memmove(s, s + i, n - i + 1);
}

int strata_job_set(strata_job *job, const char *a)
{
  const char *dot = strchr(a, '.'), *eq = strchr(a, '=');
  if (!dot || !eq || dot > eq || dot == a || eq == dot + 1)
    return app_error(STRATA_EINVAL, "--set '%s': expected section.key=value", a);
  char section[64], key[64];
  size_t sl = (size_t)(dot - a), kl = (size_t)(eq - dot - 1);
  if (sl >= sizeof section || kl >= sizeof key)
    return app_error(STRATA_EINVAL, "--set '%s': name too long", a);
  memcpy(section, a, sl);
  section[sl] = '\0';
  memcpy(key, dot + 1, kl);
  key[kl] = '\0';
  trim(section);
  trim(key);
  /* Trim the way inih trims, so --set and the file agree. */
  char value[STRATA_JOB_LINE_MAX + 1];
  if (strlen(eq + 1) > STRATA_JOB_LINE_MAX)
    return app_error(STRATA_EINVAL, "--set %s.%s: value too long (%zu characters; at "
                        "most %d)", section, key, strlen(eq + 1), STRATA_JOB_LINE_MAX);
  snprintf(value, sizeof value, "%s", eq + 1);
  trim(value);
  parse_ctx c = {.job = job, .rc = STRATA_OK};
  snprintf(c.where, sizeof c.where, "--set %s", a);
  if (!handler(&c, section, key, value)) return c.rc;
  return STRATA_OK;
}

int strata_job_user_integrand(const strata_job *job)
{
  return !strncmp(job->integrand, "file:", 5) || !strcmp(job->integrand, "inline");
}

void strata_job_dir(const strata_job *job, char *out, size_t len)
{
  const char *slash = strrchr(job->source, '/');
  if (!slash || job->source[0] == '(' || !strncmp(job->source, "--set", 5)) {
    snprintf(out, len, "%s", "");
    return;
  }
  /* A job file in / has the directory "/", not "". */
  int n = slash == job->source ? 1 : (int)(slash - job->source);
  snprintf(out, len, "%.*s", n, job->source);
}

strata_backend_kind strata_job_backend(const strata_job *job)
{
  return !strcmp(job->backend, "cuda")  ? STRATA_BACKEND_CUDA
         : !strcmp(job->backend, "cpu") ? STRATA_BACKEND_CPU
                                        : STRATA_BACKEND_AUTO;
}

void strata_job_path(const strata_job *job, const char *path, char *out, size_t len)
{
  char dir[STRATA_JOB_PATH_MAX];
  strata_job_dir(job, dir, sizeof dir);
  if (path[0] == '/' || !dir[0]) snprintf(out, len, "%s", path);
  else snprintf(out, len, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", path);
}

/* The domain: one value for all axes or one per axis, else the default. */
static int resolve_domain(const strata_job *job, int dim, double lo, double hi,
                          strata_problem *pr)
{
  const char *src = job->source;
  if (job->nlower > 1 && job->nlower != dim)
    return app_error(STRATA_EINVAL, "%s: integral.lower has %d values for dim %d "
                        "(give one, or one per axis)", src, job->nlower, dim);
  if (job->nupper > 1 && job->nupper != dim)
    return app_error(STRATA_EINVAL, "%s: integral.upper has %d values for dim %d "
                        "(give one, or one per axis)", src, job->nupper, dim);
  for (int d = 0; d < dim; d++) {
    pr->lower[d] = job->nlower ? job->lower[job->nlower == 1 ? 0 : d] : lo;
    pr->upper[d] = job->nupper ? job->upper[job->nupper == 1 ? 0 : d] : hi;
    if (!(pr->lower[d] < pr->upper[d]))
      return app_error(STRATA_EINVAL, "%s: integral.lower/upper: axis %d has lower %g >= "
                          "upper %g", src, d + 1, pr->lower[d], pr->upper[d]);
    /* The map scales by the width: beyond the largest double every sample
     * would be inf or NaN. */
    if (!isfinite(pr->upper[d] - pr->lower[d]))
      return app_error(STRATA_EINVAL, "%s: integral.lower/upper: axis %d from %g to %g is "
                          "wider than the largest double", src, d + 1, pr->lower[d],
                          pr->upper[d]);
  }
  /* Every sample's weight holds the volume: it must be a normal double. */
  double vol = 1.0;
  for (int d = 0; d < dim; d++) vol *= pr->upper[d] - pr->lower[d];
  if (!isfinite(vol) || vol < DBL_MIN)
    return app_error(STRATA_EINVAL, "%s: integral.lower/upper: the box's volume %g is "
                        "beyond the range of doubles (rescale the variables)", src, vol);
  return STRATA_OK;
}

/* Keys that only user integrands take, refused for built-ins so that a
 * typo in `integrand` is not silently a different integral. */
static int resolve_user(const strata_job *job, strata_problem *pr)
{
  const char *src = job->source;
  int inl = !strcmp(job->integrand, "inline");
  if (!job->dim)
    return app_error(STRATA_EINVAL, "%s: [integral] dim is not set (a user integrand "
                        "needs it)", src);
  if (inl && !job->body[0])
    return app_error(STRATA_EINVAL, "%s: integral.integrand = inline needs "
                        "integral.body (the C statements of the function)", src);
  if (!inl && !job->function[0])
    return app_error(STRATA_EINVAL, "%s: integral.integrand = %s needs integral.function "
                        "(the name of the C function to integrate)", src, job->integrand);
  if (!inl && job->body[0])
    return app_error(STRATA_EINVAL, "%s: integral.body is only for integrand = inline",
                        src);
  if (inl && job->function[0])
    return app_error(STRATA_EINVAL, "%s: integral.function is only for integrand = "
                        "file:PATH (an inline body is the function)", src);
  int ncomp = job->ncomp ? job->ncomp : 1;
  int extended = job->form == STRATA_FORM_EXTENDED ||
                 (job->form == STRATA_FORM_AUTO && (ncomp > 1 || job->tables[0]));
  if (!extended && (ncomp > 1 || job->tables[0]))
    return app_error(STRATA_EINVAL, "%s: integral.form = simple: %s needs the extended "
                        "form (void f(x, dim, params, tables, out))", src,
                        ncomp > 1 ? "ncomp > 1" : "integral.tables");
  if (job->adapt_comp >= ncomp)
    return app_error(STRATA_EINVAL, "%s: integral.adapt = %d: there are only %d "
                        "component%s (0..%d, or sum)", src, job->adapt_comp, ncomp,
                        ncomp == 1 ? "" : "s", ncomp - 1);
  int rc = resolve_domain(job, job->dim, 0.0, 1.0, pr);
  if (rc != STRATA_OK) return rc;
  pr->dim = job->dim;
  pr->nparams = job->nparams > 0 ? job->nparams : 0;
  for (int i = 0; i < pr->nparams; i++) pr->params[i] = job->params[i];
  pr->ncomp = ncomp;
  pr->adapt_comp = job->adapt_comp == -2 ? 0 : job->adapt_comp;
  pr->name = inl ? "inline" : job->function;
  return STRATA_OK;
}

static int resolve_builtin(const strata_job *job, strata_problem *pr,
                           const strata_builtin **builtin)
{
  const char *src = job->source;
  const strata_builtin *b = strata_builtin_find(job->integrand);
  if (!b)
    return app_error(STRATA_EINVAL, "%s: integral.integrand = '%s': unknown integrand "
                        "(strata list shows them; user code is file:PATH or inline)", src,
                        job->integrand);
  const char *only = job->function[0] ? "function" : job->body[0] ? "body"
                     : job->tables[0] ? "tables" : job->ncomp ? "ncomp"
                     : job->form ? "form" : job->adapt_comp != -2 ? "adapt" : NULL;
  if (only)
    return app_error(STRATA_EINVAL, "%s: integral.%s is only for user integrands "
                        "(integrand = file:PATH or inline), not the built-in %s", src, only,
                        b->name);
  int dim = job->dim ? job->dim : b->list_dims[0];
  if (dim < b->dim_min || dim > b->dim_max)
    return app_error(STRATA_EINVAL, "%s: integral.dim = %d: integrand %s is defined for "
                        "dim %d..%d", src, dim, b->name, b->dim_min, b->dim_max);
  int rc = resolve_domain(job, dim, b->lower, b->upper, pr);
  if (rc != STRATA_OK) return rc;
  if (job->nparams >= 0 && job->nparams != b->nparams)
    return app_error(STRATA_EINVAL, "%s: integral.params: integrand %s takes %d "
                        "parameter%s (%s), got %d", src, b->name, b->nparams,
                        b->nparams == 1 ? "" : "s", b->param_names ? b->param_names : "none",
                        job->nparams);
  pr->nparams = b->nparams;
  for (int i = 0; i < b->nparams; i++)
    pr->params[i] = job->nparams >= 0 ? job->params[i] : b->params[i];
  pr->f = b->f;
  pr->dim = dim;
  pr->name = b->name;
  if (builtin) *builtin = b;
  return STRATA_OK;
}

/* peaks.known against the problem: dim coordinates each, inside the
 * domain, and a search to start. */
static int resolve_known(const strata_job *job, const strata_problem *pr)
{
  const char *src = job->source;
  const strata_peaks_params *k = &job->p.peaks;
  if (k->nknown && (k->search == STRATA_PEAKS_OFF || job->p.mode == STRATA_MODE_PLAIN ||
                    job->p.mode == STRATA_MODE_QMC))
    return app_error(STRATA_EINVAL, "%s: peaks.known = '%s': %s runs no peak search to start "
                     "there (give it with peaks.search = on in a vegas mode)", src, job->known,
                     k->search == STRATA_PEAKS_OFF ? "peaks.search = off"
                     : job->p.mode == STRATA_MODE_PLAIN ? "mode plain" : "mode qmc");
  for (int i = 0; i < k->nknown; i++) {
    if (job->known_dim[i] != pr->dim)
      return app_error(STRATA_EINVAL, "%s: peaks.known = '%s': point %d has %d coordinate%s "
                       "for dim %d", src, job->known, i + 1, job->known_dim[i],
                       job->known_dim[i] == 1 ? "" : "s", pr->dim);
    for (int d = 0; d < pr->dim; d++)
      if (!(k->known[i][d] >= pr->lower[d] && k->known[i][d] <= pr->upper[d]))
        return app_error(STRATA_EINVAL, "%s: peaks.known = '%s': point %d, axis %d: %g is "
                         "outside the domain [%g, %g]", src, job->known, i + 1, d + 1,
                         k->known[i][d], pr->lower[d], pr->upper[d]);
  }
  return STRATA_OK;
}

int strata_job_resolve(const strata_job *job, strata_problem *pr,
                       const strata_builtin **builtin)
{
  const char *src = job->source;
  memset(pr, 0, sizeof *pr);
  if (builtin) *builtin = NULL;
  if (!job->integrand[0])
    return app_error(STRATA_EINVAL, "%s: [integral] integrand is not set", src);
  int rc = strata_job_user_integrand(job) ? resolve_user(job, pr)
                                          : resolve_builtin(job, pr, builtin);
  if (rc == STRATA_OK) rc = resolve_known(job, pr);
  if (rc != STRATA_OK) return rc;
  rc = strata_params_check(&job->p);
  if (rc != STRATA_OK) {
    char msg[1100];
    const char *why = strata_last_error();
    snprintf(msg, sizeof msg, "%s: %s%s", src, strncmp(why, "peaks.", 6) ? "[vegas] " : "", why);
    return app_error(rc, "%s", msg);
  }
  return STRATA_OK;
}
