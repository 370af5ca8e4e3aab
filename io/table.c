#include "table.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "h5util.h"
#include "ownfile.h"
#include "usercode.h"

/* --- the `tables =` list ---------------------------------------------------------- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* [*b, *e) without the blanks at either end. */
static void trim(const char **b, const char **e)
{
  while (*b < *e && is_blank(**b)) (*b)++;
  while (*e > *b && is_blank((*e)[-1])) (*e)--;
}

static int is_identifier(const char *s, size_t len)
{
  if (len == 0 || isdigit((unsigned char)s[0])) return 0;
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
  return 1;
}

int strata_tables_parse(const char *spec, strata_table_spec *out, int max, int *n,
                        const char *where)
{
  *n = 0;
  if (!where) where = "tables";
  if (!spec) spec = "";
  const int limit = max < STRATA_MAX_TABLES ? max : STRATA_MAX_TABLES;
  const char *p = spec;
  while (is_blank(*p)) p++;
  if (!*p) return STRATA_OK;
  for (int entry = 1;; entry++) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *b = p, *e = end;
    trim(&b, &e);
    const int len = (int)(e - b);
    if (len == 0)
      return strata_error(STRATA_EINVAL, "%s: entry %d is empty (expected name=file:/dataset)",
                          where, entry);
    if (*n >= limit)
      return strata_error(STRATA_EINVAL, "%s: '%.*s': more than %d tables", where, len, b, limit);
    const char *eq = memchr(b, '=', (size_t)len);
    if (!eq)
      return strata_error(STRATA_EINVAL, "%s: '%.*s': expected name=file:/dataset", where, len,
                          b);
    const char *nb = b, *ne = eq;
    trim(&nb, &ne);
    const int nlen = (int)(ne - nb);
    if (nlen == 0)
      return strata_error(STRATA_EINVAL, "%s: '%.*s': the table has no name", where, len, b);
    if (!is_identifier(nb, (size_t)nlen))
      return strata_error(STRATA_EINVAL,
                          "%s: table name '%.*s' is not a C identifier (letters, digits and _, "
                          "not starting with a digit)", where, nlen, nb);
    if (nlen > STRATA_TABLE_NAME_MAX)
      return strata_error(STRATA_EINVAL, "%s: table name '%.*s' is longer than %d characters",
                          where, nlen, nb, STRATA_TABLE_NAME_MAX);
    for (int k = 0; k < *n; k++)
      if ((int)strlen(out[k].name) == nlen && !memcmp(out[k].name, nb, (size_t)nlen))
        return strata_error(STRATA_EINVAL, "%s: table name '%.*s' is given twice", where, nlen,
                            nb);
    /* The last ':' separates: a file name may hold one, a dataset path
     * hardly ever does. */
    const char *rb = eq + 1, *re = e, *colon = NULL;
    for (const char *c = rb; c < re; c++)
      if (*c == ':') colon = c;
    if (!colon)
      return strata_error(STRATA_EINVAL, "%s: table %.*s: '%.*s': expected file:/dataset (no ':')",
                          where, nlen, nb, (int)(re - rb), rb);
    const char *fb = rb, *fe = colon, *db = colon + 1, *de = re;
    trim(&fb, &fe);
    trim(&db, &de);
    if (fe == fb)
      return strata_error(STRATA_EINVAL, "%s: table %.*s: no file name before ':'", where, nlen,
                          nb);
    if (de == db)
      return strata_error(STRATA_EINVAL, "%s: table %.*s: no dataset path after '%.*s:'", where,
                          nlen, nb, (int)(fe - fb), fb);
    if (fe - fb >= STRATA_TABLE_FILE_MAX || de - db >= STRATA_TABLE_DSET_MAX)
      return strata_error(STRATA_EINVAL, "%s: table %.*s: file name or dataset path too long",
                          where, nlen, nb);
    strata_table_spec *s = &out[*n];
    memcpy(s->name, nb, (size_t)nlen);
    s->name[nlen] = '\0';
    memcpy(s->file, fb, (size_t)(fe - fb));
    s->file[fe - fb] = '\0';
    memcpy(s->dataset, db, (size_t)(de - db));
    s->dataset[de - db] = '\0';
    (*n)++;
    if (!*end) return STRATA_OK;
    p = end + 1;
  }
}

/* --- loading ---------------------------------------------------------------------- */

struct strata_table_set {
  int n;
  strata_table t[STRATA_MAX_TABLES];
  char names[STRATA_MAX_TABLES][STRATA_TABLE_NAME_MAX + 1];
  const char *name_of[STRATA_MAX_TABLES];
  double *mem[STRATA_MAX_TABLES]; /* NULL where table k shares an earlier one's */
  size_t doubles[STRATA_MAX_TABLES];
  size_t bytes;
};

/* Every message about a table names it, its file and its dataset. */
STRATA_PRINTF(3, 4)
static int fail(int code, const strata_table_spec *s, const char *fmt, ...)
{
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return strata_error(code, "table %s (%s:%s): %s", s->name, s->file, s->dataset, why);
}

/* Reads attribute name of obj, which must hold exactly n numbers
 * (integers or floating point, converted), into out[0..n-1]. */
static int read_attr(const strata_table_spec *s, hid_t obj, const char *name, hssize_t n,
                     double *out)
{
  if (strata_h5_get_numbers(obj, name, (size_t)n, out) == 0) return STRATA_OK;
  return fail(STRATA_EINVAL, s, "%s", strata_h5_detail());
}

/* One axis' grid: the array attribute `ax` (n values, strictly increasing)
 * into grid, or the scalars `ax`0 and `ax`1 (default 0 and 1) with *uniform
 * set.  *lo and *hi are the ends either way. */
static int read_axis(const strata_table_spec *s, hid_t d, const char *ax, hsize_t n,
                     double *grid, int *uniform, double *lo, double *hi)
{
  char n0[8], n1[8];
  snprintf(n0, sizeof n0, "%s0", ax);
  snprintf(n1, sizeof n1, "%s1", ax);
  const htri_t has = H5Aexists(d, ax), has0 = H5Aexists(d, n0), has1 = H5Aexists(d, n1);
  if (has < 0 || has0 < 0 || has1 < 0)
    return fail(STRATA_EIO, s, "cannot read the attributes: %s", strata_h5_detail());
  int rc;
  if (has > 0) {
    /* Two grids that could disagree: refuse rather than pick one. */
    if (has0 > 0 || has1 > 0)
      return fail(STRATA_EINVAL, s, "attributes %s and %s/%s are both given (use one)", ax, n0,
                  n1);
    if ((rc = read_attr(s, d, ax, (hssize_t)n, grid)) != STRATA_OK) return rc;
    for (hsize_t i = 0; i < n; i++) {
      if (!isfinite(grid[i]))
        return fail(STRATA_EINVAL, s, "attribute %s: %s[%llu] = %g is not finite", ax, ax,
                    (unsigned long long)i, grid[i]);
      if (i > 0 && !(grid[i] > grid[i - 1]))
        return fail(STRATA_EINVAL, s,
                    "attribute %s is not strictly increasing: %s[%llu] = %.17g after %.17g", ax,
                    ax, (unsigned long long)i, grid[i], grid[i - 1]);
    }
    *uniform = 0;
    *lo = grid[0];
    *hi = grid[n - 1];
    return STRATA_OK;
  }
  double a = 0.0, b = 1.0;
  if (has0 > 0 && (rc = read_attr(s, d, n0, 1, &a)) != STRATA_OK) return rc;
  if (has1 > 0 && (rc = read_attr(s, d, n1, 1, &b)) != STRATA_OK) return rc;
  if (!isfinite(a) || !isfinite(b))
    return fail(STRATA_EINVAL, s, "attribute %s = %g is not finite", isfinite(a) ? n1 : n0,
                isfinite(a) ? b : a);
  if (!(b > a))
    return fail(STRATA_EINVAL, s, "attribute %s = %.17g is not greater than %s = %.17g%s", n1, b,
                n0, a, has0 > 0 && has1 > 0 ? "" : " (an absent one is 0 or 1)");
  /* The prelude divides by the step: it must be a positive finite number. */
  const double h = (b - a) / (double)(n - 1);
  if (!isfinite(h) || !(h > 0.0))
    return fail(STRATA_EINVAL, s, "the step (%s - %s)/(%llu - 1) = %g is not a positive finite "
                "number", n1, n0, (unsigned long long)n, h);
  *uniform = 1;
  *lo = a;
  *hi = b;
  return STRATA_OK;
}

/* That dataset d holds numbers (integers or floating point), 1-D or 2-D:
 * its rank. */
static int dataset_shape(const strata_table_spec *s, hid_t d, int *rank)
{
  const hid_t type = H5Dget_type(d), space = type >= 0 ? H5Dget_space(d) : -1;
  int rc = STRATA_OK;
  if (type < 0 || space < 0) {
    rc = fail(STRATA_EIO, s, "cannot read the dataset: %s", strata_h5_detail());
  } else {
    const H5T_class_t cls = H5Tget_class(type);
    const H5S_class_t sc = H5Sget_simple_extent_type(space);
    *rank = sc == H5S_SIMPLE ? H5Sget_simple_extent_ndims(space) : 0;
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
      rc = fail(STRATA_EINVAL, s, "the dataset holds %s, not numbers", strata_h5_class_name(cls));
    else if (sc != H5S_SIMPLE)
      rc = fail(STRATA_EINVAL, s, "the dataset is %s (tables are 1-D or 2-D)",
                sc == H5S_SCALAR ? "a scalar" : "empty");
    else if (*rank < 1 || *rank > 2)
      rc = fail(STRATA_EINVAL, s, "the dataset has rank %d (tables are 1-D or 2-D)", *rank);
  }
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  return rc;
}

/* Table s's dataset in file f, opened into *d (closed by the caller
 * however this ends): numbers, 1-D or 2-D, of a size the file can hold
 * (h5util.h), reached by hard links only, with 2 to INT_MAX points along
 * each axis: its rank and dims. */
static int open_dataset(const strata_table_spec *s, hid_t f, hid_t *d, int *rank,
                        hsize_t dims[2])
{
  *d = strata_h5_open(f, s->dataset, H5I_DATASET);
  if (*d < 0) return fail(STRATA_EINVAL, s, "%s", strata_h5_detail());
  int rc = dataset_shape(s, *d, rank);
  if (rc != STRATA_OK) return rc;
  H5Oclose(*d);
  *d = strata_h5_open_data(f, s->dataset, H5T_NO_CLASS, *rank, dims, NULL);
  if (*d < 0) return fail(STRATA_EINVAL, s, "%s", strata_h5_detail());
  for (int a = 0; a < *rank; a++)
    if (dims[a] < 2 || dims[a] > INT_MAX)
      return fail(STRATA_EINVAL, s, "the dataset has %llu point%s along axis %d (2 to %d "
                  "needed)", (unsigned long long)dims[a], dims[a] == 1 ? "" : "s", a, INT_MAX);
  return STRATA_OK;
}

/* That the nv values of a table of rank rank (ny per row) are finite. */
static int check_finite(const strata_table_spec *s, const double *v, size_t nv, int rank,
                        size_t ny)
{
  for (size_t k = 0; k < nv; k++) {
    if (isfinite(v[k])) continue;
    if (rank == 1) return fail(STRATA_EINVAL, s, "value [%zu] = %g is not finite", k, v[k]);
    return fail(STRATA_EINVAL, s, "value [%zu][%zu] = %g is not finite", k / ny, k % ny, v[k]);
  }
  return STRATA_OK;
}

/* Reads table s into *t, its values and grids into one block *mem. */
static int load_one(const strata_table_spec *s, strata_table *t, double **mem, size_t *ndoubles)
{
  *mem = NULL;
  strata_h5_begin();
  /* Data the integrand computes with, from a file no one else could have
   * written, checked on the descriptor that HDF5 then reads (ownfile.h):
   * a FIFO is refused, never waited on. */
  int failed;
  hid_t f = strata_ownfile_h5open(s->file, H5F_ACC_RDONLY, H5P_DEFAULT, "file", "",
                                  STRATA_TRUST_NOT_WRITABLE, &failed);
  if (f < 0 && failed == STRATA_OWNFILE_REFUSED) {
    char why[STRATA_TABLE_FILE_MAX + 256];
    snprintf(why, sizeof why, "%s", strata_last_error());
    /* "FILE: why": the table's message names the file already. */
    const size_t n = strlen(s->file);
    const int named = !strncmp(why, s->file, n) && !strncmp(why + n, ": ", 2);
    return fail(STRATA_EIO, s, "%s", named ? why + n + 2 : why);
  }
  if (f < 0 && failed == STRATA_OWNFILE_NOT_HDF5) return fail(STRATA_EIO, s, "not an HDF5 file");
  if (f < 0) return fail(STRATA_EIO, s, "cannot open the file: %s", strata_h5_detail());

  hid_t d = -1;
  double *block = NULL, *grids = NULL;
  hsize_t dims[2] = {1, 1};
  int rank = 2;
  int rc = open_dataset(s, f, &d, &rank, dims);
  if (rc != STRATA_OK) goto done;
  const size_t nx = (size_t)dims[0], ny = (size_t)dims[1];
  if (nx > (SIZE_MAX / sizeof(double) - nx - ny) / ny) {
    rc = fail(STRATA_ENOMEM, s, "%zu x %zu values do not fit in memory", nx, ny);
    goto done;
  }
  grids = malloc((nx + ny) * sizeof(double));
  if (!grids) {
    rc = fail(STRATA_ENOMEM, s, "no memory for the grid");
    goto done;
  }
  int ux = 1, uy = 1;
  memset(t, 0, sizeof *t);
  rc = read_axis(s, d, "x", dims[0], grids, &ux, &t->x0, &t->x1);
  if (rc == STRATA_OK && rank == 2)
    rc = read_axis(s, d, "y", dims[1], grids + nx, &uy, &t->y0, &t->y1);
  if (rc != STRATA_OK) goto done;
  /* One block: the values, then the grid arrays of the non-uniform axes. */
  const size_t nv = nx * ny, gx = ux ? 0 : nx, gy = uy ? 0 : ny;
  block = malloc((nv + gx + gy) * sizeof(double));
  if (!block) {
    rc = fail(STRATA_ENOMEM, s, "no memory for %zu values", nv);
    goto done;
  }
  if (H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, block) < 0) {
    rc = fail(STRATA_EIO, s, "cannot read the values: %s", strata_h5_detail());
    goto done;
  }
  if ((rc = check_finite(s, block, nv, rank, ny)) != STRATA_OK) goto done;
  memcpy(block + nv, grids, gx * sizeof(double));
  memcpy(block + nv + gx, grids + nx, gy * sizeof(double));
  t->v = block;
  t->x = gx ? block + nv : NULL;
  t->y = gy ? block + nv + gx : NULL;
  t->nx = (int)nx;
  t->ny = (int)ny;
  t->rank = rank;
  *mem = block;
  *ndoubles = nv + gx + gy;
  block = NULL;
done:
  free(grids);
  free(block);
  if (d >= 0) H5Oclose(d);
  H5Fclose(f);
  return rc;
}

int strata_tables_load(const strata_table_spec *spec, int n, strata_table_set **out)
{
  *out = NULL;
  if (n < 0 || n > STRATA_MAX_TABLES || (n > 0 && !spec))
    return strata_error(STRATA_EINVAL, "tables: %d tables (at most %d)", n, STRATA_MAX_TABLES);
  strata_table_set *set = calloc(1, sizeof *set);
  if (!set) return strata_error(STRATA_ENOMEM, "tables: no memory");
  for (int k = 0; k < n; k++) {
    snprintf(set->names[k], sizeof set->names[k], "%s", spec[k].name);
    set->name_of[k] = set->names[k];
    int same = -1;
    for (int i = 0; i < k && same < 0; i++)
      if (!strcmp(spec[i].file, spec[k].file) && !strcmp(spec[i].dataset, spec[k].dataset))
        same = i;
    if (same >= 0) {
      set->t[k] = set->t[same];
      set->doubles[k] = set->doubles[same];
    } else {
      int rc = load_one(&spec[k], &set->t[k], &set->mem[k], &set->doubles[k]);
      if (rc != STRATA_OK) {
        strata_tables_free(set);
        return rc;
      }
      set->bytes += set->doubles[k] * sizeof(double);
    }
    set->n = k + 1;
  }
  *out = set;
  return STRATA_OK;
}

void strata_tables_free(strata_table_set *set)
{
  if (!set) return;
  for (int k = 0; k < STRATA_MAX_TABLES; k++) free(set->mem[k]);
  free(set);
}

int strata_tables_count(const strata_table_set *set) { return set ? set->n : 0; }

const strata_table *strata_tables_array(const strata_table_set *set)
{
  return set && set->n ? set->t : NULL;
}

const char *const *strata_tables_names(const strata_table_set *set)
{
  return set ? set->name_of : NULL;
}

const char *strata_tables_name(const strata_table_set *set, int k)
{
  return set && k >= 0 && k < set->n ? set->names[k] : NULL;
}

size_t strata_tables_doubles(const strata_table_set *set, int k)
{
  return set && k >= 0 && k < set->n ? set->doubles[k] : 0;
}

size_t strata_tables_bytes(const strata_table_set *set) { return set ? set->bytes : 0; }

uint64_t strata_tables_hash(const strata_table_set *set)
{
  uint64_t h = UINT64_C(14695981039346656037);
  const int n = strata_tables_count(set);
  for (int k = 0; k < n; k++) {
    const strata_table *t = &set->t[k];
    /* The shape and which grids are arrays, so that equal bytes laid out
     * differently hash differently. */
    const int64_t shape[5] = {t->rank, t->nx, t->ny, t->x != NULL, t->y != NULL};
    const double ends[4] = {t->x0, t->x1, t->y0, t->y1};
    h = strata_h5_checksum_from(h, shape, 5);
    h = strata_h5_checksum_from(h, ends, 4);
    h = strata_h5_checksum_from(h, t->v, (size_t)t->nx * (size_t)t->ny);
    if (t->x) h = strata_h5_checksum_from(h, t->x, (size_t)t->nx);
    if (t->y) h = strata_h5_checksum_from(h, t->y, (size_t)t->ny);
  }
  return h;
}

/* ---- the public face: a caller's tables for its source ---------------------------- */

int strata_tables_read(const char *spec, const char *dir, const char *where,
                       strata_table_set **out)
{
  if (!out) return strata_error_null(__func__, "place for the tables");
  *out = NULL;
  static _Thread_local strata_table_spec entries[STRATA_MAX_TABLES];
  if (!where) where = "tables";
  int n = 0;
  int rc = strata_tables_parse(spec ? spec : "", entries, STRATA_MAX_TABLES, &n, where);
  for (int i = 0; rc == STRATA_OK && i < n; i++) {
    strata_table_spec *e = &entries[i];
    if (!dir || !dir[0] || e->file[0] == '/') continue;
    char path[STRATA_TABLE_FILE_MAX];
    const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", dir, sep, e->file) >= sizeof path)
      rc = strata_error(STRATA_EINVAL, "%s: table %s: %s under a directory of %zu characters "
                        "is too long a path (at most %d)", where, e->name, e->file, strlen(dir),
                        STRATA_TABLE_FILE_MAX - 1);
    else
      memcpy(e->file, path, sizeof path);
  }
  if (rc == STRATA_OK) rc = strata_tables_load(entries, n, out);
  if (rc == STRATA_OK) return rc;
  /* Every message names the text it came from, once. */
  char msg[2 * STRATA_TABLE_FILE_MAX];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  if (strncmp(msg, where, strlen(where))) return strata_error(rc, "%s: %s", where, msg);
  return rc;
}

int strata_problem_set_tables(strata_problem *pr, strata_source *s, const strata_table_set *t)
{
  if (!pr || !s || !t)
    return strata_error(STRATA_EINVAL, "strata_problem_set_tables: no problem, source or tables");
  int n = strata_tables_count(t);
  int rc = strata_source_set_tables(s, strata_tables_names(t), n, strata_tables_hash(t));
  if (rc != STRATA_OK) return rc;
  pr->tables = strata_tables_array(t);
  pr->ntables = n;
  return STRATA_OK;
}
