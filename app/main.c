/* The strata command line: strata run | list | log | --help | --version. */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "job.h"
#include "logcmd.h"
#include "message.h"
#include "strata/report.h"
#include "stop.h"
#include "world.h"

static const char usage_text[] =
    "Usage: strata run [JOB.ini] [--set SECTION.KEY=VALUE]... [--json] [-q] [-v]\n"
    "                  [--resume [--force]]\n"
    "       strata list\n"
    "       strata log FILE.h5 [--csv]\n"
    "       strata --help | --version\n"
    "\n"
    "Adaptive Monte Carlo integration (VEGAS+, VEGAS, VEGAS-1D).\n"
    "\n"
    "  run        integrate the job in JOB.ini (without a file: a built-in\n"
    "             default job, a 6-D gaussian), print the iteration table\n"
    "  list       the built-in integrands with their exact values\n"
    "  log        print a run's convergence log (run.log) as its table, or CSV\n"
    "\n"
    "Options of run:\n"
    "  -s, --set SECTION.KEY=VALUE   override a job-file key (repeatable)\n"
    "  -j, --json       end stdout with one line of JSON holding the result\n"
    "  -q, --quiet      no iteration table (with --json: only the JSON line)\n"
    "  -v, --verbose    say how many ranks (and whether through MPI), which backend\n"
    "                   and how many hypercubes were chosen, and when a checkpoint\n"
    "                   is resumed or written\n"
    "  -t, --threads N  CPU threads (default: all; same as --set run.threads=N)\n"
    "  -p, --print-job  print the default job file and exit\n"
    "  -r, --resume     continue from run.checkpoint (same as run.resume = yes)\n"
    "  -f, --force      resume although maxiter, maxeval, skip, epsrel, epsabs or\n"
    "                   min_q differ from the checkpoint's\n"
    "\n"
    "Exit status: 0 when the run finished (converged or not: see the output),\n"
    "1 on an error, 2 on a usage error, 3 when SIGTERM or SIGUSR1 stopped it\n"
    "after writing its checkpoint (requeue it with --resume).  See strata(1).\n";

static int usage_error(const char *msg, const char *arg)
{
  char shown[256] = "";
  if (arg) strata_escape(shown, sizeof shown, arg);
  fprintf(stderr, "strata: %s%s%s (try 'strata --help')\n", msg, arg ? " " : "", shown);
  return 2;
}

/* The table's header comes with its first row, so that a run that fails
 * before its first iteration ends (a GPU job whose user code NVRTC cannot
 * compile) prints its one-line error alone. */
typedef struct {
  FILE *out;
  int headed;
} table_out;

static int print_table_row(const strata_iteration *it, void *ctx)
{
  table_out *t = ctx;
  if (!t->headed) strata_report_header(t->out);
  t->headed = 1;
  strata_report_iteration(t->out, it);
  return 0;
}

static int cmd_list(void)
{
  printf("%-18s %-4s %-15s %-10s %s\n", "integrand", "dims", "domain", "params", "definition");
  for (size_t i = 0; strata_builtin_at(i); i++) {
    const strata_builtin *b = strata_builtin_at(i);
    char dom[48], par[48] = "-";
    snprintf(dom, sizeof dom, "(%g,%g)^d", b->lower, b->upper);
    if (b->nparams > 0) snprintf(par, sizeof par, "%s=%g", b->param_names, b->params[0]);
    printf("%-18s %d-%-2d %-15s %-10s %s  [%s]\n", b->name, b->dim_min, b->dim_max, dom,
           par, b->formula, b->title);
    for (int k = 0; k < 8 && b->list_dims[k]; k++)
      printf("%18s d=%-2d exact = %.17g\n", "", b->list_dims[k],
             b->exact(b->list_dims[k], b->params));
  }
  return 0;
}

/* A usage error of this rank: its message, for strata_cli_agree to print. */
static int usage_status(const char *msg, const char *arg)
{
  app_error(STRATA_EINVAL, "%s%s%s (try 'strata --help')", msg, arg ? " " : "", arg ? arg : "");
  return 2;
}

/* How the program's messages name the settings: its options and job keys. */
static const strata_settings_names option_names = {
    "--resume", "run.resume", "run.resume = auto", "--force", "run.checkpoint", "run.log",
    "vegas.map", "run.backend"};

/* A path of the job's settings, NULL where none is given. */
static const char *given(const char *path) { return path && path[0] ? path : NULL; }

/* Where the ranks agree that none may go on: the exit status. */
static int stop_early(strata_world *w, const strata_job *job, int st)
{
  const char *checkpoint = given(job->settings.checkpoint);
  if (st == STRATA_CLI_DONE) return 0;
  if (st < STRATA_CLI_STOPPED) return st;
  int sig = st - STRATA_CLI_STOPPED;
  /* Nothing computed, no file written: with a checkpoint, "please requeue"
   * loses nothing; without one the signal has its usual effect. */
  if (!checkpoint || (sig != SIGTERM && sig != SIGUSR1)) {
    strata_world_close(w, 1);
    strata_stop_raise(sig);
  }
  /* The checkpoint's lock (empty, as a run's lock may be) says that the
   * run was asked for: a resume, as status 3 asks, then starts it. */
  if (w->rank == 0) {
    char lock[4200];
    if ((size_t)snprintf(lock, sizeof lock, "%s.lock", checkpoint) < sizeof lock) {
      int fd = open(lock, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd >= 0) close(fd);
    }
    fprintf(stderr, "strata: stopped by a signal (%s) before the run started: nothing was "
            "computed; run it again, with or without --resume (exit status %d)\n",
            sig == SIGTERM ? "SIGTERM" : "SIGUSR1", STRATA_EXIT_REQUEUE);
  }
  return STRATA_EXIT_REQUEUE;
}

/* The JSON line, with every component of a vector integrand (strata_result
 * holds the first STRATA_MAX_COMP). */
static void json_line(const strata_integrator *it, const strata_result *res,
                      const strata_report_info *info)
{
  const size_t n = res->ncomp > 1 ? (size_t)res->ncomp : 0;
  double *v = n ? malloc(sizeof(double) * n * (n + 4)) : NULL;
  if (!v) {
    strata_report_json(stdout, res, info);
    return;
  }
  strata_report_comps all = {res->ncomp, v, v + n, v + 2 * n, v + 3 * n, v + 4 * n};
  strata_integrator_components(it, v, v + n, v + 2 * n, v + 3 * n, v + 4 * n);
  strata_report_json_all(stdout, res, &all, info);
  free(v);
}

/* strata run's command line. */
typedef struct {
  int json, quiet, verbose, resume, force, nset;
  const char *sets[256], *threads;
  const char *path; /* the job file; NULL: the default job */
} run_options;

/* Reads run's options into *o: 0, STRATA_CLI_DONE (--help, --print-job)
 * or a usage status. */
static int run_options_read(int argc, char **argv, run_options *o)
{
  static const struct option opts[] = {
      {"set", required_argument, 0, 's'},   {"json", no_argument, 0, 'j'},
      {"quiet", no_argument, 0, 'q'},       {"verbose", no_argument, 0, 'v'},
      {"threads", required_argument, 0, 't'}, {"print-job", no_argument, 0, 'p'},
      {"resume", no_argument, 0, 'r'},      {"force", no_argument, 0, 'f'},
      {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  int c, st = 0;
  optind = 1;
  /* Errors before the ranks agree are this rank's alone; a rank that
   * returned now would leave the others waiting in their first collective
   * (and itself in MPI_Finalize's). */
  opterr = 0;
  while (st == 0 && (c = getopt_long(argc, argv, ":s:jqvt:phrf", opts, NULL)) != -1) {
    char shown[3] = {'-', (char)optopt, '\0'};
    switch (c) {
    case 's':
      if (o->nset == 256) st = usage_status("too many --set options", NULL);
      else o->sets[o->nset++] = optarg;
      break;
    case 'j': o->json = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case 't': o->threads = optarg; break;
    case 'r': o->resume = 1; break;
    case 'f': o->force = 1; break;
    case 'p': fputs(strata_default_job, stdout); st = STRATA_CLI_DONE; break;
    case 'h': fputs(usage_text, stdout); st = STRATA_CLI_DONE; break;
    case ':': st = usage_status("missing value for", argv[optind - 1]); break;
    default: st = usage_status("bad option for run", optopt ? shown : argv[optind - 1]); break;
    }
  }
  if (st == 0 && argc - optind > 1)
    st = usage_status("run takes at most one job file, got", argv[optind + 1]);
  o->path = optind < argc ? argv[optind] : NULL;
  return st;
}

/* The job file with the options' changes, its problem, and the integrand's
 * code and tables read: STRATA_OK or this rank's error. */
static int run_job_load(const run_options *o, strata_world *w, strata_job *job,
                        strata_problem *pr, const strata_builtin **b, strata_source **src,
                        strata_table_set **tables)
{
  int rc = strata_job_load(job, o->path);
  for (int i = 0; rc == STRATA_OK && i < o->nset; i++) rc = strata_job_set(job, o->sets[i]);
  if (rc == STRATA_OK && o->threads) {
    char a[64];
    snprintf(a, sizeof a, "run.threads=%s", o->threads);
    rc = strata_job_set(job, a);
  }
  if (rc == STRATA_OK) rc = strata_job_resolve(job, pr, b);
  if (rc == STRATA_OK) strata_backend_prepare(strata_job_backend(job), w->peers);
  if (rc == STRATA_OK) rc = strata_cli_integrand_load(job, pr, src, tables);
  return rc;
}

/* The job's settings with those that the program sets (the keys of
 * strata/keys.h without a job key: its options, what it knows), under the
 * program's names for them. */
static void run_settings(const strata_job *job, const run_options *o, double exact,
                         strata_settings_names *names, strata_settings *set)
{
  *names = option_names;
  if (o->resume) names->resume_key = "--resume";
  *set = job->settings;
  set->name = job->source;
  if (o->resume) set->resume = STRATA_RESUME_YES;
  set->new_stop_keys = o->force;
  set->verbose = o->verbose;
  set->exact = exact;
  set->notes = 1;
  set->names = names;
}

/* Rank 0's summary and JSON line of a run that finished. */
static void run_report(const run_options *o, strata_world *w, const strata_job *job,
                       const strata_problem *pr, const strata_source *src,
                       strata_integrator *it, const strata_result *res, double exact)
{
  if (!o->quiet) strata_report_summary(stdout, res, exact);
  if (!o->json) return;
  const strata_integrator_info *in = strata_integrator_describe(it);
  char source[17];
  if (src) snprintf(source, sizeof source, "%016llx",
                    (unsigned long long)strata_source_hash(src));
  strata_report_info info = {pr->name, pr->dim, strata_mode_name(job->p.mode), in->backend,
                             w->size, exact, job->p.seed, pr->params, pr->nparams,
                             src ? source : NULL, job->source, in->definition_hash,
                             given(job->settings.map), in->exchange,
                             in->exchange_setup_s};
  json_line(it, res, &info);
}

static int cmd_run(int argc, char **argv, strata_world *w)
{
  run_options o;
  int st = run_options_read(argc, argv, &o);
  strata_job job;
  strata_job_init(&job);
  strata_problem pr;
  memset(&pr, 0, sizeof pr);
  const strata_builtin *b = NULL;
  strata_source *src = NULL;
  strata_table_set *tables = NULL;
  if (st == 0 && run_job_load(&o, w, &job, &pr, &b, &src, &tables) != STRATA_OK) st = 1;
  if (o.verbose && w->rank == 0 && st == 0)
    fprintf(stderr, "strata: %d rank%s, %s\n", w->size, w->size == 1 ? "" : "s",
            strata_world_how());
  /* Every rank read its job, code and tables; only if all could does any
   * compile or run. */
  st = strata_cli_agree(w, st, 1);
  if (st != 0) {
    strata_cli_integrand_free(src, tables);
    return stop_early(w, &job, st);
  }
  /* From the first line of user code (a constructor runs at dlopen) until
   * the run has ended, an exit() is none of strata's. */
  static char guard[160], who[32];
  if (w->size > 1) snprintf(who, sizeof who, "rank %d: ", w->rank);
  snprintf(guard, sizeof guard, "strata: %sthe integrand's code called exit() before the run "
           "finished (exit status 1)\n", who);
  strata_stop_guard_exit(guard);
  st = strata_cli_integrand_build(w, o.verbose, &pr, src);

  double exact = NAN;
  if (b && job.nlower == 0 && job.nupper == 0) exact = b->exact(pr.dim, pr.params);
  strata_settings_names names;
  strata_settings set;
  run_settings(&job, &o, exact, &names, &set);
  /* The ranks agree on the job (the first key that differs names the rank),
   * choose their backends, set up their exchange and allocate: each step
   * agreed inside, so every rank returns with its error or STRATA_EPEER. */
  strata_integrator *it = NULL;
  int rc;
  if (st == 0) {
    rc = strata_integrator_open(&pr, &job.p, strata_job_backend(&job), w->peers, &set, &it);
    st = strata_cli_agree(w, strata_cli_status(rc), 1);
  }
  if (st != 0) {
    strata_integrator_free(it);
    strata_cli_integrand_free(src, tables);
    return stop_early(w, &job, st);
  }

  int talk = w->rank == 0;
  FILE *table = talk && !o.quiet ? stdout : NULL;
  strata_result res;
  /* Caught since start-up; a job without a checkpoint has nothing to save
   * from here on, so the signals end it as they would any program. */
  if (!given(job.settings.checkpoint)) strata_stop_uninstall();
  int shared = 1;
  rc = STRATA_OK;
  if (given(job.settings.checkpoint) && strata_stop_install() != 0) {
    shared = 0;
    rc = app_error(STRATA_EINVAL, "cannot catch SIGTERM and SIGUSR1");
  }
  table_out rows = {table, 0};
  if (rc == STRATA_OK) {
    rc = strata_integrator_run(it, table ? print_table_row : NULL, &rows, &res);
    if (rc != STRATA_OK) {
      app_take_error(rc);
      shared = strata_integrator_error_shared(it);
    }
  }
  strata_stop_guard_exit(NULL);
  int stopped = rc == STRATA_OK && strata_integrator_stopped(it);
  if (stopped && talk) {
    fprintf(stderr, "strata: stopped by a signal after iteration %d; the checkpoint %s holds "
            "the run: continue it with --resume (exit status %d)\n", res.iterations,
            job.settings.checkpoint, STRATA_EXIT_REQUEUE);
    fflush(stderr);
  }
  /* A finished run whose final checkpoint could not be written: its
   * result, then the error (exit status 1). */
  int whole = rc == STRATA_OK || (shared && strata_integrator_finished(it));
  if (whole && talk && !stopped) run_report(&o, w, &job, &pr, src, it, &res, exact);
  strata_integrator_free(it);
  strata_cli_integrand_free(src, tables);
  /* An error every rank knows about (a file rank 0 could not use): rank 0
   * says it once and all end normally. */
  if (rc != STRATA_OK && shared) {
    if (w->rank == 0) fprintf(stderr, "strata: %s\n", app_message());
    return 1;
  }
  if (rc != STRATA_OK) return strata_cli_fail(w, "%s", app_message());
  return stopped ? STRATA_EXIT_REQUEUE : 0;
}

int main(int argc, char **argv)
{
  /* First: a stop signal during start-up (since exec: the launcher blocked
   * it; MPI_Init, reading the job, a compile) must not end a run that could
   * be requeued with status 143 or 138; the ranks see it where they next
   * agree (strata_cli_agree).  Other commands take it as any program. */
  int run = argc >= 2 && !strcmp(argv[1], "run");
  if (run && strata_stop_install() != 0) {
    perror("strata: cannot catch SIGTERM and SIGUSR1");
    return 1;
  }
  strata_stop_unblock();
  if (argc < 2) return usage_error("missing command (run, list or log)", NULL);
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    fputs(usage_text, stdout);
    return 0;
  }
  strata_source_watch(strata_stop_child, strata_stop_requested);
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
    printf("strata %s\n", strata_version());
    printf("backends: cpu%s\n",
#ifdef HAVE_CUDA
           ", cuda"
#else
           ""
#endif
    );
    return 0;
  }
  /* A file size limit (ulimit -f) must end in a write error naming the
   * file, not in a kill by SIGXFSZ with a half-written temporary file. */
  signal(SIGXFSZ, SIG_IGN);
  strata_init();
  if (!strcmp(argv[1], "list")) return cmd_list();
  if (!strcmp(argv[1], "log")) return strata_log_command(argc - 1, argv + 1);
  if (strcmp(argv[1], "run")) return usage_error("unknown command", argv[1]);
  strata_world w;
  if (strata_world_open(&argc, &argv, &w) != STRATA_OK) {
    fprintf(stderr, "strata: %s\n", app_message());
    return 1;
  }
  int rc = cmd_run(argc - 1, argv + 1, &w);
  strata_stop_guard_exit(NULL);
  strata_world_close(&w, rc);
  return rc;
}
