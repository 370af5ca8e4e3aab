#include "comm.h"

#include <stdlib.h>

static int serial_allreduce(strata_comm *c, double *buf, size_t n)
{
  (void)c;
  (void)buf;
  (void)n;
  return 0;
}

static int serial_allgather(strata_comm *c, double *buf, const int64_t *off)
{
  (void)c;
  (void)buf;
  (void)off;
  return 0;
}

static int serial_broadcast(strata_comm *c, void *buf, size_t n, int root)
{
  (void)c;
  (void)buf;
  (void)n;
  (void)root;
  return 0;
}

static void serial_free(strata_comm *c) { free(c); }

strata_comm *strata_comm_serial(void)
{
  strata_comm *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->rank = 0;
  c->size = 1;
  c->local_rank = 0;
  c->local_size = 1;
  c->allreduce_sum = serial_allreduce;
  c->allgather = serial_allgather;
  c->broadcast = serial_broadcast;
  c->free = serial_free;
  return c;
}

void strata_comm_free(strata_comm *c)
{
  if (c && c->free) c->free(c);
}
