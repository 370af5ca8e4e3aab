/* The on-disk cache of compiled integrands (shared objects for the CPU,
 * cubins for the GPU).
 *
 * An entry is named by a 64-bit hash of its key (everything the artifact
 * depends on: source text, compiler, options, architecture, strata
 * version), and the full key is stored beside it and compared on every
 * lookup, so a hash collision costs a recompile, never a wrong integrand.
 * Entries are published by rename(), so ranks that compile the same
 * integrand at once each write their own temporary file and readers see
 * either no entry or a whole one. */
#ifndef STRATA_CACHE_H
#define STRATA_CACHE_H
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char dir[4096];       /* the cache directory, created */
  char artifact[4200];  /* <dir>/<kind>-<hash><ext> */
  char keyfile[4200];   /* <dir>/<kind>-<hash>.key */
  char tmp[4300];       /* a temporary name of this process for the artifact */
  int hit;              /* the artifact exists and its stored key matches */
} strata_cache_entry;

/* $STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else $HOME/.cache/strata. */
int strata_cache_dir(char *buf, size_t len);

/* Looks up the entry for key; STRATA_OK with e filled (hit or not), or an
 * error when the cache directory cannot be created. */
int strata_cache_lookup(const char *kind, const char *ext, const char *key, size_t keylen,
                        strata_cache_entry *e);
/* The artifact was written completely to e->tmp: make it the entry. */
int strata_cache_publish(strata_cache_entry *e, const char *key, size_t keylen);
#ifdef __cplusplus
}
#endif
#endif
