#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

static int unsafe(const char *dir, const char *what, const struct stat *sb)
{
  return strata_error(STRATA_EIO, "%s: %s (owner uid %d, mode %04o): strata runs the code in "
                      "its cache of compiled integrands, which must be yours and writable by "
                      "no one else, in directories only you or root can change (chmod go-w, "
                      "or set STRATA_CACHE_DIR to a private directory)", dir, what,
                      (int)sb->st_uid, (unsigned)(sb->st_mode & 07777));
}

/* Whoever can replace an entry on the way to the cache can replace the
 * cache: every directory above it must be root's or ours and, where others
 * may write it, sticky (as /tmp), so that what is ours stays ours. */
static int check_one(const char *d, const struct stat *sb, int last)
{
  const uid_t me = geteuid();
  if (!S_ISDIR(sb->st_mode)) return strata_error(STRATA_EIO, "%s: not a directory", d);
  if (last && sb->st_uid != me) return unsafe(d, "the cache directory is not yours", sb);
  if (last && (sb->st_mode & 022)) return unsafe(d, "the cache directory is writable by others", sb);
  if (sb->st_uid != me && sb->st_uid != 0)
    return unsafe(d, "a directory above the cache belongs to another user", sb);
  if ((sb->st_mode & 022) && !(sb->st_mode & S_ISVTX))
    return unsafe(d, "a directory above the cache is writable by others and not sticky", sb);
  return STRATA_OK;
}

/* The next component of *rest (advanced past it) into comp; 0 when none. */
static int next_component(const char **rest, char *comp, size_t len)
{
  const char *p = *rest;
  while (*p == '/') p++;
  size_t n = strcspn(p, "/");
  if (n == 0 || n >= len) return n == 0 ? 0 : -1;
  memcpy(comp, p, n);
  comp[n] = '\0';
  *rest = p + n;
  return 1;
}

static int only_slashes(const char *p)
{
  while (*p == '/') p++;
  return *p == '\0';
}

/* Resolves want as the kernel would, one component at a time, and checks
 * each before taking the next, so that the checks are about what the path
 * really passes through: a directory as check_one says; a symbolic link
 * only when it is ours or root's (its directory, checked already, is then
 * the only way to change it) and never as the cache directory itself, which
 * a link planted in a sticky directory would otherwise send anywhere of
 * ours (~/.ssh).  What is missing is created (0700) inside a directory
 * already checked; another rank may create it at the same moment. */
static int resolve(const char *want, char *out, size_t outlen)
{
  char todo[2 * PATH_MAX], next[2 * PATH_MAX], cur[PATH_MAX] = "", comp[NAME_MAX + 1];
  int n;
  if (want[0] == '/') n = snprintf(todo, sizeof todo, "%s", want);
  else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return strata_error(STRATA_EIO, "%s: %s", want, strerror(errno));
    n = snprintf(todo, sizeof todo, "%s/%s", cwd, want);
  }
  if (n < 0 || (size_t)n >= sizeof todo)
    return strata_error(STRATA_EIO, "cache directory name too long: %s", want);
  struct stat sb;
  if (lstat("/", &sb) != 0) return strata_error(STRATA_EIO, "/: %s", strerror(errno));
  int rc = check_one("/", &sb, 0);
  const char *rest = todo;
  int links = 0, got;
  while (rc == STRATA_OK && (got = next_component(&rest, comp, sizeof comp)) != 0) {
    if (got < 0) return strata_error(STRATA_EIO, "%s: a name in it is too long", want);
    if (!strcmp(comp, ".")) continue;
    if (!strcmp(comp, "..")) {
      char *slash = strrchr(cur, '/');
      if (slash) *slash = '\0';
      continue;
    }
    char cand[PATH_MAX];
    if ((size_t)snprintf(cand, sizeof cand, "%s/%s", cur, comp) >= sizeof cand)
      return strata_error(STRATA_EIO, "cache directory name too long: %s", want);
    if (lstat(cand, &sb) != 0 && (errno != ENOENT || (mkdir(cand, 0700) != 0 && errno != EEXIST) ||
                                  lstat(cand, &sb) != 0))
      return strata_error(STRATA_EIO, "cannot create the cache directory %s (set "
                          "STRATA_CACHE_DIR): %s", cand, strerror(errno));
    if (S_ISLNK(sb.st_mode)) {
      char target[PATH_MAX];
      ssize_t t = readlink(cand, target, sizeof target - 1);
      if (t < 0) return strata_error(STRATA_EIO, "%s: %s", cand, strerror(errno));
      target[t] = '\0';
      if (only_slashes(rest))
        return strata_error(STRATA_EIO, "%s: the cache directory is a symbolic link (to %s): "
                            "strata does not follow it, since whoever placed it chooses where "
                            "strata writes and what it runs (set STRATA_CACHE_DIR to a "
                            "directory itself)", cand, target);
      if (sb.st_uid != geteuid() && sb.st_uid != 0)
        return strata_error(STRATA_EIO, "%s: a symbolic link on the path to the cache belongs "
                            "to another user (uid %d, to %s): strata does not follow it (set "
                            "STRATA_CACHE_DIR to a path without it)", cand, (int)sb.st_uid, target);
      if (++links > 40) return strata_error(STRATA_EIO, "%s: %s", want, strerror(ELOOP));
      if ((size_t)snprintf(next, sizeof next, "%s/%s", target, rest) >= sizeof next)
        return strata_error(STRATA_EIO, "cache directory name too long: %s", want);
      memcpy(todo, next, sizeof todo);
      rest = todo;
      if (target[0] == '/') cur[0] = '\0';
      continue;
    }
    rc = check_one(cand, &sb, only_slashes(rest));
    memcpy(cur, cand, sizeof cur);
  }
  if (rc != STRATA_OK) return rc;
  /* Again, as the cache itself, where the path ended in "." or "..". */
  if (!cur[0]) snprintf(cur, sizeof cur, "/");
  if (lstat(cur, &sb) != 0) return strata_error(STRATA_EIO, "%s: %s", cur, strerror(errno));
  rc = check_one(cur, &sb, 1);
  if (rc != STRATA_OK) return rc;
  if (strlen(cur) >= outlen) return strata_error(STRATA_EIO, "cache directory name too long: %s", cur);
  snprintf(out, outlen, "%s", cur);
  return STRATA_OK;
}

int strata_cache_dir(char *buf, size_t len)
{
  const char *d = getenv("STRATA_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  char want[4096];
  int n;
  if (d && *d) n = snprintf(want, sizeof want, "%s", d);
  else if (x && *x) n = snprintf(want, sizeof want, "%s/strata", x);
  else if (home && *home) n = snprintf(want, sizeof want, "%s/.cache/strata", home);
  else
    return strata_error(STRATA_EIO, "no cache directory for compiled integrands: set "
                        "STRATA_CACHE_DIR (HOME is not set)");
  if (n < 0 || (size_t)n >= sizeof want)
    return strata_error(STRATA_EIO, "cache directory name too long: %s", d ? d : x ? x : home);
  return resolve(want, buf, len);
}

int strata_cache_check_dir(const char *path)
{
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return strata_error(STRATA_EIO, "%s: cannot open the cache directory: %s", path,
                        strerror(errno));
  struct stat sb;
  int rc = STRATA_OK;
  if (fstat(fd, &sb) != 0) rc = strata_error(STRATA_EIO, "%s: %s", path, strerror(errno));
  else if (sb.st_uid != geteuid()) rc = unsafe(path, "not yours", &sb);
  else if (sb.st_mode & 022) rc = unsafe(path, "writable by others", &sb);
  close(fd);
  return rc;
}

int strata_cache_open(const char *path)
{
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return -1;
    strata_error(STRATA_EIO, "%s: cannot open this file of the cache of compiled integrands: "
                 "%s%s", path, strerror(e), e == ELOOP ? " (a symbolic link: remove it)" : "");
    return -2;
  }
  struct stat sb;
  const char *why = NULL;
  if (fstat(fd, &sb) != 0) why = strerror(errno);
  else if (!S_ISREG(sb.st_mode)) why = "not a regular file";
  else if (sb.st_uid != geteuid()) why = "not yours";
  else if (sb.st_mode & 022) why = "writable by others";
  if (why) {
    close(fd);
    strata_error(STRATA_EIO, "%s: %s (owner uid %d, mode %04o): strata does not load or "
                 "compile with it (remove it)", path, why, (int)sb.st_uid,
                 (unsigned)(sb.st_mode & 07777));
    return -2;
  }
  /* Entries of earlier versions were readable by all, and keys hold the
   * source: made private as they are met. */
  if (sb.st_mode & 077) fchmod(fd, 0600);
  return fd;
}

/* Whether the file holds exactly key: 1, 0, or -1 (error set) when the file
 * is there but not to be trusted. */
static int key_matches(const char *path, const char *key, size_t keylen)
{
  int fd = strata_cache_open(path);
  if (fd == -1) return 0;
  if (fd < 0) return -1;
  int same = 1;
  char buf[8192];
  size_t off = 0;
  ssize_t n;
  while (same && (n = read(fd, buf, sizeof buf)) > 0) {
    if (off + (size_t)n > keylen || memcmp(buf, key + off, (size_t)n) != 0) same = 0;
    off += (size_t)n;
  }
  if (n < 0) same = 0;
  close(fd);
  return same && off == keylen;
}

int strata_cache_lookup(const char *kind, const char *ext, const char *key, size_t keylen,
                        strata_cache_entry *e)
{
  memset(e, 0, sizeof *e);
  int rc = strata_cache_dir(e->dir, sizeof e->dir);
  if (rc != STRATA_OK) return rc;
  uint64_t h = strata_hash64(STRATA_HASH64_INIT, key, keylen);
  snprintf(e->artifact, sizeof e->artifact, "%s/%s-%016llx%s", e->dir, kind,
           (unsigned long long)h, ext);
  snprintf(e->keyfile, sizeof e->keyfile, "%s/%s-%016llx.key", e->dir, kind,
           (unsigned long long)h);
  /* pid alone is not unique across nodes sharing the directory. */
  char host[64] = "";
  gethostname(host, sizeof host - 1);
  snprintf(e->tmp, sizeof e->tmp, "%s.tmp.%s.%ld", e->artifact, host, (long)getpid());
  /* Left by a run of ours killed while compiling, with our pid: a writer
   * opens the name afresh. */
  unlink(e->tmp);
  int fd = strata_cache_open(e->artifact);
  if (fd == -2) return STRATA_EIO;
  if (fd >= 0) close(fd);
  int same = fd >= 0 ? key_matches(e->keyfile, key, keylen) : 0;
  if (same < 0) return STRATA_EIO;
  e->hit = same;
  return STRATA_OK;
}

/* A new private file with exactly text, renamed to path. */
int strata_cache_write(const char *path, const char *text, size_t len)
{
  char tmp[4500];
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) return -1;
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(fd, text + off, len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += (size_t)n;
  }
  int ok = off == len;
  int e = errno;
  if (close(fd) != 0 && ok) {
    ok = 0;
    e = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = 0;
    e = errno;
  }
  if (!ok) {
    unlink(tmp);
    errno = e;
    return -1;
  }
  return 0;
}

int strata_cache_publish(strata_cache_entry *e, const char *key, size_t keylen)
{
  /* The compiler (or the GPU path) wrote the temporary file by name with
   * its own mode: it becomes private, and only if it is the plain file we
   * expect, ours, with no other name (a hard link kept elsewhere would be
   * a way to change it). */
  int fd = open(e->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat sb;
  const char *why = NULL;
  if (fd < 0 || fstat(fd, &sb) != 0) why = strerror(errno);
  else if (!S_ISREG(sb.st_mode)) why = "not a regular file";
  else if (sb.st_uid != geteuid()) why = "not yours";
  else if (sb.st_nlink != 1) why = "it has other names (hard links)";
  else if (fchmod(fd, 0600) != 0) why = strerror(errno);
  if (fd >= 0) close(fd);
  /* The artifact first: a reader that finds the new key finds its artifact.
   * (Two keys with one hash would overwrite each other's entries, and the
   * key check turns that into a recompile.) */
  if (!why && rename(e->tmp, e->artifact) != 0) why = strerror(errno);
  if (why) {
    unlink(e->tmp);
    return strata_error(STRATA_EIO, "cannot store %s in the cache: %s", e->artifact, why);
  }
  if (strata_cache_write(e->keyfile, key, keylen) != 0) {
    /* The artifact is usable now; only later runs lose the cache. */
    fprintf(stderr, "strata: warning: cannot write %s (%s): the compiled integrand will "
            "not be reused\n", e->keyfile, strerror(errno));
  }
  return STRATA_OK;
}
