/* Functions written once for the host and the device: plain C that nvcc
 * also compiles into kernels. */
#ifndef STRATA_HOSTDEV_H
#define STRATA_HOSTDEV_H
#ifdef __CUDACC__
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD static inline
#endif
#endif
