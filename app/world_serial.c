/* The ranks of a build without MPI: one, nobody to talk to. */
#include <stdlib.h>

#include "world.h"

int strata_world_open(int *argc, char ***argv, strata_world *w)
{
  (void)argc;
  (void)argv;
  w->rank = 0;
  w->size = 1;
  w->peers = NULL;
  return STRATA_OK;
}

const char *strata_world_how(void) { return "serial: built without MPI"; }

int strata_world_allgather(strata_world *w, int mine, int *all)
{
  (void)w;
  all[0] = mine;
  return 0;
}

void strata_world_close(strata_world *w, int status)
{
  (void)w;
  (void)status;
}

void strata_world_abort(strata_world *w, int status)
{
  (void)w;
  exit(status);
}
