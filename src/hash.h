/* FNV-1a over bytes, continued from h (start from STRATA_HASH64_INIT): the
 * one hash for job definitions, cache keys and the ranks' state checksum.
 * Not cryptographic; where a collision would matter the full key is
 * compared as well (cache.h). */
#ifndef STRATA_HASH_H
#define STRATA_HASH_H
#include <stddef.h>
#include <stdint.h>

#define STRATA_HASH64_INIT 0xcbf29ce484222325ULL

static inline uint64_t strata_hash64(uint64_t h, const void *data, size_t n)
{
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}
#endif
