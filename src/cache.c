#include "cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

/* mkdir -p: another rank may create any part at the same moment. */
static int make_dirs(const char *path)
{
  char buf[4096];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -1;
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
  return 0;
}

int strata_cache_dir(char *buf, size_t len)
{
  const char *d = getenv("STRATA_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  int n;
  if (d && *d) n = snprintf(buf, len, "%s", d);
  else if (x && *x) n = snprintf(buf, len, "%s/strata", x);
  else if (home && *home) n = snprintf(buf, len, "%s/.cache/strata", home);
  else
    return strata_error(STRATA_EIO, "no cache directory for compiled integrands: set "
                        "STRATA_CACHE_DIR (HOME is not set)");
  if (n < 0 || (size_t)n >= len)
    return strata_error(STRATA_EIO, "cache directory name too long: %s", d ? d : x ? x : home);
  if (make_dirs(buf) != 0)
    return strata_error(STRATA_EIO, "cannot create the cache directory %s (set "
                        "STRATA_CACHE_DIR): %s", buf, strerror(errno));
  return STRATA_OK;
}

/* Whether the file holds exactly key. */
static int key_matches(const char *path, const char *key, size_t keylen)
{
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int same = 1;
  char buf[8192];
  size_t off = 0, n;
  while (same && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    if (off + n > keylen || memcmp(buf, key + off, n) != 0) same = 0;
    off += n;
  }
  fclose(f);
  return same && off == keylen;
}

int strata_cache_lookup(const char *kind, const char *ext, const char *key, size_t keylen,
                        strata_cache_entry *e)
{
  memset(e, 0, sizeof *e);
  int rc = strata_cache_dir(e->dir, sizeof e->dir);
  if (rc != STRATA_OK) return rc;
  uint64_t h = strata_hash64(STRATA_HASH64_INIT, key, keylen);
  snprintf(e->artifact, sizeof e->artifact, "%s/%s-%016llx%s", e->dir, kind,
           (unsigned long long)h, ext);
  snprintf(e->keyfile, sizeof e->keyfile, "%s/%s-%016llx.key", e->dir, kind,
           (unsigned long long)h);
  /* pid alone is not unique across nodes sharing the directory. */
  char host[64] = "";
  gethostname(host, sizeof host - 1);
  snprintf(e->tmp, sizeof e->tmp, "%s.tmp.%s.%ld", e->artifact, host, (long)getpid());
  e->hit = access(e->artifact, R_OK) == 0 && key_matches(e->keyfile, key, keylen);
  return STRATA_OK;
}

int strata_cache_publish(strata_cache_entry *e, const char *key, size_t keylen)
{
  /* The artifact first: a reader that finds the new key finds its artifact.
   * (Two keys with one hash would overwrite each other's entries, and the
   * key check turns that into a recompile.) */
  if (rename(e->tmp, e->artifact) != 0) {
    int err = errno;
    unlink(e->tmp);
    return strata_error(STRATA_EIO, "cannot store %s in the cache: %s", e->artifact,
                        strerror(err));
  }
  char tmp[4400];
  snprintf(tmp, sizeof tmp, "%s.tmp%s", e->keyfile, strrchr(e->tmp, '.'));
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(key, 1, keylen, f) == keylen;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok || rename(tmp, e->keyfile) != 0) {
    int err = errno;
    unlink(tmp);
    /* The artifact is usable now; only later runs lose the cache. */
    fprintf(stderr, "strata: warning: cannot write %s (%s): the compiled integrand will "
            "not be reused\n", e->keyfile, strerror(err));
  }
  return STRATA_OK;
}
