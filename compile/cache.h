/* The on-disk cache of compiled integrands (shared objects for the CPU,
 * cubins for the GPU).
 *
 * An entry is named by a 64-bit hash of its key (everything the artifact
 * depends on: source text, compiler, options, architecture, strata
 * version), and the full key is stored beside it and compared on every
 * lookup, so a hash collision costs a recompile, never a wrong integrand.
 * Entries are published by rename(), so ranks that compile the same
 * integrand at once each write their own temporary file and readers see
 * either no entry or a whole one.
 *
 * What is in the cache is run as the user's code, so nothing in it is
 * trusted unless only the user could have put it there: the directory
 * must be the user's own and writable by no one else, and so must every
 * directory above it (or be root's, and sticky where others may write, as
 * /tmp); a symbolic link on the way must be the user's or root's, and the
 * cache directory itself is never one; every file is opened without
 * following links and checked by its descriptor (a regular file of the
 * user's, writable by no one else).
 * The cache is created 0700 and its files 0600: keys hold the source. */
#ifndef STRATA_CACHE_H
#define STRATA_CACHE_H
#include <stddef.h>
#include <stdint.h>

#include "hash.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  char dir[4096];       /* the cache directory, created and checked (no links in it) */
  char artifact[4200];  /* <dir>/<kind>-<hash><ext> */
  char keyfile[4200];   /* <dir>/<kind>-<hash>.key */
  char tmp[4300];       /* a temporary name of this process for the artifact */
  int hit;              /* the artifact exists, is the user's own, and its stored key matches */
} strata_cache_entry;

/* $STRATA_CACHE_DIR, else $XDG_CACHE_HOME/strata, else $HOME/.cache/strata:
 * followed one component at a time, each checked as above before the next
 * is taken (and created, 0700, where missing), and given as a path without
 * symbolic links.  An unsafe directory or link is an error naming it and
 * why. */
int strata_cache_dir(char *buf, size_t len);

/* Looks up the entry for key; STRATA_OK with e filled (hit or not), or an
 * error when the cache directory cannot be created or is not safe, or an
 * entry's file is not the user's own. */
int strata_cache_lookup(const char *kind, const char *ext, const char *key, size_t keylen,
                        strata_cache_entry *e);
/* The artifact was written completely to e->tmp (a name in the cache, or
 * in a private directory inside it): if it is a regular file of the user's
 * with no other name, make it the entry (0600). */
int strata_cache_publish(strata_cache_entry *e, const char *key, size_t keylen);

/* Opens a file of the cache for reading (O_NOFOLLOW) and checks it by its
 * descriptor: a regular file owned by the user, writable by no one else.
 * Returns the descriptor; -1 with errno ENOENT when there is none; -2 with
 * the error set (naming the file) when it is there but not to be trusted. */
int strata_cache_open(const char *path);

/* Writes text to path through a new 0600 temporary file renamed over it. */
int strata_cache_write(const char *path, const char *text, size_t len);

/* Checks a directory inside the cache as the cache itself. */
int strata_cache_check_dir(const char *path);
#ifdef __cplusplus
}
#endif
#endif
