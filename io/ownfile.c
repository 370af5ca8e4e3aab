#include "ownfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "h5util.h"

/* The verdict on a file whose status is sb (lstat's or an open file's),
 * to be read or, with verb "write", written. */
static int judge(const char *path, const struct stat *sb, const char *verb, const char *what,
                 const char *tail, int flags)
{
  if (S_ISLNK(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: a symbolic link (strata does not "
                        "follow it)%s", path, verb, what, tail);
  if (!S_ISREG(sb->st_mode))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: not a regular file", path, verb,
                        what);
  if (!(flags & STRATA_OWNFILE_ANY_OWNER) && sb->st_uid != geteuid())
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: owned by uid %d, not by you%s",
                        path, verb, what, (int)sb->st_uid, tail);
  if ((flags & STRATA_OWNFILE_NOT_WRITABLE) && (sb->st_mode & (S_IWGRP | S_IWOTH)))
    return strata_error(STRATA_EIO, "%s: cannot %s the %s: others may write it (mode %04o; "
                        "chmod go-w)", path, verb, what, (unsigned)(sb->st_mode & 07777));
  return STRATA_OK;
}

int strata_ownfile_open(const char *path, int flags, const char *what, const char *tail,
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

int strata_ownfile_is_hdf5(int fd, off_t size) { return strata_ownfile_superblock(fd, size) >= 0; }

int strata_ownfile_superblock(int fd, off_t size)
{
  for (off_t at = 0; at + 9 <= size; at = at ? 2 * at : 512) {
    unsigned char b[9];
    if (pread(fd, b, sizeof b, at) != (ssize_t)sizeof b) return -1;
    if (strata_h5_is_signature(b)) return b[8];
  }
  return -1;
}

static uint64_t le(const unsigned char *p, int n)
{
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Whether the global heap collection at `at` (its 16-byte header in h) is
 * whole: its objects (index, reference count, size, data padded to 8
 * bytes) end within it, up to the free space (index 0). */
static int collection_whole(int fd, off_t size, off_t at, const unsigned char *h)
{
  uint64_t len = le(h + 8, 8);
  if (len < 16 || len > (uint64_t)(size - at)) return 0;
  unsigned char *c = malloc(len);
  if (!c) return 1; /* no memory to look: HDF5 will read it as it can */
  int whole = pread(fd, c, len, at) == (ssize_t)len;
  uint64_t o = 16;
  while (whole && o + 16 <= len && le(c + o, 2) != 0) {
    uint64_t n = le(c + o + 8, 8);
    if (n > len) whole = 0;
    else o += 16 + (n + 7) / 8 * 8;
  }
  free(c);
  return whole && o <= len;
}

int strata_ownfile_heaps_whole(int fd, off_t size, off_t *bad)
{
  enum { CHUNK = 1 << 20 };
  unsigned char *b = malloc(CHUNK + 16);
  if (!b) return 1;
  int whole = 1;
  for (off_t at = 0; whole && at < size; at += CHUNK) {
    ssize_t n = pread(fd, b, CHUNK + 16, at);
    if (n < 16) break;
    for (ssize_t i = 0; whole && i + 16 <= n && i < CHUNK; i++) {
      /* "GCOL", version 1, three reserved zero bytes: not a chance pattern in data. */
      if (memcmp(b + i, "GCOL\1\0\0\0", 8)) continue;
      if (!collection_whole(fd, size, at + i, b + i)) {
        whole = 0;
        *bad = at + i;
      }
    }
  }
  free(b);
  return whole;
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
  return strata_ownfile_h5open_fd(path, flags, fapl, what, tail, others_may_not_write, failed,
                                  NULL);
}

hid_t strata_ownfile_h5open_fd(const char *path, unsigned flags, hid_t fapl, const char *what,
                               const char *tail, int checks, int *failed, int *keep_fd)
{
  *failed = STRATA_OWNFILE_REFUSED;
  if (keep_fd) *keep_fd = -1;
  struct stat sb;
  int fd = strata_ownfile_open(path, flags & H5F_ACC_RDWR ? O_RDWR : O_RDONLY, what, tail,
                               checks, &sb);
  if (fd < 0) return -1;
  hid_t f = -1;
  int version = strata_ownfile_superblock(fd, sb.st_size);
  /* A file of the newest format that a writer has open (or had, until it
   * was killed) opens for reading only in SWMR mode (doc/file-formats.md). */
  if (version >= 3 && !(flags & H5F_ACC_RDWR)) flags |= H5F_ACC_SWMR_READ;
  /* HDF5 opens by name: the descriptor's name in /proc reaches the very
   * file checked, whatever the directory entry has become since. */
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
  struct stat pb;
  const char *name = stat(self, &pb) == 0 && pb.st_dev == sb.st_dev && pb.st_ino == sb.st_ino
                         ? self
                         : path;
  off_t bad = 0;
  if (version < 0)
    *failed = STRATA_OWNFILE_NOT_HDF5;
  else if (!strata_ownfile_heaps_whole(fd, sb.st_size, &bad)) {
    *failed = STRATA_OWNFILE_DAMAGED;
    strata_error(STRATA_EIO, "%s: cannot read the %s: damaged: a global heap's objects run past "
                 "its end (byte %lld)%s", path, what, (long long)bad, tail);
  } else if ((f = H5Fopen(name, flags, fapl)) < 0)
    *failed = STRATA_OWNFILE_H5_FAILED;
  else if (!strata_ownfile_same(f, &sb)) {
    H5Fclose(f);
    f = -1;
    strata_error(STRATA_EIO, "%s: cannot %s the %s: the file was replaced while strata "
                 "opened it%s", path, flags & H5F_ACC_RDWR ? "write" : "read", what, tail);
  }
  if (keep_fd && f >= 0) *keep_fd = fd;
  else close(fd);
  return f;
}
