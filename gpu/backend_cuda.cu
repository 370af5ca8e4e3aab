/* CUDA backend: the sampling kernels of one iteration on one GPU.
 *
 * What stays on the device: the random numbers, the points, the integrand
 * values.  What crosses PCIe per iteration: the map when it changed, the
 * allocation when it changed, and back the per-hypercube sums and (adapting)
 * the per-increment sums.
 *
 * Work split: every thread takes chunks of SPT consecutive global sample
 * indices, whatever hypercubes they fall in, so VEGAS+'s uneven allocation
 * costs no divergence; a thread finds its hypercube by binary search on the
 * allocation's prefix sums and walks forward.  Sums of a hypercube are kept
 * in registers and added to global memory when the thread leaves it.
 *
 * Random numbers: cuRAND's curand_Philox4x32_10 with the counter layout of
 * src/philox.h, so the GPU draws the very points the CPU backend draws.  QMC
 * iterations take their points from src/qmc_points.h instead, with the
 * randomizations the host drew for the iteration: the same bits again. */
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "error.h"
#include "philox.h"
}
#include "backend_cuda.h"
#include "integrands_fn.h"

namespace {

constexpr int kThreads = 256;
/* Consecutive samples a thread takes: more amortise the hypercube search
 * per chunk, fewer keep small iterations spread over the whole GPU. */
constexpr int kSmallChunk = 16, kLargeChunk = 64;
constexpr long long kLargeChunkFrom = 100000000;
constexpr unsigned long long kNoBad = ~0ULL;

struct KernelArgs {
  const double *edges;       /* naxes x (ninc + 1) */
  const long long *start;    /* nhcube + 1 */
  double *s1, *s2;           /* nhcube */
  double *wsum;              /* dim x ninc */
  unsigned long long *wcnt;  /* dim x ninc */
  unsigned long long *bad;   /* first sample with a non-finite value */
  double lower[STRATA_MAX_DIM], width[STRATA_MAX_DIM];
  double params[STRATA_MAX_PARAMS];
  int dim, ninc, axis_stride; /* axis_stride 0: one map for all axes */
  int M;
  double invM;
  long long h0, h1, first, total;
  long long nh_uniform;      /* > 0: every hypercube has this many samples */
  unsigned long long seed;
  unsigned int iteration;
  double shift;
  int shared_acc;            /* map sums in shared memory */
  int spc;                   /* samples per chunk */
  /* QMC iterations: N = 2^log2n points per randomization */
  const unsigned long long *qdirs;   /* sobol: nrand x dim x 64 */
  const unsigned long long *qdshift; /* sobol: nrand x dim */
  const double *qshift;              /* lattice: nrand x dim */
  unsigned int qz[STRATA_MAX_DIM];   /* lattice generator */
  int log2n;
};

/* Where sample points come from. */
enum { kPhilox = 0, kSobol = 1, kLattice = 2 };

template <int ID>
__device__ __forceinline__ double integrand(const double *x, int dim, const double *p)
{
  if constexpr (ID == STRATA_ID_F1) return strata_f1_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_F2) return strata_f2_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_F3) return strata_f3_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_F4) return strata_f4_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_F5) return strata_f5_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_F6) return strata_f6_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_FA) return strata_fA_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_FB) return strata_fB_fn(x, dim, p);
  else if constexpr (ID == STRATA_ID_ROOS_ARNOLD) return strata_ra_fn(x, dim, p);
  else return strata_mc_fn(x, dim, p);
}

__device__ __forceinline__ long long find_hcube(const KernelArgs &a, long long i)
{
  if (a.nh_uniform > 0) return a.h0 + (i - a.first) / a.nh_uniform;
  long long lo = a.h0, hi = a.h1 - 1;
  while (lo < hi) {
    long long mid = lo + (hi - lo + 1) / 2;
    if (__ldg(a.start + mid) <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

__device__ __forceinline__ long long hcube_end(const KernelArgs &a, long long h)
{
  return a.nh_uniform > 0 ? a.first + (h - a.h0 + 1) * a.nh_uniform : __ldg(a.start + h + 1);
}

/* The integer coordinates of hypercube h, as strata_strat_coords. */
template <int MAXD>
__device__ __forceinline__ void hcube_coords(long long h, int dim, int M, int *k)
{
#pragma unroll
  for (int d = 0; d < MAXD; d++)
    if (d < dim) {
      k[d] = (int)(h % M);
      h /= M;
    }
}

/* y in (0,1) on axis d through the map, as strata_grid_map. */
__device__ __forceinline__ void map_axis(const KernelArgs &a, int d, double y, double *x,
                                         int *inc, double &jac)
{
  const int ninc = a.ninc;
  const double t = y * ninc;
  int ii = (int)t;
  if (ii >= ninc) ii = ninc - 1;
  const double *e = a.edges + (size_t)d * a.axis_stride;
  const double e0 = __ldg(e + ii), du = __ldg(e + ii + 1) - e0;
  x[d] = a.lower[d] + a.width[d] * (e0 + (t - ii) * du);
  jac *= ninc * du * a.width[d];
  inc[d] = ii;
}

/* D > 0: the dimension is known at compile time, so the per-axis arrays live
 * in registers; D = 0: any dimension up to STRATA_MAX_DIM, arrays in local
 * memory.  PTS: where the points come from (kPhilox, kSobol, kLattice). */
template <int ID, int D, bool ADAPT, int PTS>
__global__ void __launch_bounds__(kThreads) sample_kernel(const KernelArgs a)
{
  constexpr int MAXD = D > 0 ? D : STRATA_MAX_DIM;
  const int dim = D > 0 ? D : a.dim;
  const int ninc = a.ninc;
  extern __shared__ double smem[];
  double *sw = smem;
  unsigned int *sc = reinterpret_cast<unsigned int *>(smem + (ADAPT && a.shared_acc ? dim * ninc : 0));
  if (ADAPT && a.shared_acc) {
    for (int c = threadIdx.x; c < dim * ninc; c += blockDim.x) {
      sw[c] = 0.0;
      sc[c] = 0u;
    }
    __syncthreads();
  }
  const uint2 key = make_uint2((unsigned int)a.seed, (unsigned int)(a.seed >> 32));
  const long long nchunk = (a.total + a.spc - 1) / a.spc;
  const long long stride = (long long)gridDim.x * blockDim.x;
  const int lane = threadIdx.x & 31;
  /* The loop runs warp by warp, so every lane of a warp makes the same
   * number of trips and the warp can combine its sums below. */
  for (long long base = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31); base < nchunk;
       base += stride) {
    const long long c = base + lane;
    const bool valid = c < nchunk;
    long long i = a.first + c * a.spc;
    const long long iend = valid ? min(i + a.spc, a.first + a.total) : i;
    long long h = valid ? find_hcube(a, i) : -1, hend = valid ? hcube_end(a, h) : 0;
    int k[MAXD];
    if (valid) hcube_coords<MAXD>(h, dim, a.M, k);
    double s1 = 0.0, s2 = 0.0;
    unsigned long long sx[PTS == kSobol ? MAXD : 1];
    long long qnext = -1;
    for (; i < iend; i++) {
      if (i >= hend) {
        atomicAdd(a.s1 + h, s1);
        atomicAdd(a.s2 + h, s2);
        s1 = s2 = 0.0;
        h++;
        hend = hcube_end(a, h);
        hcube_coords<MAXD>(h, dim, a.M, k);
      }
      double x[MAXD];
      int inc[MAXD];
      double jac = 1.0;
      if constexpr (PTS == kPhilox) {
#pragma unroll
        for (int b = 0; b < (MAXD + 3) / 4; b++) {
          if (4 * b >= dim) break;
          uint4 ctr = make_uint4((unsigned int)b, a.iteration, (unsigned int)i,
                                 (unsigned int)((unsigned long long)i >> 32));
          uint4 r = curand_Philox4x32_10(ctr, key);
          const unsigned int w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
          for (int j = 0; j < 4; j++) {
            const int d = 4 * b + j;
            if (d < dim && d < MAXD) map_axis(a, d, (k[d] + STRATA_U32_TO_UNIT(w[j])) * a.invM, x, inc, jac);
          }
        }
      } else {
        const long long r = i >> a.log2n;
        const unsigned long long j = (unsigned long long)i & ((1ULL << a.log2n) - 1);
        if constexpr (PTS == kSobol) {
          const unsigned long long *v = a.qdirs + (size_t)r * dim * 64;
          if (i != qnext || j == 0) {
#pragma unroll
            for (int d = 0; d < MAXD; d++)
              if (d < dim)
                sx[d] = __ldg(a.qdshift + r * dim + d) ^
                        strata_sobol_digits(reinterpret_cast<const uint64_t *>(v + 64 * d), j);
          } else {
            const int kk = strata_sobol_step(j);
#pragma unroll
            for (int d = 0; d < MAXD; d++)
              if (d < dim) sx[d] ^= __ldg(v + 64 * d + kk);
          }
          qnext = i + 1;
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim) map_axis(a, d, strata_qmc_unit(sx[d]), x, inc, jac);
        } else {
#pragma unroll
          for (int d = 0; d < MAXD; d++)
            if (d < dim)
              map_axis(a, d, strata_lattice_coord(j, a.qz[d], a.log2n, __ldg(a.qshift + r * dim + d)),
                       x, inc, jac);
        }
      }
      const double fx = integrand<ID>(x, dim, a.params);
      if (!isfinite(fx)) {
        atomicMin(a.bad, (unsigned long long)i);
        continue;
      }
      const double wgt = jac * fx, dw = wgt - a.shift;
      s1 += dw;
      s2 += dw * dw;
      if (ADAPT) {
        const double w2 = wgt * wgt;
#pragma unroll
        for (int d = 0; d < MAXD; d++)
          if (d < dim) {
            const int cell = d * ninc + inc[d];
            if (a.shared_acc) {
              atomicAdd(sw + cell, w2);
              atomicAdd(sc + cell, 1u);
            } else {
              atomicAdd(a.wsum + cell, w2);
              atomicAdd(a.wcnt + cell, 1ULL);
            }
          }
      }
    }
    /* Neighbouring lanes took neighbouring chunks and mostly end in the same
     * hypercube: add their sums within the warp (segments of equal h are
     * runs of lanes) and let one lane per hypercube touch global memory.
     * Under VEGAS+ most samples crowd into few hypercubes, and one atomic per
     * lane there would serialise. */
    __syncwarp();
    const unsigned peers = __match_any_sync(0xffffffffu, (unsigned long long)h);
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
      const double o1 = __shfl_down_sync(0xffffffffu, s1, off);
      const double o2 = __shfl_down_sync(0xffffffffu, s2, off);
      if (lane + off < 32 && ((peers >> (lane + off)) & 1u)) {
        s1 += o1;
        s2 += o2;
      }
    }
    if (valid && lane == __ffs(peers) - 1) {
      atomicAdd(a.s1 + h, s1);
      atomicAdd(a.s2 + h, s2);
    }
  }
  if (ADAPT && a.shared_acc) {
    __syncthreads();
    for (int c = threadIdx.x; c < dim * ninc; c += blockDim.x)
      if (sc[c]) {
        atomicAdd(a.wsum + c, sw[c]);
        atomicAdd(a.wcnt + c, (unsigned long long)sc[c]);
      }
  }
}

typedef void (*kernel_fn)(const KernelArgs);

/* Dimensions with a kernel of their own (registers instead of local memory);
 * others use the generic one.  Chosen for the benchmark suite: 5, 6, 8, 9. */
template <int ID, bool ADAPT, int PTS>
kernel_fn pick_dim(int dim)
{
  switch (dim) {
  case 5: return sample_kernel<ID, 5, ADAPT, PTS>;
  case 6: return sample_kernel<ID, 6, ADAPT, PTS>;
  case 8: return sample_kernel<ID, 8, ADAPT, PTS>;
  case 9: return sample_kernel<ID, 9, ADAPT, PTS>;
  default: return sample_kernel<ID, 0, ADAPT, PTS>;
  }
}

/* Adapting iterations always draw pseudo-random points (QMC points only
 * ever go through a frozen map). */
template <int ID>
kernel_fn pick_points(int dim, bool adapt, int pts)
{
  if (adapt) return pick_dim<ID, true, kPhilox>(dim);
  switch (pts) {
  case kSobol: return pick_dim<ID, false, kSobol>(dim);
  case kLattice: return pick_dim<ID, false, kLattice>(dim);
  default: return pick_dim<ID, false, kPhilox>(dim);
  }
}

kernel_fn pick(int id, int dim, int generic, bool adapt, int pts)
{
  if (generic) dim = 0;
  switch (id) {
  case STRATA_ID_F1: return pick_points<STRATA_ID_F1>(dim, adapt, pts);
  case STRATA_ID_F2: return pick_points<STRATA_ID_F2>(dim, adapt, pts);
  case STRATA_ID_F3: return pick_points<STRATA_ID_F3>(dim, adapt, pts);
  case STRATA_ID_F4: return pick_points<STRATA_ID_F4>(dim, adapt, pts);
  case STRATA_ID_F5: return pick_points<STRATA_ID_F5>(dim, adapt, pts);
  case STRATA_ID_F6: return pick_points<STRATA_ID_F6>(dim, adapt, pts);
  case STRATA_ID_FA: return pick_points<STRATA_ID_FA>(dim, adapt, pts);
  case STRATA_ID_FB: return pick_points<STRATA_ID_FB>(dim, adapt, pts);
  case STRATA_ID_ROOS_ARNOLD: return pick_points<STRATA_ID_ROOS_ARNOLD>(dim, adapt, pts);
  case STRATA_ID_MOROKOFF_CAFLISCH: return pick_points<STRATA_ID_MOROKOFF_CAFLISCH>(dim, adapt, pts);
  default: return nullptr;
  }
}

/* A buffer that grows on demand: on the device, or page-locked on the host
 * (copies from page-locked memory run at full PCIe speed and need no staging
 * through the driver's own bounce buffers). */
inline cudaError_t host_alloc(void **p, size_t bytes) { return cudaHostAlloc(p, bytes, cudaHostAllocDefault); }

template <typename T, cudaError_t (*Alloc)(void **, size_t), cudaError_t (*Free)(void *)>
struct growbuf {
  T *p = nullptr;
  size_t n = 0;
  bool reserve(size_t want)
  {
    if (want <= n) return true;
    release();
    if (Alloc(reinterpret_cast<void **>(&p), want * sizeof(T)) != cudaSuccess) {
      p = nullptr;
      return false;
    }
    n = want;
    return true;
  }
  void release()
  {
    Free(p);
    p = nullptr;
    n = 0;
  }
};

inline cudaError_t dev_alloc(void **p, size_t bytes) { return cudaMalloc(p, bytes); }
template <typename T> using dbuf = growbuf<T, dev_alloc, cudaFree>;
template <typename T> using hbuf = growbuf<T, host_alloc, cudaFreeHost>;

struct cuda_state {
  int device;
  int nsm;
  size_t smem_optin;
  char name[256];
  cudaStream_t stream;
  cudaEvent_t ev0, ev1;
  double last_kernel_s;
  int generic;               /* STRATA_CUDA_GENERIC=1: no per-dimension kernels */
  dbuf<double> edges, s1, s2, wsum;
  dbuf<long long> start;
  dbuf<unsigned long long> wcnt, bad, qdirs, qdshift;
  dbuf<double> qshift;
  uint64_t qmc_gen;
  uint64_t grid_gen;
  uint64_t strat_gen;
  hbuf<double> h_s1, h_s2, h_w;  /* staging for what comes back */
  hbuf<unsigned long long> h_c;
  hbuf<long long> h_start;       /* staging for the allocation */
};

int cuda_fail(cudaError_t e, const char *what, int device)
{
  return strata_error(STRATA_EBACKEND, "cuda device %d: %s: %s", device, what,
                      cudaGetErrorString(e));
}

int builtin_id(strata_fn f)
{
  for (size_t i = 0; strata_builtin_at(i); i++)
    if (strata_builtin_at(i)->f == f) return (int)i;
  return -1;
}

/* Names the first bad sample like the CPU backend would: the point is
 * recomputed on the host from the same counters. */
int report_bad(const strata_sample_job *job, long long i)
{
  const int dim = job->problem->dim;
  int inc[STRATA_MAX_DIM];
  double y[STRATA_MAX_DIM], x[STRATA_MAX_DIM];
  strata_backend_point(job, i, y);
  strata_grid_map(job->grid, y, x, inc);
  double fx = job->problem->f(x, dim, job->problem->params);
  return strata_backend_report_nonfinite(job, isfinite(fx) ? NAN : fx, i, x);
}

/* This iteration's randomizations, when they are new to the device. */
int upload_qmc(cuda_state *st, const strata_qmc *qm, cudaStream_t q)
{
  if (st->qmc_gen == qm->generation) return STRATA_OK;
  const size_t nd = (size_t)qm->nrand * (size_t)qm->dim;
  cudaError_t e = cudaSuccess;
  if (qm->rule == STRATA_QMC_SOBOL) {
    if (!st->qdirs.reserve(nd * 64) || !st->qdshift.reserve(nd))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the QMC tables", st->device);
    e = cudaMemcpyAsync(st->qdirs.p, qm->dirs, nd * 64 * sizeof(uint64_t), cudaMemcpyHostToDevice, q);
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(st->qdshift.p, qm->dshift, nd * sizeof(uint64_t), cudaMemcpyHostToDevice, q);
  } else {
    if (!st->qshift.reserve(nd))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the QMC tables", st->device);
    e = cudaMemcpyAsync(st->qshift.p, qm->shift, nd * sizeof(double), cudaMemcpyHostToDevice, q);
  }
  /* The host arrays are pageable: the copies are done when these return,
   * so the next iteration may redraw them. */
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "uploading the QMC randomizations", st->device);
  st->qmc_gen = qm->generation;
  return STRATA_OK;
}

int cuda_sample(strata_backend *b, const strata_sample_job *job)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const strata_problem *pr = job->problem;
  const strata_grid *g = job->grid;
  const strata_strat *s = job->strat;
  const int dim = pr->dim, ninc = g->ninc;
  const size_t cells = (size_t)dim * (size_t)ninc;
  const long long nh = job->h1 - job->h0;
  st->last_kernel_s = 0.0;
  if (nh <= 0) return STRATA_OK;
  cudaError_t e = cudaSetDevice(st->device);
  if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", st->device);

  const int id = builtin_id(pr->f);
  if (id < 0)
    return strata_error(STRATA_EBACKEND, "integrand '%s' has no GPU version (only the "
                        "built-in integrands run on the CUDA backend in this version)",
                        pr->name ? pr->name : "(unnamed)");
  const int pts = !job->qmc ? kPhilox : job->qmc->rule == STRATA_QMC_SOBOL ? kSobol : kLattice;
  kernel_fn k = pick(id, dim, st->generic, job->adapt, pts);

  const size_t nedges = (size_t)strata_grid_naxes(g) * (size_t)(ninc + 1);
  if (!st->edges.reserve(nedges) || !st->start.reserve((size_t)s->nhcube + 1) ||
      !st->s1.reserve((size_t)s->nhcube) || !st->s2.reserve((size_t)s->nhcube) ||
      !st->wsum.reserve(cells) || !st->wcnt.reserve(cells) || !st->bad.reserve(1))
    return strata_error(STRATA_ENOMEM, "cuda device %d (%s): not enough device memory for "
                        "%lld hypercubes and %zu map cells", st->device, st->name,
                        (long long)s->nhcube, cells);
  if (!st->h_s1.reserve((size_t)nh) || !st->h_s2.reserve((size_t)nh) ||
      !st->h_w.reserve(cells) || !st->h_c.reserve(cells + 1) ||
      !st->h_start.reserve((size_t)s->nhcube + 1))
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock %zu MB of host memory "
                        "for transfers", st->device,
                        (size_t)(2 * nh + 2 * (long long)cells + s->nhcube) * 8 >> 20);
  cudaStream_t q = st->stream;
  if (st->grid_gen != g->generation) {
    e = cudaMemcpyAsync(st->edges.p, g->edges, nedges * sizeof(double), cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the map", st->device);
    st->grid_gen = g->generation;
  }
  const bool uniform = !s->adaptive && s->start[s->nhcube] == s->nh[0] * s->nhcube;
  if (!uniform && st->strat_gen != s->generation) {
    memcpy(st->h_start.p, s->start, ((size_t)s->nhcube + 1) * sizeof(long long));
    e = cudaMemcpyAsync(st->start.p, st->h_start.p, ((size_t)s->nhcube + 1) * sizeof(long long),
                        cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the allocation", st->device);
    st->strat_gen = s->generation;
  }
  if (job->qmc) {
    int rc = upload_qmc(st, job->qmc, q);
    if (rc != STRATA_OK) return rc;
  }
  cudaMemsetAsync(st->s1.p + job->h0, 0, (size_t)nh * sizeof(double), q);
  cudaMemsetAsync(st->s2.p + job->h0, 0, (size_t)nh * sizeof(double), q);
  cudaMemsetAsync(st->bad.p, 0xff, sizeof(unsigned long long), q);
  if (job->adapt) {
    cudaMemsetAsync(st->wsum.p, 0, cells * sizeof(double), q);
    cudaMemsetAsync(st->wcnt.p, 0, cells * sizeof(unsigned long long), q);
  }

  KernelArgs a;
  memset(&a, 0, sizeof a);
  a.edges = st->edges.p;
  a.start = st->start.p;
  a.s1 = st->s1.p;
  a.s2 = st->s2.p;
  a.wsum = st->wsum.p;
  a.wcnt = st->wcnt.p;
  a.bad = st->bad.p;
  for (int d = 0; d < dim; d++) {
    a.lower[d] = g->lower[d];
    a.width[d] = g->width[d];
  }
  for (int i = 0; i < pr->nparams; i++) a.params[i] = pr->params[i];
  a.dim = dim;
  a.ninc = ninc;
  a.axis_stride = g->shared ? 0 : ninc + 1;
  a.M = s->M;
  a.invM = 1.0 / s->M;
  a.h0 = job->h0;
  a.h1 = job->h1;
  a.first = s->start[job->h0];
  a.total = s->start[job->h1] - a.first;
  a.nh_uniform = uniform ? s->nh[0] : 0;
  a.seed = job->seed;
  a.iteration = job->iteration;
  a.shift = job->shift;
  if (job->qmc) {
    a.log2n = job->qmc->log2n;
    a.qdirs = st->qdirs.p;
    a.qdshift = st->qdshift.p;
    a.qshift = st->qshift.p;
    for (int d = 0; d < dim; d++) a.qz[d] = job->qmc->z[d];
  }

  /* Map sums in shared memory pay off only when every block sees many
   * samples per cell (each block clears and flushes all cells); a small
   * iteration instead runs the full grid with global atomics, which on
   * Hopper cost little next to a kernel's launch. */
  size_t smem = 0;
  if (job->adapt) {
    size_t need = cells * (sizeof(double) + sizeof(unsigned int));
    if (need <= st->smem_optin &&
        s->start[job->h1] - s->start[job->h0] >= (int64_t)32 * (int64_t)cells * st->nsm) {
      a.shared_acc = 1;
      smem = need;
    }
  }
  if (smem > 48 * 1024) {
    e = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return cuda_fail(e, "reserving shared memory", st->device);
  }
  int per_sm = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)k, kThreads, smem);
  if (e != cudaSuccess || per_sm < 1) per_sm = 1;
  a.spc = a.total >= kLargeChunkFrom ? kLargeChunk : kSmallChunk;
  const long long nchunk = (a.total + a.spc - 1) / a.spc;
  long long blocks = (nchunk + kThreads - 1) / kThreads;
  const long long resident = (long long)per_sm * st->nsm;
  if (blocks > resident) blocks = resident;
  /* Every block clears and flushes the whole shared map sums: keep enough
   * samples per block that this stays small next to the sampling. */
  if (a.shared_acc) {
    long long cap = a.total / (8 * (long long)cells);
    if (cap < 1) cap = 1;
    if (blocks > cap) blocks = cap;
  }
  if (blocks < 1) blocks = 1;

  cudaEventRecord(st->ev0, q);
  k<<<(unsigned)blocks, kThreads, smem, q>>>(a);
  e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, "launching the sampling kernel", st->device);
  cudaEventRecord(st->ev1, q);

  unsigned long long *bad = st->h_c.p + cells; /* one spare slot: see reserve below */
  cudaMemcpyAsync(st->h_s1.p, st->s1.p + job->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(st->h_s2.p, st->s2.p + job->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(bad, st->bad.p, sizeof *bad, cudaMemcpyDeviceToHost, q);
  if (job->adapt) {
    cudaMemcpyAsync(st->h_w.p, st->wsum.p, cells * sizeof(double), cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c.p, st->wcnt.p, cells * sizeof(unsigned long long),
                    cudaMemcpyDeviceToHost, q);
  }
  e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "running the sampling kernel", st->device);
  float ms = 0.0f;
  if (cudaEventElapsedTime(&ms, st->ev0, st->ev1) == cudaSuccess) st->last_kernel_s = 1e-3 * ms;
  if (*bad != kNoBad) return report_bad(job, (long long)*bad);
  memcpy(job->s1 + job->h0, st->h_s1.p, (size_t)nh * sizeof(double));
  memcpy(job->s2 + job->h0, st->h_s2.p, (size_t)nh * sizeof(double));
  if (job->adapt)
    for (size_t c = 0; c < cells; c++) {
      job->wsum[c] += st->h_w.p[c];
      job->wcount[c] += (double)st->h_c.p[c];
    }
  return STRATA_OK;
}

void cuda_free(strata_backend *b)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  cudaSetDevice(st->device);
  st->edges.release();
  st->s1.release();
  st->s2.release();
  st->wsum.release();
  st->start.release();
  st->wcnt.release();
  st->bad.release();
  st->qdirs.release();
  st->qdshift.release();
  st->qshift.release();
  st->h_s1.release();
  st->h_s2.release();
  st->h_w.release();
  st->h_c.release();
  st->h_start.release();
  cudaEventDestroy(st->ev0);
  cudaEventDestroy(st->ev1);
  cudaStreamDestroy(st->stream);
  delete st;
  free(b);
}

} // namespace

extern "C" int strata_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); /* clear the sticky "no device" error */
    return 0;
  }
  return n;
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
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, device);
  cuda_state *st = new cuda_state();
  st->device = device;
  st->nsm = prop.multiProcessorCount;
  st->smem_optin = prop.sharedMemPerBlockOptin;
  snprintf(st->name, sizeof st->name, "%s", prop.name);
  const char *gen = getenv("STRATA_CUDA_GENERIC");
  st->generic = gen && *gen == '1';
  if (cudaStreamCreate(&st->stream) != cudaSuccess || cudaEventCreate(&st->ev0) != cudaSuccess ||
      cudaEventCreate(&st->ev1) != cudaSuccess) {
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

extern "C" double strata_cuda_last_kernel_s(const strata_backend *b)
{
  return static_cast<const cuda_state *>(b->self)->last_kernel_s;
}
