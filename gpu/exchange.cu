/* Several ranks' exchange of a stratified iteration (exchange.cuh's
 * kernels, comm/peers_cuda.h's sum and gather): which hypercubes each rank
 * holds whole and which it shares with a neighbour, from the ranks' split
 * of the samples (src/split.h), and the exchange queued behind the
 * estimate, with the adaptation every rank then makes alike. */
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

namespace {

/* Rank q's part of the iteration (the split sp): samples [i0, i1) in
 * hypercubes [h0, h1), of which [whole0, whole1) whole.  A partial
 * hypercube holds a split point strictly inside; its slot is that of the
 * first such point. */
struct RankPart {
  long long i0, i1, h0, h1, whole0, whole1;
};

RankPart rank_part(const strata_split *sp, int q)
{
  const int64_t *hs = sp->hs, *he = sp->he;
  RankPart p;
  int64_t i0, i1, h0, h1;
  strata_split_part(sp, q, &i0, &i1, &h0, &h1);
  p.i0 = i0;
  p.i1 = i1;
  p.h0 = h0;
  p.h1 = h1;
  if (p.i1 <= p.i0) {
    p.whole0 = p.whole1 = p.h0;
    return p;
  }
  const bool first_partial = p.i0 > hs[q] || he[q] > p.i1;
  const bool last_partial = p.h1 - 1 != p.h0 && p.i1 > hs[q + 1];
  p.whole0 = p.h0 + (first_partial ? 1 : 0);
  p.whole1 = p.h1 - (last_partial ? 1 : 0);
  if (p.whole1 < p.whole0) p.whole1 = p.whole0;
  return p;
}

/* The slot of a shared hypercube h: the first split point inside it. */
int shared_slot(const strata_split *sp, long long h)
{
  for (int k = 1; k < sp->nranks; k++)
    if (sp->h[k] == h && sp->first[k] > sp->hs[k]) return k - 1;
  return -1;
}

} // namespace

/* The exchange's plan for this iteration: every rank's whole hypercubes
 * and every shared one, uploaded; this rank's partial ones in xa. */
int plan_exchange(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                  ExchangeArgs *xa, cudaStream_t q)
{
  const strata_comm *c = strata_cuda_peers_comm(st->peers);
  const strata_split *sp = plan->split;
  const int R = c->size;
  if (!sp || sp->nranks != R)
    return strata_error(STRATA_EBACKEND, "cuda device %d: the iteration is split among %d "
                        "ranks, not the %d of the run", st->device, sp ? sp->nranks : 0, R);
  if (!st->h_seg.reserve(2 * (size_t)R) || !st->seg.reserve(2 * (size_t)R) ||
      !st->h_shared.reserve((size_t)R) || !st->shared.reserve((size_t)R))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                        st->device);
  memset(xa, 0, sizeof *xa);
  for (int k = 0; k < R; k++) {
    const RankPart p = rank_part(sp, k);
    st->h_seg.p[k] = p.whole0;
    st->h_seg.p[R + k] = p.whole1;
    if (k != c->rank) continue;
    xa->whole0 = p.whole0;
    xa->whole1 = p.whole1;
    const long long ends[2] = {p.h0, p.h1 - 1};
    for (int j = 0; j < 2 && p.i1 > p.i0; j++) {
      const long long h = ends[j];
      if ((h >= p.whole0 && h < p.whole1) || (j == 1 && h == p.h0)) continue;
      const int slot = shared_slot(sp, h);
      if (slot < 0)
        return strata_error(STRATA_EBACKEND, "cuda device %d: hypercube %lld is partial but "
                            "holds no split point", st->device, h);
      xa->mine[xa->nmine++] = SharedHcube{h, 0, slot};
    }
  }
  int n = 0;
  for (int k = 1; k < R; k++)
    if (sp->first[k] > sp->hs[k] && shared_slot(sp, sp->h[k]) == k - 1)
      st->h_shared.p[n++] = SharedHcube{sp->h[k], sp->he[k] - sp->hs[k], k - 1};
  cudaMemcpyAsync(st->seg.p, st->h_seg.p, 2 * (size_t)R * sizeof(long long),
                  cudaMemcpyHostToDevice, q);
  if (n > 0)
    cudaMemcpyAsync(st->shared.p, st->h_shared.p, (size_t)n * sizeof(SharedHcube),
                    cudaMemcpyHostToDevice, q);
  const int nc = plan->ncomp;
  xa->npart = nc == 1 ? 2 : nc + nc * (nc + 1) / 2;
  xa->nslot = R - 1;
  xa->nrank = R;
  xa->rank = c->rank;
  xa->ncell = (long long)plan->problem->dim * strata_map_res(plan->map);
  xa->shared = st->shared.p;
  xa->nshared = n;
  xa->seg = st->seg.p;
  xa->nhcube = s->nhcube;
  xa->V = 1.0 / (double)s->nhcube;
  xa->shift = plan->shift;
  xa->slope = s->ladder ? s->ladder->slope : 0.0;
  return STRATA_OK;
}

/* The ranks' exchange and what follows it, queued behind the estimate of
 * this rank's whole hypercubes: the sum, the levels' gather, the shared
 * hypercubes, and adapting, the map and the allocation as one GPU makes
 * them from the same sums and levels; then where the next iteration
 * splits. */
int launch_exchange(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                    const strata_map *g, ExchangeArgs xa, bool realloc, bool refine)
{
  cudaStream_t q = st->stream;
  const bool adapt = plan->adapt != 0;
  const int nsplit = plan->split->nranks;
  const size_t nx = (size_t)xa.size(adapt);
  if (!st->xbuf.reserve(nx) || (realloc && !st->lv16.reserve((size_t)s->nhcube)) ||
      (realloc && (!st->split.reserve(4 * ((size_t)nsplit + 1)) ||
                   !st->h_split.reserve(4 * ((size_t)nsplit + 1)))))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                        st->device);
  xa.x = st->xbuf.p;
  xa.s1 = st->s1.p;
  xa.s2 = st->s2.p;
  xa.wsum = st->wsum.p;
  xa.wcnt = st->wcnt.p;
  xa.rec = st->rec.p;
  xa.level = realloc ? st->level.p : nullptr;
  xa.lv16 = st->lv16.p;
  const unsigned cblocks = (unsigned)grid_for(adapt ? xa.ncell : 1, kAdaptThreads, st->nsm);
  if (realloc)
    pack_levels_kernel<<<(unsigned)grid_for(xa.whole1 - xa.whole0, kAdaptThreads, st->nsm),
                         kAdaptThreads, 0, q>>>(xa);
  cudaMemsetAsync(xa.x, 0, nx * sizeof(double), q);
  pack_kernel<<<cblocks, kAdaptThreads, 0, q>>>(xa, adapt);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, "launching the exchange's kernels", st->device);
  int rc = strata_cuda_peers_allreduce(st->peers, xa.x, nx, q);
  if (rc != STRATA_OK) return rc;
  if (realloc) {
    const int R = xa.nrank;
    int64_t lo[R], hi[R];
    for (int k = 0; k < R; k++) {
      lo[k] = 2 * st->h_seg.p[k];
      hi[k] = 2 * st->h_seg.p[R + k];
    }
    rc = strata_cuda_peers_gather(st->peers, (unsigned char *)xa.lv16, lo, hi, q);
    if (rc != STRATA_OK) return rc;
    unpack_levels_kernel<<<(unsigned)grid_for(s->nhcube, kAdaptThreads, st->nsm), kAdaptThreads,
                           0, q>>>(xa);
  }
  finish_kernel<<<1, 1, 0, q>>>(xa);
  if (adapt) {
    unpack_map_kernel<<<cblocks, kAdaptThreads, 0, q>>>(xa);
    cudaEventRecord(st->ev_map, q);
  }
  if (realloc) {
    launch_allocation(st, s, q, nullptr, st->rec.p, nullptr);
    split_samples_kernel<<<1, 128, 0, q>>>(st->start.p, s->nhcube, st->rec.p, nsplit,
                                           xa.npart != 2, st->split.p);
    cudaMemcpyAsync(st->h_split.p, st->split.p, 4 * ((size_t)nsplit + 1) * sizeof(long long),
                    cudaMemcpyDeviceToHost, q);
    st->split_new = true;
  }
  if (refine) {
    cudaStreamWaitEvent(st->stream2, st->ev_map, 0);
    launch_refine(st, g, plan->alpha, st->stream2, st->rec.p);
    cudaEventRecord(st->ev_join, st->stream2);
    cudaStreamWaitEvent(q, st->ev_join, 0);
  }
  e = cudaGetLastError();
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "launching the exchange's kernels", st->device);
}

} // namespace strata_cuda
