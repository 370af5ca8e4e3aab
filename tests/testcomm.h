/* Ranks as threads of the test process: a communicator whose sum adds the
 * ranks' buffers in rank order and whose gather copies each rank's slice,
 * so that a multi-rank run can be driven and inspected inside one test.
 * Every call's length is recorded, to see what would cross the network. */
#ifndef STRATA_TESTCOMM_H
#define STRATA_TESTCOMM_H
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "backend_cpu.h"
#include "run.h"

#define TESTCOMM_MAXRANK 8
#define TESTCOMM_MAXCALL 256

typedef struct {
  pthread_barrier_t bar;
  int size;
  double *bufs[TESTCOMM_MAXRANK];
  /* Rank 0's calls in order: doubles summed, or (negative) doubles gathered. */
  int64_t calls[TESTCOMM_MAXCALL];
  int ncall;
} testcomm;

static inline void testcomm_note(testcomm *sh, const strata_comm *c, int64_t n)
{
  if (c->rank == 0 && sh->ncall < TESTCOMM_MAXCALL) sh->calls[sh->ncall++] = n;
}

static inline int testcomm_allreduce(strata_comm *c, double *buf, size_t n)
{
  testcomm *sh = c->self;
  testcomm_note(sh, c, (int64_t)n);
  double *sum = calloc(n > 0 ? n : 1, sizeof(double));
  if (!sum) return -1;
  sh->bufs[c->rank] = buf;
  pthread_barrier_wait(&sh->bar);
  for (int r = 0; r < c->size; r++)
    for (size_t i = 0; i < n; i++) sum[i] += sh->bufs[r][i];
  pthread_barrier_wait(&sh->bar);
  memcpy(buf, sum, sizeof(double) * n);
  free(sum);
  return 0;
}

static inline int testcomm_allgather(strata_comm *c, double *buf, const int64_t *off)
{
  testcomm *sh = c->self;
  testcomm_note(sh, c, -off[c->size]);
  sh->bufs[c->rank] = buf;
  pthread_barrier_wait(&sh->bar);
  for (int r = 0; r < c->size; r++)
    if (r != c->rank)
      memcpy(buf + off[r], sh->bufs[r] + off[r], sizeof(double) * (size_t)(off[r + 1] - off[r]));
  pthread_barrier_wait(&sh->bar);
  return 0;
}

static inline int testcomm_broadcast(strata_comm *c, void *buf, size_t n, int root)
{
  testcomm *sh = c->self;
  testcomm_note(sh, c, 0);
  sh->bufs[c->rank] = buf;
  pthread_barrier_wait(&sh->bar);
  if (c->rank != root) memcpy(buf, sh->bufs[root], n);
  pthread_barrier_wait(&sh->bar);
  return 0;
}

typedef struct {
  strata_comm comm;
  strata_problem pr;
  strata_params p;
  strata_result res;
  uint64_t state;   /* strata_run_state_hash at the end */
  int rc;
  strata_backend *(*new_backend)(void); /* NULL: one CPU thread */
} testcomm_rank;

static inline void *testcomm_rank_main(void *arg)
{
  testcomm_rank *j = arg;
  strata_backend *be = j->new_backend ? j->new_backend() : strata_backend_cpu_new(1);
  strata_run *r = NULL;
  j->rc = strata_run_alloc(&j->pr, &j->p, be, &j->comm, &r);
  if (j->rc == STRATA_OK) j->rc = strata_run_integrate(r, NULL, NULL, &j->res);
  if (j->rc == STRATA_OK) j->state = strata_run_state_hash(r);
  strata_run_free(r);
  strata_backend_free(be);
  return NULL;
}

/* Runs the problem on n thread ranks (n <= TESTCOMM_MAXRANK) into on_ranks[0..n),
 * each with a backend of its own from new_backend (NULL: one CPU thread). */
static inline void testcomm_run_on(testcomm *sh, int n, const strata_problem *pr,
                                   const strata_params *p, testcomm_rank *on_ranks,
                                   strata_backend *(*new_backend)(void))
{
  memset(sh, 0, sizeof *sh);
  sh->size = n;
  pthread_barrier_init(&sh->bar, NULL, (unsigned)n);
  pthread_t tid[TESTCOMM_MAXRANK];
  for (int r = 0; r < n; r++) {
    on_ranks[r] = (testcomm_rank){.comm = {.rank = r, .size = n, .local_rank = r,
                                       .local_size = n, .self = sh,
                                       .allreduce_sum = testcomm_allreduce,
                                       .allgather = testcomm_allgather,
                                       .broadcast = testcomm_broadcast},
                              .pr = *pr, .p = *p, .new_backend = new_backend};
    if (pthread_create(&tid[r], NULL, testcomm_rank_main, &on_ranks[r]) != 0) abort();
  }
  for (int r = 0; r < n; r++) pthread_join(tid[r], NULL);
  pthread_barrier_destroy(&sh->bar);
}

static inline void testcomm_run(testcomm *sh, int n, const strata_problem *pr,
                                const strata_params *p, testcomm_rank *on_ranks)
{
  testcomm_run_on(sh, n, pr, p, on_ranks, NULL);
}
#endif
