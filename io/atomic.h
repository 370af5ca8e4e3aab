/* Replacing a file so that a crash at any moment leaves either the old
 * content or the whole new one, never a mixture or a stub: the new content
 * goes to a temporary file in the same directory, which is synced to disk,
 * renamed over the old file, and the directory synced.
 *
 * The temporary file has a name of its own (<path>.tmp.XXXXXX), created
 * with O_EXCL by this process: a name planted beforehand (a symbolic link
 * to another file, in a directory others can write) is never opened, and
 * two runs never share a temporary file. */
#ifndef STRATA_ATOMIC_H
#define STRATA_ATOMIC_H
#include <stddef.h>

#include "io.h"

typedef struct {
  char path[STRATA_PATH_MAX + 16]; /* the temporary file's name */
  char open_as[64];  /* a name that reaches the file itself (/proc/self/fd/N), or "" */
  int fd;            /* open on the temporary file, -1 when none */
} strata_tmpfile;

/* Creates a new temporary file beside path (mode as a new file gets under
 * the umask).  Writers that open files by name (HDF5) open t->open_as when
 * it is set, else t->path.  On failure the error names path and `what`. */
int strata_atomic_create(const char *path, const char *what, strata_tmpfile *t);

/* Makes the completely written temporary file the new path and closes it.
 * On failure path is untouched, the temporary file removed, and the error
 * (STRATA_EIO) names path, `what` ("checkpoint") and the system's reason. */
int strata_atomic_commit(strata_tmpfile *t, const char *path, const char *what);

/* The same, in a thread of its own: fsync waits for the disk, and a busy
 * disk can make it wait for a second or more, which the caller need not
 * spend idle.  The commit takes over t.  If no thread can be started the
 * commit runs here, and waiting returns its result. */
typedef struct strata_commit strata_commit;
int strata_atomic_commit_start(strata_tmpfile *t, const char *path, const char *what,
                               strata_commit **out);
/* Waits for the commit; returns its result (with its message) and frees it.
 * *seconds (may be NULL) receives the time the commit took. */
int strata_atomic_wait(strata_commit *c, double *seconds);

/* Removes the temporary file of a write that failed, and closes it. */
void strata_atomic_abandon(strata_tmpfile *t);

/* Checks, before any work is spent, that a temporary file can be created
 * next to path; path itself is not touched. */
int strata_atomic_probe(const char *path, const char *what);

/* Removes temporary files of path left by runs that were killed while
 * writing (ours only: regular files owned by this user).  Only for a
 * caller that holds path's lock (strata_lock_take), so that no live run's
 * temporary file is among them. */
void strata_atomic_sweep(const char *path);

/* An exclusive lock on path for as long as this process runs: a file
 * <path>.lock beside it (created if needed, never deleted, never followed
 * if it is a symbolic link, and refused unless this user owns it) locked
 * with fcntl.  STRATA_OK with *fd open, or an error naming path and, where
 * the system says, the process that holds it.  A file system without locks
 * gives a warning on stderr and STRATA_OK with *fd = -1. */
int strata_lock_take(const char *path, const char *what, int *fd);
#endif
