/* The convergence log's record types, shared by the writer (runlog.c) and
 * the reader behind `strata log` (runlog_print.c).  doc/file-formats.md describes
 * the same layout for users. */
#ifndef STRATA_RUNLOG_FORMAT_H
#define STRATA_RUNLOG_FORMAT_H
#include <hdf5.h>
#include <stdint.h>

#include "strata/strata.h"

#define STRATA_LOG_FORMAT "strata log"
/* 3: the layout of 2, with NaN in the average's columns of the
 * iterations not kept (where the table prints "-"), the columns of the
 * per-component tables named (their "columns" attribute), and the
 * sessions' strings as attributes of /sessions (h5py reads them as str).
 * 2: HDF5's newest file format (checksummed metadata, SWMR) and a
 * Fletcher-32 checksum on every chunk.  1: the original format.  Older
 * versions are read but not continued. */
#define STRATA_LOG_FORMAT_VERSION 3

/* A row of /iterations_comp: a component's strata_iteration.comp row, up
 * to STRATA_MAX_COMP components; beyond, its six statistics alone (the
 * covariances of many components, 16 ncomp^2 bytes an iteration, are left
 * to the result's /result_cov and the checkpoint). */
#define STRATA_LOG_COMP_WIDTH(ncomp) \
  ((ncomp) > STRATA_MAX_COMP ? STRATA_COMP_COV : STRATA_COMP_ROW(ncomp))

/* A row of /iterations_peaks, the peak search's view of an iteration
 * (doc/peaks.md): its weights' k-hat, the channels it drew from, and their
 * weights: the map's, the uniform part's, and each mode's channel (NaN
 * where a mode has none). */
enum {
  STRATA_LOG_PEAKS_KHAT = 0,
  STRATA_LOG_PEAKS_NCHANNELS = 1,
  STRATA_LOG_PEAKS_ALPHA_MAP = 2,
  STRATA_LOG_PEAKS_ALPHA_UNIFORM = 3,
  STRATA_LOG_PEAKS_ALPHA_MODE = 4, /* + j, j < STRATA_MAX_PEAKS */
  STRATA_LOG_PEAKS_WIDTH = 4 + STRATA_MAX_PEAKS
};

/* One row of /iterations: everything the printed table shows, and more. */
typedef struct {
  int32_t itn;
  double integral, sigma;
  double average, average_sigma, chi2_dof, Q;
  int64_t neval;
  double wall_s;      /* this iteration */
  double elapsed_s;   /* the run so far, earlier sessions included */
  int8_t kept, restarted, adapting;
} strata_log_row;

/* One row of /sessions: a start or a resume.  Its strings (backend, host,
 * start_time) are attributes of /sessions, an array each, a string per
 * row. */
typedef struct {
  int32_t first_itn;  /* iterations already done when this session began */
  int32_t ranks, gpus, threads;
} strata_log_session;

/* file: the packed little-endian type stored in the file; otherwise the
 * native layout of the struct.  Close with H5Tclose. */
hid_t strata_log_row_type(int file);
hid_t strata_log_session_type(int file);
#endif
