/* Replacing a file so that a crash at any moment leaves either the old
 * content or the whole new one, never a mixture or a stub. */
#ifndef STRATA_ATOMIC_H
#define STRATA_ATOMIC_H
#include <stddef.h>

/* Writes len bytes to "<path>.tmp" in the same directory, fsyncs it, renames
 * it over path and fsyncs the directory.  On any failure path is untouched,
 * the temporary file is removed, and the error (STRATA_EIO) names path,
 * `what` ("checkpoint") and the system's reason. */
int strata_atomic_write(const char *path, const void *data, size_t len, const char *what);

/* Checks, before any work is spent, that the file next to path that
 * strata_atomic_write needs can be created; path itself is not touched. */
int strata_atomic_probe(const char *path, const char *what);
#endif
