/* strata — adaptive Monte Carlo integration (VEGAS+, VEGAS, VEGAS-1D), plain
 * Monte Carlo and randomized quasi-Monte Carlo.
 *
 * What to integrate is a strata_problem, how a strata_params.  One call
 * integrates on the CPU (strata_integrate); a strata_integrator does the
 * rest: a backend (cpu, cuda), peers (strata/strata_mpi.h), stepping,
 * checkpoints, maps, and with strata_settings a run that keeps its results
 * (convergence log, checkpoint cadence, resume, stop requests).
 * doc/api.md has an example of each. */
#ifndef STRATA_STRATA_H
#define STRATA_STRATA_H

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "strata/keys.h"
#include "strata/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The release this header belongs to (strata_version() is the library's:
 * the two differ when a program runs with another libstrata than it was
 * built with). */
#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0
/* The interface this header describes: the layouts of the structs a caller
 * allocates.  strata_integrator_alloc and strata_settings_init hand it to
 * the library with the structs' sizes, and the library refuses a caller
 * whose structs it does not know (a header newer than the library, or a
 * binding such as examples/api/strata.f90 out of step with this file). */
#define STRATA_INTERFACE 4

#define STRATA_MAX_DIM 32
#define STRATA_MAX_PARAMS 16
/* Components of a vector-valued integrand (ncomp): up to STRATA_MAX_NCOMP
 * (histograms) in modes vegas+, vegas and vegas1d on the CPU; up to
 * STRATA_MAX_COMP in modes plain and qmc, with qmc_map, and on the GPU.
 * strata_result holds the first STRATA_MAX_COMP components; all of them
 * come from strata_integrator_components. */
#define STRATA_MAX_COMP 8
#define STRATA_MAX_NCOMP 1024
/* Tables one integrand may read. */
#define STRATA_MAX_TABLES 16
/* CPU threads one run may ask for (strata_params.nthreads): several times
 * the hardware threads of the largest nodes, and far below the count at
 * which OpenMP's start of a team (its threads' start data on the caller's
 * stack: 100000 threads overflow 8 MB) crashes.  The same limit on every
 * machine, since the threads never change a run's results. */
#define STRATA_MAX_THREADS 4096

/* Error codes; 0 is success.  The message of the last error of the calling
 * thread is strata_last_error(). */
enum {
  STRATA_OK = 0,
  STRATA_EINVAL = 1,   /* bad parameter or input */
  STRATA_ENOMEM = 2,
  STRATA_ENOTFINITE = 3, /* the integrand returned NaN or Inf */
  STRATA_EBACKEND = 4, /* backend unavailable or failed */
  STRATA_EIO = 5,
  STRATA_ECOMM = 6,
  /* A collective call failed on another rank, not on this one: that rank's
   * strata_last_error() says why, and this rank's state is as the call
   * left every rank's. */
  STRATA_EPEER = 7
};

typedef double (*strata_fn)(const double *x, int dim, const double *params);
/* With the caller's data: ncomp values of the integrand at x into out. */
typedef void (*strata_ufn)(const double *x, int dim, void *user, double *out);
/* The batch form: n points at once, point i at x[i * dim .. i * dim + dim),
 * its ncomp values into out[i * ncomp ..].  Called with n up to
 * strata_problem.batch, from several threads at once (each with its own
 * points), so user must be safe to share or read-only. */
typedef void (*strata_bfn)(int64_t n, const double *x, int dim, void *user, double *out);
/* The extended form: ncomp values into out[0..ncomp-1], with the job's tables
 * (in the order the job lists them). */
typedef void (*strata_vfn)(const double *x, int dim, const double *params,
                           const strata_table *tables, double *out);

typedef enum {
  STRATA_MODE_VEGASPLUS = 0, /* adaptive map + adaptive stratification */
  STRATA_MODE_VEGAS = 1,     /* adaptive map, equal samples per hypercube */
  STRATA_MODE_VEGAS1D = 2,   /* one map shared by all axes */
  STRATA_MODE_PLAIN = 3,     /* plain Monte Carlo: no map, no strata */
  STRATA_MODE_QMC = 4        /* randomized quasi-Monte Carlo, error from nrand randomizations */
} strata_mode;

typedef enum {
  STRATA_QMC_SOBOL = 0,      /* scrambled Sobol' (Joe-Kuo directions) */
  STRATA_QMC_LATTICE = 1     /* randomly shifted rank-1 lattice, built by CBC */
} strata_qmc_rule;

/* The peak search, its channels and the gate on a claim (doc/peaks.md). */
enum {
  STRATA_PEAKS_AUTO = -1, /* on in modes vegas+, vegas and vegas1d on the CPU, else off */
  STRATA_PEAKS_OFF = 0,   /* today's results bit for bit: no search, channel or gate */
  STRATA_PEAKS_ON = 1     /* on; an error where it cannot run (modes plain, qmc; cuda) */
};
/* Points a user knows are peaks (peaks.known), whose ascents run first. */
#define STRATA_MAX_KNOWN 8
/* Modes a result reports, at most. */
#define STRATA_MAX_PEAKS 16

typedef struct {
  int search;           /* STRATA_PEAKS_AUTO, _OFF or _ON */
  int starts;           /* Sobol' points before the first iteration (1024), or neval / 2
                         * where that is more, at most 16384; 0: none */
  int ascents;          /* ascents per round (4); the Sobol' round twice as many */
  double uniform;       /* the defensive uniform share of the points (0.02) */
  int nknown;           /* points in known, 0..STRATA_MAX_KNOWN */
  double known[STRATA_MAX_KNOWN][STRATA_MAX_DIM]; /* in the problem's domain */
} strata_peaks_params;

/* How a run goes: the fields of STRATA_PARAMS_KEYS (strata/keys.h), each
 * with its meaning there. */
typedef struct {
  STRATA_PARAMS_KEYS(STRATA_KEY_FIELD)
  /* Added in interface 4: the peak search's keys (the job file's [peaks]). */
  strata_peaks_params peaks;
} strata_params;

typedef struct {
  strata_fn f;          /* the simple form; or NULL and fv set */
  int dim;
  double lower[STRATA_MAX_DIM], upper[STRATA_MAX_DIM];
  double params[STRATA_MAX_PARAMS];
  int nparams;
  const char *name;     /* for messages */
  /* The extended form (used when f is NULL): ncomp components, tables. */
  strata_vfn fv;
  int ncomp;            /* 0 or 1: scalar; up to STRATA_MAX_NCOMP (above) */
  /* Which component drives the map and the stratification: 0..ncomp-1, or
   * -1 for the sum of the components' magnitudes. */
  int adapt_comp;
  const strata_table *tables;
  int ntables;
  /* Compiled user integrands: what a backend that compiles its own code
   * (CUDA, through NVRTC) needs; NULL for built-in integrands. */
  const struct strata_source *source;
  /* The forms with the caller's data (used when f and fv are NULL): fu one
   * point per call, or fb a batch of up to `batch` points per call (0:
   * 1024); setting both is an error.  Both give the same result, bit for
   * bit, as each other and as fv computing the same values.  user reaches
   * every call unchanged. */
  strata_ufn fu;
  strata_bfn fb;
  void *user;
  int batch;
} strata_problem;

/* Per component c of a vector integrand, strata_iteration.comp holds a row
 * of STRATA_COMP_ROW(ncomp) doubles starting at comp[c * STRATA_COMP_ROW(ncomp)]:
 *   [STRATA_COMP_INTEGRAL]  this iteration's estimate of component c
 *   [STRATA_COMP_SIGMA]     ... its error
 *   [STRATA_COMP_AVG]       weighted average over the kept iterations
 *   [STRATA_COMP_AVG_SIGMA] ... its error
 *   [STRATA_COMP_CHI2_DOF]  ... chi^2/dof of the kept iterations
 *   [STRATA_COMP_Q]         ... and Q
 *   [STRATA_COMP_COV + b]           this iteration's covariance of c and b
 *   [STRATA_COMP_COV + ncomp + b]   the covariance of the averages of c and b
 * (b = 0..ncomp-1).  The convergence log stores the same rows. */
enum {
  STRATA_COMP_INTEGRAL = 0,
  STRATA_COMP_SIGMA = 1,
  STRATA_COMP_AVG = 2,
  STRATA_COMP_AVG_SIGMA = 3,
  STRATA_COMP_CHI2_DOF = 4,
  STRATA_COMP_Q = 5,
  STRATA_COMP_COV = 6
};
#define STRATA_COMP_ROW(ncomp) (STRATA_COMP_COV + 2 * (ncomp))

/* One iteration, as reported to the caller after it is combined.  For a
 * vector integrand (ncomp > 1) the scalar fields describe component 0.
 * Before the first kept iteration (the skip warm-up ones: kept 0) there is
 * no average yet: avg and avg_sigma are NaN, chi2_dof 0 and q 1, and so
 * are the comp rows' AVG, AVG_SIGMA, CHI2_DOF and Q. */
typedef struct {
  int itn;              /* 1-based */
  double integral, sigma;  /* this iteration */
  int64_t neval;
  int kept;             /* counted in the average (after skip) */
  int restarted;        /* the average restarted here: see doc/algorithm.md */
  double avg, avg_sigma, chi2_dof, q; /* cumulative over kept iterations */
  int adapting;
  double time_s;        /* wall time of this iteration */
  int ncomp;            /* components: 1 for a scalar integrand */
  /* ncomp > 1: ncomp rows laid out as above, owned by the run and valid
   * until it is freed or restored (beyond STRATA_MAX_COMP components: until
   * its next iteration); NULL for a scalar integrand. */
  const double *comp;
  /* Added in interface 4: the Pareto k-hat of this iteration's weights
   * (NaN where the search is off or there are too few), and the sampling
   * channels it drew from (1: the map alone). */
  double khat;
  int nchannels;
} strata_iteration;

/* A mode the peak search found. */
typedef struct {
  double x[STRATA_MAX_DIM]; /* its location, in the problem's domain */
  double logf;          /* log |f| there */
  double share;         /* its channel's balance-heuristic share of the last iteration's
                         * estimate (doc/peaks.md); NaN with no channel */
  double weight;        /* its channel's weight alpha_c (0 with no channel) */
  int known;            /* its ascent started from a point of peaks.known */
} strata_result_peak;

/* For a vector integrand (ncomp > 1) integral, sigma, chi2_dof and q
 * describe component 0; the comp_ arrays hold the first n = min(ncomp,
 * STRATA_MAX_COMP) components, comp_cov[a * n + b] their covariance (for a
 * scalar integrand, element 0 repeats the scalar fields).  More components
 * than that: strata_integrator_components has them all. */
typedef struct {
  double integral, sigma, chi2_dof, q;
  int64_t neval;        /* total evaluations, all iterations */
  int iterations;
  int converged;        /* every component met the tolerance */
  int nhcube;           /* hypercubes of the last iteration's stratification (a long
                         * run's finer one: doc/algorithm.md) */
  double time_s;
  double comm_time_s;   /* of that, combining sums across ranks (rank 0's view) */
  int ncomp;
  double comp_integral[STRATA_MAX_COMP], comp_sigma[STRATA_MAX_COMP];
  double comp_chi2_dof[STRATA_MAX_COMP], comp_q[STRATA_MAX_COMP];
  /* Covariance of the components' averages, comp_cov[a * n + b] (above). */
  double comp_cov[STRATA_MAX_COMP * STRATA_MAX_COMP];
  /* epsrel = epsabs = 0: no tolerance was asked for, so there is no verdict
   * (converged is 0 and means nothing). */
  int no_target;
  /* The iterations left out of the average (the warm-up, and those before a
   * restart) read above it beyond chance: part of the integrand was likely
   * missed, and convergence is never claimed (doc/algorithm.md, "A lost
   * peak").  lost_z is their combined distance above the average in
   * sigmas; lost_itn (1-based) the one farthest above, with its estimate. */
  int lost;
  int lost_itn;
  double lost_z, lost_integral, lost_sigma;
  /* A run that stopped (maxiter or maxeval) with an error above its target:
   * the evaluations the target needs at the rate the run has seen, errors
   * falling as 1/sqrt(N) (doc/algorithm.md, "What the target needs"); else
   * 0. */
  double neval_needed;
  /* The stratification has too few hypercubes per axis to show a peak
   * that the map lost, and convergence is not claimed (doc/algorithm.md,
   * "Too few strata to see a lost peak"); thin_neval is the evaluations
   * per iteration that give enough, else 0. */
  int thin;
  double thin_neval;
  /* Added in interface 4: the peak search (doc/peaks.md).  peaks_searched:
   * the search ran; the modes it found (the first STRATA_MAX_PEAKS of
   * nmodes); the channels sampled in the last iteration (1: the map alone;
   * with channels the map, one per mode and the uniform part) and the
   * map's and the uniform part's weights (those the last adaptation set:
   * with the modes' they add up to 1); the largest k-hat of the kept
   * iterations' weights, the iteration it is from, and its limit;
   * search_evals, the evaluations of the search (counted in neval too). */
  int peaks_searched;
  int nmodes;
  strata_result_peak modes[STRATA_MAX_PEAKS];
  int nchannels;
  double alpha_map, alpha_uniform;
  double khat, khat_limit;
  int khat_itn;
  int64_t search_evals;
  /* The gate: peaks_held is nonzero when the search, its channels or the
   * weights' tail withheld a claim that the rest of the rule made, and
   * peaks_reason says why in one line (also why the search did not run
   * where it was asked for automatically); peaks_neval the evaluations
   * per iteration that give every channel its minimum, else 0. */
  int peaks_held;
  char peaks_reason[200];
  double peaks_neval;
  /* The problem's dimension: the coordinates of a mode's x. */
  int dim;
} strata_result;

typedef void (*strata_iteration_cb)(const strata_iteration *it, void *ctx);

void strata_params_default(strata_params *p);
int strata_params_check(const strata_params *p);
int strata_problem_check(const strata_problem *pr);

/* Integrate on the CPU backend, in this process.  cb (may be NULL) is called
 * after every iteration. */
int strata_integrate(const strata_problem *pr, const strata_params *p,
                     strata_iteration_cb cb, void *ctx, strata_result *res);

const char *strata_last_error(void);
/* Text as strata's messages show it: control characters escaped as C
 * writes them (\n, \x01), never cut inside an escape, at most size - 1
 * characters.  For a caller's messages that quote what its user typed. */
void strata_escape(char *dst, size_t size, const char *src);
const char *strata_version(void);
const char *strata_mode_name(strata_mode m);
int strata_mode_parse(const char *s, strata_mode *m);
/* "sobol" or "lattice". */
int strata_qmc_rule_parse(const char *s, strata_qmc_rule *r);
/* Process-wide set-up, once, before MPI_Init where there is MPI: the
 * HDF5 library strata writes with must not shut down on its own at exit
 * (it would crash on a file whose last flush failed).  Calling it is
 * optional for a run that writes no file. */
void strata_init(void);

/* The built-in integrand suite. */
typedef struct {
  const char *name;      /* "f4" */
  const char *title;     /* "gaussian" */
  const char *formula;   /* one line, for `strata list` */
  strata_fn f;
  int dim_min, dim_max;  /* dimensions where it is defined */
  int list_dims[8];      /* dimensions tested and listed, 0-terminated */
  double lower, upper;   /* default domain, every axis */
  int nparams;
  double params[4];      /* default parameter values */
  const char *param_names; /* e.g. "a" or NULL */
  /* Exact value on the default domain; NaN where no closed form applies. */
  double (*exact)(int dim, const double *params);
} strata_builtin;

const strata_builtin *strata_builtin_find(const char *name);
const strata_builtin *strata_builtin_at(size_t i); /* NULL past the end */

/* ---- integrand source compiled at run time --------------------------------------
 * C source, compiled with the system's C compiler for the CPU and with
 * NVRTC for the GPU (doc/integrands.md): the form a GPU can run.  code
 * defines `function`, double f(const double *x, int dim, const double
 * *params) or, extended, void f(const double *x, int dim, const double
 * *params, const strata_table *tables, double *out) with ncomp values.
 * Compiled integrands are cached ($STRATA_CACHE_DIR, else
 * ~/.cache/strata). */
typedef struct strata_source strata_source;
int strata_source_from_string(const char *code, const char *function, int extended,
                              int ncomp, strata_source **out);
/* Frees it; the problems that use it must be gone first. */
void strata_source_free(strata_source *s);
/* Makes pr integrate s: compiles it for the CPU now (a compile error is
 * STRATA_EINVAL naming the line) and sets pr->f or pr->fv, pr->source and
 * pr->ncomp.  s must outlive pr's runs. */
int strata_problem_set_source(strata_problem *pr, strata_source *s);
/* Opens path for reading as strata opens what it runs or trusts (sources,
 * job files, tables): a regular file (a FIFO is refused, never waited
 * on), not through a symbolic link, owned by the effective user (or root)
 * and writable by no one else.  The checks are made on the descriptor the
 * stream then reads.  NULL, with a one-line error "PATH: cannot read the
 * WHAT: why", otherwise. */
FILE *strata_trusted_fopen(const char *path, const char *what);
/* From a C file defining `function` (path opened by strata_trusted_fopen;
 * shown names it in messages), or
 * from the body of one (its statements: the function around them is
 * strata's; shown names where the body came from).  Nothing is compiled
 * yet. */
int strata_source_from_file(const char *path, const char *shown, const char *function,
                            int extended, int ncomp, strata_source **out);
int strata_source_from_body(const char *body, const char *shown, int extended, int ncomp,
                            strata_source **out);
/* Compiles s for the CPU now, or finds it in the cache (what
 * strata_problem_set_source does when it was not done): ranks that share
 * the cache compile once when one builds first.  verbose shows the
 * compiler's warnings. */
int strata_source_build(strata_source *s, int verbose);
/* One line on how s was built: "integrand f from FILE: compiled for the
 * CPU in 0.4 s" (or "loaded from the cache"). */
void strata_source_describe(const strata_source *s, char *buf, size_t len);
/* The hash of the code and its tables' contents, part of the run's
 * definition. */
uint64_t strata_source_hash(const strata_source *s);
/* For a program that handles stop signals itself: child receives the pid
 * of each compiler strata starts (0 once it ended), so that a handler can
 * pass a signal on to it; requested (may be NULL) says whether a stop was
 * asked, which ends a compile. */
void strata_source_watch(void (*child)(int pid), int (*requested)(void));

/* Tables a source reads (strata/table.h): "name=FILE.h5:/dataset, ...",
 * each dataset read from HDF5, from a file checked as strata_trusted_fopen
 * checks one (owner, mode, no link, a regular file, on the descriptor HDF5
 * then reads), its class, rank and size checked before it is read; a
 * relative FILE is under dir (NULL or "": as given).  where names the text
 * in messages. */
typedef struct strata_table_set strata_table_set;
int strata_tables_read(const char *spec, const char *dir, const char *where,
                       strata_table_set **out);
void strata_tables_free(strata_table_set *t);
/* Gives pr the tables and s their names, in the order read: the code
 * reaches each as STRATA_TABLE(tables, name) (doc/integrands.md).  t must
 * outlive pr's runs. */
int strata_problem_set_tables(strata_problem *pr, strata_source *s, const strata_table_set *t);

/* ---- the integrator: a run that can be stepped, saved and moved ------------------ */
typedef enum {
  STRATA_BACKEND_AUTO = 0,  /* cuda where a GPU is visible and the integrand can run
                             * there (built-in or source), else cpu */
  STRATA_BACKEND_CPU = 1,   /* OpenMP threads (params.nthreads) */
  STRATA_BACKEND_CUDA = 2   /* one GPU: built-in integrands and sources only */
} strata_backend_kind;

/* Peers: serial (NULL) or an MPI communicator (strata/strata_mpi.h). */
typedef struct strata_comm strata_comm;
void strata_comm_free(strata_comm *c);

/* Starts what the backend will need and takes long to make (a GPU's
 * context, on the device comm's ranks of this node take in turn) in the
 * background, so that it overlaps the caller's own start (reading files,
 * compiling the integrand).  Optional. */
void strata_backend_prepare(strata_backend_kind kind, const strata_comm *comm);

typedef struct strata_integrator strata_integrator;

/* A run of pr with p on the backend asked for, with the peers of comm
 * (NULL: this process alone; otherwise every rank of comm calls every
 * function below with the same arguments, collectively).  pr and its
 * tables, user data and source must outlive the integrator; comm too. */
int strata_integrator_alloc(const strata_problem *pr, const strata_params *p,
                            strata_backend_kind backend, strata_comm *comm,
                            strata_integrator **out);
/* What strata_integrator_alloc calls, with the caller's interface and
 * struct sizes (the macro below fills them in; bindings to other languages
 * pass their own). */
int strata_integrator_alloc_checked(int interface, size_t problem_size, size_t params_size,
                                    const strata_problem *pr, const strata_params *p,
                                    strata_backend_kind backend, strata_comm *comm,
                                    strata_integrator **out);
#define strata_integrator_alloc(pr, p, backend, comm, out)                                  \
  strata_integrator_alloc_checked(STRATA_INTERFACE, sizeof(strata_problem),                \
                                  sizeof(strata_params), (pr), (p), (backend), (comm), (out))
void strata_integrator_free(strata_integrator *s);
/* "cpu" or "cuda": what auto chose. */
const char *strata_integrator_backend(const strata_integrator *s);
/* One iteration; it (may be NULL) receives its report. */
int strata_integrator_step(strata_integrator *s, strata_iteration *it);
/* Nonzero once converged or out of iterations or evaluations. */
int strata_integrator_finished(const strata_integrator *s);
/* Steps until finished, calling progress (may be NULL) after each
 * iteration with ctx; res (may be NULL) receives the result.  With
 * settings (strata_integrator_settings) it is strata_integrator_run with a
 * progress that never asks to stop. */
int strata_integrator_integrate(strata_integrator *s, strata_iteration_cb progress, void *ctx,
                                strata_result *res);

/* ---- a run that keeps its results: log, checkpoints, resume, stop ------------------- */

/* What a run keeps besides its result, for strata_integrator_run: the
 * fields of STRATA_SETTINGS_KEYS (strata/keys.h), each with its meaning
 * there.  The caller allocates it and fills it after strata_settings_init. */
typedef struct {
  size_t size;              /* sizeof (strata_settings): set by strata_settings_init */
  int interface;            /* STRATA_INTERFACE: set by strata_settings_init */
  STRATA_SETTINGS_KEYS(STRATA_KEY_FIELD)
  /* How messages name the settings: a program's options and keys, a
   * binding's keywords.  NULL: the fields of this struct. */
  const struct strata_settings_names *names;
} strata_settings;

/* The names messages give the settings, each a string the caller keeps:
 * "see --resume" rather than "see strata_settings.resume". */
typedef struct strata_settings_names {
  const char *resume;        /* what continues a run: "--resume" */
  const char *resume_key;    /* the setting that asked for it: "run.resume" */
  const char *resume_auto;   /* continue where there is a checkpoint: "run.resume = auto" */
  const char *new_stop_keys; /* take new stop keys on resume: "--force" */
  const char *checkpoint;    /* "run.checkpoint" */
  const char *log;           /* "run.log" */
  const char *map;           /* "vegas.map" */
  const char *backend;       /* "run.backend": prefixes a backend's refusal */
} strata_settings_names;

enum { STRATA_RESUME_NO = 0, STRATA_RESUME_YES = 1, STRATA_RESUME_AUTO = 2 };

/* No log, no checkpoint, no resume. */
#define strata_settings_init(st) strata_settings_init_checked((st), STRATA_INTERFACE, sizeof(strata_settings))
void strata_settings_init_checked(strata_settings *st, int interface, size_t size);

/* Gives s the settings (copied, strings too) before its first iteration. */
int strata_integrator_settings(strata_integrator *s, const strata_settings *st);

/* strata_integrator_alloc and strata_integrator_settings in one, with the
 * settings known from the start: messages name st->name (a job file) and
 * the ranks also agree on check_ranks; with verbose every rank says which
 * backend it has and how it exchanges with its peers, and rank 0 the
 * stratification.  Collective like strata_integrator_alloc.  A failure
 * that is another rank's returns STRATA_EPEER here.  st is made by
 * strata_settings_init, whose interface stands for the caller's structs. */
int strata_integrator_open(const strata_problem *pr, const strata_params *p,
                           strata_backend_kind backend, strata_comm *comm,
                           const strata_settings *st, strata_integrator **out);

/* What an integrator is, for reports: owned by the integrator, valid until
 * it is freed (definition after a run: what that run checked against). */
typedef struct {
  const char *backend;       /* "cpu" or "cuda" */
  /* Several GPU ranks: how their devices exchange ("nccl ..." or "mpi
   * through host memory ..."), and what setting it up took (not part of
   * any run's time); NULL and 0 otherwise. */
  const char *exchange;
  double exchange_setup_s;
  int ranks;
  int64_t nhcube;            /* hypercubes of the stratification */
  int per_axis;              /* hypercubes per axis */
  int ninc;                  /* map increments per axis */
  /* The hash of the run's definition (doc/file-formats.md,
   * definition_hash), 16 hex digits. */
  char definition_hash[17];
} strata_integrator_info;
const strata_integrator_info *strata_integrator_describe(const strata_integrator *s);

/* After a call on peers failed: nonzero when every rank returned its error
 * together (rank 0's message is the one that says why; the others' point
 * to it), zero when it is this rank's alone and other ranks may still wait
 * for it in a collective (end them all: MPI_Abort). */
int strata_integrator_error_shared(const strata_integrator *s);

/* The progress of strata_integrator_run: 0 goes on, nonzero stops the run
 * after this iteration (any rank's nonzero stops every rank), with a
 * checkpoint where the settings have one. */
typedef int (*strata_progress_cb)(const strata_iteration *it, void *ctx);

/* Runs to the end, or to a stop: resumes where the settings say (progress
 * then receives the restored iterations first, as they were first
 * reported), logs every iteration, checkpoints when due.  res (may be
 * NULL) receives the result, also of a stopped run (the result so far).
 * A file that cannot be written after the last iteration (the final
 * checkpoint, the log's last word) is an error returned with the result
 * in res. */
int strata_integrator_run(strata_integrator *s, strata_progress_cb progress, void *ctx,
                          strata_result *res);
/* Nonzero when the last run stopped on a request (strata_request_stop or
 * progress) before it finished; its checkpoint, where there is one, holds
 * it, and a run with resume continues it. */
int strata_integrator_stopped(const strata_integrator *s);
/* Asks every run of this process to stop after its current iteration.
 * Async-signal-safe: a SIGTERM handler may call it.  The run that sees
 * the request clears it (also one that finished with that iteration). */
void strata_request_stop(void);
/* The result so far: integral, sigma, chi2/dof, Q, per component. */
int strata_integrator_result(const strata_integrator *s, strata_result *res);
/* Every component's result so far, ncomp of each (strata_problem.ncomp; 1
 * for a scalar integrand) into the arrays that are not NULL, and the
 * covariance of their averages into cov[a * ncomp + b] (ncomp x ncomp):
 * what strata_result holds of the first STRATA_MAX_COMP, for all. */
int strata_integrator_components(const strata_integrator *s, double *integral, double *sigma,
                                 double *chi2_dof, double *q, double *cov);

/* The whole state in an HDF5 checkpoint (doc/file-formats.md), written
 * atomically by rank 0 over path; or as the same file's bytes in memory
 * (*buf malloc'ed, free() it).  A load continues exactly where the save
 * was, on any number of ranks: the continued run equals the uninterrupted
 * one bit for bit.  A load refuses a state of another problem or of other
 * parameters (the message names the first that differs), leaving the
 * integrator as it was.  progress (may be NULL) receives the restored
 * iterations. */
int strata_integrator_save(strata_integrator *s, const char *path);
int strata_integrator_load(strata_integrator *s, const char *path,
                           strata_iteration_cb progress, void *ctx);
int strata_integrator_save_buffer(strata_integrator *s, void **buf, size_t *len);
int strata_integrator_load_buffer(strata_integrator *s, const void *buf, size_t len,
                                  strata_iteration_cb progress, void *ctx);

/* The trained map: naxes x (ninc + 1) edges in the unit cube, axis by axis
 * (naxes is dim, or 1 for vegas1d).  edges NULL: only the sizes. */
int strata_integrator_map(strata_integrator *s, int *naxes, int *ninc, double *edges);
/* A new run starts from a map (before its first step): its first
 * iteration samples with it instead of the uniform map.  The map needs
 * the run's naxes; a map of another ninc is rebinned to the run's
 * (exactly where it divides the run's). */
int strata_integrator_set_map(strata_integrator *s, int naxes, int ninc, const double *edges);
/* A new run starts from where another left off (before its first step):
 * from's map and, where both have the same hypercubes and s moves samples
 * between them (vegas+), from's last allocation, rescaled to s's neval.
 * What continuing a trained run with another neval, number of iterations
 * or integrand needs: a run's parameters are fixed, so the next part of
 * the work is a new integrator that starts here.  Every rank calls it,
 * with integrators of the same peers. */
int strata_integrator_start_from(strata_integrator *s, strata_integrator *from);

#ifdef __cplusplus
}
#endif
#endif
