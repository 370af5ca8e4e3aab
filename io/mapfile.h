/* A trained map taken from another run's file ([vegas] map): the newest map
 * of a checkpoint (with its allocation) or of a convergence log (its last
 * snapshot; a log has no allocation). */
#ifndef STRATA_MAPFILE_H
#define STRATA_MAPFILE_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *kind;        /* "checkpoint" or "log" */
  char *definition;        /* the definition of the job that wrote it */
  int itn;                 /* the map is the one after this iteration */
  int naxes, ninc;         /* naxes x (ninc + 1) unit edges */
  double *edges;
  int64_t nhcube;          /* 0: no allocation */
  int64_t *nh;
} strata_mapfile;

/* Reads path, which must be a regular file of the user's own that no one
 * else may write (not a symbolic link), an HDF5 file, and a strata
 * checkpoint or log holding a map.  Errors name path and the reason. */
int strata_mapfile_read(const char *path, strata_mapfile **out);
void strata_mapfile_free(strata_mapfile *m);

/* Whether the file's map can start the job whose definition is given: the
 * same integral.dim, integral.lower and integral.upper.  Otherwise an
 * error "KEY = VALUE there, VALUE here" (the caller names the file). */
int strata_mapfile_fits(const strata_mapfile *m, const char *definition);
#endif
