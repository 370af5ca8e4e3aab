#include "usercode.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "error.h"
#include "trusted.h"

#define MAX_SOURCE_BYTES (16 << 20)
#define INLINE_NAME "strata_inline"

static const char wrapper_name[] = "(strata wrapper)";

static void (*watch_child)(int pid);
static int (*watch_requested)(void);

void strata_source_watch(void (*child)(int pid), int (*requested)(void))
{
  watch_child = child;
  watch_requested = requested;
}

const char *strata_source_wrapper_name(void) { return wrapper_name; }

/* Everything strata_source_hash covers, hashed again after a change: the
 * unit as it would be without its origin (which only names the code in
 * messages), so that the same code gives the same hash whether a file,
 * a job's body or a binding's string brought it, and a checkpoint of one
 * continues in another. */
static strata_source *rehash(strata_source *s)
{
  char origin[sizeof s->origin];
  memcpy(origin, s->origin, sizeof origin);
  s->origin[0] = '\0';
  char *u = strata_source_unit(s, STRATA_UNIT_C);
  memcpy(s->origin, origin, sizeof origin);
  uint64_t h = STRATA_HASH64_INIT;
  if (u) h = strata_hash64(h, u, strlen(u));
  free(u);
  int meta[3] = {s->extended, s->ncomp, s->ntables};
  h = strata_hash64(h, meta, sizeof meta);
  s->hash = strata_hash64(h, &s->tables_hash, sizeof s->tables_hash);
  return s;
}

static strata_source *source_new(const char *shown, const char *function, int extended,
                                 int ncomp)
{
  strata_source *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  snprintf(s->origin, sizeof s->origin, "%s", shown);
  snprintf(s->function, sizeof s->function, "%s", function);
  s->extended = extended;
  s->ncomp = ncomp < 1 ? 1 : ncomp;
  return s;
}

int strata_source_from_file(const char *path, const char *shown, const char *function,
                            int extended, int ncomp, strata_source **out)
{
  STRATA_GIVEN(out, "place for the source");
  *out = NULL;
  STRATA_GIVEN(path, "path");
  STRATA_GIVEN(function, "function name");
  if (!shown) shown = path;
  /* Code that runs as this user: read through the descriptor checked as
   * strata's other trusted files are (trusted.h). */
  FILE *f = strata_trusted_fopen(path, "integrand");
  if (!f) return STRATA_EIO;
  char *text = malloc(MAX_SOURCE_BYTES + 1);
  size_t n = text ? fread(text, 1, MAX_SOURCE_BYTES + 1, f) : 0;
  int err = ferror(f);
  fclose(f);
  if (!text) return strata_error(STRATA_ENOMEM, "%s: out of memory", shown);
  if (err || n > MAX_SOURCE_BYTES) {
    free(text);
    return strata_error(STRATA_EIO, "%s: %s", shown,
                        err ? "read error" : "larger than 16 MB: not an integrand source");
  }
  text[n] = '\0';
  if (strlen(text) != n) {
    free(text);
    return strata_error(STRATA_EINVAL, "%s: contains a NUL byte: not C source", shown);
  }
  strata_source *s = source_new(shown, function, extended, ncomp);
  if (!s) {
    free(text);
    return strata_error(STRATA_ENOMEM, "%s: out of memory", shown);
  }
  s->code = text;
  *out = rehash(s);
  return STRATA_OK;
}

int strata_source_from_body(const char *body, const char *shown, int extended, int ncomp,
                            strata_source **out)
{
  STRATA_GIVEN(out, "place for the source");
  *out = NULL;
  STRATA_GIVEN(body, "body");
  if (!shown) shown = "(body)";
  strata_source *s = source_new(shown, INLINE_NAME, extended, ncomp);
  if (!s || !(s->code = strdup(body))) {
    free(s);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = rehash(s);
  return STRATA_OK;
}

int strata_source_from_string(const char *code, const char *function, int extended,
                              int ncomp, strata_source **out)
{
  STRATA_GIVEN(out, "place for the source");
  *out = NULL;
  if (!code || !function || !*function)
    return strata_error(STRATA_EINVAL, "strata_source_from_string: no code or function name");
  if (strlen(function) >= sizeof(((strata_source *)0)->function))
    return strata_error(STRATA_EINVAL, "function name %s: longer than 63 characters", function);
  if (ncomp < 0 || ncomp > STRATA_MAX_COMP || (ncomp > 1 && !extended))
    return strata_error(STRATA_EINVAL, "ncomp = %d: must be in 1..%d, above 1 with the "
                        "extended form", ncomp, STRATA_MAX_COMP);
  strata_source *s = source_new("(source string)", function, extended, ncomp);
  if (!s || !(s->code = strdup(code))) {
    free(s);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *out = rehash(s);
  return STRATA_OK;
}

int strata_source_build(strata_source *s, int verbose)
{
  if (!s) return strata_error(STRATA_EINVAL, "strata_source_build: no source");
  return strata_source_build_cpu(s, verbose);
}

void strata_source_describe(const strata_source *s, char *buf, size_t len)
{
  if (!buf || !len) return;
  if (!s) {
    snprintf(buf, len, "no source");
    return;
  }
  snprintf(buf, len, "integrand %s from %s: %s for the CPU in %.3f s", s->function, s->origin,
           s->cpu_cached ? "loaded from the cache" : "compiled", s->cpu_build_s);
}

int strata_problem_set_source(strata_problem *pr, strata_source *s)
{
  STRATA_GIVEN(pr, "problem");
  STRATA_GIVEN(s, "source");
  /* Built already (strata_source_build): loading it again would map a
   * second copy. */
  int rc = s->dl ? STRATA_OK : strata_source_build_cpu(s, 0);
  if (rc != STRATA_OK) return rc;
  pr->f = s->extended ? NULL : s->f;
  pr->fv = s->extended ? s->fv : NULL;
  pr->fu = NULL;
  pr->fb = NULL;
  pr->ncomp = s->ncomp;
  pr->source = s;
  return STRATA_OK;
}

int strata_source_set_tables(strata_source *s, const char *const *names, int n,
                             uint64_t contents_hash)
{
  if (n > STRATA_MAX_TABLES)
    return strata_error(STRATA_EINVAL, "%s: %d tables (at most %d)", s->origin, n,
                        STRATA_MAX_TABLES);
  for (int i = 0; i < n; i++) snprintf(s->table_names[i], sizeof s->table_names[i], "%s", names[i]);
  s->ntables = n;
  s->tables_hash = contents_hash;
  rehash(s);
  return STRATA_OK;
}

void strata_source_free(strata_source *s)
{
  if (!s) return;
  if (s->dl) dlclose(s->dl);
  free(s->code);
  free(s);
}

/* ---- the translation unit ------------------------------------------------ */

typedef struct {
  char *p;
  size_t used, cap;
  int failed;
} strbuf;

static void put(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(strbuf *b, const char *fmt, ...)
{
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (b->used + (size_t)n + 1 > b->cap) {
    size_t cap = 2 * (b->used + (size_t)n + 1);
    char *p = realloc(b->p, cap);
    if (!p) {
      b->failed = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->used, b->cap - b->used, fmt, ap);
  va_end(ap);
  b->used += (size_t)n;
}

/* A #line directive's file name: a C string literal, whatever the path
 * holds (quotes, backslashes, newlines and other control characters). */
static void put_line_directive(strbuf *b, const char *name)
{
  put(b, "#line 1 \"");
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
    if (*c == '"' || *c == '\\') put(b, "\\%c", *c);
    else if (*c < 0x20 || *c == 0x7f) put(b, "\\%03o", *c);
    else put(b, "%c", *c);
  }
  put(b, "\"\n");
}

/* A name inside a block comment: "*" + "/" would end the comment early and
 * a newline would not matter, so only that pair is broken up (paths without
 * it give the unit, and so the source's hash, they always gave). */
static void put_in_comment(strbuf *b, const char *name)
{
  for (const char *c = name; *c; c++) put(b, "%c%s", *c, c[0] == '*' && c[1] == '/' ? " " : "");
}

static int is_inline(const strata_source *s) { return !strcmp(s->function, INLINE_NAME); }

static const char simple_args[] = "const double *x, int dim, const double *params";
static const char extended_args[] =
    "const double *x, int dim, const double *params, const strata_table *tables, double *out";

char *strata_source_unit(const strata_source *s, int kind)
{
  strbuf b = {0};
  put(&b, "/* Generated by strata from ");
  put_in_comment(&b, s->origin);
  put(&b, ". */\n#include \"strata/integrand.h\"\n");
  for (int i = 0; i < s->ntables; i++)
    put(&b, "#define STRATA_TABLE_INDEX_%s %d\n", s->table_names[i], i);
  if (is_inline(s)) {
    /* Unused parameters of a short body are not the author's concern. */
    put(&b, "%s%s %s(%s)\n{\n", kind == STRATA_UNIT_C ? "static " : "",
        s->extended ? "void" : "double", INLINE_NAME, s->extended ? extended_args : simple_args);
    put(&b, "(void)x; (void)dim; (void)params;%s\n",
        s->extended ? " (void)tables; (void)out;" : "");
  }
  put_line_directive(&b, s->origin);
  put(&b, "%s\n", s->code);
  if (is_inline(s)) put(&b, "}\n");
  put_line_directive(&b, wrapper_name);
  const char *fn = s->function;
  if (kind == STRATA_UNIT_C) {
    /* An assignment, not a call: a call would convert a wrong signature
     * silently (int args, float result); the pragma makes the mismatch an
     * error here only, not in the user's own code. */
    put(&b, "#pragma GCC diagnostic error \"-Wincompatible-pointer-types\"\n");
    if (s->extended)
      put(&b, "static void (*const strata_check_)(%s) __attribute__((unused)) = %s;\n"
              "void strata_entry_fv(%s) { %s(x, dim, params, tables, out); }\n",
          extended_args, fn, extended_args, fn);
    else
      put(&b, "static double (*const strata_check_)(%s) __attribute__((unused)) = %s;\n"
              "double strata_entry_f(%s) { return %s(x, dim, params); }\n",
          simple_args, fn, simple_args, fn);
  } else {
    put(&b, "struct strata_user_fn {\n  static __device__ __forceinline__ void eval(%s)\n  {\n",
        extended_args);
    if (s->extended)
      put(&b, "    %s(x, dim, params, tables, out);\n", fn);
    else
      put(&b, "    (void)tables;\n    out[0] = %s(x, dim, params);\n", fn);
    put(&b, "  }\n};\n");
  }
  if (b.failed) {
    free(b.p);
    strata_error(STRATA_ENOMEM, "out of memory");
    return NULL;
  }
  return b.p;
}

uint64_t strata_source_hash(const strata_source *s) { return s ? s->hash : 0; }

/* ---- building for the CPU ------------------------------------------------ */

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- running the compiler: no shell, and never left behind ----
 *
 * The compiler runs from an argument vector (posix_spawnp), so nothing in
 * STRATA_CC, STRATA_CFLAGS or a path is ever read by a shell.  It runs in
 * a process group of its own; a signal that would end strata while it
 * runs (SIGTERM from Slurm, ^C) ends the whole group first, so that no
 * compiler keeps writing into the cache, and the caller removes the
 * temporary files before the signal takes its usual effect. */

static const int watched[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NWATCHED (sizeof watched / sizeof *watched)
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) { interrupted = sig; }

typedef struct {
  struct sigaction old[NWATCHED];
  int caught[NWATCHED];
} watch_state;

static void watch_begin(watch_state *w)
{
  interrupted = 0;
  for (size_t i = 0; i < NWATCHED; i++) {
    w->caught[i] = 0;
    if (sigaction(watched[i], NULL, &w->old[i]) != 0) continue;
    /* An ignored signal stays ignored, and a handler of the program's own
     * (strata's stop flag) stays: only a signal that would end the
     * process here is turned into a clean stop. */
    if (w->old[i].sa_handler != SIG_DFL || (w->old[i].sa_flags & SA_SIGINFO)) continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    w->caught[i] = sigaction(watched[i], &sa, NULL) == 0;
  }
}

static void watch_end(watch_state *w)
{
  for (size_t i = 0; i < NWATCHED; i++)
    if (w->caught[i]) sigaction(watched[i], &w->old[i], NULL);
}

/* After cleaning up: the signal does now what it would have done. */
static void watch_reraise(int sig)
{
  if (sig) raise(sig);
}

static void sleep_ms(long ms)
{
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Runs argv with stdout and stderr to outfd (or /dev/null when -1), in
 * the environment envp (strata's own when NULL).
 * Returns 0 with *status once it has exited; -1 with errno when it could
 * not be started; 1 when a watched signal arrived (*sig): the compiler's
 * whole process group has then been ended and reaped. */
static int run_tool(char *const argv[], char *const envp[], int outfd, int *status, int *sig)
{
  *sig = 0;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  if (posix_spawnattr_init(&at) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return -1;
  }
  if (outfd >= 0) {
    posix_spawn_file_actions_adddup2(&fa, outfd, 1);
    posix_spawn_file_actions_adddup2(&fa, outfd, 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  for (size_t i = 0; i < NWATCHED; i++) sigaddset(&dfl, watched[i]);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &dfl);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                    POSIX_SPAWN_SETSIGDEF);
  watch_state w;
  watch_begin(&w);
  extern char **environ;
  pid_t pid;
  int e = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp ? envp : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (e != 0) {
    watch_end(&w);
    errno = e;
    return -1;
  }
  /* The program's own stop signals end the compiler's group too. */
  if (watch_child) watch_child((int)pid);
  /* Polled, not a blocking waitpid: the signal may be delivered to any
   * thread of the process (MPI's, OpenMP's), never interrupting this one. */
  int rc = 0;
  for (;;) {
    pid_t got = waitpid(pid, status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) {
      rc = -1;
      break;
    }
    const int asked = watch_requested ? watch_requested() : 0;
    if (interrupted || asked) {
      *sig = interrupted ? interrupted : asked;
      /* The group: the driver's own children (cc1, as, ld) too.  SIGTERM
       * first, so that the driver removes its own temporary files. */
      kill(-pid, SIGTERM);
      for (int k = 0; k < 200 && waitpid(pid, status, WNOHANG) == 0; k++) sleep_ms(10);
      kill(-pid, SIGKILL);
      waitpid(pid, status, 0);
      rc = 1;
      break;
    }
    sleep_ms(5);
  }
  if (watch_child) watch_child(0);
  watch_end(&w);
  return rc;
}

/* STRATA_CFLAGS split at whitespace, and nothing else: no quotes, no
 * expansions, no shell. */
static int split_words(char *text, char **argv, int max)
{
  int n = 0;
  for (char *t = strtok(text, " \t\n\v\f\r"); t; t = strtok(NULL, " \t\n\v\f\r")) {
    if (n == max) return -1;
    argv[n++] = t;
  }
  return n;
}

/* A new file of ours in the cache, opened for writing; a stale one of an
 * earlier run with our pid is replaced. */
static int create_private(const char *path)
{
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST && unlink(path) == 0)
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  return fd;
}

static int write_fd(int fd, const char *text)
{
  size_t n = strlen(text), off = 0;
  while (off < n) {
    ssize_t w = write(fd, text + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    off += (size_t)w;
  }
  return 0;
}

static char *read_fd(int fd)
{
  strbuf b = {0};
  char chunk[4096];
  ssize_t n;
  if (lseek(fd, 0, SEEK_SET) != 0) return NULL;
  while ((n = read(fd, chunk, sizeof chunk - 1)) > 0) {
    chunk[n] = '\0';
    put(&b, "%s", chunk);
  }
  return b.p;
}

/* An unnamed scratch file in the cache for the compiler's output. */
static int scratch_fd(const char *dir)
{
  char path[4400];
  snprintf(path, sizeof path, "%s/out.tmp.XXXXXX", dir);
  int fd = mkostemp(path, O_CLOEXEC);
  if (fd >= 0) unlink(path);
  return fd;
}

/* The compiler's identity, for the cache key: its first line of --version. */
static int compiler_version(const char *cc, const char *cache, char *buf, size_t len)
{
  buf[0] = '\0';
  int fd = scratch_fd(cache);
  if (fd < 0) return 0;
  char *argv[] = {(char *)cc, (char *)"--version", NULL};
  int st = 0, sig = 0;
  if (run_tool(argv, NULL, fd, &st, &sig) == 0) {
    char *out = read_fd(fd);
    if (out) snprintf(buf, len, "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
  }
  close(fd);
  return sig;
}

/* The prelude headers, where the compiler finds them: a directory named by
 * their hash, so strata versions sharing a cache never mix their headers.
 * Every header is compared with strata's own text on every build: the
 * compiler reads them as it reads the user's code. */
static int prelude_dir(const char *cache, char *dir, size_t len)
{
  int n = 0;
  const strata_embedded_file *files = strata_embedded_files(&n);
  uint64_t h = STRATA_HASH64_INIT;
  for (int i = 0; i < n; i++) {
    h = strata_hash64(h, files[i].name, strlen(files[i].name) + 1);
    h = strata_hash64(h, files[i].text, strlen(files[i].text) + 1);
  }
  snprintf(dir, len, "%s/include-%016llx", cache, (unsigned long long)h);
  char sub[4400];
  snprintf(sub, sizeof sub, "%s/strata", dir);
  if ((mkdir(dir, 0700) != 0 && errno != EEXIST) || (mkdir(sub, 0700) != 0 && errno != EEXIST))
    return strata_error(STRATA_EIO, "cannot create %s: %s", sub, strerror(errno));
  int rc = strata_cache_check_dir(dir);
  if (rc == STRATA_OK) rc = strata_cache_check_dir(sub);
  if (rc != STRATA_OK) return rc;
  /* All of them, not only the prelude: the built-in suite's source
   * (integrands_fn.h) compiles as a user integrand too, and names hostdev.h. */
  for (int i = 0; i < n; i++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
    int fd = strata_cache_open(path);
    if (fd == -2) return STRATA_EIO;
    int same = 0;
    if (fd >= 0) {
      char *have = read_fd(fd);
      same = have && !strcmp(have, files[i].text);
      free(have);
      close(fd);
    }
    if (!same && strata_cache_write(path, files[i].text, strlen(files[i].text)) != 0)
      return strata_error(STRATA_EIO, "cannot write %s: %s", path, strerror(errno));
  }
  return STRATA_OK;
}

/* The first diagnostic that is an error, trimmed to one line. */
static void first_error(const char *log, char *buf, size_t len)
{
  const char *line = log, *pick = NULL;
  while (line && *line) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    const char *e = strstr(line, "error");
    if (e && (size_t)(e - line) < n) {
      pick = line;
      break;
    }
    line = end ? end + 1 : NULL;
  }
  if (!pick) pick = log;
  size_t n = strcspn(pick, "\n");
  if (n >= len) n = len - 1;
  memcpy(buf, pick, n);
  buf[n] = '\0';
}

int strata_source_compile_failed(const strata_source *s, const char *tool, const char *log)
{
  char first[1024];
  first_error(log ? log : "", first, sizeof first);
  /* STRATA_TABLE(tables, name) with a name the job does not list: the
   * compiler blames the prelude's macro; say what is wrong instead. */
  const char *t = strstr(first, "STRATA_TABLE_INDEX_");
  if (t) {
    t += strlen("STRATA_TABLE_INDEX_");
    int n = 0;
    while (t[n] == '_' || (t[n] >= '0' && t[n] <= '9') || ((t[n] | 32) >= 'a' && (t[n] | 32) <= 'z'))
      n++;
    char have[STRATA_MAX_TABLES * 34] = "";
    for (int i = 0; i < s->ntables; i++)
      snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "",
               s->table_names[i]);
    return strata_error(STRATA_EINVAL, "%s: uses the table '%.*s', which integral.tables does "
                        "not name (it names: %s)", s->origin, n, t, s->ntables ? have : "none");
  }
  if (!strncmp(first, wrapper_name, strlen(wrapper_name)))
    return strata_error(STRATA_EINVAL, "%s: no function '%s' of the form %s %s(%s) (%s: %s)",
                        s->origin, s->function, s->extended ? "void" : "double", s->function,
                        s->extended ? extended_args : simple_args, tool, first);
  return strata_error(STRATA_EINVAL, "%s: does not compile (%s): %s (run -v for all the "
                      "compiler said)", s->origin, tool, first[0] ? first : "no message");
}

#define MAX_CFLAGS 256

/* ---- the compiler's own directory ----
 *
 * The compiler writes its temporary files (.s, .o, the linker's .res and
 * .cdtor.c) where TMPDIR says and links what it finds there: in a
 * directory another user can write (a group's scratch), they could rename
 * an object of theirs over the one just compiled, and their code would run
 * as the user and be cached under the user's source.  So each compile gets
 * a directory of its own inside the cache (mkdtemp: new, 0700, checked as
 * the cache), the compiler runs with TMPDIR (and TMP, TEMP) naming it, the
 * shared object is written there, and only that file, checked, is renamed
 * into the cache.  The directory is removed after. */

static int build_dir(const char *cache, char *dir, size_t len)
{
  if ((size_t)snprintf(dir, len, "%s/build.XXXXXX", cache) >= len || !mkdtemp(dir))
    return strata_error(STRATA_EIO, "cannot create a directory in %s for the compiler: %s",
                        cache, strerror(errno));
  int rc = strata_cache_check_dir(dir);
  if (rc != STRATA_OK) rmdir(dir);
  return rc;
}

/* Empties and removes dir, which holds files only (the compiler's). */
static void remove_build_dir(const char *dir)
{
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *de;
    while ((de = readdir(d)))
      if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
        unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
  }
  rmdir(dir);
}

/* strata's environment with TMPDIR, TMP and TEMP naming dir: an array of
 * pointers into environ and into vars, which the caller keeps. */
static char **tool_env(const char *dir, char vars[3][4400])
{
  extern char **environ;
  static const char *const names[] = {"TMPDIR=", "TMP=", "TEMP="};
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 4, sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int drop = 0;
    for (int j = 0; j < 3; j++) drop |= !strncmp(environ[i], names[j], strlen(names[j]));
    if (!drop) env[k++] = environ[i];
  }
  for (int j = 0; j < 3; j++) {
    snprintf(vars[j], sizeof vars[j], "%s%s", names[j], dir);
    env[k++] = vars[j];
  }
  env[k] = NULL;
  return env;
}

/* Compiles unit into the cache entry e (a miss, or a hit that would not
 * load), in a directory of its own (above). */
static int compile_cpu(strata_source *s, int talk, const char *cc, const char *cflags,
                       const char *inc, const char *unit, const char *key, size_t keylen,
                       strata_cache_entry *e)
{
  char dir[4300], csrc[4400], vars[3][4400];
  char *words = strdup(cflags);
  char *argv[MAX_CFLAGS + 16];
  int k = 0;
  argv[k++] = (char *)cc;
  int nw = words ? split_words(words, argv + k, MAX_CFLAGS) : -1;
  if (nw < 0) {
    const int nomem = !words;
    free(words);
    return strata_error(nomem ? STRATA_ENOMEM : STRATA_EINVAL, "STRATA_CFLAGS: %s",
                        nomem ? "out of memory" : "more than 256 words");
  }
  int rc = build_dir(e->dir, dir, sizeof dir);
  char **env = rc == STRATA_OK ? tool_env(dir, vars) : NULL;
  if (rc == STRATA_OK && !env) {
    remove_build_dir(dir);
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  if (rc != STRATA_OK) {
    free(words);
    return rc;
  }
  snprintf(csrc, sizeof csrc, "%s/unit.c", dir);
  snprintf(e->tmp, sizeof e->tmp, "%s/out.so", dir);
  k += nw;
  static const char *const fixed[] = {"-std=c11", "-D_GNU_SOURCE", "-fPIC", "-shared",
                                      "-ffp-contract=off", "-I"};
  for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) argv[k++] = (char *)fixed[i];
  argv[k++] = (char *)inc;
  argv[k++] = "-o";
  argv[k++] = e->tmp;
  argv[k++] = csrc;
  argv[k++] = "-lm";
  argv[k] = NULL;

  int sig = 0;
  int sfd = create_private(csrc);
  int lfd = scratch_fd(dir);
  if (sfd < 0 || write_fd(sfd, unit) != 0) {
    rc = strata_error(STRATA_EIO, "cannot write %s: %s", csrc, strerror(errno));
  } else if (lfd < 0) {
    rc = strata_error(STRATA_EIO, "cannot write in %s: %s", dir, strerror(errno));
  } else {
    int st = 0;
    int how = run_tool(argv, env, lfd, &st, &sig);
    char *out = how == 0 ? read_fd(lfd) : NULL;
    if (how == 1) {
      rc = strata_error(STRATA_EBACKEND, "%s: compiling was interrupted by signal %d", s->origin,
                        sig);
    } else if (how < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127)) {
      rc = strata_error(STRATA_EBACKEND, "%s: cannot run the C compiler '%s' (set "
                        "STRATA_CC): %s", s->origin, cc, how < 0 ? strerror(errno) : "not found");
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      if (talk && out && *out) fprintf(stderr, "%s", out);
      rc = strata_source_compile_failed(s, cc, out);
    }
    free(out);
    if (rc == STRATA_OK) rc = strata_cache_publish(e, key, keylen);
  }
  if (sfd >= 0) close(sfd);
  if (lfd >= 0) close(lfd);
  remove_build_dir(dir);
  free(env);
  free(words);
  watch_reraise(sig);
  return rc;
}

/* dlopen and find the entry point; STRATA_OK or an error without side
 * effects.  The file is checked by its descriptor (ours, writable by no one
 * else) and loaded by its path, in a directory that only this user can
 * change (strata_cache_dir); that the path still named the checked file is
 * verified again after loading. */
static int load_cpu(strata_source *s, const char *path)
{
  void *dl = NULL;
  /* Ranks that start together on an empty cache each compile and publish
   * the same entry: another rank's rename may land between the check and
   * the load.  The file then named is checked and loaded afresh; a few
   * such turns and it is left alone. */
  for (int turn = 0; !dl; turn++) {
    int fd = strata_cache_open(path);
    if (fd < 0) {
      if (fd == -1)
        return strata_error(STRATA_EBACKEND, "%s: cannot load %s: %s", s->origin, path,
                            strerror(ENOENT));
      return STRATA_EBACKEND;
    }
    struct stat before, after;
    int ok = fstat(fd, &before) == 0;
    close(fd);
    dl = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!dl)
      return strata_error(STRATA_EBACKEND, "%s: cannot load %s: %s", s->origin, path, dlerror());
    if (stat(path, &after) != 0 || after.st_dev != before.st_dev ||
        after.st_ino != before.st_ino) {
      dlclose(dl);
      dl = NULL;
      if (turn == 3)
        return strata_error(STRATA_EBACKEND, "%s: %s changed while it was loaded, four times: "
                            "not used", s->origin, path);
    }
  }
  void *sym = dlsym(dl, s->extended ? "strata_entry_fv" : "strata_entry_f");
  if (!sym) {
    dlclose(dl);
    return strata_error(STRATA_EBACKEND, "%s: %s has no entry point", s->origin, path);
  }
  s->dl = dl;
  /* POSIX guarantees that a data pointer from dlsym converts to a function
   * pointer; C11 alone does not, hence the memcpy. */
  if (s->extended) memcpy(&s->fv, &sym, sizeof sym);
  else memcpy(&s->f, &sym, sizeof sym);
  return STRATA_OK;
}

const char *strata_source_compiler(const strata_source *s) { return s->compiler; }

int strata_source_build_cpu(strata_source *s, int talk)
{
  const double t0 = now_s();
  const char *cc = getenv("STRATA_CC");
  const char *cflags = getenv("STRATA_CFLAGS");
  if (!cc || !*cc) cc = "cc";
  if (!cflags) cflags = "-O2";
  /* For the job's definition: code built otherwise need not give the same
   * bits, so a checkpoint names how it was built (the default by nothing,
   * as checkpoints written before this was recorded). */
  if (strcmp(cc, "cc") || strcmp(cflags, "-O2"))
    snprintf(s->compiler, sizeof s->compiler, "STRATA_CC=%s STRATA_CFLAGS=%s", cc, cflags);
  else
    s->compiler[0] = '\0';
  char cache[4096], inc[4200], ver[256];
  int rc = strata_cache_dir(cache, sizeof cache);
  if (rc == STRATA_OK) rc = prelude_dir(cache, inc, sizeof inc);
  if (rc != STRATA_OK) return rc;
  int sig = compiler_version(cc, cache, ver, sizeof ver);
  if (sig) {
    watch_reraise(sig);
    return strata_error(STRATA_EBACKEND, "%s: interrupted by signal %d", s->origin, sig);
  }
  char *unit = strata_source_unit(s, STRATA_UNIT_C);
  if (!unit) return STRATA_ENOMEM;

  /* Flags as the library's own: C11 without contraction of a*b+c, so that
   * a user's copy of a built-in integrand gives the built-in's bits. */
  strbuf flags = {0}, key = {0};
  put(&flags, "%s -std=c11 -D_GNU_SOURCE -fPIC -shared -ffp-contract=off", cflags);
  put(&key, "strata %s cpu\ncc: %s\nversion: %s\nflags: %s\ninclude: %s\n----\n%s",
      strata_version(), cc, ver, flags.p ? flags.p : "", inc, unit);
  strata_cache_entry e;
  rc = key.p && flags.p ? strata_cache_lookup("cpu", ".so", key.p, key.used, &e) : STRATA_ENOMEM;
  if (rc == STRATA_OK && !e.hit)
    rc = compile_cpu(s, talk, cc, cflags, inc, unit, key.p, key.used, &e);
  if (rc == STRATA_OK) {
    rc = load_cpu(s, e.artifact);
    /* A cache entry that does not load (truncated by a full disk, written
     * by a broken compiler) is replaced, once. */
    if (rc != STRATA_OK && e.hit) {
      e.hit = 0;
      rc = compile_cpu(s, talk, cc, cflags, inc, unit, key.p, key.used, &e);
      if (rc == STRATA_OK) rc = load_cpu(s, e.artifact);
    }
  }
  free(unit);
  free(key.p);
  free(flags.p);
  if (rc != STRATA_OK) return rc;
  s->cpu_cached = e.hit;
  s->cpu_build_s = now_s() - t0;
  return STRATA_OK;
}
