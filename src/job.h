/* Job files: what to integrate and how, from an INI file (libinih) and
 * --set overrides.  Every problem is reported as one line naming the file,
 * line and key. */
#ifndef STRATA_JOB_H
#define STRATA_JOB_H
#include "strata/strata.h"

#define STRATA_PATH_MAX 4096

typedef struct {
  char source[STRATA_PATH_MAX];  /* job file path, or "(default job)" */
  char integrand[64];
  int dim;                       /* 0 until set */
  double lower[STRATA_MAX_DIM], upper[STRATA_MAX_DIM];
  int nlower, nupper;            /* 0 (default domain), 1 (all axes) or dim */
  double params[STRATA_MAX_PARAMS];
  int nparams;                   /* -1: the integrand's defaults */
  strata_params p;
  char backend[16];              /* auto | cpu | cuda */
  char log[STRATA_PATH_MAX];
  char checkpoint[STRATA_PATH_MAX];
  int checkpoint_every;          /* iterations between checkpoints; 0: not by count */
  double checkpoint_every_s;     /* seconds between checkpoints; 0: not by time */
  int resume;                    /* STRATA_RESUME_* */
  int log_map;                   /* a map snapshot every this many iterations; 0: at the end */
  int check_ranks;               /* compare the ranks' states after every iteration */
} strata_job;

enum { STRATA_RESUME_NO = 0, STRATA_RESUME_YES = 1, STRATA_RESUME_AUTO = 2 };

/* The job that runs when no file is given. */
extern const char strata_default_job[];

void strata_job_init(strata_job *job);
/* Parse a file (path) or, with path NULL, the default job text. */
int strata_job_load(strata_job *job, const char *path);
/* "section.key=value" from the command line. */
int strata_job_set(strata_job *job, const char *assignment);
/* Cross-key checks and resolution against the integrand; fills *pr. */
int strata_job_resolve(const strata_job *job, strata_problem *pr,
                       const strata_builtin **builtin);
#endif
