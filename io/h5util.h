/* What io/ needs from HDF5 beyond its own API: one-line error messages
 * instead of HDF5's printed error stacks, and attributes and datasets of
 * the few shapes strata writes. */
#ifndef STRATA_H5UTIL_H
#define STRATA_H5UTIL_H
#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* Called before each operation on a file: replaces HDF5's printing of
 * error stacks (once per process) by keeping the innermost message of the
 * latest failure, so that every failure becomes one message through
 * strata_error; and forgets the reason of any earlier failure. */
void strata_h5_begin(void);

/* The latest HDF5 failure's innermost message, shortened to the system's
 * reason where there is one ("File too large"). */
const char *strata_h5_detail(void);
/* Sets that message: a failure found outside HDF5 (a checksum). */
void strata_h5_set_detail(const char *why);

/* Whether the 8 bytes at p are HDF5's file signature (which a file holds at
 * offset 0, or at 512, 1024, ... behind a user block). */
int strata_h5_is_signature(const void *p);

/* Whether every global heap collection (where HDF5 keeps variable-length
 * strings, under no checksum) of the file fd of size bytes holds objects
 * that fit it: HDF5 (1.10) trusts their sizes and reads past a damaged
 * one.  0 with the collection's offset in *bad (if not NULL) otherwise. */
int strata_h5_heaps_fit_fd(int fd, uint64_t size, uint64_t *bad);

/* Opens the dataset or group (kind H5I_DATASET or H5I_GROUP) that loc's
 * link name reaches, only if that link is a hard one: a soft or external
 * link would bring in an object from elsewhere, even from another file.
 * -1 otherwise, strata_h5_detail() saying why.  Close with H5Oclose. */
hid_t strata_h5_open(hid_t loc, const char *name, H5I_type_t kind);

/* Attributes on any object: strings are variable-length UTF-8, which h5py
 * reads as str.  Writers replace an attribute of the same name.  All return
 * 0 or -1. */
int strata_h5_put_str(hid_t obj, const char *name, const char *value);
/* A string of fixed length (its bytes and a NUL), which HDF5 keeps in the
 * object's header, under the file's metadata checksums: a variable-length
 * string lives in the global heap, which no checksum covers, and a flipped
 * bit there crashed HDF5's own read.  For files written once (checkpoints);
 * a log rewrites its status in place, with the same type. */
int strata_h5_put_fixed_str(hid_t obj, const char *name, const char *value);
/* A one-dimensional array of n variable-length UTF-8 strings (h5py: an
 * array of str), replaced whole: not for a file in SWMR mode. */
int strata_h5_put_str_array(hid_t obj, const char *name, const char *const *v, size_t n);
/* The same as fixed-length strings, kept in the attribute itself (under
 * its object's checksum) rather than in a global heap, which has none. */
int strata_h5_put_fixed_str_array(hid_t obj, const char *name, const char *const *v, size_t n);
int strata_h5_put_i64(hid_t obj, const char *name, int64_t value);
int strata_h5_put_u64(hid_t obj, const char *name, uint64_t value);
int strata_h5_put_f64(hid_t obj, const char *name, double value);

/* Reading.  Every read of a file goes through these, which check what the
 * file declares before anything is read or allocated: the type's class,
 * the rank and shape, and a size no larger than the file can hold.  A
 * crafted or damaged header would otherwise have strata write past a
 * buffer (an attribute of 4,000 values read into one) or allocate what it
 * declares (2^60 elements).  A failure is -1 with strata_h5_detail()
 * naming the attribute or dataset and what is wrong with it. */

/* A number: an attribute holding one value (a scalar, or an array of one)
 * of the class of the type read (an integer for the integers, floating
 * point for the double); a missing one is -1 too. */
int strata_h5_get_i64(hid_t obj, const char *name, int64_t *out);
int strata_h5_get_u64(hid_t obj, const char *name, uint64_t *out);
int strata_h5_get_f64(hid_t obj, const char *name, double *out);
/* n numbers, integers or floating point, of a one-dimensional attribute
 * (or a scalar, for n = 1), as doubles. */
int strata_h5_get_numbers(hid_t obj, const char *name, size_t n, double *out);
/* One string of either kind, *out malloc'ed (free it): read as the bytes
 * it holds, with their length, so that one with a NUL inside is refused
 * rather than read as its beginning. */
int strata_h5_get_str(hid_t obj, const char *name, char **out);
/* A one-dimensional array of variable-length strings: *out is a malloc'ed
 * array of *n malloc'ed strings (free each, then it). */
int strata_h5_get_str_array(hid_t obj, const char *name, char ***out, size_t *n);
/* Opens the dataset that loc's hard link name reaches (strata_h5_open),
 * once its elements are of class cls (H5T_NO_CLASS: any number, integer
 * or floating point), it has rank dimensions (their extents in dims), and
 * the file can hold that many elements: no more bytes than its size, or
 * than 1032 times it where a filter compresses the data (deflate's largest
 * ratio).  *count (may be NULL) is the number of elements.  Close with
 * H5Oclose. */
hid_t strata_h5_open_data(hid_t loc, const char *name, H5T_class_t cls, int rank, hsize_t *dims,
                          size_t *count);
/* The plural noun for a type class ("strings", "integers"), for messages. */
const char *strata_h5_class_name(H5T_class_t c);

/* The checksum of n 8-byte elements: FNV-1a (64 bit) applied to whole
 * little-endian words (doc/file-formats.md). */
uint64_t strata_h5_checksum(const void *data, size_t n);
/* The same continued from h: several arrays into one checksum. */
uint64_t strata_h5_checksum_from(uint64_t h, const void *data, size_t n);

/* A fixed-size contiguous dataset of rank dims, of an 8-byte native type
 * (H5T_NATIVE_DOUBLE, H5T_NATIVE_INT64), with the data's checksum in its
 * "checksum" attribute so that reading detects damaged data. */
int strata_h5_write_array(hid_t loc, const char *name, hid_t type, int rank,
                          const hsize_t *dims, const void *data);
/* Reads a whole dataset of rank dimensions (at most 3), checked as
 * strata_h5_open_data checks it, whose element count must be n and whose
 * data must match its checksum; -1 otherwise (strata_h5_detail says
 * which). */
int strata_h5_read_array(hid_t loc, const char *name, hid_t type, int rank, size_t n,
                         void *data);
#endif
