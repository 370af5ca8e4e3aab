/* How the algorithm talks to its peers: the ranks of an MPI job (mpi/), or
 * nobody (the serial communicator here).  Every rank runs the same
 * algorithm on the same reduced sums, so this is all it needs. */
#ifndef STRATA_COMM_H
#define STRATA_COMM_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct strata_comm strata_comm;
struct strata_comm {
  int rank, size;
  int local_rank, local_size; /* among the ranks on this node: picks the GPU */
  void *self;
  /* In-place element-wise sum over all ranks. */
  int (*allreduce_sum)(strata_comm *c, double *buf, size_t n);
  /* In place: rank r holds buf[off[r] .. off[r + 1]) (off has size + 1
   * entries, the same on every rank); afterwards every rank holds all of
   * buf[0 .. off[size]).  For what ranks compute on disjoint slices: half
   * the traffic of summing it with zeros, and no additions. */
  int (*allgather)(strata_comm *c, double *buf, const int64_t *off);
  /* In place: every rank gets rank root's n bytes.  For what must be
   * identical everywhere and is not a number (a job's definition): a sum
   * of doubles carries 53 bits at most, a broadcast carries them all. */
  int (*broadcast)(strata_comm *c, void *buf, size_t n, int root);
  void (*free)(strata_comm *c);
};

strata_comm *strata_comm_serial(void);
void strata_comm_free(strata_comm *c);


/* The communicator of the whole job: MPI_COMM_WORLD when strata is built
 * with MPI (mpi/comm_mpi.c, which also initialises MPI) and a launcher
 * started the process, else the serial one (comm_world_serial.c, and
 * mpi/comm_mpi.c without a launcher: a singleton MPI_Init costs more than a
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
#ifdef __cplusplus
}
#endif
#endif
