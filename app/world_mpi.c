/* The program's communicator: MPI_COMM_WORLD when a launcher started it
 * (the library's peers over it, comm/comm_mpi.c), else serial. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "error.h"
#include "strata/strata_mpi.h"
#include "world.h"

/* Set when MPI_Init ran: only then may MPI be called (finalize, abort). */
static int mpi_up;
static char how[160] = "serial: no MPI launcher in the environment";

/* The variable that shows a launcher started this process, or NULL.  A
 * singleton MPI_Init (no launcher) costs more than a small run takes, and
 * gives one rank anyway.  Slurm sets SLURM_ variables in a batch
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
  /* A failing rank must end the job, not leave the others in a collective. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return strata_comm_mpi(MPI_COMM_WORLD, out);
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
