#include "ownfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "h5util.h"

/* The verdict on a file whose status is sb (lstat's or an open file's),
 * to be read or, with verb "write", written. */
static int judge(const char *path, const struct stat *sb, const char *verb, const char *what,
                 const char *tail, int others_may_not_write)
{
  if (S_ISLNK(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: a symbolic link (strata does not "
                        "follow it)%s", path, verb, what, tail);
  if (!S_ISREG(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: not a regular file", path, verb,
                        what);
  if (sb->st_uid != geteuid())
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: owned by uid %d, not by you%s",
                        path, verb, what, (int)sb->st_uid, tail);
  if (others_may_not_write && (sb->st_mode & (S_IWGRP | S_IWOTH)))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: others may write it (mode %04o; "
                        "chmod go-w)", path, verb, what, (unsigned)(sb->st_mode & 07777));
  return STRATA_OK;
}

int strata_ownfile_open(const char *path, int flags, const char *what, const char *tail,
                        int others_may_not_write, struct stat *sb)
{
  const char *verb = (flags & O_ACCMODE) == O_RDONLY ? "read" : "write";
  /* O_NONBLOCK: a FIFO put there would otherwise hold the open forever. */
  int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat lb;
    if (e == ELOOP && lstat(path, &lb) == 0)
      judge(path, &lb, verb, what, tail, others_may_not_write);
    else
      strata_error(STRATA_EIO, "%s: cannot %s the %s: %s%s", path, verb, what, strerror(e), tail);
    return -1;
  }
  int rc = fstat(fd, sb) != 0
               ? strata_error(STRATA_EIO, "%s: cannot %s the %s: %s", path, verb, what,
                              strerror(errno))
               : judge(path, sb, verb, what, tail, others_may_not_write);
  if (rc == STRATA_OK) return fd;
  close(fd);
  return -1;
}

int strata_ownfile_is_hdf5(int fd, off_t size)
{
  for (off_t at = 0; at + 8 <= size; at = at ? 2 * at : 512) {
    unsigned char b[8];
    if (pread(fd, b, sizeof b, at) != (ssize_t)sizeof b) return 0;
    if (strata_h5_is_signature(b)) return 1;
  }
  return 0;
}

int strata_ownfile_same(hid_t f, const struct stat *sb)
{
  hid_t ap = H5Fget_access_plist(f);
  void *h = NULL;
  struct stat hb;
  int same = ap >= 0 && H5Pget_driver(ap) == H5FD_SEC2 && H5Fget_vfd_handle(f, ap, &h) >= 0 &&
             h && fstat(*(int *)h, &hb) == 0 && hb.st_dev == sb->st_dev &&
             hb.st_ino == sb->st_ino;
  if (ap >= 0) H5Pclose(ap);
  return same;
}

hid_t strata_ownfile_h5open(const char *path, unsigned flags, hid_t fapl, const char *what,
                            const char *tail, int others_may_not_write, int *failed)
{
  *failed = STRATA_OWNFILE_REFUSED;
  struct stat sb;
  int fd = strata_ownfile_open(path, flags & H5F_ACC_RDWR ? O_RDWR : O_RDONLY, what, tail,
                               others_may_not_write, &sb);
  if (fd < 0) return -1;
  hid_t f = -1;
  if (!strata_ownfile_is_hdf5(fd, sb.st_size))
    *failed = STRATA_OWNFILE_NOT_HDF5;
  else if ((f = H5Fopen(path, flags, fapl)) < 0)
    *failed = STRATA_OWNFILE_H5_FAILED;
  else if (!strata_ownfile_same(f, &sb)) {
    H5Fclose(f);
    f = -1;
    strata_error(STRATA_EIO, "%s: cannot %s the %s: the file was replaced while strata "
                 "opened it%s", path, flags & H5F_ACC_RDWR ? "write" : "read", what, tail);
  }
  close(fd);
  return f;
}
