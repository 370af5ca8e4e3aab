#include "ownfile.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "h5util.h"

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

int strata_ownfile_heaps_whole(int fd, off_t size, off_t *bad)
{
  uint64_t at = 0;
  const int whole = strata_h5_heaps_fit_fd(fd, (uint64_t)size, &at);
  if (!whole) *bad = (off_t)at;
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
  int fd = strata_trusted_open(path, flags & H5F_ACC_RDWR ? O_RDWR : O_RDONLY, what, tail,
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
