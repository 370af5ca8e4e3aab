/* The program's ranks: MPI_COMM_WORLD when a launcher started it (the
 * library's peers over it: strata_comm_mpi), else one. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "message.h"
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

const char *strata_world_how(void) { return how; }

int strata_world_open(int *argc, char ***argv, strata_world *w)
{
  w->rank = 0;
  w->size = 1;
  w->peers = NULL;
  const char *by = launcher();
  if (!by) return STRATA_OK;
  snprintf(how, sizeof how, "MPI: launched (%s is set)", by);
  int provided;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return app_error(STRATA_ECOMM, "MPI_Init failed");
  mpi_up = 1;
  /* A failing rank must end the job, not leave the others in a collective. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w->size);
  int rc = strata_comm_mpi(MPI_COMM_WORLD, &w->peers);
  return rc == STRATA_OK ? rc : app_take_error(rc);
}

int strata_world_allgather(strata_world *w, int mine, int *all)
{
  if (!mpi_up) {
    all[0] = mine;
    return 0;
  }
  (void)w;
  return MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS;
}

void strata_world_close(strata_world *w, int status)
{
  (void)status;
  strata_comm_free(w->peers);
  w->peers = NULL;
  if (mpi_up) MPI_Finalize();
}

void strata_world_abort(strata_world *w, int status)
{
  (void)w;
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}
