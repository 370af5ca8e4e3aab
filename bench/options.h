/* Numbers on the benchmarks' command lines: the whole argument must be the
 * number, inside the option's range, or the option is refused. */
#ifndef STRATA_BENCH_OPTIONS_H
#define STRATA_BENCH_OPTIONS_H

#include <stdlib.h>

/* 0 when all of s is a number in [lo, hi] (so not NaN, not an infinity
 * unless hi is one), else -1. */
static inline int number_arg(const char *s, double lo, double hi, double *v)
{
  char *end;
  *v = strtod(s, &end);
  return end != s && *end == '\0' && *v >= lo && *v <= hi ? 0 : -1;
}

/* The same for a whole number in base 10. */
static inline int whole_arg(const char *s, long lo, long hi, long *v)
{
  char *end;
  *v = strtol(s, &end, 10);
  return end != s && *end == '\0' && *v >= lo && *v <= hi ? 0 : -1;
}

#endif
