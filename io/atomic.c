#include "atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "job.h"

int strata_atomic_tmpname(const char *path, char *buf, size_t len)
{
  if ((size_t)snprintf(buf, len, "%s.tmp", path) >= len)
    return strata_error(STRATA_EINVAL, "%s: path too long", path);
  return STRATA_OK;
}

/* The rename is durable only once the directory entry is on disk too.
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

int strata_atomic_commit(const char *path, const char *what)
{
  char tmp[STRATA_PATH_MAX + 8];
  int rc = strata_atomic_tmpname(path, tmp, sizeof tmp);
  if (rc != STRATA_OK) return rc;
  const char *step = "opening";
  int fd = open(tmp, O_RDONLY | O_CLOEXEC);
  if (fd < 0) goto fail;
  step = "syncing";
  if (fsync(fd) != 0) goto fail;
  close(fd);
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
  return strata_error(STRATA_EIO, "%s: cannot write the %s (%s %s): %s; the previous %s, if "
                      "any, is unchanged", path, what, step, tmp, strerror(e), what);
}

struct strata_commit {
  char path[STRATA_PATH_MAX];
  char what[32];
  pthread_t thread;
  int threaded;
  int rc;
  double seconds;
  char msg[1024]; /* the error's message: strata_error's is per thread */
};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *commit_main(void *arg)
{
  strata_commit *c = arg;
  double t0 = now_s();
  c->rc = strata_atomic_commit(c->path, c->what);
  c->seconds = now_s() - t0;
  if (c->rc != STRATA_OK) snprintf(c->msg, sizeof c->msg, "%s", strata_last_error());
  return NULL;
}

int strata_atomic_commit_start(const char *path, const char *what, strata_commit **out)
{
  *out = NULL;
  strata_commit *c = calloc(1, sizeof *c);
  if (!c) return strata_atomic_commit(path, what);
  snprintf(c->path, sizeof c->path, "%s", path);
  snprintf(c->what, sizeof c->what, "%s", what);
  c->threaded = pthread_create(&c->thread, NULL, commit_main, c) == 0;
  if (!c->threaded) commit_main(c);
  *out = c;
  return STRATA_OK;
}

int strata_atomic_wait(strata_commit *c, double *seconds)
{
  if (!c) return STRATA_OK;
  if (c->threaded) pthread_join(c->thread, NULL);
  int rc = c->rc;
  if (rc != STRATA_OK) strata_error(rc, "%s", c->msg);
  if (seconds) *seconds = c->seconds;
  free(c);
  return rc;
}

void strata_atomic_abandon(const char *path)
{
  char tmp[STRATA_PATH_MAX + 8];
  if (strata_atomic_tmpname(path, tmp, sizeof tmp) == STRATA_OK) unlink(tmp);
}

int strata_atomic_probe(const char *path, const char *what)
{
  char tmp[STRATA_PATH_MAX + 8];
  int rc = strata_atomic_tmpname(path, tmp, sizeof tmp);
  if (rc != STRATA_OK) return rc;
  /* A temporary file left by a run killed while writing is ours to reuse. */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return strata_error(STRATA_EIO, "%s: cannot write the %s here: cannot create %s: %s", path,
                        what, tmp, strerror(errno));
  close(fd);
  unlink(tmp);
  return STRATA_OK;
}
