/* One error path for the whole library, in the spirit of gsl_error: every
 * failing function records a message for the calling thread and returns a
 * STRATA_E* code, so the CLI can print exactly one line. */
#ifndef STRATA_ERROR_H
#define STRATA_ERROR_H
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define STRATA_PRINTF(a, b)
#endif

int strata_error(int code, const char *fmt, ...) STRATA_PRINTF(2, 3);
void strata_error_clear(void);

#ifdef __cplusplus
}
#endif
#endif
