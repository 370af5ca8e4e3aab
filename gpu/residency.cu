/* What the device holds of the host's map and allocation.  The device
 * takes the host's copies when they are newer (their generation is not the
 * one its copies carry); after it adapts them itself, its copies are the
 * newer, the host's stay behind and the record says so, and pull brings
 * them back when the host needs them.  The host's structs carry only
 * their generation: the record is the backend's. */
#include <string.h>

#include "state.cuh"
extern "C" {
#include "stamp.h"
}

namespace strata_cuda {

namespace {

/* Whether the device holds a newer map than g, a newer allocation than s. */
bool map_ahead(const cuda_state *st, const strata_map *g)
{
  return st->map_newer && st->map_gen == g->generation;
}

bool strat_ahead(const cuda_state *st, const strata_strat *s)
{
  return st->strat_newer && st->strat_gen == s->generation;
}

/* The host's map and allocation once the device has made newer ones
 * (refined, reallocated with total samples): new generations, which the
 * device's copies carry, recorded as newer than the host's. */
void mark_adapted(cuda_state *st, strata_map *g, strata_strat *s, bool refined,
                  bool reallocated, long long total)
{
  if (refined) {
    g->generation = strata_stamp_next();
    st->map_gen = g->generation;
    st->map_newer = true;
  }
  if (reallocated) {
    s->generation = strata_stamp_next();
    s->even = 0;
    s->total = total;
    st->strat_gen = s->generation;
    st->strat_newer = true;
  }
}

} // namespace

/* start[h] where the host knows it: of an allocation the device holds
 * newer, only its ends (-1 for another h). */
long long start_known(const cuda_state *st, const strata_strat *s, int64_t h)
{
  if (strat_ahead(st, s) && h != 0 && h != s->nhcube) return -1;
  return strata_strat_start_at(s, h);
}

/* The host's map, and with allocation its allocation, onto the device where
 * the device holds older ones.  The first, even allocation is a formula:
 * made here, not copied; any other goes through page-locked staging, locked
 * only once an allocation has to cross (milliseconds per megabyte, more
 * than a short run). */
int upload_state(cuda_state *st, const strata_map *g, const strata_strat *s, bool allocation,
                 cudaStream_t q)
{
  cudaError_t e;
  if (st->map_gen != g->generation) {
    const size_t nedges = (size_t)strata_map_naxes(g) * (size_t)(g->ninc + 1);
    e = cudaMemcpyAsync(st->edges.p, g->edges, nedges * sizeof(double), cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the map", st->device);
    st->map_gen = g->generation;
    st->map_newer = false;
    st->map_ver++;
  }
  if (!allocation || st->strat_gen == s->generation) return STRATA_OK;
  const size_t nstart = (size_t)s->nhcube + 1;
  if (s->even) {
    even_start_kernel<<<(unsigned)grid_for(s->nhcube + 1, kAdaptThreads, st->nsm), kAdaptThreads,
                        0, q>>>(st->start.p, s->nhcube, s->even_q, s->even_rem);
  } else {
    if (!st->h_start.reserve(nstart))
      return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock %zu MB of host memory "
                          "for transfers", st->device, nstart * 8 >> 20);
    memcpy(st->h_start.p, s->start, nstart * sizeof(long long));
    e = cudaMemcpyAsync(st->start.p, st->h_start.p, nstart * sizeof(long long),
                        cudaMemcpyHostToDevice, q);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the allocation", st->device);
  }
  st->strat_gen = s->generation;
  st->strat_newer = false;
  return STRATA_OK;
}

/* After a plan that adapted on the device (STRATA_ADAPT_BACKEND: one
 * rank, or ranks that exchanged there), only the host's bookkeeping is
 * left, with where the ranks' next samples split; otherwise (sums that
 * came back to the host: ranks without peers on their devices) the host
 * adapts its own copies, and the next iteration uploads what changed. */
int cuda_adapt(strata_backend *b, const strata_plan *plan, strata_map *g, strata_strat *s)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const bool here = adapts_here(plan);
  const bool split_new = here && st->split_new && plan->reallocate && plan->split;
  st->split_new = false;
  if (!here) {
    int rc = cuda_pull(b, g, s);
    return rc != STRATA_OK ? rc : strata_backend_host_adapt(b, plan, g, s);
  }
  mark_adapted(st, g, s, plan->refine != 0, plan->reallocate != 0, st->adapted_total);
  if (split_new) {
    strata_split *sp = plan->split;
    memcpy(sp->h, st->h_split.p, 4 * ((size_t)sp->nranks + 1) * sizeof(int64_t));
    sp->of = s->generation;
  }
  return STRATA_OK;
}

int cuda_pull(strata_backend *b, strata_map *g, strata_strat *s)
{
  strata_strat_materialize(s); /* (the even allocation is the host's to write) */
  cuda_state *st = static_cast<cuda_state *>(b->self);
  const bool map = map_ahead(st, g), strat = strat_ahead(st, s);
  if (!map && !strat) return STRATA_OK;
  /* With the next iteration queued (ahead.cu), beside it, behind the
   * adaptation it reads from: the copies need not wait for its sampling. */
  cudaStream_t q = st->ahead.on ? st->stream2 : st->stream;
  cudaError_t e = cudaSetDevice(st->device);
  if (e == cudaSuccess && st->ahead.on) e = cudaStreamWaitEvent(q, st->ev_tail, 0);
  if (e == cudaSuccess && map)
    e = cudaMemcpyAsync(g->edges, st->edges.p,
                        (size_t)strata_map_naxes(g) * (g->ninc + 1) * sizeof(double),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess && strat)
    e = cudaMemcpyAsync(s->start, st->start.p, ((size_t)s->nhcube + 1) * sizeof(long long),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "copying the map and allocation back", st->device);
  if (strat)
    for (int64_t h = 0; h < s->nhcube; h++) s->nh[h] = s->start[h + 1] - s->start[h];
  if (map) st->map_newer = false;
  if (strat) st->strat_newer = false;
  return STRATA_OK;
}

} // namespace strata_cuda
