/* One error path for the whole library, in the spirit of gsl_error: every
 * failing function records a message for the calling thread and returns a
 * STRATA_E* code, so the CLI can print exactly one line. */
#ifndef STRATA_ERROR_H
#define STRATA_ERROR_H
#include "strata/strata.h"
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STRATA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define STRATA_PRINTF(a, b)
#endif

/* The message is one line of printable text: messages quote what users
 * wrote (keys, values, file names), and a control character in it, sent raw
 * to a terminal, would move the cursor or hide the rest.  Such characters
 * are written as C writes them: \r, \x01.  strata_escape (public) does the
 * same for text printed without strata_error. */
int strata_error(int code, const char *fmt, ...) STRATA_PRINTF(2, 3);
void strata_error_clear(void);
/* A public function given NULL where it needs something: STRATA_EINVAL,
 * "func: no what (NULL)".  STRATA_GIVEN returns it from the function. */
int strata_error_null(const char *func, const char *what);
#define STRATA_GIVEN(ptr, what)                                                             \
  do {                                                                                     \
    if (!(ptr)) return strata_error_null(__func__, what);                                  \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
