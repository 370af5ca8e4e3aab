/* The CPU backend: strata_backend (src/backend.h) on this process's
 * threads. */
#ifndef STRATA_BACKEND_CPU_H
#define STRATA_BACKEND_CPU_H
#include "backend.h"
#ifdef __cplusplus
extern "C" {
#endif

/* nthreads 0: all available.  NULL, with strata_last_error() set, without
 * memory. */
strata_backend *strata_backend_cpu_new(int nthreads);
#ifdef __cplusplus
}
#endif
#endif
