#include "stamp.h"

#include <stdatomic.h>

static atomic_uint_fast64_t counter = 1;

uint64_t strata_stamp_next(void) { return (uint64_t)atomic_fetch_add(&counter, 1); }
