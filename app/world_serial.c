/* The job communicator of a build without MPI: one rank, nobody to talk to. */
#include <stdlib.h>
#include <unistd.h>

#include "comm.h"
#include "world.h"
#include "error.h"

int strata_comm_world_open(int *argc, char ***argv, strata_comm **out)
{
  (void)argc;
  (void)argv;
  *out = strata_comm_serial();
  return *out ? STRATA_OK : strata_error(STRATA_ENOMEM, "out of memory");
}

const char *strata_comm_world_how(void) { return "serial: built without MPI"; }

void strata_comm_world_close(strata_comm *c, int status)
{
  (void)status;
  strata_comm_free(c);
}

void strata_comm_abort(strata_comm *c, int status)
{
  (void)c;
  exit(status);
}

void strata_comm_where(strata_comm *c, char *buf, int len)
{
  (void)c;
  if (gethostname(buf, (size_t)len) != 0) buf[0] = '\0';
  buf[len - 1] = '\0';
}
