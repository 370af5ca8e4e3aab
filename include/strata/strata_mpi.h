/* strata over MPI: the ranks of a communicator the caller owns (it calls
 * MPI_Init and MPI_Finalize).  Link with -lstrata_mpi (pkg-config
 * strata-mpi); programs without MPI never include this header. */
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
