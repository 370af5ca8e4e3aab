/* Checkpoints and logs through the library: a run continued from a
 * checkpoint is bit-identical to the uninterrupted one; damaged, truncated
 * or foreign files are refused with a message and left as they were; a
 * failed write (full disk, missing directory) leaves the old checkpoint.
 * The program-level cases (signals, kill -9, ranks) are in
 * run-checkpoint.sh. */
#include <errno.h>
#include <glob.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic.h"
#include "checkpoint.h"
#include "h5util.h"
#include "io.h"
#include "job.h"
#include "jobdef.h"
#include "ownfile.h"
#include "run.h"
#include "runlog.h"
#include "testrun.h"
#include "testutil.h"

static char dir[256];

static void make_dir(void) { test_tmpdir(dir, sizeof dir, "ckpt"); }
static void remove_dir(void) { test_rmdir(dir); }

static void path_in(char *buf, size_t len, const char *name)
{
  snprintf(buf, len, "%s/%s", dir, name);
}

/* The vegas modes' frozen iterations draw QMC points; and have their own
 * number of samples. */
static int qmc_map;
static int64_t neval_frozen;
/* Adapting iterations (5 unless a test says), and iterations in all. */
static int adapt_iters = 5, total_itns = 9;
/* The job's dimension (4 unless a test says), and whether it searches
 * for peaks (as the defaults say, unless a test turns it off). */
static int job_dim = 4, search_off;

/* The job every test here runs: f4 in d = 4, 5 adapting iterations. */
static void test_job(strata_mode mode, int maxiter, strata_problem *pr, strata_params *p)
{
  test_problem("f4", job_dim, pr);
  strata_params_default(p);
  p->mode = mode;
  p->neval = 20000;
  p->maxiter = maxiter;
  p->adapt_iters = adapt_iters;
  p->skip = 2;
  p->epsrel = 0;
  p->nthreads = 2;
  p->seed = 99;
  p->qmc_map = qmc_map;
  p->neval_frozen = neval_frozen;
  if (search_off) p->peaks.search = STRATA_PEAKS_OFF;
}

static void setup(fixture *f, strata_mode mode, int maxiter)
{
  strata_problem pr;
  strata_params p;
  test_job(mode, maxiter, &pr, &p);
  fixture_open(f, &pr, &p);
}

static void steps(fixture *f, int n, strata_iteration *rows)
{
  for (int k = 0; k < n; k++) {
    strata_iteration it;
    ck_assert_msg(strata_run_step(f->r, &it) == STRATA_OK, "%s", strata_last_error());
    if (rows) rows[f->r->ravg.n - 1] = it;
  }
}

static strata_iteration replayed[64];
static int nreplayed;
static void collect(const strata_iteration *it, void *ctx)
{
  (void)ctx;
  replayed[nreplayed++] = *it;
}

/* The checkpoint of the job's run of `total` iterations after `cut`, at
 * path; the run that wrote it is closed. */
static void checkpoint_at(const char *path, strata_mode mode, int total, int cut)
{
  fixture a;
  setup(&a, mode, total);
  steps(&a, cut, NULL);
  write_ckpt(path, &a);
  teardown(&a);
}

/* Interrupted after `cut` iterations, written, read back into a fresh run
 * and continued: every number equals the uninterrupted run's. */
static void resume_bits(strata_mode mode, int cut)
{
  const int total = total_itns;
  fixture ref, b;
  strata_iteration rows[64];
  setup(&ref, mode, total);
  steps(&ref, total, rows);

  make_dir();
  char path[300];
  path_in(path, sizeof path, "run.h5");
  checkpoint_at(path, mode, total, cut);

  strata_checkpoint *ck;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(ck->state.itn, cut);
  setup(&b, mode, total);
  nreplayed = 0;
  ck_assert_msg(strata_run_restore(b.r, &ck->state, collect, NULL) == STRATA_OK, "%s",
                strata_last_error());
  strata_checkpoint_free(ck);
  /* The replayed rows are the rows first reported (but for the wall time:
   * the reference is another run). */
  ck_assert_int_eq(nreplayed, cut);
  for (int k = 0; k < cut; k++) {
    strata_iteration x = rows[k];
    x.time_s = replayed[k].time_s;
    ck_assert_msg(memcmp(&replayed[k], &x, sizeof x) == 0, "mode %s: replayed row %d differs",
                  strata_mode_name(mode), k + 1);
  }
  steps(&b, total - cut, NULL);

  strata_result x, y;
  strata_run_result(ref.r, &x);
  strata_run_result(b.r, &y);
  ck_assert_msg(memcmp(&x.integral, &y.integral, sizeof(double)) == 0 &&
                    memcmp(&x.sigma, &y.sigma, sizeof(double)) == 0 &&
                    memcmp(&x.chi2_dof, &y.chi2_dof, sizeof(double)) == 0,
                "mode %s cut %d: %.17g +- %.17g uninterrupted, %.17g +- %.17g resumed",
                strata_mode_name(mode), cut, x.integral, x.sigma, y.integral, y.sigma);
  ck_assert_int_eq(x.neval, y.neval);
  ck_assert_int_eq(x.iterations, y.iterations);
  teardown(&ref);
  teardown(&b);
  remove_dir();
}

START_TEST(test_resume_vegasplus)
{
  resume_bits(STRATA_MODE_VEGASPLUS, 1);
  resume_bits(STRATA_MODE_VEGASPLUS, 4); /* while adapting */
  resume_bits(STRATA_MODE_VEGASPLUS, 7); /* map frozen */
}
END_TEST
/* Across the map's splits (after iterations 10, 11 and 12; 800 increments
 * in d = 4 at 2e4): the resumed run samples and refines at the resolution
 * the uninterrupted one did. */
START_TEST(test_resume_across_splits)
{
  adapt_iters = total_itns = 14;
  resume_bits(STRATA_MODE_VEGASPLUS, 10);
  resume_bits(STRATA_MODE_VEGASPLUS, 11);
  resume_bits(STRATA_MODE_VEGAS1D, 12);
  adapt_iters = 5;
  total_itns = 9;
}
END_TEST
START_TEST(test_resume_vegas) { resume_bits(STRATA_MODE_VEGAS, 3); }
END_TEST
START_TEST(test_resume_vegas1d) { resume_bits(STRATA_MODE_VEGAS1D, 6); }
END_TEST
START_TEST(test_resume_plain_qmc)
{
  resume_bits(STRATA_MODE_PLAIN, 3);
  resume_bits(STRATA_MODE_QMC, 4);
  qmc_map = 1;
  resume_bits(STRATA_MODE_VEGASPLUS, 3); /* adapting: next ones are qmc */
  resume_bits(STRATA_MODE_VEGASPLUS, 6); /* qmc already */
  qmc_map = 0;
}
END_TEST

/* Iterations after adapt_iters draw neval_frozen samples (the allocation
 * rescaled once the last adapting one is done), and a run resumed on either
 * side of that change, or right at it, is the uninterrupted one. */
START_TEST(test_neval_frozen)
{
  neval_frozen = 70000;
  fixture f;
  setup(&f, STRATA_MODE_VEGASPLUS, 8);
  steps(&f, 8, NULL);
  for (int k = 0; k < 8; k++)
    ck_assert_int_eq(f.r->ravg.hist[k].neval, k < f.p.adapt_iters ? f.p.neval : neval_frozen);
  teardown(&f);
  setup(&f, STRATA_MODE_VEGAS, 8);
  steps(&f, 8, NULL);
  const int64_t nh = f.r->strat->nhcube, each = neval_frozen / nh;
  ck_assert_int_eq(f.r->ravg.hist[7].neval, nh * (each < 2 ? 2 : each));
  ck_assert_int_lt(f.r->ravg.hist[0].neval, f.r->ravg.hist[7].neval);
  teardown(&f);
  resume_bits(STRATA_MODE_VEGASPLUS, 4);
  resume_bits(STRATA_MODE_VEGASPLUS, 5);
  resume_bits(STRATA_MODE_VEGASPLUS, 7);
  resume_bits(STRATA_MODE_VEGAS, 5);
  qmc_map = 1;
  resume_bits(STRATA_MODE_VEGASPLUS, 5);
  qmc_map = 0;
  neval_frozen = 0;
}
END_TEST

/* The job's run uninterrupted (rows) and resumed after `cut` iterations
 * from its checkpoint made a format-6 file (no packed_uniforms: a strata
 * that drew 32 bits always), continued (again); its iterations from cut
 * on, in both. */
static void resumed_from_older(int cut, strata_iteration *rows, strata_iteration *again)
{
  const int total = total_itns;
  fixture ref, b;
  setup(&ref, STRATA_MODE_VEGASPLUS, total);
  steps(&ref, total, rows);
  char path[300];
  path_in(path, sizeof path, "older.h5");
  checkpoint_at(path, STRATA_MODE_VEGASPLUS, total, cut);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ck_assert(f >= 0);
  ck_assert(H5Adelete(f, "packed_uniforms") >= 0);
  ck_assert(strata_h5_put_i64(f, "format_version", 6) == 0);
  H5Fclose(f);
  strata_checkpoint *ck;
  ck_assert_msg(strata_checkpoint_read(path, &ck) == STRATA_OK, "%s", strata_last_error());
  ck_assert_int_eq(ck->state.packed_uniforms, 0);
  setup(&b, STRATA_MODE_VEGASPLUS, total);
  ck_assert_msg(strata_run_restore(b.r, &ck->state, NULL, NULL) == STRATA_OK, "%s",
                strata_last_error());
  strata_checkpoint_free(ck);
  steps(&b, total - cut, again);
  teardown(&ref);
  teardown(&b);
}

/* Iterations that do not train the map draw packed uniforms (philox.h)
 * where the dimension packs (d = 6: 21 bits a coordinate), with the peak
 * search and without it: a run resumed on either side of the freeze is the
 * uninterrupted one.  A state saved by a strata that drew 32 bits always
 * resumes drawing 32 bits, as it ran: its adapting iterations are the
 * packed run's, its frozen ones not.  An attribute other than 0 or 1 is
 * refused, named. */
START_TEST(test_packed_uniforms)
{
  const int total = total_itns, cut = 3;
  strata_iteration rows[64], again[64];
  job_dim = 6;
  for (search_off = 0; search_off < 2; search_off++) {
    resume_bits(STRATA_MODE_VEGASPLUS, 4);
    resume_bits(STRATA_MODE_VEGASPLUS, 7);
    make_dir();
    resumed_from_older(cut, rows, again);
    for (int k = cut; k < total; k++) {
      const int same = test_same_bits(rows[k].integral, again[k].integral);
      ck_assert_msg(k < adapt_iters ? same : !same, "search %s, iteration %d: %.17g packed, "
                    "%.17g resumed from a 32-bit state", search_off ? "off" : "on", k + 1,
                    rows[k].integral, again[k].integral);
    }
  }
  search_off = 0;
  char path[300];
  path_in(path, sizeof path, "bad.h5");
  checkpoint_at(path, STRATA_MODE_VEGASPLUS, total, cut);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  ck_assert(f >= 0);
  ck_assert(strata_h5_put_i64(f, "packed_uniforms", 2) == 0);
  H5Fclose(f);
  strata_checkpoint *ck;
  ck_assert_int_ne(strata_checkpoint_read(path, &ck), STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "packed_uniforms"), "%s", strata_last_error());
  remove_dir();
  job_dim = 4;
}
END_TEST

/* The peak search's state (opaque to checkpoints) travels with the file
 * and the in-memory image bit for bit, NaN and infinities included; a
 * state without it (the search off, or a strata before the search) is
 * written without /peaks and reads back as none. */
START_TEST(test_peaks_state)
{
  fixture f;
  setup(&f, STRATA_MODE_VEGASPLUS, 9);
  steps(&f, 3, NULL);
  char def[STRATA_JOBDEF_MAX], path[300];
  ck_assert(strata_jobdef_text(&f.pr, &f.p, def, sizeof def) == STRATA_OK);
  strata_ckpt_info info = {def, "test", "cpu", "host", 1, 2};
  double peaks[1000];
  for (int i = 0; i < 1000; i++) peaks[i] = (i % 7 - 3) * 1.0 / (i + 3) + i * 1e-300;
  peaks[5] = NAN;
  peaks[6] = -INFINITY;
  for (int with = 0; with < 2; with++) {
    strata_run_state st = {0};
    strata_run_state_get(f.r, &st);
    st.npeaks = with ? 1000 : 0;
    st.peaks = with ? peaks : NULL;
    path_in(path, sizeof path, with ? "peaks.h5" : "nopeaks.h5");
    ck_assert_msg(strata_checkpoint_write(path, &st, &info, NULL, NULL) == STRATA_OK, "%s",
                  strata_last_error());
    void *buf;
    size_t len;
    ck_assert(strata_checkpoint_image(&st, &info, &buf, &len) == STRATA_OK);
    for (int image = 0; image < 2; image++) {
      strata_checkpoint *c;
      ck_assert_msg((image ? strata_checkpoint_read_image(buf, len, "(state)", &c)
                           : strata_checkpoint_read(path, &c)) == STRATA_OK,
                    "%s", strata_last_error());
      ck_assert_int_eq((int)c->state.npeaks, with ? 1000 : 0);
      ck_assert(with ? !memcmp(c->state.peaks, peaks, sizeof peaks) : c->state.peaks == NULL);
      ck_assert(c->state.itn == 3);
      strata_checkpoint_free(c);
    }
    free(buf);
  }
  teardown(&f);
}
END_TEST

/* The definition names the peak search where it may run, with its keys
 * and known points, and nowhere else: a definition without it is the one
 * strata wrote before it had a search. */
START_TEST(test_peaks_definition)
{
  strata_problem pr;
  strata_params p;
  test_job(STRATA_MODE_VEGASPLUS, 9, &pr, &p);
  char def[STRATA_JOBDEF_MAX];
  ck_assert(strata_jobdef_text(&pr, &p, def, sizeof def) == STRATA_OK);
  ck_assert_msg(strstr(def, "\npeaks.search = auto\npeaks.starts = 1024\npeaks.ascents = 4\n"
                            "peaks.uniform = 0.02\n") && !strstr(def, "peaks.known"), "%s", def);
  p.peaks.search = STRATA_PEAKS_ON;
  p.peaks.nknown = 2;
  const double k[2][4] = {{0.5, 0.25, 0.5, 0.5}, {0.75, 0.125, 0.5, 1}};
  memcpy(p.peaks.known[0], k[0], sizeof k[0]);
  memcpy(p.peaks.known[1], k[1], sizeof k[1]);
  ck_assert(strata_jobdef_text(&pr, &p, def, sizeof def) == STRATA_OK);
  ck_assert_msg(strstr(def, "peaks.search = on\n") &&
                strstr(def, "peaks.known = 0.5 0.25 0.5 0.5; 0.75 0.125 0.5 1\n"), "%s", def);
  strata_params q = p;
  q.peaks.search = STRATA_PEAKS_OFF;
  char off[STRATA_JOBDEF_MAX];
  ck_assert(strata_jobdef_text(&pr, &q, off, sizeof off) == STRATA_OK);
  ck_assert_msg(!strstr(off, "peaks."), "%s", off);
  /* Where auto does not search, the definition is the search-off one. */
  for (int c = 0; c < 3; c++) {
    q = p;
    strata_problem pv = pr;
    q.peaks.search = STRATA_PEAKS_AUTO;
    if (c == 0) q.mode = STRATA_MODE_PLAIN;
    if (c == 1) q.qmc_map = 1;
    if (c == 2) pv.ncomp = 3;
    strata_params o = q;
    o.peaks.search = STRATA_PEAKS_OFF;
    char a[STRATA_JOBDEF_MAX], b[STRATA_JOBDEF_MAX];
    ck_assert(strata_jobdef_text(&pv, &q, a, sizeof a) == STRATA_OK);
    ck_assert(strata_jobdef_text(&pv, &o, b, sizeof b) == STRATA_OK);
    ck_assert_msg(!strcmp(a, b), "case %d:\n%s", c, a);
  }
}
END_TEST

START_TEST(test_resume_changes_result)
{
  /* Guards the test above: a state that is not the run's own (another
   * seed's allocation and map) must give other numbers. */
  fixture a, b, ref;
  setup(&ref, STRATA_MODE_VEGASPLUS, 9);
  steps(&ref, 9, NULL);
  setup(&a, STRATA_MODE_VEGASPLUS, 9);
  a.r->params.seed = 7;
  steps(&a, 4, NULL);
  strata_run_state st;
  strata_run_state_get(a.r, &st);
  setup(&b, STRATA_MODE_VEGASPLUS, 9);
  ck_assert(strata_run_restore(b.r, &st, NULL, NULL) == STRATA_OK);
  steps(&b, 5, NULL);
  strata_result x, y;
  strata_run_result(ref.r, &x);
  strata_run_result(b.r, &y);
  ck_assert(x.integral != y.integral);
  teardown(&a);
  teardown(&b);
  teardown(&ref);
}
END_TEST

static long file_size(const char *path)
{
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static char *slurp(const char *path, long *n)
{
  *n = file_size(path);
  FILE *f = fopen(path, "rb");
  ck_assert(f && *n > 0);
  char *b = malloc((size_t)*n);
  ck_assert(fread(b, 1, (size_t)*n, f) == (size_t)*n);
  fclose(f);
  return b;
}

static void spit(const char *path, const char *b, long n)
{
  FILE *f = fopen(path, "wb");
  ck_assert(f != NULL);
  ck_assert(fwrite(b, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
}

/* The read must fail, with one line naming the file and holding `want`,
 * and leave the file byte for byte as it was. */
static void refused(const char *path, const char *want)
{
  long n0, n1;
  char *before = slurp(path, &n0);
  strata_checkpoint *ck = NULL;
  int rc = strata_checkpoint_read(path, &ck);
  const char *msg = strata_last_error();
  ck_assert_msg(rc != STRATA_OK, "%s: accepted", path);
  ck_assert_msg(strstr(msg, path) && strstr(msg, want), "message '%s' lacks '%s'", msg, want);
  ck_assert_msg(!strchr(msg, '\n'), "message is not one line");
  char *after = slurp(path, &n1);
  ck_assert(n0 == n1 && memcmp(before, after, (size_t)n0) == 0);
  free(before);
  free(after);
}

static void good_checkpoint(char *path, size_t len, fixture *f)
{
  make_dir();
  path_in(path, len, "good.h5");
  setup(f, STRATA_MODE_VEGASPLUS, 9);
  steps(f, 3, NULL);
  write_ckpt(path, f);
}

START_TEST(test_truncated)
{
  fixture f;
  char path[300], cut[300];
  good_checkpoint(path, sizeof path, &f);
  long n;
  char *b = slurp(path, &n);
  path_in(cut, sizeof cut, "cut.h5");
  const long sizes[] = {0, 7, 100, n / 4, n / 2, n - 4096, n - 1};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    spit(cut, b, sizes[i] > 0 ? sizes[i] : 0);
    if (sizes[i] == 0) {
      FILE *e = fopen(cut, "wb");
      fclose(e);
      strata_checkpoint *ck;
      ck_assert(strata_checkpoint_read(cut, &ck) != STRATA_OK);
      ck_assert(strstr(strata_last_error(), "not a strata checkpoint"));
      continue;
    }
    refused(cut, sizes[i] < 8 ? "not a strata checkpoint" : "truncated");
  }
  free(b);
  teardown(&f);
  remove_dir();
}
END_TEST

/* Offset of the first occurrence of needle in the file, or -1. */
static long find(const char *b, long n, const void *needle, size_t len)
{
  for (long i = 0; i + (long)len <= n; i++)
    if (!memcmp(b + i, needle, len)) return i;
  return -1;
}

START_TEST(test_damaged)
{
  fixture f;
  char path[300], bad[300];
  good_checkpoint(path, sizeof path, &f);
  path_in(bad, sizeof bad, "bad.h5");
  long n;
  char *b = slurp(path, &n);
  /* In the map's raw data (Fletcher-32): an interior edge of axis 1. */
  const double *e = f.r->map->edges;
  long at = find(b, n, &e[f.r->map->ninc / 2], sizeof(double));
  ck_assert(at > 0);
  b[at + 3] ^= 0x10;
  spit(bad, b, n);
  refused(bad, "checksum");
  b[at + 3] ^= 0x10;
  /* In the allocation's raw data. */
  at = find(b, n, &f.r->strat->nh[123], 4 * sizeof(int64_t));
  ck_assert(at > 0);
  b[at + 1] ^= 0x01;
  spit(bad, b, n);
  refused(bad, "checksum");
  b[at + 1] ^= 0x01;
  /* In an object header (metadata checksum). */
  at = find(b, n, "OHDR", 4);
  ck_assert(at > 0);
  b[at + 12] ^= 0x40;
  spit(bad, b, n);
  refused(bad, "checksum");
  b[at + 12] ^= 0x40;
  /* Intact again: accepted (the test can fail the other way too). */
  spit(bad, b, n);
  strata_checkpoint *ck;
  ck_assert_msg(strata_checkpoint_read(bad, &ck) == STRATA_OK, "%s", strata_last_error());
  strata_checkpoint_free(ck);
  /* Not HDF5 at all. */
  spit(bad, "[integral]\nintegrand = f4\n", 26);
  refused(bad, "not an HDF5 file");
  free(b);
  teardown(&f);
  remove_dir();
}
END_TEST

START_TEST(test_state_checks)
{
  fixture f, g;
  setup(&f, STRATA_MODE_VEGASPLUS, 9);
  steps(&f, 3, NULL);
  strata_run_state st;
  strata_run_state_get(f.r, &st);
  setup(&g, STRATA_MODE_VEGASPLUS, 9);
  strata_run_state bad = st;
  bad.nhcube = st.nhcube / 2;
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "does not fit this job"));
  bad = st;
  bad.neval_total += 1;
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "add up"));
  const size_t n1 = (size_t)st.ninc + 1; /* the map's edges per axis (map.h) */
  double *edges = malloc(sizeof(double) * (size_t)st.naxes * n1);
  memcpy(edges, st.edges, sizeof(double) * (size_t)st.naxes * n1);
  edges[n1 + 10] = edges[n1 + 11]; /* axis 2 no longer increasing */
  bad = st;
  bad.edges = edges;
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "axis 2"));
  free(edges);
  /* a hypercube holding 2^62 samples (a valid checksum
   * over an edited file) ran nothing and ended with status 0. */
  int64_t *nh = malloc(sizeof(int64_t) * (size_t)st.nhcube);
  memcpy(nh, st.nh, sizeof(int64_t) * (size_t)st.nhcube);
  nh[7] = INT64_C(1) << 62;
  bad = st;
  bad.nh = nh;
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "saved allocation gives hypercube 7 "
                       "4611686018427387904 samples, beyond the"), "%s", strata_last_error());
  /* many hypercubes each within the total, together beyond it (and beyond
   * int64 if added up unchecked) */
  for (int64_t h = 0; h < st.nhcube; h++) nh[h] = INT64_MAX / 4;
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "saved allocation gives hypercube 0 "));
  memcpy(nh, st.nh, sizeof(int64_t) * (size_t)st.nhcube);
  nh[0] += 20000 + 2 * st.nhcube; /* just past neval + 2 per hypercube */
  ck_assert(strata_run_restore(g.r, &bad, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "this job can allocate in all"));
  free(nh);
  g.r->params.maxiter = 2;
  ck_assert(strata_run_restore(g.r, &st, NULL, NULL) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "maxiter"));
  g.r->params.maxiter = 9;
  ck_assert(strata_run_restore(g.r, &st, NULL, NULL) == STRATA_OK);
  teardown(&f);
  teardown(&g);
}
END_TEST

/* A file of an older format version resumes when its map has the
 * increments this strata gives the job before its splits (the callers pass
 * strata_run_map_base), and is refused naming its version when not
 * (version 2 trained a map in one dimension too, and fewer increments than
 * two per stratum in two dimensions at small neval; version 3 stored the
 * map with the increments of its first iterations, which resume as the
 * map before its splits: tests/test_mapsplit). */
START_TEST(test_older_versions)
{
  strata_checkpoint c = {.format_version = 2};
  c.state.ninc = 100;
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 100, 10000, 3) == STRATA_OK);
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 1, 10000, 1) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "old.h5: checkpoint format version 2, whose map "
                       "has 100 increments per axis; this strata (format version 7) trains 1 "
                       "for neval = 10000 in 1 dimension: run the job again"),
                "%s", strata_last_error());
  c.format_version = 1;
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 1000, 1000000, 8) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "format version 1,"));
  c.format_version = 3;
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 100, 10000, 8) == STRATA_OK);
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 1000, 1000000, 4) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "format version 3, whose map has 100 increments"));
  /* Files stored as the map splits (version 4 on) go on to
   * strata_run_restore's checks, whatever their map's count. */
  c.format_version = 4;
  ck_assert(strata_checkpoint_check_version(&c, "old.h5", 1, 10000, 1) == STRATA_OK);
  c.format_version = 5;
  ck_assert(strata_checkpoint_check_version(&c, "new.h5", 1, 10000, 1) == STRATA_OK);
  c.format_version = 6;
  ck_assert(strata_checkpoint_check_version(&c, "new.h5", 1, 10000, 1) == STRATA_OK);
  c.format_version = 7;
  ck_assert(strata_checkpoint_check_version(&c, "new.h5", 1, 10000, 1) == STRATA_OK);
}
END_TEST

START_TEST(test_write_failures)
{
  fixture f;
  char path[300], tmp[310], nodir[300];
  good_checkpoint(path, sizeof path, &f);
  long n0;
  char *before = slurp(path, &n0);
  /* A directory that is a regular file. */
  path_in(nodir, sizeof nodir, "good.h5/inside.h5");
  ck_assert(strata_atomic_probe(nodir, "checkpoint") != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "Not a directory"));
  char def[STRATA_JOBDEF_MAX];
  ck_assert(strata_jobdef_text(&f.pr, &f.p, def, sizeof def) == STRATA_OK);
  strata_ckpt_info info = {def, "test", "cpu", "host", 1, 2};
  strata_run_state st;
  strata_run_state_get(f.r, &st);
  ck_assert(strata_checkpoint_write(nodir, &st, &info, NULL, NULL) != STRATA_OK);
  /* A full disk: the file size limit below the checkpoint's size. */
  steps(&f, 2, NULL);
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim;
  ck_assert(getrlimit(RLIMIT_FSIZE, &lim) == 0);
  lim.rlim_cur = (rlim_t)(n0 / 2);
  ck_assert(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  strata_run_state_get(f.r, &st);
  int rc = strata_checkpoint_write(path, &st, &info, NULL, NULL);
  const char *msg = strata_last_error();
  ck_assert_msg(rc != STRATA_OK, "written beyond the file size limit");
  ck_assert_msg(strstr(msg, path) && strstr(msg, "File too large") && !strchr(msg, '\n'),
                "message: %s", msg);
  long n1;
  char *after = slurp(path, &n1);
  ck_assert(n0 == n1 && memcmp(before, after, (size_t)n0) == 0);
  /* Temporary files have names of their own: none may be left. */
  snprintf(tmp, sizeof tmp, "%s.tmp*", path);
  glob_t g;
  ck_assert_msg(glob(tmp, 0, NULL, &g) == GLOB_NOMATCH, "temporary file left behind");
  /* The old checkpoint still reads. */
  strata_checkpoint *ck;
  ck_assert(strata_checkpoint_read(path, &ck) == STRATA_OK);
  ck_assert_int_eq(ck->state.itn, 3);
  strata_checkpoint_free(ck);
  free(before);
  free(after);
  teardown(&f);
  remove_dir();
}
END_TEST

static void definition(const char *job_text, char *def)
{
  char p[300];
  path_in(p, sizeof p, "job.ini");
  FILE *f = fopen(p, "w");
  fputs(job_text, f);
  fclose(f);
  strata_job job;
  strata_problem pr;
  strata_job_init(&job);
  ck_assert_msg(strata_job_load(&job, p) == STRATA_OK, "%s", strata_last_error());
  ck_assert_msg(strata_job_resolve(&job, &pr, NULL) == STRATA_OK, "%s", strata_last_error());
  ck_assert(strata_jobdef_text(&pr, &job.p, def, STRATA_JOBDEF_MAX) == STRATA_OK);
}

START_TEST(test_definitions)
{
  static char a[STRATA_JOBDEF_MAX], b[STRATA_JOBDEF_MAX];
  char ha[17], hb[17];
  make_dir();
  /* Defaults spelled out, or not, and 1e6 for 1000000: the same job. */
  definition("[integral]\nintegrand = f4\ndim = 6\n[vegas]\nneval = 1e6\n", a);
  definition("[integral]\nintegrand = f4\ndim = 6\nlower = 0\nupper = 1\nparams = 625\n"
             "[vegas]\nneval = 1000000\nmode = vegas+\nninc = 1000\n",
             b);
  ck_assert_str_eq(a, b);
  ck_assert_int_eq(strata_jobdef_compare(a, b, 0, "c.h5", "checkpoint", "job.ini"), STRATA_OK);
  /* A key that fixes the samples: refused, also with force, and named. */
  definition("[integral]\nintegrand = f4\ndim = 6\n[vegas]\nneval = 2e6\n", b);
  ck_assert(strata_jobdef_compare(a, b, 1, "c.h5", "checkpoint", "job.ini") != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "vegas.neval = 1000000 in the checkpoint, "
                                            "2000000 in job.ini"),
                "%s", strata_last_error());
  ck_assert(strstr(strata_last_error(), "--force cannot"));
  strata_jobdef_hash(a, ha);
  strata_jobdef_hash(b, hb);
  ck_assert_str_ne(ha, hb);
  definition("[integral]\nintegrand = f4\ndim = 6\nlower = 0, 0, 0, 0, 0, 0.5\n", b);
  ck_assert(strata_jobdef_compare(a, b, 1, "c.h5", "checkpoint", "job.ini") != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "integral.lower"));
  /* A safe key: refused without force, accepted with it, same hash. */
  definition("[integral]\nintegrand = f4\ndim = 6\n[vegas]\nneval = 1e6\nmaxiter = 60\nepsrel = 1e-4\n",
             b);
  ck_assert(strata_jobdef_compare(a, b, 0, "c.h5", "checkpoint", "job.ini") != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "vegas.maxiter = 30 in the checkpoint, 60 in "
                                            "job.ini: add --force"),
                "%s", strata_last_error());
  ck_assert_int_eq(strata_jobdef_compare(a, b, 1, "c.h5", "checkpoint", "job.ini"), STRATA_OK);
  strata_jobdef_hash(a, ha);
  strata_jobdef_hash(b, hb);
  ck_assert_str_eq(ha, hb);
  remove_dir();
}
END_TEST

static strata_runlog_info log_info(fixture *f, char *def)
{
  ck_assert(strata_jobdef_text(&f->pr, &f->p, def, STRATA_JOBDEF_MAX) == STRATA_OK);
  return (strata_runlog_info){.job = "job.ini", .definition = def, .integrand = "f4",
                              .mode = "vegas+", .backend = "cpu", .host = "h",
                              .checkpoint = "c.h5", .dim = 4, .ranks = 2, .threads = 2,
                              .exact = 1.0, .naxes = 4, .ninc = 1000};
}

START_TEST(test_log_resume)
{
  static char def[STRATA_JOBDEF_MAX];
  fixture f;
  strata_iteration rows[64];
  char path[300], notice[1024];
  make_dir();
  path_in(path, sizeof path, "log.h5");
  setup(&f, STRATA_MODE_VEGASPLUS, 9);
  steps(&f, 6, rows);
  strata_runlog_info li = log_info(&f, def);
  strata_runlog *l;
  ck_assert_msg(strata_runlog_create(path, &li, &l) == STRATA_OK, "%s", strata_last_error());
  double rank_s[2] = {0.5, 0.25};
  for (int k = 0; k < 5; k++)
    ck_assert(strata_runlog_append(l, &rows[k], 1.0 + k, rank_s, 2, NULL) == STRATA_OK);
  ck_assert(strata_runlog_close(l) == STRATA_OK);
  /* Never overwritten. */
  ck_assert(strata_runlog_create(path, &li, &l) != STRATA_OK);
  ck_assert(strstr(strata_last_error(), "exists already"));
  /* Resumed after iteration 3: rows 4 and 5 go, the run recomputes them. */
  ck_assert_msg(strata_runlog_resume(path, &li, 0, rows, 3, &l, notice, sizeof notice) ==
                    STRATA_OK,
                "%s", strata_last_error());
  ck_assert_int_eq(strata_runlog_rows(l), 3);
  ck_assert_str_eq(notice, "");
  ck_assert(strata_runlog_close(l) == STRATA_OK);
  /* Resumed after iteration 6: row 4..6 come from the replayed history. */
  ck_assert(strata_runlog_resume(path, &li, 0, rows, 6, &l, notice, sizeof notice) ==
            STRATA_OK);
  ck_assert_int_eq(strata_runlog_rows(l), 6);
  ck_assert(strata_runlog_checkpointed(l, 6) == STRATA_OK);
  ck_assert(strata_runlog_close(l) == STRATA_OK);
  /* A log that records a newer checkpoint than the one resumed. */
  ck_assert(strata_runlog_resume(path, &li, 0, rows, 2, &l, notice, sizeof notice) !=
            STRATA_OK);
  ck_assert(strstr(strata_last_error(), "checkpoint after iteration 6"));
  /* Another job's log. */
  f.p.seed = 5;
  static char def2[STRATA_JOBDEF_MAX];
  strata_runlog_info other = log_info(&f, def2);
  ck_assert(strata_runlog_resume(path, &other, 1, rows, 6, &l, notice, sizeof notice) !=
            STRATA_OK);
  ck_assert(strstr(strata_last_error(), "vegas.seed"));
  /* A damaged log (cut short by a crash): kept aside, rebuilt. */
  long n;
  char *b = slurp(path, &n);
  spit(path, b, n / 2);
  free(b);
  ck_assert_msg(strata_runlog_resume(path, &li, 0, rows, 6, &l, notice, sizeof notice) ==
                    STRATA_OK,
                "%s", strata_last_error());
  ck_assert_int_eq(strata_runlog_rows(l), 6);
  ck_assert_msg(strstr(notice, "log.h5.broken"), "notice: %s", notice);
  ck_assert(strata_runlog_close(l) == STRATA_OK);
  char moved[320];
  snprintf(moved, sizeof moved, "%s.broken", path);
  ck_assert(file_size(moved) == n / 2);
  /* Not a log at all: refused and left alone. */
  spit(path, "hello\n", 6);
  ck_assert(strata_runlog_resume(path, &li, 0, rows, 6, &l, notice, sizeof notice) !=
            STRATA_OK);
  ck_assert(strstr(strata_last_error(), "not a strata log"));
  ck_assert(file_size(path) == 6);
  teardown(&f);
  remove_dir();
}
END_TEST

/* The file HDF5 opens by name must be the one checked through a
 * descriptor: strata_ownfile_same tells two files apart by device and
 * inode, and strata_ownfile_h5open refuses a link and a FIFO (which must
 * not hold the open) before HDF5 sees the name. */
START_TEST(test_open_checked_file)
{
  make_dir();
  char a[512], b[512], link[512], fifo[512];
  path_in(a, sizeof a, "a.h5");
  path_in(b, sizeof b, "b.h5");
  path_in(link, sizeof link, "link.h5");
  path_in(fifo, sizeof fifo, "fifo.h5");
  for (int i = 0; i < 2; i++) {
    hid_t f = H5Fcreate(i ? b : a, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(f >= 0);
    H5Fclose(f);
  }
  int failed;
  hid_t f = strata_ownfile_h5open(a, H5F_ACC_RDONLY, H5P_DEFAULT, "test file", "", 1, &failed);
  ck_assert_msg(f >= 0, "%s", strata_last_error());
  struct stat sa, sb;
  ck_assert(stat(a, &sa) == 0 && stat(b, &sb) == 0);
  ck_assert(strata_ownfile_same(f, &sa));
  ck_assert(!strata_ownfile_same(f, &sb));
  H5Fclose(f);
  ck_assert(symlink(a, link) == 0);
  ck_assert(strata_ownfile_h5open(link, H5F_ACC_RDONLY, H5P_DEFAULT, "test file", "", 1,
                                  &failed) < 0);
  ck_assert_msg(failed == STRATA_OWNFILE_REFUSED && strstr(strata_last_error(), "symbolic link"),
                "%s", strata_last_error());
  ck_assert(mkfifo(fifo, 0600) == 0);
  ck_assert(strata_ownfile_h5open(fifo, H5F_ACC_RDONLY, H5P_DEFAULT, "test file", "", 1,
                                  &failed) < 0);
  ck_assert_msg(failed == STRATA_OWNFILE_REFUSED &&
                    strstr(strata_last_error(), "not a regular file"),
                "%s", strata_last_error());
  remove_dir();
}
END_TEST

/* One run per checkpoint: a second process is refused with the holder's
 * pid, a link at the lock's name is not followed, and temporary files are
 * new files, never a name planted beforehand. */
START_TEST(test_lock_and_temporaries)
{
  make_dir();
  char path[300], lock[310], target[300], planted[320];
  path_in(path, sizeof path, "ck.h5");
  int p2c[2], c2p[2];
  ck_assert(pipe(p2c) == 0 && pipe(c2p) == 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    int fd;
    char c = strata_lock_take(path, "checkpoint", &fd) == STRATA_OK ? 'y' : 'n';
    if (write(c2p[1], &c, 1) != 1 || read(p2c[0], &c, 1) != 1) _exit(2);
    _exit(0);
  }
  char c = 0;
  ck_assert(read(c2p[0], &c, 1) == 1 && c == 'y');
  int fd = -1;
  ck_assert(strata_lock_take(path, "checkpoint", &fd) != STRATA_OK);
  char want[64];
  snprintf(want, sizeof want, "in use by another strata run (pid %ld on ", (long)child);
  ck_assert_msg(strstr(strata_last_error(), want), "message: %s", strata_last_error());
  ck_assert(write(p2c[1], "x", 1) == 1);
  int st;
  ck_assert(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  /* Free again once the holder has ended. */
  ck_assert_msg(strata_lock_take(path, "checkpoint", &fd) == STRATA_OK, "%s", strata_last_error());
  close(fd);
  /* A link at the lock's name is refused, its target untouched. */
  path_in(target, sizeof target, "precious.txt");
  spit(target, "precious", 8);
  path_in(planted, sizeof planted, "other.h5");
  snprintf(lock, sizeof lock, "%s.lock", planted);
  ck_assert(symlink(target, lock) == 0);
  ck_assert(strata_lock_take(planted, "checkpoint", &fd) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "symbolic link"), "%s", strata_last_error());
  /* A link at the old temporary name is never opened. */
  snprintf(lock, sizeof lock, "%s.tmp", planted);
  ck_assert(symlink(target, lock) == 0);
  strata_tmpfile t;
  ck_assert(strata_atomic_create(planted, "checkpoint", &t) == STRATA_OK);
  ck_assert(strcmp(t.path, lock) && !strncmp(t.path, lock, strlen(lock)));
  strata_atomic_abandon(&t);
  long n;
  char *b = slurp(target, &n);
  ck_assert(n == 8 && !memcmp(b, "precious", 8));
  free(b);
  remove_dir();
}
END_TEST

/* The state in memory (strata_integrator_save_buffer / load_buffer): a
 * run continued from the bytes equals the uninterrupted one bit for bit;
 * bytes that are no HDF5 image, and a state of other parameters, are
 * refused and leave the integrator as it was. */
static void count_restored(const strata_iteration *it, void *ctx)
{
  (void)it;
  ++*(int *)ctx;
}

START_TEST(test_state_buffer)
{
  strata_problem pr;
  strata_params p;
  test_job(STRATA_MODE_VEGASPLUS, 8, &pr, &p);
  strata_integrator *a, *b, *c;
  ck_assert(strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &a) == STRATA_OK);
  for (int k = 0; k < 3; k++) ck_assert(strata_integrator_step(a, NULL) == STRATA_OK);
  void *buf = NULL;
  size_t len = 0;
  ck_assert_msg(strata_integrator_save_buffer(a, &buf, &len) == STRATA_OK, "%s",
                strata_last_error());
  strata_result whole, continued;
  ck_assert(strata_integrator_integrate(a, NULL, NULL, &whole) == STRATA_OK);

  ck_assert(strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &b) == STRATA_OK);
  char junk[64] = "not an HDF5 image at all";
  ck_assert(strata_integrator_load_buffer(b, junk, sizeof junk, NULL, NULL) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "not an HDF5 file image"), "%s",
                strata_last_error());
  int restored = 0;
  ck_assert_msg(strata_integrator_load_buffer(b, buf, len, count_restored, &restored) ==
                    STRATA_OK,
                "%s", strata_last_error());
  ck_assert_int_eq(restored, 3);
  ck_assert(strata_integrator_integrate(b, NULL, NULL, &continued) == STRATA_OK);
  ck_assert_msg(continued.integral == whole.integral && continued.sigma == whole.sigma &&
                    continued.iterations == whole.iterations,
                "continued %.17g +- %.17g, uninterrupted %.17g +- %.17g", continued.integral,
                continued.sigma, whole.integral, whole.sigma);

  /* Another seed: refused, and the integrator runs from its own start. */
  strata_params q = p;
  q.seed = p.seed + 1;
  ck_assert(strata_integrator_alloc(&pr, &q, STRATA_BACKEND_CPU, NULL, &c) == STRATA_OK);
  ck_assert(strata_integrator_load_buffer(c, buf, len, NULL, NULL) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "seed"), "%s", strata_last_error());
  strata_iteration it;
  ck_assert(strata_integrator_step(c, &it) == STRATA_OK);
  ck_assert_int_eq(it.itn, 1);
  free(buf);
  strata_integrator_free(a);
  strata_integrator_free(b);
  strata_integrator_free(c);
}
END_TEST

/* The state of integrator s, read back from its bytes (free with
 * strata_checkpoint_free). */
static strata_checkpoint *state_of(strata_integrator *s)
{
  void *buf = NULL;
  size_t len = 0;
  strata_checkpoint *c = NULL;
  ck_assert_msg(strata_integrator_save_buffer(s, &buf, &len) == STRATA_OK, "%s",
                strata_last_error());
  ck_assert_msg(strata_checkpoint_read_image(buf, len, "(state)", &c) == STRATA_OK, "%s",
                strata_last_error());
  free(buf);
  return c;
}

/* A run started from another (strata_integrator_start_from, how the Python
 * binding's calls go on): its map, and with the same hypercubes its
 * allocation; with other hypercubes the even allocation; refused once the
 * run has begun or where the axes differ. */
START_TEST(test_start_from)
{
  strata_problem pr;
  strata_params p;
  test_job(STRATA_MODE_VEGASPLUS, 8, &pr, &p);
  strata_integrator *a, *b, *c, *d;
  ck_assert(strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &a) == STRATA_OK);
  for (int k = 0; k < 4; k++) ck_assert(strata_integrator_step(a, NULL) == STRATA_OK);
  strata_checkpoint *ca = state_of(a);

  ck_assert(strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &b) == STRATA_OK);
  ck_assert_msg(strata_integrator_start_from(b, a) == STRATA_OK, "%s", strata_last_error());
  strata_checkpoint *cb = state_of(b);
  const size_t nedge = (size_t)ca->state.naxes * (size_t)(ca->state.ninc + 1);
  ck_assert_int_eq(cb->state.itn, 0);
  ck_assert_int_eq(cb->state.ninc, ca->state.ninc);
  ck_assert(memcmp(cb->state.edges, ca->state.edges, sizeof(double) * nedge) == 0);
  ck_assert_int_eq(cb->state.nhcube, ca->state.nhcube);
  int moved = 0;
  for (int64_t h = 0; h < ca->state.nhcube; h++) {
    ck_assert_int_eq(cb->state.nh[h], ca->state.nh[h]);
    moved |= ca->state.nh[h] != ca->state.nh[0];
  }
  ck_assert_msg(moved, "the trained allocation is not even: the test sees it carried");
  /* Begun: refused, and named so. */
  ck_assert(strata_integrator_step(b, NULL) == STRATA_OK);
  ck_assert(strata_integrator_start_from(b, a) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "the run started from") &&
                    strstr(strata_last_error(), "iteration 1"),
                "%s", strata_last_error());

  /* Four times the samples: other hypercubes, the map alone. */
  strata_params q = p;
  q.neval = 4 * p.neval;
  ck_assert(strata_integrator_alloc(&pr, &q, STRATA_BACKEND_CPU, NULL, &c) == STRATA_OK);
  ck_assert_msg(strata_integrator_start_from(c, a) == STRATA_OK, "%s", strata_last_error());
  strata_checkpoint *cc = state_of(c);
  ck_assert(cc->state.nhcube != ca->state.nhcube);
  int64_t lo = cc->state.nh[0], hi = lo;
  for (int64_t h = 0; h < cc->state.nhcube; h++) {
    lo = cc->state.nh[h] < lo ? cc->state.nh[h] : lo;
    hi = cc->state.nh[h] > hi ? cc->state.nh[h] : hi;
  }
  ck_assert_msg(hi - lo <= 1, "an even allocation: %lld to %lld", (long long)lo, (long long)hi);
  /* The map is a's, rebinned: equal wherever an edge of c falls on one of a's. */
  const int na = ca->state.ninc, nc = cc->state.ninc;
  int same = 0;
  for (int j = 0; j <= nc; j++)
    if ((int64_t)j * na % nc == 0) {
      ck_assert(cc->state.edges[j] == ca->state.edges[(int64_t)j * na / nc]);
      same++;
    }
  ck_assert_int_ge(same, 2);

  /* vegas1d has one axis, vegas+ four. */
  q = p;
  q.mode = STRATA_MODE_VEGAS1D;
  ck_assert(strata_integrator_alloc(&pr, &q, STRATA_BACKEND_CPU, NULL, &d) == STRATA_OK);
  ck_assert(strata_integrator_start_from(d, a) != STRATA_OK);
  ck_assert_msg(strstr(strata_last_error(), "the map has 4 axes"), "%s", strata_last_error());
  strata_checkpoint_free(ca);
  strata_checkpoint_free(cb);
  strata_checkpoint_free(cc);
  strata_integrator_free(a);
  strata_integrator_free(b);
  strata_integrator_free(c);
  strata_integrator_free(d);
}
END_TEST

int main(void)
{
  strata_init();
  Suite *s = suite_create("checkpoint");
  TCase *tc = tcase_create("files");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_resume_vegasplus);
  tcase_add_test(tc, test_resume_vegas);
  tcase_add_test(tc, test_resume_across_splits);
  tcase_add_test(tc, test_resume_vegas1d);
  tcase_add_test(tc, test_resume_plain_qmc);
  tcase_add_test(tc, test_neval_frozen);
  tcase_add_test(tc, test_resume_changes_result);
  tcase_add_test(tc, test_packed_uniforms);
  tcase_add_test(tc, test_peaks_state);
  tcase_add_test(tc, test_peaks_definition);
  tcase_add_test(tc, test_truncated);
  tcase_add_test(tc, test_damaged);
  tcase_add_test(tc, test_open_checked_file);
  tcase_add_test(tc, test_state_checks);
  tcase_add_test(tc, test_older_versions);
  tcase_add_test(tc, test_write_failures);
  tcase_add_test(tc, test_definitions);
  tcase_add_test(tc, test_log_resume);
  tcase_add_test(tc, test_lock_and_temporaries);
  tcase_add_test(tc, test_state_buffer);
  tcase_add_test(tc, test_start_from);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
