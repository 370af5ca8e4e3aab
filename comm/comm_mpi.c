/* Peers over an MPI communicator (strata/strata_mpi.h).  The algorithm
 * needs two things from its peers: the element-wise sum of an iteration's
 * sums, and the hypercubes' shares each rank worked out for its own slice;
 * then every rank applies the same update and holds the same state. */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "error.h"
#include "strata/strata_mpi.h"

static MPI_Comm of(strata_comm *c) { return *(MPI_Comm *)c->self; }

static int mpi_allreduce(strata_comm *c, double *buf, size_t n)
{
  /* MPI counts are int: reduce very long buffers in pieces. */
  while (n > 0) {
    int m = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    if (MPI_Allreduce(MPI_IN_PLACE, buf, m, MPI_DOUBLE, MPI_SUM, of(c)) != MPI_SUCCESS)
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
                          of(c));
  free(count);
  return rc == MPI_SUCCESS ? 0 : -1;
}

static int mpi_gather_bytes(strata_comm *c, void *buf, const int64_t *lo, const int64_t *hi)
{
  const int n = c->size;
  for (int r = 0; r < n; r++)
    if (lo[r] > (int64_t)INT_MAX || hi[r] - lo[r] > (int64_t)INT_MAX) return -1;
  int *count = malloc(2 * sizeof(int) * (size_t)n);
  if (!count) return -1;
  int *displ = count + n;
  for (int r = 0; r < n; r++) {
    displ[r] = (int)lo[r];
    count[r] = (int)(hi[r] - lo[r]);
  }
  int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, displ, MPI_BYTE, of(c));
  free(count);
  return rc == MPI_SUCCESS ? 0 : -1;
}

static int mpi_broadcast(strata_comm *c, void *buf, size_t n, int root)
{
  char *p = buf;
  while (n > 0) {
    int m = n > (size_t)INT_MAX ? INT_MAX : (int)n;
    if (MPI_Bcast(p, m, MPI_BYTE, root, of(c)) != MPI_SUCCESS) return -1;
    p += m;
    n -= (size_t)m;
  }
  return 0;
}

static void mpi_free(strata_comm *c)
{
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(c->self);
  free(c->self);
  free(c);
}

int strata_comm_mpi(MPI_Comm comm, strata_comm **out)
{
  STRATA_GIVEN(out, "place for the peers");
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return strata_error(STRATA_EINVAL, "strata_comm_mpi: MPI_COMM_NULL");
  int up = 0;
  MPI_Initialized(&up);
  if (!up) return strata_error(STRATA_ECOMM, "strata_comm_mpi: MPI is not initialised");
  strata_comm *c = calloc(1, sizeof *c);
  MPI_Comm *own = malloc(sizeof *own);
  if (!c || !own) {
    free(c);
    free(own);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  /* A communicator of strata's own: its collectives never match the
   * caller's, and its errors are returned rather than fatal. */
  if (MPI_Comm_dup(comm, own) != MPI_SUCCESS) {
    free(c);
    free(own);
    return strata_error(STRATA_ECOMM, "strata_comm_mpi: MPI_Comm_dup failed");
  }
  MPI_Comm_set_errhandler(*own, MPI_ERRORS_RETURN);
  MPI_Comm_rank(*own, &c->rank);
  MPI_Comm_size(*own, &c->size);
  /* Ranks sharing a node share its GPUs: the node-local rank picks one. */
  MPI_Comm node;
  if (MPI_Comm_split_type(*own, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    MPI_Comm_free(&node);
  } else {
    c->local_rank = 0;
    c->local_size = 1;
  }
  c->self = own;
  c->allreduce_sum = mpi_allreduce;
  c->allgather = mpi_allgather;
  c->broadcast = mpi_broadcast;
  c->gather_bytes = mpi_gather_bytes;
  c->free = mpi_free;
  *out = c;
  return STRATA_OK;
}
