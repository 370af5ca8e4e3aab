#include "message.h"

#include <stdarg.h>
#include <stdio.h>

#include "strata/strata.h"

static char message[2048];

int app_error(int code, const char *fmt, ...)
{
  char raw[sizeof message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  /* Messages quote what users typed: one printable line, as the library's. */
  strata_escape(message, sizeof message, raw);
  return code;
}

int app_take_error(int code)
{
  snprintf(message, sizeof message, "%s", strata_last_error());
  return code;
}

const char *app_message(void) { return message; }
