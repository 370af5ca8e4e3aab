/* strata over MPI: the ranks of a communicator the caller owns (it calls
 * MPI_Init and MPI_Finalize).  strata_comm_mpi is in libstrata itself, and
 * this header is installed, when strata is built with MPI (the default):
 * compile with mpicc and link with pkg-config --cflags --libs strata.
 * Programs without MPI never include this header. */
#ifndef STRATA_STRATA_MPI_H
#define STRATA_STRATA_MPI_H
#include <mpi.h>

#include "strata/strata.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Peers for strata_integrator_alloc: every rank of comm (duplicated, so
 * strata's messages never meet the caller's).  Ranks on one node share
 * its GPUs round-robin.  Free with strata_comm_free before MPI_Finalize.
 * MPI errors on it are returned, never fatal: a failing collective is
 * STRATA_ECOMM naming the rank. */
int strata_comm_mpi(MPI_Comm comm, strata_comm **out);

#ifdef __cplusplus
}
#endif
#endif
