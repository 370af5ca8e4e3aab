#include "atomic.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

static int fail_create(const char *path, const char *what, const char *tmp, int e)
{
  return strata_error(STRATA_EIO, "%s: cannot write the %s here: cannot create %s: %s", path,
                      what, tmp, strerror(e));
}

int strata_atomic_create(const char *path, const char *what, strata_tmpfile *t)
{
  t->fd = -1;
  t->open_as[0] = '\0';
  if ((size_t)snprintf(t->path, sizeof t->path, "%s.tmp.XXXXXX", path) >= sizeof t->path)
    return strata_error(STRATA_EINVAL, "%s: path too long", path);
  /* mkostemp opens with O_CREAT|O_EXCL: an existing name, a symbolic link
   * included, is never opened. */
  int fd = mkostemp(t->path, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    snprintf(t->path, sizeof t->path, "%s.tmp.XXXXXX", path);
    return fail_create(path, what, t->path, e);
  }
  /* mkostemp makes 0600; the file becomes path, which gets the mode a new
   * file gets, as before. */
  mode_t mask = umask(077);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0) {
    int e = errno;
    close(fd);
    unlink(t->path);
    return fail_create(path, what, t->path, e);
  }
  t->fd = fd;
  /* Writers that open by name then reach this very file, whatever happens
   * to the name in the directory meanwhile. */
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  struct stat a, b;
  if (stat(self, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    snprintf(t->open_as, sizeof t->open_as, "%s", self);
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

/* Whether t's name still names t's file (and not a file put in its place). */
static int still_ours(const strata_tmpfile *t)
{
  struct stat a, b;
  if (t->fd < 0 || fstat(t->fd, &a) != 0) return 0;
  if (lstat(t->path, &b) != 0) return 0;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int strata_atomic_commit(strata_tmpfile *t, const char *path, const char *what)
{
  const char *step = "syncing";
  if (fsync(t->fd) != 0) goto fail;
  step = "checking";
  if (!still_ours(t)) {
    errno = EEXIST;
    goto fail;
  }
  step = "renaming";
  if (rename(t->path, path) != 0) goto fail;
  close(t->fd);
  t->fd = -1;
  if (sync_dir(path) != 0)
    return strata_error(STRATA_EIO, "%s: %s written, but syncing its directory failed: %s",
                        path, what, strerror(errno));
  return STRATA_OK;
fail:;
  int e = errno;
  strata_atomic_abandon(t);
  return strata_error(STRATA_EIO, "%s: cannot write the %s (%s %s): %s; the previous %s, if "
                      "any, is unchanged", path, what, step, t->path, strerror(e), what);
}

struct strata_commit {
  strata_tmpfile t;
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
  c->rc = strata_atomic_commit(&c->t, c->path, c->what);
  c->seconds = now_s() - t0;
  if (c->rc != STRATA_OK) snprintf(c->msg, sizeof c->msg, "%s", strata_last_error());
  return NULL;
}

int strata_atomic_commit_start(strata_tmpfile *t, const char *path, const char *what,
                               strata_commit **out)
{
  *out = NULL;
  strata_commit *c = calloc(1, sizeof *c);
  if (!c) return strata_atomic_commit(t, path, what);
  c->t = *t;
  t->fd = -1;
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

void strata_atomic_abandon(strata_tmpfile *t)
{
  if (t->fd < 0) return;
  /* Only the file this process made: the name may have been replaced. */
  if (still_ours(t)) unlink(t->path);
  close(t->fd);
  t->fd = -1;
}

int strata_atomic_probe(const char *path, const char *what)
{
  strata_tmpfile t;
  int rc = strata_atomic_create(path, what, &t);
  if (rc == STRATA_OK) strata_atomic_abandon(&t);
  return rc;
}

void strata_atomic_sweep(const char *path)
{
  char dir[STRATA_PATH_MAX], base[STRATA_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  snprintf(base, sizeof base, "%s", path);
  char *d = dirname(dir), *b = basename(base);
  char prefix[STRATA_PATH_MAX + 8];
  snprintf(prefix, sizeof prefix, "%s.tmp.", b);
  size_t plen = strlen(prefix);
  int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *dp = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!dp) {
    if (dfd >= 0) close(dfd);
    return;
  }
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    struct stat sb;
    if (strncmp(de->d_name, prefix, plen) || strlen(de->d_name) != plen + 6) continue;
    if (fstatat(dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_uid == geteuid())
      unlinkat(dfd, de->d_name, 0);
  }
  closedir(dp);
}

/* Another user's lock: in a shared directory their run may hold it, and
 * the file is not ours to reuse or remove. */
static int not_yours(const char *path, const char *lock, uid_t uid)
{
  struct passwd pw, *p = NULL;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &p) != 0) p = NULL;
  return strata_error(STRATA_EIO, "%s: %s belongs to user %s (uid %ld): another user's run "
                      "holds or left it; strata does not touch it", path, lock,
                      p ? p->pw_name : "unknown", (long)uid);
}

/* Who holds the lock f, as its holder wrote it ("pid N on HOST"): the
 * holder writes it just after taking the lock, so a reader that comes
 * between the two finds no line, or an older holder's; it reads again
 * for up to 0.2 s, until the line is the holder's (the system's word, the
 * local holder's pid, decides).  In the end the system's word alone. */
static void holder(int f, char *who, size_t len)
{
  for (int k = 0; k < 100; k++) {
    if (k) nanosleep(&(struct timespec){0, 2000000L}, NULL);
    ssize_t n = pread(f, who, len - 1, 0);
    who[n > 0 ? n : 0] = '\0';
    const int whole = strchr(who, '\n') != NULL;
    who[strcspn(who, "\n")] = '\0';
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(f, F_GETLK, &q) != 0 || q.l_type == F_UNLCK || q.l_pid <= 0) {
      /* Held elsewhere (another node's lock shows no pid here), or let go. */
      if (whole) return;
      continue;
    }
    char mine[32];
    snprintf(mine, sizeof mine, "pid %ld on ", (long)q.l_pid);
    if (whole && !strncmp(who, mine, strlen(mine))) return;
    if (k == 99) snprintf(who, len, "pid %ld", (long)q.l_pid);
  }
}

int strata_lock_take(const char *path, const char *what, int *fd)
{
  char lock[STRATA_PATH_MAX + 8];
  *fd = -1;
  if ((size_t)snprintf(lock, sizeof lock, "%s.lock", path) >= sizeof lock)
    return strata_error(STRATA_EINVAL, "%s: path too long", path);
  int f = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat sb;
  if (f < 0) {
    int e = errno;
    if (e == ELOOP)
      return strata_error(STRATA_EIO, "%s: %s is a symbolic link: strata does not follow it "
                          "(remove it)", path, lock);
    /* Refused because it is someone else's, not for want of room. */
    if ((e == EACCES || e == EPERM) && lstat(lock, &sb) == 0 && sb.st_uid != geteuid())
      return not_yours(path, lock, sb.st_uid);
    return strata_error(STRATA_EIO, "%s: cannot write the %s here: cannot create %s: %s",
                        path, what, lock, strerror(e));
  }
  if (fstat(f, &sb) != 0) {
    int e = errno;
    close(f);
    return strata_error(STRATA_EIO, "%s: %s: %s", path, lock, strerror(e));
  }
  if (sb.st_uid != geteuid()) {
    close(f);
    return not_yours(path, lock, sb.st_uid);
  }
  if (!S_ISREG(sb.st_mode)) {
    close(f);
    return strata_error(STRATA_EIO, "%s: %s is not a regular file: strata does not use it "
                        "(remove it)", path, lock);
  }
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fcntl(f, F_SETLK, &fl) == 0) {
    /* For the refusal of a second run: who holds it, also from another node. */
    char who[320], host[256] = "";
    gethostname(host, sizeof host - 1);
    int n = snprintf(who, sizeof who, "pid %ld on %s\n", (long)getpid(), host);
    /* Written whole, then cut to its length: a reader never meets an empty
     * file where an older line was, and the line ends at its newline.
     * Only for messages: the lock itself holds either way. */
    if (pwrite(f, who, (size_t)n, 0) != n || ftruncate(f, n) != 0) {
      /* (a message the less; nothing else depends on it) */
    }
    *fd = f;
    return STRATA_OK;
  }
  int e = errno;
  if (e == EACCES || e == EAGAIN) {
    char who[320] = "";
    holder(f, who, sizeof who);
    close(f);
    return strata_error(STRATA_EIO, "%s: in use by another strata run (%s, lock %s); strata "
                        "does not touch the %s of a running job", path,
                        who[0] ? who : "process unknown", lock, what);
  }
  close(f);
  if (e == ENOLCK || e == ENOSYS || e == EOPNOTSUPP || e == EINVAL) {
    fprintf(stderr, "strata: warning: %s: cannot lock %s (%s): nothing stops a second run "
            "from using the same %s\n", path, lock, strerror(e), what);
    return STRATA_OK;
  }
  return strata_error(STRATA_EIO, "%s: cannot lock %s: %s", path, lock, strerror(e));
}
