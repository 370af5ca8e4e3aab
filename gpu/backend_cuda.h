/* The CUDA backend, as seen from C: sampling kernels for the built-in
 * integrands on one GPU, behind the strata_backend interface. */
#ifndef STRATA_BACKEND_CUDA_H
#define STRATA_BACKEND_CUDA_H
#include "backend.h"
#include "comm.h"
#ifdef __cplusplus
extern "C" {
#endif

/* GPUs this process can use (after CUDA_VISIBLE_DEVICES); 0 when there is
 * no device or no driver.  Never fails loudly: auto falls back to the CPU. */
int strata_cuda_device_count(void);

/* Starts creating the CUDA context of the device that local rank would
 * take, in the background; returns at once.  Harmless without a GPU. */
void strata_cuda_prepare(int local_rank);

/* A backend on visible device `device`; NULL with strata_last_error() set
 * when the device cannot be used. */
strata_backend *strata_backend_cuda_new(int device);

/* "NVIDIA H100 80GB HBM3 (device 0, bus 0000:1a:00.0)" for -v. */
void strata_cuda_describe(const strata_backend *b, char *buf, int len);

/* The exchange between several ranks' devices (comm/peers_cuda.h): through NCCL
 * where built with it and want_nccl, else through host memory over comm.
 * Collective: every rank calls it.  *how says which path; an error names
 * the rank that failed.  One rank: nothing to set up. */
int strata_cuda_attach_peers(strata_backend *b, strata_comm *comm, int want_nccl, char *how,
                             int len);

/* Seconds the device spent in sampling kernels during the last sample call
 * (CUDA events), for benchmarks. */
double strata_cuda_last_kernel_s(const strata_backend *b);

/* Consecutive samples a thread took in the last sampling kernel: fewer
 * than usual where the integrand is dear (gpu/sample.cu's shape), for
 * tests and benchmarks. */
int strata_cuda_last_chunk(const strata_backend *b);

/* Adapting iterations whose sampling was queued before the record of the
 * one before was read (gpu/ahead.cu): taken, and dropped because the
 * next plan was another (a run's end among them); for tests and
 * benchmarks.  STRATA_CUDA_AHEAD=0 queues none. */
void strata_cuda_ahead_counts(const strata_backend *b, long long *taken, long long *dropped);
#ifdef __cplusplus
}
#endif
#endif
