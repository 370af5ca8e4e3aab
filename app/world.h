/* The program's ranks: every rank of the job over MPI when a launcher
 * started it (app/world_mpi.c, which also initialises MPI), else one
 * (app/world_serial.c, and world_mpi.c without a launcher: a singleton
 * MPI_Init costs more than a small run).  The library's peers over them
 * are `peers` (strata_comm_mpi), NULL for one rank. */
#ifndef STRATA_WORLD_H
#define STRATA_WORLD_H
#include "strata/strata.h"

typedef struct {
  int rank, size;
  strata_comm *peers;
} strata_world;

int strata_world_open(int *argc, char ***argv, strata_world *w);
/* How the job communicates, for -v: "MPI: launched (VARIABLE is set)" or
 * "serial: ...". */
const char *strata_world_how(void);
/* Every rank's value of mine into all[0 .. size-1]; nonzero if the ranks
 * cannot be reached. */
int strata_world_allgather(strata_world *w, int mine, int *all);
/* Ends the job's communication; status is the process's exit status. */
void strata_world_close(strata_world *w, int status);
/* Ends every rank of the job now, after this rank printed why. */
void strata_world_abort(strata_world *w, int status);
#endif
