/* The public integrator (strata/strata.h): a run with its backend, its
 * peers and its identity, so that a caller needs none of src/, io/ or gpu/.
 * What the program does through its own files (app/), a library user does
 * here: choose a backend, step, save and restore the state, move a map. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "backend_choice.h"
#ifdef HAVE_CUDA
#include "backend_cuda.h"
#endif
#include "checkpoint.h"
#include "comm.h"
#include "error.h"
#include "io.h"
#include "jobdef.h"
#include "ranks.h"
#include "run.h"
#include "session.h"
#include "warmstart.h"
#include "strata/strata.h"

struct strata_integrator {
  strata_problem problem;
  strata_params params;
  strata_backend *backend;
  strata_comm *comm;
  int own_comm;            /* the serial communicator made here */
  strata_run *run;
  char definition[STRATA_JOBDEF_MAX]; /* what a checkpoint must match */
  char host[256];
  /* strata_integrator_settings: the caller's, with its strings copied
   * (owned here: settings_strings_free). */
  strata_settings settings;
  strata_session_names names;  /* the settings' names, the library's where none */
  int stopped;
  int error_shared;            /* the last error was every rank's (rank 0's message) */
  char exchange[160];
  strata_integrator_info info;
};

/* The struct sizes of each interface a caller may have been built with:
 * interface 1 had no strata_settings, 2 added it, 4 added the peak search
 * to strata_params (a caller of an older interface has a shorter one,
 * refused by its size). */
static int known_caller(int interface, size_t problem_size, size_t params_size,
                        const char *what)
{
  if (interface < 1 || interface > STRATA_INTERFACE)
    return strata_error(STRATA_EINVAL, "%s: the caller was built for strata interface %d, this "
                        "libstrata (%s) has 1 to %d", what, interface, strata_version(),
                        STRATA_INTERFACE);
  if (problem_size != sizeof(strata_problem) || params_size != sizeof(strata_params))
    return strata_error(STRATA_EINVAL, "%s: the caller's strata_problem and strata_params are "
                        "%zu and %zu bytes, this libstrata's %zu and %zu (a header or binding "
                        "out of step with strata.h)", what, problem_size, params_size,
                        sizeof(strata_problem), sizeof(strata_params));
  return STRATA_OK;
}

void strata_settings_init_checked(strata_settings *st, int interface, size_t size)
{
  if (!st) {
    strata_error_null(__func__, "settings");
    return;
  }
  /* Only what the caller has: a caller of an older interface has a
   * shorter struct, one of an unknown interface is refused when used. */
  size_t n = size < sizeof *st ? size : sizeof *st;
  memset(st, 0, n);
  if (n >= offsetof(strata_settings, interface) + sizeof st->interface) {
    st->size = size;
    st->interface = interface;
  }
#define STRATA_KEY_DEFAULT(type, field, kind, key, keyword, lo, hi, def, choices)            \
  if (n >= offsetof(strata_settings, field) + sizeof st->field) st->field = def;
  STRATA_SETTINGS_KEYS(STRATA_KEY_DEFAULT)
#undef STRATA_KEY_DEFAULT
}

/* Where the settings' strings lie (the PATH and TEXT keys); 0 for the
 * other keys. */
#define STRING_AT(type, field, kind, key, keyword, lo, hi, def, choices)                     \
  STRATA_KEY_##kind >= STRATA_KEY_PATH ? offsetof(strata_settings, field) : 0,
static const size_t settings_strings[] = {STRATA_SETTINGS_KEYS(STRING_AT)};
#undef STRING_AT
#define NSTRINGS (sizeof settings_strings / sizeof *settings_strings)

static const char **settings_string(strata_settings *st, size_t i)
{
  return (const char **)((char *)st + settings_strings[i]);
}

/* Replaces the caller's strings in st by copies that st owns. */
static int settings_strings_copy(strata_settings *st)
{
  char *copy[NSTRINGS] = {0};
  int fail = 0;
  for (size_t i = 0; i < NSTRINGS; i++)
    if (settings_strings[i] && *settings_string(st, i))
      fail |= !(copy[i] = strdup(*settings_string(st, i)));
  for (size_t i = 0; i < NSTRINGS; i++)
    if (fail) free(copy[i]);
    else if (settings_strings[i]) *settings_string(st, i) = copy[i];
  return fail ? STRATA_ENOMEM : STRATA_OK;
}

static void settings_strings_free(strata_settings *st)
{
  for (size_t i = 0; i < NSTRINGS; i++)
    if (settings_strings[i]) free((char *)*settings_string(st, i));
}

/* The size of strata_settings in each interface that had it. */
static size_t settings_size(int interface)
{
  return interface == 2 ? offsetof(strata_settings, map) : sizeof(strata_settings);
}

/* Settings made by strata_settings_init of an interface this library
 * knows: their interface also tells the layout of the caller's other
 * structs. */
static int settings_known(const strata_settings *st, const char *what)
{
  if (st->size == 0 || st->interface < 2 || st->interface > STRATA_INTERFACE ||
      st->size != settings_size(st->interface))
    return strata_error(STRATA_EINVAL, "%s: the settings are not made by strata_settings_init "
                        "of an interface this libstrata knows (%d, %zu bytes; the caller's: "
                        "%d, %zu bytes)", what, STRATA_INTERFACE, sizeof(strata_settings),
                        st->interface, st->size);
  return STRATA_OK;
}

/* Every rank's outcome made every rank's: a rank that failed alone must
 * not leave the others waiting in the next collective. */
static int agree(strata_comm *comm, int rc) { return strata_ranks_agree(comm, rc); }

/* Callers built with interface 1, before the sizes were passed: its
 * structs are this interface's. */
int (strata_integrator_alloc)(const strata_problem *pr, const strata_params *p,
                              strata_backend_kind backend, strata_comm *comm,
                              strata_integrator **out)
{
  return strata_integrator_alloc_checked(1, sizeof *pr, sizeof *p, pr, p, backend, comm, out);
}

static const char *kind_name(strata_backend_kind k)
{
  return k == STRATA_BACKEND_CPU ? "cpu" : k == STRATA_BACKEND_CUDA ? "cuda" : "auto";
}

/* Several ranks, every one on a GPU: their devices' exchange (NCCL unless
 * STRATA_NCCL=0 or built without it), set up once for all the runs.  Ranks
 * of a mixed job (auto on a node without a GPU) exchange through the host
 * as CPU ranks do.  Collective. */
static int attach_peers(strata_integrator *s, int verbose)
{
  strata_comm *comm = s->comm;
  if (comm->size < 2) return STRATA_OK;
  double ncuda = strcmp(s->backend->name, "cuda") ? 0.0 : 1.0;
  if (comm->allreduce_sum(comm, &ncuda, 1) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot agree on the ranks' backends", comm->rank);
  if (ncuda != comm->size) return STRATA_OK;
#ifdef HAVE_CUDA
  const char *want = getenv("STRATA_NCCL");
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = strata_cuda_attach_peers(s->backend, comm, !(want && !strcmp(want, "0")), s->exchange,
                                    sizeof s->exchange);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc != STRATA_OK) return rc;
  s->info.exchange = s->exchange;
  s->info.exchange_setup_s =
      (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (verbose)
    fprintf(stderr, "strata: rank %d of %d: exchange %s (set up in %.3f s)\n", comm->rank,
            comm->size, s->exchange, s->info.exchange_setup_s);
#else
  (void)verbose;
#endif
  return STRATA_OK;
}

/* An error of choosing the backend, under the caller's name for the
 * setting (the program's "job.ini: run.backend = cuda: ..."). */
static int backend_refused(int rc, const strata_settings *st, strata_backend_kind kind)
{
  const strata_settings_names *n = st ? st->names : NULL;
  if (!n || !n->backend) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "%s: %s = %s: %s", st->name ? st->name : "(libstrata)", n->backend,
                      kind_name(kind), msg);
}

/* The integrator of alloc (st NULL) and open: every step agreed by every
 * rank, so that all return together, each with its own error or
 * STRATA_EPEER. */
static int make(strata_integrator *s, strata_backend_kind backend, const strata_settings *st)
{
  const int verbose = st ? st->verbose : 0;
  const char *name = st && st->name ? st->name : "strata_integrator_alloc";
  int rc = strata_problem_check(&s->problem);
  if (rc == STRATA_OK) rc = strata_params_check(&s->params);
  if (rc == STRATA_OK)
    rc = strata_jobdef_text(&s->problem, &s->params, s->definition, sizeof s->definition);
  /* The same job on every rank, checked by every rank, or the runs' collectives differ. */
  rc = agree(s->comm, rc);
  if (rc == STRATA_OK)
    rc = agree(s->comm, strata_ranks_same_job(s->comm, &s->problem, &s->params,
                                              st ? st->check_ranks : 0, name));
  const char *why = "";
  if (rc == STRATA_OK) {
    rc = strata_backend_choose(&s->problem, s->params.nthreads, backend, s->comm, &s->backend,
                               &why);
    if (rc != STRATA_OK) rc = backend_refused(rc, st, backend);
    else if (verbose)
      strata_backend_say(s->backend, s->params.nthreads, backend, s->comm, s->host, why);
    rc = agree(s->comm, rc);
  }
  if (rc == STRATA_OK) rc = agree(s->comm, attach_peers(s, verbose));
  if (rc == STRATA_OK)
    rc = agree(s->comm, strata_run_alloc(&s->problem, &s->params, s->backend, s->comm, &s->run));
  if (rc != STRATA_OK) return rc;
  strata_integrator_info *in = &s->info;
  in->backend = s->backend->name;
  in->ranks = s->comm->size;
  in->nhcube = s->run->strat->nhcube;
  in->per_axis = s->run->strat->M;
  in->ninc = s->run->map->ninc;
  if (verbose && s->comm->rank == 0)
    fprintf(stderr, "strata: %s, dim %d, mode %s, %lld hypercubes (%d per axis), ninc %d, "
            "%d rank%s\n", s->problem.name ? s->problem.name : "(integrand)", s->problem.dim,
            strata_mode_name(s->params.mode), (long long)in->nhcube, in->per_axis, in->ninc,
            s->comm->size, s->comm->size == 1 ? "" : "s");
  return STRATA_OK;
}

static int alloc_with(int interface, size_t problem_size, size_t params_size,
                      const strata_problem *pr, const strata_params *p,
                      strata_backend_kind backend, strata_comm *comm, const strata_settings *st,
                      strata_integrator **out)
{
  if (!out) return strata_error_null("strata_integrator_alloc", "place for the integrator");
  *out = NULL;
  if (!pr || !p) return strata_error(STRATA_EINVAL, "strata_integrator_alloc: no problem or "
                                     "parameters");
  int rc = known_caller(interface, problem_size, params_size, "strata_integrator_alloc");
  if (rc != STRATA_OK) return rc;
  strata_integrator *s = calloc(1, sizeof *s);
  if (!s) return strata_error(STRATA_ENOMEM, "out of memory");
  s->problem = *pr;
  s->params = *p;
  s->comm = comm;
  strata_session_names_merge(NULL, &s->names);
  if (!comm) {
    s->comm = strata_comm_serial();
    s->own_comm = 1;
    if (!s->comm) {
      free(s);
      return strata_error(STRATA_ENOMEM, "out of memory");
    }
  }
  if (gethostname(s->host, sizeof s->host) != 0) s->host[0] = '\0';
  s->host[sizeof s->host - 1] = '\0';
  rc = make(s, backend, st);
  if (rc == STRATA_OK && st) rc = agree(s->comm, strata_integrator_settings(s, st));
  if (rc != STRATA_OK) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", strata_last_error());
    strata_integrator_free(s);
    return strata_error(rc, "%s", msg);
  }
  *out = s;
  return STRATA_OK;
}

int strata_integrator_alloc_checked(int interface, size_t problem_size, size_t params_size,
                                    const strata_problem *pr, const strata_params *p,
                                    strata_backend_kind backend, strata_comm *comm,
                                    strata_integrator **out)
{
  return alloc_with(interface, problem_size, params_size, pr, p, backend, comm, NULL, out);
}

int strata_integrator_open(const strata_problem *pr, const strata_params *p,
                           strata_backend_kind backend, strata_comm *comm,
                           const strata_settings *st, strata_integrator **out)
{
  STRATA_GIVEN(out, "place for the integrator");
  *out = NULL;
  if (!st) return strata_error(STRATA_EINVAL, "strata_integrator_open: no settings");
  int rc = settings_known(st, "strata_integrator_open");
  if (rc != STRATA_OK) return rc;
  /* The settings' interface is the caller's header's: its problem and
   * params are of that interface too (strata_params grew in interface 4,
   * strata_settings did not: a caller of 2 or 3 gets this library's
   * sizes, as its settings cannot tell its own). */
  return alloc_with(st->interface, sizeof *pr, sizeof *p, pr, p, backend, comm, st, out);
}

const strata_integrator_info *strata_integrator_describe(const strata_integrator *s)
{
  if (!s) {
    strata_error_null(__func__, "integrator");
    return NULL;
  }
  return &s->info;
}

/* No integrator: no peers wait for it. */
int strata_integrator_error_shared(const strata_integrator *s) { return s ? s->error_shared : 1; }

void strata_integrator_free(strata_integrator *s)
{
  if (!s) return;
  strata_run_free(s->run);
  strata_backend_free(s->backend);
  if (s->own_comm) strata_comm_free(s->comm);
  settings_strings_free(&s->settings);
  free(s);
}

const char *strata_integrator_backend(const strata_integrator *s)
{
  if (!s) {
    strata_error_null(__func__, "integrator");
    return "";
  }
  return s->backend->name;
}

int strata_integrator_step(strata_integrator *s, strata_iteration *it)
{
  STRATA_GIVEN(s, "integrator");
  if (strata_run_finished(s->run))
    return strata_error(STRATA_EINVAL, "the run is finished (after %d iterations)",
                        s->run->ravg.n);
  return strata_run_step(s->run, it);
}

/* No integrator has nothing left to do. */
int strata_integrator_finished(const strata_integrator *s)
{
  if (!s) return 1;
  return strata_run_finished(s->run);
}

/* strata_integrator_integrate's progress, which cannot stop the run. */
typedef struct {
  strata_iteration_cb cb;
  void *ctx;
} plain_progress;

static int call_plain(const strata_iteration *it, void *ctx)
{
  plain_progress *p = ctx;
  p->cb(it, p->ctx);
  return 0;
}

int strata_integrator_integrate(strata_integrator *s, strata_iteration_cb progress, void *ctx,
                                strata_result *res)
{
  plain_progress p = {progress, ctx};
  return strata_integrator_run(s, progress ? call_plain : NULL, &p, res);
}

int strata_integrator_settings(strata_integrator *s, const strata_settings *st)
{
  STRATA_GIVEN(s, "integrator");
  if (!st) return strata_error(STRATA_EINVAL, "strata_integrator_settings: no settings");
  int rc = settings_known(st, "strata_integrator_settings");
  if (rc != STRATA_OK) return rc;
  /* A caller of an older interface has the fields of its own: the others
   * keep their defaults. */
  strata_settings given;
  strata_settings_init(&given);
  memcpy(&given, st, st->size);
  given.size = sizeof given;
  given.interface = STRATA_INTERFACE;
  st = &given;
  if (s->run->ravg.n > 0)
    return strata_error(STRATA_EINVAL, "strata_integrator_settings: the run has begun (after %d "
                        "iteration%s)", s->run->ravg.n, s->run->ravg.n == 1 ? "" : "s");
  if ((unsigned)st->resume > STRATA_RESUME_AUTO)
    return strata_error(STRATA_EINVAL, "strata_settings.resume = %d: must be STRATA_RESUME_NO, "
                        "_YES or _AUTO", st->resume);
  if (st->checkpoint_every < 0 || st->log_map < 0 || !(st->checkpoint_every_s >= 0.0) ||
      !isfinite(st->checkpoint_every_s))
    return strata_error(STRATA_EINVAL, "strata_settings: checkpoint_every, checkpoint_every_s "
                        "and log_map must be 0 or more");
  char def[STRATA_JOBDEF_MAX];
  rc = strata_session_define(s->run, st->identity, st->name ? st->name : "(libstrata)", def,
                                 sizeof def);
  if (rc != STRATA_OK) return rc;
  strata_settings own = *st;
  if (settings_strings_copy(&own) != STRATA_OK)
    return strata_error(STRATA_ENOMEM, "out of memory");
  settings_strings_free(&s->settings);
  s->settings = own;
  strata_session_names_merge(st->names, &s->names);
  s->settings.names = &s->names;
  memcpy(s->definition, def, sizeof def);
  s->run->check_ranks = st->check_ranks;
  return STRATA_OK;
}

int strata_integrator_run(strata_integrator *s, strata_progress_cb progress, void *ctx,
                          strata_result *res)
{
  STRATA_GIVEN(s, "integrator");
  /* The session holds the caller's settings (none given: the defaults),
   * under the names the caller gave them. */
  strata_session ss = {.name = s->settings.name ? s->settings.name : "(libstrata)",
                       .settings = s->settings,
                       .threads = s->params.nthreads,
                       .comm = s->comm,
                       .backend = s->backend->name,
                       .host = s->host};
  if (!s->settings.size) strata_settings_init(&ss.settings);
  ss.settings.names = &s->names;
  strata_result mine;
  s->stopped = 0;
  int rc = strata_session_open(&ss, s->run);
  if (rc == STRATA_OK) rc = strata_session_integrate(&ss, s->run, progress, ctx, res ? res : &mine);
  s->stopped = ss.stopped;
  s->error_shared = rc != STRATA_OK && ss.agreed;
  strata_jobdef_hash(ss.definition, s->info.definition_hash);
  strata_session_close(&ss);
  return rc;
}

int strata_integrator_stopped(const strata_integrator *s) { return s ? s->stopped : 0; }

int strata_integrator_result(const strata_integrator *s, strata_result *res)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(res, "result to fill");
  strata_run_result(s->run, res);
  return STRATA_OK;
}

int strata_integrator_components(const strata_integrator *s, double *integral, double *sigma,
                                 double *chi2_dof, double *q, double *cov)
{
  STRATA_GIVEN(s, "integrator");
  strata_run_components(s->run, s->run->ncomp, integral, sigma, chi2_dof, q, cov);
  return STRATA_OK;
}

static strata_ckpt_info info_of(const strata_integrator *s)
{
  const char *name = s->settings.name ? s->settings.name : "(libstrata)";
  strata_ckpt_info info = {s->definition, name, s->backend->name, s->host, s->comm->size,
                           s->params.nthreads};
  return info;
}

/* Rank 0's outcome, and its message, on every rank. */
static int share_outcome(strata_comm *comm, int rc)
{
  return strata_ranks_follow_root(comm, rc, NULL, 1, NULL);
}

int strata_integrator_save(strata_integrator *s, const char *path)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(path, "path");
  if (!*path) return strata_error(STRATA_EINVAL, "%s: no path (empty)", __func__);
  int rc = strata_run_sync(s->run);
  rc = agree(s->comm, rc);
  if (rc != STRATA_OK) return rc;
  if (s->comm->rank == 0) {
    strata_ckpt_info info = info_of(s);
    strata_run_state st = {0};
    strata_run_state_get(s->run, &st);
    rc = strata_checkpoint_write(path, &st, &info, NULL, NULL);
  }
  return share_outcome(s->comm, rc);
}

/* Whether checkpoint c (read from `name`) can continue this integrator:
 * its problem and parameters, a map of this strata's format, as many
 * components. */
static int fits(const strata_integrator *s, const strata_checkpoint *c, const char *name)
{
  int rc = strata_jobdef_compare_as(c->definition, s->definition, s->settings.new_stop_keys,
                                    s->names.new_stop_keys, name, "checkpoint",
                                    "this integrator");
  if (rc == STRATA_OK)
    rc = strata_checkpoint_check_version(c, name, strata_run_map_base(s->run), s->params.neval,
                                         s->problem.dim);
  if (rc == STRATA_OK) rc = strata_checkpoint_check_ncomp(c, name, s->run->ncomp);
  return rc;
}

/* An error of restoring the state from `name`, named so. */
static int restore_failed(int rc, const char *name)
{
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "%s: %s", name, msg);
}

/* Continues from a checkpoint c (read from `name`) that every rank holds. */
static int restore(strata_integrator *s, const strata_checkpoint *c, const char *name,
                   strata_iteration_cb progress, void *ctx)
{
  int rc = fits(s, c, name);
  if (rc != STRATA_OK) return rc;
  rc = strata_run_restore(s->run, &c->state, progress, ctx);
  return rc == STRATA_OK ? rc : restore_failed(rc, name);
}

int strata_integrator_load(strata_integrator *s, const char *path, strata_iteration_cb progress,
                           void *ctx)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(path, "path");
  /* Rank 0 reads and checks the file; every rank continues from its state,
   * broadcast as it is: the program's resume (api/session.c). */
  strata_checkpoint *c = NULL;
  int rc = STRATA_OK;
  if (s->comm->rank == 0) {
    rc = strata_checkpoint_read(path, &c);
    if (rc == STRATA_OK) rc = fits(s, c, path);
  }
  rc = share_outcome(s->comm, rc);
  if (rc == STRATA_OK) {
    rc = strata_session_share_state(s->comm, s->run, c, progress, ctx);
    if (rc != STRATA_OK && rc != STRATA_ECOMM) rc = restore_failed(rc, path);
  }
  strata_checkpoint_free(c);
  return agree(s->comm, rc);
}

int strata_integrator_save_buffer(strata_integrator *s, void **buf, size_t *len)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(buf, "place for the buffer");
  STRATA_GIVEN(len, "place for its length");
  strata_ckpt_info info = info_of(s);
  strata_run_state st = {0};
  strata_run_state_get(s->run, &st);
  return strata_checkpoint_image(&st, &info, buf, len);
}

int strata_integrator_load_buffer(strata_integrator *s, const void *buf, size_t len,
                                  strata_iteration_cb progress, void *ctx)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(buf, "buffer");
  strata_checkpoint *c = NULL;
  int rc = strata_checkpoint_read_image(buf, len, "(state buffer)", &c);
  if (rc == STRATA_OK) rc = restore(s, c, "(state buffer)", progress, ctx);
  strata_checkpoint_free(c);
  return agree(s->comm, rc);
}

int strata_integrator_map(strata_integrator *s, int *naxes, int *ninc, double *edges)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(naxes, "place for naxes");
  STRATA_GIVEN(ninc, "place for ninc");
  strata_run_state st = {0};
  strata_run_state_get(s->run, &st);
  if (s->run->sync_rc != STRATA_OK) return s->run->sync_rc;
  *naxes = st.naxes;
  *ninc = st.ninc;
  if (edges) memcpy(edges, st.edges, sizeof(double) * (size_t)st.naxes * (size_t)(st.ninc + 1));
  return STRATA_OK;
}

int strata_integrator_set_map(strata_integrator *s, int naxes, int ninc, const double *edges)
{
  STRATA_GIVEN(s, "integrator");
  if (!edges) return strata_error(STRATA_EINVAL, "strata_integrator_set_map: no edges");
  /* Before any edge is read: the shape of a map strata could have made. */
  if (naxes < 1 || naxes > STRATA_MAX_DIM || ninc < 1 || ninc > 1000000)
    return strata_error(STRATA_EINVAL, "the map given: %d axes of %d increments: must be "
                        "1..%d axes of 1..1000000", naxes, ninc, STRATA_MAX_DIM);
  int rc = strata_run_start_from(s->run, naxes, ninc, edges, 0, NULL, NULL);
  if (rc == STRATA_OK) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "the map given: %s", msg);
}

int strata_integrator_start_from(strata_integrator *s, strata_integrator *from)
{
  STRATA_GIVEN(s, "integrator");
  STRATA_GIVEN(from, "integrator to start from");
  strata_run_state st = {0};
  strata_run_state_get(from->run, &st);
  int rc = from->run->sync_rc;
  if (rc == STRATA_OK)
    rc = strata_run_start_from(s->run, st.naxes, st.ninc, st.edges, st.nhcube, st.nh, NULL);
  if (rc == STRATA_OK) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "the run started from: %s", msg);
}

/* The one-call form: an integrator on the CPU backend, no peers, nothing
 * saved; its run goes through the session's loop like every other. */
int strata_integrate(const strata_problem *pr, const strata_params *p,
                     strata_iteration_cb cb, void *ctx, strata_result *res)
{
  STRATA_GIVEN(pr, "problem");
  STRATA_GIVEN(p, "params");
  STRATA_GIVEN(res, "result to fill");
  strata_integrator *s = NULL;
  int rc = strata_integrator_alloc_checked(STRATA_INTERFACE, sizeof *pr, sizeof *p, pr, p,
                                           STRATA_BACKEND_CPU, NULL, &s);
  if (rc == STRATA_OK) rc = strata_integrator_integrate(s, cb, ctx, res);
  strata_integrator_free(s);
  return rc;
}
