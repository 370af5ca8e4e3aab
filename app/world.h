/* The program's communicator: every rank of the job (app/world_mpi.c when
 * built with MPI, app/world_serial.c without). */
#ifndef STRATA_WORLD_H
#define STRATA_WORLD_H
#include "comm.h"

/* The communicator of the whole job: MPI_COMM_WORLD when strata is built
 * with MPI (world_mpi.c, which also initialises MPI) and a launcher
 * started the process, else the serial one (world_serial.c, and
 * world_mpi.c without a launcher: a singleton MPI_Init costs more than a
 * small run). */
int strata_comm_world_open(int *argc, char ***argv, strata_comm **out);
/* How the job communicates, for -v: "MPI: launched (VARIABLE is set)" or
 * "serial: ...". */
const char *strata_comm_world_how(void);
/* Ends the job's communication; status is the process's exit status. */
void strata_comm_world_close(strata_comm *c, int status);
/* Ends every rank of the job now, after this rank printed why. */
void strata_comm_abort(strata_comm *c, int status);
/* Where this rank runs, for -v: "host" (MPI: the processor name). */
void strata_comm_where(strata_comm *c, char *buf, int len);
#endif
