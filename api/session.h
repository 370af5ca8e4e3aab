/* A run that keeps its results: it resumes from a checkpoint, appends every
 * iteration to the convergence log, writes checkpoints when they are due,
 * and on SIGTERM or SIGUSR1 saves its state and stops (doc/jobs.md).
 *
 * Every rank calls every function here; only rank 0 touches files.  Each
 * decision that depends on a file, a clock or a signal is agreed through
 * the communicator, so all ranks stop after the same iteration and fail
 * together with rank 0's message. */
#ifndef STRATA_SESSION_H
#define STRATA_SESSION_H
#include "comm.h"
#include "job.h"
#include "jobdef.h"
#include "run.h"
#include "world.h"

/* The exit status of a run that a signal stopped after writing its
 * checkpoint: "checkpointed, please requeue" (0 finished, 1 error, 2 usage). */
#define STRATA_EXIT_REQUEUE 3

struct strata_runlog;
struct strata_commit;

typedef struct {
  /* Set by the caller. */
  const strata_job *job;
  strata_comm *comm;
  const char *backend;   /* the backend's name */
  double exact;          /* NaN where unknown: recorded in the log */
  int resume;            /* --resume */
  int force;             /* --force */
  int verbose;
  /* Results. */
  int stopped;           /* a signal stopped the run, its state saved */
  int agreed;            /* the error returned is every rank's; rank 0 has the message */
  int whole;             /* with an error: the run finished and res is its result; only
                          * a file written at its end (the final checkpoint, the log's
                          * last word) failed */
  /* Private. */
  struct strata_runlog *log;
  strata_iteration *rows; /* replayed history of a resumed run (rank 0) */
  int nrows;
  int ran;               /* iterations run in this session */
  struct strata_commit *pending; /* a checkpoint still being synced to disk */
  int pending_itn;
  double last_checkpoint;
  int late_rc;           /* rank 0: the first error after the last iteration, or 0 */
  char late_msg[1280];
  int lockfd;            /* rank 0: the checkpoint's lock (strata_lock_take), or -1 */
  char definition[STRATA_JOBDEF_MAX];
  char host[256];
} strata_session;

/* Prepares r: checks the files, resumes from the checkpoint or starts
 * afresh, opens the log.  Errors are agreed. */
int strata_session_open(strata_session *s, strata_run *r);
/* Runs to the end or to a stop request; cb receives the replayed iterations
 * of a resumed run first, then the new ones.  res is filled unless stopped,
 * and with an error where s->whole says so. */
int strata_session_integrate(strata_session *s, strata_run *r, strata_iteration_cb cb,
                             void *ctx, strata_result *res);
void strata_session_close(strata_session *s);
#endif
