/* The job communicator over MPI_COMM_WORLD.  The algorithm needs two things
 * from its peers: the element-wise sum of an iteration's sums, and the
 * hypercubes' shares each rank worked out for its own slice; then every
 * rank applies the same update and holds the same state. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "error.h"

static int mpi_allreduce(strata_comm *c, double *buf, size_t n)
{
  (void)c;
  /* MPI counts are int: reduce very long buffers in pieces. */
  while (n > 0) {
    int m = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    if (MPI_Allreduce(MPI_IN_PLACE, buf, m, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) !=
        MPI_SUCCESS)
      return -1;
    buf += m;
    n -= (size_t)m;
  }
  return 0;
}

static int mpi_allgather(strata_comm *c, double *buf, const int64_t *off)
{
  const int n = c->size;
  if (off[n] > (int64_t)INT_MAX) {
    /* Beyond int counts: the same through the sum, the others' parts zero. */
    memset(buf, 0, sizeof(double) * (size_t)off[c->rank]);
    memset(buf + off[c->rank + 1], 0, sizeof(double) * (size_t)(off[n] - off[c->rank + 1]));
    return mpi_allreduce(c, buf, (size_t)off[n]);
  }
  int *count = malloc(2 * sizeof(int) * (size_t)n);
  if (!count) return -1;
  int *displ = count + n;
  for (int r = 0; r < n; r++) {
    displ[r] = (int)off[r];
    count[r] = (int)(off[r + 1] - off[r]);
  }
  int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, displ, MPI_DOUBLE,
                          MPI_COMM_WORLD);
  free(count);
  return rc == MPI_SUCCESS ? 0 : -1;
}

static int mpi_broadcast(strata_comm *c, void *buf, size_t n, int root)
{
  (void)c;
  char *p = buf;
  while (n > 0) {
    int m = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    if (MPI_Bcast(p, m, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    p += m;
    n -= (size_t)m;
  }
  return 0;
}

static void mpi_free(strata_comm *c) { free(c); }

/* Set when MPI_Init ran: only then may MPI be called (finalize, abort). */
static int mpi_up;
static char how[160] = "serial: no MPI launcher in the environment";

/* The variable that shows a launcher started this process, or NULL.  A
 * singleton MPI_Init (no launcher) costs ~0.4 s, more than a small run,
 * and gives one rank anyway.  Slurm sets SLURM_ variables in a batch
 * script too, which is no task of a step: srun's tasks have a step id
 * together with a task rank (SLURM_PROCID), so a batch script that runs
 * strata directly starts serial and a task of srun still calls MPI_Init. */
static const char *launcher(void)
{
  static const char *const vars[] = {
      "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", /* Open MPI's mpirun */
      "PMIX_RANK",            "PMIX_NAMESPACE",       /* PMIx: prterun, srun --mpi=pmix */
      "PMI_RANK",             "PMI_SIZE",             /* PMI-1/2: hydra, srun --mpi=pmi2 */
      "PMI_FD"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    if (getenv(vars[i])) return vars[i];
  const char *name = getenv("SLURM_STEP_ID") ? "SLURM_STEP_ID" : "SLURM_STEPID";
  const char *step = getenv(name);
  /* The batch, extern and interactive steps have reserved ids at the top
   * of the 32-bit range: no srun task runs in them. */
  if (getenv("SLURM_PROCID") && step && strtoull(step, NULL, 10) < 0xfffffff0ULL) return name;
  return NULL;
}

const char *strata_comm_world_how(void) { return how; }

int strata_comm_world_open(int *argc, char ***argv, strata_comm **out)
{
  *out = NULL;
  const char *by = launcher();
  if (!by) {
    *out = strata_comm_serial();
    return *out ? STRATA_OK : strata_error(STRATA_ENOMEM, "out of memory");
  }
  snprintf(how, sizeof how, "MPI: launched (%s is set)", by);
  int provided;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return strata_error(STRATA_ECOMM, "MPI_Init failed");
  mpi_up = 1;
  strata_comm *c = calloc(1, sizeof *c);
  if (!c) return strata_error(STRATA_ENOMEM, "out of memory");
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);
  /* Ranks sharing a node share its GPUs: the node-local rank picks one. */
  MPI_Comm node;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
                          &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    MPI_Comm_free(&node);
  } else {
    c->local_rank = 0;
    c->local_size = 1;
  }
  /* A failing rank must end the job, not leave the others in a collective. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  c->allreduce_sum = mpi_allreduce;
  c->allgather = mpi_allgather;
  c->broadcast = mpi_broadcast;
  c->free = mpi_free;
  *out = c;
  return STRATA_OK;
}

void strata_comm_world_close(strata_comm *c, int status)
{
  (void)status;
  strata_comm_free(c);
  if (mpi_up) MPI_Finalize();
}

void strata_comm_abort(strata_comm *c, int status)
{
  (void)c;
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}

void strata_comm_where(strata_comm *c, char *buf, int len)
{
  (void)c;
  if (!mpi_up) {
    if (gethostname(buf, (size_t)len) != 0) buf[0] = '\0';
    buf[len - 1] = '\0';
    return;
  }
  char name[MPI_MAX_PROCESSOR_NAME];
  int n = 0;
  if (MPI_Get_processor_name(name, &n) != MPI_SUCCESS) n = 0;
  name[n] = '\0';
  snprintf(buf, (size_t)len, "%s", name);
}
