/* Users' integrands on the GPU: the sampling kernel template of
 * sample_kernel.cuh and the peak search's evaluator of eval_kernel.cuh,
 * instantiated for the user's code and compiled at run
 * time with NVRTC to a cubin for this device.  Cubins are cached on disk
 * (compile/cache.h) by a hash of the whole translation unit, the NVRTC version,
 * the options and the architecture, and in memory for the process. */
#ifndef STRATA_JIT_H
#define STRATA_JIT_H
#include "usercode.h"

struct strata_jit;
typedef struct strata_jit strata_jit;

strata_jit *strata_jit_new(int device);
void strata_jit_free(strata_jit *j);
/* The kernel sample_kernel<user, dim, adapt, pts, ncomp>, loaded on the
 * device (its twin of the other adapt compiled and loaded beside it, for
 * later): *kernel is a cudaKernel_t, to pass (as const void *) to
 * cudaLaunchKernel.  Compile errors name the user's file and line. */
int strata_jit_kernel(strata_jit *j, const strata_source *src, int dim, bool adapt, int pts,
                      const void **kernel);
/* The peak search's evaluator eval_kernel<user, ncomp> (eval_kernel.cuh),
 * from the same program as the sampling kernels of src and dim: loaded
 * with them, or compiled with Philox's where none are yet. */
int strata_jit_eval_kernel(strata_jit *j, const strata_source *src, int dim, const void **kernel);
/* The peak search's channels' kernel channel_kernel<user, ncomp>
 * (channel_kernel.cuh), from the program of the search's sampling kernels
 * (kPhiloxTop) of src and dim. */
int strata_jit_channel_kernel(strata_jit *j, const strata_source *src, int dim,
                              const void **kernel);
/* Seconds spent compiling or loading kernels so far, and whether the last
 * one came from the disk cache. */
double strata_jit_build_s(const strata_jit *j);
int strata_jit_last_cached(const strata_jit *j);
#endif
