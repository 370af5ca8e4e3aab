/* Checkpoints: the whole state of a run in one HDF5 file (layout in
 * doc/file-formats.md), written atomically by rank 0 and verified on
 * reading, so that a run can continue on any number of ranks and draw
 * exactly the points the uninterrupted run would have drawn. */
#ifndef STRATA_CHECKPOINT_H
#define STRATA_CHECKPOINT_H
#include <stddef.h>

#include "state.h"

/* What the file records besides the state, for the resuming run's checks
 * and for the user. */
typedef struct {
  const char *definition;  /* strata_jobdef_text of the job */
  const char *job;         /* the job file, or "(default job)" */
  const char *backend;
  const char *host;
  int ranks, threads;
} strata_ckpt_info;

/* Writes the state st (strata_run_state_get) over path atomically
 * (io/atomic.h).  *seconds and *bytes (either may be NULL) receive the time
 * taken and the file's size. */
int strata_checkpoint_write(const char *path, const strata_run_state *st,
                            const strata_ckpt_info *info, double *seconds, size_t *bytes);

/* The same in two parts: writes the temporary file (the state is copied
 * out of st, whose run may change afterwards), then makes it the
 * checkpoint in the background.  *commit must go to strata_atomic_wait before the next
 * write to path; that wait reports whether the checkpoint was written.
 * *seconds covers the first part only. */
struct strata_commit;
int strata_checkpoint_start(const char *path, const strata_run_state *st,
                            const strata_ckpt_info *info, struct strata_commit **commit,
                            double *seconds, size_t *bytes);

/* The same file built in memory: *buf (malloc'ed) holds its *len bytes. */
int strata_checkpoint_image(const strata_run_state *st, const strata_ckpt_info *info, void **buf,
                            size_t *len);

/* A checkpoint as read back: every array checked against its checksum. */
typedef struct {
  char *definition, *hash, *strata_version, *backend, *host, *created;
  int format_version;
  int ranks;
  strata_run_state state; /* points into the arrays below */
  double *edges;
  int64_t *nh;
  strata_itn_record *hist;
  double *comp_hist;      /* vector integrands (state.ncomp > 1), else NULL */
  double *peaks;          /* the peak search's state (state.npeaks), else NULL */
  int64_t *fine_nh;       /* the finer stratification's allocation (state.nfine), else NULL */
} strata_checkpoint;

/* Reads and verifies path.  A missing, truncated or damaged file, or one
 * that is not a strata checkpoint, is an error naming path and the reason. */
int strata_checkpoint_read(const char *path, strata_checkpoint **out);
void strata_checkpoint_free(strata_checkpoint *c);
/* Whether c, read from path, can resume a job whose map this strata trains
 * at ninc increments per axis until its first split (strata_run_map_base;
 * neval and dim for the message): a file of an
 * earlier format version whose map has another count is refused, naming
 * its version; others go on to strata_run_restore's checks. */
int strata_checkpoint_check_version(const strata_checkpoint *c, const char *path, int ninc,
                                    int64_t neval, int dim);
/* A checkpoint from a file's bytes in memory; name is for messages. */
int strata_checkpoint_read_image(const void *buf, size_t len, const char *name,
                                 strata_checkpoint **out);

/* Whether c, read from path, holds as many components as the job's ncomp
 * (1 for a scalar integrand); the error names path and both counts. */
int strata_checkpoint_check_ncomp(const strata_checkpoint *c, const char *path, int ncomp);
#endif
