/* The public API's fuzzer: every function of the headers in include/strata/ called
 * with NULL, zero, negative, NaN and huge arguments, built with
 * AddressSanitizer and UBSan (tests/run-fuzz-api.sh).  A crash or a
 * sanitizer's report ends it; a function given NULL where it needs a
 * pointer must return STRATA_EINVAL with a message, and any error must
 * come with a one-line message.  --list prints the functions it covers,
 * which run-fuzz-api.sh compares with what libstrata exports. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/log.h"
#include "strata/report.h"
#include "strata/strata.h"
#ifdef STRATA_FUZZ_MPI
#include "strata/strata_mpi.h"
#endif

static long ncases, nfailed;
static FILE *sink;

static void failed(const char *fn, long k, const char *why)
{
  if (nfailed++ < 30) fprintf(stderr, "FAIL %s case %ld: %s\n", fn, k, why);
}

/* An outcome of any call: a code strata knows, and an error comes with a
 * one-line message. */
static void outcome(const char *fn, long k, int rc)
{
  ncases++;
  if (rc < 0 || rc > STRATA_EPEER) failed(fn, k, "a return code strata does not have");
  const char *m = strata_last_error();
  if (rc != STRATA_OK && (!m || !m[0])) failed(fn, k, "an error without a message");
  if (m && strchr(m, '\n')) failed(fn, k, "a message of several lines");
}

/* A NULL where a pointer is needed: STRATA_EINVAL with a message. */
static void refused(const char *fn, long k, int rc)
{
  outcome(fn, k, rc);
  if (rc != STRATA_EINVAL) failed(fn, k, "NULL not refused with STRATA_EINVAL");
}

static const int INTS[] = {0, -1, 1, 2, 3, 7, INT_MIN, INT_MAX, 1000000000};
#define NINTS ((int)(sizeof INTS / sizeof *INTS))
static const double DBLS[] = {0.0, -1.0, 1.0, 0.5, NAN, INFINITY, -INFINITY, 1e308, -1e308,
                              DBL_MIN, 5e-324};
#define NDBLS ((int)(sizeof DBLS / sizeof *DBLS))
static const int64_t I64S[] = {0, -1, 1, 2, 100, INT64_MIN, INT64_MAX, INT64_C(10000000000)};
#define NI64S ((int)(sizeof I64S / sizeof *I64S))
static const char *TEXTS[] = {NULL, "", "f4", "vegas", "sobol", "\x01\x7f\n\r", "/",
                              "/nonexistent/strata", "a=b.h5:/x", "a b c = d"};
#define NTEXTS ((int)(sizeof TEXTS / sizeof *TEXTS))

static double line(const double *x, int dim, const double *params)
{
  (void)dim;
  (void)params;
  return x[0];
}

/* The components the problem in use has: what line_v writes. */
static int vcomp = 2;

static void line_v(const double *x, int dim, const double *params, const strata_table *t,
                   double *out)
{
  (void)dim;
  (void)params;
  (void)t;
  for (int c = 0; c < vcomp; c++) out[c] = x[0] + c;
}

static void line_u(const double *x, int dim, void *user, double *out)
{
  (void)dim;
  (void)user;
  out[0] = x[0];
}

static void line_b(int64_t n, const double *x, int dim, void *user, double *out)
{
  (void)user;
  for (int64_t i = 0; i < n; i++) out[i] = x[i * dim];
}

static strata_problem small_problem(void)
{
  strata_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.f = line;
  pr.dim = 2;
  pr.upper[0] = pr.upper[1] = 1.0;
  pr.name = "line";
  return pr;
}

static strata_params small_params(void)
{
  strata_params p;
  strata_params_default(&p);
  p.neval = 200;
  p.maxiter = 2;
  p.skip = 0;
  p.adapt_iters = 1;
  p.ninc = 8;
  p.nthreads = 1;
  p.max_nhcube = 16;
  return p;
}

/* A run cheap enough to do: what a valid params or problem may be run with. */
static int cheap(const strata_params *p)
{
  return p->neval <= 2000 && p->maxiter <= 4 && p->ninc <= 1000 && p->max_nhcube <= 1000 &&
         (p->neval_frozen == 0 || p->neval_frozen <= 2000) && p->nthreads <= 4 &&
         p->nrand <= 64;
}

static strata_integrator *open_small(void)
{
  strata_problem pr = small_problem();
  strata_params p = small_params();
  strata_integrator *s = NULL;
  if (strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &s) != STRATA_OK) {
    fprintf(stderr, "fuzz_api: cannot make the integrator to fuzz: %s\n", strata_last_error());
    exit(1);
  }
  return s;
}

/* ---- each part of the API ---------------------------------------------------------------- */

static void fuzz_params(void)
{
  static strata_params *none;
  strata_params_default(none);
  outcome("strata_params_default", 0, STRATA_OK);
  refused("strata_params_check", 0, strata_params_check(NULL));
  strata_problem pr = small_problem();
  strata_result res;
  refused("strata_integrate", 0, strata_integrate(NULL, NULL, NULL, NULL, &res));
  strata_params good = small_params();
  refused("strata_integrate", 1, strata_integrate(&pr, NULL, NULL, NULL, &res));
  refused("strata_integrate", 2, strata_integrate(NULL, &good, NULL, NULL, &res));
  refused("strata_integrate", 3, strata_integrate(&pr, &good, NULL, NULL, NULL));
  /* Every field of strata_params with every odd value, alone. */
  for (int field = 0; field < 19; field++)
    for (int v = 0; v < NI64S + NDBLS; v++) {
      strata_params p = small_params();
      int64_t i = v < NI64S ? I64S[v] : (int64_t)0;
      double d = v < NI64S ? (double)I64S[v] : DBLS[v - NI64S];
      int n = i > INT_MAX ? INT_MAX : i < INT_MIN ? INT_MIN : (int)i;
      if (v >= NI64S && field != 5 && field != 6 && field != 8 && field != 9 && field != 12)
        continue; /* doubles for the double fields only */
      switch (field) {
      case 0: p.mode = (strata_mode)n; break;
      case 1: p.neval = i; break;
      case 2: p.maxeval = i; break;
      case 3: p.maxiter = n; break;
      case 4: p.adapt_iters = n; break;
      case 5: p.epsrel = d; break;
      case 6: p.epsabs = d; break;
      case 7: p.ninc = n; break;
      case 8: p.alpha = d; break;
      case 9: p.beta = d; break;
      case 10: p.seed = (uint64_t)i; break;
      case 11: p.max_nhcube = i; break;
      case 12: p.min_q = d; break;
      case 13: p.nthreads = n; break;
      case 14: p.qmc = (strata_qmc_rule)n; break;
      case 15: p.nrand = n; break;
      case 16: p.qmc_map = n; break;
      case 17: p.neval_frozen = i; break;
      case 18: p.skip = n; break;
      }
      int rc = strata_params_check(&p);
      outcome("strata_params_check", field * 100 + v, rc);
      if (rc != STRATA_OK || cheap(&p)) {
        int rr = strata_integrate(&pr, &p, NULL, NULL, &res);
        outcome("strata_integrate", field * 100 + v, rr);
        if (rc != STRATA_OK && rr == STRATA_OK)
          failed("strata_integrate", field * 100 + v, "ran with params that the check refuses");
      }
    }
}

static void fuzz_problem(void)
{
  refused("strata_problem_check", 0, strata_problem_check(NULL));
  strata_params p = small_params();
  strata_result res;
  static const strata_table tab = {0};
  static int user;
  for (int field = 0; field < 12; field++)
    for (int v = 0; v < NINTS + NDBLS; v++) {
      strata_problem pr = small_problem();
      int n = v < NINTS ? INTS[v] : 0;
      double d = v < NINTS ? (double)INTS[v] : DBLS[v - NINTS];
      if (v >= NINTS && field != 1 && field != 2 && field != 4) continue;
      switch (field) {
      case 0: pr.dim = n; break;
      case 1: pr.lower[v % 2] = d; break;
      case 2: pr.upper[v % 2] = d; break;
      case 3: pr.nparams = n; break;
      case 4: pr.params[0] = d; pr.nparams = 1; break;
      case 5: pr.ncomp = n; pr.f = NULL; pr.fv = line_v; break;
      case 6: pr.adapt_comp = n; break;
      case 7: pr.adapt_comp = n; pr.ncomp = 2; pr.f = NULL; pr.fv = line_v; break;
      case 8: pr.ntables = n; pr.tables = v % 2 ? &tab : NULL; break;
      case 9: pr.batch = n; pr.f = NULL; pr.fb = line_b; pr.user = &user; break;
      case 10: /* the forms two at a time, and none */
        pr.f = v & 1 ? line : NULL;
        pr.fv = v & 2 ? line_v : NULL;
        pr.fu = v & 4 ? line_u : NULL;
        pr.fb = v & 8 ? line_b : NULL;
        pr.ncomp = pr.fv ? 2 : 1;
        break;
      case 11: pr.name = TEXTS[v % NTEXTS]; break;
      }
      int rc = strata_problem_check(&pr);
      outcome("strata_problem_check", field * 100 + v, rc);
      vcomp = pr.ncomp < 1 ? 1 : pr.ncomp > STRATA_MAX_COMP ? STRATA_MAX_COMP : pr.ncomp;
      int rr = strata_integrate(&pr, &p, NULL, NULL, &res);
      outcome("strata_integrate", 10000 + field * 100 + v, rr);
      if (rc != STRATA_OK && rr == STRATA_OK)
        failed("strata_integrate", 10000 + field * 100 + v, "ran a problem the check refuses");
    }
}

static void fuzz_names(void)
{
  static const int modes[] = {-1, 0, 4, 5, INT_MIN, INT_MAX};
  for (int i = 0; i < 6; i++) {
    const char *m = strata_mode_name((strata_mode)modes[i]);
    outcome("strata_mode_name", i, m && m[0] ? STRATA_OK : STRATA_EINVAL);
  }
  strata_mode mode;
  strata_qmc_rule rule;
  for (int i = 0; i < NTEXTS; i++) {
    int rc = strata_mode_parse(TEXTS[i], i % 2 ? &mode : NULL);
    if (!TEXTS[i] || !(i % 2)) refused("strata_mode_parse", i, rc);
    else outcome("strata_mode_parse", i, rc);
    rc = strata_qmc_rule_parse(TEXTS[i], i % 2 ? &rule : NULL);
    if (!TEXTS[i] || !(i % 2)) refused("strata_qmc_rule_parse", i, rc);
    else outcome("strata_qmc_rule_parse", i, rc);
    const strata_builtin *b = strata_builtin_find(TEXTS[i]);
    outcome("strata_builtin_find", i, b || !TEXTS[i] || strcmp(TEXTS[i], "f4") ? 0 : 1);
  }
  static const size_t at[] = {0, 1, 5, 100, SIZE_MAX};
  for (int i = 0; i < 5; i++) {
    strata_builtin_at(at[i]);
    outcome("strata_builtin_at", i, STRATA_OK);
  }
  outcome("strata_version", 0, strata_version() && strata_version()[0] ? 0 : 1);
  outcome("strata_last_error", 0, strata_last_error() ? 0 : 1);
  strata_init();
  outcome("strata_init", 0, STRATA_OK);
  char buf[64];
  static const size_t sizes[] = {0, 1, 2, 5, sizeof buf};
  for (int i = 0; i < NTEXTS; i++)
    for (int k = 0; k < 5; k++) {
      strata_escape(k == 0 && i % 2 ? NULL : buf, sizes[k], TEXTS[i]);
      outcome("strata_escape", i * 10 + k, STRATA_OK);
      if (k > 0 && strlen(buf) >= sizes[k])
        failed("strata_escape", i * 10 + k, "wrote past size");
      strata_report_value_error(k == 0 && i % 2 ? NULL : buf, sizes[k], DBLS[i % NDBLS],
                                DBLS[(i + k) % NDBLS]);
      outcome("strata_report_value_error", i * 10 + k, STRATA_OK);
    }
  for (int i = 0; i < NDBLS; i++)
    for (int k = 0; k < NDBLS; k++) {
      strata_report_value_error(buf, sizeof buf, DBLS[i], DBLS[k]);
      outcome("strata_report_value_error", 1000 + i * 100 + k, STRATA_OK);
    }
}

/* Trusted files: every odd path and description, and things that are no
 * regular file of this user's (a directory, a device). */
static void fuzz_trusted(void)
{
  static const char *paths[] = {"/dev/null", "/proc/self/status", "/etc/passwd"};
  long k = 0;
  for (int p = 0; p < NTEXTS + 3; p++)
    for (int w = 0; w < 3; w++) {
      const char *path = p < NTEXTS ? TEXTS[p] : paths[p - NTEXTS];
      FILE *f = strata_trusted_fopen(path, w == 0 ? NULL : w == 1 ? "" : "table");
      if (f && (!path || w == 0)) failed("strata_trusted_fopen", k, "took a NULL");
      outcome("strata_trusted_fopen", k, f ? STRATA_OK : STRATA_EIO);
      if (f) fclose(f);
      k++;
    }
}

static void fuzz_sources(void)
{
  static const char code[] = "double f(const double *x, int dim, const double *params)\n"
                             "{ (void)dim; (void)params; return x[0]; }\n";
  static const char *functions[] = {NULL, "", "f", "a_name_far_longer_than_the_sixty_three_"
                                    "characters_a_function_name_may_have_here"};
  strata_source *s = NULL;
  long k = 0;
  for (int c = 0; c < 3; c++)
    for (int f = 0; f < 4; f++)
      for (int e = 0; e < 3; e++)
        for (int n = 0; n < NINTS; n++)
          for (int o = 0; o < 2; o++) {
            const char *cd = c == 0 ? NULL : c == 1 ? "" : code;
            int rc = strata_source_from_string(cd, functions[f], e - 1, INTS[n], o ? &s : NULL);
            if (!o || !cd || !functions[f]) refused("strata_source_from_string", k, rc);
            else outcome("strata_source_from_string", k, rc);
            if (o && rc == STRATA_OK) strata_source_free(s);
            s = NULL;
            k++;
          }
  for (int t = 0; t < NTEXTS; t++)
    for (int f = 0; f < 4; f++)
      for (int o = 0; o < 2; o++) {
        int rc = strata_source_from_file(TEXTS[t], TEXTS[(t + f) % NTEXTS], functions[f], 0, 1,
                                         o ? &s : NULL);
        if (!o || !TEXTS[t] || !functions[f]) refused("strata_source_from_file", k, rc);
        else outcome("strata_source_from_file", k, rc);
        if (o && rc == STRATA_OK) strata_source_free(s);
        s = NULL;
        rc = strata_source_from_body(TEXTS[t], TEXTS[(t + f) % NTEXTS], f % 2, f, o ? &s : NULL);
        if (!o || !TEXTS[t]) refused("strata_source_from_body", k, rc);
        else outcome("strata_source_from_body", k, rc);
        if (o && rc == STRATA_OK) strata_source_free(s);
        s = NULL;
        k++;
      }
  refused("strata_source_build", 0, strata_source_build(NULL, 0));
  char buf[128];
  strata_source_describe(NULL, buf, sizeof buf);
  strata_source_describe(NULL, NULL, 10);
  outcome("strata_source_describe", 0, STRATA_OK);
  outcome("strata_source_hash", 0, strata_source_hash(NULL) == 0 ? 0 : 1);
  strata_source_free(NULL);
  outcome("strata_source_free", 0, STRATA_OK);
  strata_source_watch(NULL, NULL);
  outcome("strata_source_watch", 0, STRATA_OK);
  strata_problem pr = small_problem();
  refused("strata_problem_set_source", 0, strata_problem_set_source(NULL, NULL));
  refused("strata_problem_set_source", 1, strata_problem_set_source(&pr, NULL));
  /* One that compiles: every function on a real source. */
  if (strata_source_from_string(code, "f", 0, 1, &s) != STRATA_OK) {
    failed("strata_source_from_string", -1, strata_last_error());
    return;
  }
  refused("strata_problem_set_source", 2, strata_problem_set_source(NULL, s));
  outcome("strata_source_build", 1, strata_source_build(s, 0));
  outcome("strata_problem_set_source", 3, strata_problem_set_source(&pr, s));
  for (size_t len = 0; len < 4; len++) {
    strata_source_describe(s, len == 3 ? NULL : buf, len * 20);
    outcome("strata_source_describe", (long)len + 1, STRATA_OK);
  }
  outcome("strata_source_hash", 1, strata_source_hash(s) ? 0 : 1);
  /* Tables. */
  strata_table_set *t = NULL;
  k = 0;
  for (int sp = 0; sp < NTEXTS; sp++)
    for (int d = 0; d < 4; d++)
      for (int o = 0; o < 2; o++) {
        int rc = strata_tables_read(TEXTS[sp], TEXTS[d * 2 % NTEXTS], TEXTS[(sp + d) % NTEXTS],
                                    o ? &t : NULL);
        if (!o) refused("strata_tables_read", k, rc);
        else outcome("strata_tables_read", k, rc);
        if (o && rc == STRATA_OK) {
          outcome("strata_problem_set_tables", k, strata_problem_set_tables(&pr, s, t));
          strata_tables_free(t);
        }
        t = NULL;
        k++;
      }
  strata_tables_free(NULL);
  outcome("strata_tables_free", 0, STRATA_OK);
  refused("strata_problem_set_tables", -1, strata_problem_set_tables(NULL, NULL, NULL));
  refused("strata_problem_set_tables", -2, strata_problem_set_tables(&pr, s, NULL));
  refused("strata_problem_set_tables", -3, strata_problem_set_tables(&pr, NULL, NULL));
  strata_source_free(s);
}

static void fuzz_null_integrator(void)
{
  strata_iteration it;
  strata_result res;
  void *buf = NULL;
  size_t len = 0;
  int naxes, ninc;
  double edges[8] = {0};
  strata_settings st;
  strata_settings_init(&st);
  refused("strata_integrator_step", 0, strata_integrator_step(NULL, &it));
  refused("strata_integrator_integrate", 0, strata_integrator_integrate(NULL, NULL, NULL, &res));
  refused("strata_integrator_run", 0, strata_integrator_run(NULL, NULL, NULL, &res));
  refused("strata_integrator_result", 0, strata_integrator_result(NULL, &res));
  refused("strata_integrator_save", 0, strata_integrator_save(NULL, "x.h5"));
  refused("strata_integrator_load", 0, strata_integrator_load(NULL, "x.h5", NULL, NULL));
  refused("strata_integrator_save_buffer", 0, strata_integrator_save_buffer(NULL, &buf, &len));
  refused("strata_integrator_load_buffer", 0,
          strata_integrator_load_buffer(NULL, edges, sizeof edges, NULL, NULL));
  refused("strata_integrator_map", 0, strata_integrator_map(NULL, &naxes, &ninc, NULL));
  refused("strata_integrator_set_map", 0, strata_integrator_set_map(NULL, 1, 7, edges));
  refused("strata_integrator_start_from", 0, strata_integrator_start_from(NULL, NULL));
  refused("strata_integrator_settings", 0, strata_integrator_settings(NULL, &st));
  outcome("strata_integrator_finished", 0, strata_integrator_finished(NULL) ? 0 : 1);
  outcome("strata_integrator_stopped", 0, strata_integrator_stopped(NULL) ? 1 : 0);
  outcome("strata_integrator_error_shared", 0, strata_integrator_error_shared(NULL) ? 0 : 1);
  outcome("strata_integrator_describe", 0, strata_integrator_describe(NULL) ? 1 : 0);
  outcome("strata_integrator_backend", 0, strata_integrator_backend(NULL) ? 0 : 1);
  strata_integrator_free(NULL);
  outcome("strata_integrator_free", 0, STRATA_OK);
  strata_settings_init_checked(NULL, STRATA_INTERFACE, sizeof st);
  outcome("strata_settings_init_checked", 0, STRATA_OK);
}

static void fuzz_alloc(void)
{
  static const int ifaces[] = {-1, 0, 1, 2, 3, 4, INT_MAX};
  static const size_t psz[] = {0, sizeof(strata_problem), sizeof(strata_problem) + 8, SIZE_MAX};
  static const size_t qsz[] = {0, sizeof(strata_params), SIZE_MAX};
  static const int kinds[] = {-1, STRATA_BACKEND_AUTO, STRATA_BACKEND_CPU, STRATA_BACKEND_CUDA,
                              99};
  strata_problem pr = small_problem(), bad = small_problem();
  bad.dim = INT_MAX;
  strata_params p = small_params(), badp = small_params();
  badp.nthreads = INT_MAX;
  long k = 0;
  for (int i = 0; i < 7; i++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 3; b++)
        for (int q = 0; q < 3; q++)
          for (int r = 0; r < 3; r++)
            for (int o = 0; o < 2; o++) {
              strata_integrator *s = NULL;
              const strata_problem *pp = q == 0 ? NULL : q == 1 ? &pr : &bad;
              const strata_params *pq = r == 0 ? NULL : r == 1 ? &p : &badp;
              int rc = strata_integrator_alloc_checked(ifaces[i], psz[a], qsz[b], pp, pq,
                                                       (strata_backend_kind)kinds[(k / 2) % 5],
                                                       NULL, o ? &s : NULL);
              if (!o || !pp || !pq) refused("strata_integrator_alloc_checked", k, rc);
              else outcome("strata_integrator_alloc_checked", k, rc);
              strata_integrator_free(s);
              k++;
            }
  for (int i = 0; i < 5; i++) {
    strata_backend_prepare((strata_backend_kind)kinds[i], NULL);
    outcome("strata_backend_prepare", i, STRATA_OK);
  }
  strata_comm_free(NULL);
  outcome("strata_comm_free", 0, STRATA_OK);
#ifdef STRATA_FUZZ_MPI
  strata_comm *c = NULL;
  refused("strata_comm_mpi", 0, strata_comm_mpi(MPI_COMM_WORLD, NULL));
  outcome("strata_comm_mpi", 1, strata_comm_mpi(MPI_COMM_NULL, &c)); /* MPI not initialised */
  strata_comm_free(c);
#endif
  /* strata_integrator_open: its settings' every odd value. */
  for (int field = 0; field < 12; field++)
    for (int v = 0; v < NINTS; v++) {
      strata_settings st;
      strata_settings_init(&st);
      st.name = "fuzz";
      int n = INTS[v];
      switch (field) {
      case 0: st.size = (size_t)n; break;
      case 1: st.interface = n; break;
      case 2: st.log = TEXTS[v % NTEXTS]; break;
      case 3: st.checkpoint = TEXTS[v % NTEXTS]; break;
      case 4: st.checkpoint_every = n; break;
      case 5: st.checkpoint_every_s = DBLS[v % NDBLS]; break;
      case 6: st.resume = n; break;
      case 7: st.log_map = n; break;
      case 8: st.identity = TEXTS[v % NTEXTS]; break;
      case 9: st.map = TEXTS[v % NTEXTS]; break;
      case 10: st.exact = DBLS[v % NDBLS]; break;
      case 11: st.name = TEXTS[v % NTEXTS]; break;
      }
      strata_integrator *s = NULL;
      int rc = strata_integrator_open(&pr, &p, STRATA_BACKEND_CPU, NULL, &st, &s);
      outcome("strata_integrator_open", field * 100 + v, rc);
      /* Only settings without files are run here: no log, checkpoint or map. */
      if (rc == STRATA_OK && !st.log && !st.checkpoint && !st.map) {
        strata_result res;
        outcome("strata_integrator_run", field * 100 + v,
                strata_integrator_run(s, NULL, NULL, &res));
      }
      strata_integrator_free(s);
      rc = strata_integrator_open(&pr, &p, STRATA_BACKEND_CPU, NULL, v % 2 ? &st : NULL,
                                  v % 3 ? &s : NULL);
      if (!(v % 2) || !(v % 3)) refused("strata_integrator_open", 1000 + field * 100 + v, rc);
      else outcome("strata_integrator_open", 1000 + field * 100 + v, rc);
      if (v % 3) strata_integrator_free(s);
    }
}

static int stop_now(const strata_iteration *it, void *ctx)
{
  (void)it;
  (void)ctx;
  return 1;
}

static void count_row(const strata_iteration *it, void *ctx)
{
  (void)it;
  ++*(int *)ctx;
}

static void fuzz_integrator(void)
{
  strata_integrator *s = open_small();
  strata_iteration it;
  strata_result res;
  int naxes = 0, ninc = 0, rows = 0;
  double edges[2 * 9];
  for (int i = 0; i < 2 * 9; i++) edges[i] = (i % 9) / 8.0;
  refused("strata_integrator_result", 1, strata_integrator_result(s, NULL));
  outcome("strata_integrator_result", 2, strata_integrator_result(s, &res));
  refused("strata_integrator_map", 1, strata_integrator_map(s, NULL, &ninc, NULL));
  refused("strata_integrator_map", 2, strata_integrator_map(s, &naxes, NULL, NULL));
  outcome("strata_integrator_map", 3, strata_integrator_map(s, &naxes, &ninc, NULL));
  /* Maps of every odd shape: refused before their edges are read, or read
   * within the 2 x 9 given. */
  for (int a = 0; a < NINTS; a++)
    for (int b = 0; b < NINTS; b++)
      for (int e = 0; e < 2; e++) {
        int na = INTS[a], ni = INTS[b];
        int fits = na >= 0 && ni >= 0 && (int64_t)na * ((int64_t)ni + 1) <= 2 * 9;
        int rc = strata_integrator_set_map(s, na, ni, e ? edges : NULL);
        if (!e) refused("strata_integrator_set_map", a * 100 + b, rc);
        else if (fits || rc != STRATA_OK) outcome("strata_integrator_set_map", a * 100 + b, rc);
        else failed("strata_integrator_set_map", a * 100 + b, "took a map larger than given");
      }
  edges[3] = NAN;
  outcome("strata_integrator_set_map", -1, strata_integrator_set_map(s, 2, 8, edges));
  edges[3] = 3.0 / 8.0;
  void *buf = NULL;
  size_t len = 0;
  refused("strata_integrator_save_buffer", 1, strata_integrator_save_buffer(s, NULL, &len));
  refused("strata_integrator_save_buffer", 2, strata_integrator_save_buffer(s, &buf, NULL));
  outcome("strata_integrator_save_buffer", 3, strata_integrator_save_buffer(s, &buf, &len));
  static const size_t lens[] = {0, 1, 8, 512};
  for (int i = 0; i < 4; i++)
    for (int g = 0; g < 3; g++) {
      unsigned char junk[512];
      memset(junk, g == 1 ? 0xff : 0, sizeof junk);
      const void *b = g == 0 ? NULL : g == 1 ? (const void *)junk : buf;
      size_t n = g == 2 ? (i == 3 ? len : lens[i] < len ? lens[i] : len) : lens[i];
      int rc = strata_integrator_load_buffer(s, b, n, count_row, &rows);
      if (!b) refused("strata_integrator_load_buffer", i * 10 + g, rc);
      else outcome("strata_integrator_load_buffer", i * 10 + g, rc);
    }
  free(buf);
  refused("strata_integrator_save", 1, strata_integrator_save(s, NULL));
  outcome("strata_integrator_save", 2, strata_integrator_save(s, ""));
  if (strata_integrator_save(s, "") != STRATA_EINVAL)
    failed("strata_integrator_save", 2, "an empty path is not refused");
  outcome("strata_integrator_save", 3, strata_integrator_save(s, "/nonexistent/dir/ck.h5"));
  refused("strata_integrator_load", 1, strata_integrator_load(s, NULL, NULL, NULL));
  for (int i = 0; i < NTEXTS; i++)
    if (TEXTS[i])
      outcome("strata_integrator_load", i + 2, strata_integrator_load(s, TEXTS[i], NULL, NULL));
  strata_settings st;
  strata_settings_init(&st);
  refused("strata_integrator_settings", 1, strata_integrator_settings(s, NULL));
  outcome("strata_integrator_settings", 2, strata_integrator_settings(s, &st));
  outcome("strata_integrator_step", 1, strata_integrator_step(s, NULL));
  outcome("strata_integrator_step", 2, strata_integrator_step(s, &it));
  outcome("strata_integrator_step", 3, strata_integrator_step(s, &it)); /* past the end */
  outcome("strata_integrator_finished", 1, strata_integrator_finished(s) ? 0 : 1);
  outcome("strata_integrator_integrate", 1, strata_integrator_integrate(s, NULL, NULL, NULL));
  outcome("strata_integrator_run", 1, strata_integrator_run(s, stop_now, NULL, NULL));
  outcome("strata_integrator_stopped", 1, strata_integrator_stopped(s) >= 0 ? 0 : 1);
  outcome("strata_integrator_error_shared", 1, strata_integrator_error_shared(s) >= 0 ? 0 : 1);
  outcome("strata_integrator_describe", 1, strata_integrator_describe(s) ? 0 : 1);
  outcome("strata_integrator_backend", 1, strata_integrator_backend(s)[0] ? 0 : 1);
  outcome("strata_integrator_set_map", -2, strata_integrator_set_map(s, 2, 8, edges)); /* begun */
  /* Starting from a run: none, itself, and a fresh one from a begun one and back. */
  double comps[4 * 4];
  refused("strata_integrator_components", 0,
          strata_integrator_components(NULL, comps, comps, comps, comps, comps));
  outcome("strata_integrator_components", 1,
          strata_integrator_components(s, NULL, NULL, NULL, NULL, NULL));
  outcome("strata_integrator_components", 2,
          strata_integrator_components(s, comps, comps + 1, comps + 2, comps + 3, comps + 4));
  refused("strata_integrator_start_from", 1, strata_integrator_start_from(s, NULL));
  outcome("strata_integrator_start_from", 2, strata_integrator_start_from(s, s));
  strata_integrator *t = open_small();
  outcome("strata_integrator_start_from", 3, strata_integrator_start_from(t, s));
  outcome("strata_integrator_start_from", 4, strata_integrator_start_from(s, t));
  strata_integrator_free(t);
  strata_request_stop();
  outcome("strata_request_stop", 0, STRATA_OK);
  strata_integrator_free(s);
  /* A stop request made with no run in progress stops the next one early. */
  s = open_small();
  outcome("strata_integrator_run", 2, strata_integrator_run(s, NULL, NULL, &res));
  strata_integrator_free(s);
}

static void fuzz_report(void)
{
  double comp[3 * STRATA_COMP_ROW(3)];
  for (int i = 0; i < 3 * STRATA_COMP_ROW(3); i++) comp[i] = DBLS[i % NDBLS];
  strata_report_header(NULL);
  strata_report_header(sink);
  outcome("strata_report_header", 0, STRATA_OK);
  strata_iteration its[2];
  long k = 0;
  for (int n = 0; n < NINTS; n++)
    for (int d = 0; d < NDBLS; d++) {
      strata_iteration *it = &its[k % 2];
      memset(it, 0, sizeof *it);
      it->itn = INTS[(n + d) % NINTS];
      it->integral = DBLS[d];
      it->sigma = DBLS[(d + 1) % NDBLS];
      it->avg = DBLS[(d + 2) % NDBLS];
      it->avg_sigma = DBLS[(d + 3) % NDBLS];
      it->chi2_dof = DBLS[(d + 4) % NDBLS];
      it->q = DBLS[(d + 5) % NDBLS];
      it->kept = d % 2;
      it->ncomp = INTS[n];
      it->comp = INTS[n] == 3 || d % 3 == 0 ? (INTS[n] <= 3 ? comp : NULL) : NULL;
      strata_report_iteration(d == 0 ? NULL : sink, d == 1 ? NULL : it);
      outcome("strata_report_iteration", k, STRATA_OK);
      strata_result res;
      memset(&res, 0, sizeof res);
      res.integral = DBLS[d];
      res.sigma = DBLS[(d + 3) % NDBLS];
      res.chi2_dof = DBLS[(d + 5) % NDBLS];
      res.ncomp = INTS[n];
      res.iterations = INTS[(n + 1) % NINTS];
      res.neval_needed = DBLS[(d + 7) % NDBLS];
      res.lost = d % 2;
      res.thin = d % 3 == 0;
      strata_report_summary(d == 2 ? NULL : sink, d == 3 ? NULL : &res, DBLS[(d + 1) % NDBLS]);
      outcome("strata_report_summary", k, STRATA_OK);
      char *text = NULL;
      int cnt = INTS[(n + d) % NINTS];
      int rc = strata_report_text(d == 4 ? NULL : its, cnt > 2 ? 2 : cnt, d % 2 ? &res : NULL,
                                  DBLS[d], d == 5 ? NULL : &text);
      outcome("strata_report_text", k, rc);
      free(text);
      strata_report_info info = {TEXTS[n % NTEXTS], INTS[n], TEXTS[d % NTEXTS],
                                 TEXTS[(n + d) % NTEXTS], INTS[d % NINTS], DBLS[d],
                                 (uint64_t)I64S[n % NI64S], d % 2 ? comp : NULL, INTS[n],
                                 TEXTS[(d + 1) % NTEXTS], NULL, NULL, NULL, NULL, DBLS[n % NDBLS]};
      if (info.nparams > 16 || info.nparams < 0) info.nparams = info.params ? 3 : 0;
      strata_report_json(d == 6 ? NULL : sink, d == 7 ? NULL : &res, d == 8 ? NULL : &info);
      outcome("strata_report_json", k, STRATA_OK);
      /* Every component given, some of it missing, or none. */
      const double v3[9] = {1, 0.5, 0.25, 0.5, 1, 0.1, 0.25, 0.1, 1};
      strata_report_comps all = {d % 4 == 3 ? n % 5 - 1 : 3, v3, v3, d % 3 ? v3 : NULL, v3, v3};
      strata_report_json_all(d == 6 ? NULL : sink, d == 7 ? NULL : &res, d % 5 ? &all : NULL,
                             d == 8 ? NULL : &info);
      outcome("strata_report_json_all", k, STRATA_OK);
      k++;
    }
  for (int i = 0; i < NTEXTS; i++)
    for (int c = 0; c < 3; c++) {
      int rc = strata_log_print(TEXTS[i], INTS[c], i % 2 ? sink : NULL);
      if (!TEXTS[i] || !(i % 2)) refused("strata_log_print", i * 10 + c, rc);
      else outcome("strata_log_print", i * 10 + c, rc);
    }
}

/* The functions covered: run-fuzz-api.sh compares them with what
 * libstrata exports, so that a new one without cases fails the test. */
static const char *covered[] = {
    "strata_backend_prepare", "strata_builtin_at", "strata_builtin_find",
    "strata_comm_free", "strata_escape", "strata_init", "strata_integrate",
    "strata_integrator_alloc", "strata_integrator_alloc_checked", "strata_integrator_backend",
    "strata_integrator_describe", "strata_integrator_error_shared",
    "strata_integrator_finished", "strata_integrator_free", "strata_integrator_integrate",
    "strata_integrator_load", "strata_integrator_load_buffer", "strata_integrator_map",
    "strata_integrator_open", "strata_integrator_result", "strata_integrator_run",
    "strata_integrator_save", "strata_integrator_save_buffer", "strata_integrator_set_map",
    "strata_integrator_components", "strata_integrator_settings", "strata_integrator_start_from", "strata_integrator_step", "strata_integrator_stopped",
    "strata_last_error", "strata_log_print", "strata_mode_name", "strata_mode_parse",
    "strata_params_check", "strata_params_default", "strata_problem_check",
    "strata_problem_set_source", "strata_problem_set_tables", "strata_qmc_rule_parse",
    "strata_report_header", "strata_report_iteration", "strata_report_json",
    "strata_report_json_all",
    "strata_report_summary", "strata_report_text", "strata_report_value_error",
    "strata_request_stop", "strata_settings_init_checked", "strata_source_build",
    "strata_source_describe", "strata_source_free", "strata_source_from_body",
    "strata_source_from_file", "strata_source_from_string", "strata_source_hash",
    "strata_source_watch", "strata_tables_free", "strata_tables_read", "strata_trusted_fopen",
    "strata_version",
#ifdef STRATA_FUZZ_MPI
    "strata_comm_mpi",
#endif
};

int main(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < sizeof covered / sizeof *covered; i++) puts(covered[i]);
    return 0;
  }
  sink = fopen("/dev/null", "w");
  if (!sink) return 1;
  /* The interface-1 entry point, under its own name (the header's macro
   * calls the checked one). */
  refused("strata_integrator_alloc", 0, (strata_integrator_alloc)(NULL, NULL, 0, NULL, NULL));
  fuzz_names();
  fuzz_params();
  fuzz_problem();
  fuzz_trusted();
  fuzz_sources();
  fuzz_null_integrator();
  fuzz_alloc();
  fuzz_integrator();
  fuzz_report();
  printf("fuzz_api: %ld cases over %zu functions, %ld failed\n", ncases,
         sizeof covered / sizeof *covered, nfailed);
  fclose(sink);
  return nfailed || ncases < 1000 ? 1 : 0;
}
