/* Job files: what to integrate and how, from an INI file (libinih) and
 * --set overrides.  Every problem is reported as one line naming the file,
 * line and key. */
#ifndef STRATA_JOB_H
#define STRATA_JOB_H
#include "strata/strata.h"

/* The longest path in a job file. */
#define STRATA_JOB_PATH_MAX 4096

/* The job file's keys whose value is text (PATH and TEXT). */
#define STRATA_JOB_TEXT_KEY(type, field, kind, key, keyword, lo, hi, def, choices)           \
  +(STRATA_KEY_##kind >= STRATA_KEY_PATH && sizeof key > 1)
enum {
  STRATA_JOB_TEXTS =
      0 STRATA_PARAMS_KEYS(STRATA_JOB_TEXT_KEY) STRATA_SETTINGS_KEYS(STRATA_JOB_TEXT_KEY)
};
#undef STRATA_JOB_TEXT_KEY

typedef struct {
  char source[STRATA_JOB_PATH_MAX];  /* job file path, or "(default job)" */
  char integrand[STRATA_JOB_PATH_MAX]; /* a built-in name, "file:PATH" or "inline" */
  char function[64];             /* file: the function to integrate */
  char body[4096];               /* inline: the function's body (indented lines append) */
  int form;                      /* STRATA_FORM_*: the user function's signature */
  int ncomp;                     /* 0 until set */
  int adapt_comp;                /* -1: sum of |f_c|; -2 until set (component 0) */
  char tables[4096];             /* "name=file.h5:/dataset, ..." */
  int dim;                       /* 0 until set */
  double lower[STRATA_MAX_DIM], upper[STRATA_MAX_DIM];
  int nlower, nupper;            /* 0 (default domain), 1 (all axes) or dim */
  double params[STRATA_MAX_PARAMS];
  int nparams;                   /* -1: the integrand's defaults */
  strata_params p;               /* with p.peaks: the [peaks] keys */
  char known[4096];              /* peaks.known as given, for messages */
  int known_dim[STRATA_MAX_KNOWN]; /* the coordinates of each known point */
  /* The run's settings as the job file gives them (its keys of
   * STRATA_SETTINGS_KEYS, strata/keys.h); their strings point into text,
   * so a job is never copied. */
  strata_settings settings;
  char text[STRATA_JOB_TEXTS][STRATA_JOB_PATH_MAX];
  char backend[16];              /* auto | cpu | cuda */
} strata_job;

enum { STRATA_FORM_AUTO = 0, STRATA_FORM_SIMPLE = 1, STRATA_FORM_EXTENDED = 2 };

/* The job that runs when no file is given. */
extern const char strata_default_job[];

void strata_job_init(strata_job *job);
/* Parse a file (path) or, with path NULL, the default job text. */
int strata_job_load(strata_job *job, const char *path);
/* "section.key=value" from the command line. */
int strata_job_set(strata_job *job, const char *assignment);
/* Cross-key checks and resolution against the integrand; fills *pr.  For
 * a user integrand *builtin is NULL and pr->f, fv and tables stay unset:
 * the integrand is compiled afterwards (strata_cli_integrand). */
int strata_job_resolve(const strata_job *job, strata_problem *pr,
                       const strata_builtin **builtin);
/* Whether the job integrates user code ("file:..." or "inline"). */
int strata_job_user_integrand(const strata_job *job);
/* A path in the job file, as the program must open it: relative paths are
 * relative to the job file's directory, so a job runs from anywhere. */
void strata_job_path(const strata_job *job, const char *path, char *out, size_t len);
/* The directory those paths are relative to ("" : the working directory). */
void strata_job_dir(const strata_job *job, char *out, size_t len);
/* run.backend as the library names it. */
strata_backend_kind strata_job_backend(const strata_job *job);
#endif
