/* A convergence log read back (strata/log.h): the table and summary, or
 * the CSV, of `strata log`, from the file runlog.c writes. */
#include "strata/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "h5util.h"
#include "ownfile.h"
#include "runlog_format.h"
#include "strata/report.h"

/* A vector integrand's per-component rows (/iterations_comp), when the log
 * has them: n x ncomp rows of STRATA_LOG_COMP_WIDTH(ncomp) doubles. */
typedef struct {
  int ncomp;       /* 0: a scalar log */
  hsize_t rows;    /* iterations with component rows */
  double *v;
} comp_rows;

static int comp_width(const comp_rows *c) { return STRATA_LOG_COMP_WIDTH(c->ncomp); }

/* A table of doubles, where the log has one: 1 read, 0 none, -1 failed.
 * The result tables carry a checksum attribute (h5util.h), checked here;
 * the others a checksum on every chunk, which HDF5 checks. */
static int read_doubles(hid_t f, const char *name, int rank, hsize_t *dims, double **out)
{
  *out = NULL;
  htri_t there = H5Lexists(f, name, H5P_DEFAULT);
  if (there <= 0) return there < 0 ? -1 : 0;
  size_t n = 0;
  hid_t d = strata_h5_open_data(f, name, H5T_FLOAT, rank, dims, &n);
  int ok = d >= 0 && (*out = malloc(sizeof(double) * (n ? n : 1)));
  ok = ok && (n == 0 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) >= 0);
  uint64_t sum;
  if (ok && H5Aexists(d, "checksum") > 0 &&
      (strata_h5_get_u64(d, "checksum", &sum) != 0 || strata_h5_checksum(*out, n) != sum)) {
    strata_h5_set_detail("checksum mismatch: the data is damaged");
    ok = 0;
  }
  if (d >= 0) H5Oclose(d);
  if (!ok) {
    free(*out);
    *out = NULL;
    return -1;
  }
  return 1;
}

static const double *comp_of(const comp_rows *c, hsize_t i)
{
  return c->ncomp > 1 && i < c->rows
             ? c->v + (size_t)i * (size_t)c->ncomp * (size_t)comp_width(c)
             : NULL;
}

/* A value of the average's columns: NaN for an iteration left out of the
 * average, as logs of format version 3 store it (older ones hold chi2 0
 * and Q 1 there), so that every log's CSV has NaN where the table prints
 * "-". */
static double avg_col(int kept, double v) { return kept ? v : NAN; }

/* The peak search's rows (/iterations_peaks), when the log has them. */
typedef struct {
  hsize_t rows;
  double *v;       /* rows x STRATA_LOG_PEAKS_WIDTH, or NULL */
} peak_rows;

static void print_csv(FILE *out, const strata_log_row *r, hsize_t n, const comp_rows *c,
                      const peak_rows *pk)
{
  fprintf(out, "itn,integral,sigma,average,average_sigma,chi2_dof,Q,neval,wall_s,elapsed_s,"
               "kept,restarted,adapting");
  static const char *const col[] = {"integral", "sigma", "average", "average_sigma",
                                    "chi2_dof", "Q"};
  const int nc = c->ncomp, w = nc > 1 ? comp_width(c) : 0, ncov = (w - 6) / 2;
  for (int k = 0; nc > 1 && k < nc; k++) {
    for (int j = 0; j < 6; j++) fprintf(out, ",c%d_%s", k, col[j]);
    for (int b = 0; b < ncov; b++) fprintf(out, ",c%d_cov_%d", k, b);
    for (int b = 0; b < ncov; b++) fprintf(out, ",c%d_average_cov_%d", k, b);
  }
  if (pk->v) {
    fprintf(out, ",khat,nchannels,alpha_map,alpha_uniform");
    for (int j = 0; j < STRATA_MAX_PEAKS; j++) fprintf(out, ",alpha_mode_%d", j + 1);
  }
  fprintf(out, "\n");
  for (hsize_t i = 0; i < n; i++) {
    const int kept = r[i].kept;
    fprintf(out, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%lld,%.17g,%.17g,%d,%d,%d", r[i].itn,
            r[i].integral, r[i].sigma, avg_col(kept, r[i].average),
            avg_col(kept, r[i].average_sigma), avg_col(kept, r[i].chi2_dof),
            avg_col(kept, r[i].Q), (long long)r[i].neval, r[i].wall_s, r[i].elapsed_s, kept,
            r[i].restarted, r[i].adapting);
    const double *v = comp_of(c, i);
    for (int k = 0; v && k < nc; k++)
      for (int j = 0; j < w; j++) {
        const int avg = (j >= STRATA_COMP_AVG && j <= STRATA_COMP_Q) || j >= STRATA_COMP_COV + nc;
        fprintf(out, ",%.17g", avg ? avg_col(kept, v[k * w + j]) : v[k * w + j]);
      }
    for (int j = 0; pk->v && j < STRATA_LOG_PEAKS_WIDTH; j++)
      fprintf(out, ",%.17g", i < pk->rows ? pk->v[i * STRATA_LOG_PEAKS_WIDTH + j] : NAN);
    fprintf(out, "\n");
  }
}

static void print_table(FILE *out, const strata_log_row *r, hsize_t n, const comp_rows *c)
{
  /* Rows without covariances (many components) into the layout the table
   * reads (strata_iteration.comp), for the components it shows. */
  const int nc = c->ncomp, shown = nc < STRATA_MAX_COMP ? nc : STRATA_MAX_COMP;
  const size_t iw = nc > 1 ? STRATA_COMP_ROW(nc) : 0, w = nc > 1 ? (size_t)comp_width(c) : 0;
  double *wide = w != iw ? calloc((size_t)shown * iw, sizeof(double)) : NULL;
  strata_report_header(out);
  for (hsize_t i = 0; i < n; i++) {
    strata_iteration it = {.itn = r[i].itn,
                           .integral = r[i].integral,
                           .sigma = r[i].sigma,
                           .neval = r[i].neval,
                           .kept = r[i].kept,
                           .restarted = r[i].restarted,
                           .avg = r[i].average,
                           .avg_sigma = r[i].average_sigma,
                           .chi2_dof = r[i].chi2_dof,
                           .q = r[i].Q,
                           .adapting = r[i].adapting,
                           .time_s = r[i].wall_s};
    if ((it.comp = comp_of(c, i))) it.ncomp = c->ncomp;
    if (it.comp && w != iw) {
      for (int k = 0; wide && k < shown; k++)
        memcpy(wide + (size_t)k * iw, it.comp + (size_t)k * w, sizeof(double) * w);
      it.comp = wide;
    }
    strata_report_iteration(out, &it);
  }
  free(wide);
}

/* An attribute that older logs lack: left as it is when absent, -1 when
 * there and not one number. */
static int opt_i64(hid_t f, const char *name, int64_t *v)
{
  return H5Aexists(f, name) > 0 && strata_h5_get_i64(f, name, v) != 0 ? -1 : 0;
}

static int opt_f64(hid_t f, const char *name, double *v)
{
  return H5Aexists(f, name) > 0 && strata_h5_get_f64(f, name, v) != 0 ? -1 : 0;
}

/* The peak search's result (runlog.c's finish_peaks), where the run
 * searched: 0, or -1 for one that is there and cannot be read. */
static int read_peaks(hid_t f, strata_result *res)
{
  int64_t v[6] = {0, 0, 0, 0, 0, 0}, dim = 0;
  char *reason = NULL;
  htri_t there = H5Aexists(f, "peaks_searched");
  if (there <= 0) return there < 0 ? -1 : 0;
  if (strata_h5_get_i64(f, "peaks_searched", &v[0]) || strata_h5_get_i64(f, "nmodes", &v[1]) ||
      strata_h5_get_i64(f, "nchannels", &v[2]) || strata_h5_get_i64(f, "khat_itn", &v[3]) ||
      strata_h5_get_i64(f, "search_evals", &v[4]) || strata_h5_get_i64(f, "peaks_held", &v[5]) ||
      strata_h5_get_f64(f, "alpha_map", &res->alpha_map) ||
      strata_h5_get_f64(f, "alpha_uniform", &res->alpha_uniform) ||
      strata_h5_get_f64(f, "khat", &res->khat) ||
      strata_h5_get_f64(f, "khat_limit", &res->khat_limit) ||
      strata_h5_get_f64(f, "peaks_neval", &res->peaks_neval) ||
      strata_h5_get_i64(f, "dim", &dim) || strata_h5_get_str(f, "peaks_reason", &reason))
    return -1;
  if (v[1] < 0 || v[1] > 1000000 || dim < 1 || dim > STRATA_MAX_DIM) {
    free(reason);
    strata_h5_set_detail("an impossible mode count or dimension");
    return -1;
  }
  res->peaks_searched = (int)v[0];
  res->nmodes = (int)v[1];
  res->nchannels = (int)v[2];
  res->khat_itn = (int)v[3];
  res->search_evals = v[4];
  res->peaks_held = (int)v[5];
  res->dim = (int)dim;
  snprintf(res->peaks_reason, sizeof res->peaks_reason, "%s", reason);
  free(reason);
  hsize_t dm[2];
  double *m = NULL;
  const int held = res->nmodes < STRATA_MAX_PEAKS ? res->nmodes : STRATA_MAX_PEAKS;
  int got = read_doubles(f, "modes", 2, dm, &m);
  if (got < 0 || (held > 0 && (got == 0 || dm[0] != (hsize_t)held ||
                               dm[1] != (hsize_t)dim + 4))) {
    free(m);
    if (got >= 0) strata_h5_set_detail("/modes is missing or has another shape than nmodes x (dim + 4)");
    return -1;
  }
  for (int j = 0; j < held; j++) {
    const double *r = m + (size_t)j * (size_t)(dim + 4);
    memcpy(res->modes[j].x, r, sizeof(double) * (size_t)dim);
    res->modes[j].logf = r[dim];
    res->modes[j].share = r[dim + 1];
    res->modes[j].weight = r[dim + 2];
    res->modes[j].known = r[dim + 3] != 0.0;
  }
  free(m);
  return 0;
}

/* The summary the run printed at its end, from the attributes it left. */
static int read_summary(hid_t f, strata_result *out, double *exact_out)
{
  strata_result res;
  memset(&res, 0, sizeof res);
  int64_t conv = 0, itn = 0, neval = 0;
  double exact = NAN;
  if (strata_h5_get_i64(f, "converged", &conv) != 0 ||
      strata_h5_get_i64(f, "iterations", &itn) != 0 ||
      strata_h5_get_i64(f, "neval", &neval) != 0 ||
      strata_h5_get_f64(f, "integral", &res.integral) != 0 ||
      strata_h5_get_f64(f, "sigma", &res.sigma) != 0 ||
      strata_h5_get_f64(f, "chi2_dof", &res.chi2_dof) != 0 ||
      strata_h5_get_f64(f, "Q", &res.q) != 0 || strata_h5_get_f64(f, "time_s", &res.time_s) != 0 ||
      strata_h5_get_f64(f, "exact", &exact) != 0)
    return -1;
  res.converged = (int)conv;
  /* Logs written before these attributes lack them: no verdict beyond
   * converged.  One that is there is read as any other. */
  int64_t v[3] = {0, 0, 0};
  if (opt_i64(f, "no_target", &v[0]) || opt_i64(f, "lost", &v[1]) ||
      opt_i64(f, "lost_itn", &v[2]) || opt_f64(f, "lost_z", &res.lost_z) ||
      opt_f64(f, "lost_integral", &res.lost_integral) ||
      opt_f64(f, "lost_sigma", &res.lost_sigma) ||
      opt_f64(f, "neval_needed", &res.neval_needed))
    return -1;
  res.no_target = (int)v[0];
  res.lost = (int)v[1];
  res.lost_itn = (int)v[2];
  if (opt_i64(f, "thin", &v[0]) || opt_f64(f, "thin_neval", &res.thin_neval)) return -1;
  res.thin = (int)v[0];
  res.iterations = (int)itn;
  res.neval = neval;
  if (read_peaks(f, &res) != 0) return -1;
  hsize_t d1[2], d2[2];
  double *rc = NULL, *cov = NULL;
  int a = read_doubles(f, "result_comp", 2, d1, &rc), b = read_doubles(f, "result_cov", 2, d2, &cov);
  int ok = a >= 0 && b >= 0;
  if (ok && a > 0 && b > 0 && d1[0] > 1 && d1[0] <= STRATA_MAX_NCOMP && d1[1] == 4 &&
      d2[0] == d1[0] && d2[1] == d1[0]) {
    /* What a strata_result holds: the first STRATA_MAX_COMP components. */
    res.ncomp = (int)d1[0];
    const int held = res.ncomp < STRATA_MAX_COMP ? res.ncomp : STRATA_MAX_COMP;
    for (int k = 0; k < held; k++) {
      res.comp_integral[k] = rc[4 * k];
      res.comp_sigma[k] = rc[4 * k + 1];
      res.comp_chi2_dof[k] = rc[4 * k + 2];
      res.comp_q[k] = rc[4 * k + 3];
      for (int j = 0; j < held; j++) res.comp_cov[k * held + j] = cov[(size_t)k * d1[0] + j];
    }
  }
  free(rc);
  free(cov);
  if (!ok) return -1;
  *out = res;
  *exact_out = exact;
  return 0;
}

/* The log at path, opened for reading, or -1 with the error set; *again:
 * a failure that a writer's flush in the middle may have caused. */
static hid_t open_log(const char *path, int *again)
{
  strata_h5_begin();
  /* Any user's log may be shown, but never through a link or from a FIFO
   * (ownfile.h); a log that a run writes opens in SWMR mode.  No lock: the
   * run takes none of HDF5's either. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_file_locking(fapl, 0, 1);
  /* A metadata block whose checksum fails is read again, as it may have
   * met the writer's flush: HDF5's 100 tries with growing pauses take a
   * second on damage, 12 take milliseconds, and strata_log_print tries
   * again. */
  H5Pset_metadata_read_attempts(fapl, 12);
  int failed;
  hid_t f = strata_ownfile_h5open(path, H5F_ACC_RDONLY, fapl, "log", "",
                                  STRATA_TRUST_ANY_OWNER, &failed);
  H5Pclose(fapl);
  if (f < 0) {
    if (failed == STRATA_OWNFILE_NOT_HDF5)
      strata_error(STRATA_EIO, "%s: not a strata log (not an HDF5 file)", path);
    /* (refused or damaged: the error says why) */
    *again = failed != STRATA_OWNFILE_REFUSED && failed != STRATA_OWNFILE_NOT_HDF5;
    if (*again && failed != STRATA_OWNFILE_DAMAGED)
      strata_error(STRATA_EIO, "%s: cannot read the log: %s", path, strata_h5_detail());
  }
  return f;
}

/* Reads and prints the log; STRATA_EIO with the error set on failure.
 * *again: the failure was in reading HDF5 data, which a read that meets
 * the writer's flush may see (a chunk being rewritten fails its
 * checksum). */
static int show(const char *path, int csv, FILE *out, int *again)
{
  *again = 0;
  hid_t f = open_log(path, again);
  if (f < 0) return STRATA_EIO;
  int rc = STRATA_EIO;
  char *format = NULL, *status = NULL;
  strata_log_row *rows = NULL;
  comp_rows cr = {0};
  peak_rows pk = {0};
  hid_t d = -1, t = -1;
  if (strata_h5_get_str(f, "format", &format) != 0 || strcmp(format, STRATA_LOG_FORMAT)) {
    const htri_t there = H5Aexists(f, "format");
    /* (one there but unreadable may have met the writer's flush) */
    *again = there < 0 || (there > 0 && !format);
    if (!format && there > 0)
      strata_error(STRATA_EIO, "%s: cannot read the log: %s", path, strata_h5_detail());
    else
      strata_error(STRATA_EIO, "%s: not a strata log (no format = \"%s\" attribute)", path,
                   STRATA_LOG_FORMAT);
    goto out;
  }
  hsize_t di[1];
  size_t n = 0;
  d = strata_h5_open_data(f, "iterations", H5T_COMPOUND, 1, di, &n);
  t = strata_log_row_type(0);
  /* Zeroed: a member the file's rows lack is left as it is. */
  if (d >= 0) rows = calloc(n > 0 ? n : 1, sizeof *rows);
  if (d < 0 || !rows || (n > 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows) < 0)) {
    *again = 1;
    if (d >= 0 && !rows) strata_h5_set_detail("out of memory");
    strata_error(STRATA_EIO, "%s: cannot read /iterations: %s", path, strata_h5_detail());
    goto out;
  }
  hsize_t cd[3];
  if (read_doubles(f, "iterations_comp", 3, cd, &cr.v) < 0 ||
      (cr.v && (cd[1] < 2 || cd[1] > STRATA_MAX_NCOMP ||
                cd[2] != (hsize_t)STRATA_LOG_COMP_WIDTH((int)cd[1])))) {
    *again = 1;
    if (cr.v) strata_h5_set_detail("its shape is no vector integrand's");
    strata_error(STRATA_EIO, "%s: cannot read /iterations_comp: %s", path, strata_h5_detail());
    goto out;
  }
  if (cr.v) {
    cr.ncomp = (int)cd[1];
    cr.rows = cd[0];
  }
  hsize_t pd[2];
  if (csv && (read_doubles(f, "iterations_peaks", 2, pd, &pk.v) < 0 ||
              (pk.v && pd[1] != STRATA_LOG_PEAKS_WIDTH))) {
    *again = 1;
    if (pk.v) strata_h5_set_detail("its width is not the peak search's");
    strata_error(STRATA_EIO, "%s: cannot read /iterations_peaks: %s", path, strata_h5_detail());
    goto out;
  }
  if (pk.v) pk.rows = pd[0];
  strata_result res;
  double exact = NAN;
  /* The status says whether a summary follows: one that cannot be read, or
   * reads as none of the three a run writes (its string sits where no
   * checksum covers it), is damage, not a run still going. */
  if (!csv && (strata_h5_get_str(f, "status", &status) != 0 ||
               (strcmp(status, "running") && strcmp(status, "finished") &&
                strcmp(status, "stopped")))) {
    *again = 1;
    strata_error(STRATA_EIO, "%s: the log's status cannot be read (damaged)", path);
    goto out;
  }
  int finished = !csv && !strcmp(status, "finished");
  if (finished && read_summary(f, &res, &exact) != 0) {
    *again = 1;
    strata_error(STRATA_EIO, "%s: the run finished but its result cannot be read: %s", path,
                 strata_h5_detail());
    goto out;
  }
  if (csv) {
    print_csv(out, rows, (hsize_t)n, &cr, &pk);
  } else {
    print_table(out, rows, (hsize_t)n, &cr);
    if (finished) strata_report_summary(out, &res, exact);
  }
  fflush(out);
  rc = STRATA_OK;
out:
  free(cr.v);
  free(pk.v);
  free(format);
  free(status);
  free(rows);
  if (t >= 0) H5Tclose(t);
  if (d >= 0) H5Oclose(d);
  H5Fclose(f);
  return rc;
}

/* A read that fails only because it met the writer's flush succeeds a
 * moment later; damage fails every time.  Nothing is written to out
 * before the whole log has been read, so a retry repeats nothing. */
int strata_log_print(const char *path, int csv, FILE *out)
{
  if (!path || !out)
    return strata_error(STRATA_EINVAL, "strata_log_print: %s is NULL", !path ? "path" : "out");
  int again = 0, rc = STRATA_EIO;
  for (int k = 0; k < 3; k++) {
    if (k > 0) {
      struct timespec ts = {0, 20000000L * (2 * k - 1)};
      nanosleep(&ts, NULL);
    }
    rc = show(path, csv, out, &again);
    if (rc == STRATA_OK || !again) break;
  }
  return rc;
}
