/* libstrata from C: a run that keeps its results.  The 6-D gaussian with
 * its width in the caller's data, a convergence log that `strata log`
 * prints and strata-plot draws, a checkpoint every few iterations, a stop
 * on SIGTERM or from the progress callback, and a resume that may take
 * new values of the keys that only decide when to stop.
 *
 *   keep LOG CHECKPOINT [--width A] [--seed S] [--maxiter N] [--epsrel E]
 *        [--every N] [--stop-after N] [--resume] [--new-stop-keys]
 *        [--report FILE]
 *
 * --stop-after N stops the run from the callback after iteration N (its
 * checkpoint holds it); --resume continues from CHECKPOINT where it exists;
 * the width is the data's identity, so a resume with another width is
 * refused; --report writes the iteration table and summary as `strata
 * run` prints them (strata/report.h) to FILE.  Prints one line: the
 * result, and whether the run stopped.
 * Build:
 *   cc keep.c $(pkg-config --cflags --libs strata) -lm -o keep */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata/report.h>
#include <strata/strata.h>

typedef struct {
  double a; /* the width: exp(-a |x - 1/2|^2) */
} gauss_data;

static void gauss(const double *x, int dim, void *user, double *out)
{
  const gauss_data *d = user;
  double s = 0.0;
  for (int i = 0; i < dim; i++) s += (x[i] - 0.5) * (x[i] - 0.5);
  out[0] = exp(-d->a * s);
}

/* The iterations so far, for the report (a scalar integrand's: no
 * component rows to copy). */
static strata_iteration seen[64];
static int nseen;

/* The callback sees every iteration (also those a resume restores) and
 * may stop the run: nonzero after iteration stop_after. */
static int progress(const strata_iteration *it, void *ctx)
{
  const int *stop_after = ctx;
  if (nseen < 64) seen[nseen++] = *it;
  fprintf(stderr, "itn %2d  %.6e +- %.2e  avg %.6e  chi2/dof %.2f\n", it->itn, it->integral,
          it->sigma, it->avg, it->chi2_dof);
  return *stop_after > 0 && it->itn == *stop_after;
}

/* SIGTERM (a batch system's warning) asks the run to stop after its
 * iteration, with a checkpoint: strata_request_stop is async-signal-safe. */
static void on_term(int sig)
{
  (void)sig;
  strata_request_stop();
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: keep LOG CHECKPOINT [options]\n");
    return 2;
  }
  gauss_data data = {625.0};
  strata_params p;
  strata_params_default(&p);
  p.neval = 20000;
  p.maxiter = 12;
  p.adapt_iters = 8;
  p.skip = 2;
  p.epsrel = 0;
  p.nthreads = 1;
  strata_settings st;
  strata_settings_init(&st);
  st.log = argv[1];
  st.checkpoint = argv[2];
  st.checkpoint_every = 3;
  st.name = "keep.c";
  int stop_after = 0;
  const char *report = NULL;
  for (int i = 3; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(argv[i], "--width")) data.a = atof(v), i++;
    else if (!strcmp(argv[i], "--seed")) p.seed = strtoull(v, NULL, 10), i++;
    else if (!strcmp(argv[i], "--maxiter")) p.maxiter = atoi(v), i++;
    else if (!strcmp(argv[i], "--epsrel")) p.epsrel = atof(v), i++;
    else if (!strcmp(argv[i], "--every")) st.checkpoint_every = atoi(v), i++;
    else if (!strcmp(argv[i], "--stop-after")) stop_after = atoi(v), i++;
    else if (!strcmp(argv[i], "--resume")) st.resume = STRATA_RESUME_AUTO;
    else if (!strcmp(argv[i], "--new-stop-keys")) st.new_stop_keys = 1;
    else if (!strcmp(argv[i], "--report")) report = v, i++;
    else {
      fprintf(stderr, "keep: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  /* What the data is, recorded in the checkpoint and the log: a checkpoint
   * of another width is refused rather than continued with this one. */
  char identity[64];
  snprintf(identity, sizeof identity, "gauss a=%.17g", data.a);
  st.identity = identity;

  strata_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.fu = gauss;
  pr.user = &data;
  pr.dim = 6;
  for (int d = 0; d < pr.dim; d++) pr.upper[d] = 1.0;
  pr.name = "gauss";

  signal(SIGTERM, on_term);
  strata_integrator *s;
  strata_result res;
  if (strata_integrator_alloc(&pr, &p, STRATA_BACKEND_CPU, NULL, &s) != STRATA_OK ||
      strata_integrator_settings(s, &st) != STRATA_OK ||
      strata_integrator_run(s, progress, &stop_after, &res) != STRATA_OK) {
    fprintf(stderr, "keep: %s\n", strata_last_error());
    return 1;
  }
  if (report) {
    char *text;
    FILE *f = fopen(report, "w");
    if (!f || strata_report_text(seen, nseen, &res, NAN, &text) != STRATA_OK) {
      fprintf(stderr, "keep: %s: %s\n", report, f ? strata_last_error() : "cannot write");
      return 1;
    }
    fputs(text, f);
    free(text);
    fclose(f);
  }
  printf("integral %.17g sigma %.17g chi2_dof %.17g iterations %d stopped %d version %d.%d.%d "
         "library %s\n", res.integral, res.sigma, res.chi2_dof, res.iterations,
         strata_integrator_stopped(s), STRATA_VERSION_MAJOR, STRATA_VERSION_MINOR,
         STRATA_VERSION_PATCH, strata_version());
  strata_integrator_free(s);
  return 0;
}
