/* The backend's kernels as its host code sees them: what each takes, and
 * their declarations.  The kernels themselves are in sample_kernel.cuh
 * (sampling), adapt.cuh (what follows the sampling on the device) and
 * exchange.cuh (the ranks' exchange), all compiled in kernels.cu: one
 * module, loaded ahead of the run (strata_cuda_prepare), with every
 * instantiation of the sampling kernel that the built-in integrands take.
 * The peak search's evaluator (eval_kernel.cuh) and its channels'
 * kernel (channel_kernel.cuh) are compiled there too, one each per
 * built-in integrand.  The host code that launches them lives with
 * the step it belongs to. */
#ifndef STRATA_GPU_KERNELS_CUH
#define STRATA_GPU_KERNELS_CUH
#include <climits>
#include <cuda_runtime.h>
#include <stdint.h>

#include "backend.h"
#include "channel_kernel.cuh"
#include "eval_kernel.cuh"
#include "sample_kernel.cuh"
#include "strat.h"

namespace strata_k {

/* The few numbers of an iteration that the host reads back: one copy. */
struct IterRecord {
  double part[2];              /* this slice's integral and variance */
  /* A vector integrand's: its components' integrals, then their covariance
   * as the upper triangle, row by row (estimate_vec_kernel). */
  double vpart[STRATA_MAX_COMP + STRATA_MAX_COMP * (STRATA_MAX_COMP + 1) / 2];
  unsigned long long bad;      /* first sample with a non-finite value (kNoBad: none) */
  long long bad_h;             /* first hypercube whose sums overflowed (LLONG_MAX: none) */
  int tmax;                    /* the largest level (INT_MIN: no share anywhere) */
  long long total;             /* samples of the next allocation */
  AheadArgs next;              /* with AllocArgs' reset: the next iteration's (ahead.cu) */
};

/* What a record starts from: nothing found yet. */
__host__ __device__ inline void init_record(IterRecord *r)
{
  *r = IterRecord{};
  r->bad = kNoBad;
  r->bad_h = LLONG_MAX;
  r->tmax = INT_MIN;
}

constexpr int kAdaptThreads = 256;
constexpr int kRefineThreads = 512;
constexpr int kReallocThreads = 512;

/* adapt.cuh */

struct EstimateArgs {
  double *s1, *s2;             /* zeroed behind the read, for the next iteration */
  const long long *start;
  long long h0, h1, nh_uniform, nhcube;
  double V, shift;             /* 1 / nhcube, the iteration's shift */
  double *level;               /* NULL: no shares this iteration */
  double slope;
  IterRecord *rec;
  /* A vector integrand's (estimate_vec_kernel): per hypercube its nc
   * components' sums and the np sums of their products, and their shifts. */
  double *c1, *c2;             /* zeroed behind the read, as s1 and s2 */
  double cshift[STRATA_MAX_COMP];
  int nc;
};

struct AllocArgs {
  const double *level;
  long long *start;            /* nhcube + 1: start[0] = 0 stays */
  long long *count;            /* nhcube: the new counts' prefix sums in each block's range */
  unsigned long long *dshare;  /* nhcube: the free hypercubes' D, likewise */
  unsigned long long *btot;    /* 2 per block: the totals of its range */
  unsigned long long *hist;    /* STRATA_SHARE_BINS + 1: the last counts the none */
  const double *step;          /* 2^(r/128) (ladder.h) */
  long long nhcube, neval;
  IterRecord *rec;
  IterRecord *post;            /* or NULL: where the finished record goes (adapt.cuh) */
  /* Or NULL: the record of the next iteration, queued ahead (ahead.cu),
   * set to its start, and rec's next made for it. */
  IterRecord *reset;
};

struct RefineArgs {
  double *edges;               /* naxes x (ninc + 1), replaced */
  double *wsum;                /* dim x (ninc / group), zeroed behind the read */
  unsigned long long *wcnt;    /* the same (device counts), zeroed; or NULL and: */
  const double *wcount;        /* the same (counts from the host) */
  double *scratch;             /* naxes x 4 (ninc + 1) */
  int dim, ninc, shared;       /* ninc: the stored increments */
  int group;                   /* the map is every group-th stored edge (map.h) */
  double alpha;
  const IterRecord *rec;
};

/* exchange.cuh */

/* A hypercube shared by ranks: its slot in the buffer and its size. */
struct SharedHcube {
  long long h, n;
  int slot;
};

struct ExchangeArgs {
  double *x;
  int npart, nslot, nrank, rank;
  long long ncell;
  /* this rank's partial hypercubes (at most its first and its last) */
  int nmine;
  SharedHcube mine[2];
  double *s1, *s2;
  double *wsum;
  unsigned long long *wcnt;
  IterRecord *rec;
  /* after the sum: every shared hypercube, once */
  const SharedHcube *shared;
  int nshared;
  double V, shift, slope;
  double *level;        /* NULL: no reallocation this iteration */
  unsigned short *lv16; /* the levels in two bytes */
  const long long *seg; /* each rank's whole hypercubes [seg[r], seg[R + r]) */
  long long whole0, whole1; /* the hypercubes this rank holds whole */
  long long nhcube;

  __host__ __device__ long long tmax_at() const { return npart + 2LL * nslot; }
  __host__ __device__ long long map_at() const { return tmax_at() + nrank; }
  __host__ __device__ long long size(bool adapt) const
  {
    return map_at() + (adapt ? 2 * ncell : 0);
  }
};

__global__ void __launch_bounds__(kAdaptThreads)
    even_start_kernel(long long *start, long long nhcube, long long q, long long rem);
__global__ void __launch_bounds__(kAdaptThreads) xmap_kernel(double2 *xmap, const KernelArgs a);
__global__ void __launch_bounds__(kAdaptThreads) estimate_kernel(const EstimateArgs a);
__global__ void __launch_bounds__(kReallocThreads, 2)
    reallocate_kernel(const EstimateArgs ea, const AllocArgs a, int with_estimate);
__global__ void __launch_bounds__(kRefineThreads) refine_kernel(const RefineArgs a);
__global__ void __launch_bounds__(kAdaptThreads) pack_kernel(const ExchangeArgs a, bool adapt);
__global__ void __launch_bounds__(kAdaptThreads) pack_levels_kernel(const ExchangeArgs a);
__global__ void __launch_bounds__(kAdaptThreads) unpack_levels_kernel(const ExchangeArgs a);
__global__ void __launch_bounds__(kAdaptThreads) unpack_map_kernel(const ExchangeArgs a);
__global__ void finish_kernel(const ExchangeArgs a);
__global__ void split_samples_kernel(const long long *start, long long nhcube,
                                     const IterRecord *rec, int nsplit, int whole,
                                     long long *out);

/* estimate_vec_kernel for a.nc components (2 .. STRATA_MAX_COMP). */
void launch_estimate_vec(unsigned blocks, cudaStream_t q, const EstimateArgs &a);

/* The sampling kernel of a built-in integrand (kernels.cu), or NULL. */
typedef void (*kernel_fn)(const KernelArgs);
kernel_fn builtin_kernel(int id, int dim, int generic, bool adapt, int pts);
/* The peak search's evaluator of a built-in integrand (eval_kernel.cuh), or NULL. */
typedef void (*eval_fn)(const EvalArgs);
eval_fn builtin_eval_kernel(int id);
/* The channels' kernel of a built-in integrand (channel_kernel.cuh), or NULL. */
typedef void (*channel_fn)(const KernelArgs, const ChannelArgs);
channel_fn builtin_channel_kernel(int id);
/* The index of f among the built-in integrands, or -1. */
int builtin_id(strata_fn f);

/* Loads the module (CUDA loads kernels on their first use otherwise). */
/* The peak search's weights, largest first: keys sorted descending with
 * their values (stably, so equal weights keep the order of their sample
 * indices), and values[j] = first + j (CUB's radix sort, kernels.cu). */
cudaError_t sort_weights(void *tmp, size_t &bytes, const double *keys, double *keys_out,
                         const long long *vals, long long *vals_out, int64_t n, cudaStream_t q);
void launch_indices(long long *vals, long long first, long long n, unsigned blocks,
                    cudaStream_t q);

void load_module();

} // namespace strata_k
#endif
