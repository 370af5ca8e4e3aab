/* The convergence log: one HDF5 file per run, a row appended and flushed to
 * disk after every iteration so that it can be read while the job runs and
 * survives a crash up to the last iteration (layout: doc/file-formats.md).
 * Written by rank 0 only. */
#ifndef STRATA_RUNLOG_H
#define STRATA_RUNLOG_H
#include "strata/report.h"
#include "strata/strata.h"

typedef struct strata_runlog strata_runlog;

typedef struct {
  const char *job;         /* the job file, or "(default job)" */
  const char *definition;  /* strata_jobdef_text */
  const char *integrand, *mode, *backend, *host, *checkpoint;
  int dim, ranks, gpus, threads;
  double exact;            /* NaN where unknown */
  int naxes, ninc;         /* the map's shape, for snapshots */
  int ncomp;               /* a vector integrand's components, or 0 or 1 */
  int peaks;               /* the run searches for peaks: /iterations_peaks */
  const char *override;    /* how the caller takes new stop keys, for messages ("--force") */
} strata_runlog_info;

/* A new log at path; a file already there is an error, never overwritten. */
int strata_runlog_create(const char *path, const strata_runlog_info *info,
                         strata_runlog **out);

/* Continues the log of a resumed run (or, with itn 0, of a run restarted
 * from scratch).  The log must come from the same job (as for checkpoints,
 * force admits changed safe keys).  Rows past iteration itn, which the
 * resumed run recomputes, are dropped; rows up to itn that the log lacks are
 * filled in from rows[0..itn) (the replayed history).  A log recording a
 * checkpoint newer than iteration itn is refused: the checkpoint it names
 * was replaced or lost, and the user should know.  A log that cannot be
 * read at all, left damaged by a crash, is renamed to PATH.broken (or
 * .broken.N) and a new one written: *notice then says so.  A file that is
 * not a strata log is an error and left alone. */
int strata_runlog_resume(const char *path, const strata_runlog_info *info, int force,
                         const strata_iteration *rows, int itn, strata_runlog **out,
                         char *notice, int notice_len);

/* Appends an iteration: its report, the run's elapsed time, each rank's
 * time in the backend (nranks values) and, in a log with peaks, the
 * channels' weights of now (the run's result after the iteration; NULL:
 * not known). */
int strata_runlog_append(strata_runlog *l, const strata_iteration *it, double elapsed_s,
                         const double *rank_s, int nranks, const strata_result *now);
/* Appends a snapshot of the map (naxes * (ninc + 1) unit edges) after
 * iteration itn. */
int strata_runlog_map(strata_runlog *l, int itn, const double *edges);
/* Records that a checkpoint of iteration itn was written. */
int strata_runlog_checkpointed(strata_runlog *l, int itn);
/* Marks the run "finished" with its result, or "stopped" (res NULL) when a
 * signal ended it with a checkpoint; a vector integrand's components are
 * all's (NULL: those res holds, the first STRATA_MAX_COMP). */
int strata_runlog_finish(strata_runlog *l, const strata_result *res,
                         const strata_report_comps *all);
int strata_runlog_close(strata_runlog *l);
int strata_runlog_rows(const strata_runlog *l);
#endif
