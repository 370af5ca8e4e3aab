#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "job.h"

static int tmp_name(const char *path, char *buf, size_t len, const char *what)
{
  if ((size_t)snprintf(buf, len, "%s.tmp", path) >= len)
    return strata_error(STRATA_EINVAL, "%s: %s path too long", path, what);
  return STRATA_OK;
}

static int write_all(int fd, const char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) { /* no progress and no error: treat as a full device */
      errno = ENOSPC;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The rename is only durable once the directory entry is on disk too.
 * Some file systems cannot fsync a directory (EINVAL): nothing more to do
 * there. */
static int sync_dir(const char *path)
{
  char copy[STRATA_PATH_MAX];
  snprintf(copy, sizeof copy, "%s", path);
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  if (rc != 0 && (errno == EINVAL || errno == EROFS)) rc = 0;
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}

int strata_atomic_write(const char *path, const void *data, size_t len, const char *what)
{
  char tmp[STRATA_PATH_MAX + 8];
  int rc = tmp_name(path, tmp, sizeof tmp, what);
  if (rc != STRATA_OK) return rc;
  /* A temporary file left by a run killed while writing is ours to reuse. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return strata_error(STRATA_EIO, "%s: cannot write the %s: cannot create %s: %s", path, what,
                        tmp, strerror(errno));
  const char *step = "writing";
  if (write_all(fd, data, len) != 0) goto fail;
  step = "syncing";
  if (fsync(fd) != 0) goto fail;
  step = "closing";
  if (close(fd) != 0) {
    fd = -1;
    goto fail;
  }
  fd = -1;
  step = "renaming";
  if (rename(tmp, path) != 0) goto fail;
  if (sync_dir(path) != 0)
    return strata_error(STRATA_EIO, "%s: %s written, but syncing its directory failed: %s",
                        path, what, strerror(errno));
  return STRATA_OK;
fail:;
  int e = errno;
  if (fd >= 0) close(fd);
  unlink(tmp);
  return strata_error(STRATA_EIO, "%s: cannot write the %s (%s %s): %s; the previous file "
                      "is unchanged", path, what, step, tmp, strerror(e));
}

int strata_atomic_probe(const char *path, const char *what)
{
  char tmp[STRATA_PATH_MAX + 8];
  int rc = tmp_name(path, tmp, sizeof tmp, what);
  if (rc != STRATA_OK) return rc;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return strata_error(STRATA_EIO, "%s: cannot write the %s here: cannot create %s: %s", path,
                        what, tmp, strerror(errno));
  close(fd);
  unlink(tmp);
  return STRATA_OK;
}
