/* Functions written once for the host and the device: plain C that nvcc
 * also compiles into kernels. */
#ifndef STRATA_HOSTDEV_H
#define STRATA_HOSTDEV_H
#ifdef __CUDACC__
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD static inline
#endif

/* A load from memory that nothing writes while the kernel runs: through the
 * read-only data cache on the device. */
#ifdef __CUDA_ARCH__
#define STRATA_LOAD(p) __ldg(p)
#else
#define STRATA_LOAD(p) (*(p))
#endif
#endif
