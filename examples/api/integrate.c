/* libstrata from C: the 6-D gaussian of examples/user-gauss.ini, with its
 * width in the caller's data, on any number of MPI ranks, with a
 * checkpoint after every iteration.
 *
 *   integrate [--form point|batch|source] [--backend auto|cpu|cuda]
 *             [--neval N] [--seed S] [--maxiter N] [--checkpoint FILE]
 *             [--resume] [--die-after N] [--warm N]
 *
 * point and batch give the integrand with user data (one point, or many,
 * per call); source gives its C text, compiled at run time (the form the
 * cuda backend runs).  --resume continues from FILE where it exists;
 * --die-after N ends the process with SIGKILL after N iterations were
 * saved (as kill -9 would); --warm N trains a map for N iterations first
 * and starts the run from it.  Prints one line on rank 0.  Build:
 *   mpicc integrate.c $(pkg-config --cflags --libs strata) -lm -o integrate */
#include <getopt.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <math.h>
#include <strata/strata.h>
#include <strata/strata_mpi.h>

/* What the integrand needs from the caller: its width, and a count of its
 * calls (OpenMP threads call it at once). */
typedef struct {
  double a;
  long calls;
} gauss_data;

static double gauss(const double *x, int dim, double a)
{
  double s = 0.0;
  for (int i = 0; i < dim; i++) {
    double t = x[i] - 0.5;
    s += t * t;
  }
  return exp(-a * s);
}

static void gauss_point(const double *x, int dim, void *user, double *out)
{
  gauss_data *d = user;
  __atomic_fetch_add(&d->calls, 1, __ATOMIC_RELAXED);
  out[0] = gauss(x, dim, d->a);
}

static void gauss_batch(int64_t n, const double *x, int dim, void *user, double *out)
{
  gauss_data *d = user;
  __atomic_fetch_add(&d->calls, (long)n, __ATOMIC_RELAXED);
  for (int64_t i = 0; i < n; i++) out[i] = gauss(x + i * dim, dim, d->a);
}

/* The same function as source text, for the GPU (and the CPU's compiler). */
static const char gauss_source[] =
    "#include <math.h>\n"
    "double gauss(const double *x, int dim, const double *params)\n"
    "{\n"
    "  double s = 0.0;\n"
    "  for (int i = 0; i < dim; i++) {\n"
    "    double t = x[i] - 0.5;\n"
    "    s += t * t;\n"
    "  }\n"
    "  return exp(-params[0] * s);\n"
    "}\n";

static int rank;

/* An error ends every rank: the others may be waiting in a collective. */
static void fail(const char *what)
{
  fprintf(stderr, "integrate: rank %d: %s: %s\n", rank, what, strata_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A call's status.  STRATA_EPEER: another rank failed and says why, then
 * aborts; this rank leaves quietly, since an abort from here could end
 * that rank before its message is out. */
static void check(int rc, const char *what)
{
  if (rc == STRATA_OK) return;
  if (rc == STRATA_EPEER) {
    MPI_Finalize();
    exit(1);
  }
  fail(what);
}

static void progress(const strata_iteration *it, void *ctx)
{
  if (ctx) ++*(int *)ctx;
  if (rank == 0 && getenv("INTEGRATE_VERBOSE"))
    fprintf(stderr, "itn %d: %.10g +- %.3g\n", it->itn, it->integral, it->sigma);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  /* The program's own communicator: strata's messages never meet others. */
  MPI_Comm mine;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  MPI_Comm_rank(mine, &rank);

  static const struct option opts[] = {
      {"form", required_argument, 0, 'f'},    {"backend", required_argument, 0, 'b'},
      {"neval", required_argument, 0, 'n'},   {"seed", required_argument, 0, 's'},
      {"maxiter", required_argument, 0, 'm'}, {"checkpoint", required_argument, 0, 'c'},
      {"resume", no_argument, 0, 'r'},        {"die-after", required_argument, 0, 'd'},
      {"warm", required_argument, 0, 'w'},    {0, 0, 0, 0}};
  const char *form = "point", *checkpoint = NULL;
  strata_backend_kind backend = STRATA_BACKEND_AUTO;
  strata_params p;
  strata_params_default(&p);
  p.neval = 100000;
  p.maxiter = 10;
  p.adapt_iters = 8;
  p.skip = 2;
  p.epsrel = 0;
  int resume = 0, die_after = 0, warm = 0, c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'f': form = optarg; break;
    case 'b':
      backend = !strcmp(optarg, "cpu")    ? STRATA_BACKEND_CPU
                : !strcmp(optarg, "cuda") ? STRATA_BACKEND_CUDA
                                          : STRATA_BACKEND_AUTO;
      break;
    case 'n': p.neval = atoll(optarg); break;
    case 's': p.seed = strtoull(optarg, NULL, 10); break;
    case 'm': p.maxiter = atoi(optarg); break;
    case 'c': checkpoint = optarg; break;
    case 'r': resume = 1; break;
    case 'd': die_after = atoi(optarg); break;
    case 'w': warm = atoi(optarg); break;
    default: fprintf(stderr, "integrate: bad option\n"); MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }

  gauss_data data = {625.0, 0};
  strata_problem pr;
  memset(&pr, 0, sizeof pr);
  pr.dim = 6;
  for (int d = 0; d < pr.dim; d++) {
    pr.lower[d] = 0.0;
    pr.upper[d] = 1.0;
  }
  pr.name = "gauss";
  pr.user = &data;
  strata_source *src = NULL;
  if (!strcmp(form, "point")) {
    pr.fu = gauss_point;
  } else if (!strcmp(form, "batch")) {
    pr.fb = gauss_batch;
    pr.batch = 512;
  } else {
    pr.params[0] = data.a;
    pr.nparams = 1;
    int rc = strata_source_from_string(gauss_source, "gauss", 0, 1, &src);
    if (rc == STRATA_OK) rc = strata_problem_set_source(&pr, src);
    check(rc, "the integrand's source");
  }

  strata_comm *peers;
  check(strata_comm_mpi(mine, &peers), "peers");

  /* A map trained apart, then handed to the run that counts. */
  double *edges = NULL;
  int naxes = 0, ninc = 0;
  if (warm > 0) {
    strata_params tp = p;
    tp.maxiter = warm;
    tp.adapt_iters = warm;
    tp.skip = 0;
    strata_integrator *t;
    int rc = strata_integrator_alloc(&pr, &tp, backend, peers, &t);
    if (rc == STRATA_OK) rc = strata_integrator_integrate(t, NULL, NULL, NULL);
    if (rc == STRATA_OK) rc = strata_integrator_map(t, &naxes, &ninc, NULL);
    check(rc, "training");
    edges = malloc(sizeof(double) * (size_t)naxes * (size_t)(ninc + 1));
    if (!edges) {
      fprintf(stderr, "integrate: rank %d: no memory for the map\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check(strata_integrator_map(t, &naxes, &ninc, edges), "the map");
    strata_integrator_free(t);
  }

  strata_integrator *s;
  check(strata_integrator_alloc(&pr, &p, backend, peers, &s), "start");
  if (edges) check(strata_integrator_set_map(s, naxes, ninc, edges), "the map");
  if (resume && checkpoint && access(checkpoint, F_OK) == 0) {
    int restored = 0; /* the saved iterations come back through progress */
    check(strata_integrator_load(s, checkpoint, progress, &restored), "resume");
    if (rank == 0) fprintf(stderr, "integrate: resumed after %d iterations\n", restored);
  }
  data.calls = 0;
  while (!strata_integrator_finished(s)) {
    strata_iteration it;
    check(strata_integrator_step(s, &it), "iteration");
    progress(&it, NULL);
    if (checkpoint) check(strata_integrator_save(s, checkpoint), "checkpoint");
    if (die_after && it.itn == die_after) raise(SIGKILL);
  }
  strata_result res;
  strata_integrator_result(s, &res);

  /* Every point the run drew reached the integrand with this data. */
  long calls = data.calls;
  MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_LONG, MPI_SUM, mine);
  if (src == NULL && !resume && calls != (long)res.neval) {
    if (rank == 0)
      fprintf(stderr, "integrate: the integrand saw %ld points, the run drew %lld\n", calls,
              (long long)res.neval);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0)
    printf("integral %.17g sigma %.17g chi2_dof %.17g q %.17g iterations %d neval %lld "
           "backend %s\n", res.integral, res.sigma, res.chi2_dof, res.q, res.iterations,
           (long long)res.neval, strata_integrator_backend(s));
  strata_integrator_free(s);
  strata_comm_free(peers);
  strata_source_free(src);
  free(edges);
  MPI_Comm_free(&mine);
  MPI_Finalize();
  return 0;
}
