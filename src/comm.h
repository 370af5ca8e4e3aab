/* How the algorithm talks to its peers: the ranks of an MPI job
 * (comm/comm_mpi.c), or nobody (comm/comm_serial.c).  Every rank runs the same
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
  /* In place: rank r holds bytes [lo[r], hi[r]) of buf (disjoint ranges,
   * the same lo and hi on every rank); afterwards every rank holds them
   * all.  For the GPU ranks' levels, packed in two bytes each.  May be
   * NULL (one rank): callers then broadcast each rank's range. */
  int (*gather_bytes)(strata_comm *c, void *buf, const int64_t *lo, const int64_t *hi);
  void (*free)(strata_comm *c);
};

strata_comm *strata_comm_serial(void);
void strata_comm_free(strata_comm *c);
#ifdef __cplusplus
}
#endif
#endif
