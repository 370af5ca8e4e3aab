/* Process-wide set-up of io/, without exposing HDF5 to its callers. */
#ifndef STRATA_IO_H
#define STRATA_IO_H

/* The longest path io/ and the program handle. */
#define STRATA_PATH_MAX 4096

/* strata_init (public) is io/'s: HDF5 1.10 crashes when it shuts down with
 * a file whose flush failed (a full disk), whether from its atexit handler
 * or from the MPI_Finalize hook it installs when it starts after MPI:
 * strata closes its files itself, so neither shutdown is wanted. */
#endif
