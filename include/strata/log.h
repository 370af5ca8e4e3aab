/* Convergence logs read back: the HDF5 file a run keeps (strata_settings'
 * log, `strata run`'s run.log; doc/file-formats.md), printed as the run
 * printed it or as CSV. */
#ifndef STRATA_LOG_H
#define STRATA_LOG_H
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints the log at path to out: its iteration table and, for a finished
 * run, its summary, byte for byte as the run printed them
 * (strata/report.h), the peak search's lines included; with csv, a
 * header line and one line per iteration with every column of the log at
 * full precision (nan where the table prints -), a vector integrand's
 * components and their covariances and the peak search's k-hat, channels
 * and weights included.  Any user's log is read, but never through a link or from a
 * FIFO, and every attribute and dataset only once its class, shape and
 * size are checked (doc/file-formats.md); a log that a run is writing
 * reads as far as the run has flushed it.  Nothing is written to out unless the whole log was read.
 * STRATA_OK; STRATA_EIO with a message naming the file (not a strata log,
 * refused, damaged, unreadable); STRATA_EINVAL for a NULL path or out. */
int strata_log_print(const char *path, int csv, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
