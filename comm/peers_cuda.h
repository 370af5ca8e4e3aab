/* The GPU ranks' exchange, on the devices: the element-wise sum of a
 * device buffer and the gather of each rank's bytes of another, queued on
 * the backend's stream.  Through NCCL where strata was built with it and
 * the ranks could set it up (device to device: NVLink within a node, the
 * network between nodes); otherwise staged through host memory over the
 * run's own communicator (MPI), as CPU ranks exchange.  Both add in the
 * same order on two ranks, so they give the same bits there. */
#ifndef STRATA_COMM_PEERS_CUDA_H
#define STRATA_COMM_PEERS_CUDA_H
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"

struct cuda_peers;

/* Peers over comm for the device `device`; with want_nccl, NCCL is tried
 * (every rank agrees on the outcome: all use it or none).  A rank whose
 * set-up fails ends every rank's attempt with an error naming it.
 * *how says which path ("nccl 2.28.9" or "mpi through host memory"). */
int strata_cuda_peers_new(strata_comm *comm, int device, int want_nccl, cuda_peers **out,
                          char *how, int len);
void strata_cuda_peers_free(cuda_peers *p);
const strata_comm *strata_cuda_peers_comm(const cuda_peers *p);

/* In place over all ranks: d[0 .. n) summed. */
int strata_cuda_peers_allreduce(cuda_peers *p, double *d, size_t n, cudaStream_t q);
/* In place: rank r's bytes [lo[r], hi[r]) of d reach every rank. */
int strata_cuda_peers_gather(cuda_peers *p, unsigned char *d, const int64_t *lo,
                             const int64_t *hi, cudaStream_t q);
/* Whether the exchange stays on the devices (no host synchronisation). */
int strata_cuda_peers_on_device(const cuda_peers *p);
#endif
