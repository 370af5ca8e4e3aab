#include "runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "h5util.h"
#include "io.h"
#include "jobdef.h"
#include "ownfile.h"
#include "runlog_format.h"

struct strata_runlog {
  char path[STRATA_PATH_MAX];
  hid_t f, iters, rank_s, map, map_itn, sessions;
  hid_t comp;             /* /iterations_comp (vector integrands), or -1 */
  hid_t peaks;            /* /iterations_peaks (a run that searches), or -1 */
  int ncomp;              /* its components: 0 until there is one */
  hid_t row_mem;
  int rows, maps;
  int naxes, ninc;
  int fd;                 /* the log, checked and locked, for the whole run */
  char why[400];          /* what was found damaged */
};

static int make_comp(strata_runlog *l, int ncomp);
static int make_peaks(strata_runlog *l, int peaks);

static int fail(const char *path, const char *what)
{
  const char *why = strata_h5_detail();
  return strata_error(STRATA_EIO, "%s: cannot %s the log%s%s", path, what, *why ? ": " : "",
                      why);
}

/* What was found damaged, and HDF5's reason where it has one: -1. */
static int bad(strata_runlog *l, const char *what)
{
  const char *why = strata_h5_detail();
  if (!l->why[0]) snprintf(l->why, sizeof l->why, "%s%s%s", what, *why ? ": " : "", why);
  return -1;
}

/* The newest file format: checksums on all metadata, and SWMR (a single
 * writer, any number of readers), in which readers (strata log, h5py with
 * swmr=True) open the log while the run writes it and see the state of the
 * last flush, one per iteration (doc/file-formats.md).  HDF5's file lock
 * is not taken (it fails on some cluster file systems); the log's own
 * descriptor carries strata's lock (lock_log).  resuming: the flags by
 * which HDF5 marks a file open for writing are cleared, since they are
 * left set by a run that was killed, and the lock says that no other run
 * has the log. */
static hid_t writer_fapl(int resuming)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  hbool_t clear = 1;
  if (fapl >= 0 && (H5Pset_file_locking(fapl, 0, 1) < 0 ||
                    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0 ||
                    (resuming && H5Pset(fapl, "clear_status_flags", &clear) < 0))) {
    H5Pclose(fapl);
    fapl = -1;
  }
  return fapl;
}

/* One run at a time writes a log: a lock on the open file (not on the
 * process, which HDF5's own descriptor of the same file would release). */
static int lock_log(const char *path, int fd)
{
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return STRATA_OK;
  if (errno == EAGAIN || errno == EACCES)
    return strata_error(STRATA_EIO, "%s: the log is in use by another strata run; strata "
                        "does not touch the log of a running job", path);
  return STRATA_OK; /* no locks on this file system: the checkpoint's lock remains */
}

/* The name by which HDF5 reaches the file behind fd: /proc's name of the
 * descriptor, or path where /proc is missing (strata_ownfile_same then
 * checks what HDF5 opened). */
static const char *by_fd(int fd, const char *path, char *self, size_t len)
{
  struct stat a, b;
  snprintf(self, len, "/proc/self/fd/%d", fd);
  return stat(self, &a) == 0 && fstat(fd, &b) == 0 && a.st_dev == b.st_dev &&
                 a.st_ino == b.st_ino
             ? self
             : path;
}

static hid_t create_table(hid_t f, const char *name, hid_t type, int rank, const hsize_t *dims,
                          const hsize_t *chunk, const void *fill)
{
  hsize_t maxdims[3];
  for (int i = 0; i < rank; i++) maxdims[i] = i == 0 || dims[i] == 0 ? H5S_UNLIMITED : dims[i];
  hid_t space = H5Screate_simple(rank, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = -1;
  /* Fletcher-32: a checksum on every chunk, checked on every read, so that a
   * damaged row is an error, never a wrong value. */
  if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0 &&
      H5Pset_fletcher32(dcpl) >= 0 &&
      (!fill || H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, fill) >= 0))
    d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return d;
}

/* Writes one row (block[1..rank) elements) at row `at`, growing the dataset
 * to hold it. */
static int put_row(hid_t d, hid_t memtype, hsize_t at, int rank, const hsize_t *block,
                   const void *data)
{
  hsize_t dims[3], start[3] = {at, 0, 0}, count[3] = {1, 1, 1};
  hid_t space = H5Dget_space(d);
  if (space < 0 || H5Sget_simple_extent_dims(space, dims, NULL) != rank) return -1;
  H5Sclose(space);
  if (dims[0] < at + 1) dims[0] = at + 1;
  for (int i = 1; i < rank; i++) {
    count[i] = block[i];
    if (dims[i] < block[i]) dims[i] = block[i];
  }
  if (H5Dset_extent(d, dims) < 0) return -1;
  hid_t fs = H5Dget_space(d);
  hid_t ms = H5Screate_simple(rank, count, NULL);
  int rc = fs >= 0 && ms >= 0 &&
                   H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                   H5Dwrite(d, memtype, ms, fs, H5P_DEFAULT, data) >= 0
               ? 0
               : -1;
  if (ms >= 0) H5Sclose(ms);
  if (fs >= 0) H5Sclose(fs);
  return rc;
}

static int shrink(hid_t d, hsize_t rows)
{
  hsize_t dims[3];
  hid_t space = H5Dget_space(d);
  int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
  if (space >= 0) H5Sclose(space);
  if (rank < 1) return -1;
  if (dims[0] <= rows) return 0;
  dims[0] = rows;
  return H5Dset_extent(d, dims) >= 0 ? 0 : -1;
}

static hsize_t nrows(hid_t d)
{
  hsize_t dims[3] = {0, 0, 0};
  hid_t space = H5Dget_space(d);
  if (space >= 0) {
    H5Sget_simple_extent_dims(space, dims, NULL);
    H5Sclose(space);
  }
  return dims[0];
}

static void utc_now(char *buf, size_t len)
{
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Appends value to the string array attribute `name` of obj, which has
 * `rows` strings (fewer, in a log damaged or rebuilt: filled with ""). */
static int append_str(hid_t obj, const char *name, hsize_t rows, const char *value)
{
  char **old = NULL;
  size_t n = 0;
  if (H5Aexists(obj, name) > 0 && strata_h5_get_str_array(obj, name, &old, &n) != 0) return -1;
  const char **v = calloc((size_t)rows + 1, sizeof *v);
  int rc = -1;
  if (v) {
    for (hsize_t i = 0; i < rows; i++) v[i] = i < n ? old[i] : "";
    v[rows] = value;
    rc = strata_h5_put_str_array(obj, name, v, (size_t)rows + 1);
  }
  free(v);
  for (size_t i = 0; i < n; i++) free(old[i]);
  free(old);
  return rc;
}

/* A row of /sessions, and its strings in the attributes beside it.  Made
 * before the writer turns to SWMR, which adds no attributes. */
static int add_session(strata_runlog *l, const strata_runlog_info *info, int first_itn)
{
  char start[32];
  utc_now(start, sizeof start);
  strata_log_session s = {first_itn, info->ranks, info->gpus, info->threads};
  hid_t t = strata_log_session_type(0);
  hsize_t block[1] = {1}, at = nrows(l->sessions);
  int rc = put_row(l->sessions, t, at, 1, block, &s);
  H5Tclose(t);
  if (rc == 0)
    rc = append_str(l->sessions, "backend", at, info->backend ? info->backend : "") == 0 &&
                 append_str(l->sessions, "host", at, info->host ? info->host : "") == 0 &&
                 append_str(l->sessions, "start_time", at, start) == 0
             ? 0
             : -1;
  return rc;
}

/* The names of a per-component table's last axis, in its attribute
 * "columns" (doc/file-formats.md). */
static int put_columns(hid_t d, int ncomp, int result)
{
  static const char *const stats[] = {"integral", "sigma", "average", "average_sigma",
                                      "chi2_dof", "Q"};
  static const char *const res[] = {"integral", "sigma", "chi2_dof", "Q"};
  if (result) return strata_h5_put_str_array(d, "columns", res, 4);
  const int w = STRATA_LOG_COMP_WIDTH(ncomp), ncov = (w - 6) / 2;
  char(*names)[24] = malloc(sizeof *names * (size_t)(2 * ncov + 1));
  const char **v = malloc(sizeof *v * (size_t)w);
  if (!names || !v) {
    free(names);
    free(v);
    return -1;
  }
  for (int i = 0; i < 6; i++) v[i] = stats[i];
  for (int b = 0; b < ncov; b++) {
    snprintf(names[b], sizeof names[b], "cov_%d", b);
    snprintf(names[ncov + b], sizeof names[b], "average_cov_%d", b);
    v[6 + b] = names[b];
    v[6 + ncov + b] = names[ncov + b];
  }
  int rc = strata_h5_put_str_array(d, "columns", v, (size_t)w);
  free(names);
  free(v);
  return rc;
}

/* The attributes that describe the job and this session; the first
 * session's start time stays, later ones are in /sessions. */
static int put_info(hid_t f, const strata_runlog_info *info, int created)
{
  char hash[17], start[32];
  strata_jobdef_hash(info->definition, hash);
  utc_now(start, sizeof start);
  return (created ? strata_h5_put_str(f, "format", STRATA_LOG_FORMAT) == 0 &&
                        strata_h5_put_i64(f, "format_version", STRATA_LOG_FORMAT_VERSION) == 0 &&
                        strata_h5_put_str(f, "start_time", start) == 0 &&
                        strata_h5_put_i64(f, "checkpoint_iterations", 0) == 0
                  : 1) &&
                 strata_h5_put_str(f, "strata_version", strata_version()) == 0 &&
                 strata_h5_put_str(f, "job", info->job ? info->job : "") == 0 &&
                 strata_h5_put_str(f, "definition", info->definition) == 0 &&
                 strata_h5_put_str(f, "definition_hash", hash) == 0 &&
                 strata_h5_put_str(f, "integrand", info->integrand ? info->integrand : "") == 0 &&
                 strata_h5_put_i64(f, "dim", info->dim) == 0 &&
                 strata_h5_put_str(f, "mode", info->mode ? info->mode : "") == 0 &&
                 strata_h5_put_f64(f, "exact", info->exact) == 0 &&
                 strata_h5_put_str(f, "backend", info->backend ? info->backend : "") == 0 &&
                 strata_h5_put_str(f, "host", info->host ? info->host : "") == 0 &&
                 strata_h5_put_i64(f, "ranks", info->ranks) == 0 &&
                 strata_h5_put_i64(f, "gpus", info->gpus) == 0 &&
                 strata_h5_put_i64(f, "threads", info->threads) == 0 &&
                 strata_h5_put_str(f, "checkpoint", info->checkpoint ? info->checkpoint : "") ==
                     0 &&
                 strata_h5_put_str(f, "status", "running") == 0
             ? 0
             : -1;
}

static strata_runlog *new_log(const char *path, const strata_runlog_info *info)
{
  strata_runlog *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  snprintf(l->path, sizeof l->path, "%s", path);
  l->f = l->iters = l->rank_s = l->map = l->map_itn = l->sessions = l->comp = l->peaks = -1;
  l->fd = -1;
  l->row_mem = strata_log_row_type(0);
  l->naxes = info->naxes;
  l->ninc = info->ninc;
  return l;
}

static void free_log(strata_runlog *l)
{
  hid_t ds[] = {l->iters, l->rank_s, l->map, l->map_itn, l->sessions, l->comp, l->peaks};
  for (size_t i = 0; i < sizeof ds / sizeof *ds; i++)
    if (ds[i] >= 0) H5Dclose(ds[i]);
  if (l->row_mem >= 0) H5Tclose(l->row_mem);
  if (l->f >= 0) H5Fclose(l->f);
  if (l->fd >= 0) close(l->fd);
  free(l);
}

int strata_runlog_create(const char *path, const strata_runlog_info *info,
                         strata_runlog **out)
{
  *out = NULL;
  strata_h5_begin();
  strata_runlog *l = new_log(path, info);
  if (!l) return strata_error(STRATA_ENOMEM, "%s: out of memory", path);
  /* O_EXCL: nothing that is there, a link or a FIFO included, is opened. */
  l->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (l->fd < 0) {
    int e = errno;
    free_log(l);
    if (e == EEXIST)
      return strata_error(STRATA_EIO, "%s: the log exists already; strata does not overwrite "
                          "logs (move it away, or resume the run that wrote it)", path);
    return strata_error(STRATA_EIO, "%s: cannot create the log: %s", path, strerror(e));
  }
  struct stat sb;
  char self[64];
  int rc = fstat(l->fd, &sb) == 0 ? lock_log(path, l->fd) : STRATA_EIO;
  hid_t fapl = rc == STRATA_OK ? writer_fapl(0) : -1;
  /* The root's attributes (the run's identity, its result and the peak
   * search's) stay in its object header, under its checksum: past 8 HDF5
   * moves them to a heap, where one damaged bit of a log made a resume
   * loop for good inside HDF5 instead of refusing it. */
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fapl >= 0 && fcpl >= 0 && H5Pset_attr_phase_change(fcpl, 64, 48) >= 0 &&
      H5Pset_link_phase_change(fcpl, 64, 48) >= 0)
    l->f = H5Fcreate(by_fd(l->fd, path, self, sizeof self), H5F_ACC_TRUNC, fcpl, fapl);
  if (fcpl >= 0) H5Pclose(fcpl);
  if (fapl >= 0) H5Pclose(fapl);
  if (l->f < 0 || !strata_ownfile_same(l->f, &sb)) {
    if (rc == STRATA_OK) rc = fail(path, "create");
    free_log(l);
    struct stat now;
    if (lstat(path, &now) == 0 && now.st_dev == sb.st_dev && now.st_ino == sb.st_ino)
      unlink(path);
    return rc;
  }
  const double nan = NAN;
  hid_t row = strata_log_row_type(1), ses = strata_log_session_type(1);
  hsize_t d1[1] = {0}, c1[1] = {64}, d2[2] = {0, 0}, c2[2] = {64, 16};
  hsize_t d3[3] = {0, (hsize_t)info->naxes, (hsize_t)info->ninc + 1},
          c3[3] = {1, (hsize_t)info->naxes, (hsize_t)info->ninc + 1}, cs[1] = {8};
  l->iters = create_table(l->f, "iterations", row, 1, d1, c1, NULL);
  l->rank_s = create_table(l->f, "rank_sample_time", H5T_IEEE_F64LE, 2, d2, c2, &nan);
  l->map = create_table(l->f, "map", H5T_IEEE_F64LE, 3, d3, c3, NULL);
  l->map_itn = create_table(l->f, "map_itn", H5T_STD_I32LE, 1, d1, c1, NULL);
  l->sessions = create_table(l->f, "sessions", ses, 1, d1, cs, NULL);
  H5Tclose(row);
  H5Tclose(ses);
  if (l->iters < 0 || l->rank_s < 0 || l->map < 0 || l->map_itn < 0 || l->sessions < 0 ||
      make_comp(l, info->ncomp) != 0 || make_peaks(l, info->peaks) != 0 ||
      put_info(l->f, info, 1) != 0 ||
      add_session(l, info, 0) != 0 || H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0 ||
      H5Fstart_swmr_write(l->f) < 0) {
    rc = fail(path, "create");
    free_log(l);
    unlink(path); /* ours, made just now, and useless half-written */
    return rc;
  }
  *out = l;
  return STRATA_OK;
}

/* Room for one iteration's row, index growth and a new chunk of each table,
 * with a wide margin: HDF5's own overhead per append is a few kilobytes. */
#define STRATA_LOG_APPEND_BYTES (64 * 1024)

/* HDF5 1.10 writes the file's new end into the superblock before the data
 * that fills it: a disk filling up in between leaves a file that HDF5 calls
 * truncated and will not open at all.  Claiming the space first turns a
 * full disk (or a file size limit) into a clean error while the log still
 * holds its last flush.  The claim is given back at once, so the file keeps
 * the size HDF5 expects; only another process filling the disk within the
 * next milliseconds could still catch the write. */
static int reserve(strata_runlog *l, size_t need)
{
  hsize_t size = 0;
  struct stat sb;
  if (H5Fget_filesize(l->f, &size) < 0) return -1;
  if (fstat(l->fd, &sb) != 0)
    return strata_error(STRATA_EIO, "%s: cannot grow the log: %s", l->path, strerror(errno));
  int e = posix_fallocate(l->fd, 0, (off_t)(size + need));
  if (ftruncate(l->fd, sb.st_size) != 0 && e == 0) e = errno;
  if (e != 0)
    return strata_error(STRATA_EIO, "%s: cannot grow the log: %s; the log keeps the "
                        "iterations written so far", l->path, strerror(e));
  return STRATA_OK;
}

static void fill_row(strata_log_row *row, const strata_iteration *it, double elapsed_s)
{
  memset(row, 0, sizeof *row);
  row->itn = it->itn;
  row->integral = it->integral;
  row->sigma = it->sigma;
  row->average = it->avg;
  row->average_sigma = it->avg_sigma;
  row->chi2_dof = it->chi2_dof;
  row->Q = it->q;
  row->neval = it->neval;
  row->wall_s = it->time_s;
  row->elapsed_s = elapsed_s;
  /* An iteration left out of the average has no average, chi2 or Q: the
   * table prints "-" there, and the log holds NaN. */
  if (!it->kept) row->average = row->average_sigma = row->chi2_dof = row->Q = NAN;
  row->kept = (int8_t)it->kept;
  row->restarted = (int8_t)it->restarted;
  row->adapting = (int8_t)it->adapting;
}

/* The table of a vector integrand's rows, made with the log: a SWMR writer
 * adds no objects that readers could meet half-written. */
static int make_comp(strata_runlog *l, int ncomp)
{
  if (ncomp <= 1 || l->comp >= 0) return 0;
  const hsize_t w = (hsize_t)STRATA_LOG_COMP_WIDTH(ncomp), nc = (hsize_t)ncomp;
  /* Chunks of 16 iterations, or fewer where their rows are long. */
  const hsize_t per = nc * w > 65536 ? 1 : 16;
  hsize_t d3[3] = {0, nc, w}, c3[3] = {per, nc, w};
  l->comp = create_table(l->f, "iterations_comp", H5T_IEEE_F64LE, 3, d3, c3, NULL);
  if (l->comp < 0 || strata_h5_put_i64(l->f, "ncomp", ncomp) != 0 ||
      put_columns(l->comp, ncomp, 0) != 0)
    return -1;
  l->ncomp = ncomp;
  return 0;
}

/* A vector integrand's rows (strata_iteration.comp, laid out as in
 * strata.h) go to /iterations_comp [n][ncomp][STRATA_LOG_COMP_WIDTH(ncomp)],
 * made at its first row: scalar logs keep their layout. */
static int append_comp(strata_runlog *l, const strata_iteration *it)
{
  if (it->ncomp <= 1 || !it->comp) return 0;
  const hsize_t w = (hsize_t)STRATA_LOG_COMP_WIDTH(it->ncomp), nc = (hsize_t)it->ncomp,
                iw = (hsize_t)STRATA_COMP_ROW(it->ncomp);
  if (l->comp < 0 && make_comp(l, it->ncomp) != 0) return -1;
  if (it->ncomp != l->ncomp) return -1;
  hsize_t b3[3] = {1, nc, w};
  if (it->kept && w == iw)
    return put_row(l->comp, H5T_NATIVE_DOUBLE, (hsize_t)l->rows, 3, b3, it->comp);
  double *row = malloc(sizeof(double) * (size_t)(nc * w));
  if (!row) return -1;
  for (hsize_t c = 0; c < nc; c++) {
    double *r = row + c * w;
    memcpy(r, it->comp + c * iw, sizeof(double) * (size_t)w);
    /* As in /iterations: no average for an iteration left out of it. */
    if (it->kept) continue;
    r[STRATA_COMP_AVG] = r[STRATA_COMP_AVG_SIGMA] = r[STRATA_COMP_CHI2_DOF] = r[STRATA_COMP_Q] =
        NAN;
    for (hsize_t b = 0; w == iw && b < nc; b++) r[STRATA_COMP_COV + nc + b] = NAN;
  }
  int rc = put_row(l->comp, H5T_NATIVE_DOUBLE, (hsize_t)l->rows, 3, b3, row);
  free(row);
  return rc;
}

/* The table of the peak search's rows, made with the log of a run that
 * searches (a run without the search keeps the layout it had before there
 * was one), its columns named. */
static int make_peaks(strata_runlog *l, int peaks)
{
  if (!peaks || l->peaks >= 0) return 0;
  const double nan = NAN;
  hsize_t d2[2] = {0, STRATA_LOG_PEAKS_WIDTH}, c2[2] = {64, STRATA_LOG_PEAKS_WIDTH};
  l->peaks = create_table(l->f, "iterations_peaks", H5T_IEEE_F64LE, 2, d2, c2, &nan);
  if (l->peaks < 0) return -1;
  char names[STRATA_MAX_PEAKS][24];
  const char *v[STRATA_LOG_PEAKS_WIDTH] = {"khat", "nchannels", "alpha_map", "alpha_uniform"};
  for (int j = 0; j < STRATA_MAX_PEAKS; j++) {
    snprintf(names[j], sizeof names[j], "alpha_mode_%d", j + 1);
    v[STRATA_LOG_PEAKS_ALPHA_MODE + j] = names[j];
  }
  return strata_h5_put_fixed_str_array(l->peaks, "columns", v, STRATA_LOG_PEAKS_WIDTH);
}

/* An iteration's row of /iterations_peaks: its k-hat and channels, and the
 * weights of now where they are known. */
static int append_peaks(strata_runlog *l, const strata_iteration *it, const strata_result *now)
{
  if (l->peaks < 0) return 0;
  double row[STRATA_LOG_PEAKS_WIDTH];
  for (int k = 0; k < STRATA_LOG_PEAKS_WIDTH; k++) row[k] = NAN;
  row[STRATA_LOG_PEAKS_KHAT] = it->khat;
  row[STRATA_LOG_PEAKS_NCHANNELS] = it->nchannels;
  if (now && now->peaks_searched) {
    row[STRATA_LOG_PEAKS_ALPHA_MAP] = now->alpha_map;
    row[STRATA_LOG_PEAKS_ALPHA_UNIFORM] = now->alpha_uniform;
    const int n = now->nmodes < STRATA_MAX_PEAKS ? now->nmodes : STRATA_MAX_PEAKS;
    for (int j = 0; j < n; j++)
      if (now->modes[j].weight > 0.0) row[STRATA_LOG_PEAKS_ALPHA_MODE + j] = now->modes[j].weight;
  }
  hsize_t b2[2] = {1, STRATA_LOG_PEAKS_WIDTH};
  return put_row(l->peaks, H5T_NATIVE_DOUBLE, (hsize_t)l->rows, 2, b2, row);
}

static int append(strata_runlog *l, const strata_iteration *it, double elapsed_s,
                  const double *rank_s, int nranks, const strata_result *now)
{
  strata_log_row row;
  fill_row(&row, it, elapsed_s);
  hsize_t b1[1] = {1}, b2[2] = {1, (hsize_t)nranks};
  if (put_row(l->iters, l->row_mem, (hsize_t)l->rows, 1, b1, &row) != 0) return -1;
  if (append_comp(l, it) != 0 || append_peaks(l, it, now) != 0) return -1;
  if (nranks > 0 &&
      put_row(l->rank_s, H5T_NATIVE_DOUBLE, (hsize_t)l->rows, 2, b2, rank_s) != 0)
    return -1;
  l->rows++;
  return 0;
}

int strata_runlog_append(strata_runlog *l, const strata_iteration *it, double elapsed_s,
                         const double *rank_s, int nranks, const strata_result *now)
{
  strata_h5_begin();
  size_t comp = it->ncomp > 1 ? (size_t)it->ncomp * STRATA_LOG_COMP_WIDTH(it->ncomp) : 0;
  int rc = reserve(l, STRATA_LOG_APPEND_BYTES + sizeof(double) * ((size_t)nranks + comp));
  if (rc != STRATA_OK) return rc;
  if (append(l, it, elapsed_s, rank_s, nranks, now) != 0 ||
      H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0) {
    char what[64];
    snprintf(what, sizeof what, "append iteration %d to", it->itn);
    return fail(l->path, what);
  }
  return STRATA_OK;
}

int strata_runlog_map(strata_runlog *l, int itn, const double *edges)
{
  strata_h5_begin();
  hsize_t b3[3] = {1, (hsize_t)l->naxes, (hsize_t)l->ninc + 1}, b1[1] = {1};
  int32_t i = itn;
  int rc = reserve(l, STRATA_LOG_APPEND_BYTES +
                          sizeof(double) * (size_t)l->naxes * (size_t)(l->ninc + 1));
  if (rc != STRATA_OK) return rc;
  if (put_row(l->map, H5T_NATIVE_DOUBLE, (hsize_t)l->maps, 3, b3, edges) != 0 ||
      put_row(l->map_itn, H5T_NATIVE_INT32, (hsize_t)l->maps, 1, b1, &i) != 0 ||
      H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0)
    return fail(l->path, "add a map snapshot to");
  l->maps++;
  return STRATA_OK;
}

int strata_runlog_checkpointed(strata_runlog *l, int itn)
{
  strata_h5_begin();
  int rc = reserve(l, STRATA_LOG_APPEND_BYTES);
  if (rc != STRATA_OK) return rc;
  if (strata_h5_put_i64(l->f, "checkpoint_iterations", itn) != 0 ||
      H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0)
    return fail(l->path, "update");
  return STRATA_OK;
}

/* A finished run's dataset, which a resumed run that finishes again
 * writes anew: gone, if it was there (adopt read it, so a damaged one set
 * the log aside before this).  0 or -1. */
static int unlink_result(strata_runlog *l, const char *name)
{
  const htri_t there = H5Lexists(l->f, name, H5P_DEFAULT);
  return there < 0 || (there > 0 && H5Ldelete(l->f, name, H5P_DEFAULT) < 0) ? -1 : 0;
}

/* A vector integrand's result: /result_comp [ncomp][4] (integral, sigma,
 * chi2_dof, Q of every component's average) and /result_cov [ncomp][ncomp]
 * (the covariance of the averages). */
static int finish_comp(strata_runlog *l, const strata_result *res,
                       const strata_report_comps *all)
{
  const int nc = all ? all->ncomp : res->ncomp;
  const double *cov = all ? all->cov : res->comp_cov;
  double(*rows)[4] = malloc(sizeof *rows * (size_t)nc);
  if (!rows) return -1;
  for (int c = 0; c < nc; c++) {
    rows[c][0] = all ? all->integral[c] : res->comp_integral[c];
    rows[c][1] = all ? all->sigma[c] : res->comp_sigma[c];
    rows[c][2] = all ? all->chi2_dof[c] : res->comp_chi2_dof[c];
    rows[c][3] = all ? all->q[c] : res->comp_q[c];
  }
  hsize_t d1[2] = {(hsize_t)nc, 4}, d2[2] = {(hsize_t)nc, (hsize_t)nc};
  if (unlink_result(l, "result_comp") != 0 || unlink_result(l, "result_cov") != 0) {
    free(rows);
    return -1;
  }
  int written = strata_h5_write_array(l->f, "result_comp", H5T_NATIVE_DOUBLE, 2, d1, rows) == 0 &&
                strata_h5_write_array(l->f, "result_cov", H5T_NATIVE_DOUBLE, 2, d2, cov) == 0;
  free(rows);
  if (!written) return -1;
  hid_t d = H5Dopen2(l->f, "result_comp", H5P_DEFAULT);
  int rc = d >= 0 && put_columns(d, nc, 1) == 0 ? 0 : -1;
  if (d >= 0) H5Dclose(d);
  return rc;
}

/* What the result says beside its number (strata.h): no target, the
 * lost-peak flag and what showed it, the evaluations a missed target
 * needs, a stratification too thin to claim. */
static int finish_verdict(strata_runlog *l, const strata_result *res)
{
  return strata_h5_put_i64(l->f, "no_target", res->no_target) == 0 &&
                 strata_h5_put_i64(l->f, "lost", res->lost) == 0 &&
                 strata_h5_put_i64(l->f, "lost_itn", res->lost_itn) == 0 &&
                 strata_h5_put_f64(l->f, "lost_z", res->lost_z) == 0 &&
                 strata_h5_put_f64(l->f, "lost_integral", res->lost_integral) == 0 &&
                 strata_h5_put_f64(l->f, "lost_sigma", res->lost_sigma) == 0 &&
                 strata_h5_put_f64(l->f, "neval_needed", res->neval_needed) == 0 &&
                 strata_h5_put_i64(l->f, "thin", res->thin) == 0 &&
                 strata_h5_put_f64(l->f, "thin_neval", res->thin_neval) == 0
             ? 0
             : -1;
}

/* The peak search's result (doc/peaks.md): its attributes, and /modes
 * [nmodes][dim + 4] (each mode's location, log |f|, share of the integral,
 * channel weight and whether it was a known point), made when there are
 * modes.  Its strings are fixed-length: kept in the attributes, under
 * their objects' checksums, not in a global heap, which has none. */
static int finish_peaks(strata_runlog *l, const strata_result *res)
{
  char reason[sizeof res->peaks_reason + 1];
  snprintf(reason, sizeof reason, "%.*s", (int)sizeof res->peaks_reason, res->peaks_reason);
  int ok = strata_h5_put_i64(l->f, "peaks_searched", res->peaks_searched) == 0 &&
           strata_h5_put_i64(l->f, "nmodes", res->nmodes) == 0 &&
           strata_h5_put_i64(l->f, "nchannels", res->nchannels) == 0 &&
           strata_h5_put_f64(l->f, "alpha_map", res->alpha_map) == 0 &&
           strata_h5_put_f64(l->f, "alpha_uniform", res->alpha_uniform) == 0 &&
           strata_h5_put_f64(l->f, "khat", res->khat) == 0 &&
           strata_h5_put_i64(l->f, "khat_itn", res->khat_itn) == 0 &&
           strata_h5_put_f64(l->f, "khat_limit", res->khat_limit) == 0 &&
           strata_h5_put_i64(l->f, "search_evals", res->search_evals) == 0 &&
           strata_h5_put_i64(l->f, "peaks_held", res->peaks_held) == 0 &&
           strata_h5_put_fixed_str(l->f, "peaks_reason", reason) == 0 &&
           strata_h5_put_f64(l->f, "peaks_neval", res->peaks_neval) == 0;
  if (!ok || unlink_result(l, "modes") != 0) return -1;
  const int n = res->nmodes < STRATA_MAX_PEAKS ? res->nmodes : STRATA_MAX_PEAKS,
            dim = res->dim < STRATA_MAX_DIM ? res->dim : STRATA_MAX_DIM, w = dim + 4;
  if (n <= 0 || dim <= 0) return 0;
  double rows[STRATA_MAX_PEAKS * (STRATA_MAX_DIM + 4)];
  for (int j = 0; j < n; j++) {
    const strata_result_peak *m = &res->modes[j];
    double *r = rows + j * w;
    memcpy(r, m->x, sizeof(double) * (size_t)dim);
    r[dim] = m->logf;
    r[dim + 1] = m->share;
    r[dim + 2] = m->weight;
    r[dim + 3] = m->known;
  }
  hsize_t d2[2] = {(hsize_t)n, (hsize_t)w};
  if (strata_h5_write_array(l->f, "modes", H5T_NATIVE_DOUBLE, 2, d2, rows) != 0) return -1;
  char names[STRATA_MAX_DIM][16];
  const char *v[STRATA_MAX_DIM + 4];
  for (int d = 0; d < dim; d++) {
    snprintf(names[d], sizeof names[d], "x_%d", d);
    v[d] = names[d];
  }
  v[dim] = "logf";
  v[dim + 1] = "share";
  v[dim + 2] = "weight";
  v[dim + 3] = "known";
  hid_t d = H5Dopen2(l->f, "modes", H5P_DEFAULT);
  int rc = d >= 0 && strata_h5_put_fixed_str_array(d, "columns", v, (size_t)w) == 0 ? 0 : -1;
  if (d >= 0) H5Dclose(d);
  return rc;
}

int strata_runlog_finish(strata_runlog *l, const strata_result *res,
                         const strata_report_comps *all)
{
  strata_h5_begin();
  const size_t nc = all ? (size_t)all->ncomp : 0;
  int rc = reserve(l, STRATA_LOG_APPEND_BYTES + sizeof(double) * nc * (nc + 4));
  if (rc != STRATA_OK) return rc;
  int ok = strata_h5_put_str(l->f, "status", res ? "finished" : "stopped") == 0;
  if (res)
    ok = ok && strata_h5_put_i64(l->f, "converged", res->converged) == 0 &&
         strata_h5_put_i64(l->f, "iterations", res->iterations) == 0 &&
         strata_h5_put_i64(l->f, "neval", res->neval) == 0 &&
         strata_h5_put_f64(l->f, "integral", res->integral) == 0 &&
         strata_h5_put_f64(l->f, "sigma", res->sigma) == 0 &&
         strata_h5_put_f64(l->f, "chi2_dof", res->chi2_dof) == 0 &&
         strata_h5_put_f64(l->f, "Q", res->q) == 0 &&
         strata_h5_put_f64(l->f, "time_s", res->time_s) == 0 && finish_verdict(l, res) == 0;
  if (res && res->ncomp > 1) ok = ok && finish_comp(l, res, all) == 0;
  if (res && (res->peaks_searched || res->peaks_held || res->peaks_reason[0]))
    ok = ok && finish_peaks(l, res) == 0;
  if (!ok || H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0) return fail(l->path, "finish");
  return STRATA_OK;
}

int strata_runlog_close(strata_runlog *l)
{
  strata_h5_begin();
  if (!l) return STRATA_OK;
  hid_t f = l->f;
  l->f = -1;
  char path[STRATA_PATH_MAX];
  snprintf(path, sizeof path, "%s", l->path);
  free_log(l);
  if (f >= 0 && H5Fclose(f) < 0) return fail(path, "close");
  return STRATA_OK;
}

int strata_runlog_rows(const strata_runlog *l) { return l->rows; }

/* Keeps a damaged log under another name: it may hold what the new one
 * cannot (per-rank times, map snapshots), and strata deletes no results. */
static int set_aside(const char *path, char *moved, size_t len)
{
  for (int k = 1; k < 100; k++) {
    if (k == 1) snprintf(moved, len, "%s.broken", path);
    else snprintf(moved, len, "%s.broken.%d", path, k);
    if (link(path, moved) == 0) return unlink(path);
    if (errno != EEXIST) break;
  }
  return -1;
}

/* Opens a table of the log (a hard link only) and reads all of it, so that
 * every chunk's checksum is verified; its extent in dims.  -1 with the
 * reason in l->why. */
static hid_t verified(strata_runlog *l, const char *name, hid_t memtype, int rank,
                      hsize_t *dims)
{
  char what[64];
  snprintf(what, sizeof what, "/%s", name);
  size_t n = 0;
  hid_t d = strata_h5_open_data(l->f, name, H5Tget_class(memtype), rank, dims, &n);
  if (d < 0) return bad(l, what);
  size_t size = H5Tget_size(memtype);
  void *buf = size > 0 ? malloc(size * (n > 0 ? n : 1)) : NULL;
  int ok = buf && (n == 0 || H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  free(buf);
  if (!ok) {
    H5Oclose(d);
    return bad(l, what);
  }
  return d;
}

/* Opens the tables of an existing log, reading every row (doc/file-formats.md:
 * each chunk's checksum), and drops what lies past itn. */
static int adopt(strata_runlog *l, int itn)
{
  hsize_t di[1], dr[2], dm[3], dmi[1], ds[1], dc[3];
  hid_t ses = strata_log_session_type(0);
  l->iters = verified(l, "iterations", l->row_mem, 1, di);
  l->rank_s = l->iters >= 0 ? verified(l, "rank_sample_time", H5T_NATIVE_DOUBLE, 2, dr) : -1;
  l->map = l->rank_s >= 0 ? verified(l, "map", H5T_NATIVE_DOUBLE, 3, dm) : -1;
  l->map_itn = l->map >= 0 ? verified(l, "map_itn", H5T_NATIVE_INT32, 1, dmi) : -1;
  l->sessions = l->map_itn >= 0 ? verified(l, "sessions", ses, 1, ds) : -1;
  H5Tclose(ses);
  if (l->sessions < 0) return -1;
  if ((hsize_t)l->naxes != dm[1] || (hsize_t)l->ninc + 1 != dm[2])
    return bad(l, "/map has another shape than this job's map");
  htri_t there = H5Lexists(l->f, "iterations_comp", H5P_DEFAULT);
  if (there < 0) return bad(l, "/iterations_comp");
  if (there > 0) {
    l->comp = verified(l, "iterations_comp", H5T_NATIVE_DOUBLE, 3, dc);
    if (l->comp < 0) return -1;
    if (dc[1] < 2 || dc[1] > STRATA_MAX_NCOMP ||
        dc[2] != (hsize_t)STRATA_LOG_COMP_WIDTH((int)dc[1]))
      return bad(l, "/iterations_comp has an impossible shape");
    l->ncomp = (int)dc[1];
  }
  there = H5Lexists(l->f, "iterations_peaks", H5P_DEFAULT);
  if (there < 0) return bad(l, "/iterations_peaks");
  if (there > 0) {
    hsize_t dp[2];
    l->peaks = verified(l, "iterations_peaks", H5T_NATIVE_DOUBLE, 2, dp);
    if (l->peaks < 0) return -1;
    if (dp[1] != STRATA_LOG_PEAKS_WIDTH) return bad(l, "/iterations_peaks has another width");
  }
  /* What a finished run wrote, which the next finish deletes and writes
   * again: read now, so that a damaged one sets the log aside here, not
   * inside HDF5's deletion (which reads a damaged header again and again). */
  static const char *const finished[] = {"modes", "result_comp", "result_cov"};
  for (int i = 0; i < 3; i++) {
    there = H5Lexists(l->f, finished[i], H5P_DEFAULT);
    if (there < 0) return bad(l, finished[i]);
    hsize_t dd[2];
    const hid_t d = there > 0 ? verified(l, finished[i], H5T_NATIVE_DOUBLE, 2, dd) : 0;
    if (d < 0) return -1;
    if (d > 0) H5Oclose(d);
  }
  hsize_t n = di[0], keep = n < (hsize_t)itn ? n : (hsize_t)itn;
  hsize_t nm = dmi[0], km = 0;
  int32_t *mi = malloc(sizeof(int32_t) * (size_t)(nm > 0 ? nm : 1));
  if (!mi) return bad(l, "out of memory");
  if (nm > 0 && H5Dread(l->map_itn, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, mi) < 0) {
    free(mi);
    return bad(l, "/map_itn");
  }
  while (km < nm && mi[km] <= itn) km++;
  free(mi);
  if (shrink(l->iters, keep) != 0 || shrink(l->rank_s, keep) != 0 || shrink(l->map, km) != 0 ||
      shrink(l->map_itn, km) != 0 || (l->comp >= 0 && shrink(l->comp, keep) != 0) ||
      (l->peaks >= 0 && shrink(l->peaks, keep) != 0))
    return bad(l, "cannot drop the rows past the checkpoint");
  l->rows = (int)keep;
  l->maps = (int)km;
  return 0;
}

/* The attributes a log must have, read (each object header's checksum
 * verified): 0, or -1 and l->why.  A format other than a strata log's, or a
 * log of another job, is an error (rc) and no damage. */
static int check_header(strata_runlog *l, const strata_runlog_info *info, int force, int itn,
                        int *rc)
{
  const char *path = l->path;
  char *format = NULL, *def = NULL, *hash = NULL;
  int64_t ck = 0, version = 0;
  *rc = STRATA_OK;
  htri_t has_format = H5Aexists(l->f, "format");
  if (has_format == 0) {
    *rc = strata_error(STRATA_EIO, "%s: not a strata log (an HDF5 file without a format "
                       "attribute); strata does not overwrite it", path);
    return 0;
  }
  if (has_format < 0 || strata_h5_get_str(l->f, "format", &format) != 0)
    return bad(l, "the format attribute");
  if (strcmp(format, STRATA_LOG_FORMAT)) {
    *rc = strata_error(STRATA_EIO, "%s: not a strata log (format = \"%.40s\"); strata does "
                       "not overwrite it", path, format);
    free(format);
    return 0;
  }
  free(format);
  if (strata_h5_get_i64(l->f, "format_version", &version) != 0)
    return bad(l, "the format_version attribute");
  if (version != STRATA_LOG_FORMAT_VERSION) {
    const int older = version < STRATA_LOG_FORMAT_VERSION;
    *rc = strata_error(STRATA_EIO, "%s: log format version %lld, written by %s strata: this "
                       "strata writes format version %d and does not continue it%s (move it "
                       "away to start a new log)", path, (long long)version,
                       older ? "an older" : "a newer", STRATA_LOG_FORMAT_VERSION,
                       older ? "; strata log still reads it" : "");
    return 0;
  }
  if (strata_h5_get_str(l->f, "definition", &def) != 0) return bad(l, "the definition");
  if (strata_h5_get_str(l->f, "definition_hash", &hash) != 0) {
    free(def);
    return bad(l, "the definition_hash");
  }
  char want[17];
  strata_jobdef_hash(def, want);
  int same = !strcmp(want, hash);
  free(hash);
  if (!same) {
    free(def);
    return bad(l, "the definition does not match its definition_hash");
  }
  if (strata_h5_get_i64(l->f, "checkpoint_iterations", &ck) != 0) {
    free(def);
    return bad(l, "the checkpoint_iterations attribute");
  }
  *rc = strata_jobdef_compare_as(def, info->definition, force,
                                 info->override ? info->override : "--force", path, "log",
                                 info->job);
  free(def);
  if (*rc == STRATA_OK && ck > itn)
    *rc = strata_error(STRATA_EINVAL, "%s: the log records a checkpoint after iteration "
                       "%lld in %s, but the run resumes after iteration %d: was the "
                       "checkpoint replaced or removed? (move the log away to start it "
                       "anew)", path, (long long)ck, info->checkpoint, itn);
  return 0;
}

/* A log in HDF5's original format, written by strata before format version
 * 2: strata log reads it; a run does not go on writing it, since it could
 * not be read while written or checked. */
static int refuse_old(const char *path, int fd, int superblock)
{
  char self[64], *format = NULL;
  int64_t version = 1;
  hid_t f = H5Fopen(by_fd(fd, path, self, sizeof self), H5F_ACC_RDONLY, H5P_DEFAULT);
  int strata = f >= 0 && strata_h5_get_str(f, "format", &format) == 0 &&
               !strcmp(format, STRATA_LOG_FORMAT);
  if (strata) strata_h5_get_i64(f, "format_version", &version);
  free(format);
  if (f >= 0) H5Fclose(f);
  if (!strata)
    return strata_error(STRATA_EIO, "%s: not a strata log (HDF5 superblock version %d); "
                        "strata does not overwrite it", path, superblock);
  return strata_error(STRATA_EIO, "%s: log format version %lld (HDF5 superblock version %d, "
                      "no checksums), written by an older strata: this strata writes format "
                      "version %d and does not continue it; strata log still reads it (move "
                      "it away to start a new log)", path, (long long)version, superblock,
                      STRATA_LOG_FORMAT_VERSION);
}

/* Opens the existing log at path for writing: checked (ownfile.h), locked,
 * of format version 2 (fresh: no checkpoint to continue).  Returns
 * STRATA_OK with l->f open, or with l->f -1
 * and l->why saying what is damaged; another code for an error. */
static int open_existing(strata_runlog *l, int fresh)
{
  const char *path = l->path, *tail = "; the log is left as it is";
  struct stat sb;
  l->fd = strata_trusted_open(path, O_RDWR, "log", tail, 0, &sb);
  if (l->fd < 0) return STRATA_EIO;
  int rc = lock_log(path, l->fd);
  if (rc != STRATA_OK) return rc;
  /* Empty, ours under the lock, and no checkpoint to continue (fresh): a
   * run was killed between creating the file and HDF5's first write to
   * it, before any checkpoint.  Damage, like a log cut short.  Beside a
   * checkpoint, whose run wrote its log first, an empty file is not one. */
  if (sb.st_size == 0 && fresh) {
    snprintf(l->why, sizeof l->why, "empty: the run that created it ended before writing it");
    return STRATA_OK;
  }
  int superblock = strata_ownfile_superblock(l->fd, sb.st_size);
  if (superblock < 0)
    return strata_error(STRATA_EIO, "%s: not a strata log (not an HDF5 file); strata does "
                        "not overwrite it", path);
  if (superblock < 3) return refuse_old(path, l->fd, superblock);
  off_t at = 0;
  if (!strata_ownfile_heaps_whole(l->fd, sb.st_size, &at)) {
    snprintf(l->why, sizeof l->why, "a global heap's objects run past its end (byte %lld)",
             (long long)at);
    return STRATA_OK;
  }
  char self[64];
  hid_t fapl = writer_fapl(1);
  if (fapl < 0) return fail(path, "open");
  l->f = H5Fopen(by_fd(l->fd, path, self, sizeof self), H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (l->f < 0) {
    bad(l, "cannot open it");
    return STRATA_OK;
  }
  if (!strata_ownfile_same(l->f, &sb))
    return strata_error(STRATA_EIO, "%s: cannot write the log: the file was replaced while "
                        "strata opened it%s", path, tail);
  return STRATA_OK;
}

/* A log that this run may not write (read-only, another user's, a link, a
 * FIFO) is the user's to sort out, not damage: the checked open (ownfile.h)
 * refuses it before HDF5 opens it, so that nothing is renamed or rebuilt. */
int strata_runlog_resume(const char *path, const strata_runlog_info *info, int force,
                         const strata_iteration *rows, int itn, strata_runlog **out,
                         char *notice, int notice_len)
{
  *out = NULL;
  notice[0] = '\0';
  strata_h5_begin();
  strata_runlog *l = NULL;
  int rc = STRATA_OK;
  struct stat lb;
  if (lstat(path, &lb) != 0 && errno == ENOENT) {
    rc = strata_runlog_create(path, info, &l);
  } else {
    l = new_log(path, info);
    if (!l) return strata_error(STRATA_ENOMEM, "%s: out of memory", path);
    rc = open_existing(l, itn == 0);
    int hdr = 0;
    if (rc == STRATA_OK && l->f >= 0) hdr = check_header(l, info, force, itn, &rc);
    if (rc != STRATA_OK) {
      free_log(l);
      return rc;
    }
    if (l->f >= 0 && hdr == 0 && adopt(l, itn) == 0 && make_comp(l, info->ncomp) == 0 &&
        make_peaks(l, info->peaks) == 0 &&
        put_info(l->f, info, 0) == 0 && add_session(l, info, itn) == 0 &&
        H5Fflush(l->f, H5F_SCOPE_LOCAL) >= 0 && H5Fstart_swmr_write(l->f) >= 0) {
      rc = STRATA_OK;
    } else {
      /* Ours (a strata log of this job) but damaged: by a crash in the
       * middle of a write, or on the disk. */
      char why[sizeof l->why];
      if (!l->why[0]) bad(l, "cannot update it");
      snprintf(why, sizeof why, "%s", l->why);
      free_log(l);
      l = NULL;
      char moved[STRATA_PATH_MAX + 16];
      if (set_aside(path, moved, sizeof moved) != 0)
        return strata_error(STRATA_EIO, "%s: the log is damaged (%s) and cannot be moved "
                            "aside: %s", path, why, strerror(errno));
      snprintf(notice, (size_t)notice_len, "%s: the log was damaged (%s); kept as %s, "
               "rebuilt from the checkpoint", path, why, moved);
      rc = strata_runlog_create(path, info, &l);
    }
  }
  if (rc != STRATA_OK) return rc;
  size_t comp = itn > 0 && rows[0].ncomp > 1
                    ? sizeof(double) * (size_t)rows[0].ncomp * STRATA_COMP_ROW(rows[0].ncomp)
                    : 0;
  rc = reserve(l, STRATA_LOG_APPEND_BYTES + (sizeof(strata_log_row) + comp) * (size_t)itn);
  if (rc != STRATA_OK) {
    strata_runlog_close(l);
    return rc;
  }
  double elapsed = 0.0;
  for (int k = 0; k < itn; k++) {
    elapsed += rows[k].time_s;
    if (k >= l->rows && append(l, &rows[k], elapsed, NULL, 0, NULL) != 0) {
      rc = fail(path, "rebuild");
      strata_runlog_close(l);
      return rc;
    }
  }
  if (H5Fflush(l->f, H5F_SCOPE_LOCAL) < 0) {
    rc = fail(path, "update");
    strata_runlog_close(l);
    return rc;
  }
  *out = l;
  return STRATA_OK;
}
