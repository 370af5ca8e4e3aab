/* The CUDA backend's state on one GPU: its streams and events, the
 * buffers that grow on demand (device and page-locked host), the record of
 * what the device holds of the host's map and allocation, and the frozen
 * iteration in flight.  Below it, what each of the backend's files offers
 * the others: every step of an iteration takes this state. */
#ifndef STRATA_GPU_STATE_CUH
#define STRATA_GPU_STATE_CUH
#include <cuda_runtime.h>

#include <stdint.h>
#include <vector>

extern "C" {
#include "error.h"
#include "ladder.h"
}
#include "jit.h"
#include "kernels.cuh"
#include "peers_cuda.h"

namespace strata_cuda {

using namespace strata_k;

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
struct dirty_range {
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
template <typename T> bool reserve_sums(dbuf<T> &b, dirty_range &d, size_t want)
{
  const size_t had = b.n;
  if (!b.reserve(want)) return false;
  if (b.n != had) d.mark(0, b.n);
  return true;
}

/* How a sampling kernel runs: the kernel, its grid, its blocks' threads
 * and their dynamic shared memory. */
struct Launch {
  const void *k = nullptr;
  long long blocks = 0;
  int threads = 0;
  size_t smem = 0;
};

struct cuda_state {
  int device;
  int nsm;
  int realloc_blocks;        /* reallocate_kernel's grid: one block an SM */
  bool rec_posted;           /* the iteration's kernels write its record to h_rec[1] */
  int max_threads_sm;        /* threads an SM holds at most */
  size_t smem_optin;
  char name[256];
  cudaStream_t stream, stream2;  /* stream2: the map's refinement, beside the allocation */
  cudaEvent_t ev0, ev1, ev_join;
  double last_kernel_s;
  double sample_cost_s;      /* kernel seconds per sample, the last sampling kernel's */
  long long launched;        /* samples of the last sampling kernel */
  int last_chunk;            /* its chunk (strata_cuda_last_chunk) */
  int generic;               /* STRATA_CUDA_GENERIC=1: no per-dimension kernels */
  dbuf<double> edges, s1, s2, wsum;
  dbuf<double2> xmap;            /* frozen iterations' map in x (xmap_kernel) */
  uint64_t map_ver = 0;          /* bumped whenever the device's map changes */
  uint64_t xmap_ver = ~0ULL;     /* the map xmap was made from */
  int xmap_group = 0;            /* and the group it was read at (map.h) */
  dbuf<long long> start;
  dbuf<unsigned long long> wcnt, qdirs, qdshift;
  dbuf<double> qshift;
  dbuf<double> c1, c2;           /* vector integrands: per-hypercube component sums */
  dbuf<double> eval_y, eval_f;   /* the peak search's points and values (eval.cu) */
  /* The peak search's weights of an iteration, and sorted (top.cu). */
  dbuf<double> wtop, wtop_sorted;
  dbuf<long long> wtop_index, wtop_index_sorted;
  dbuf<unsigned char> sort_tmp;
  hbuf<double> h_topw;
  hbuf<long long> h_topi;
  /* The channels of an iteration (channels.cu): their copy, the sums of
   * their weights, per channel, and of this rank's blocks. */
  dbuf<strata_channels> chan;
  dbuf<double> chW, chblocks;
  hbuf<double> h_ch;
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
  dbuf<unsigned long long> dshare, hist, btot;
  dbuf<long long> count;
  dirty_range sums_dirty;        /* s1 and s2, in hypercubes */
  dirty_range map_dirty;         /* wsum and wcnt, in cells */
  dirty_range c1_dirty, c2_dirty; /* c1 and c2, in doubles */
  long long adapted_total = 0;   /* the samples of the allocation the last plan made here */
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
  /* Frozen iterations of several ranks: the iteration queued behind the
   * exchange of the one before (frozen.cu), on xstream. */
  cudaStream_t xstream;
  cudaEvent_t ev_pack[2], ev_done[2];
  struct {
    bool on = false;
    int slot = 0;
    unsigned iteration = 0;
    /* what the next plan must be for the iteration in flight to be its */
    const strata_problem *pr = nullptr;
    unsigned long long seed = 0;
    double shift = 0.0, cshift[STRATA_MAX_COMP] = {0};
    long long i0 = 0, i1 = 0;
    uint64_t map_gen = 0, strat_gen = 0;
    /* how it was launched */
    Launch l;
    KernelArgs a;
    long long nh_uniform = 0;
    ExchangeArgs xa;
  } next;
  /* One rank's adapting iterations: the next one's sampling kernel queued
   * before this one's record is read (ahead.cu).  ev_tail follows an
   * iteration's last kernel; ev_a0 and ev_a1 time the queued kernel and
   * become ev0 and ev1 when it is taken. */
  cudaEvent_t ev_tail, ev_a0, ev_a1;
  bool ahead_allowed = true;     /* STRATA_CUDA_AHEAD=0: never queued */
  long long ahead_used = 0, ahead_dropped = 0;
  struct {
    bool on = false;
    unsigned iteration = 0;
    Launch l;
    KernelArgs a;                /* as launched */
    long long nhcube = 0;        /* what it adds into */
    size_t cells = 0;
    AheadArgs used;              /* what it took from the record before (a.ahead) */
  } ahead;
  const void *occ_kernel = nullptr; /* the last occupancy asked for */
  size_t occ_smem = 0;
  int occ_per_sm = 1;
};

int cuda_fail(cudaError_t e, const char *what, int device);

/* The plan's decisions (src/plan.h), as this backend reads them. */
inline bool exchanges(const strata_plan *plan) { return plan->combine == STRATA_COMBINE_EXCHANGE; }
/* A stratified iteration stays on the device: the estimate, and the
 * adaptation where it is made here, follow the sampling there, and one
 * record comes back.  Otherwise (plain MC and QMC, which have few cells)
 * the cells' sums come back. */
inline bool resident(const strata_plan *plan) { return plan->combine != STRATA_COMBINE_CELLS; }
inline bool adapts_here(const strata_plan *plan) { return plan->adapt_at == STRATA_ADAPT_BACKEND; }
inline bool reallocates_here(const strata_plan *plan) { return adapts_here(plan) && plan->reallocate; }
inline bool refines_here(const strata_plan *plan) { return adapts_here(plan) && plan->refine; }
/* The device record (and host slot h_rec[1 + slot]) of an iteration:
 * alternate ones for iterations that may overlap (ahead.cu); the ranks'
 * exchange keeps its own (frozen.cu). */
inline int rec_slot(const strata_plan *plan)
{
  return exchanges(plan) ? 0 : (int)(plan->iteration & 1u);
}

inline long long grid_for(long long n, int threads, int nsm)
{
  long long b = (n + threads - 1) / threads, cap = 8LL * nsm;
  return b < 1 ? 1 : b > cap ? cap : b;
}

/* buffers.cu: the device's buffers, and what is copied into them. */
int reserve_core(cuda_state *st, const strata_strat *s, const strata_map *g);
int reserve_resident(cuda_state *st, const strata_strat *s, const strata_map *g, bool resident,
                     bool realloc, bool refine);
int upload_qmc(cuda_state *st, const strata_qmc *qm, cudaStream_t q);
int upload_tables(cuda_state *st, const strata_problem *pr, cudaStream_t q);
/* The device holds pr's tables already (or pr has none). */
bool tables_current(const cuda_state *st, const strata_problem *pr);
void release_buffers(cuda_state *st);

/* residency.cu: what the device holds of the host's map and allocation. */
long long start_known(const cuda_state *st, const strata_strat *s, int64_t h);
int upload_state(cuda_state *st, const strata_map *g, const strata_strat *s, bool allocation,
                 cudaStream_t q);
int cuda_adapt(strata_backend *b, const strata_plan *plan, strata_map *g, strata_strat *s);
int cuda_pull(strata_backend *b, strata_map *g, strata_strat *s);

/* adapt.cu: the estimate and the adaptation, behind the sampling. */
void launch_allocation(cuda_state *st, const strata_strat *s, cudaStream_t q,
                       const EstimateArgs *ea, IterRecord *rec, IterRecord *reset);
void launch_refine(cuda_state *st, const strata_map *g, double alpha, cudaStream_t q,
                   const IterRecord *rec);
int launch_resident(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                    const strata_map *g, long long nh_uniform, long long whole0, long long whole1,
                    bool realloc, bool refine, IterRecord *rec, IterRecord *reset);

/* exchange.cu: several ranks' exchange of a stratified iteration. */
int plan_exchange(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                  ExchangeArgs *xa, cudaStream_t q);
int launch_exchange(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                    const strata_map *g, ExchangeArgs xa, bool realloc, bool refine);

/* frozen.cu: frozen iterations of several ranks, each queued behind the
 * exchange of the one before. */
int start_frozen(cuda_state *st, strata_plan *plan, const Launch &l, const KernelArgs &a,
                 long long nh_uniform);
int frozen_exchange(cuda_state *st, strata_plan *plan, const strata_strat *s,
                    const strata_map *g, int slot);
bool next_is(const cuda_state *st, const strata_plan *plan);
int drop_next(cuda_state *st);

/* ahead.cu: one rank's next adapting iteration, queued before this one's
 * record is read. */
bool ahead_kind(const cuda_state *st, const strata_plan *plan);
int queue_ahead(cuda_state *st, const strata_plan *plan, const Launch &l, const KernelArgs &a,
                const AheadArgs *from);
bool ahead_is(const cuda_state *st, const strata_plan *plan, const void *k, const KernelArgs &real);
void take_ahead(cuda_state *st, const strata_plan *plan);
int drop_ahead(cuda_state *st);

/* sample.cu: one iteration's sampling. */
int cuda_sample(strata_backend *b, strata_plan *plan);
int read_record(cuda_state *st, strata_plan *plan, const IterRecord &out);
/* The error for an integrand the device cannot run (neither built in nor a
 * source strata compiles). */
int no_device_version(const strata_problem *pr);

/* top.cu: the peak search's largest weights of an iteration of n samples
 * from first, which its sampling kernel wrote, into plan->top. */
int reserve_weights(cuda_state *st, long long n);
/* n samples from first, then with channels nch of this rank's blocks'
 * points. */
int keep_top(cuda_state *st, strata_plan *plan, long long first, long long n, long long nch);

/* channels.cu: the peak search's channels.  The channels copied and their
 * sums cleared, and the kernel's arguments for them; the channels'
 * kernel, behind the sampling; their sums into the plan's chsum. */
int prepare_channels(cuda_state *st, const strata_plan *plan, KernelArgs *a);
int launch_channels(cuda_state *st, const strata_plan *plan, const KernelArgs &a);
int read_channels(cuda_state *st, strata_plan *plan);
/* This rank's channel points' slots (256 a block). */
inline long long channel_slots(const strata_plan *plan)
{
  return plan->channels ? (plan->chb1 - plan->chb0) * (long long)STRATA_CHANNEL_BLOCK : 0;
}

/* eval.cu: the peak search's evaluator (src/backend.h's eval), and the
 * search's kernels of pr's integrand: its evaluator, or its channels'. */
int find_search_kernel(cuda_state *st, const strata_problem *pr, bool channels, const void **k);
int cuda_eval(strata_backend *b, const strata_problem *pr, int64_t n, const double *y, double *f);

} // namespace strata_cuda
#endif
