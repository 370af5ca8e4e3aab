/* Replacing a file so that a crash at any moment leaves either the old
 * content or the whole new one, never a mixture or a stub: the new content
 * goes to a temporary file in the same directory, which is synced to disk,
 * renamed over the old file, and the directory synced. */
#ifndef STRATA_ATOMIC_H
#define STRATA_ATOMIC_H
#include <stddef.h>

/* The temporary file for path: "<path>.tmp". */
int strata_atomic_tmpname(const char *path, char *buf, size_t len);

/* Makes the completely written temporary file the new path.  On failure
 * path is untouched, the temporary file removed, and the error (STRATA_EIO)
 * names path, `what` ("checkpoint") and the system's reason. */
int strata_atomic_commit(const char *path, const char *what);

/* The same, in a thread of its own: fsync waits for the disk, and a busy
 * disk can make it wait for a second or more, which the caller need not
 * spend idle.  Until strata_atomic_wait returns, the temporary file must not
 * be written again.  If no thread can be started the commit runs here, and
 * waiting returns its result. */
typedef struct strata_commit strata_commit;
int strata_atomic_commit_start(const char *path, const char *what, strata_commit **out);
/* Waits for the commit; returns its result (with its message) and frees it.
 * *seconds (may be NULL) receives the time the commit took. */
int strata_atomic_wait(strata_commit *c, double *seconds);

/* Removes the temporary file of a write that failed. */
void strata_atomic_abandon(const char *path);

/* Checks, before any work is spent, that the temporary file can be created
 * next to path; path itself is not touched. */
int strata_atomic_probe(const char *path, const char *what);
#endif
