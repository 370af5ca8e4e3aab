/* The GPU ranks' exchange (peers_cuda.h): NCCL on the devices, or host memory
 * over the run's communicator. */
#include "peers_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_NCCL
#include <nccl.h>
#endif

extern "C" {
#include "error.h"
}

struct cuda_peers {
  strata_comm *comm;
  int device;
  int nccl;
#ifdef HAVE_NCCL
  ncclComm_t nc;
#endif
  unsigned char *host; /* page-locked staging for the host path */
  size_t nhost;
};

namespace {

int staging(cuda_peers *p, size_t bytes)
{
  if (bytes <= p->nhost) return 0;
  cudaFreeHost(p->host);
  p->host = nullptr;
  p->nhost = 0;
  if (cudaHostAlloc((void **)&p->host, bytes, cudaHostAllocDefault) != cudaSuccess) {
    p->host = nullptr;
    return -1;
  }
  p->nhost = bytes;
  return 0;
}

/* Every rank learns which ranks failed (failed: this one did): the first
 * is named in every rank's error, so that whichever rank's message the
 * job prints names the same rank. */
int agree(strata_comm *c, int failed, const char *what, const char *why)
{
  double *flag = (double *)calloc((size_t)c->size, sizeof(double));
  if (!flag) return strata_error(STRATA_ENOMEM, "rank %d: out of memory", c->rank);
  flag[c->rank] = failed;
  int rc = c->allreduce_sum(c, flag, (size_t)c->size);
  int first = -1, n = 0;
  for (int r = 0; rc == 0 && r < c->size; r++)
    if (flag[r] != 0.0) {
      if (first < 0) first = r;
      n++;
    }
  free(flag);
  if (rc != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot agree on the %s with the other ranks",
                        c->rank, what);
  if (first < 0) return STRATA_OK;
  if (first == c->rank)
    return strata_error(STRATA_ECOMM, "rank %d: %s failed: %s", first, what, why);
  return strata_error(STRATA_ECOMM, "rank %d: %s failed there (%d of %d ranks failed)", first,
                      what, n, c->size);
}

#ifdef HAVE_NCCL
/* Whether two ranks drive the same GPU (the same host and PCI bus id):
 * NCCL takes one rank per GPU, so such a job exchanges through the host.
 * Each rank's GPU is named by 48 bits of a hash, which a double carries
 * exactly through the gather. */
int shared_gpu(strata_comm *c, int device, int *shared)
{
  char id[512] = "";
  gethostname(id, 256);
  id[255] = '\0';
  size_t n = strlen(id);
  cudaDeviceGetPCIBusId(id + n, (int)(sizeof id - n), device);
  uint64_t h = 1469598103934665603ull;
  for (const char *q = id; *q; q++) h = (h ^ (unsigned char)*q) * 1099511628211ull;
  double *all = (double *)calloc((size_t)c->size, sizeof(double));
  int64_t *off = (int64_t *)calloc((size_t)c->size + 1, sizeof(int64_t));
  if (!all || !off) {
    free(all);
    free(off);
    return strata_error(STRATA_ENOMEM, "rank %d: out of memory", c->rank);
  }
  for (int r = 0; r <= c->size; r++) off[r] = r;
  all[c->rank] = (double)(h >> 16);
  int rc = c->allgather(c, all, off);
  *shared = 0;
  for (int a = 0; rc == 0 && a < c->size; a++)
    for (int b = a + 1; b < c->size; b++) *shared |= all[a] == all[b];
  free(all);
  free(off);
  return rc == 0 ? STRATA_OK
                 : strata_error(STRATA_ECOMM, "rank %d: cannot compare the ranks' GPUs", c->rank);
}

int nccl_allreduce(cuda_peers *p, double *d, size_t n, cudaStream_t q);
int nccl_gather(cuda_peers *p, unsigned char *d, const int64_t *lo, const int64_t *hi,
                cudaStream_t q);

/* One sum and one gather of the sizes an iteration exchanges, so that
 * whatever NCCL still sets up on first use (buffers, proxies, the
 * protocols for large messages) is part of the set-up, not of the first
 * iteration. */
int warm_up(cuda_peers *p)
{
  const int R = p->comm->size;
  const size_t per = 1 << 20, nd = 1 << 14;
  void *d = nullptr;
  int64_t *lo = (int64_t *)malloc(2 * sizeof(int64_t) * (size_t)R);
  cudaStream_t q = nullptr;
  int rc = STRATA_OK;
  if (!lo || cudaMalloc(&d, per * (size_t)R + nd * sizeof(double)) != cudaSuccess ||
      cudaStreamCreate(&q) != cudaSuccess) {
    rc = strata_error(STRATA_ENOMEM, "rank %d: no memory to start NCCL", p->comm->rank);
  } else {
    int64_t *hi = lo + R;
    for (int k = 0; k < R; k++) {
      lo[k] = (int64_t)per * k;
      hi[k] = lo[k] + (int64_t)per;
    }
    cudaMemsetAsync(d, 0, per * (size_t)R + nd * sizeof(double), q);
    rc = nccl_allreduce(p, (double *)((char *)d + per * (size_t)R), nd, q);
    if (rc == STRATA_OK) rc = nccl_gather(p, (unsigned char *)d, lo, hi, q);
    if (rc == STRATA_OK && cudaStreamSynchronize(q) != cudaSuccess)
      rc = strata_error(STRATA_ECOMM, "rank %d: NCCL's first exchange failed", p->comm->rank);
  }
  if (q) cudaStreamDestroy(q);
  cudaFree(d);
  free(lo);
  return rc;
}

int nccl_allreduce(cuda_peers *p, double *d, size_t n, cudaStream_t q)
{
  ncclResult_t r = ncclAllReduce(d, d, n, ncclDouble, ncclSum, p->nc, q);
  return r == ncclSuccess ? STRATA_OK
                          : strata_error(STRATA_ECOMM, "rank %d: ncclAllReduce: %s",
                                         p->comm->rank, ncclGetErrorString(r));
}

/* NCCL has no gather of unequal parts: each rank's part is a broadcast
 * from it, grouped into one launch. */
int nccl_gather(cuda_peers *p, unsigned char *d, const int64_t *lo, const int64_t *hi,
                cudaStream_t q)
{
  ncclResult_t r = ncclGroupStart();
  for (int k = 0; r == ncclSuccess && k < p->comm->size; k++)
    if (hi[k] > lo[k])
      r = ncclBroadcast(d + lo[k], d + lo[k], (size_t)(hi[k] - lo[k]), ncclUint8, k, p->nc, q);
  ncclResult_t g = ncclGroupEnd();
  if (r == ncclSuccess) r = g;
  return r == ncclSuccess ? STRATA_OK
                          : strata_error(STRATA_ECOMM, "rank %d: gathering the levels (NCCL): %s",
                                         p->comm->rank, ncclGetErrorString(r));
}

/* NCCL over the ranks of comm, its unique id from rank 0 by broadcast. */
int nccl_setup(cuda_peers *p, char *how, int len)
{
  strata_comm *c = p->comm;
  char why[256] = "";
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  int bad = 0;
  /* A test hook: one rank's set-up fails, to see every rank end. */
  const char *hook = getenv("STRATA_TEST_NCCL_FAIL_RANK");
  if (hook && atoi(hook) == c->rank) {
    bad = 1;
    snprintf(why, sizeof why, "STRATA_TEST_NCCL_FAIL_RANK=%s", hook);
  }
  ncclResult_t r;
  if (!bad && c->rank == 0 && (r = ncclGetUniqueId(&id)) != ncclSuccess) {
    bad = 1;
    snprintf(why, sizeof why, "ncclGetUniqueId: %s", ncclGetErrorString(r));
  }
  if (c->broadcast(c, &id, sizeof id, 0) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: cannot receive rank 0's NCCL id", c->rank);
  int rc = agree(c, bad, "the NCCL set-up", why);
  if (rc != STRATA_OK) return rc;
  /* NCCL connects the ranks for each kind of collective when one is first
   * used, which would land in an iteration's time: all of it at set-up
   * instead, unless the user chose otherwise. */
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  if (cudaSetDevice(p->device) != cudaSuccess) {
    bad = 1;
    snprintf(why, sizeof why, "cudaSetDevice(%d)", p->device);
  } else if ((r = ncclCommInitRank(&p->nc, c->size, id, c->rank)) != ncclSuccess) {
    bad = 1;
    snprintf(why, sizeof why, "ncclCommInitRank: %s", ncclGetErrorString(r));
  }
  rc = agree(c, bad, "the NCCL set-up", why);
  if (rc != STRATA_OK) {
    if (!bad) ncclCommDestroy(p->nc);
    return rc;
  }
  if ((rc = warm_up(p)) != STRATA_OK) {
    ncclCommDestroy(p->nc);
    return rc;
  }
  int v = 0;
  ncclGetVersion(&v);
  snprintf(how, (size_t)len, "nccl %d.%d.%d, device to device", v / 10000, v / 100 % 100,
           v % 100);
  p->nccl = 1;
  return STRATA_OK;
}
#endif

int host_allreduce(cuda_peers *p, double *d, size_t n, cudaStream_t q)
{
  const strata_comm *c = p->comm;
  if (staging(p, n * sizeof(double)) != 0)
    return strata_error(STRATA_ENOMEM, "rank %d: cannot lock host memory for the exchange",
                        c->rank);
  double *h = (double *)p->host;
  cudaError_t e = cudaMemcpyAsync(h, d, n * sizeof(double), cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess)
    return strata_error(STRATA_EBACKEND, "rank %d: copying the sums to the host: %s", c->rank,
                        cudaGetErrorString(e));
  if (p->comm->allreduce_sum(p->comm, h, n) != 0)
    return strata_error(STRATA_ECOMM, "rank %d: combining the iteration's sums failed", c->rank);
  e = cudaMemcpyAsync(d, h, n * sizeof(double), cudaMemcpyHostToDevice, q);
  return e == cudaSuccess ? STRATA_OK
                          : strata_error(STRATA_EBACKEND, "rank %d: copying the sums back: %s",
                                         c->rank, cudaGetErrorString(e));
}

int host_gather(cuda_peers *p, unsigned char *d, const int64_t *lo, const int64_t *hi,
                cudaStream_t q)
{
  strata_comm *c = p->comm;
  int64_t a = lo[0], b = hi[0];
  for (int r = 1; r < c->size; r++) {
    if (lo[r] < a) a = lo[r];
    if (hi[r] > b) b = hi[r];
  }
  if (staging(p, (size_t)b) != 0)
    return strata_error(STRATA_ENOMEM, "rank %d: cannot lock host memory for the exchange",
                        c->rank);
  const int64_t mine = hi[c->rank] - lo[c->rank];
  cudaError_t e = cudaSuccess;
  if (mine > 0)
    e = cudaMemcpyAsync(p->host + lo[c->rank], d + lo[c->rank], (size_t)mine,
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess)
    return strata_error(STRATA_EBACKEND, "rank %d: copying the levels to the host: %s",
                        c->rank, cudaGetErrorString(e));
  int rc = 0;
  if (c->gather_bytes) {
    rc = c->gather_bytes(c, p->host, lo, hi);
  } else {
    for (int r = 0; rc == 0 && r < c->size; r++)
      if (hi[r] > lo[r]) rc = c->broadcast(c, p->host + lo[r], (size_t)(hi[r] - lo[r]), r);
  }
  if (rc != 0)
    return strata_error(STRATA_ECOMM, "rank %d: gathering the levels failed", c->rank);
  if (b > a) e = cudaMemcpyAsync(d + a, p->host + a, (size_t)(b - a), cudaMemcpyHostToDevice, q);
  return e == cudaSuccess ? STRATA_OK
                          : strata_error(STRATA_EBACKEND, "rank %d: copying the levels back: %s",
                                         c->rank, cudaGetErrorString(e));
}

} // namespace

int strata_cuda_peers_new(strata_comm *comm, int device, int want_nccl, cuda_peers **out,
                          char *how, int len)
{
  *out = nullptr;
  cuda_peers *p = (cuda_peers *)calloc(1, sizeof *p);
  if (!p) return strata_error(STRATA_ENOMEM, "rank %d: out of memory", comm->rank);
  p->comm = comm;
  p->device = device;
  snprintf(how, (size_t)len, "mpi through host memory%s",
#ifdef HAVE_NCCL
           want_nccl ? "" : " (STRATA_NCCL=0)"
#else
           " (built without NCCL)"
#endif
  );
#ifdef HAVE_NCCL
  int shared = 0;
  if (want_nccl) {
    int rc = shared_gpu(comm, device, &shared);
    if (rc != STRATA_OK) {
      free(p);
      return rc;
    }
    if (shared) snprintf(how, (size_t)len, "mpi through host memory (ranks share a GPU; NCCL "
                         "takes one rank per GPU)");
  }
  if (want_nccl && !shared) {
    int rc = nccl_setup(p, how, len);
    if (rc != STRATA_OK) {
      free(p);
      return rc;
    }
  }
#else
  (void)want_nccl;
#endif
  *out = p;
  return STRATA_OK;
}

void strata_cuda_peers_free(cuda_peers *p)
{
  if (!p) return;
#ifdef HAVE_NCCL
  if (p->nccl) ncclCommDestroy(p->nc);
#endif
  cudaFreeHost(p->host);
  free(p);
}

const strata_comm *strata_cuda_peers_comm(const cuda_peers *p) { return p->comm; }

int strata_cuda_peers_on_device(const cuda_peers *p) { return p->nccl; }

int strata_cuda_peers_allreduce(cuda_peers *p, double *d, size_t n, cudaStream_t q)
{
#ifdef HAVE_NCCL
  if (p->nccl) return nccl_allreduce(p, d, n, q);
#endif
  return host_allreduce(p, d, n, q);
}

int strata_cuda_peers_gather(cuda_peers *p, unsigned char *d, const int64_t *lo,
                             const int64_t *hi, cudaStream_t q)
{
#ifdef HAVE_NCCL
  if (p->nccl) return nccl_gather(p, d, lo, hi, q);
#endif
  return host_gather(p, d, lo, hi, q);
}
