#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

void strata_escape(char *dst, size_t size, const char *src)
{
  static const char named[] = "\a\b\t\n\v\f\r", letter[] = "abtnvfr";
  size_t o = 0;
  if (!dst || !size) return;
  if (!src) src = "(null)";
  for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
    char e[5];
    const char *k = strchr(named, *p);
    if (k) snprintf(e, sizeof e, "\\%c", letter[k - named]);
    else if (*p < 0x20 || *p == 0x7f) snprintf(e, sizeof e, "\\x%02x", *p);
    else e[0] = (char)*p, e[1] = '\0';
    size_t n = strlen(e);
    if (o + n >= size) break; /* never half an escape */
    memcpy(dst + o, e, n);
    o += n;
  }
  dst[o] = '\0';
}

int strata_error(int code, const char *fmt, ...)
{
  char raw[sizeof last_error];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  strata_escape(last_error, sizeof last_error, raw);
  return code;
}

int strata_error_null(const char *func, const char *what)
{
  return strata_error(STRATA_EINVAL, "%s: no %s (NULL)", func, what);
}

void strata_error_clear(void) { last_error[0] = '\0'; }

const char *strata_last_error(void) { return last_error; }
