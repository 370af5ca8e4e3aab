#include "trusted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "strata/strata.h"

/* The verdict on a file whose status is sb (lstat's or an open file's),
 * to be read or, with verb "write", written. */
static int judge(const char *path, const struct stat *sb, const char *verb, const char *what,
                 const char *tail, int flags)
{
  if (S_ISLNK(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: a symbolic link (strata does not "
                        "follow it)%s", path, verb, what, tail);
  if (!S_ISREG(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: not a regular file (%s)%s", path,
                        verb, what, S_ISDIR(sb->st_mode) ? "a directory"
                                    : S_ISFIFO(sb->st_mode) ? "a FIFO"
                                    : S_ISSOCK(sb->st_mode) ? "a socket"
                                                            : "a device", tail);
  const int root_ok = (flags & STRATA_TRUST_NOT_WRITABLE) && sb->st_uid == 0;
  if (!(flags & STRATA_TRUST_ANY_OWNER) && sb->st_uid != geteuid() && !root_ok)
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: owned by uid %d, not by you%s",
                        path, verb, what, (int)sb->st_uid, tail);
  if ((flags & STRATA_TRUST_NOT_WRITABLE) && (sb->st_mode & (S_IWGRP | S_IWOTH)))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: others may write it (mode %04o; "
                        "chmod go-w)%s", path, verb, what, (unsigned)(sb->st_mode & 07777), tail);
  return STRATA_OK;
}

int strata_trusted_open(const char *path, int flags, const char *what, const char *tail,
                        int checks, struct stat *sb)
{
  const char *verb = (flags & O_ACCMODE) == O_RDONLY ? "read" : "write";
  /* O_NONBLOCK: a FIFO put there would otherwise hold the open forever. */
  int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat lb;
    if (e == ELOOP && lstat(path, &lb) == 0)
      judge(path, &lb, verb, what, tail, checks);
    else
      strata_error(STRATA_EIO, "%s: cannot %s the %s: %s%s", path, verb, what, strerror(e), tail);
    return -1;
  }
  int rc = fstat(fd, sb) != 0
               ? strata_error(STRATA_EIO, "%s: cannot %s the %s: %s", path, verb, what,
                              strerror(errno))
               : judge(path, sb, verb, what, tail, checks);
  if (rc == STRATA_OK) return fd;
  close(fd);
  return -1;
}

FILE *strata_trusted_fopen(const char *path, const char *what)
{
  if (!path || !what) {
    strata_error(STRATA_EINVAL, "strata_trusted_fopen: no %s", !path ? "path" : "description");
    return NULL;
  }
  struct stat sb;
  int fd = strata_trusted_open(path, O_RDONLY, what, "", STRATA_TRUST_NOT_WRITABLE, &sb);
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (fd >= 0 && !f) {
    strata_error(STRATA_ENOMEM, "%s: cannot read the %s: %s", path, what, strerror(errno));
    close(fd);
  }
  return f;
}
