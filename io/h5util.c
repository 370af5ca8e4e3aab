#include "h5util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "io.h"

void strata_init(void)
{
  H5dont_atexit();
  H5open();
}

static _Thread_local char detail[512];

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
  (void)data;
  if (n != 0 || !e->desc) return 0;
  /* The file drivers report a system error as "..., errno = 28, error
   * message = 'No space left on device', ...": the reason is what a user
   * needs. */
  const char *m = strstr(e->desc, "error message = '");
  if (m) {
    m += strlen("error message = '");
    size_t len = strcspn(m, "'");
    if (len >= sizeof detail) len = sizeof detail - 1;
    memcpy(detail, m, len);
    detail[len] = '\0';
  } else {
    snprintf(detail, sizeof detail, "%s", e->desc);
  }
  return 0;
}

/* HDF5 calls this when an API function fails, with the failure's stack
 * still there: every later API call clears the stack on entry, cleanup
 * included, so this is the one moment to keep the reason. */
static herr_t capture(hid_t stack, void *data)
{
  (void)data;
  H5Ewalk2(stack, H5E_WALK_UPWARD, innermost, NULL);
  return 0;
}

void strata_h5_begin(void)
{
  static int done;
  if (!done) H5Eset_auto2(H5E_DEFAULT, capture, NULL);
  done = 1;
  detail[0] = '\0';
}

const char *strata_h5_detail(void) { return detail; }

void strata_h5_set_detail(const char *why) { snprintf(detail, sizeof detail, "%s", why); }

/* An attribute of the same type is written in place: a log in SWMR mode
 * (runlog.c) must not delete and create objects that readers may be
 * reading. */
static int put(hid_t obj, const char *name, hid_t type, const void *value)
{
  if (H5Aexists(obj, name) > 0) {
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    int same = ft >= 0 && sp >= 0 && H5Sget_simple_extent_type(sp) == H5S_SCALAR &&
               H5Tget_class(ft) == H5Tget_class(type) && H5Tget_size(ft) == H5Tget_size(type) &&
               (H5Tget_class(type) != H5T_STRING ||
                H5Tis_variable_str(ft) == H5Tis_variable_str(type));
    int rc = same && H5Awrite(a, type, value) >= 0 ? 0 : -1;
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    if (a >= 0) H5Aclose(a);
    if (same) return rc;
    if (H5Adelete(obj, name) < 0) return -1;
  }
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  int rc = a >= 0 && H5Awrite(a, type, value) >= 0 ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  return rc;
}

static hid_t vlen_string(void)
{
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

int strata_h5_put_str(hid_t obj, const char *name, const char *value)
{
  hid_t t = vlen_string();
  int rc = put(obj, name, t, &value);
  H5Tclose(t);
  return rc;
}

int strata_h5_put_str_array(hid_t obj, const char *name, const char *const *v, size_t n)
{
  htri_t there = H5Aexists(obj, name);
  if (there < 0 || (there > 0 && H5Adelete(obj, name) < 0)) return -1;
  hsize_t dims[1] = {n};
  hid_t t = vlen_string();
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t a = space >= 0 ? H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int rc = a >= 0 && (n == 0 || H5Awrite(a, t, v) >= 0) ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  H5Tclose(t);
  return rc;
}

int strata_h5_put_fixed_str_array(hid_t obj, const char *name, const char *const *v, size_t n)
{
  htri_t there = H5Aexists(obj, name);
  if (there < 0 || (there > 0 && H5Adelete(obj, name) < 0)) return -1;
  size_t w = 1;
  for (size_t i = 0; i < n; i++)
    if (strlen(v[i]) + 1 > w) w = strlen(v[i]) + 1;
  char *buf = calloc(n ? n : 1, w);
  if (!buf) return -1;
  for (size_t i = 0; i < n; i++) memcpy(buf + i * w, v[i], strlen(v[i]));
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, w);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  H5Tset_cset(t, H5T_CSET_UTF8);
  hsize_t dims[1] = {n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t a = space >= 0 ? H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int rc = a >= 0 && (n == 0 || H5Awrite(a, t, buf) >= 0) ? 0 : -1;
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  H5Tclose(t);
  free(buf);
  return rc;
}

int strata_h5_put_fixed_str(hid_t obj, const char *name, const char *value)
{
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, strlen(value) + 1);
  H5Tset_strpad(t, H5T_STR_NULLTERM);
  H5Tset_cset(t, H5T_CSET_UTF8);
  int rc = put(obj, name, t, value);
  H5Tclose(t);
  return rc;
}

int strata_h5_put_i64(hid_t obj, const char *name, int64_t v)
{
  return put(obj, name, H5T_NATIVE_INT64, &v);
}

int strata_h5_put_u64(hid_t obj, const char *name, uint64_t v)
{
  return put(obj, name, H5T_NATIVE_UINT64, &v);
}

int strata_h5_put_f64(hid_t obj, const char *name, double v)
{
  return put(obj, name, H5T_NATIVE_DOUBLE, &v);
}

/* --- reading: what the file declares is checked before anything is read ---------- */

/* The size of the file that holds obj: no array in it can hold more bytes
 * (an image in memory has the image's size). */
static hsize_t file_size(hid_t obj)
{
  hid_t f = H5Iget_file_id(obj);
  hsize_t size = 0;
  if (f < 0 || H5Fget_filesize(f, &size) < 0) size = 0;
  if (f >= 0) H5Fclose(f);
  return size;
}

/* The detail for an object that HDF5 failed to describe: its name and
 * HDF5's reason. */
static void unreadable(const char *kind, const char *name)
{
  char why[sizeof detail];
  snprintf(why, sizeof why, "%s", *detail ? detail : "unreadable");
  snprintf(detail, sizeof detail, "%s%s: %s", kind, name, why);
}

static const char *class_name(H5T_class_t c)
{
  switch (c) {
  case H5T_INTEGER: return "integers";
  case H5T_FLOAT: return "floating-point numbers";
  case H5T_STRING: return "strings";
  case H5T_COMPOUND: return "a compound type";
  case H5T_ENUM: return "an enum";
  case H5T_ARRAY: return "an array type";
  case H5T_VLEN: return "variable-length sequences";
  case H5T_REFERENCE: return "references";
  case H5T_OPAQUE: return "opaque data";
  case H5T_BITFIELD: return "a bitfield";
  case H5T_TIME: return "a time type";
  default: return "an unknown type";
  }
}

const char *strata_h5_class_name(H5T_class_t c) { return class_name(c); }

/* Whether the type t (a file's) is of the class wanted: H5T_NO_CLASS
 * wants any number, integer or floating point. */
static int class_is(hid_t t, H5T_class_t want)
{
  const H5T_class_t c = H5Tget_class(t);
  return want == H5T_NO_CLASS ? c == H5T_INTEGER || c == H5T_FLOAT : c == want;
}

/* The attribute name of obj opened for reading, once it holds n values (n
 * == 1: a scalar, or an array of one; else a one-dimensional array) of
 * class cls; its type in *ft.  -1 with the detail naming it. */
static hid_t open_attr(hid_t obj, const char *name, H5T_class_t cls, hssize_t n, hid_t *ft)
{
  *ft = -1;
  htri_t there = H5Aexists(obj, name);
  if (there <= 0) {
    if (there == 0) snprintf(detail, sizeof detail, "no attribute %s", name);
    return -1;
  }
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
  const H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
  const hssize_t have = sc == H5S_NULL ? 0 : sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  const int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  int ok = 0;
  if (t < 0 || sp < 0)
    unreadable("attribute ", name);
  else if (!class_is(t, cls))
    snprintf(detail, sizeof detail, "attribute %s holds %s, not %s", name,
             class_name(H5Tget_class(t)), cls == H5T_NO_CLASS ? "numbers" : class_name(cls));
  else if (have != n)
    snprintf(detail, sizeof detail, "attribute %s has %lld value%s where %lld %s expected", name,
             (long long)have, have == 1 ? "" : "s", (long long)n, n == 1 ? "is" : "are");
  else if (rank > 1)
    snprintf(detail, sizeof detail, "attribute %s has %d dimensions where %s expected", name,
             rank, n == 1 ? "none or one is" : "one is");
  else
    ok = 1;
  if (sp >= 0) H5Sclose(sp);
  if (!ok) {
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return -1;
  }
  *ft = t;
  return a;
}

/* n values of an attribute of the class of the memory type (integers into
 * integers, floating point into floating point; H5T_NO_CLASS: either). */
static int get(hid_t obj, const char *name, hid_t type, H5T_class_t cls, hssize_t n, void *out)
{
  hid_t ft;
  hid_t a = open_attr(obj, name, cls, n, &ft);
  if (a < 0) return -1;
  int rc = H5Aread(a, type, out) >= 0 ? 0 : -1;
  H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

int strata_h5_get_numbers(hid_t obj, const char *name, size_t n, double *out)
{
  return get(obj, name, H5T_NATIVE_DOUBLE, H5T_NO_CLASS, (hssize_t)n, out);
}

/* A string read back must be the bytes written: one with a NUL inside
 * would read as its beginning and compare equal to it. */
static char *checked_copy(const char *name, const char *p, size_t n, int padded)
{
  size_t len = n;
  const char *nul = memchr(p, '\0', n);
  if (nul) {
    len = (size_t)(nul - p);
    /* A fixed-length string ends at its first NUL, padded with NULs after. */
    for (size_t i = len; i < n; i++)
      if (!padded || p[i]) {
        snprintf(detail, sizeof detail, "attribute %s holds a NUL byte at position %zu of %zu",
                 name, len, n);
        return NULL;
      }
  }
  char *s = malloc(len + 1);
  if (!s) {
    snprintf(detail, sizeof detail, "attribute %s: out of memory", name);
    return NULL;
  }
  memcpy(s, p, len);
  s[len] = '\0';
  return s;
}

/* HDF5 (1.10) trusts the sizes of the objects in a global heap collection,
 * where variable-length strings live under no checksum: a size damaged
 * has it copy past the collection (a flipped bit read 32 kB out of
 * bounds).  The collections of the file (signature "GCOL", version 1) are
 * walked as HDF5 walks them; 0 where an object does not fit its
 * collection. */
static uint64_t le64(const unsigned char *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Whether the objects of the collection c of size bytes fit in it. */
static int collection_fits(const unsigned char *c, uint64_t size)
{
  const unsigned char *q = c + 16, *end = c + size;
  while (end - q >= 16) {
    const unsigned idx = (unsigned)q[0] | (unsigned)q[1] << 8;
    const uint64_t n = le64(q + 8);
    /* An object: its header and its data, padded to 8 bytes; the free
     * space (index 0): its size, header included. */
    const uint64_t need = idx ? (n > size ? size + 1 : 16 + ((n + 7) & ~(uint64_t)7)) : n;
    if (need < 16 || need > (uint64_t)(end - q)) return 0;
    q += need;
  }
  return 1;
}

/* The file's len bytes, read through read_at (pread's contract) a block
 * at a time: a file that a run is writing (and HDF5 truncates at each
 * flush) is never mapped.  A collection cut short by the end of the file
 * is HDF5's own read error, not this check's. */
typedef ssize_t (*read_fn)(void *ctx, void *buf, size_t n, uint64_t at);

static int heaps_fit(read_fn read_at, void *ctx, uint64_t len, uint64_t *bad)
{
  static const unsigned char sig[8] = {'G', 'C', 'O', 'L', 1, 0, 0, 0};
  enum { BLOCK = 1 << 20 };
  unsigned char *b = malloc(BLOCK);
  int ok = 1;
  for (uint64_t at = 0; b && ok && at + 16 <= len;) {
    const ssize_t got = read_at(ctx, b, BLOCK, at);
    if (got < 16) break;
    const unsigned char *c = memmem(b, (size_t)got, sig, sizeof sig);
    if (!c || (size_t)(c - b) + 16 > (size_t)got) {
      /* The next block overlaps this one by a header's length. */
      if ((size_t)got < BLOCK) break;
      at += (uint64_t)got - 15;
      continue;
    }
    const uint64_t where = at + (uint64_t)(c - b), size = le64(c + 8);
    /* HDF5 makes no collection smaller than 4 kB. */
    if (size < 4096 || size > len - where) {
      ok = 0;
    } else {
      unsigned char *col = malloc((size_t)size);
      if (col && read_at(ctx, col, (size_t)size, where) == (ssize_t)size)
        ok = collection_fits(col, size);
      free(col);
    }
    if (!ok && bad) *bad = where;
    at = where + size;
  }
  free(b);
  return ok;
}

static ssize_t read_fd(void *ctx, void *buf, size_t n, uint64_t at)
{
  return pread(*(int *)ctx, buf, n, (off_t)at);
}

typedef struct {
  const unsigned char *p;
  size_t len;
} image;

static ssize_t read_image(void *ctx, void *buf, size_t n, uint64_t at)
{
  const image *im = ctx;
  if (at >= im->len) return 0;
  if (n > im->len - at) n = im->len - (size_t)at;
  memcpy(buf, im->p + at, n);
  return (ssize_t)n;
}

int strata_h5_heaps_fit_fd(int fd, uint64_t size, uint64_t *bad)
{
  return heaps_fit(read_fd, &fd, size, bad);
}

/* Whether the global heaps of the file that holds obj fit (heaps_fit),
 * for a file on disk (remembered by device, inode, size and time of
 * change) or an image in memory. */
static int heaps_ok(hid_t obj)
{
  static _Thread_local struct stat last;
  static _Thread_local int last_ok;
  hid_t f = H5Iget_file_id(obj);
  hid_t ap = f >= 0 ? H5Fget_access_plist(f) : -1;
  hid_t cp = f >= 0 ? H5Fget_create_plist(f) : -1;
  size_t sa = 0, ss = 0;
  void *h = NULL;
  int ok = 1;
  struct stat sb;
  /* Lengths of 8 bytes (strata's files, h5py's): the layout walked. */
  if (ap < 0 || cp < 0 || H5Pget_sizes(cp, &sa, &ss) < 0 || ss != 8) {
  } else if (H5Pget_driver(ap) == H5FD_SEC2) {
    if (H5Fget_vfd_handle(f, ap, &h) >= 0 && h && fstat(*(int *)h, &sb) == 0) {
      if (sb.st_dev == last.st_dev && sb.st_ino == last.st_ino && sb.st_size == last.st_size &&
          sb.st_mtim.tv_sec == last.st_mtim.tv_sec && sb.st_mtim.tv_nsec == last.st_mtim.tv_nsec) {
        ok = last_ok;
      } else {
        ok = heaps_fit(read_fd, h, (uint64_t)sb.st_size, NULL);
        last = sb;
        last_ok = ok;
      }
    }
  } else {
    ssize_t n = H5Fget_file_image(f, NULL, 0);
    void *img = n > 0 ? malloc((size_t)n) : NULL;
    image im = {img, (size_t)n};
    if (img && H5Fget_file_image(f, img, (size_t)n) == n) ok = heaps_fit(read_image, &im, (uint64_t)n, NULL);
    free(img);
  }
  if (cp >= 0) H5Pclose(cp);
  if (ap >= 0) H5Pclose(ap);
  if (f >= 0) H5Fclose(f);
  return ok;
}

/* Reading variable-length data is safe only where heaps_ok. */
static int heaps_checked(hid_t obj, const char *name)
{
  if (heaps_ok(obj)) return 1;
  snprintf(detail, sizeof detail, "attribute %s: the file's global heap (where strings are "
           "kept) is damaged: an object does not fit its collection", name);
  return 0;
}

/* A variable-length string read as the bytes it holds, with its length
 * (HDF5 converts it to a sequence of bytes): read as a C string, a NUL
 * inside would go unseen. */
static hid_t bytes_type(void) { return H5Tvlen_create(H5T_NATIVE_UCHAR); }

int strata_h5_get_str(hid_t obj, const char *name, char **out)
{
  *out = NULL;
  hid_t ft;
  hid_t a = open_attr(obj, name, H5T_STRING, 1, &ft);
  if (a < 0) return -1;
  const htri_t vlen = H5Tis_variable_str(ft);
  const hsize_t limit = file_size(obj);
  if (vlen > 0 && heaps_checked(obj, name)) {
    hid_t t = bytes_type();
    hvl_t v = {0, NULL};
    if (t >= 0 && H5Aread(a, t, &v) >= 0) {
      /* The library's own allocation: the length is as stored. */
      *out = v.len <= limit ? checked_copy(name, v.p ? v.p : "", v.len, 0) : NULL;
      if (v.len > limit)
        snprintf(detail, sizeof detail, "attribute %s: a string of %zu bytes in a file of %llu",
                 name, v.len, (unsigned long long)limit);
      hid_t sp = H5Screate(H5S_SCALAR);
      H5Dvlen_reclaim(t, sp, H5P_DEFAULT, &v);
      H5Sclose(sp);
    }
    if (t >= 0) H5Tclose(t);
  } else if (vlen == 0) {
    /* Read as stored (a string's character set is not converted). */
    const size_t n = H5Tget_size(ft);
    char *s = n > 0 && n <= limit ? malloc(n) : NULL;
    if (!s)
      snprintf(detail, sizeof detail, "attribute %s: a string of %zu bytes in a file of %llu",
               name, n, (unsigned long long)limit);
    else if (H5Aread(a, ft, s) >= 0)
      *out = checked_copy(name, s, n, H5Tget_strpad(ft) != H5T_STR_SPACEPAD);
    free(s);
  }
  H5Tclose(ft);
  H5Aclose(a);
  return *out ? 0 : -1;
}

int strata_h5_get_str_array(hid_t obj, const char *name, char ***out, size_t *n)
{
  *out = NULL;
  *n = 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a), sp = H5Aget_space(a), t = bytes_type();
  const hssize_t k = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1
                         ? H5Sget_simple_extent_npoints(sp)
                         : -1;
  int rc = -1;
  /* Each string takes at least a heap reference in the file. */
  hvl_t *raw = NULL;
  if (ft < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft) <= 0)
    snprintf(detail, sizeof detail, "attribute %s holds %s, not variable-length strings", name,
             ft >= 0 ? class_name(H5Tget_class(ft)) : "nothing readable");
  else if (k < 0 || (hsize_t)k * 8 > file_size(obj))
    snprintf(detail, sizeof detail, "attribute %s: %lld strings, not a list a file of its "
             "size can hold", name, (long long)k);
  else if (heaps_checked(obj, name))
    raw = calloc((size_t)k + 1, sizeof *raw);
  char **copy = raw ? calloc((size_t)k + 1, sizeof *copy) : NULL;
  if (copy && (k == 0 || H5Aread(a, t, raw) >= 0)) {
    rc = 0;
    for (hssize_t i = 0; i < k && rc == 0; i++)
      if (!(copy[i] = checked_copy(name, raw[i].p ? raw[i].p : "", raw[i].len, 0))) rc = -1;
    if (k > 0) H5Dvlen_reclaim(t, sp, H5P_DEFAULT, raw);
  }
  if (rc == 0) {
    *out = copy;
    *n = (size_t)k;
  } else if (copy) {
    for (hssize_t i = 0; i < k; i++) free(copy[i]);
    free(copy);
  }
  free(raw);
  H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

int strata_h5_get_i64(hid_t obj, const char *name, int64_t *out)
{
  return get(obj, name, H5T_NATIVE_INT64, H5Tget_class(H5T_NATIVE_INT64), 1, out);
}

int strata_h5_get_u64(hid_t obj, const char *name, uint64_t *out)
{
  return get(obj, name, H5T_NATIVE_UINT64, H5Tget_class(H5T_NATIVE_UINT64), 1, out);
}

int strata_h5_get_f64(hid_t obj, const char *name, double *out)
{
  return get(obj, name, H5T_NATIVE_DOUBLE, H5Tget_class(H5T_NATIVE_DOUBLE), 1, out);
}

/* The filters that shrink data (all but the Fletcher-32 checksum) let a
 * file hold more than its size: deflate's ratio is at most 1032. */
static int compressed(hid_t d)
{
  hid_t p = H5Dget_create_plist(d);
  int n = p >= 0 ? H5Pget_nfilters(p) : 0, yes = 0;
  for (int i = 0; i < n; i++) {
    unsigned flags;
    size_t nv = 0;
    H5Z_filter_t id = H5Pget_filter2(p, (unsigned)i, &flags, &nv, NULL, 0, NULL, NULL);
    if (id != H5Z_FILTER_FLETCHER32 && id != H5Z_FILTER_SHUFFLE) yes = 1;
  }
  if (p >= 0) H5Pclose(p);
  return yes;
}

hid_t strata_h5_open_data(hid_t loc, const char *name, H5T_class_t cls, int rank, hsize_t *dims,
                          size_t *count)
{
  hid_t d = strata_h5_open(loc, name, H5I_DATASET);
  if (d < 0) return -1;
  hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
  const H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
  const int have = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(sp) : 0;
  int ok = 0;
  if (t < 0 || sp < 0) {
    unreadable("/", name);
  } else if (!class_is(t, cls)) {
    snprintf(detail, sizeof detail, "/%s holds %s, not %s", name, class_name(H5Tget_class(t)),
             cls == H5T_NO_CLASS ? "numbers" : class_name(cls));
  } else if (sc != H5S_SIMPLE || have != rank) {
    snprintf(detail, sizeof detail, "/%s has %s%d dimension%s, not %d", name,
             sc == H5S_SCALAR ? "0 (a scalar): " : sc == H5S_NULL ? "no data: " : "", have,
             have == 1 ? "" : "s", rank);
  } else {
    H5Sget_simple_extent_dims(sp, dims, NULL);
    /* Bounded by what the file can hold before anything is allocated: a
     * declared extent of 2^60 elements is damage, not a request. */
    const double size = (double)file_size(loc) * (compressed(d) ? 1032.0 : 1.0);
    double n = 1.0;
    for (int i = 0; i < rank; i++) n *= (double)dims[i];
    if (n * (double)H5Tget_size(t) > size) {
      char shape[96] = "";
      for (int i = 0, at = 0; i < rank && at < (int)sizeof shape; i++)
        at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%llu", i ? " x " : "",
                       (unsigned long long)dims[i]);
      snprintf(detail, sizeof detail, "/%s declares %s elements of %zu bytes, more than the "
               "file's %.0f bytes can hold", name, shape, H5Tget_size(t), (double)file_size(loc));
    } else {
      ok = 1;
      if (count) *count = (size_t)n;
    }
  }
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  if (!ok) {
    H5Oclose(d);
    return -1;
  }
  return d;
}

int strata_h5_is_signature(const void *p)
{
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  return memcmp(p, sig, sizeof sig) == 0;
}

uint64_t strata_h5_checksum(const void *data, size_t n)
{
  return strata_h5_checksum_from(UINT64_C(14695981039346656037), data, n);
}

uint64_t strata_h5_checksum_from(uint64_t h, const void *data, size_t n)
{
  /* FNV-1a on 64-bit words: one multiply per word, and any change to a
   * single word changes the result, since xor and multiplication by an odd
   * number are both invertible. */
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    h ^= w;
    h *= UINT64_C(1099511628211);
  }
  return h;
}

/* Contiguous: the data goes into the file with one copy.  HDF5's own
 * Fletcher-32 filter would need chunks and a pass of its own over every
 * write; the checksum attribute does the same job. */
int strata_h5_write_array(hid_t loc, const char *name, hid_t type, int rank,
                          const hsize_t *dims, const void *data)
{
  size_t n = 1;
  for (int i = 0; i < rank; i++) n *= (size_t)dims[i];
  hid_t space = H5Screate_simple(rank, dims, NULL);
  int rc = -1;
  if (space >= 0 && H5Tget_size(type) == 8) {
    hid_t d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d >= 0) {
      rc = (n == 0 || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0) &&
                   strata_h5_put_u64(d, "checksum", strata_h5_checksum(data, n)) == 0
               ? 0
               : -1;
      H5Dclose(d);
    }
  }
  if (space >= 0) H5Sclose(space);
  return rc;
}

hid_t strata_h5_open(hid_t loc, const char *name, H5I_type_t kind)
{
  const char *what = kind == H5I_GROUP ? "group" : "dataset";
  const char *slash = name[0] == '/' ? "" : "/";
  char part[1024];
  if (strlen(name) >= sizeof part) {
    snprintf(detail, sizeof detail, "%.60s...: too long a path in the file", name);
    return -1;
  }
  /* Every link on the way, not only the last: a soft or external one
   * anywhere on a path like /a/b would lead elsewhere. */
  for (const char *end = name + (name[0] == '/');; end++) {
    if (*end && *end != '/') continue;
    const size_t n = (size_t)(end - name);
    memcpy(part, name, n);
    part[n] = '\0';
    htri_t there = n ? H5Lexists(loc, part, H5P_DEFAULT) : 1;
    H5L_info_t li;
    if (there == 0) {
      snprintf(detail, sizeof detail, "no such %s in the file: %s%s", what, slash, name);
      return -1;
    }
    if (there < 0 || (n && H5Lget_info(loc, part, &li, H5P_DEFAULT) < 0)) return -1;
    if (n && li.type != H5L_TYPE_HARD) {
      snprintf(detail, sizeof detail, "%s%s is a%s link (strata follows only hard links)", slash,
               part, li.type == H5L_TYPE_SOFT ? " soft" : li.type == H5L_TYPE_EXTERNAL ? "n external"
                                                                                  : " user-defined");
      return -1;
    }
    if (!*end) break;
    /* The path goes on below it: it must be a group. */
    H5O_info_t oi;
    if (n && (H5Oget_info_by_name2(loc, part, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0 ||
              oi.type != H5O_TYPE_GROUP)) {
      snprintf(detail, sizeof detail, "no such %s in the file: %s%s (%s%s is no group)", what,
               slash, name, slash, part);
      return -1;
    }
  }
  hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
  if (o >= 0 && H5Iget_type(o) != kind) {
    const H5I_type_t t = H5Iget_type(o);
    snprintf(detail, sizeof detail, "%s%s: %s is not a %s", slash, name,
             t == H5I_GROUP ? "a group" : t == H5I_DATASET ? "a dataset" : "the object", what);
    H5Oclose(o);
    return -1;
  }
  return o;
}

int strata_h5_read_array(hid_t loc, const char *name, hid_t type, int rank, size_t n,
                         void *data)
{
  hsize_t dims[3];
  size_t have = 0;
  hid_t d = rank <= 3 ? strata_h5_open_data(loc, name, H5Tget_class(type), rank, dims, &have) : -1;
  if (d < 0) return -1;
  uint64_t sum = 0;
  int rc = -1;
  if (have != n) {
    snprintf(detail, sizeof detail, "/%s has %zu elements where %zu were expected", name, have, n);
  } else if (strata_h5_get_u64(d, "checksum", &sum) == 0 &&
             (n == 0 || H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0)) {
    if (strata_h5_checksum(data, n) == sum) rc = 0;
    else snprintf(detail, sizeof detail, "/%s: checksum mismatch: the data is damaged", name);
  }
  H5Oclose(d);
  return rc;
}
