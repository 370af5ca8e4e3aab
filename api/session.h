/* A run that keeps its results: it resumes from a checkpoint, appends every
 * iteration to the convergence log, writes checkpoints when they are due,
 * and on a stop request (strata_request_stop: the program's SIGTERM and
 * SIGUSR1, a library caller's own) or its progress callback's saves its
 * state and stops (doc/slurm.md).  The one road of both the program and the
 * public integrator (strata_integrator_run).
 *
 * Every rank calls every function here; only rank 0 touches files.  Each
 * decision that depends on a file, a clock or a request is agreed through
 * the communicator, so all ranks stop after the same iteration and fail
 * together with rank 0's message. */
#ifndef STRATA_SESSION_H
#define STRATA_SESSION_H
#include "checkpoint.h"
#include "comm.h"
#include "jobdef.h"
#include "run.h"

struct strata_runlog;
struct strata_commit;

/* How the session's messages name the ways out: the caller's
 * (strata_settings.names: a program's options and keys), else the
 * library's own (the fields of strata_settings). */
typedef strata_settings_names strata_session_names;
/* The caller's names where it gave them, the library's for the rest. */
void strata_session_names_merge(const strata_settings_names *given, strata_session_names *out);

typedef struct {
  /* Set by the caller. */
  const char *name;      /* the job file, "(default job)" or the library caller's name */
  /* The caller's settings, as given (the strings the caller's): the log,
   * the checkpoint and when it is due, resume, the map to start from, the
   * identity, new_stop_keys, exact, verbose, notes and their names.  "" or
   * NULL for a path: none. */
  strata_settings settings;
  int threads;           /* the job's threads, for the checkpoint (0: all) */
  strata_comm *comm;
  const char *backend;   /* the backend's name */
  const char *host;      /* this rank's host, for the checkpoint and the log */
  /* Results. */
  int stopped;           /* a stop request ended the run, its state saved */
  int agreed;            /* the error returned is every rank's; rank 0 has the message */
  int whole;             /* with an error: the run finished and res is its result; only
                          * a file written at its end (the final checkpoint, the log's
                          * last word) failed */
  /* Private. */
  struct strata_runlog *logf;
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
} strata_session;

/* Prepares r: checks the files, resumes from the checkpoint or starts
 * afresh, opens the log.  Errors are agreed. */
int strata_session_open(strata_session *s, strata_run *r);
/* Runs to the end or to a stop request; progress receives the replayed
 * iterations of a resumed run first, then the new ones, and may stop the
 * run.  res is filled, also when stopped, and with an error where s->whole
 * says so. */
int strata_session_integrate(strata_session *s, strata_run *r, strata_progress_cb progress,
                             void *ctx, strata_result *res);
void strata_session_close(strata_session *s);

/* Continues r from rank 0's checkpoint ck (the other ranks' is not read):
 * its state broadcast as it is, so that every rank restores the same bits
 * through strata_run_restore, which calls cb (may be NULL) with every
 * replayed iteration.  Collective: every rank calls it once rank 0's
 * checkpoint is known to be readable. */
int strata_session_share_state(strata_comm *comm, strata_run *r, const strata_checkpoint *ck,
                               strata_iteration_cb cb, void *ctx);
/* The run's identity into buf: the keys that decide what it computes
 * (strata_jobdef_text) and what the caller says its data is (identity, may
 * be NULL); name is for messages. */
int strata_session_define(const strata_run *r, const char *identity, const char *name,
                          char *buf, size_t len);

/* Whether a stop was requested (strata_request_stop) and not yet acted on. */
int strata_stop_pending(void);
#endif
