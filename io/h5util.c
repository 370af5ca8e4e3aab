#include "h5util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int strata_h5_get_str_array(hid_t obj, const char *name, char ***out, size_t *n)
{
  *out = NULL;
  *n = 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a), sp = H5Aget_space(a), t = vlen_string();
  hssize_t k = sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 ? H5Sget_simple_extent_npoints(sp)
                                                               : -1;
  int rc = -1;
  char **raw = k >= 0 && ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) > 0
                   ? calloc((size_t)k + 1, sizeof *raw)
                   : NULL;
  char **copy = raw ? calloc((size_t)k + 1, sizeof *copy) : NULL;
  if (copy && (k == 0 || H5Aread(a, t, raw) >= 0)) {
    rc = 0;
    for (hssize_t i = 0; i < k; i++)
      if (!(copy[i] = strdup(raw[i] ? raw[i] : ""))) rc = -1;
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

static int get(hid_t obj, const char *name, hid_t type, void *out)
{
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  int rc = H5Aread(a, type, out) >= 0 ? 0 : -1;
  H5Aclose(a);
  return rc;
}

int strata_h5_get_str(hid_t obj, const char *name, char **out)
{
  *out = NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ft = H5Aget_type(a);
  hid_t sp = H5Aget_space(a);
  int rc = -1;
  /* One string, of either kind strata writes. */
  const int one = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1;
  const htri_t vlen = ft >= 0 && H5Tget_class(ft) == H5T_STRING ? H5Tis_variable_str(ft) : -1;
  if (one && vlen > 0) {
    hid_t t = vlen_string();
    char *s = NULL;
    if (H5Aread(a, t, &s) >= 0 && s) {
      *out = strdup(s);
      H5free_memory(s);
      rc = *out ? 0 : -1;
    }
    H5Tclose(t);
  } else if (one && vlen == 0) {
    /* Read as stored (a string's character set is not converted). */
    const size_t n = H5Tget_size(ft);
    char *s = n > 0 && n < ((size_t)1 << 30) ? calloc(n + 1, 1) : NULL;
    if (s && H5Aread(a, ft, s) >= 0) {
      *out = s;
      s = NULL;
      rc = 0;
    }
    free(s);
  }
  if (sp >= 0) H5Sclose(sp);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(a);
  return rc;
}

int strata_h5_get_i64(hid_t obj, const char *name, int64_t *out)
{
  return get(obj, name, H5T_NATIVE_INT64, out);
}

int strata_h5_get_u64(hid_t obj, const char *name, uint64_t *out)
{
  return get(obj, name, H5T_NATIVE_UINT64, out);
}

int strata_h5_get_f64(hid_t obj, const char *name, double *out)
{
  return get(obj, name, H5T_NATIVE_DOUBLE, out);
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
  H5L_info_t li;
  if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0) return -1;
  if (li.type != H5L_TYPE_HARD) {
    snprintf(detail, sizeof detail, "/%s is a%s link (strata follows only hard links)", name,
             li.type == H5L_TYPE_SOFT ? " soft" : li.type == H5L_TYPE_EXTERNAL ? "n external"
                                                                               : " user-defined");
    return -1;
  }
  hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
  if (o >= 0 && H5Iget_type(o) != kind) {
    snprintf(detail, sizeof detail, "/%s is not a %s", name,
             kind == H5I_GROUP ? "group" : "dataset");
    H5Oclose(o);
    return -1;
  }
  return o;
}

int strata_h5_read_array(hid_t loc, const char *name, hid_t type, size_t n, void *data)
{
  hid_t d = strata_h5_open(loc, name, H5I_DATASET);
  if (d < 0) return -1;
  hid_t space = H5Dget_space(d);
  hssize_t have = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  uint64_t sum = 0;
  int rc = -1;
  if (have < 0 || (size_t)have != n) {
    snprintf(detail, sizeof detail, "%lld elements where %zu were expected", (long long)have, n);
  } else if (strata_h5_get_u64(d, "checksum", &sum) == 0 &&
             (n == 0 || H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0)) {
    if (strata_h5_checksum(data, n) == sum) rc = 0;
    else snprintf(detail, sizeof detail, "checksum mismatch: the data is damaged");
  }
  if (space >= 0) H5Sclose(space);
  H5Dclose(d);
  return rc;
}
