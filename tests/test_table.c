/* Tables for user integrands: the `tables =` parser, the HDF5 loader (on
 * files written here with the HDF5 API) and the prelude's interpolation,
 * which must reproduce linear and bilinear data, give stored values at
 * grid points, clamp outside, and converge at second order.  The prelude
 * is also compiled as a user's integrand would be: strict C11 by cc and,
 * where CUDA is installed, by NVRTC. */
#include <dlfcn.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "strata/integrand.h"
#include "table.h"
#include "testutil.h"

static char dir[256];

static void make_dir(void) { test_tmpdir(dir, sizeof dir, "table"); }
static void remove_dir(void) { test_rmdir(dir); }

static const char *path_in(const char *name)
{
  static char buf[8][400];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, sizeof buf[0], "%s/%s", dir, name);
  return p;
}

/* --- writing test files ------------------------------------------------------------- */

/* Opens name in dir for writing, creating it the first time. */
static hid_t h5_open(const char *name)
{
  const char *p = path_in(name);
  hid_t f = access(p, F_OK) == 0 ? H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT)
                                 : H5Fcreate(p, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert(f >= 0);
  return f;
}

/* A dataset at path (groups created on the way) of file type ftype from
 * data in memory type mtype; rank 0 is a scalar.  Returns it open. */
static hid_t put_ds(hid_t f, const char *path, hid_t ftype, hid_t mtype, int rank,
                    const hsize_t *dims, const void *data)
{
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
  hid_t d = H5Dcreate2(f, path, ftype, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert(d >= 0);
  ck_assert(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Sclose(sp);
  H5Pclose(lcpl);
  return d;
}

/* An attribute of n doubles (n == 0: a scalar) stored as ftype. */
static void put_attr(hid_t obj, const char *name, hid_t ftype, int n, const double *v)
{
  hsize_t dn = (hsize_t)n;
  hid_t sp = n ? H5Screate_simple(1, &dn, NULL) : H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert(a >= 0);
  ck_assert(H5Awrite(a, H5T_NATIVE_DOUBLE, v) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}

static void put_scalar(hid_t obj, const char *name, double v)
{
  put_attr(obj, name, H5T_IEEE_F64LE, 0, &v);
}

/* A 1-D double dataset of n values f(x_i), closed; the grid is x (n
 * values, stored as the attribute x) or, with x NULL, uniform from a to b
 * (stored as x0 and x1). */
static void put_1d(const char *file, const char *ds, int n, const double *x, double a, double b,
                   double (*f)(double))
{
  double *v = malloc((size_t)n * sizeof *v);
  for (int i = 0; i < n; i++) v[i] = f(x ? x[i] : a + i * ((b - a) / (n - 1)));
  hid_t fh = h5_open(file);
  hsize_t dims[1] = {(hsize_t)n};
  hid_t d = put_ds(fh, ds, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, v);
  if (x) {
    put_attr(d, "x", H5T_IEEE_F64LE, n, x);
  } else {
    put_scalar(d, "x0", a);
    put_scalar(d, "x1", b);
  }
  H5Dclose(d);
  H5Fclose(fh);
  free(v);
}

/* The same in 2-D: v[i][j] = f(x_i, y_j). */
static void put_2d(const char *file, const char *ds, int nx, int ny, const double *x,
                   const double *y, const double ext[4], double (*f)(double, double))
{
  double *v = malloc((size_t)nx * (size_t)ny * sizeof *v);
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++)
      v[i * ny + j] = f(x ? x[i] : ext[0] + i * ((ext[1] - ext[0]) / (nx - 1)),
                        y ? y[j] : ext[2] + j * ((ext[3] - ext[2]) / (ny - 1)));
  hid_t fh = h5_open(file);
  hsize_t dims[2] = {(hsize_t)nx, (hsize_t)ny};
  hid_t d = put_ds(fh, ds, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dims, v);
  if (x) {
    put_attr(d, "x", H5T_IEEE_F64LE, nx, x);
  } else {
    put_scalar(d, "x0", ext[0]);
    put_scalar(d, "x1", ext[1]);
  }
  if (y) {
    put_attr(d, "y", H5T_IEEE_F64LE, ny, y);
  } else {
    put_scalar(d, "y0", ext[2]);
    put_scalar(d, "y1", ext[3]);
  }
  H5Dclose(d);
  H5Fclose(fh);
  free(v);
}

/* Loads "name=<dir>/file:ds" alone. */
static int load1(const char *name, const char *file, const char *ds, strata_table_set **set)
{
  strata_table_spec s;
  memset(&s, 0, sizeof s);
  snprintf(s.name, sizeof s.name, "%s", name);
  snprintf(s.file, sizeof s.file, "%s", path_in(file));
  snprintf(s.dataset, sizeof s.dataset, "%s", ds);
  return strata_tables_load(&s, 1, set);
}

static const strata_table *load_ok(const char *file, const char *ds, strata_table_set **set)
{
  int rc = load1("t", file, ds, set);
  ck_assert_msg(rc == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(strata_tables_count(*set), 1);
  return &strata_tables_array(*set)[0];
}

static double lin(double x) { return 3.0 + 2.0 * x; }
/* Kept away from 0, so that a relative error says something. */
static double bilin(double x, double y) { return 20.0 + 2.0 * x - 3.0 * y + 0.5 * x * y; }

/* Deterministic points in [a, b]. */
static double point(int k, int n, double a, double b) { return a + (b - a) * (k + 0.37) / n; }

static void assert_rel(double got, double want, double tol, const char *what)
{
  ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: %.17g, expected %.17g", what, got,
                want);
}

/* --- the parser --------------------------------------------------------------------- */

START_TEST(test_parse)
{
  strata_table_spec s[STRATA_MAX_TABLES];
  int n = -1;
  ck_assert_int_eq(strata_tables_parse("", s, STRATA_MAX_TABLES, &n, "j"), STRATA_OK);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(strata_tables_parse("  \t", s, STRATA_MAX_TABLES, &n, "j"), STRATA_OK);
  ck_assert_int_eq(n, 0);
  const char *spec = " pdf=data/pdf.h5:/f ,  B_2 = /abs/g.h5 : /grp/sub/ds,c=a:b.h5:d";
  ck_assert_msg(strata_tables_parse(spec, s, STRATA_MAX_TABLES, &n, "j") == STRATA_OK, "%s",
                strata_last_error());
  ck_assert_int_eq(n, 3);
  ck_assert_str_eq(s[0].name, "pdf");
  ck_assert_str_eq(s[0].file, "data/pdf.h5");
  ck_assert_str_eq(s[0].dataset, "/f");
  ck_assert_str_eq(s[1].name, "B_2");
  ck_assert_str_eq(s[1].file, "/abs/g.h5");
  ck_assert_str_eq(s[1].dataset, "/grp/sub/ds");
  /* The last ':' separates. */
  ck_assert_str_eq(s[2].file, "a:b.h5");
  ck_assert_str_eq(s[2].dataset, "d");
  /* 31 characters is the longest name. */
  char name31[64];
  memset(name31, 'a', 31);
  snprintf(name31 + 31, sizeof name31 - 31, "=f:/d");
  ck_assert_int_eq(strata_tables_parse(name31, s, STRATA_MAX_TABLES, &n, "j"), STRATA_OK);
  ck_assert_int_eq((int)strlen(s[0].name), 31);
  /* As many as allowed. */
  char many[1024] = "";
  for (int k = 0; k < STRATA_MAX_TABLES; k++)
    snprintf(many + strlen(many), sizeof many - strlen(many), "%st%d=f.h5:/d%d", k ? "," : "",
             k, k);
  ck_assert_int_eq(strata_tables_parse(many, s, STRATA_MAX_TABLES, &n, "j"), STRATA_OK);
  ck_assert_int_eq(n, STRATA_MAX_TABLES);
  ck_assert_str_eq(s[STRATA_MAX_TABLES - 1].dataset, "/d15");
}
END_TEST

START_TEST(test_parse_errors)
{
  char name32[64], many[1024] = "";
  memset(name32, 'a', 32);
  snprintf(name32 + 32, sizeof name32 - 32, "=f:/d");
  for (int k = 0; k <= STRATA_MAX_TABLES; k++)
    snprintf(many + strlen(many), sizeof many - strlen(many), "%st%d=f.h5:/d", k ? "," : "", k);
  const struct {
    const char *spec, *says;
  } bad[] = {
      {"=f.h5:/d", "no name"},
      {" = f.h5:/d", "no name"},
      {"1a=f.h5:/d", "'1a' is not a C identifier"},
      {"a-b=f.h5:/d", "'a-b' is not a C identifier"},
      {"a b=f.h5:/d", "'a b' is not a C identifier"},
      {name32, "longer than 31"},
      {"a=f.h5:/d, b=g.h5:/e, a=h.h5:/e", "'a' is given twice"},
      {"a=f.h5", "no ':'"},
      {"a=f.h5:", "no dataset path"},
      {"a=f.h5:  ", "no dataset path"},
      {"a=:/d", "no file name"},
      {"a f.h5:/d", "expected name=file:/dataset"},
      {"a=f.h5:/d,", "entry 2 is empty"},
      {",a=f.h5:/d", "entry 1 is empty"},
      {"a=f.h5:/d,,b=f.h5:/e", "entry 2 is empty"},
      {many, "more than 16 tables"},
  };
  strata_table_spec s[STRATA_MAX_TABLES];
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    int n = 0;
    int rc = strata_tables_parse(bad[k].spec, s, STRATA_MAX_TABLES, &n, "job.ini: integral.tables");
    ck_assert_msg(rc == STRATA_EINVAL, "'%s' accepted", bad[k].spec);
    const char *m = strata_last_error();
    ck_assert_msg(!strncmp(m, "job.ini: integral.tables: ", 26) && strstr(m, bad[k].says),
                  "'%s': message '%s' lacks '%s'", bad[k].spec, m, bad[k].says);
    ck_assert_msg(!strchr(m, '\n'), "'%s': message on more than one line", m);
  }
  /* The caller's room is a limit too. */
  int n = 0;
  ck_assert_int_eq(strata_tables_parse("a=f:/d,b=f:/d,c=f:/d", s, 2, &n, "w"), STRATA_EINVAL);
  ck_assert_msg(strstr(strata_last_error(), "more than 2 tables"), "%s", strata_last_error());
}
END_TEST

/* --- loading and interpolation ------------------------------------------------------ */

START_TEST(test_1d_uniform)
{
  make_dir();
  const int n = 9;
  const double a = 1.0, b = 5.0, h = (b - a) / (n - 1);
  put_1d("u.h5", "/lin", n, NULL, a, b, lin);
  strata_table_set *set;
  const strata_table *t = load_ok("u.h5", "/lin", &set);
  ck_assert_int_eq(t->rank, 1);
  ck_assert_int_eq(t->nx, n);
  ck_assert_int_eq(t->ny, 1);
  ck_assert(t->x == NULL && t->y == NULL);
  ck_assert(t->x0 == a && t->x1 == b);
  ck_assert_str_eq(strata_tables_name(set, 0), "t");
  ck_assert_str_eq(strata_tables_names(set)[0], "t");
  ck_assert_uint_eq(strata_tables_doubles(set, 0), (size_t)n);
  ck_assert_uint_eq(strata_tables_bytes(set), (size_t)n * sizeof(double));
  for (int i = 0; i < n; i++) {
    const double xi = a + i * h;
    ck_assert(t->v[i] == lin(xi));
    ck_assert(strata_table_at(t, i, 0) == lin(xi));
    /* At a grid point: the stored value, exactly. */
    ck_assert_msg(strata_interp1(t, xi) == t->v[i], "node %d: %.17g", i, strata_interp1(t, xi));
  }
  for (int k = 0; k < 1000; k++) {
    const double x = point(k, 1000, a, b);
    assert_rel(strata_interp1(t, x), lin(x), 1e-15, "linear data");
  }
  /* Clamped: the end values outside, and exactly at the ends. */
  ck_assert(strata_interp1(t, a) == t->v[0]);
  ck_assert(strata_interp1(t, b) == t->v[n - 1]);
  ck_assert(strata_interp1(t, a - 10.0) == t->v[0]);
  ck_assert(strata_interp1(t, b + 1e-12) == t->v[n - 1]);
  ck_assert(strata_interp1(t, 1e300) == t->v[n - 1]);
  ck_assert(strata_interp1(t, -INFINITY) == t->v[0]);
  /* Just inside the last interval: no read past the end. */
  assert_rel(strata_interp1(t, nextafter(b, 0.0)), lin(b), 1e-15, "last interval");
  ck_assert(isnan(strata_interp1(t, NAN)));
  strata_tables_free(set);

  /* Grids where (x_i - x0) / h rounds to just below i at some nodes: the
   * stored value all the same. */
  const double ends[][2] = {{0.1, 0.7}, {0.1, 1.9}, {-1.3, 2.9}, {0.35, 5.1}};
  const int sizes[] = {11, 17, 33, 101};
  for (int e = 0; e < 4; e++)
    for (int s = 0; s < 4; s++) {
      const int m = sizes[s];
      const double lo = ends[e][0], hi = ends[e][1], step = (hi - lo) / (m - 1);
      char ds[16];
      snprintf(ds, sizeof ds, "/g%d_%d", e, m);
      put_1d("u.h5", ds, m, NULL, lo, hi, sin);
      t = load_ok("u.h5", ds, &set);
      for (int i = 0; i < m; i++) {
        const double xi = lo + i * step;
        ck_assert_msg(strata_interp1(t, xi) == t->v[i], "[%g, %g] n %d node %d", lo, hi, m, i);
        /* Just below a node: the interval before it, with a weight not
         * below 0 (which would extrapolate from the wrong interval) and
         * not above 1 but by rounding. */
        double w;
        const int k = strata_table_locate_(m, NULL, lo, hi, nextafter(xi, -INFINITY), &w);
        ck_assert_msg(k == (i ? i - 1 : 0) && w >= 0.0 && w <= 1.0 + 1e-14,
                      "[%g, %g] n %d below node %d: interval %d, weight %.17g", lo, hi, m, i, k, w);
      }
      strata_tables_free(set);
    }
  remove_dir();
}
END_TEST

START_TEST(test_1d_nonuniform)
{
  make_dir();
  const double x[] = {-0.5, -0.4, 0.0, 0.01, 0.6, 2.0, 3.7};
  const int n = (int)(sizeof x / sizeof x[0]);
  put_1d("n.h5", "/g/lin", n, x, 0, 0, lin);
  strata_table_set *set;
  const strata_table *t = load_ok("n.h5", "/g/lin", &set);
  ck_assert_int_eq(t->nx, n);
  ck_assert(t->x != NULL && t->y == NULL);
  ck_assert(t->x0 == x[0] && t->x1 == x[n - 1]);
  ck_assert_uint_eq(strata_tables_doubles(set, 0), 2 * (size_t)n);
  ck_assert_uint_eq(strata_tables_bytes(set), 2 * (size_t)n * sizeof(double));
  for (int i = 0; i < n; i++) {
    ck_assert(t->x[i] == x[i]);
    ck_assert(t->v[i] == lin(x[i]));
    ck_assert(strata_interp1(t, x[i]) == t->v[i]);
  }
  for (int k = 0; k < 1000; k++) {
    const double p = point(k, 1000, x[0], x[n - 1]);
    assert_rel(strata_interp1(t, p), lin(p), 1e-15, "linear data");
  }
  ck_assert(strata_interp1(t, -3.0) == t->v[0]);
  ck_assert(strata_interp1(t, 4.0) == t->v[n - 1]);
  assert_rel(strata_interp1(t, nextafter(x[n - 1], 0.0)), lin(x[n - 1]), 1e-15, "last interval");
  strata_tables_free(set);
  remove_dir();
}
END_TEST

START_TEST(test_default_grid)
{
  make_dir();
  hid_t f = h5_open("d.h5");
  const double v[4] = {1, 2, 4, 8};
  hsize_t dims[1] = {4};
  H5Dclose(put_ds(f, "/none", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, v));
  hid_t d = put_ds(f, "/only_x1", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, dims, v);
  put_scalar(d, "x1", 3.0);
  H5Dclose(d);
  H5Fclose(f);
  strata_table_set *set;
  const strata_table *t = load_ok("d.h5", "/none", &set);
  ck_assert(t->x == NULL && t->x0 == 0.0 && t->x1 == 1.0);
  ck_assert(strata_interp1(t, 0.5) == 0.5 * (v[1] + v[2]));
  strata_tables_free(set);
  t = load_ok("d.h5", "/only_x1", &set);
  ck_assert(t->x0 == 0.0 && t->x1 == 3.0);
  ck_assert(strata_interp1(t, 2.0) == v[2]);
  strata_tables_free(set);
  remove_dir();
}
END_TEST

START_TEST(test_2d)
{
  make_dir();
  const double xs[] = {-1.0, -0.25, 0.0, 1.5, 2.0};
  const double ys[] = {0.5, 0.6, 1.0, 2.5, 2.75, 4.0};
  const int nx = 5, ny = 6;
  const double ext[4] = {-1.0, 2.0, 0.5, 4.0};
  /* Each axis uniform or given as an array. */
  for (int c = 0; c < 4; c++) {
    const double *gx = c & 1 ? xs : NULL, *gy = c & 2 ? ys : NULL;
    char ds[16];
    snprintf(ds, sizeof ds, "/bilin%d", c);
    put_2d("b.h5", ds, nx, ny, gx, gy, ext, bilin);
    strata_table_set *set;
    const strata_table *t = load_ok("b.h5", ds, &set);
    ck_assert_int_eq(t->rank, 2);
    ck_assert_int_eq(t->nx, nx);
    ck_assert_int_eq(t->ny, ny);
    ck_assert((t->x != NULL) == (gx != NULL) && (t->y != NULL) == (gy != NULL));
    ck_assert(t->x0 == ext[0] && t->x1 == ext[1] && t->y0 == ext[2] && t->y1 == ext[3]);
    ck_assert_uint_eq(strata_tables_doubles(set, 0),
                      (size_t)(nx * ny + (gx ? nx : 0) + (gy ? ny : 0)));
    for (int i = 0; i < nx; i++) {
      const double xi = gx ? gx[i] : ext[0] + i * ((ext[1] - ext[0]) / (nx - 1));
      if (gx) ck_assert(t->x[i] == xs[i]);
      for (int j = 0; j < ny; j++) {
        const double yj = gy ? gy[j] : ext[2] + j * ((ext[3] - ext[2]) / (ny - 1));
        if (gy && i == 0) ck_assert(t->y[j] == ys[j]);
        ck_assert(t->v[i * ny + j] == bilin(xi, yj));
        ck_assert(strata_table_at(t, i, j) == t->v[i * ny + j]);
        ck_assert_msg(strata_interp2(t, xi, yj) == t->v[i * ny + j], "node (%d,%d) case %d", i,
                      j, c);
      }
    }
    for (int k = 0; k < 200; k++)
      for (int l = 0; l < 50; l++) {
        const double x = point(k, 200, ext[0], ext[1]), y = point(l, 50, ext[2], ext[3]);
        assert_rel(strata_interp2(t, x, y), bilin(x, y), 1e-15, "bilinear data");
      }
    /* Clamped per axis: beyond an edge, the value on that edge. */
    for (int k = 0; k < 20; k++) {
      const double x = point(k, 20, ext[0], ext[1]), y = point(k, 20, ext[2], ext[3]);
      ck_assert(strata_interp2(t, x, ext[2] - 5.0) == strata_interp2(t, x, ext[2]));
      ck_assert(strata_interp2(t, x, ext[3] + 5.0) == strata_interp2(t, x, ext[3]));
      ck_assert(strata_interp2(t, ext[0] - 1.0, y) == strata_interp2(t, ext[0], y));
      ck_assert(strata_interp2(t, 1e300, y) == strata_interp2(t, ext[1], y));
    }
    ck_assert(strata_interp2(t, -9.0, -9.0) == t->v[0]);
    ck_assert(strata_interp2(t, 9.0, 9.0) == t->v[nx * ny - 1]);
    ck_assert(strata_interp2(t, -9.0, 9.0) == t->v[ny - 1]);
    ck_assert(strata_interp2(t, 9.0, -9.0) == t->v[(nx - 1) * ny]);
    assert_rel(strata_interp2(t, nextafter(ext[1], 0.0), nextafter(ext[3], 0.0)),
               bilin(ext[1], ext[3]), 1e-15, "last cell");
    ck_assert(isnan(strata_interp2(t, 0.0, NAN)));
    strata_tables_free(set);
  }
  remove_dir();
}
END_TEST

/* Second order: doubling the points divides the largest error by 4. */
static double max_err_1d(const strata_table *t, double a, double b)
{
  double e = 0.0;
  for (int k = 0; k <= 20000; k++) {
    const double x = a + (b - a) * k / 20000.0;
    e = fmax(e, fabs(strata_interp1(t, x) - sin(x)));
  }
  return e;
}

static double sincos2(double x, double y) { return sin(x) * cos(y); }

static double max_err_2d(const strata_table *t, const double ext[4])
{
  double e = 0.0;
  for (int k = 0; k <= 300; k++)
    for (int l = 0; l <= 300; l++) {
      const double x = ext[0] + (ext[1] - ext[0]) * k / 300.0;
      const double y = ext[2] + (ext[3] - ext[2]) * l / 300.0;
      e = fmax(e, fabs(strata_interp2(t, x, y) - sincos2(x, y)));
    }
  return e;
}

START_TEST(test_convergence)
{
  make_dir();
  const double a = 0.0, b = 3.0;
  for (int nonuniform = 0; nonuniform < 2; nonuniform++) {
    double err[3];
    for (int r = 0; r < 3; r++) {
      const int n = (16 << r) + 1;
      double x[65];
      /* A smooth increasing map of a uniform grid. */
      for (int i = 0; i < n; i++) {
        const double u = (double)i / (n - 1);
        x[i] = a + (b - a) * (u + 0.1 * sin(STRATA_2PI * u) / STRATA_2PI * 5.0);
      }
      char ds[16];
      snprintf(ds, sizeof ds, "/sin%d_%d", nonuniform, n);
      put_1d("c.h5", ds, n, nonuniform ? x : NULL, a, b, sin);
      strata_table_set *set;
      const strata_table *t = load_ok("c.h5", ds, &set);
      err[r] = max_err_1d(t, a, b);
      strata_tables_free(set);
    }
    for (int r = 1; r < 3; r++) {
      const double ratio = err[r - 1] / err[r];
      ck_assert_msg(ratio > 3.6 && ratio < 4.4, "1-D %s: error %g then %g: ratio %g",
                    nonuniform ? "non-uniform" : "uniform", err[r - 1], err[r], ratio);
    }
  }
  const double ext[4] = {0.0, 2.0, -1.0, 2.0};
  double err[3];
  for (int r = 0; r < 3; r++) {
    const int n = (8 << r) + 1;
    char ds[16];
    snprintf(ds, sizeof ds, "/sc%d", n);
    put_2d("c.h5", ds, n, n + 4 * (1 << r), NULL, NULL, ext, sincos2);
    strata_table_set *set;
    const strata_table *t = load_ok("c.h5", ds, &set);
    err[r] = max_err_2d(t, ext);
    strata_tables_free(set);
  }
  for (int r = 1; r < 3; r++) {
    const double ratio = err[r - 1] / err[r];
    ck_assert_msg(ratio > 3.5 && ratio < 4.5, "2-D: error %g then %g: ratio %g", err[r - 1],
                  err[r], ratio);
  }
  remove_dir();
}
END_TEST

START_TEST(test_types)
{
  make_dir();
  hid_t f = h5_open("i.h5");
  const int iv[5] = {-3, 0, 7, 100000, -2147483647};
  const float fv[3] = {0.1f, 2.5f, -1e30f};
  const unsigned char uv[2][3] = {{0, 1, 255}, {7, 8, 9}};
  hsize_t d5[1] = {5}, d3[1] = {3}, d23[2] = {2, 3};
  /* Big-endian on disk: HDF5 converts on reading. */
  hid_t d = put_ds(f, "/int", H5T_STD_I32BE, H5T_NATIVE_INT, 1, d5, iv);
  const double xi[5] = {1, 2, 4, 8, 16};
  put_attr(d, "x", H5T_STD_I16LE, 5, xi); /* an integer grid */
  H5Dclose(d);
  H5Dclose(put_ds(f, "/float", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, 1, d3, fv));
  H5Dclose(put_ds(f, "/u8", H5T_STD_U8LE, H5T_NATIVE_UCHAR, 2, d23, uv));
  H5Fclose(f);
  strata_table_set *set;
  const strata_table *t = load_ok("i.h5", "/int", &set);
  for (int i = 0; i < 5; i++) ck_assert(t->v[i] == (double)iv[i] && t->x[i] == xi[i]);
  ck_assert(strata_interp1(t, 3.0) == 0.5 * (iv[1] + iv[2]));
  strata_tables_free(set);
  t = load_ok("i.h5", "/float", &set);
  for (int i = 0; i < 3; i++) ck_assert(t->v[i] == (double)fv[i]);
  strata_tables_free(set);
  t = load_ok("i.h5", "/u8", &set);
  ck_assert_int_eq(t->rank, 2);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) ck_assert(strata_table_at(t, i, j) == (double)uv[i][j]);
  strata_tables_free(set);
  remove_dir();
}
END_TEST

/* Several tables, one of them named twice: read once, shared. */
START_TEST(test_set)
{
  make_dir();
  put_1d("s.h5", "/a", 4, NULL, 0.0, 1.0, lin);
  put_1d("s.h5", "/b", 6, NULL, 0.0, 1.0, sin);
  char spec[2048];
  snprintf(spec, sizeof spec, "first=%s:/a, second=%s:/b, again=%s:/a", path_in("s.h5"),
           path_in("s.h5"), path_in("s.h5"));
  strata_table_spec s[STRATA_MAX_TABLES];
  int n;
  ck_assert_int_eq(strata_tables_parse(spec, s, STRATA_MAX_TABLES, &n, "w"), STRATA_OK);
  strata_table_set *set;
  ck_assert_msg(strata_tables_load(s, n, &set) == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(strata_tables_count(set), 3);
  const strata_table *t = strata_tables_array(set);
  ck_assert_int_eq(t[0].nx, 4);
  ck_assert_int_eq(t[1].nx, 6);
  ck_assert(t[2].v == t[0].v && t[2].nx == 4);
  ck_assert_str_eq(strata_tables_names(set)[2], "again");
  ck_assert_uint_eq(strata_tables_doubles(set, 2), 4);
  ck_assert_uint_eq(strata_tables_bytes(set), (4 + 6) * sizeof(double));
  /* The integrand's view: by index macro, as the compile step defines it. */
#define STRATA_TABLE_INDEX_second 1
  ck_assert(STRATA_TABLE(t, second) == &t[1]);
#undef STRATA_TABLE_INDEX_second

  /* The hash follows the data: the same data hashes the same, a change of
   * one value or of the order does not. */
  strata_table_set *same, *other, *swapped;
  ck_assert(strata_tables_load(s, n, &same) == STRATA_OK);
  ck_assert(strata_tables_hash(set) == strata_tables_hash(same));
  hid_t f = h5_open("s.h5");
  hid_t d = H5Dopen2(f, "/a", H5P_DEFAULT);
  const double v[4] = {3.0, 3.5, 4.0, 4.5 + 1e-12};
  ck_assert(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
  H5Dclose(d);
  H5Fclose(f);
  ck_assert(strata_tables_load(s, n, &other) == STRATA_OK);
  ck_assert(strata_tables_hash(set) != strata_tables_hash(other));
  strata_tables_free(same);
  ck_assert(strata_tables_load(s, 2, &same) == STRATA_OK);
  strata_table_spec r[2] = {s[1], s[0]};
  ck_assert(strata_tables_load(r, 2, &swapped) == STRATA_OK);
  ck_assert(strata_tables_hash(same) != strata_tables_hash(swapped));
  strata_tables_free(same);
  strata_tables_free(other);
  strata_tables_free(swapped);
  strata_tables_free(set);

  /* None at all. */
  ck_assert(strata_tables_load(NULL, 0, &set) == STRATA_OK);
  ck_assert_int_eq(strata_tables_count(set), 0);
  ck_assert_uint_eq(strata_tables_bytes(set), 0);
  strata_tables_free(set);
  remove_dir();
}
END_TEST

/* --- refusals ----------------------------------------------------------------------- */

/* The load fails with a one-line message naming the table, the file and
 * the dataset, and saying why. */
static void refused(const char *file, const char *ds, const char *says)
{
  strata_table_set *set = (strata_table_set *)&set;
  int rc = load1("tbl", file, ds, &set);
  ck_assert_msg(rc != STRATA_OK, "%s:%s accepted", file, ds);
  ck_assert(set == NULL);
  const char *m = strata_last_error();
  ck_assert_msg(strstr(m, "tbl") && strstr(m, path_in(file)) && strstr(m, ds) &&
                    strstr(m, says) && !strchr(m, '\n'),
                "%s:%s: message '%s' lacks '%s'", file, ds, m, says);
}

START_TEST(test_refused)
{
  make_dir();
  const double v4[4] = {1, 2, 3, 4}, v8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  hsize_t d1[1] = {1}, d4[1] = {4}, d222[3] = {2, 2, 2}, d41[2] = {4, 1}, d24[2] = {2, 4};
  hid_t f = h5_open("e.h5"), d;
  H5Dclose(put_ds(f, "/one", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d1, v4));
  H5Dclose(put_ds(f, "/cube", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, d222, v8));
  H5Dclose(put_ds(f, "/scalar", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, v4));
  H5Dclose(put_ds(f, "/column", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d41, v4));
  H5Gclose(H5Gcreate2(f, "/grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  /* Strings and compounds are not numbers. */
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, 4);
  H5Dclose(put_ds(f, "/str", str, str, 1, d4, "abcdefghijklmnop"));
  H5Tclose(str);
  typedef struct {
    double a;
    int b;
  } pair;
  hid_t cmp = H5Tcreate(H5T_COMPOUND, sizeof(pair));
  H5Tinsert(cmp, "a", HOFFSET(pair, a), H5T_NATIVE_DOUBLE);
  H5Tinsert(cmp, "b", HOFFSET(pair, b), H5T_NATIVE_INT);
  const pair pv[4] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  H5Dclose(put_ds(f, "/cmp", cmp, cmp, 1, d4, pv));
  H5Tclose(cmp);
  /* Values that are not finite. */
  const double nan4[4] = {1, 2, NAN, 4}, inf8[8] = {1, 2, 3, 4, 5, 6, 7, -INFINITY};
  H5Dclose(put_ds(f, "/nan", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, nan4));
  H5Dclose(put_ds(f, "/inf", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d24, inf8));
  /* Bad grids. */
  const struct {
    const char *ds, *attr;
    int n;
    double v[4];
  } grids[] = {
      {"/x_short", "x", 3, {0, 1, 2}},
      {"/x_flat", "x", 4, {0, 1, 1, 2}},
      {"/x_down", "x", 4, {0, 1, 3, 2}},
      {"/x_nan", "x", 4, {0, 1, NAN, 2}},
      {"/x1_low", "x1", 0, {-1}},
      {"/x1_inf", "x1", 0, {INFINITY}},
      {"/x0_vec", "x0", 2, {0, 1}},
  };
  for (size_t k = 0; k < sizeof grids / sizeof grids[0]; k++) {
    d = put_ds(f, grids[k].ds, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, v4);
    put_attr(d, grids[k].attr, H5T_IEEE_F64LE, grids[k].n, grids[k].v);
    H5Dclose(d);
  }
  d = put_ds(f, "/both", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, v4);
  put_attr(d, "x", H5T_IEEE_F64LE, 4, v4);
  put_scalar(d, "x0", 0.0);
  H5Dclose(d);
  d = put_ds(f, "/x_str", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, v4);
  {
    hid_t st = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(st, 3);
    hid_t a = H5Acreate2(d, "x", st, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, st, "abc");
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(st);
  }
  H5Dclose(d);
  d = put_ds(f, "/y_down", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d24, v8);
  const double ydown[4] = {0, 2, 1, 3};
  put_attr(d, "y", H5T_IEEE_F64LE, 4, ydown);
  H5Dclose(d);
  d = put_ds(f, "/y_equal", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d24, v8);
  put_scalar(d, "y0", 2.0);
  put_scalar(d, "y1", 2.0);
  H5Dclose(d);
  /* A dataset declaring far more than the file holds (2^40 rows of 2,
   * chunked, nothing written), and links to a good one. */
  {
    hsize_t big[2] = {(hsize_t)1 << 40, 2}, chunk[2] = {1, 2};
    hid_t sp = H5Screate_simple(2, big, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Dclose(H5Dcreate2(f, "/huge", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Pclose(dcpl);
    H5Sclose(sp);
  }
  H5Dclose(put_ds(f, "/good", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, d4, v4));
  H5Lcreate_soft("/good", f, "/soft", H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Lcreate_soft("/g", f, "/gsoft", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_hard(f, "/good", f, "/g/good", H5P_DEFAULT, H5P_DEFAULT);
  H5Lcreate_external(path_in("good.h5"), "/g", f, "/ext", H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(f);
  FILE *txt = fopen(path_in("text.h5"), "w");
  ck_assert(txt != NULL);
  fputs("not hdf5 at all\n", txt);
  fclose(txt);

  refused("missing.h5", "/d", "No such file");
  refused("text.h5", "/d", "not an HDF5 file");
  refused(".", "/d", "directory");
  refused("e.h5", "/nothing", "no such dataset");
  refused("e.h5", "/no/such/group", "no such dataset");
  refused("e.h5", "/grp", "a group is not a dataset");
  refused("e.h5", "/cube", "rank 3");
  refused("e.h5", "/scalar", "scalar");
  refused("e.h5", "/one", "has 1 point along axis 0");
  refused("e.h5", "/column", "has 1 point along axis 1");
  refused("e.h5", "/str", "strings, not numbers");
  refused("e.h5", "/cmp", "compound type, not numbers");
  refused("e.h5", "/nan", "value [2] = nan is not finite");
  refused("e.h5", "/inf", "value [1][3] = -inf is not finite");
  refused("e.h5", "/x_short", "attribute x has 3 values where 4 are expected");
  refused("e.h5", "/x_flat", "x is not strictly increasing: x[2]");
  refused("e.h5", "/x_down", "x is not strictly increasing: x[3]");
  refused("e.h5", "/x_nan", "x[2] = nan is not finite");
  refused("e.h5", "/x1_low", "x1 = -1 is not greater than x0 = 0");
  refused("e.h5", "/x1_inf", "x1 = inf is not finite");
  refused("e.h5", "/x0_vec", "attribute x0 has 2 values where 1 is expected");
  refused("e.h5", "/both", "x and x0/x1 are both given");
  refused("e.h5", "/x_str", "attribute x holds strings");
  refused("e.h5", "/y_down", "y is not strictly increasing: y[2]");
  refused("e.h5", "/y_equal", "y1 = 2 is not greater than y0 = 2");
  refused("e.h5", "/huge", "/huge declares 1099511627776 x 2 elements of 8 bytes, more than");
  refused("e.h5", "/soft", "/soft is a soft link");
  refused("e.h5", "/gsoft/good", "/gsoft is a soft link");
  refused("e.h5", "/ext", "/ext is an external link");
  /* Through hard links all the way, the same dataset is read. */
  strata_table_set *ok = NULL;
  ck_assert_msg(load1("tbl", "e.h5", "/g/good", &ok) == STRATA_OK, "%s", strata_last_error());
  strata_tables_free(ok);
  /* A file others may write, a FIFO: refused, the FIFO without waiting. */
  ck_assert(chmod(path_in("e.h5"), 0664) == 0);
  refused("e.h5", "/g/good", "cannot read the file: others may write it (mode 0664; chmod go-w)");
  ck_assert(chmod(path_in("e.h5"), 0644) == 0);
  ck_assert(mkfifo(path_in("fifo.h5"), 0600) == 0);
  refused("fifo.h5", "/d", "not a regular file (a FIFO)");

  /* A failure after good tables leaves nothing behind. */
  put_1d("good.h5", "/g", 3, NULL, 0.0, 1.0, lin);
  strata_table_spec s[2];
  int n;
  char spec[1024];
  snprintf(spec, sizeof spec, "g=%s:/g, bad=%s:/nan", path_in("good.h5"), path_in("e.h5"));
  ck_assert_int_eq(strata_tables_parse(spec, s, 2, &n, "w"), STRATA_OK);
  strata_table_set *set = (strata_table_set *)&set;
  ck_assert(strata_tables_load(s, n, &set) == STRATA_EINVAL);
  ck_assert(set == NULL);
  ck_assert(strstr(strata_last_error(), "table bad ("));
  remove_dir();
}
END_TEST

/* --- the prelude as a user's code --------------------------------------------------- */

START_TEST(test_constants)
{
  /* Against the library's correctly rounded (or nearly) functions. */
  const struct {
    double c, want;
    const char *name;
  } k[] = {
      {STRATA_PI, acos(-1.0), "PI"},          {STRATA_2PI, 2 * acos(-1.0), "2PI"},
      {STRATA_PI_2, acos(0.0), "PI_2"},       {STRATA_1_PI, 1 / acos(-1.0), "1_PI"},
      {STRATA_SQRT2, sqrt(2.0), "SQRT2"},     {STRATA_SQRTPI, sqrt(acos(-1.0)), "SQRTPI"},
      {STRATA_1_SQRT2PI, 1 / sqrt(2 * acos(-1.0)), "1_SQRT2PI"},
      {STRATA_LN2, log(2.0), "LN2"},          {STRATA_LN10, log(10.0), "LN10"},
      {STRATA_E, exp(1.0), "E"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    ck_assert_msg(fabs(k[i].c - k[i].want) <= 2e-16 * k[i].want, "STRATA_%s = %.17g, not %.17g",
                  k[i].name, k[i].c, k[i].want);
  /* gamma = H_n - log n - 1/(2n) + 1/(12 n^2) - ..., summed from the small
   * terms up. */
  const int n = 100000;
  double hn = 0.0;
  for (int i = n; i >= 1; i--) hn += 1.0 / i;
  const double gamma = hn - log((double)n) - 0.5 / n + 1.0 / (12.0 * n * (double)n);
  ck_assert_msg(fabs(STRATA_EULER - gamma) < 1e-13, "STRATA_EULER %.17g vs %.17g", STRATA_EULER,
                gamma);
}
END_TEST

/* A user's integrand that uses everything the prelude offers. */
static const char user_code[] =
    "#define STRATA_TABLE_INDEX_pdf 0\n"
    "#define STRATA_TABLE_INDEX_grid2 1\n"
    "#include \"strata/integrand.h\"\n"
    "double user_f(const double *x, int dim, const double *params, const strata_table *tables);\n"
    "double user_f(const double *x, int dim, const double *params, const strata_table *tables)\n"
    "{\n"
    "  const strata_table *p = STRATA_TABLE(tables, pdf), *g = STRATA_TABLE(tables, grid2);\n"
    "  double s = strata_interp1(p, x[0]) * strata_interp2(g, x[0], x[1]);\n"
    "  s += strata_table_at(g, 1, 0) + exp(-x[0]) + sin(STRATA_2PI * x[1]) + cos(x[0]);\n"
    "  s += pow(fabs(x[0]), 1.5) + floor(x[1]) + sqrt(STRATA_SQRT2) + log(STRATA_E);\n"
    "  s += params[0] * (STRATA_PI + STRATA_PI_2 + STRATA_1_PI + STRATA_SQRTPI +\n"
    "                    STRATA_1_SQRT2PI + STRATA_LN2 + STRATA_LN10 + STRATA_EULER);\n"
    "  (void)dim;\n"
    "  return s;\n"
    "}\n"
    "#ifdef __CUDACC_RTC__\n"
    "extern \"C\" __global__ void user_k(const double *x, const strata_table *t, double *out)\n"
    "{\n"
    "  out[threadIdx.x] = user_f(x + 2 * threadIdx.x, 2, x, t);\n"
    "}\n"
    "#endif\n";

static int compile_c(const char *cc, const char *lang_flags, const char *src, char *log,
                     size_t loglen)
{
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "%s %s -Wall -Wextra -Werror -pedantic -Wshadow -Wconversion -O2 -I'%s/include' "
           "-c '%s' -o '%s.o' > '%s.log' 2>&1",
           cc, lang_flags, STRATA_TEST_SRCDIR, src, src, src);
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "%s.log", src);
  FILE *f = fopen(cmd, "r");
  size_t got = f ? fread(log, 1, loglen - 1, f) : 0;
  log[got] = '\0';
  if (f) fclose(f);
  return rc;
}

START_TEST(test_prelude_c)
{
  make_dir();
  const char *cc = getenv("STRATA_CC");
  if (!cc || !*cc) cc = "cc";
  const char *src = path_in("user.c"), *bare = path_in("bare.c");
  FILE *f = fopen(src, "w");
  fputs(user_code, f);
  fclose(f);
  f = fopen(bare, "w");
  fputs("#include \"strata/integrand.h\"\n", f);
  fclose(f);
  char log[4096];
  ck_assert_msg(compile_c(cc, "-std=c11", src, log, sizeof log) == 0, "%s", log);
  ck_assert_msg(compile_c(cc, "-std=c11", bare, log, sizeof log) == 0, "%s", log);
  /* NVRTC compiles C++: the nearest check without it is the host C++
   * compiler, where there is one. */
  if (system("c++ --version > /dev/null 2>&1") == 0) {
    const char *cxx = path_in("user.cc");
    f = fopen(cxx, "w");
    fputs(user_code, f);
    fclose(f);
    ck_assert_msg(compile_c("c++", "-std=c++17", cxx, log, sizeof log) == 0, "%s", log);
  }
  remove_dir();
}
END_TEST

#ifdef STRATA_TEST_NVRTC
/* NVRTC loaded at run time, so that the test needs no CUDA link; its C
 * API, declared here for the same reason. */
typedef int (*nvrtc_create)(void **, const char *, const char *, int, const char *const *,
                            const char *const *);
typedef int (*nvrtc_compile)(void *, int, const char *const *);
typedef int (*nvrtc_logsize)(void *, size_t *);
typedef int (*nvrtc_log)(void *, char *);
typedef int (*nvrtc_destroy)(void **);

START_TEST(test_prelude_nvrtc)
{
  void *lib = dlopen(STRATA_TEST_NVRTC, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "test_table: NVRTC check skipped: %s\n", dlerror());
    return;
  }
  nvrtc_create create = (nvrtc_create)dlsym(lib, "nvrtcCreateProgram");
  nvrtc_compile compile = (nvrtc_compile)dlsym(lib, "nvrtcCompileProgram");
  nvrtc_logsize logsize = (nvrtc_logsize)dlsym(lib, "nvrtcGetProgramLogSize");
  nvrtc_log getlog = (nvrtc_log)dlsym(lib, "nvrtcGetProgramLog");
  nvrtc_destroy destroy = (nvrtc_destroy)dlsym(lib, "nvrtcDestroyProgram");
  ck_assert(create && compile && logsize && getlog && destroy);
  void *prog = NULL;
  ck_assert_int_eq(create(&prog, user_code, "user.cu", 0, NULL, NULL), 0);
  char inc[512];
  snprintf(inc, sizeof inc, "-I%s/include", STRATA_TEST_SRCDIR);
  const char *opts[] = {"-std=c++17", "-default-device", inc};
  int rc = compile(prog, 3, opts);
  size_t n = 0;
  logsize(prog, &n);
  char *log = calloc(n + 1, 1);
  getlog(prog, log);
  ck_assert_msg(rc == 0, "NVRTC (result %d): %s", rc, log);
  free(log);
  destroy(&prog);
  dlclose(lib);
}
END_TEST
#endif

int main(void)
{
  strata_init();
  Suite *s = suite_create("table");
  TCase *tc = tcase_create("tables");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_parse);
  tcase_add_test(tc, test_parse_errors);
  tcase_add_test(tc, test_1d_uniform);
  tcase_add_test(tc, test_1d_nonuniform);
  tcase_add_test(tc, test_default_grid);
  tcase_add_test(tc, test_2d);
  tcase_add_test(tc, test_convergence);
  tcase_add_test(tc, test_types);
  tcase_add_test(tc, test_set);
  tcase_add_test(tc, test_refused);
  tcase_add_test(tc, test_constants);
  tcase_add_test(tc, test_prelude_c);
#ifdef STRATA_TEST_NVRTC
  tcase_add_test(tc, test_prelude_nvrtc);
#endif
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
