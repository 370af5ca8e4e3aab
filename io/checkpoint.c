#include "checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic.h"
#include "error.h"
#include "h5util.h"
#include "jobdef.h"
#include "ownfile.h"

#define FORMAT "strata checkpoint"
/* 2: the map has as many increments as neval trains (map.h), no longer
 * always ninc.  3: a one-dimensional job's map has one increment, any
 * other at least two per stratum along an axis (map.h).  4: the map is
 * stored with the increments its splits will make, every group-th edge
 * the map's until then (map.h).  5: the map adapts past adapt_iters while
 * it improves (average.h), which a resumed run replays from its history.
 * An older file whose map has this job's base count reads the same, as
 * the map before its splits (strata_checkpoint_check_version refuses the
 * others); one before version 5 resumes with its map frozen after
 * adapt_iters, as it ran.  6: the attribute strat_finer, whether the run
 * stratifies finer once its map is frozen (average.h, strata_ravg_finer),
 * which a resumed run replays from its history, and the finer
 * stratification's allocation once it has one (/allocation_finer); a file
 * before it resumes on the coarse stratification, as it ran.  7: the
 * attribute packed_uniforms, whether the iterations that do not train the
 * map draw packed uniforms (philox.h); a file before it resumes drawing
 * 32 bits a coordinate, as it ran. */
#define FORMAT_VERSION 7
#define FORMAT_MAP_SPLITS 4 /* the first version whose map is stored as it splits */

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void utc_now(char *buf, size_t len)
{
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The history as columns, the way users read it (h5py, h5dump). */
static int write_history(hid_t f, const strata_run_state *st)
{
  const int n = st->itn;
  hid_t g = H5Gcreate2(f, "history", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  double *col = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int64_t *nev = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  int rc = col && nev ? 0 : -1;
  hsize_t dims[1] = {(hsize_t)n};
  const strata_itn_record *h = st->hist;
#define COLUMN(name, expr)                                                             \
  if (rc == 0) {                                                                       \
    for (int k = 0; k < n; k++) col[k] = (expr);                                       \
    rc = strata_h5_write_array(g, name, H5T_NATIVE_DOUBLE, 1, dims, col);              \
  }
  COLUMN("integral", h[k].integral)
  COLUMN("sigma", h[k].sigma)
  COLUMN("variance", h[k].sigma * h[k].sigma)
  COLUMN("time_s", h[k].time_s)
  /* Each kept iteration's share of chi^2 against the current average. */
  COLUMN("chi2", strata_ravg_kept(st->ravg, k, 0) && h[k].sigma > 0
                     ? pow((h[k].integral - st->ravg->cavg[0].mean) / h[k].sigma, 2)
                     : 0.0)
#undef COLUMN
  if (rc == 0) {
    for (int k = 0; k < n; k++) nev[k] = h[k].neval;
    rc = strata_h5_write_array(g, "neval", H5T_NATIVE_INT64, 1, dims, nev);
  }
  free(col);
  free(nev);
  H5Gclose(g);
  return rc;
}

/* A vector integrand's records: every component's estimate and their
 * covariance per iteration, the rows of the run's chist.  Written only for
 * ncomp > 1, so that scalar checkpoints keep their layout. */
static int write_comp_history(hid_t f, const strata_run_state *st)
{
  if (st->ncomp <= 1) return 0;
  hsize_t dims[2] = {(hsize_t)st->itn, STRATA_CHIST_ROW(st->ncomp)};
  return strata_h5_put_i64(f, "ncomp", st->ncomp) == 0 &&
                 strata_h5_write_array(f, "history_comp", H5T_NATIVE_DOUBLE, 2, dims,
                                       st->comp_hist) == 0
             ? 0
             : -1;
}

/* The peak search's state, opaque here: written only where the run has
 * one, so that a checkpoint of a run without the search keeps the layout
 * it had before there was one. */
static int write_peaks(hid_t f, const strata_run_state *st)
{
  if (st->npeaks == 0) return 0;
  hsize_t dims[1] = {(hsize_t)st->npeaks};
  return strata_h5_write_array(f, "peaks", H5T_NATIVE_DOUBLE, 1, dims, st->peaks);
}

/* The finer stratification's allocation, written only once the run has
 * one (doc/algorithm.md, "Long runs stratify finer"). */
static int write_finer(hid_t f, const strata_run_state *st)
{
  if (st->nfine == 0) return 0;
  hsize_t dims[1] = {(hsize_t)st->nfine};
  return strata_h5_write_array(f, "allocation_finer", H5T_NATIVE_INT64, 1, dims, st->fine_nh);
}

/* The file is built in memory (HDF5's core driver) and written to the
 * temporary file in one piece when it is closed; only then does the atomic
 * replacement make it the checkpoint.  (H5Fget_file_image would spare the
 * temporary file, but in HDF5 1.10 its image of a 1.8-format file carries a
 * stale superblock checksum.) */
/* The whole file in one allocation: growing it by steps would copy it
 * again at each step. */
static size_t file_bytes(const strata_run_state *st)
{
  return sizeof(double) * ((size_t)st->naxes * (size_t)(st->ninc + 1) + (size_t)st->nhcube +
                           (size_t)st->nfine +
                           6 * (size_t)st->itn +
                           (st->ncomp > 1 ? STRATA_CHIST_ROW(st->ncomp) : 0) * (size_t)st->itn +
                           st->npeaks) +
         (1 << 18);
}

/* Everything a checkpoint holds, into the open file f. */
static int write_content(hid_t f, const strata_run_state *st, const strata_ckpt_info *info)
{
  char hash[17], created[32];
  strata_jobdef_hash(info->definition, hash);
  utc_now(created, sizeof created);
  int ok = strata_h5_put_fixed_str(f, "format", FORMAT) == 0 &&
       strata_h5_put_i64(f, "format_version", FORMAT_VERSION) == 0 &&
       strata_h5_put_fixed_str(f, "strata_version", strata_version()) == 0 &&
       strata_h5_put_fixed_str(f, "created", created) == 0 &&
       strata_h5_put_fixed_str(f, "host", info->host ? info->host : "") == 0 &&
       strata_h5_put_fixed_str(f, "job", info->job ? info->job : "") == 0 &&
       strata_h5_put_fixed_str(f, "backend", info->backend ? info->backend : "") == 0 &&
       strata_h5_put_i64(f, "ranks", info->ranks) == 0 &&
       strata_h5_put_i64(f, "threads", info->threads) == 0 &&
       strata_h5_put_fixed_str(f, "definition", info->definition) == 0 &&
       strata_h5_put_fixed_str(f, "definition_hash", hash) == 0 &&
       strata_h5_put_i64(f, "iterations", st->itn) == 0 &&
       strata_h5_put_u64(f, "seed", st->seed) == 0 &&
       strata_h5_put_i64(f, "neval_total", st->neval_total) == 0 &&
       strata_h5_put_f64(f, "time_s", st->time_s) == 0 &&
       strata_h5_put_f64(f, "average", st->ravg->cavg[0].mean) == 0 &&
       strata_h5_put_f64(f, "average_sigma", st->ravg->cavg[0].sigma) == 0 &&
       strata_h5_put_f64(f, "chi2_dof", st->ravg->cavg[0].chi2_dof) == 0 &&
       strata_h5_put_f64(f, "Q", st->ravg->cavg[0].q) == 0 &&
       strata_h5_put_i64(f, "converged", st->converged) == 0 &&
       strata_h5_put_i64(f, "strat_finer", st->finer) == 0 &&
       strata_h5_put_i64(f, "packed_uniforms", st->packed_uniforms) == 0;
  hsize_t mdims[2] = {(hsize_t)st->naxes, (hsize_t)st->ninc + 1}, adims[1] = {(hsize_t)st->nhcube};
  ok = ok && strata_h5_write_array(f, "map", H5T_NATIVE_DOUBLE, 2, mdims, st->edges) == 0 &&
       strata_h5_write_array(f, "allocation", H5T_NATIVE_INT64, 1, adims, st->nh) == 0 &&
       write_history(f, st) == 0 && write_comp_history(f, st) == 0 && write_peaks(f, st) == 0 &&
       write_finer(f, st) == 0;
  return ok ? 0 : -1;
}

static int write_tmp(const char *path, const strata_tmpfile *t, const strata_run_state *st,
                     const strata_ckpt_info *info)
{
  const char *tmp = t->path;
  strata_h5_begin();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* The 1.8 file format: checksummed metadata, which the original format
   * lacks, and none of the "file is open" flags of the 1.10 format. */
  /* Closing flushes the file several times; with write tracking only the
   * first flush writes it all, the others the few pages they changed. */
  int ok = fapl >= 0 && H5Pset_fapl_core(fapl, file_bytes(st), 1) >= 0 &&
           H5Pset_core_write_tracking(fapl, 1, 4096) >= 0 &&
           H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18) >= 0;
  /* By the descriptor's name where there is one: the file this process
   * created, whatever the directory entry has become since. */
  hid_t f = ok ? H5Fcreate(t->open_as[0] ? t->open_as : tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
               : -1;
  ok = f >= 0 && write_content(f, st, info) == 0;
  /* Closing writes the file: a full disk shows here. */
  if (f >= 0 && H5Fclose(f) < 0) ok = 0;
  if (fapl >= 0) H5Pclose(fapl);
  if (!ok) {
    const char *why = strata_h5_detail();
    return strata_error(STRATA_EIO, "%s: cannot write the checkpoint (writing %s): %s; the "
                        "previous checkpoint, if any, is unchanged", path, tmp,
                        *why ? why : "HDF5 error");
  }
  return STRATA_OK;
}

int strata_checkpoint_start(const char *path, const strata_run_state *st,
                            const strata_ckpt_info *info, strata_commit **commit,
                            double *seconds, size_t *bytes)
{
  double t0 = now_s();
  strata_tmpfile t;
  *commit = NULL;
  if (bytes) *bytes = 0;
  int rc = strata_atomic_create(path, "checkpoint", &t);
  if (rc == STRATA_OK) {
    rc = write_tmp(path, &t, st, info);
    struct stat sb;
    if (bytes && rc == STRATA_OK && fstat(t.fd, &sb) == 0) *bytes = (size_t)sb.st_size;
    if (rc == STRATA_OK) rc = strata_atomic_commit_start(&t, path, "checkpoint", commit);
    else strata_atomic_abandon(&t);
  }
  if (seconds) *seconds = now_s() - t0;
  return rc;
}

int strata_checkpoint_write(const char *path, const strata_run_state *st,
                            const strata_ckpt_info *info, double *seconds, size_t *bytes)
{
  double t0 = now_s();
  strata_commit *c;
  int rc = strata_checkpoint_start(path, st, info, &c, NULL, bytes);
  if (rc == STRATA_OK) rc = strata_atomic_wait(c, NULL);
  if (seconds) *seconds = now_s() - t0;
  return rc;
}

int strata_checkpoint_image(const strata_run_state *st, const strata_ckpt_info *info, void **buf,
                            size_t *len)
{
  *buf = NULL;
  *len = 0;
  strata_h5_begin();
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* The original format: its superblock has no checksum, which
   * H5Fget_file_image of HDF5 1.10 would leave stale (see write_tmp); the
   * arrays carry their own checksums. */
  int ok = fapl >= 0 && H5Pset_fapl_core(fapl, file_bytes(st), 0) >= 0;
  hid_t f = ok ? H5Fcreate("strata-checkpoint-image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : -1;
  ok = f >= 0 && write_content(f, st, info) == 0 && H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0;
  ssize_t n = ok ? H5Fget_file_image(f, NULL, 0) : -1;
  void *b = n > 0 ? malloc((size_t)n) : NULL;
  ok = b && H5Fget_file_image(f, b, (size_t)n) == n;
  if (f >= 0 && H5Fclose(f) < 0) ok = 0;
  if (fapl >= 0) H5Pclose(fapl);
  if (!ok) {
    free(b);
    const char *why = strata_h5_detail();
    return strata_error(n > 0 && !b ? STRATA_ENOMEM : STRATA_EIO, "cannot write the state to "
                        "memory: %s", *why ? why : "HDF5 error");
  }
  *buf = b;
  *len = (size_t)n;
  return STRATA_OK;
}

int strata_checkpoint_check_version(const strata_checkpoint *c, const char *path, int ninc,
                                    int64_t neval, int dim)
{
  if (c->format_version >= FORMAT_MAP_SPLITS || c->state.ninc == ninc) return STRATA_OK;
  return strata_error(STRATA_EINVAL, "%s: checkpoint format version %d, whose map has %d "
                      "increments per axis; this strata (format version %d) trains %d for "
                      "neval = %lld in %d dimension%s: run the job again (the file is left as "
                      "it is)", path, c->format_version, c->state.ninc, FORMAT_VERSION, ninc,
                      (long long)neval, dim, dim == 1 ? "" : "s");
}

void strata_checkpoint_free(strata_checkpoint *c)
{
  if (!c) return;
  free(c->definition);
  free(c->hash);
  free(c->strata_version);
  free(c->backend);
  free(c->host);
  free(c->created);
  free(c->edges);
  free(c->nh);
  free(c->fine_nh);
  free(c->hist);
  free(c->comp_hist);
  free(c->peaks);
  free(c);
}

static int corrupt(const char *path, const char *what)
{
  const char *why = strata_h5_detail();
  return strata_error(STRATA_EIO, "%s: damaged or incomplete checkpoint: %s%s%s; the file is "
                      "left as it is", path, what, *why ? ": " : "", why);
}

/* A 0 or 1 attribute of the files from version `since` on into *out; 0 in
 * an older file, which was written before the attribute's rule. */
static int read_switch(hid_t f, const char *path, int version, int since, const char *name,
                       int *out)
{
  int64_t v = 0;
  if (version >= since && (strata_h5_get_i64(f, name, &v) != 0 || v < 0 || v > 1)) {
    char what[80];
    snprintf(what, sizeof what, "no valid %s attribute", name);
    return corrupt(path, what);
  }
  *out = (int)v;
  return STRATA_OK;
}

/* The extent of dataset name, checked (h5util.h) before anything is
 * allocated for it: 0, or -1 with the detail set. */
static int extent(hid_t loc, const char *name, H5T_class_t cls, int rank, hsize_t *dims,
                  size_t *n)
{
  hid_t d = strata_h5_open_data(loc, name, cls, rank, dims, n);
  if (d < 0) return -1;
  H5Oclose(d);
  return 0;
}

static int read_history(hid_t f, const char *path, strata_checkpoint *c, int n)
{
  hid_t g = strata_h5_open(f, "history", H5I_GROUP);
  if (g < 0) return corrupt(path, "no /history");
  /* The iteration count is an attribute: what the arrays declare must
   * match it before it decides an allocation. */
  hsize_t dims[1];
  size_t have = 0;
  if (extent(g, "neval", H5T_INTEGER, 1, dims, &have) != 0 || have != (size_t)n) {
    if (have != (size_t)n)
      strata_h5_set_detail("its length is not the iterations attribute's");
    H5Gclose(g);
    return corrupt(path, "cannot read /history/neval");
  }
  double *col = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  int64_t *nev = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  c->hist = calloc((size_t)(n > 0 ? n : 1), sizeof *c->hist);
  int rc = STRATA_OK;
  if (!col || !nev || !c->hist) rc = strata_error(STRATA_ENOMEM, "%s: out of memory", path);
#define COLUMN(name, field)                                                            \
  if (rc == STRATA_OK) {                                                               \
    if (strata_h5_read_array(g, name, H5T_NATIVE_DOUBLE, 1, (size_t)n, col) != 0)      \
      rc = corrupt(path, "cannot read /history/" name);                                \
    else                                                                               \
      for (int k = 0; k < n; k++) c->hist[k].field = col[k];                           \
  }
  COLUMN("integral", integral)
  COLUMN("sigma", sigma)
  COLUMN("time_s", time_s)
#undef COLUMN
  if (rc == STRATA_OK) {
    if (strata_h5_read_array(g, "neval", H5T_NATIVE_INT64, 1, (size_t)n, nev) != 0)
      rc = corrupt(path, "cannot read /history/neval");
    else
      for (int k = 0; k < n; k++) c->hist[k].neval = nev[k];
  }
  free(col);
  free(nev);
  H5Gclose(g);
  return rc;
}

/* The components of a vector integrand's checkpoint (none: scalar). */
static int read_comp_history(hid_t f, const char *path, strata_checkpoint *c)
{
  htri_t has = H5Aexists(f, "ncomp");
  if (has < 0) return corrupt(path, "cannot read its attributes");
  if (has == 0) return STRATA_OK;
  int64_t nc = 0;
  if (strata_h5_get_i64(f, "ncomp", &nc) != 0 || nc < 2 || nc > STRATA_MAX_NCOMP)
    return corrupt(path, "invalid ncomp");
  size_t n = STRATA_CHIST_ROW(nc) * (size_t)c->state.itn;
  hsize_t dims[2];
  if (extent(f, "history_comp", H5T_FLOAT, 2, dims, NULL) != 0)
    return corrupt(path, "cannot read /history_comp");
  c->comp_hist = malloc(sizeof(double) * (n > 0 ? n : 1));
  if (!c->comp_hist) return strata_error(STRATA_ENOMEM, "%s: out of memory", path);
  if (strata_h5_read_array(f, "history_comp", H5T_NATIVE_DOUBLE, 2, n, c->comp_hist) != 0)
    return corrupt(path, "cannot read /history_comp");
  c->state.ncomp = (int)nc;
  c->state.comp_hist = c->comp_hist;
  return STRATA_OK;
}

/* An optional one-dimensional dataset of 1 to most elements of class cls,
 * read as mem (elements of size bytes) into *out (malloc'ed), *n of them;
 * none: *n = 0.  too_long is the detail for a longer one. */
static int read_optional(hid_t f, const char *path, const char *name, H5T_class_t cls,
                         hid_t mem, size_t size, size_t most, const char *too_long, void **out,
                         size_t *n)
{
  *n = 0;
  htri_t has = H5Lexists(f, name, H5P_DEFAULT);
  if (has < 0) return corrupt(path, "cannot read its links");
  if (has == 0) return STRATA_OK;
  hsize_t dims[1];
  size_t len = 0;
  char what[80];
  snprintf(what, sizeof what, "no valid /%s", name);
  if (extent(f, name, cls, 1, dims, &len) != 0 || len < 1 || len > most) {
    if (len > most) strata_h5_set_detail(too_long);
    return corrupt(path, what);
  }
  *out = malloc(size * len);
  if (!*out) return strata_error(STRATA_ENOMEM, "%s: out of memory", path);
  snprintf(what, sizeof what, "cannot read /%s", name);
  if (strata_h5_read_array(f, name, mem, 1, len, *out) != 0) return corrupt(path, what);
  *n = len;
  return STRATA_OK;
}

/* The finer stratification's allocation, where the run had one (its
 * length is checked against the job's by strata_run_restore, as
 * /allocation's). */
static int read_finer(hid_t f, const char *path, strata_checkpoint *c)
{
  size_t n;
  void *nh = NULL;
  int rc = read_optional(f, path, "allocation_finer", H5T_INTEGER, H5T_NATIVE_INT64,
                         sizeof(int64_t), SIZE_MAX / sizeof(int64_t), "", &nh, &n);
  c->fine_nh = nh;
  c->state.nfine = (int64_t)n;
  c->state.fine_nh = c->fine_nh;
  return rc;
}

/* The peak search's state, where the run had one (none: a checkpoint of a
 * run without the search, or of a strata before it, which continues with
 * the search off).  The search's state is a few kilobytes: its 16 modes'
 * factors in 32 dimensions at most. */
static int read_peaks(hid_t f, const char *path, strata_checkpoint *c)
{
  size_t n;
  void *peaks = NULL;
  int rc = read_optional(f, path, "peaks", H5T_FLOAT, H5T_NATIVE_DOUBLE, sizeof(double),
                         (size_t)1 << 20, "its length is no peak search's", &peaks, &n);
  c->peaks = peaks;
  c->state.npeaks = n;
  c->state.peaks = c->peaks;
  return rc;
}

static int read_file(hid_t f, const char *path, strata_checkpoint *c)
{
  char *format = NULL;
  int64_t version = 0, itn = 0, ranks = 0, ntot = 0;
  htri_t has = H5Aexists(f, "format");
  if (has > 0 && strata_h5_get_str(f, "format", &format) != 0) has = -1;
  if (has < 0) return corrupt(path, "cannot read its attributes");
  if (has == 0 || strcmp(format, FORMAT)) {
    free(format);
    return strata_error(STRATA_EINVAL, "%s: not a strata checkpoint (no format = \"%s\" "
                        "attribute); the file is left as it is", path, FORMAT);
  }
  free(format);
  if (strata_h5_get_i64(f, "format_version", &version) != 0 || version < 1 ||
      version > FORMAT_VERSION)
    return strata_error(STRATA_EINVAL, "%s: checkpoint format version %lld, this strata "
                        "reads versions 1 to %d", path, (long long)version, FORMAT_VERSION);
  c->format_version = (int)version;
  c->state.adapt_more = version >= 5;
  int rc = read_switch(f, path, (int)version, 6, "strat_finer", &c->state.finer);
  if (rc == STRATA_OK)
    rc = read_switch(f, path, (int)version, 7, "packed_uniforms", &c->state.packed_uniforms);
  if (rc != STRATA_OK) return rc;
  if (strata_h5_get_str(f, "definition", &c->definition) != 0 ||
      strata_h5_get_str(f, "definition_hash", &c->hash) != 0 ||
      strata_h5_get_str(f, "strata_version", &c->strata_version) != 0 ||
      strata_h5_get_str(f, "backend", &c->backend) != 0 ||
      strata_h5_get_str(f, "host", &c->host) != 0 ||
      strata_h5_get_str(f, "created", &c->created) != 0 ||
      strata_h5_get_i64(f, "ranks", &ranks) != 0 ||
      strata_h5_get_i64(f, "iterations", &itn) != 0 ||
      strata_h5_get_i64(f, "neval_total", &ntot) != 0 ||
      strata_h5_get_f64(f, "time_s", &c->state.time_s) != 0)
    return corrupt(path, "an attribute cannot be read");
  /* The hash guards the definition text itself: it is what the resuming
   * job is compared with. */
  char hash[17];
  strata_jobdef_hash(c->definition, hash);
  if (strcmp(hash, c->hash))
    return strata_error(STRATA_EIO, "%s: damaged checkpoint: the definition does not match "
                        "its hash (%s, expected %s); the file is left as it is", path, hash,
                        c->hash);
  if (itn < 0 || itn > 100000000)
    return corrupt(path, "impossible iteration count");
  c->ranks = (int)ranks;
  c->state.itn = (int)itn;
  c->state.neval_total = ntot;

  hsize_t mdims[2] = {0, 0}, adims[1] = {0};
  size_t nh = 0;
  if (extent(f, "map", H5T_FLOAT, 2, mdims, NULL) != 0) return corrupt(path, "no valid /map");
  if (mdims[0] < 1 || mdims[0] > 32 || mdims[1] < 2 || mdims[1] > 1000001) {
    strata_h5_set_detail("its shape is no map's");
    return corrupt(path, "no valid /map");
  }
  c->state.naxes = (int)mdims[0];
  c->state.ninc = (int)mdims[1] - 1;
  size_t nedges = (size_t)(mdims[0] * mdims[1]);
  if (extent(f, "allocation", H5T_INTEGER, 1, adims, &nh) != 0 || nh < 1)
    return corrupt(path, "no valid /allocation");
  c->state.nhcube = (int64_t)nh;
  c->edges = malloc(sizeof(double) * nedges);
  c->nh = malloc(sizeof(int64_t) * nh);
  if (!c->edges || !c->nh) return strata_error(STRATA_ENOMEM, "%s: out of memory", path);
  if (strata_h5_read_array(f, "map", H5T_NATIVE_DOUBLE, 2, nedges, c->edges) != 0)
    return corrupt(path, "cannot read /map");
  if (strata_h5_read_array(f, "allocation", H5T_NATIVE_INT64, 1, nh, c->nh) != 0)
    return corrupt(path, "cannot read /allocation");
  rc = read_history(f, path, c, c->state.itn);
  if (rc == STRATA_OK) rc = read_comp_history(f, path, c);
  if (rc == STRATA_OK) rc = read_peaks(f, path, c);
  if (rc == STRATA_OK && version >= 6) rc = read_finer(f, path, c);
  if (rc != STRATA_OK) return rc;
  c->state.edges = c->edges;
  c->state.nh = c->nh;
  c->state.hist = c->hist;
  return STRATA_OK;
}

/* Reads the checkpoint open as f (or f < 0: it could not be opened), and
 * closes it. */
static int read_open(hid_t f, const char *name, strata_checkpoint **out)
{
  if (f < 0) return corrupt(name, "cannot open it");
  strata_checkpoint *c = calloc(1, sizeof *c);
  int rc = c ? read_file(f, name, c) : strata_error(STRATA_ENOMEM, "%s: out of memory", name);
  H5Fclose(f);
  H5Eclear2(H5E_DEFAULT);
  if (rc != STRATA_OK) {
    strata_checkpoint_free(c);
    return rc;
  }
  *out = c;
  return STRATA_OK;
}

int strata_checkpoint_read(const char *path, strata_checkpoint **out)
{
  *out = NULL;
  strata_h5_begin();
  /* HDF5 refuses a file shorter than its superblock says (a truncated
   * copy) when it opens it, and every array is checksummed. */
  int failed;
  hid_t f = strata_ownfile_h5open(path, H5F_ACC_RDONLY, H5P_DEFAULT, "checkpoint",
                                  "; the file is left as it is", 0, &failed);
  if (f < 0 && (failed == STRATA_OWNFILE_REFUSED || failed == STRATA_OWNFILE_DAMAGED))
    return STRATA_EIO;
  if (f < 0 && failed == STRATA_OWNFILE_NOT_HDF5)
    return strata_error(STRATA_EIO, "%s: not a strata checkpoint (not an HDF5 file); the file "
                        "is left as it is", path);
  return read_open(f, path, out);
}

int strata_checkpoint_read_image(const void *buf, size_t len, const char *name,
                                 strata_checkpoint **out)
{
  *out = NULL;
  strata_h5_begin();
  if (!buf || len < 8 || !strata_h5_is_signature(buf))
    return strata_error(STRATA_EINVAL, "%s: not a strata checkpoint (not an HDF5 file image)",
                        name);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  int ok = fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
           H5Pset_file_image(fapl, (void *)buf, len) >= 0;
  /* A name no file has: the core driver would look at a file of the same
   * name on disk, though the image is all it reads. */
  hid_t f = ok ? H5Fopen("strata-checkpoint-image", H5F_ACC_RDONLY, fapl) : -1;
  if (fapl >= 0) H5Pclose(fapl);
  return read_open(f, name, out);
}

int strata_checkpoint_check_ncomp(const strata_checkpoint *c, const char *path, int ncomp)
{
  const int saved = c->state.ncomp > 1 ? c->state.ncomp : 1;
  if (saved == ncomp) return STRATA_OK;
  return strata_error(STRATA_EINVAL, "%s: the checkpoint holds %d component%s, the job "
                      "has %d; the file is left as it is", path, saved, saved == 1 ? "" : "s",
                      ncomp);
}
