#include "session.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "atomic.h"
#include "checkpoint.h"
#include "error.h"
#include "hash.h"
#include "map.h"
#include "mapfile.h"
#include "ranks.h"
#include "runlog.h"
#include "warmstart.h"

static const strata_session_names library_names = {
    "strata_settings.resume", "strata_settings.resume", "STRATA_RESUME_AUTO",
    "strata_settings.new_stop_keys", "strata_settings.checkpoint", "strata_settings.log",
    "strata_settings.map", NULL};

void strata_session_names_merge(const strata_settings_names *given, strata_session_names *out)
{
  const strata_session_names *l = &library_names;
  const strata_settings_names none = {0}, *g = given ? given : &none;
  out->resume = g->resume ? g->resume : l->resume;
  out->resume_key = g->resume_key ? g->resume_key : l->resume_key;
  out->resume_auto = g->resume_auto ? g->resume_auto : l->resume_auto;
  out->new_stop_keys = g->new_stop_keys ? g->new_stop_keys : l->new_stop_keys;
  out->checkpoint = g->checkpoint ? g->checkpoint : l->checkpoint;
  out->log = g->log ? g->log : l->log;
  out->map = g->map ? g->map : l->map;
  out->backend = g->backend;
}

/* Set from a signal handler: nothing but a store to a lock-free flag. */
static volatile sig_atomic_t stop_asked;

void strata_request_stop(void) { stop_asked = 1; }

int strata_stop_pending(void) { return stop_asked != 0; }

static int present(const char *path) { return path && path[0]; }

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Agreements on a status or a count are sums in which the ranks that know
 * nothing contribute zeros (x + 0 = x exactly) or count ranks that saw a
 * signal; a restored state and a given map travel by broadcast (share). */
static int agree(strata_session *s, double *v, size_t n)
{
  if (s->comm->allreduce_sum(s->comm, v, n) != 0) {
    s->agreed = 0; /* the others may not know: the caller ends them all */
    return strata_error(STRATA_ECOMM, "rank %d: agreeing with the other ranks failed",
                        s->comm->rank);
  }
  return STRATA_OK;
}

/* Rank 0's status and, in the same sum, a count every rank adds to.  On
 * the other ranks the message only says where the real one is: the caller
 * prints rank 0's. */
static int agree_status_count(strata_session *s, int rc, double *count)
{
  int lost = 0;
  int arc = strata_ranks_follow_root(s->comm, rc, count, 0, &lost);
  if (lost) s->agreed = 0; /* the others may not know: the caller ends them all */
  return arc;
}

static int agree_status(strata_session *s, int rc)
{
  double none = 0.0;
  return agree_status_count(s, rc, &none);
}

static int same_file(const char *a, const char *b)
{
  if (!strcmp(a, b)) return 1;
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* Rank 0: what the files allow.  Never writes: a refusal leaves every file
 * as it was. */
static int decide(strata_session *s, const strata_run *r, int *resume, strata_checkpoint **ck)
{
  const strata_session_names *w = s->settings.names;
  const char *cp = present(s->settings.checkpoint) ? s->settings.checkpoint : NULL;
  const char *lp = present(s->settings.log) ? s->settings.log : NULL;
  int want = s->settings.resume == STRATA_RESUME_YES;
  int autom = s->settings.resume == STRATA_RESUME_AUTO;
  *resume = 0;
  /* A directory at either name is a setting that names the wrong thing,
   * not a file of a run: said before a lock is made beside it. */
  struct stat db;
  for (int k = 0; k < 2; k++) {
    const char *p = k ? lp : cp;
    if (p && stat(p, &db) == 0 && S_ISDIR(db.st_mode))
      return strata_error(STRATA_EINVAL, "%s: %s names a directory, not a file (name a file "
                          "in it)", p, k ? w->log : w->checkpoint);
  }
  /* A run on this checkpoint was asked for before: its lock is there (one
   * stopped before it started leaves only that: the program's exit status
   * 3, "nothing was computed"). */
  int asked = 0;
  if (cp) {
    char lock[STRATA_PATH_MAX + 8];
    struct stat lb;
    snprintf(lock, sizeof lock, "%s.lock", cp);
    asked = lstat(lock, &lb) == 0 && S_ISREG(lb.st_mode) && lb.st_uid == geteuid();
  }
  /* Before anything looks at the checkpoint or its temporary files: a
   * second run on it, even one that is refused, must touch nothing. */
  if (cp) {
    int rc = strata_lock_take(cp, "checkpoint", &s->lockfd);
    if (rc != STRATA_OK) return rc;
    strata_atomic_sweep(cp);
  }
  if (cp && lp && same_file(cp, lp))
    return strata_error(STRATA_EINVAL, "%s: %s and %s name the same file '%s'", s->name, w->log,
                        w->checkpoint, cp);
  if (!cp && (want || autom))
    return strata_error(STRATA_EINVAL, "%s: %s needs %s (the file to resume from)", s->name,
                        w->resume_key, w->checkpoint);
  int exists = cp && access(cp, F_OK) == 0;
  /* A resume of a run that never started (its lock, no checkpoint, no
   * log) starts it; where nothing says a run was asked for, the name may
   * be wrong. */
  int unstarted = cp && want && !exists && asked && !(lp && access(lp, F_OK) == 0);
  if (cp && want && !exists && !unstarted)
    return strata_error(STRATA_EIO, "%s: no checkpoint to resume from (%s)", cp,
                        "No such file or directory");
  if (unstarted && (s->settings.notes || s->settings.verbose))
    fprintf(stderr, "strata: note: %s: no checkpoint: the run stopped before it started, and "
            "starts now\n", cp);
  if (cp && exists && !want && !autom)
    return strata_error(STRATA_EIO, "%s: a checkpoint exists already: continue it with "
                        "%s (or %s), or move it away; strata does not overwrite it", cp,
                        w->resume, w->resume_auto);
  if (lp && !(exists || autom) && access(lp, F_OK) == 0)
    return strata_error(STRATA_EIO, "%s: the log exists already; strata does not overwrite "
                        "logs (move it away, or resume the run that wrote it)", lp);
  int rc = cp ? strata_atomic_probe(cp, "checkpoint") : STRATA_OK;
  if (rc != STRATA_OK || !exists) return rc;
  rc = strata_checkpoint_read(cp, ck);
  if (rc == STRATA_OK)
    rc = strata_jobdef_compare_as((*ck)->definition, s->definition, s->settings.new_stop_keys, w->new_stop_keys, cp,
                                  "checkpoint", s->name);
  if (rc == STRATA_OK)
    rc = strata_checkpoint_check_version(*ck, cp, strata_run_map_base(r), r->params.neval, r->problem.dim);
  *resume = rc == STRATA_OK;
  return rc;
}

static void collect_row(const strata_iteration *it, void *ctx)
{
  strata_session *s = ctx;
  s->rows[s->nrows++] = *it;
}

/* Rank 0's n bytes at buf, on every rank, bit for bit; what names them in
 * the error. */
static int share_bytes(strata_comm *comm, void *buf, size_t n, const char *what)
{
  if (n > 0 && comm->broadcast(comm, buf, n, 0) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: receiving %s failed", comm->rank, what);
  return STRATA_OK;
}

static int share(strata_session *s, void *buf, size_t n, const char *what)
{
  int rc = share_bytes(s->comm, buf, n, what);
  if (rc != STRATA_OK) s->agreed = 0; /* the others may not know: the caller ends them all */
  return rc;
}

int strata_session_share_state(strata_comm *comm, strata_run *r, const strata_checkpoint *ck,
                               strata_iteration_cb cb, void *ctx)
{
  const int root = comm->rank == 0;
  const char *what = "the checkpoint's state";
  struct {
    int64_t itn, neval_total, naxes, ninc, nhcube, ncomp, npeaks, adapt_more, finer, nfine,
        packed_uniforms;
    double time_s;
  } head;
  memset(&head, 0, sizeof head);
  if (root) {
    const strata_run_state *st = &ck->state;
    head.itn = st->itn;
    head.neval_total = st->neval_total;
    head.naxes = st->naxes;
    head.ninc = st->ninc;
    head.nhcube = st->nhcube;
    head.ncomp = st->ncomp;
    head.npeaks = (int64_t)st->npeaks;
    head.adapt_more = st->adapt_more;
    head.finer = st->finer;
    head.nfine = st->nfine;
    head.packed_uniforms = st->packed_uniforms;
    head.time_s = st->time_s;
  }
  int rc = share_bytes(comm, &head, sizeof head, what);
  if (rc != STRATA_OK) return rc;
  strata_run_state st = {.itn = (int)head.itn, .neval_total = head.neval_total,
                         .time_s = head.time_s, .naxes = (int)head.naxes,
                         .ninc = (int)head.ninc, .nhcube = head.nhcube,
                         .ncomp = (int)head.ncomp, .npeaks = (size_t)head.npeaks,
                         .adapt_more = (int)head.adapt_more, .finer = (int)head.finer,
                         .nfine = head.nfine, .packed_uniforms = (int)head.packed_uniforms};
  size_t nedges = (size_t)st.naxes * (size_t)(st.ninc + 1), nh = (size_t)st.nhcube,
         nhist = (size_t)st.itn;
  /* A vector integrand's component records follow the history. */
  size_t ncrec = (st.ncomp > 1 ? STRATA_CHIST_ROW(st.ncomp) : 0) * nhist;
  double *edges = malloc(sizeof(double) * (nedges > 0 ? nedges : 1));
  int64_t *nhv = malloc(sizeof(int64_t) * (nh > 0 ? nh : 1));
  strata_itn_record *hist = malloc(sizeof *hist * (nhist > 0 ? nhist : 1));
  double *comp = ncrec > 0 ? malloc(sizeof(double) * ncrec) : NULL;
  /* The peak search's state, where the run had one. */
  double *peaks = st.npeaks > 0 ? malloc(sizeof(double) * st.npeaks) : NULL;
  int64_t *fine = st.nfine > 0 ? malloc(sizeof(int64_t) * (size_t)st.nfine) : NULL;
  int ok = edges && nhv && hist && (ncrec == 0 || comp) && (st.npeaks == 0 || peaks) &&
           (st.nfine == 0 || fine);
  if (ok && root) {
    memcpy(edges, ck->state.edges, sizeof(double) * nedges);
    memcpy(nhv, ck->state.nh, sizeof(int64_t) * nh);
    memcpy(hist, ck->state.hist, sizeof *hist * nhist);
    if (ncrec > 0) memcpy(comp, ck->state.comp_hist, sizeof(double) * ncrec);
    if (st.npeaks > 0) memcpy(peaks, ck->state.peaks, sizeof(double) * st.npeaks);
    if (st.nfine > 0) memcpy(fine, ck->state.fine_nh, sizeof(int64_t) * (size_t)st.nfine);
  }
  /* Every rank takes part even without memory, or the others would wait
   * forever; the failure is agreed first. */
  double fail = ok ? 0.0 : 1.0;
  if (comm->allreduce_sum(comm, &fail, 1) != 0)
    rc = strata_error(STRATA_ECOMM, "rank %d: agreeing with the other ranks failed", comm->rank);
  else if (fail > 0) /* every rank says it: rank 0 speaks for them */
    rc = strata_error(STRATA_ENOMEM, "out of memory reading the checkpoint's state");
  if (rc == STRATA_OK) rc = share_bytes(comm, edges, sizeof(double) * nedges, what);
  if (rc == STRATA_OK) rc = share_bytes(comm, nhv, sizeof(int64_t) * nh, what);
  if (rc == STRATA_OK) rc = share_bytes(comm, hist, sizeof *hist * nhist, what);
  if (rc == STRATA_OK) rc = share_bytes(comm, comp, sizeof(double) * ncrec, what);
  if (rc == STRATA_OK) rc = share_bytes(comm, peaks, sizeof(double) * st.npeaks, what);
  if (rc == STRATA_OK) rc = share_bytes(comm, fine, sizeof(int64_t) * (size_t)st.nfine, what);
  if (rc == STRATA_OK) {
    st.edges = edges;
    st.nh = nhv;
    st.hist = hist;
    st.comp_hist = comp;
    st.peaks = peaks;
    st.fine_nh = fine;
    rc = strata_run_restore(r, &st, cb, ctx);
  }
  free(fine);
  free(edges);
  free(nhv);
  free(hist);
  free(comp);
  free(peaks);
  return rc;
}

/* Rank 0 has the checkpoint; every rank needs its state, bit for bit, and
 * keeps the replayed rows: for its caller's progress, and rank 0's for the
 * log. */
static int share_state(strata_session *s, strata_run *r, const strata_checkpoint *ck)
{
  const int root = s->comm->rank == 0;
  double n = root ? ck->state.itn : 0.0;
  int arc = agree(s, &n, 1);
  if (arc != STRATA_OK) return arc;
  s->rows = malloc(sizeof *s->rows * (size_t)(n > 0 ? n : 1));
  double fail = !s->rows;
  arc = agree(s, &fail, 1);
  if (arc != STRATA_OK) return arc;
  if (fail > 0) /* every rank says it: rank 0 speaks for them */
    return strata_error(STRATA_ENOMEM, "out of memory for the restored iterations");
  int rc = strata_session_share_state(s->comm, r, ck, collect_row, s);
  if (rc == STRATA_ECOMM) s->agreed = 0; /* the others may not know: the caller ends them all */
  return rc;
}

/* [vegas] map, on every rank: naxes x (ninc + 1) edges, then nhcube counts
 * (nhcube 0: the file has no allocation). */
typedef struct {
  int naxes, ninc;
  int64_t nhcube;
  double *buf;
} given_map;

/* Rank 0 reads the other run's map and checks that it fits; every rank
 * receives it, and the definition records which map started the run (so
 * that a checkpoint is continued only from the same start). */
static int share_map(strata_session *s, given_map *g)
{
  const int root = s->comm->rank == 0;
  strata_mapfile *m = NULL;
  int rc = STRATA_OK;
  if (root) {
    rc = strata_mapfile_read(s->settings.map, &m);
    if (rc == STRATA_OK) rc = strata_mapfile_fits(m, s->definition);
    if (rc != STRATA_OK) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", strata_last_error());
      rc = strata_error(rc, "%s: %s = '%s': %s", s->name, s->settings.names->map,
                        s->settings.map, msg);
    }
  }
  rc = agree_status(s, rc);
  double head[3] = {0};
  if (rc == STRATA_OK && root) {
    head[0] = m->naxes;
    head[1] = m->ninc;
    head[2] = (double)m->nhcube;
  }
  if (rc == STRATA_OK) rc = share(s, head, sizeof head, s->settings.names->map);
  size_t nedges = (size_t)head[0] * (size_t)(head[1] + 1), n = nedges + (size_t)head[2];
  if (rc == STRATA_OK) {
    g->buf = calloc(n > 0 ? n : 1, sizeof(double));
    double fail = g->buf ? 0.0 : 1.0;
    rc = agree(s, &fail, 1);
    if (rc == STRATA_OK && fail > 0)
      rc = strata_error(STRATA_ENOMEM, "out of memory reading %s", s->settings.names->map);
  }
  if (rc == STRATA_OK && root) {
    memcpy(g->buf, m->edges, sizeof(double) * nedges);
    for (size_t h = 0; h < (size_t)m->nhcube; h++) g->buf[nedges + h] = (double)m->nh[h];
    if (s->settings.verbose)
      fprintf(stderr, "strata: starting from the map of %s (a %s, after iteration %d: %d x %d "
              "edges%s)\n", s->settings.map, m->kind, m->itn, m->naxes, m->ninc,
              m->nhcube ? ", and its allocation where the hypercubes match" : "");
  }
  strata_mapfile_free(m);
  if (rc == STRATA_OK) rc = share(s, g->buf, sizeof(double) * n, s->settings.names->map);
  if (rc != STRATA_OK) return rc;
  g->naxes = (int)head[0];
  g->ninc = (int)head[1];
  g->nhcube = (int64_t)head[2];
  uint64_t h = strata_hash64(STRATA_HASH64_INIT, g->buf, sizeof(double) * n);
  size_t used = strlen(s->definition);
  snprintf(s->definition + used, sizeof s->definition - used, "vegas.map = %016llx\n",
           (unsigned long long)h);
  return STRATA_OK;
}

/* Makes the shared map (and allocation, as doubles) the run's start. */
static int start_from_map(strata_session *s, strata_run *r, const given_map *g)
{
  size_t nedges = (size_t)g->naxes * (size_t)(g->ninc + 1);
  int64_t *nh = g->nhcube > 0 ? malloc(sizeof(int64_t) * (size_t)g->nhcube) : NULL;
  if (g->nhcube > 0 && !nh) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int64_t h = 0; h < g->nhcube; h++) nh[h] = (int64_t)g->buf[nedges + (size_t)h];
  int took = 0;
  int rc = strata_run_start_from(r, g->naxes, g->ninc, g->buf, g->nhcube, nh, &took);
  free(nh);
  if (rc != STRATA_OK) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", strata_last_error());
    return strata_error(rc, "%s: %s = '%s': %s", s->name, s->settings.names->map,
                        s->settings.map, msg);
  }
  if (s->settings.verbose && s->comm->rank == 0)
    fprintf(stderr, "strata: the map %s, the allocation %s\n",
            g->ninc == r->map->ninc ? "as it was" : "rebinned to this job's ninc",
            took ? "too (the same hypercubes)" : "even (as in any first iteration)");
  return STRATA_OK;
}

/* Whether the run searches for peaks (doc/peaks.md): what its log keeps a
 * table for. */
static int may_search(const strata_run *r) { return r->peaks != NULL; }

static void runlog_info(const strata_session *s, const strata_run *r, strata_runlog_info *li)
{
  int threads = s->threads;
#ifdef _OPENMP
  if (threads == 0) threads = omp_get_max_threads();
#endif
  *li = (strata_runlog_info){
      .job = s->name,
      .definition = s->definition,
      .integrand = r->problem.name,
      .mode = strata_mode_name(r->params.mode),
      .backend = s->backend,
      .host = s->host,
      .checkpoint = present(s->settings.checkpoint) ? s->settings.checkpoint : "",
      .override = s->settings.names->new_stop_keys,
      .dim = r->problem.dim,
      .ranks = s->comm->size,
      .gpus = !strcmp(s->backend, "cuda") ? s->comm->size : 0,
      .threads = threads,
      .exact = s->settings.exact,
      .naxes = strata_map_naxes(r->map),
      .ninc = r->map->ninc,
      .ncomp = r->ncomp,
      .peaks = may_search(r)};
}

static int open_log(strata_session *s, strata_run *r, int resumed)
{
  strata_runlog_info li;
  runlog_info(s, r, &li);
  if (!resumed && s->settings.resume != STRATA_RESUME_AUTO)
    return strata_runlog_create(s->settings.log, &li, &s->logf);
  char notice[STRATA_PATH_MAX + 1024];
  int rc = strata_runlog_resume(s->settings.log, &li, s->settings.new_stop_keys, s->rows, resumed ? s->nrows : 0,
                                &s->logf, notice, (int)sizeof notice);
  if (rc == STRATA_OK && notice[0] && (s->settings.notes || s->settings.verbose))
    fprintf(stderr, "strata: note: %s\n", notice);
  return rc;
}

int strata_session_define(const strata_run *r, const char *identity, const char *name,
                          char *buf, size_t len)
{
  int rc = strata_jobdef_text(&r->problem, &r->params, buf, len);
  if (rc != STRATA_OK || !identity) return rc;
  size_t n = strlen(identity);
  if (n == 0 || n > 256)
    return strata_error(STRATA_EINVAL, "%s: the identity of the caller's data must be 1 to 256 "
                        "characters, not %zu", name, n);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)identity[i] < 0x20 || identity[i] == 0x7f)
      return strata_error(STRATA_EINVAL, "%s: the identity of the caller's data holds a "
                          "control character (byte %zu)", name, i + 1);
  size_t used = strlen(buf);
  if (used + n + 32 >= len)
    return strata_error(STRATA_EINVAL, "%s: the run's definition is too long", name);
  snprintf(buf + used, len - used, "integral.identity = %s\n", identity);
  return STRATA_OK;
}

int strata_session_open(strata_session *s, strata_run *r)
{
  const int root = s->comm->rank == 0;
  s->logf = NULL;
  s->rows = NULL;
  s->nrows = 0;
  s->ran = 0;
  s->pending = NULL;
  s->stopped = 0;
  s->whole = 0;
  s->late_rc = 0;
  s->agreed = 1;
  s->lockfd = -1;
  if (!s->settings.names) s->settings.names = &library_names;
  if (!s->host) s->host = "";
  int rc = strata_session_define(r, s->settings.identity, s->name, s->definition, sizeof s->definition);
  if (rc != STRATA_OK) return rc; /* the same on every rank */

  given_map map = {0};
  if (present(s->settings.map)) {
    rc = share_map(s, &map);
    if (rc != STRATA_OK) {
      free(map.buf);
      return rc;
    }
  }

  int resume = 0;
  strata_checkpoint *ck = NULL;
  if (root) rc = decide(s, r, &resume, &ck);
  double v[2] = {root ? (double)rc : 0.0, root ? (double)resume : 0.0};
  rc = agree(s, v, 2);
  if (rc != STRATA_OK || v[0] != 0.0) {
    strata_checkpoint_free(ck);
    free(map.buf);
    if (rc != STRATA_OK) return rc;
    return root ? (int)v[0] : strata_error((int)v[0], "(see rank 0)");
  }
  resume = v[1] != 0.0;
  /* A resumed run has its state; the map only started it. */
  if (!resume && present(s->settings.map)) rc = start_from_map(s, r, &map);
  free(map.buf);
  if (rc != STRATA_OK) {
    strata_checkpoint_free(ck);
    return rc;
  }
  if (resume) {
    /* Every rank restores the same data: a state refused is refused by all. */
    rc = share_state(s, r, ck);
    if (rc != STRATA_OK && s->agreed) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s", strata_last_error());
      rc = strata_error(rc, "%s: %s", s->settings.checkpoint, msg);
    }
    if (rc == STRATA_OK && root && s->settings.verbose) {
      fprintf(stderr, "strata: resuming from %s after iteration %d (written %s by strata %s "
              "on %d rank%s, backend %s)\n", s->settings.checkpoint, r->ravg.n, ck->created,
              ck->strata_version, ck->ranks, ck->ranks == 1 ? "" : "s", ck->backend);
      fflush(stderr);
    }
    strata_checkpoint_free(ck);
    if (rc != STRATA_OK) return rc;
  }

  rc = STRATA_OK;
  if (root && present(s->settings.log)) rc = open_log(s, r, resume);
  rc = agree_status(s, rc);
  if (rc != STRATA_OK) return rc;
  s->last_checkpoint = now_s();
  return STRATA_OK;
}

/* Waits until the checkpoint in flight is on disk, and only then lets the
 * log say it exists. */
static int settle_checkpoint(strata_session *s)
{
  if (!s->pending) return STRATA_OK;
  double secs = 0.0;
  int rc = strata_atomic_wait(s->pending, &secs);
  s->pending = NULL;
  if (rc != STRATA_OK) return rc;
  if (s->settings.verbose)
    fprintf(stderr, "strata: checkpoint after iteration %d synced to disk in %.4f s (in the "
            "background)\n", s->pending_itn, secs);
  return s->logf ? strata_runlog_checkpointed(s->logf, s->pending_itn) : STRATA_OK;
}

/* The iteration loop waits only while the state is copied into the
 * temporary file; fsync and rename go on during the next iteration.  At the
 * end of a session (finished, or stopped) the checkpoint is complete
 * before the process exits. */
static int write_checkpoint(strata_session *s, const strata_run *r, int last)
{
  int rc = settle_checkpoint(s);
  if (rc != STRATA_OK) return rc;
  strata_ckpt_info info = {s->definition, s->name, s->backend, s->host, s->comm->size,
                           s->threads};
  double secs = 0.0;
  size_t bytes = 0;
  strata_run_state st = {0};
  strata_run_state_get(r, &st);
  rc = strata_checkpoint_start(s->settings.checkpoint, &st, &info, &s->pending, &secs, &bytes);
  if (rc != STRATA_OK) return rc;
  s->pending_itn = st.itn;
  s->last_checkpoint = now_s();
  if (s->settings.verbose)
    fprintf(stderr, "strata: checkpoint after iteration %d written to %s: %.2f MB in %.4f s\n",
            st.itn, s->settings.checkpoint, (double)bytes / 1e6, secs);
  return last ? settle_checkpoint(s) : STRATA_OK;
}

/* Rank 0: a file that cannot be written once the last iteration is done
 * (the final checkpoint, the log's last word) does not cost the result:
 * the run goes to its end, the result is returned, and the first such
 * error is returned with it. */
static int defer_late_error(strata_session *s, int rc)
{
  if (!s->late_rc) {
    snprintf(s->late_msg, sizeof s->late_msg, "%s (after the last iteration: the run's "
             "result stands)", strata_last_error());
    s->late_rc = rc;
  }
  return STRATA_OK;
}

/* Rank 0's files after an iteration: the log row, a map snapshot, and the
 * checkpoint when it is due (or the run ends or must stop). */
static int record(strata_session *s, const strata_run *r, const strata_iteration *it,
                  const double *rank_s, int stop, int finished)
{
  int rc = STRATA_OK;
  if (s->logf) {
    /* The channels' weights are the result's: a search's run asks for it. */
    strata_result now;
    if (may_search(r)) strata_run_result(r, &now);
    rc = strata_runlog_append(s->logf, it, r->time_s, rank_s, s->comm->size,
                              may_search(r) ? &now : NULL);
    if (rc == STRATA_OK && s->settings.log_map > 0 && r->ravg.n % s->settings.log_map == 0)
      rc = strata_runlog_map(s->logf, r->ravg.n, strata_run_edges(r));
  }
  if (rc != STRATA_OK || !present(s->settings.checkpoint)) return rc;
  /* The last checkpoint's sync has long finished; a failure of it stops
   * the run now rather than at the next checkpoint. */
  rc = settle_checkpoint(s);
  int due = finished || stop ||
            (s->settings.checkpoint_every > 0 && r->ravg.n % s->settings.checkpoint_every == 0) ||
            (s->settings.checkpoint_every_s > 0 &&
             now_s() - s->last_checkpoint >= s->settings.checkpoint_every_s);
  if (rc == STRATA_OK && due) rc = write_checkpoint(s, r, finished || stop);
  return rc != STRATA_OK && finished ? defer_late_error(s, rc) : rc;
}

/* Rank 0, after progress asked to stop: the checkpoint of this iteration,
 * whole on disk, unless record wrote it already. */
static int record_stop(strata_session *s, const strata_run *r)
{
  if (!present(s->settings.checkpoint)) return STRATA_OK;
  if (s->pending && s->pending_itn == r->ravg.n) return settle_checkpoint(s);
  return write_checkpoint(s, r, 1);
}

/* The log's last word: the map the run ended with and how it ended. */
static int finish_log(strata_session *s, const strata_run *r, const strata_result *res)
{
  if (!s->logf) return STRATA_OK;
  int rc = STRATA_OK;
  /* (A resumed run that had nothing left to do has its snapshot already.) */
  if (s->ran > 0 && !(s->settings.log_map > 0 && r->ravg.n % s->settings.log_map == 0))
    rc = strata_runlog_map(s->logf, r->ravg.n, strata_run_edges(r));
  if (rc != STRATA_OK) return rc;
  /* More components than res holds: all of them. */
  const size_t n = res && r->ncomp > STRATA_MAX_COMP ? (size_t)r->ncomp : 0;
  double *v = n ? malloc(sizeof(double) * n * (n + 4)) : NULL;
  if (n && !v) return strata_error(STRATA_ENOMEM, "%s: out of memory for the result", s->settings.log);
  strata_report_comps all = {(int)n, v, v + n, v + 2 * n, v + 3 * n, v + 4 * n};
  if (v) strata_run_components(r, (int)n, v, v + n, v + 2 * n, v + 3 * n, v + 4 * n);
  rc = strata_runlog_finish(s->logf, res, v ? &all : NULL);
  free(v);
  return rc;
}

/* What the session does after each iteration of the run loop. */
typedef struct {
  strata_session *s;
  strata_progress_cb progress;
  void *ctx;
  double *buf;          /* [ranks + 1]: the stop request and every rank's time */
  int stop;             /* a stop was asked for */
  int failed;           /* the error ending the loop is the session's, not the step's */
} after_iteration;

static int session_failed(after_iteration *a, int rc)
{
  a->failed = 1;
  return rc;
}

/* Every rank agrees whether any was asked to stop, rank 0 records the
 * iteration, progress sees it and may stop the run. */
static int after_step(strata_run *r, const strata_iteration *it, int *stop, void *ctx)
{
  after_iteration *a = ctx;
  strata_session *s = a->s;
  const int root = s->comm->rank == 0, size = s->comm->size;
  double *buf = a->buf;
  s->ran++;
  /* One sum tells every rank whether any rank was asked to stop, and
   * rank 0 every rank's time in the backend, for the log. */
  memset(buf, 0, sizeof(double) * ((size_t)size + 1));
  buf[0] = strata_stop_pending() ? 1.0 : 0.0;
  buf[1 + s->comm->rank] = r->sample_time_s;
  int rc = agree(s, buf, (size_t)size + 1);
  if (rc != STRATA_OK) return session_failed(a, rc);
  a->stop = buf[0] > 0.0;
  int finished = strata_run_finished(r);
  rc = root ? record(s, r, it, buf + 1, a->stop, finished) : STRATA_OK;
  /* The row after its record: once row n shows, the checkpoint of n-1 is
   * on disk and that of n on its way, so a kill -9 loses at most the
   * iteration whose row is the last one shown (bench/fault_inject.sh).
   * A row whose record failed is shown all the same, before the error. */
  int asked = a->progress ? a->progress(it, a->ctx) != 0 : 0;
  /* Any rank's progress may stop the run (a rank may have none: the
   * program prints on rank 0 alone): the count of ranks asking rides in
   * the sum that agrees on rank 0's record. */
  double n = !a->stop && !finished ? asked : 0;
  rc = agree_status_count(s, rc, &n);
  if (rc != STRATA_OK) return session_failed(a, rc);
  if (n > 0.0) {
    a->stop = 1;
    rc = agree_status(s, root ? record_stop(s, r) : STRATA_OK);
    if (rc != STRATA_OK) return session_failed(a, rc);
  }
  if (a->stop && !finished) s->stopped = *stop = 1;
  return STRATA_OK;
}

int strata_session_integrate(strata_session *s, strata_run *r, strata_progress_cb progress,
                             void *ctx, strata_result *res)
{
  const int root = s->comm->rank == 0, size = s->comm->size;
  for (int k = 0; progress && k < s->nrows; k++) progress(&s->rows[k], ctx);
  after_iteration a = {.s = s, .progress = progress, .ctx = ctx,
                       .buf = calloc((size_t)size + 1, sizeof(double))};
  if (!a.buf) {
    s->agreed = 0;
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  int rc = strata_run_loop(r, after_step, &a);
  /* A step's own error (a NaN this rank drew), or the ranks' check. */
  if (rc != STRATA_OK && !a.failed) s->agreed = r->error_agreed;
  /* A request is for the run in progress: acted on (or come as it
   * finished), it must not stop the next one. */
  if (a.stop) stop_asked = 0;
  free(a.buf);
  if (rc != STRATA_OK) return rc;
  strata_result result;
  strata_run_result(r, &result);
  rc = root ? finish_log(s, r, s->stopped ? NULL : &result) : STRATA_OK;
  if (s->logf) {
    int crc = strata_runlog_close(s->logf);
    s->logf = NULL;
    if (rc == STRATA_OK) rc = crc;
  }
  if (rc != STRATA_OK && !s->stopped) rc = defer_late_error(s, rc);
  rc = agree_status(s, rc);
  if (rc != STRATA_OK) return rc;
  rc = agree_status(s, s->late_rc);
  if (rc != STRATA_OK) {
    if (root) strata_error(rc, "%s", s->late_msg);
    s->whole = 1;
    if (res) *res = result;
    return rc;
  }
  if (res) *res = result;
  return STRATA_OK;
}

void strata_session_close(strata_session *s)
{
  /* Still open only after an error: the log holds what was flushed, a
   * checkpoint in flight completes, and the message to print is that
   * error's, not theirs. */
  if (s->logf || s->pending) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", strata_last_error());
    settle_checkpoint(s);
    if (s->logf) strata_runlog_close(s->logf);
    strata_error(STRATA_EIO, "%s", msg);
    s->logf = NULL;
  }
  free(s->rows);
  s->rows = NULL;
  if (s->lockfd >= 0) close(s->lockfd); /* the checkpoint is whole: the next run may have it */
  s->lockfd = -1;
  /* No rank may leave while rank 0 still writes: under mpirun the first
   * rank to exit with status 3 gets the others killed. */
  if (s->agreed && s->comm->size > 1) {
    double v = 0.0;
    s->comm->allreduce_sum(s->comm, &v, 1);
  }
}
