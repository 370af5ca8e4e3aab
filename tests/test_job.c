/* Bad input, through the library: every case fails with STRATA_EINVAL (or
 * the error named) and a message naming the file, line, key or point. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "message.h"
#include "testutil.h"

static char path[256];

static double corner(const double *x, int dim, const double *params);

static int load_text(strata_job *job, const char *text)
{
  snprintf(path, sizeof path, "/tmp/strata-test-job-%d.ini", (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert(f != NULL);
  fputs(text, f);
  fclose(f);
  strata_job_init(job);
  int rc = strata_job_load(job, path);
  unlink(path);
  return rc;
}

/* The job must fail to load or to resolve, with a message holding want. */
static void rejects(const char *text, const char *want)
{
  strata_job job;
  strata_problem pr;
  int rc = load_text(&job, text);
  if (rc == STRATA_OK) rc = strata_job_resolve(&job, &pr, NULL);
  ck_assert_msg(rc != STRATA_OK, "accepted: %s", text);
  ck_assert_msg(strstr(app_message(), want) != NULL, "message '%s' lacks '%s'",
                app_message(), want);
  ck_assert_msg(strchr(app_message(), '\n') == NULL, "message is not one line");
}

START_TEST(test_good_job)
{
  strata_job job;
  strata_problem pr;
  const strata_builtin *b;
  ck_assert_int_eq(load_text(&job, "[integral]\nintegrand = f2\ndim = 3\nparams = 20\n"
                                   "lower = 0, 0.1, 0.2\nupper = 1\n[vegas]\nmode = vegas\n"
                                   "neval = 2.5e5\nseed = 0x10\nalpha = 0.25\n[run]\n"
                                   "threads = 3\n"),
                   STRATA_OK);
  ck_assert_int_eq(strata_job_resolve(&job, &pr, &b), STRATA_OK);
  ck_assert_int_eq(pr.dim, 3);
  ck_assert(pr.lower[1] == 0.1 && pr.lower[2] == 0.2 && pr.upper[2] == 1.0);
  ck_assert(pr.params[0] == 20.0 && pr.nparams == 1);
  ck_assert_int_eq(job.p.mode, STRATA_MODE_VEGAS);
  ck_assert_int_eq(job.p.neval, 250000);
  ck_assert(job.p.seed == 16 && job.p.alpha == 0.25 && job.p.nthreads == 3);
  ck_assert_int_eq(strata_job_set(&job, "vegas.neval = 1000"), STRATA_OK);
  ck_assert_int_eq(job.p.neval, 1000);
}
END_TEST

START_TEST(test_default_job)
{
  strata_job job;
  strata_problem pr;
  strata_job_init(&job);
  ck_assert_int_eq(strata_job_load(&job, NULL), STRATA_OK);
  ck_assert_int_eq(strata_job_resolve(&job, &pr, NULL), STRATA_OK);
  ck_assert_str_eq(pr.name, "f4");
}
END_TEST

START_TEST(test_bad_jobs)
{
  rejects("[integral]\nintegrand = f4\n[vegas]\nnevl = 10\n", ":4: unknown key 'nevl' in [vegas]");
  rejects("[integral]\nintegrand = f4\n[vegas]\nneval = 1e6x\n", ":4: vegas.neval = '1e6x'");
  rejects("[vegas]\nneval = 1.5\n", ":2: vegas.neval = '1.5'");
  rejects("[vegas]\nepsrel = nan\n", ":2: vegas.epsrel = 'nan'");
  rejects("[vegas]\nseed = -3\n", ":2: vegas.seed = '-3'");
  rejects("[vegas]\nmode = miser\n", ":2: vegas.mode = 'miser'");
  rejects("[integral]\ndim = 0\n", ":2: integral.dim = '0'");
  rejects("[integral]\ndim = 33\n", ":2: integral.dim = '33'");
  rejects("[integral]\nintegrand = f4\nlower = 0, x\n", ":3: integral.lower = '0, x'");
  rejects("[integral]\nintegrand = f4\ndim = 2\nlower = 1\nupper = 0.5\n",
          "axis 1 has lower 1 >= upper 0.5");
  rejects("[integral]\nintegrand = f4\ndim = 2\nupper = 1, 1, 1\n",
          "integral.upper has 3 values for dim 2");
  rejects("[integral]\nintegrand = nosuch\n", "integral.integrand = 'nosuch': unknown integrand");
  rejects("[integral]\ndim = 3\n", "integrand is not set");
  rejects("[integral]\nintegrand = f4\nparams = 1, 2\n", "integrand f4 takes 1 parameter");
  rejects("[integral]\nintegrand = f1\nparams = 1\n", "integrand f1 takes 0 parameters");
  rejects("[output]\nformat = json\n", ":2: unknown section [output]");
  rejects("integrand = f4\n", ":1: unknown section []");
  rejects("[integral\nintegrand = f4\n", ":1: syntax error");
  rejects("[run]\nbackend = opencl\n", ":2: run.backend = 'opencl'");
  rejects("[integral]\nintegrand = f4\n[vegas]\nmaxiter = 3\n", "skip = 5: must be in");
  rejects("[integral]\nintegrand = f4\n[vegas]\nmaxeval = 10\n", "maxeval = 10 is smaller");
  rejects("[vegas]\nqmc = halton\n", ":2: vegas.qmc = 'halton': expected sobol or lattice");
  rejects("[vegas]\nnrand = 1\n", ":2: vegas.nrand = '1'");
  rejects("[vegas]\nqmc_map = yes\n", ":2: vegas.qmc_map = 'yes': expected on or off");
  rejects("[integral]\nintegrand = f4\n[vegas]\nmode = qmc\nneval = 20\nnrand = 16\n",
          "mode qmc needs at least 2 points per randomization");
}
END_TEST

/* whole numbers are decimal (leading zeros too) or 0x hex,
 * never octal, in every integer key and in --set. */
/* [peaks]: every key read into strata_params.peaks, the known points in
 * the integrand's own coordinates; bad values named with file, line, key
 * and value, and points that do not fit the problem named when it is
 * resolved. */
START_TEST(test_peaks_keys)
{
  strata_job job;
  strata_problem pr;
  ck_assert_int_eq(load_text(&job, "[integral]\nintegrand = fB\ndim = 2\n[peaks]\nsearch = on\n"
                                   "starts = 256\nascents = 6\nuniform = 0.05\n"
                                   "known = -0.5 0.25; 0.1,0.2;\n"),
                   STRATA_OK);
  ck_assert_int_eq(strata_job_resolve(&job, &pr, NULL), STRATA_OK);
  const strata_peaks_params *k = &job.p.peaks;
  ck_assert_int_eq(k->search, STRATA_PEAKS_ON);
  ck_assert_int_eq(k->starts, 256);
  ck_assert_int_eq(k->ascents, 6);
  ck_assert(k->uniform == 0.05);
  ck_assert_int_eq(k->nknown, 2);
  ck_assert(k->known[0][0] == -0.5 && k->known[0][1] == 0.25);
  ck_assert(k->known[1][0] == 0.1 && k->known[1][1] == 0.2);
  ck_assert_int_eq(strata_job_set(&job, "peaks.search=off"), STRATA_OK);
  ck_assert_int_eq(job.p.peaks.search, STRATA_PEAKS_OFF);
  /* On the command line a ';' is only a separator. */
  ck_assert_int_eq(strata_job_set(&job, "peaks.known=0.5 0.5 ; 0.25 0.75"), STRATA_OK);
  ck_assert_int_eq(job.p.peaks.nknown, 2);
  ck_assert_int_eq(strata_job_set(&job, "peaks.known="), STRATA_OK);
  ck_assert_int_eq(job.p.peaks.nknown, 0);
  /* Not set: the library's defaults. */
  strata_params d;
  strata_params_default(&d);
  ck_assert_int_eq(load_text(&job, "[integral]\nintegrand = f4\n"), STRATA_OK);
  ck_assert(!memcmp(&job.p.peaks, &d.peaks, sizeof d.peaks));

  rejects("[peaks]\nsearch = yes\n", ":2: peaks.search = 'yes': expected on, off or auto");
  rejects("[peaks]\nstarts = -1\n", ":2: peaks.starts = '-1'");
  rejects("[peaks]\nascents = 0\n", ":2: peaks.ascents = '0'");
  rejects("[peaks]\nuniform = 0\n", ":2: peaks.uniform = '0'");
  rejects("[peaks]\nuniform = 0.6\n", ":2: peaks.uniform = '0.6'");
  rejects("[peaks]\nstep = 2\n", ":2: unknown key 'step' in [peaks]");
  rejects("[peaks]\nknown = 0.5 x\n", ":2: peaks.known = '0.5 x'");
  rejects("[peaks]\nknown = 1; 2; 3; 4; 5; 6; 7; 8; 9\n", "at most 8 points");
  rejects("[peaks]\nsearch = on\nsearch = off\n", "key peaks.search given twice");
  /* inih cuts a comment at " ;": the second point would vanish unseen. */
  rejects("[integral]\nintegrand = f4\ndim = 2\n[peaks]\nknown = 0.3 0.7 ; 0.7 0.3\n",
          ":5: peaks.known = '0.3 0.7': what follows ' ;' is a comment");
  rejects("[integral]\nintegrand = f4\ndim = 2\n[peaks]\nknown = 0.3 0.7; 0.5\n",
          ".ini: peaks.known = '0.3 0.7; 0.5': point 2 has 1 coordinate for dim 2");
  rejects("[integral]\nintegrand = fB\ndim = 2\n[peaks]\nknown = 0.3 -1.5\n",
          "peaks.known = '0.3 -1.5': point 1, axis 2: -1.5 is outside the domain [-1, 1]");
  rejects("[integral]\nintegrand = f4\ndim = 1\n[peaks]\nsearch = off\nknown = 0.5\n",
          "peaks.known = '0.5': peaks.search = off runs no peak search");
  rejects("[integral]\nintegrand = f4\ndim = 1\n[vegas]\nmode = plain\n[peaks]\nknown = 0.5\n",
          "peaks.known = '0.5': mode plain runs no peak search");
  rejects("[integral]\nintegrand = f4\n[vegas]\nmode = qmc\n[peaks]\nsearch = on\n",
          "peaks.search = on: mode qmc");
}
END_TEST

START_TEST(test_whole_numbers)
{
  strata_job job;
  ck_assert_int_eq(load_text(&job, "[vegas]\nseed = 010\nneval = 0100\nmaxiter = 08\n"
                                   "maxeval = 1152921504606846975\n[integral]\ndim = 09\n"),
                   STRATA_OK);
  ck_assert(job.p.seed == 10);
  ck_assert_int_eq(job.p.neval, 100);
  ck_assert_int_eq(job.p.maxiter, 8);
  ck_assert_int_eq(job.dim, 9);
  /* 2^60 - 1 exactly: through a double it would be 2^60 */
  ck_assert(job.p.maxeval == (INT64_C(1) << 60) - 1);
  ck_assert_int_eq(load_text(&job, "[vegas]\nseed = 18446744073709551615\nneval = 2.5e3\n"),
                   STRATA_OK);
  ck_assert(job.p.seed == UINT64_MAX && job.p.neval == 2500);
  ck_assert_int_eq(strata_job_set(&job, "vegas.seed=0X1f"), STRATA_OK);
  ck_assert(job.p.seed == 31);
  ck_assert_int_eq(strata_job_set(&job, "vegas.seed=007"), STRATA_OK);
  ck_assert(job.p.seed == 7);
  ck_assert_int_ne(strata_job_set(&job, "vegas.seed=1e3"), STRATA_OK);
  ck_assert(strstr(app_message(), "vegas.seed = '1e3': expected a whole number in "
                   "0..2^64-1, decimal or 0x hex") != NULL);
  rejects("[vegas]\nseed = 18446744073709551616\n", ":2: vegas.seed = '18446744073709551616'");
  rejects("[vegas]\nseed = 0x\n", ":2: vegas.seed = '0x'");
  rejects("[vegas]\nseed = +5\n", ":2: vegas.seed = '+5'");
  rejects("[vegas]\nneval = 0x1p4\n", ":2: vegas.neval = '0x1p4'");
  rejects("[vegas]\nneval = 1e3e\n", ":2: vegas.neval = '1e3e'");
  rejects("[run]\nthreads = 1e400\n", ":2: run.threads = '1e400'");
}
END_TEST

/* a key given twice is refused naming both lines. */
START_TEST(test_duplicate_keys)
{
  rejects("[integral]\nintegrand = f4\n[vegas]\nneval = 1000\nseed = 2\n\nneval = 2000\n",
          ":7: key vegas.neval given twice (first on line 4)");
  rejects("[vegas]\nneval = 1000\n[integral]\nintegrand = f4\n[vegas]\nneval = 2000\n",
          ":6: key vegas.neval given twice (first on line 2)");
  rejects("[integral]\nintegrand = inline\nbody = return 1;\nbody = return 2;\n",
          ":4: key integral.body given twice (first on line 3)");
  /* an indented line is another value of the key above: only body has lines */
  rejects("[integral]\nintegrand = f4\nlower = 0,\n  0.5\n",
          ":4: an indented line continues integral.lower, which takes one line");
  strata_job job;
  /* one section in two pieces, with other keys: fine */
  ck_assert_int_eq(load_text(&job, "[vegas]\nneval = 1000\n[integral]\nintegrand = f4\n"
                                   "[vegas]\nseed = 3\n"),
                   STRATA_OK);
  ck_assert(job.p.neval == 1000 && job.p.seed == 3);
  /* a body over several lines */
  ck_assert_int_eq(load_text(&job, "[integral]\nintegrand = inline\nbody = double s = x[0];\n"
                                   "  return s;\ndim = 1\n"),
                   STRATA_OK);
  ck_assert_str_eq(job.body, "double s = x[0];\nreturn s;");
  /* --set overrides the file's key: no duplicate */
  ck_assert_int_eq(load_text(&job, "[vegas]\nneval = 1000\n"), STRATA_OK);
  ck_assert_int_eq(strata_job_set(&job, "vegas.neval=3000"), STRATA_OK);
  ck_assert_int_eq(job.p.neval, 3000);
}
END_TEST

/* long lines are read whole (inih's buffer is 200 bytes)
 * up to 4096 characters, and a longer one is refused on its own line. */
START_TEST(test_long_lines)
{
  char text[12000];
  char pad[5001];
  memset(pad, 'x', 5000);
  pad[300] = '\0';
  snprintf(text, sizeof text, "[integral]\nintegrand = f4\n; %s\ndim = 3\nfoo = 1\n", pad);
  rejects(text, ":5: unknown key 'foo' in [integral]");
  /* 32 bounds at full precision: longer than 200 characters */
  char list[1024] = "";
  for (int i = 0; i < 32; i++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s0.10000000000000001", i ? ", " : "");
  snprintf(text, sizeof text, "[integral]\nintegrand = f1\ndim = 32\nlower = %s\n", list);
  strata_job job;
  ck_assert_int_eq(load_text(&job, text), STRATA_OK);
  ck_assert_int_eq(job.nlower, 32);
  ck_assert(job.lower[31] == 0.1);
  pad[300] = 'x';
  snprintf(text, sizeof text, "[integral]\nintegrand = f4\n; %s\ndim = 3\n", pad);
  rejects(text, ":3: line too long (5002 characters; at most 4096)");
  char set[5100];
  snprintf(set, sizeof set, "run.log=%s", pad);
  strata_job_init(&job);
  ck_assert_int_ne(strata_job_set(&job, set), STRATA_OK);
  ck_assert(strstr(app_message(), "--set run.log: value too long (5000 characters; at "
                   "most 4096)") != NULL);
}
END_TEST

/* A line's ending, however long, is not the line: a value followed by
 * 5000 '\r' before its '\n' is read as the value (the reader copied the
 * ending too, past inih's buffer), and a NUL byte is refused. */
START_TEST(test_line_endings)
{
  static char text[12000];
  size_t n = (size_t)snprintf(text, sizeof text, "[vegas]\nneval = 1e4");
  memset(text + n, '\r', 5000);
  strcpy(text + n + 5000, "\n[integral]\nintegrand = f1\ndim = 2\r\r\r");
  strata_job job;
  ck_assert_int_eq(load_text(&job, text), STRATA_OK);
  ck_assert_int_eq((int)job.p.neval, 10000);
  ck_assert_int_eq(job.dim, 2);
  /* 4096 characters, the longest line, then "\r\r\n" */
  char pad[4097];
  memset(pad, '0', 4096);
  pad[4096] = '\0';
  memcpy(pad, "dim=", 4);
  pad[4095] = '3';
  snprintf(text, sizeof text, "[integral]\nintegrand = f1\n%s\r\r\n", pad);
  ck_assert_int_eq(load_text(&job, text), STRATA_OK);
  ck_assert_int_eq(job.dim, 3);
  strata_problem pr;
  snprintf(path, sizeof path, "/tmp/strata-test-job-%d.ini", (int)getpid());
  FILE *f = fopen(path, "w");
  ck_assert(f != NULL);
  fwrite("[integral]\nintegrand = f1\ndim = 2\0 3\n", 1, 37, f);
  fclose(f);
  strata_job_init(&job);
  int rc = strata_job_load(&job, path);
  if (rc == STRATA_OK) rc = strata_job_resolve(&job, &pr, NULL);
  unlink(path);
  ck_assert_int_ne(rc, STRATA_OK);
  ck_assert_msg(strstr(app_message(), ":3: a NUL byte in the line") != NULL, "%s",
                app_message());
}
END_TEST

/* No raw control character in a message: a key, value or file name that
 * holds one is quoted with it escaped, as C writes it. */
static void printable(const char *msg)
{
  for (const char *p = msg; *p; p++)
    ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "raw 0x%02x in '%s'",
                  (unsigned char)*p, msg);
}

START_TEST(test_control_characters)
{
  rejects("[run]\nthr\reads = 1\n", ":2: unknown key 'thr\\reads' in [run]");
  printable(app_message());
  rejects("[vegas]\nneval = 1\x01\x7f\t2\n", ":2: vegas.neval = '1\\x01\\x7f\\t2'");
  printable(app_message());
  rejects("[ru\x1b[2Jn]\na = 1\n", "unknown section [ru\\x1b[2Jn]");
  printable(app_message());
  strata_job job;
  strata_job_init(&job);
  ck_assert_int_ne(strata_job_set(&job, "run.thr\x1b]0;x\aeads=1"), STRATA_OK);
  ck_assert_msg(strstr(app_message(), "unknown key 'thr\\x1b]0;x\\aeads' in [run]"),
                "%s", app_message());
  printable(app_message());
  ck_assert_int_ne(strata_job_load(&job, "/nonexistent/a\nb\r.ini"), STRATA_OK);
  ck_assert_msg(strstr(app_message(), "/nonexistent/a\\nb\\r.ini: cannot read the job file"), "%s",
                app_message());
  printable(app_message());
}
END_TEST

/* limits named, boxes beyond doubles refused. */
START_TEST(test_limits)
{
  rejects("[integral]\nintegrand = inline\ndim = 1\nbody = return 1;\n"
          "params = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n",
          ":5: integral.params = '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17': at most 16 "
          "parameters");
  rejects("[integral]\nintegrand = f1\nupper = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
          "20 21 22 23 24 25 26 27 28 29 30 31 32 33\n", ":3: integral.upper = '1 2 3");
  rejects("[integral]\nintegrand = f1\nupper = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 "
          "20 21 22 23 24 25 26 27 28 29 30 31 32 33\n", "': at most 32 values (one per axis)");
  rejects("[integral]\nintegrand = f1\ndim = 2\nlower = -1e308\nupper = 1e308\n",
          "integral.lower/upper: axis 1 from -1e+308 to 1e+308 is wider than the largest double");
  rejects("[integral]\nintegrand = f1\ndim = 4\nlower = 0\nupper = 1e100\n",
          "integral.lower/upper: the box's volume inf is beyond the range of doubles");
  rejects("[integral]\nintegrand = f1\ndim = 4\nlower = 0\nupper = 1e-100\n",
          "integral.lower/upper: the box's volume 0 is beyond the range of doubles");
  strata_problem pr = {.f = corner, .dim = 2, .nparams = 2, .name = "corner"};
  pr.lower[0] = -1e308;
  pr.upper[0] = 1e308;
  pr.upper[1] = 1.0;
  strata_params p;
  strata_params_default(&p);
  strata_result r;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  ck_assert_msg(strstr(strata_last_error(), "axis 1: the width from -1e+308 to 1e+308 is "
                       "beyond the largest double"), "%s", strata_last_error());
}
END_TEST

/* Paths in a job file are relative to its directory: "/" for a job in /. */
START_TEST(test_job_paths)
{
  static const struct {
    const char *source, *dir, *rel, *abs;
  } c[] = {{"/job.ini", "/", "/t.h5", "/d/t.h5"},
           {"a/b/job.ini", "a/b", "a/b/t.h5", "/d/t.h5"},
           {"/x/job.ini", "/x", "/x/t.h5", "/d/t.h5"},
           {"job.ini", "", "t.h5", "/d/t.h5"},
           {"(default job)", "", "t.h5", "/d/t.h5"}};
  for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
    strata_job job;
    strata_job_init(&job);
    snprintf(job.source, sizeof job.source, "%s", c[i].source);
    char dir[64], rel[64], abs[64];
    strata_job_dir(&job, dir, sizeof dir);
    strata_job_path(&job, "t.h5", rel, sizeof rel);
    strata_job_path(&job, "/d/t.h5", abs, sizeof abs);
    ck_assert_str_eq(dir, c[i].dir);
    ck_assert_str_eq(rel, c[i].rel);
    ck_assert_str_eq(abs, c[i].abs);
  }
}
END_TEST

START_TEST(test_directory_job)
{
  strata_job job;
  strata_job_init(&job);
  ck_assert_int_eq(strata_job_load(&job, "/tmp"), STRATA_EIO);
  ck_assert_msg(strstr(app_message(), "/tmp: cannot read the job file: not a regular file (a directory)") != NULL,
                "%s", app_message());
}
END_TEST

START_TEST(test_missing_file)
{
  strata_job job;
  strata_job_init(&job);
  ck_assert_int_eq(strata_job_load(&job, "/nonexistent/strata.ini"), STRATA_EIO);
  ck_assert(strstr(app_message(), "/nonexistent/strata.ini: cannot read the job file: No such file") != NULL);
}
END_TEST

START_TEST(test_bad_set)
{
  strata_job job;
  strata_job_init(&job);
  ck_assert_int_ne(strata_job_set(&job, "neval=5"), STRATA_OK);
  ck_assert(strstr(app_message(), "expected section.key=value") != NULL);
  ck_assert_int_ne(strata_job_set(&job, "vegas.neval"), STRATA_OK);
  ck_assert_int_ne(strata_job_set(&job, "vegas.ninc=0"), STRATA_OK);
  ck_assert(strstr(app_message(), "--set vegas.ninc=0: vegas.ninc = '0'") != NULL);
}
END_TEST

/* An integrand that misbehaves in one corner of the box. */
static double corner(const double *x, int dim, const double *params)
{
  (void)dim;
  if (x[0] > 0.999 && x[1] > 0.999) return params[0] / 0.0 * 0.0 + params[1] / 0.0;
  return 1.0;
}

static void nonfinite(double a, double b, const char *want)
{
  strata_problem pr = {.f = corner, .dim = 2, .nparams = 2, .name = "corner"};
  pr.params[0] = a;
  pr.params[1] = b;
  pr.upper[0] = pr.upper[1] = 1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 2000000;
  strata_result r;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_ENOTFINITE);
  ck_assert_msg(strstr(strata_last_error(), want) != NULL, "'%s' lacks '%s'",
                strata_last_error(), want);
  ck_assert(strstr(strata_last_error(), "at x = (0.999") != NULL);
}

START_TEST(test_nonfinite_integrand)
{
  nonfinite(1.0, 0.0, "integrand 'corner' returned NaN"); /* inf*0 + 0/0 */
  nonfinite(0.0, 1.0, "returned NaN");
}
END_TEST

static double overflow(const double *x, int dim, const double *params)
{
  (void)dim;
  (void)params;
  return x[0] > 0.9999 ? 1e300 : 1.0;
}

START_TEST(test_overflowing_sums)
{
  strata_problem pr = {.f = overflow, .dim = 1, .name = "overflow"};
  pr.upper[0] = 1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  strata_result r;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_ENOTFINITE);
  ck_assert(strstr(strata_last_error(), "overflowed") != NULL);
}
END_TEST

/* zero and tiny integrands gave nan +- nan with success. */
static double zero_f(const double *x, int dim, const double *params)
{
  (void)dim;
  (void)params;
  return x[0] > 2.0 ? 1.0 : 0.0;
}

static double tiny_f(const double *x, int dim, const double *params)
{
  (void)dim;
  return params[0] * (params[1] ? x[0] : 1.0);
}

static double slope_f(const double *x, int dim, const double *params)
{
  (void)dim;
  return params[0] * (1.0 + 0.01 * x[0]);
}

static void zero_comp(const double *x, int dim, const double *params,
                      const strata_table *tables, double *out)
{
  (void)dim;
  (void)params;
  (void)tables;
  out[0] = x[0];
  out[1] = 0.0;
  out[2] = x[1] * x[1];
}

static int run_small(strata_problem *pr, int64_t maxeval, double epsabs, strata_result *r)
{
  pr->dim = 2;
  pr->upper[0] = pr->upper[1] = 1.0;
  strata_params p;
  strata_params_default(&p);
  p.neval = 10000;
  p.maxiter = 10;
  p.nthreads = 1;
  p.epsabs = epsabs;
  /* The evaluations counted are the iterations' (maxeval ends the run
   * inside the warm-up after three of them): without the peak search's. */
  p.peaks.search = STRATA_PEAKS_OFF;
  if (maxeval) p.maxeval = maxeval;
  return strata_integrate(pr, &p, NULL, NULL, r);
}

START_TEST(test_zero_and_tiny_integrands)
{
  strata_result r;
  strata_problem pr = {.f = zero_f, .name = "zero"};
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert_msg(r.integral == 0.0 && r.sigma == 0.0 && r.chi2_dof == 0.0 && r.q == 1.0,
                "zero: %g +- %g, chi2/dof %g, Q %g", r.integral, r.sigma, r.chi2_dof, r.q);
  /* only zeros seen: a peak not found yet looks the same, so epsrel alone
   * goes on to maxiter; epsabs stops it */
  ck_assert(!r.converged && r.iterations == 10);
  ck_assert_int_eq(run_small(&pr, 0, 1e-30, &r), STRATA_OK);
  ck_assert(r.integral == 0.0 && r.sigma == 0.0 && r.converged && r.iterations == 7);
  /* 1e-300 is a double: its estimates' squares underflow, not the estimates */
  pr = (strata_problem){.f = tiny_f, .nparams = 2, .name = "tiny"};
  pr.params[0] = 1e-300;
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert_msg(fabs(r.integral - 1e-300) <= 1e-13 * 1e-300 && r.sigma >= 0.0 &&
                r.sigma <= 1e-13 * 1e-300, "1e-300: %g +- %g", r.integral, r.sigma);
  pr.params[0] = 1e-160;
  pr.params[1] = 1.0;
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert_msg(isfinite(r.integral) && r.sigma > 0.0 && r.sigma < 1e-3 * r.integral &&
                fabs(r.integral - 5e-161) < 5 * r.sigma, "1e-160 x: %g +- %g", r.integral,
                r.sigma);
  ck_assert(!r.converged); /* no errors of its own: agreement untested */
  pr.params[0] = 1e-157;
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert_msg(r.sigma > 0.0 && r.sigma < 1e-3 * r.integral &&
                fabs(r.integral - 5e-158) < 5 * r.sigma, "1e-157 x: %g +- %g", r.integral,
                r.sigma);
  /* Measured values whose hypercubes' variances underflow: 2e-154 (1 +
   * x/100) over 5e5 hypercubes gives sigma 0 beside a nonzero average, which
   * met any epsrel and was claimed converged (fB's far tails on the GPU). */
  pr = (strata_problem){.f = slope_f, .nparams = 1, .name = "underflow"};
  pr.params[0] = 2e-154;
  {
    strata_params p;
    strata_params_default(&p);
    pr.dim = 2;
    pr.upper[0] = pr.upper[1] = 1.0;
    p.neval = 2000000;
    p.maxiter = 7;
    p.nthreads = 2;
    ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_OK);
    ck_assert_msg(fabs(r.integral - 2.01e-154) < 1e-6 * 2.01e-154, "underflow: %g", r.integral);
    ck_assert_msg(!(r.converged && r.sigma == 0.0), "underflow: %g +- %g claimed converged",
                  r.integral, r.sigma);
  }
  /* Subnormal estimates are so coarse that unrelated ones coincide: equal
   * iterations of 4e-320 must not read as a constant's exact answer. */
  pr = (strata_problem){.f = tiny_f, .nparams = 2, .name = "subnormal"};
  pr.params[0] = 4e-320;
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert_msg(!r.converged, "4e-320: %g +- %g claimed converged", r.integral, r.sigma);
  /* a zero component beside two others */
  pr = (strata_problem){.fv = zero_comp, .ncomp = 3, .adapt_comp = 0, .name = "zero_comp"};
  ck_assert_int_eq(run_small(&pr, 0, 0.0, &r), STRATA_OK);
  ck_assert(r.comp_integral[1] == 0.0 && r.comp_sigma[1] == 0.0 && r.comp_q[1] == 1.0);
  ck_assert(fabs(r.comp_integral[0] - 0.5) < 5 * r.comp_sigma[0]);
  ck_assert(fabs(r.comp_integral[2] - 1.0 / 3.0) < 5 * r.comp_sigma[2]);
  ck_assert(r.comp_cov[1 * 3 + 0] == 0.0 && r.comp_cov[1 * 3 + 1] == 0.0);
  ck_assert(!r.converged);
  /* maxeval ends the run inside the warm-up (skip = 5): its estimates stand */
  pr = (strata_problem){.f = tiny_f, .nparams = 2, .name = "warm"};
  pr.params[0] = 1.0;
  pr.params[1] = 1.0;
  ck_assert_int_eq(run_small(&pr, 30000, 0.0, &r), STRATA_OK);
  ck_assert_int_eq(r.iterations, 3);
  ck_assert_msg(fabs(r.integral - 0.5) < 5 * r.sigma && r.sigma > 0.0 && !r.converged,
                "warm-up only: %g +- %g", r.integral, r.sigma);
}
END_TEST

START_TEST(test_bad_params_api)
{
  strata_problem pr;
  test_problem("f4", 3, &pr);
  strata_params p;
  strata_result r;
  strata_params_default(&p);
  p.beta = 2;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  strata_params_default(&p);
  pr.dim = 0;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  ck_assert(strstr(strata_last_error(), "dim = 0") != NULL);
  pr.dim = 3;
  pr.lower[2] = 2.0;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  ck_assert(strstr(strata_last_error(), "axis 3") != NULL);
  /* a lattice rule too large to build is refused before any sampling */
  strata_params_default(&p);
  pr.lower[2] = 0.0;
  p.mode = STRATA_MODE_QMC;
  p.qmc = STRATA_QMC_LATTICE;
  p.neval = INT64_C(1) << 40;
  p.maxeval = INT64_C(1) << 41;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  ck_assert(strstr(strata_last_error(), "qmc = lattice: 2^36 points") != NULL);
  /* 16 randomizations of 2^16 points exceed maxeval = neval = 1e6: refused, not run empty */
  p.qmc = STRATA_QMC_SOBOL;
  p.neval = p.maxeval = 1000000;
  ck_assert_int_eq(strata_integrate(&pr, &p, NULL, NULL, &r), STRATA_EINVAL);
  ck_assert(strstr(strata_last_error(), "maxeval = 1000000 is below one QMC iteration") != NULL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("job");
  TCase *tc = tcase_create("input");
  tcase_add_test(tc, test_good_job);
  tcase_add_test(tc, test_default_job);
  tcase_add_test(tc, test_bad_jobs);
  tcase_add_test(tc, test_missing_file);
  tcase_add_test(tc, test_peaks_keys);
  tcase_add_test(tc, test_whole_numbers);
  tcase_add_test(tc, test_duplicate_keys);
  tcase_add_test(tc, test_long_lines);
  tcase_add_test(tc, test_line_endings);
  tcase_add_test(tc, test_control_characters);
  tcase_add_test(tc, test_job_paths);
  tcase_add_test(tc, test_directory_job);
  tcase_add_test(tc, test_limits);
  tcase_add_test(tc, test_bad_set);
  tcase_add_test(tc, test_nonfinite_integrand);
  tcase_add_test(tc, test_overflowing_sums);
  tcase_add_test(tc, test_bad_params_api);
  tcase_add_test(tc, test_zero_and_tiny_integrands);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
