/* The CUDA backend: strata_backend (src/backend.h) on one GPU, and what
 * the rest of strata asks of the device beside it (backend_cuda.h).
 *
 * An iteration's steps live in their own files: sample.cu (the sampling,
 * and what comes back), adapt.cu (the estimate and adaptation behind it),
 * exchange.cu and frozen.cu (several ranks), residency.cu (what the device
 * holds of the map and allocation), buffers.cu; kernels.cu is the module
 * with every kernel, state.cuh the state they share. */
#include <stdio.h>
#include <stdlib.h>
#include <thread>

#include "backend_cuda.h"
#include "state.cuh"

namespace strata_cuda {

int cuda_fail(cudaError_t e, const char *what, int device)
{
  return strata_error(STRATA_EBACKEND, "cuda device %d: %s: %s", device, what,
                      cudaGetErrorString(e));
}

} // namespace strata_cuda

using namespace strata_cuda;

namespace {

void cuda_free(strata_backend *b)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  cudaSetDevice(st->device);
  if (st->next.on) drop_next(st);
  if (st->ahead.on) drop_ahead(st);
  release_buffers(st);
  strata_cuda_peers_free(st->peers);
  cudaEventDestroy(st->ev_map);
  cudaStreamDestroy(st->xstream);
  for (int i = 0; i < 2; i++) {
    cudaEventDestroy(st->ev_pack[i]);
    cudaEventDestroy(st->ev_done[i]);
  }
  strata_jit_free(st->jit);
  cudaEventDestroy(st->ev0);
  cudaEventDestroy(st->ev1);
  cudaEventDestroy(st->ev_join);
  cudaEventDestroy(st->ev_tail);
  cudaEventDestroy(st->ev_a0);
  cudaEventDestroy(st->ev_a1);
  cudaStreamDestroy(st->stream);
  cudaStreamDestroy(st->stream2);
  delete st;
  free(b);
}

} // namespace

static void prepare_wait(void);

extern "C" int strata_cuda_device_count(void)
{
  prepare_wait();
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear the sticky "no device" error */
    return 0;
  }
  return n;
}

/* Creating a context takes a few hundred milliseconds of the driver's
 * time, most of a short job's start: a thread does it while the job is
 * read, the integrand compiled and the files opened.  The primary context
 * is the process's, so the backend then finds it made.  Whatever asks the
 * driver anything first waits for the thread, and so does exit (the
 * runtime's own exit handlers were registered before main, so they run
 * after this one). */
static std::thread prepare_thread;

/* CUDA loads the backend's kernels on their first use (lazy loading):
 * milliseconds that belong to the set-up, not to the first iteration. */
static void prepare_wait(void)
{
  if (prepare_thread.joinable()) prepare_thread.join();
}

extern "C" void strata_cuda_prepare(int local_rank)
{
  if (prepare_thread.joinable()) return;
  atexit(prepare_wait);
  prepare_thread = std::thread([local_rank] {
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaSetDevice(local_rank % n) == cudaSuccess &&
        cudaFree(0) == cudaSuccess)
      load_module();
    cudaGetLastError();
  });
}

static bool create_events(cudaEvent_t *ev)
{
  return cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming) == cudaSuccess &&
         cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming) == cudaSuccess;
}

extern "C" strata_backend *strata_backend_cuda_new(int device)
{
  int n = strata_cuda_device_count();
  if (n == 0) {
    strata_error(STRATA_EBACKEND, "backend cuda: no usable CUDA device (none visible, or no "
                 "driver; CUDA_VISIBLE_DEVICES=%s)",
                 getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "(unset)");
    return NULL;
  }
  if (device < 0 || device >= n) {
    strata_error(STRATA_EBACKEND, "backend cuda: device %d does not exist (%d visible)", device, n);
    return NULL;
  }
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaFree(0); /* create the context now, not in the first iteration */
  if (e != cudaSuccess) {
    cuda_fail(e, "creating a context", device);
    return NULL;
  }
  load_module();
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, device);
  /* The allocation is one cooperative kernel of a block an SM (adapt.cuh's
   * reallocate_kernel): every GPU since compute capability 6.0 runs it. */
  int per_sm = 0;
  if (!prop.cooperativeLaunch ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reallocate_kernel, kReallocThreads,
                                                    0) != cudaSuccess ||
      per_sm < 1) {
    strata_error(STRATA_EBACKEND, "cuda device %d (%s): no cooperative launch, which the "
                 "allocation's kernel needs", device, prop.name);
    return NULL;
  }
  cuda_state *st = new cuda_state();
  st->device = device;
  st->nsm = prop.multiProcessorCount;
  st->realloc_blocks = prop.multiProcessorCount;
  st->max_threads_sm = prop.maxThreadsPerMultiProcessor;
  st->smem_optin = prop.sharedMemPerBlockOptin;
  snprintf(st->name, sizeof st->name, "%s", prop.name);
  int lo_priority = 0, hi_priority = 0; /* (numerically: the greatest is the lowest) */
  cudaDeviceGetStreamPriorityRange(&lo_priority, &hi_priority);
  const char *gen = getenv("STRATA_CUDA_GENERIC");
  st->generic = gen && *gen == '1';
  const char *ahead = getenv("STRATA_CUDA_AHEAD");
  st->ahead_allowed = !(ahead && *ahead == '0');
  if (cudaStreamCreate(&st->stream) != cudaSuccess ||
      cudaStreamCreate(&st->stream2) != cudaSuccess || cudaEventCreate(&st->ev0) != cudaSuccess ||
      cudaEventCreate(&st->ev1) != cudaSuccess ||
      cudaEventCreateWithFlags(&st->ev_join, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventCreateWithFlags(&st->ev_tail, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventCreate(&st->ev_a0) != cudaSuccess || cudaEventCreate(&st->ev_a1) != cudaSuccess ||
      cudaEventCreateWithFlags(&st->ev_map, cudaEventDisableTiming) != cudaSuccess ||
      cudaStreamCreateWithPriority(&st->xstream, cudaStreamDefault, hi_priority) != cudaSuccess ||
      !create_events(st->ev_pack) || !create_events(st->ev_done)) {
    strata_error(STRATA_EBACKEND, "cuda device %d: cannot create a stream", device);
    delete st;
    return NULL;
  }
  strata_backend *b = (strata_backend *)calloc(1, sizeof *b);
  if (!b) {
    delete st;
    strata_error(STRATA_ENOMEM, "out of memory");
    return NULL;
  }
  b->name = "cuda";
  b->self = st;
  b->sample = cuda_sample;
  b->adapt = cuda_adapt;
  b->pull = cuda_pull;
  b->eval = cuda_eval;
  b->keeps_state = 1;
  b->free = cuda_free;
  return b;
}

extern "C" void strata_cuda_describe(const strata_backend *b, char *buf, int len)
{
  const cuda_state *st = static_cast<const cuda_state *>(b->self);
  char bus[32] = "";
  cudaDeviceGetPCIBusId(bus, sizeof bus, st->device);
  snprintf(buf, (size_t)len, "%s (device %d, bus %s)", st->name, st->device, bus);
}

extern "C" int strata_cuda_attach_peers(strata_backend *b, strata_comm *comm, int want_nccl,
                                        char *how, int len)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  if (comm->size < 2) {
    snprintf(how, (size_t)len, "one rank: no exchange");
    return STRATA_OK;
  }
  int rc = strata_cuda_peers_new(comm, st->device, want_nccl, &st->peers, how, len);
  if (rc != STRATA_OK) return rc;
  b->exchanges = 1;
  /* What the first iteration would otherwise pay (milliseconds): the
   * buffers whose size the number of ranks sets, and the load of the
   * exchange's kernels (CUDA loads a kernel's module on its first use). */
  const size_t R = (size_t)comm->size;
  cudaFuncAttributes fa;
  cudaSetDevice(st->device);
  if (!st->h_seg.reserve(2 * R) || !st->seg.reserve(2 * R) || !st->h_shared.reserve(R) ||
      !st->shared.reserve(R) || !st->split.reserve(4 * (R + 1)) ||
      !st->h_split.reserve(4 * (R + 1)) ||
      cudaFuncGetAttributes(&fa, pack_kernel) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, pack_levels_kernel) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, unpack_levels_kernel) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, unpack_map_kernel) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, finish_kernel) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, split_samples_kernel) != cudaSuccess)
    return strata_error(STRATA_ENOMEM, "rank %d: cuda device %d: cannot prepare the ranks' "
                        "exchange", comm->rank, st->device);
  return STRATA_OK;
}

extern "C" double strata_cuda_last_kernel_s(const strata_backend *b)
{
  return static_cast<const cuda_state *>(b->self)->last_kernel_s;
}

extern "C" int strata_cuda_last_chunk(const strata_backend *b)
{
  return static_cast<const cuda_state *>(b->self)->last_chunk;
}

extern "C" void strata_cuda_ahead_counts(const strata_backend *b, long long *taken,
                                         long long *dropped)
{
  const cuda_state *st = static_cast<const cuda_state *>(b->self);
  *taken = st->ahead_used;
  *dropped = st->ahead_dropped;
}
