/* CUDA backend: the sampling kernels of one iteration on one GPU.
 *
 * What stays on the device: the random numbers, the points, the integrand
 * values.  What crosses PCIe per iteration: the map when it changed, the
 * allocation when it changed, and back the per-hypercube sums and (adapting)
 * the per-increment sums.
 *
 * The kernel (sample_kernel.cuh) is compiled here for the built-in
 * integrands, and at run time for users' own (jit.cu).
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
#include <climits>
#include <thread>
#include <vector>

extern "C" {
#include "error.h"
#include "ladder.h"
#include "philox.h"
#include "stamp.h"
}
#include "backend_cuda.h"
#include "integrands_fn.h"
#include "jit.h"
#include "sample_kernel.cuh"
#include "adapt.cuh"
#include "exchange.cuh"
#include "peers_cuda.h"

namespace {

using namespace strata_k;

/* The built-in integrands as the kernel template takes them. */
#define STRATA_BUILTIN_FUNCTOR(T, fn)                                                      \
  struct T {                                                                               \
    static __device__ __forceinline__ void eval(const double *x, int dim, const double *p, \
                                                const strata_table *, double *out)         \
    {                                                                                      \
      out[0] = fn(x, dim, p);                                                              \
    }                                                                                      \
  };
STRATA_BUILTIN_FUNCTOR(F1, strata_f1_fn)
STRATA_BUILTIN_FUNCTOR(F2, strata_f2_fn)
STRATA_BUILTIN_FUNCTOR(F3, strata_f3_fn)
STRATA_BUILTIN_FUNCTOR(F4, strata_f4_fn)
STRATA_BUILTIN_FUNCTOR(F5, strata_f5_fn)
STRATA_BUILTIN_FUNCTOR(F6, strata_f6_fn)
STRATA_BUILTIN_FUNCTOR(FA, strata_fA_fn)
STRATA_BUILTIN_FUNCTOR(FB, strata_fB_fn)
STRATA_BUILTIN_FUNCTOR(RA, strata_ra_fn)
STRATA_BUILTIN_FUNCTOR(MC, strata_mc_fn)
#undef STRATA_BUILTIN_FUNCTOR

typedef void (*kernel_fn)(const KernelArgs);

/* Dimensions with a kernel of their own (registers instead of local memory);
 * others use the generic one.  Chosen for the benchmark suite: 5, 6, 8, 9. */
template <class F, bool ADAPT, int PTS>
kernel_fn pick_dim(int dim)
{
  switch (dim) {
  case 5: return sample_kernel<F, 5, ADAPT, PTS, 1>;
  case 6: return sample_kernel<F, 6, ADAPT, PTS, 1>;
  case 8: return sample_kernel<F, 8, ADAPT, PTS, 1>;
  case 9: return sample_kernel<F, 9, ADAPT, PTS, 1>;
  default: return sample_kernel<F, 0, ADAPT, PTS, 1>;
  }
}

/* Adapting iterations always draw pseudo-random points (QMC points only
 * ever go through a frozen map). */
template <class F>
kernel_fn pick_points(int dim, bool adapt, int pts)
{
  if (adapt) return pick_dim<F, true, kPhilox>(dim);
  switch (pts) {
  case kSobol: return pick_dim<F, false, kSobol>(dim);
  case kLattice: return pick_dim<F, false, kLattice>(dim);
  default: return pick_dim<F, false, kPhilox>(dim);
  }
}

kernel_fn pick(int id, int dim, int generic, bool adapt, int pts)
{
  if (generic) dim = 0;
  switch (id) {
  case STRATA_ID_F1: return pick_points<F1>(dim, adapt, pts);
  case STRATA_ID_F2: return pick_points<F2>(dim, adapt, pts);
  case STRATA_ID_F3: return pick_points<F3>(dim, adapt, pts);
  case STRATA_ID_F4: return pick_points<F4>(dim, adapt, pts);
  case STRATA_ID_F5: return pick_points<F5>(dim, adapt, pts);
  case STRATA_ID_F6: return pick_points<F6>(dim, adapt, pts);
  case STRATA_ID_FA: return pick_points<FA>(dim, adapt, pts);
  case STRATA_ID_FB: return pick_points<FB>(dim, adapt, pts);
  case STRATA_ID_ROOS_ARNOLD: return pick_points<RA>(dim, adapt, pts);
  case STRATA_ID_MOROKOFF_CAFLISCH: return pick_points<MC>(dim, adapt, pts);
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

/* The part [lo, hi) of a sums buffer that may hold anything but zeros.
 * The sampling kernel adds into the sums, so they must start at zero; the
 * kernels that read them clear behind the read, so an iteration clears
 * only what an earlier one left.  Memory fresh from the allocator holds
 * whatever its last owner wrote: it is dirty whole. */
struct dirt {
  size_t lo = 0, hi = 0;
  void mark(size_t a, size_t b)
  {
    if (a >= b) return;
    if (lo >= hi) {
      lo = a;
      hi = b;
    } else {
      lo = a < lo ? a : lo;
      hi = b > hi ? b : hi;
    }
  }
  void clear() { lo = hi = 0; }
  /* Zeroes what may be dirty in the buffers this range covers, and marks
   * [a, b) as what the coming use dirties. */
  template <typename... T> void wipe(cudaStream_t q, size_t a, size_t b, T *...bufs)
  {
    if (lo < hi) (cudaMemsetAsync(bufs + lo, 0, (hi - lo) * sizeof(*bufs), q), ...);
    clear();
    mark(a, b);
  }
};

/* Reserves and, where the buffer came new from the allocator (perhaps at
 * the old address), marks it dirty whole. */
template <typename T> bool reserve_sums(dbuf<T> &b, dirt &d, size_t want)
{
  const size_t had = b.n;
  if (!b.reserve(want)) return false;
  if (b.n != had) d.mark(0, b.n);
  return true;
}

struct cuda_state {
  int device;
  int nsm;
  size_t smem_optin;
  char name[256];
  cudaStream_t stream, stream2;  /* stream2: the map's refinement, beside the allocation */
  cudaEvent_t ev0, ev1, ev_join;
  double last_kernel_s;
  int generic;               /* STRATA_CUDA_GENERIC=1: no per-dimension kernels */
  dbuf<double> edges, s1, s2, wsum;
  dbuf<double2> xmap;            /* frozen iterations' map in x (xmap_kernel) */
  uint64_t map_ver = 0;          /* bumped whenever the device's map changes */
  uint64_t xmap_ver = ~0ULL;     /* the map xmap was made from */
  dbuf<long long> start;
  dbuf<unsigned long long> wcnt, qdirs, qdshift;
  dbuf<double> qshift;
  dbuf<double> c1, c2;           /* vector integrands: per-hypercube component sums */
  hbuf<double> h_c1, h_c2;
  /* The tables of extended integrands, copied to the device once per set. */
  std::vector<void *> table_mem;
  dbuf<strata_table> tables;
  const strata_table *tables_of;
  uint64_t tables_hash;
  strata_jit *jit;               /* users' integrands, compiled by NVRTC */
  uint64_t qmc_gen;
  /* What the device holds of the host's map and allocation: the
   * generations of its copies, and whether it made them itself (adapted
   * on the device): those are newer than the host's until pulled. */
  uint64_t map_gen;
  uint64_t strat_gen;
  bool map_newer = false, strat_newer = false;
  hbuf<double> h_s1, h_s2, h_w;  /* staging for what comes back */
  hbuf<unsigned long long> h_c;
  hbuf<long long> h_start;       /* staging for the allocation */
  /* The iteration kept on the device (adapt.cuh): */
  /* Two records, for a frozen iteration in flight beside the one being
   * exchanged (pipelining, below); the others use the first. */
  dbuf<IterRecord> rec;
  hbuf<IterRecord> h_rec;        /* [0] what a record starts from, [1 + slot] what comes back */
  dbuf<double> level, step, refine_scratch;
  dbuf<unsigned long long> dshare, hist;
  dbuf<long long> count;
  dbuf<unsigned char> cub_tmp;
  dirt sums_dirt;                /* s1 and s2, in hypercubes */
  dirt map_dirt;                 /* wsum and wcnt, in cells */
  dirt c1_dirt, c2_dirt;         /* c1 and c2, in doubles */
  bool adapted = false;          /* the last sample call also adapted */
  long long adapted_total = 0;   /* ... and the samples of its new allocation */
  /* Several ranks (comm/peers_cuda.h): the exchange buffer, the levels in two bytes,
   * the shared hypercubes and each rank's whole ones, and where the next
   * iteration splits among the ranks (strata_split's layout). */
  cuda_peers *peers = nullptr;
  dbuf<double> xbuf;
  dbuf<unsigned short> lv16;
  dbuf<SharedHcube> shared;
  hbuf<SharedHcube> h_shared;
  dbuf<long long> seg, split;
  hbuf<long long> h_seg, h_split;
  bool split_new = false;        /* h_split holds the split of a new allocation */
  cudaEvent_t ev_map;            /* the summed map sums are in place */
  /* Frozen iterations of several ranks overlap: iteration k + 1, the
   * same job one iteration on (strata_sample_job's next_alike), is queued
   * behind iteration k's exchange (on xstream) before the host waits for
   * k's estimate, so the device goes on sampling while the host reads
   * it.  If the run stops, or asks anything else, that iteration is
   * waited for and dropped. */
  cudaStream_t xstream;
  cudaEvent_t ev_pack[2], ev_done[2];
  struct {
    bool on = false;
    int slot = 0;
    unsigned iteration = 0;
    /* what the next job must be for the iteration in flight to be its */
    const strata_problem *pr = nullptr;
    unsigned long long seed = 0;
    double shift = 0.0, cshift[STRATA_MAX_COMP] = {0};
    long long i0 = 0, i1 = 0;
    uint64_t map_gen = 0, strat_gen = 0;
    /* how it was launched */
    const void *k = nullptr;
    KernelArgs a;
    unsigned blocks = 0;
    size_t smem = 0;
    long long nh_uniform = 0;
    ExchangeArgs xa;
  } next;
  const void *occ_kernel = nullptr; /* the last occupancy asked for */
  size_t occ_smem = 0;
  int occ_per_sm = 1;
};

int cuda_fail(cudaError_t e, const char *what, int device)
{
  return strata_error(STRATA_EBACKEND, "cuda device %d: %s: %s", device, what,
                      cudaGetErrorString(e));
}

/* Whether the device holds a newer map than g, a newer allocation than s. */
bool map_ahead(const cuda_state *st, const strata_map *g)
{
  return st->map_newer && st->map_gen == g->generation;
}

bool strat_ahead(const cuda_state *st, const strata_strat *s)
{
  return st->strat_newer && st->strat_gen == s->generation;
}

/* start[h] where the host knows it: of an allocation the device holds
 * newer, only its ends (-1 for another h). */
long long start_known(const cuda_state *st, const strata_strat *s, int64_t h)
{
  if (strat_ahead(st, s) && h != 0 && h != s->nhcube) return -1;
  return strata_strat_start_at(s, h);
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
  const strata_problem *pr = job->problem;
  int inc[STRATA_MAX_DIM];
  double y[STRATA_MAX_DIM], x[STRATA_MAX_DIM], out[STRATA_MAX_COMP];
  strata_backend_point(job, i, y);
  strata_map_apply(job->map, y, x, inc);
  double fx = NAN;
  if (pr->f) {
    fx = pr->f(x, pr->dim, pr->params);
  } else {
    pr->fv(x, pr->dim, pr->params, pr->tables, out);
    for (int c = 0; c < (pr->ncomp > 1 ? pr->ncomp : 1) && isfinite(fx = out[c]); c++) {
    }
  }
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

void release_tables(cuda_state *st)
{
  for (void *p : st->table_mem) cudaFree(p);
  st->table_mem.clear();
  st->tables_of = nullptr;
}

/* Copies the problem's tables to the device, pointers rewritten, when they
 * are not the ones already there. */
int upload_tables(cuda_state *st, const strata_problem *pr, cudaStream_t q)
{
  const uint64_t h = pr->source ? pr->source->tables_hash : 0;
  if (pr->ntables == 0 || (st->tables_of == pr->tables && st->tables_hash == h)) return STRATA_OK;
  release_tables(st);
  std::vector<strata_table> dev(pr->tables, pr->tables + pr->ntables);
  auto copy = [&](const double *src, size_t n, const double **dst) -> bool {
    if (!src) return true;
    void *p = nullptr;
    if (cudaMalloc(&p, n * sizeof(double)) != cudaSuccess) return false;
    st->table_mem.push_back(p);
    *dst = static_cast<const double *>(p);
    return cudaMemcpy(p, src, n * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess;
  };
  for (strata_table &t : dev) {
    if (!copy(t.v, (size_t)t.nx * (size_t)t.ny, &t.v) || !copy(t.x, (size_t)t.nx, &t.x) ||
        !copy(t.y, (size_t)t.ny, &t.y)) {
      release_tables(st);
      return strata_error(STRATA_ENOMEM, "cuda device %d: no room for the integrand's tables",
                          st->device);
    }
  }
  if (!st->tables.reserve(dev.size()) ||
      cudaMemcpyAsync(st->tables.p, dev.data(), dev.size() * sizeof(strata_table),
                      cudaMemcpyHostToDevice, q) != cudaSuccess ||
      cudaStreamSynchronize(q) != cudaSuccess) {
    release_tables(st);
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot copy the tables", st->device);
  }
  st->tables_of = pr->tables;
  st->tables_hash = h;
  return STRATA_OK;
}

/* The record an iteration starts from: nothing found yet. */
void init_record(IterRecord *r)
{
  memset(r, 0, sizeof *r);
  r->bad = kNoBad;
  r->bad_h = LLONG_MAX;
  r->tmax = INT_MIN;
}

/* What the iteration kept on the device needs beyond the sampling's own
 * buffers: the record, and with reallocation the levels, the shares'
 * scratch, the histogram, the step table and CUB's scratch. */
int reserve_resident(cuda_state *st, const strata_strat *s, const strata_map *g, bool resident,
                     bool realloc, bool refine)
{
  const size_t nhc = (size_t)s->nhcube;
  bool ok = st->rec.reserve(2);
  if (ok && !st->h_rec.p) {
    ok = st->h_rec.reserve(3);
    if (ok) init_record(&st->h_rec.p[0]);
  }
  if (ok && resident) ok = st->level.reserve(nhc);
  if (ok && realloc) {
    /* The histogram is cleared behind every use; the step table is the
     * same for every ladder (2^(r/128)): both are set once. */
    if (!st->hist.p)
      ok = st->hist.reserve(STRATA_SHARE_BINS + 1) &&
           cudaMemset(st->hist.p, 0, (STRATA_SHARE_BINS + 1) * sizeof(unsigned long long)) ==
               cudaSuccess;
    if (ok && !st->step.p)
      ok = st->step.reserve(STRATA_SHARE_STEPS) &&
           cudaMemcpy(st->step.p, s->ladder->step, sizeof s->ladder->step,
                      cudaMemcpyHostToDevice) == cudaSuccess;
    size_t need = 0, other = 0;
    ok = ok && st->dshare.reserve(nhc) && st->count.reserve(nhc);
    if (ok) {
      cub::DeviceScan::InclusiveSum(nullptr, need, st->dshare.p, st->dshare.p, (int64_t)nhc);
      cub::DeviceScan::InclusiveSum(nullptr, other, st->count.p, st->start.p + 1, (int64_t)nhc);
      ok = st->cub_tmp.reserve(need > other ? need : other);
    }
  }
  if (ok && refine)
    ok = st->refine_scratch.reserve((size_t)strata_map_naxes(g) * 4 * ((size_t)g->ninc + 1));
  if (!ok)
    return strata_error(STRATA_ENOMEM, "cuda device %d (%s): not enough device memory to keep "
                        "%lld hypercubes' iteration on the device", st->device, st->name,
                        (long long)s->nhcube);
  return STRATA_OK;
}

long long grid_for(long long n, int threads, int nsm)
{
  long long b = (n + threads - 1) / threads, cap = 8LL * nsm;
  return b < 1 ? 1 : b > cap ? cap : b;
}

/* The new allocation from the levels of every hypercube in st->level (and
 * the record's tmax): counts and start[] on the device. */
void launch_allocation(cuda_state *st, const strata_strat *s, cudaStream_t q)
{
  AllocArgs aa;
  aa.level = st->level.p;
  aa.start = st->start.p;
  aa.count = st->count.p;
  aa.dshare = st->dshare.p;
  aa.hist = st->hist.p;
  aa.step = st->step.p;
  aa.nhcube = s->nhcube;
  aa.neval = s->neval;
  aa.rec = st->rec.p;
  const unsigned blocks = (unsigned)grid_for(s->nhcube, kAdaptThreads, st->nsm);
  histogram_kernel<<<blocks, kAdaptThreads, 0, q>>>(aa);
  cut_kernel<<<1, kCutThreads, 0, q>>>(aa);
  dshare_kernel<<<blocks, kAdaptThreads, 0, q>>>(aa);
  size_t bytes = st->cub_tmp.n;
  cub::DeviceScan::InclusiveSum(st->cub_tmp.p, bytes, st->dshare.p, st->dshare.p,
                                (int64_t)s->nhcube, q);
  count_kernel<<<blocks, kAdaptThreads, 0, q>>>(aa);
  bytes = st->cub_tmp.n;
  cub::DeviceScan::InclusiveSum(st->cub_tmp.p, bytes, st->count.p, st->start.p + 1,
                                (int64_t)s->nhcube, q);
}

/* The map refined from the sums in st->wsum and st->wcnt, which it zeroes. */
void launch_refine(cuda_state *st, const strata_map *g, double alpha, cudaStream_t q)
{
  RefineArgs ra;
  ra.edges = st->edges.p;
  ra.wsum = st->wsum.p;
  ra.wcnt = st->wcnt.p;
  ra.wcount = nullptr;
  ra.scratch = st->refine_scratch.p;
  ra.dim = g->dim;
  ra.ninc = g->ninc;
  ra.shared = g->shared;
  ra.alpha = alpha;
  ra.rec = st->rec.p;
  refine_kernel<<<(unsigned)strata_map_naxes(g), kRefineThreads, 0, q>>>(ra);
  st->map_ver++;
}

/* The estimate, and with one rank the new allocation and map, queued
 * behind the sampling kernel. */
int launch_resident(cuda_state *st, const strata_sample_job *job, const strata_strat *s,
                    const strata_map *g, long long nh_uniform, long long e0, long long e1,
                    bool realloc, bool refine, IterRecord *rec)
{
  cudaStream_t q = st->stream;
  EstimateArgs ea;
  ea.s1 = st->s1.p;
  ea.s2 = st->s2.p;
  ea.start = st->start.p;
  ea.h0 = e0;
  ea.h1 = e1;
  ea.nh_uniform = nh_uniform;
  ea.V = 1.0 / (double)s->nhcube;
  ea.nhcube = s->nhcube;
  ea.shift = job->shift;
  ea.level = job->level ? st->level.p : nullptr;
  ea.kk = s->ladder ? s->ladder->kk : 0.0;
  ea.rec = rec;
  ea.nc = job->problem->ncomp > 1 ? job->problem->ncomp : 1;
  ea.c1 = st->c1.p;
  ea.c2 = st->c2.p;
  for (int c = 0; ea.nc > 1 && c < ea.nc; c++) ea.cshift[c] = job->cshift[c];
  const unsigned blocks = (unsigned)grid_for(e1 - e0, kAdaptThreads, st->nsm);
  estimate_kernel<<<blocks, kAdaptThreads, 0, q>>>(ea);
  if (ea.nc > 1) launch_estimate_vec(blocks, q, ea);
  if (realloc) launch_allocation(st, s, q);
  if (refine) {
    /* The map's refinement needs only the map sums: it runs beside the
     * estimate and the allocation, on a stream of its own. */
    cudaStreamWaitEvent(st->stream2, st->ev1, 0);
    launch_refine(st, g, job->alpha, st->stream2);
    cudaEventRecord(st->ev_join, st->stream2);
    cudaStreamWaitEvent(q, st->ev_join, 0);
  }
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "launching the iteration's kernels", st->device);
}

/* Rank q's part of the iteration (the split sp): samples [i0, i1) in
 * hypercubes [h0, h1), of which [e0, e1) whole.  A partial hypercube holds
 * a split point strictly inside; its slot is that of the first such point. */
struct RankPart {
  long long i0, i1, h0, h1, e0, e1;
};

RankPart rank_part(const strata_split *sp, int q)
{
  const int64_t *hs = sp->hs, *he = sp->he;
  RankPart p;
  int64_t i0, i1, h0, h1;
  strata_split_part(sp, q, &i0, &i1, &h0, &h1);
  p.i0 = i0;
  p.i1 = i1;
  p.h0 = h0;
  p.h1 = h1;
  if (p.i1 <= p.i0) {
    p.e0 = p.e1 = p.h0;
    return p;
  }
  const bool first_partial = p.i0 > hs[q] || he[q] > p.i1;
  const bool last_partial = p.h1 - 1 != p.h0 && p.i1 > hs[q + 1];
  p.e0 = p.h0 + (first_partial ? 1 : 0);
  p.e1 = p.h1 - (last_partial ? 1 : 0);
  if (p.e1 < p.e0) p.e1 = p.e0;
  return p;
}

/* The slot of a shared hypercube h: the first split point inside it. */
int shared_slot(const strata_split *sp, long long h)
{
  for (int k = 1; k < sp->nranks; k++)
    if (sp->h[k] == h && sp->first[k] > sp->hs[k]) return k - 1;
  return -1;
}

/* The exchange's plan for this iteration: every rank's whole hypercubes
 * and every shared one, uploaded; this rank's partial ones in xa. */
int plan_exchange(cuda_state *st, const strata_sample_job *job, const strata_strat *s,
                  ExchangeArgs *xa, cudaStream_t q)
{
  const strata_comm *c = strata_cuda_peers_comm(st->peers);
  const strata_split *sp = job->split;
  const int R = c->size;
  if (!sp || sp->nranks != R)
    return strata_error(STRATA_EBACKEND, "cuda device %d: the iteration is split among %d "
                        "ranks, not the %d of the run", st->device, sp ? sp->nranks : 0, R);
  if (!st->h_seg.reserve(2 * (size_t)R) || !st->seg.reserve(2 * (size_t)R) ||
      !st->h_shared.reserve((size_t)R) || !st->shared.reserve((size_t)R))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                        st->device);
  memset(xa, 0, sizeof *xa);
  for (int k = 0; k < R; k++) {
    const RankPart p = rank_part(sp, k);
    st->h_seg.p[k] = p.e0;
    st->h_seg.p[R + k] = p.e1;
    if (k != c->rank) continue;
    xa->e0 = p.e0;
    xa->e1 = p.e1;
    const long long ends[2] = {p.h0, p.h1 - 1};
    for (int j = 0; j < 2 && p.i1 > p.i0; j++) {
      const long long h = ends[j];
      if ((h >= p.e0 && h < p.e1) || (j == 1 && h == p.h0)) continue;
      const int slot = shared_slot(sp, h);
      if (slot < 0)
        return strata_error(STRATA_EBACKEND, "cuda device %d: hypercube %lld is partial but "
                            "holds no split point", st->device, h);
      xa->mine[xa->nmine++] = SharedHcube{h, 0, slot};
    }
  }
  int n = 0;
  for (int k = 1; k < R; k++)
    if (sp->first[k] > sp->hs[k] && shared_slot(sp, sp->h[k]) == k - 1)
      st->h_shared.p[n++] = SharedHcube{sp->h[k], sp->he[k] - sp->hs[k], k - 1};
  cudaMemcpyAsync(st->seg.p, st->h_seg.p, 2 * (size_t)R * sizeof(long long),
                  cudaMemcpyHostToDevice, q);
  if (n > 0)
    cudaMemcpyAsync(st->shared.p, st->h_shared.p, (size_t)n * sizeof(SharedHcube),
                    cudaMemcpyHostToDevice, q);
  const int nc = job->problem->ncomp > 1 ? job->problem->ncomp : 1;
  xa->npart = nc == 1 ? 2 : nc + nc * (nc + 1) / 2;
  xa->nslot = R - 1;
  xa->nrank = R;
  xa->rank = c->rank;
  xa->ncell = (long long)job->problem->dim * job->map->ninc;
  xa->shared = st->shared.p;
  xa->nshared = n;
  xa->seg = st->seg.p;
  xa->nhcube = s->nhcube;
  xa->V = 1.0 / (double)s->nhcube;
  xa->shift = job->shift;
  xa->kk = s->ladder ? s->ladder->kk : 0.0;
  return STRATA_OK;
}

/* The ranks' exchange and what follows it, queued behind the estimate of
 * this rank's whole hypercubes: the sum, the levels' gather, the shared
 * hypercubes, and adapting, the map and the allocation as one GPU makes
 * them from the same sums and levels; then where the next iteration
 * splits. */
int launch_exchange(cuda_state *st, const strata_sample_job *job, const strata_strat *s,
                    const strata_map *g, ExchangeArgs xa, bool realloc, bool refine)
{
  cudaStream_t q = st->stream;
  const bool adapt = job->adapt != 0;
  const int nsplit = job->split->nranks;
  const size_t nx = (size_t)xa.size(adapt);
  if (!st->xbuf.reserve(nx) || (realloc && !st->lv16.reserve((size_t)s->nhcube)) ||
      (realloc && (!st->split.reserve(4 * ((size_t)nsplit + 1)) ||
                   !st->h_split.reserve(4 * ((size_t)nsplit + 1)))))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                        st->device);
  xa.x = st->xbuf.p;
  xa.s1 = st->s1.p;
  xa.s2 = st->s2.p;
  xa.wsum = st->wsum.p;
  xa.wcnt = st->wcnt.p;
  xa.rec = st->rec.p;
  xa.level = realloc ? st->level.p : nullptr;
  xa.lv16 = st->lv16.p;
  const unsigned cblocks = (unsigned)grid_for(adapt ? xa.ncell : 1, kAdaptThreads, st->nsm);
  if (realloc)
    pack_levels_kernel<<<(unsigned)grid_for(xa.e1 - xa.e0, kAdaptThreads, st->nsm),
                         kAdaptThreads, 0, q>>>(xa);
  cudaMemsetAsync(xa.x, 0, nx * sizeof(double), q);
  pack_kernel<<<cblocks, kAdaptThreads, 0, q>>>(xa, adapt);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, "launching the exchange's kernels", st->device);
  int rc = strata_cuda_peers_allreduce(st->peers, xa.x, nx, q);
  if (rc != STRATA_OK) return rc;
  if (realloc) {
    const int R = xa.nrank;
    int64_t lo[R], hi[R];
    for (int k = 0; k < R; k++) {
      lo[k] = 2 * st->h_seg.p[k];
      hi[k] = 2 * st->h_seg.p[R + k];
    }
    rc = strata_cuda_peers_gather(st->peers, (unsigned char *)xa.lv16, lo, hi, q);
    if (rc != STRATA_OK) return rc;
    unpack_levels_kernel<<<(unsigned)grid_for(s->nhcube, kAdaptThreads, st->nsm), kAdaptThreads,
                           0, q>>>(xa);
  }
  finish_kernel<<<1, 1, 0, q>>>(xa);
  if (adapt) {
    unpack_map_kernel<<<cblocks, kAdaptThreads, 0, q>>>(xa);
    cudaEventRecord(st->ev_map, q);
  }
  if (realloc) {
    launch_allocation(st, s, q);
    split_samples_kernel<<<1, 128, 0, q>>>(st->start.p, s->nhcube, st->rec.p, nsplit,
                                           xa.npart != 2, st->split.p);
    cudaMemcpyAsync(st->h_split.p, st->split.p, 4 * ((size_t)nsplit + 1) * sizeof(long long),
                    cudaMemcpyDeviceToHost, q);
    st->split_new = true;
  }
  if (refine) {
    cudaStreamWaitEvent(st->stream2, st->ev_map, 0);
    launch_refine(st, g, job->alpha, st->stream2);
    cudaEventRecord(st->ev_join, st->stream2);
    cudaStreamWaitEvent(q, st->ev_join, 0);
  }
  e = cudaGetLastError();
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "launching the exchange's kernels", st->device);
}

void read_kernel_time(cuda_state *st)
{
  float ms = 0.0f;
  if (cudaEventElapsedTime(&ms, st->ev0, st->ev1) == cudaSuccess) st->last_kernel_s = 1e-3 * ms;
}

/* Names the hypercube whose sums overflowed, with the value they came to,
 * as the host's estimate would. */
int report_overflow(cuda_state *st, strata_sample_job *job, long long h)
{
  const int nc = job->problem->ncomp > 1 ? job->problem->ncomp : 1;
  double s1 = 0.0, c1 = 0.0;
  long long se[2] = {0, 0};
  cudaMemcpy(&s1, st->s1.p + h, sizeof s1, cudaMemcpyDeviceToHost);
  if (nc > 1) cudaMemcpy(&c1, st->c1.p + h * nc, sizeof c1, cudaMemcpyDeviceToHost);
  cudaMemcpy(se, st->start.p + h, sizeof se, cudaMemcpyDeviceToHost);
  const strata_strat *s = job->strat;
  const double n = !s->adaptive ? (double)(s->even ? s->even_q : s->nh[0])
                                 : (double)(se[1] - se[0]);
  job->bad = h;
  job->bad_near = s1 / n + job->shift;
  /* A vector integrand's first component, as the host's estimate names it,
   * where that is what overflowed. */
  if (nc > 1 && !isfinite(c1 / n + job->cshift[0])) job->bad_near = c1 / n + job->cshift[0];
  return STRATA_OK;
}

/* What every iteration uses on the device: the map, the allocation, the
 * per-hypercube sums and the map sums. */
int reserve_core(cuda_state *st, const strata_strat *s, const strata_map *g)
{
  const size_t cells = (size_t)g->dim * (size_t)g->ninc;
  const size_t nedges = (size_t)strata_map_naxes(g) * (size_t)(g->ninc + 1);
  if (!st->edges.reserve(nedges) || !st->start.reserve((size_t)s->nhcube + 1) ||
      !reserve_sums(st->s1, st->sums_dirt, (size_t)s->nhcube) ||
      !reserve_sums(st->s2, st->sums_dirt, (size_t)s->nhcube) ||
      !reserve_sums(st->wsum, st->map_dirt, cells) || !reserve_sums(st->wcnt, st->map_dirt, cells))
    return strata_error(STRATA_ENOMEM, "cuda device %d (%s): not enough device memory for "
                        "%lld hypercubes and %zu map cells", st->device, st->name,
                        (long long)s->nhcube, cells);
  return STRATA_OK;
}

/* The host's map, and with allocation its allocation, onto the device where
 * the device holds older ones.  The first, even allocation is a formula:
 * made here, not copied; any other goes through page-locked staging, locked
 * only once an allocation has to cross (milliseconds per megabyte, more
 * than a short run). */
int upload_state(cuda_state *st, const strata_map *g, const strata_strat *s, bool allocation,
                 cudaStream_t q)
{
  cudaError_t e;
  if (st->map_gen != g->generation) {
    const size_t nedges = (size_t)strata_map_naxes(g) * (size_t)(g->ninc + 1);
    e = cudaMemcpyAsync(st->edges.p, g->edges, nedges * sizeof(double), cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the map", st->device);
    st->map_gen = g->generation;
    st->map_newer = false;
    st->map_ver++;
  }
  if (!allocation || st->strat_gen == s->generation) return STRATA_OK;
  const size_t nstart = (size_t)s->nhcube + 1;
  if (s->even) {
    even_start_kernel<<<(unsigned)grid_for(s->nhcube + 1, kAdaptThreads, st->nsm), kAdaptThreads,
                        0, q>>>(st->start.p, s->nhcube, s->even_q, s->even_rem);
  } else {
    if (!st->h_start.reserve(nstart))
      return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock %zu MB of host memory "
                          "for transfers", st->device, nstart * 8 >> 20);
    memcpy(st->h_start.p, s->start, nstart * sizeof(long long));
    e = cudaMemcpyAsync(st->start.p, st->h_start.p, nstart * sizeof(long long),
                        cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the allocation", st->device);
  }
  st->strat_gen = s->generation;
  st->strat_newer = false;
  return STRATA_OK;
}

/* What an iteration's record brings back: the first bad sample or
 * overflowing hypercube, reported as the host would, else its estimate
 * (a vector integrand's covariance from its upper triangle, mirrored)
 * into job->part.  The estimate kernels cleared the sums behind them. */
int read_record(cuda_state *st, strata_sample_job *job, const IterRecord &out)
{
  if (out.bad != kNoBad) return report_bad(job, (long long)out.bad);
  if (out.bad_h != LLONG_MAX) return report_overflow(st, job, out.bad_h);
  const int nc = job->problem->ncomp > 1 ? job->problem->ncomp : 1;
  st->sums_dirt.clear();
  if (nc > 1) { /* (a scalar run leaves what the component sums held as it was) */
    st->c1_dirt.clear();
    st->c2_dirt.clear();
  }
  if (nc == 1) {
    job->part[0] = out.part[0];
    job->part[1] = out.part[1];
    return STRATA_OK;
  }
  for (int c = 0; c < nc; c++) job->part[c] = out.vpart[c];
  for (int x = 0, p = 0; x < nc; x++)
    for (int y = x; y < nc; y++, p++)
      job->part[nc + x * nc + y] = job->part[nc + y * nc + x] = out.vpart[nc + p];
  return STRATA_OK;
}

/* Frozen iterations of several ranks (cuda_state's next): the sampling,
 * estimate and packing of job (its iteration and shifts; the rest as
 * next's) into record and buffer slot `slot`, queued on the sampling
 * stream. */
void launch_frozen(cuda_state *st, const strata_sample_job *job, const strata_strat *s,
                   const strata_map *g, int slot)
{
  auto &n = st->next;
  cudaStream_t q = st->stream;
  IterRecord *rec = st->rec.p + slot;
  cudaMemcpyAsync(rec, &st->h_rec.p[0], sizeof(IterRecord), cudaMemcpyHostToDevice, q);
  KernelArgs a = n.a;
  a.iteration = job->iteration;
  a.shift = job->shift;
  for (int c = 0; job->cshift && c < job->problem->ncomp; c++) a.cshift[c] = job->cshift[c];
  a.bad = &rec->bad;
  if (a.total > 0) {
    void *args[] = {&a};
    cudaLaunchKernel(n.k, dim3(n.blocks), dim3(kThreads), args, n.smem, q);
  }
  launch_resident(st, job, s, g, n.nh_uniform, n.xa.e0, n.xa.e1, false, false, rec);
  ExchangeArgs xa = n.xa;
  const size_t nx = (size_t)xa.size(false);
  xa.x = st->xbuf.p + (size_t)slot * nx;
  xa.rec = rec;
  cudaMemsetAsync(xa.x, 0, nx * sizeof(double), q);
  pack_kernel<<<1, kAdaptThreads, 0, q>>>(xa, false);
  cudaEventRecord(st->ev_pack[slot], q);
}

/* The iteration in slot `slot`, sampled already or queued: its exchange
 * and finish on xstream, then the next one queued behind them where the
 * run will want it, and this one's estimate read.  The next sampling
 * kernel waits for the exchange on the device: it fills every SM for its
 * whole length (one wave), so an exchange kernel started beside it would
 * wait for a free SM, and a peer's would spin, holding one of this
 * rank's blocks back, until then; ordered, the device pauses only for
 * the exchange's latency and the host never waits for a round trip. */
int frozen_exchange(cuda_state *st, strata_sample_job *job, const strata_strat *s,
                    const strata_map *g, int slot)
{
  auto &n = st->next;
  ExchangeArgs xa = n.xa;
  const size_t nx = (size_t)xa.size(false);
  xa.x = st->xbuf.p + (size_t)slot * nx;
  xa.rec = st->rec.p + slot;
  xa.shift = job->shift;
  cudaStream_t x = st->xstream;
  cudaStreamWaitEvent(x, st->ev_pack[slot], 0);
  int rc = strata_cuda_peers_allreduce(st->peers, xa.x, nx, x);
  if (rc != STRATA_OK) return rc;
  finish_kernel<<<1, 1, 0, x>>>(xa);
  cudaMemcpyAsync(&st->h_rec.p[1 + slot], xa.rec, sizeof(IterRecord), cudaMemcpyDeviceToHost, x);
  cudaEventRecord(st->ev_done[slot], x);
  n.on = job->next_alike != 0;
  if (n.on) {
    const int nc = job->problem->ncomp > 1 ? job->problem->ncomp : 0;
    n.slot = 1 - slot;
    n.iteration = job->iteration + 1;
    n.shift = job->next_shift;
    for (int c = 0; c < nc; c++) n.cshift[c] = job->next_cshift[c];
    strata_sample_job next = *job;
    next.iteration = n.iteration;
    next.shift = n.shift;
    next.cshift = nc ? n.cshift : nullptr;
    cudaStreamWaitEvent(st->stream, st->ev_done[slot], 0);
    launch_frozen(st, &next, s, g, n.slot);
  }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaEventSynchronize(st->ev_done[slot]);
  if (e != cudaSuccess) return cuda_fail(e, "running the iteration", st->device);
  return read_record(st, job, st->h_rec.p[1 + slot]);
}

/* Whether job is the frozen iteration already in flight. */
bool next_is(const cuda_state *st, const strata_sample_job *job)
{
  const auto &n = st->next;
  if (!(n.on && job->exchange && !job->adapt && job->part && job->iteration == n.iteration &&
        job->problem == n.pr && job->seed == n.seed && job->shift == n.shift &&
        job->i0 == n.i0 && job->i1 == n.i1 && job->map->generation == n.map_gen &&
        job->strat->generation == n.strat_gen))
    return false;
  for (int c = 0; job->cshift && c < job->problem->ncomp; c++)
    if (job->cshift[c] != n.cshift[c]) return false;
  return true;
}

/* The iteration in flight is not wanted: waited for (its kernels clear
 * the sums behind them) and dropped. */
int drop_next(cuda_state *st)
{
  st->next.on = false;
  cudaError_t e = cudaStreamSynchronize(st->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st->xstream);
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "finishing an iteration", st->device);
}

int cuda_pull(strata_backend *b, strata_map *g, strata_strat *s);

int cuda_sample(strata_backend *b, strata_sample_job *job)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const strata_problem *pr = job->problem;
  const strata_map *g = job->map;
  const strata_strat *s = job->strat;
  const int dim = pr->dim, ninc = g->ninc;
  const size_t cells = (size_t)dim * (size_t)ninc;
  const long long nh = job->h1 - job->h0;
  st->last_kernel_s = 0.0;
  /* Several ranks that exchange on their devices; a rank whose share is
   * empty takes part in the exchange and adapts with the others all the
   * same. */
  const bool exchange = job->part && job->exchange && st->peers;
  if (nh <= 0 && !exchange) return STRATA_OK;
  cudaError_t e = cudaSetDevice(st->device);
  if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", st->device);
  if (st->next.on) {
    if (next_is(st, job)) return frozen_exchange(st, job, s, g, st->next.slot);
    int drc = drop_next(st);
    if (drc != STRATA_OK) return drc;
  }

  const int pts = !job->qmc ? kPhilox : job->qmc->rule == STRATA_QMC_SOBOL ? kSobol : kLattice;
  const void *k = nullptr;
  const int id = pr->f ? builtin_id(pr->f) : -1;
  if (id >= 0) {
    k = (const void *)pick(id, dim, st->generic, job->adapt, pts);
  } else if (pr->source) {
    if (!st->jit && !(st->jit = strata_jit_new(st->device)))
      return strata_error(STRATA_ENOMEM, "out of memory");
    int rc = strata_jit_kernel(st->jit, pr->source, dim, job->adapt, pts, &k);
    if (rc != STRATA_OK) return rc;
  } else {
    return strata_error(STRATA_EBACKEND, "integrand '%s' has no GPU version: the CUDA backend "
                        "runs the built-in integrands and integrand sources that strata "
                        "compiles (integrand = file:PATH or inline)",
                        pr->name ? pr->name : "(unnamed)");
  }
  const int nc = pr->ncomp > 1 ? pr->ncomp : 1, np = nc * (nc + 1) / 2;

  int rrc = reserve_core(st, s, g);
  if (rrc != STRATA_OK) return rrc;
  /* Stratified iterations stay on the device: the estimate, and the
   * adaptation too, follow the sampling there, and one record comes back.
   * Otherwise (plain MC and QMC, which have few cells) the cells' sums come
   * back. */
  const bool resident = job->part != nullptr;
  /* Page-locked staging only for what crosses PCIe on this path: locking
   * memory takes milliseconds per megabyte, more than a short run. */
  if (!st->h_w.reserve(cells) || !st->h_c.reserve(cells + 1) ||
      (!resident && (!st->h_s1.reserve((size_t)nh) || !st->h_s2.reserve((size_t)nh))))
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock %zu MB of host memory "
                        "for transfers", st->device, (size_t)(2 * nh + 2 * (long long)cells) * 8 >> 20);
  cudaStream_t q = st->stream;
  const bool uniform =
      !s->adaptive && (s->even || s->start[s->nhcube] == s->nh[0] * s->nhcube);
  const long long nh_uniform = !uniform ? 0 : s->even ? s->even_q : s->nh[0];
  rrc = upload_state(st, g, s, !uniform, q);
  if (rrc != STRATA_OK) return rrc;
  if (job->qmc) {
    int rc = upload_qmc(st, job->qmc, q);
    if (rc != STRATA_OK) return rc;
  }
  int trc = upload_tables(st, pr, q);
  if (trc != STRATA_OK) return trc;
  if (nc > 1) {
    if (!reserve_sums(st->c1, st->c1_dirt, (size_t)s->nhcube * nc) ||
        !reserve_sums(st->c2, st->c2_dirt, (size_t)s->nhcube * np) ||
        (!resident && (!st->h_c1.reserve((size_t)nh * nc) || !st->h_c2.reserve((size_t)nh * np))))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the sums of %d "
                          "components", st->device, nc);
    st->c1_dirt.wipe(q, (size_t)(job->h0 * nc), (size_t)(job->h1 * nc), st->c1.p);
    st->c2_dirt.wipe(q, (size_t)(job->h0 * np), (size_t)(job->h1 * np), st->c2.p);
  }
  const bool adapt_here = resident && job->adapt && (job->local || exchange);
  const bool realloc_here = adapt_here && job->level;
  const bool refine_here = adapt_here && job->alpha != 0.0;
  st->adapted = false;
  rrc = reserve_resident(st, s, g, resident, realloc_here, refine_here);
  if (rrc != STRATA_OK) return rrc;
  st->sums_dirt.wipe(q, (size_t)job->h0, (size_t)(job->h1 > job->h0 ? job->h1 : job->h0),
                     st->s1.p, st->s2.p);
  if (job->adapt) st->map_dirt.wipe(q, 0, cells, st->wsum.p, st->wcnt.p);
  IterRecord *rec = st->rec.p;
  cudaMemcpyAsync(rec, &st->h_rec.p[0], sizeof(IterRecord), cudaMemcpyHostToDevice, q);

  KernelArgs a;
  memset(&a, 0, sizeof a);
  a.edges = st->edges.p;
  a.start = st->start.p;
  a.s1 = st->s1.p;
  a.s2 = st->s2.p;
  a.wsum = st->wsum.p;
  a.wcnt = st->wcnt.p;
  a.bad = &rec->bad;
  for (int d = 0; d < dim; d++) {
    a.lower[d] = g->lower[d];
    a.width[d] = g->width[d];
  }
  for (int i = 0; i < pr->nparams; i++) a.params[i] = pr->params[i];
  a.tables = pr->ntables ? st->tables.p : nullptr;
  a.c1 = st->c1.p;
  a.c2 = st->c2.p;
  a.adapt_comp = pr->adapt_comp;
  for (int c = 0; nc > 1 && c < nc; c++) a.cshift[c] = job->cshift[c];
  a.dim = dim;
  a.ninc = ninc;
  a.axis_stride = g->shared ? 0 : ninc + 1;
  a.M = s->M;
  a.invM = 1.0 / s->M;
  a.h0 = job->h0;
  a.h1 = job->h1;
  /* (An allocation adapted on the device has a stale start[] here: its
   * ends and the ranks' split points are known.) */
  a.first = exchange ? job->i0 : start_known(st, s, job->h0);
  const long long last = exchange ? job->i1 : start_known(st, s, job->h1);
  if (a.first < 0 || last < 0)
    return strata_error(STRATA_EBACKEND, "cuda device %d: hypercubes %lld..%lld are not where "
                        "the allocation on the device splits", st->device, (long long)job->h0,
                        (long long)job->h1);
  a.total = last - a.first;
  a.nh_uniform = nh_uniform;
  if (!uniform && s->even) {
    a.even_q = s->even_q;
    a.even_rem = s->even_rem;
  }
  if (!job->adapt) {
    const double2 *had = st->xmap.p;
    if (!st->xmap.reserve((size_t)dim * ninc))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the map's table",
                          st->device);
    if (st->xmap_ver != st->map_ver || st->xmap.p != had) {
      xmap_kernel<<<(unsigned)grid_for((long long)dim * ninc, kAdaptThreads, st->nsm),
                    kAdaptThreads, 0, q>>>(st->xmap.p, a);
      st->xmap_ver = st->map_ver;
    }
    a.xmap = st->xmap.p;
    a.jscale = pow((double)ninc, dim);
  }
  a.seed = job->seed;
  a.iteration = job->iteration;
  a.shift = job->shift;
  a.map_scale = job->map_scale;
  if (job->qmc) {
    a.log2n = job->qmc->log2n;
    a.qdirs = st->qdirs.p;
    a.qdshift = st->qdshift.p;
    a.qshift = st->qshift.p;
    for (int d = 0; d < dim; d++) a.qz[d] = job->qmc->z[d];
  }

  /* Map sums go to shared memory whenever they fit: global atomics on a
   * few thousand cells serialise, and adapting kernels through shared
   * memory are several times faster at every neval (doc/benchmarks.md,
   * R6, "Map sums in shared memory"). */
  size_t smem = 0;
  if (job->adapt) {
    const size_t need = cells * (sizeof(double) + sizeof(unsigned int));
    if (need <= st->smem_optin) {
      a.shared_acc = 1;
      smem = need;
    }
  }
  if (k != st->occ_kernel || smem != st->occ_smem) {
    if (smem > 48 * 1024) {
      e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
      if (e != cudaSuccess) return cuda_fail(e, "reserving shared memory", st->device);
    }
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, smem);
    st->occ_kernel = k;
    st->occ_smem = smem;
    st->occ_per_sm = e != cudaSuccess || per_sm < 1 ? 1 : per_sm;
  }
  a.spc = a.total >= kLargeChunkFrom ? kLargeChunk : kSmallChunk;
  const long long nchunk = (a.total + a.spc - 1) / a.spc;
  long long blocks = (nchunk + kThreads - 1) / kThreads;
  const long long resident_blocks = (long long)st->occ_per_sm * st->nsm;
  if (blocks > resident_blocks) blocks = resident_blocks;
  /* Every block clears and flushes all cells: give each at least half a
   * sample per cell (of 8, 2 and 1/2 samples per cell per block, 1/2 was
   * twice as fast at 1e6 samples; at 1e7 and up the three were alike). */
  if (a.shared_acc) {
    long long cap = 2 * a.total / (long long)cells;
    if (cap < 1) cap = 1;
    if (blocks > cap) blocks = cap;
    /* The shared counts are 32-bit: no block may take 2^32 samples. */
    if (blocks <= a.total >> 31) blocks = (a.total >> 31) + 1;
  }
  if (blocks < 1) blocks = 1;

  if (exchange && !job->adapt) {
    auto &n = st->next;
    int prc = plan_exchange(st, job, s, &n.xa, q);
    if (prc != STRATA_OK) return prc;
    if (!st->xbuf.reserve(2 * (size_t)n.xa.size(false)))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                          st->device);
    n.xa.s1 = st->s1.p;
    n.xa.s2 = st->s2.p;
    n.pr = pr;
    n.seed = job->seed;
    n.shift = job->shift;
    n.i0 = job->i0;
    n.i1 = job->i1;
    n.map_gen = g->generation;
    n.strat_gen = s->generation;
    n.k = k;
    n.a = a;
    n.blocks = (unsigned)blocks;
    n.smem = smem;
    n.nh_uniform = nh_uniform;
    n.iteration = job->iteration;
    launch_frozen(st, job, s, g, 0);
    return frozen_exchange(st, job, s, g, 0);
  }
  cudaEventRecord(st->ev0, q);
  void *args[] = {&a};
  if (a.total > 0) {
    e = cudaLaunchKernel(k, dim3((unsigned)blocks), dim3(kThreads), args, smem, q);
    if (e != cudaSuccess) return cuda_fail(e, "launching the sampling kernel", st->device);
  }
  cudaEventRecord(st->ev1, q);

  if (resident) {
    ExchangeArgs xa;
    long long e0 = job->h0, e1 = job->h1;
    if (exchange) {
      int prc = plan_exchange(st, job, s, &xa, q);
      if (prc != STRATA_OK) return prc;
      e0 = xa.e0;
      e1 = xa.e1;
    }
    int arc = launch_resident(st, job, s, g, nh_uniform, e0, e1, realloc_here && !exchange,
                              refine_here && !exchange, rec);
    if (arc == STRATA_OK && exchange)
      arc = launch_exchange(st, job, s, g, xa, realloc_here, refine_here);
    if (arc != STRATA_OK) return arc;
    cudaMemcpyAsync(&st->h_rec.p[1], rec, sizeof(IterRecord), cudaMemcpyDeviceToHost, q);
    if (!job->local && !exchange) {
      cudaMemcpyAsync(st->h_w.p, st->wsum.p, cells * sizeof(double), cudaMemcpyDeviceToHost, q);
      cudaMemcpyAsync(st->h_c.p, st->wcnt.p, cells * sizeof(unsigned long long),
                      cudaMemcpyDeviceToHost, q);
      if (job->level)
        cudaMemcpyAsync(job->level + job->h0, st->level.p + job->h0, (size_t)nh * sizeof(double),
                        cudaMemcpyDeviceToHost, q);
    }
    e = cudaStreamSynchronize(q);
    if (e != cudaSuccess) return cuda_fail(e, "running the iteration", st->device);
    read_kernel_time(st);
    const IterRecord &out = st->h_rec.p[1];
    rrc = read_record(st, job, out);
    if (rrc != STRATA_OK) return rrc;
    if (job->adapt && !job->local && !exchange)
      for (size_t c = 0; c < cells; c++) {
        job->wsum[c] = st->h_w.p[c];
        job->wcount[c] = (double)st->h_c.p[c];
      }
    if (adapt_here) {
      st->adapted = true;
      if (refine_here) st->map_dirt.clear(); /* (the refinement clears them) */
      st->adapted_total = out.total;
    }
    return STRATA_OK;
  }

  unsigned long long *bad = st->h_c.p + cells; /* one spare slot: see reserve below */
  cudaMemcpyAsync(st->h_s1.p, st->s1.p + job->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(st->h_s2.p, st->s2.p + job->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(bad, &rec->bad, sizeof *bad, cudaMemcpyDeviceToHost, q);
  if (nc > 1) {
    cudaMemcpyAsync(st->h_c1.p, st->c1.p + job->h0 * nc, (size_t)nh * nc * sizeof(double),
                    cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c2.p, st->c2.p + job->h0 * np, (size_t)nh * np * sizeof(double),
                    cudaMemcpyDeviceToHost, q);
  }
  if (job->adapt) {
    cudaMemcpyAsync(st->h_w.p, st->wsum.p, cells * sizeof(double), cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c.p, st->wcnt.p, cells * sizeof(unsigned long long),
                    cudaMemcpyDeviceToHost, q);
  }
  e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "running the sampling kernel", st->device);
  read_kernel_time(st);
  if (*bad != kNoBad) return report_bad(job, (long long)*bad);
  memcpy(job->s1 + job->h0, st->h_s1.p, (size_t)nh * sizeof(double));
  memcpy(job->s2 + job->h0, st->h_s2.p, (size_t)nh * sizeof(double));
  if (nc > 1) {
    memcpy(job->c1 + job->h0 * nc, st->h_c1.p, (size_t)nh * nc * sizeof(double));
    memcpy(job->c2 + job->h0 * np, st->h_c2.p, (size_t)nh * np * sizeof(double));
  }
  /* (Set, not added: this backend is its rank's only contributor, and the
   * caller leaves the host's map sums alone where the device kept them.) */
  if (job->adapt)
    for (size_t c = 0; c < cells; c++) {
      job->wsum[c] = st->h_w.p[c];
      job->wcount[c] = (double)st->h_c.p[c];
    }
  return job->part ? strata_backend_host_part(job) : STRATA_OK;
}

/* The host's map and allocation once the device has made newer ones
 * (refined, reallocated with total samples): new generations, which the
 * device's copies carry, recorded as newer than the host's. */
void mark_adapted(cuda_state *st, strata_map *g, strata_strat *s, bool refined,
                  bool reallocated, long long total)
{
  if (refined) {
    g->generation = strata_stamp_next();
    st->map_gen = g->generation;
    st->map_newer = true;
  }
  if (reallocated) {
    s->generation = strata_stamp_next();
    s->even = 0;
    s->total = total;
    st->strat_gen = s->generation;
    st->strat_newer = true;
  }
}

/* After a sample call that adapted on the device (one rank, or ranks that
 * exchanged there), only the host's bookkeeping is left, with where the
 * ranks' next samples split; otherwise (sums that came back to the host:
 * plain MC and QMC points, or ranks without peers on their devices) the
 * host adapts its own copies, and the next iteration uploads what
 * changed. */
int cuda_adapt(strata_backend *b, const strata_adapt_job *job)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const bool split_new = st->adapted && st->split_new && job->reallocate && job->split;
  st->split_new = false;
  if (!st->adapted) {
    int rc = cuda_pull(b, job->map, job->strat);
    return rc != STRATA_OK ? rc : strata_backend_host_adapt(b, job);
  }
  st->adapted = false;
  mark_adapted(st, job->map, job->strat, job->alpha != 0.0, job->reallocate != 0,
               st->adapted_total);
  if (split_new) {
    strata_split *sp = job->split;
    memcpy(sp->h, st->h_split.p, 4 * ((size_t)sp->nranks + 1) * sizeof(int64_t));
    sp->of = job->strat->generation;
  }
  return STRATA_OK;
}

int cuda_pull(strata_backend *b, strata_map *g, strata_strat *s)
{
  strata_strat_materialize(s); /* (the even allocation is the host's to write) */
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const bool map = map_ahead(st, g), strat = strat_ahead(st, s);
  if (!map && !strat) return STRATA_OK;
  cudaStream_t q = st->stream;
  cudaError_t e = cudaSetDevice(st->device);
  if (e == cudaSuccess && map)
    e = cudaMemcpyAsync(g->edges, st->edges.p,
                        (size_t)strata_map_naxes(g) * (g->ninc + 1) * sizeof(double),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess && strat)
    e = cudaMemcpyAsync(s->start, st->start.p, ((size_t)s->nhcube + 1) * sizeof(long long),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "copying the map and allocation back", st->device);
  if (strat)
    for (int64_t h = 0; h < s->nhcube; h++) s->nh[h] = s->start[h + 1] - s->start[h];
  if (map) st->map_newer = false;
  if (strat) st->strat_newer = false;
  return STRATA_OK;
}

void cuda_free(strata_backend *b)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  cudaSetDevice(st->device);
  if (st->next.on) drop_next(st);
  st->edges.release();
  st->xmap.release();
  st->s1.release();
  st->s2.release();
  st->wsum.release();
  st->start.release();
  st->wcnt.release();
  st->rec.release();
  st->h_rec.release();
  st->level.release();
  st->step.release();
  st->refine_scratch.release();
  st->dshare.release();
  st->hist.release();
  st->count.release();
  st->cub_tmp.release();
  st->qdirs.release();
  st->qdshift.release();
  st->qshift.release();
  st->h_s1.release();
  st->h_s2.release();
  st->h_w.release();
  st->h_c.release();
  st->h_start.release();
  st->split.release();
  st->h_split.release();
  st->xbuf.release();
  st->lv16.release();
  st->shared.release();
  st->h_shared.release();
  st->seg.release();
  st->h_seg.release();
  strata_cuda_peers_free(st->peers);
  cudaEventDestroy(st->ev_map);
  cudaStreamDestroy(st->xstream);
  for (int i = 0; i < 2; i++) {
    cudaEventDestroy(st->ev_pack[i]);
    cudaEventDestroy(st->ev_done[i]);
  }
  st->c1.release();
  st->c2.release();
  st->h_c1.release();
  st->h_c2.release();
  release_tables(st);
  st->tables.release();
  strata_jit_free(st->jit);
  cudaEventDestroy(st->ev0);
  cudaEventDestroy(st->ev1);
  cudaEventDestroy(st->ev_join);
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

/* CUDA loads this file's kernels on their first use (lazy loading):
 * milliseconds that belong to the set-up, not to the first iteration. */
static void load_module(void)
{
  cudaFuncAttributes fa;
  cudaFuncGetAttributes(&fa, estimate_kernel);
}

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
  cuda_state *st = new cuda_state();
  st->device = device;
  st->nsm = prop.multiProcessorCount;
  st->smem_optin = prop.sharedMemPerBlockOptin;
  snprintf(st->name, sizeof st->name, "%s", prop.name);
  int lo_priority = 0, hi_priority = 0; /* (numerically: the greatest is the lowest) */
  cudaDeviceGetStreamPriorityRange(&lo_priority, &hi_priority);
  const char *gen = getenv("STRATA_CUDA_GENERIC");
  st->generic = gen && *gen == '1';
  if (cudaStreamCreate(&st->stream) != cudaSuccess ||
      cudaStreamCreate(&st->stream2) != cudaSuccess || cudaEventCreate(&st->ev0) != cudaSuccess ||
      cudaEventCreate(&st->ev1) != cudaSuccess ||
      cudaEventCreateWithFlags(&st->ev_join, cudaEventDisableTiming) != cudaSuccess ||
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
