/* Which files strata reads its state from or goes on writing (a resumed
 * log): on a shared cluster a link or a file planted by another user is no
 * state of this run. */
#ifndef STRATA_OWNFILE_H
#define STRATA_OWNFILE_H
#include <hdf5.h>
#include <sys/stat.h>

#include "trusted.h"

/* HDF5's H5Fopen(path, flags, fapl) of a file that passes the checks of
 * strata_trusted_open (compile/trusted.h), without the gap between a
 * check by name and an open by name: the checks
 * are made on a descriptor opened without following links, and the file
 * HDF5 then opens must be that very file (device and inode), so that one
 * swapped in between is neither read nor written.  Returns the file, or -1
 * and in *failed why: REFUSED with the error set; NOT_HDF5 (no HDF5
 * signature) or H5_FAILED (strata_h5_detail() says why) with no error set,
 * for the caller to say what it expected; DAMAGED with the error set, where
 * strata_ownfile_heaps_whole finds what HDF5 would crash on.  HDF5 opens the file through the
 * checked descriptor's name in /proc where there is one.  A read of a file
 * in the newest format (superblock 3, which SWMR needs) opens in SWMR mode,
 * so that a log that a run writes, or wrote until it was killed, reads. */
enum { STRATA_OWNFILE_REFUSED = 1, STRATA_OWNFILE_NOT_HDF5, STRATA_OWNFILE_H5_FAILED,
       STRATA_OWNFILE_DAMAGED };
hid_t strata_ownfile_h5open(const char *path, unsigned flags, hid_t fapl, const char *what,
                            const char *tail, int checks, int *failed);
/* The same, keeping the checked descriptor open in *keep_fd (-1 where no
 * file is returned) for the caller to lock or grow the file through. */
hid_t strata_ownfile_h5open_fd(const char *path, unsigned flags, hid_t fapl, const char *what,
                               const char *tail, int checks, int *failed, int *keep_fd);

/* Whether the open file fd of size bytes holds HDF5's signature (at 0, or at
 * 512, 1024, 2048, ... behind a user block), read through the descriptor
 * rather than by name. */
int strata_ownfile_is_hdf5(int fd, off_t size);
/* The version of the superblock behind that signature (0 for the original
 * format, 2 and 3 with checksums), or -1 where there is none. */
int strata_ownfile_superblock(int fd, off_t size);

/* Whether the strings of the HDF5 file fd of size bytes can be read: every
 * global heap collection's objects end within it.  HDF5 (1.10) reads a
 * damaged object size there past its buffer and crashes; 0 with the
 * collection's offset in *bad where one does not add up. */
int strata_ownfile_heaps_whole(int fd, off_t size, off_t *bad);

/* Whether HDF5's open file f is the file sb describes (an fstat of the
 * descriptor that was checked): 0 also where HDF5's driver is not the
 * default one, whose handle is a descriptor. */
int strata_ownfile_same(hid_t f, const struct stat *sb);
#endif
