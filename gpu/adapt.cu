/* The estimate and the adaptation queued behind the sampling kernel
 * (adapt.cuh's kernels): the stratified estimate of this rank's
 * hypercubes, and with one rank the new allocation and the refined map,
 * made where the sums are, so that one record comes back. */
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

/* The new allocation from the levels of every hypercube in st->level (and
 * rec's tmax): counts and start[] on the device, in one cooperative
 * kernel (adapt.cuh's reallocate_kernel), which also makes the estimate
 * ea where given and then writes the finished record into the host's
 * h_rec[1 + slot] (rec is st->rec[slot]); with reset, the record of the
 * next iteration, queued ahead (ahead.cu), set to its start. */
void launch_allocation(cuda_state *st, const strata_strat *s, cudaStream_t q,
                       const EstimateArgs *ea, IterRecord *rec, IterRecord *reset)
{
  AllocArgs aa;
  aa.level = st->level.p;
  aa.start = st->start.p;
  aa.count = st->count.p;
  aa.dshare = st->dshare.p;
  aa.btot = st->btot.p;
  aa.hist = st->hist.p;
  aa.step = st->step.p;
  aa.nhcube = s->nhcube;
  aa.neval = s->neval;
  aa.rec = rec;
  aa.reset = reset;
  /* With the estimate the record is the iteration's: the kernel posts it
   * to the host (finish_resident). */
  aa.post = ea ? &st->h_rec.p[1 + (rec - st->rec.p)] : nullptr;
  st->rec_posted = ea != nullptr;
  EstimateArgs none;
  memset(&none, 0, sizeof none);
  int with_estimate = ea != nullptr;
  void *args[] = {const_cast<EstimateArgs *>(ea ? ea : &none), &aa, &with_estimate};
  cudaLaunchCooperativeKernel((const void *)reallocate_kernel, dim3((unsigned)st->realloc_blocks),
                              dim3(kReallocThreads), args, 0, q);
}

/* The map refined from the sums in st->wsum and st->wcnt, which it zeroes
 * (not where rec names a bad sample). */
void launch_refine(cuda_state *st, const strata_map *g, double alpha, cudaStream_t q,
                   const IterRecord *rec)
{
  RefineArgs ra;
  ra.edges = st->edges.p;
  ra.wsum = st->wsum.p;
  ra.wcnt = st->wcnt.p;
  ra.wcount = nullptr;
  ra.scratch = st->refine_scratch.p;
  ra.dim = g->dim;
  ra.ninc = g->ninc;
  ra.shared = g->shared;
  ra.group = g->group;
  ra.alpha = alpha;
  ra.rec = rec;
  refine_kernel<<<(unsigned)strata_map_naxes(g), kRefineThreads, 0, q>>>(ra);
  st->map_ver++;
}

/* The estimate into rec, and with one rank the new allocation and map,
 * queued behind the sampling kernel; reset: as launch_allocation's. */
int launch_resident(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                    const strata_map *g, long long nh_uniform, long long whole0, long long whole1,
                    bool realloc, bool refine, IterRecord *rec, IterRecord *reset)
{
  cudaStream_t q = st->stream;
  EstimateArgs ea;
  ea.s1 = st->s1.p;
  ea.s2 = st->s2.p;
  ea.start = st->start.p;
  ea.h0 = whole0;
  ea.h1 = whole1;
  ea.nh_uniform = nh_uniform;
  ea.V = 1.0 / (double)s->nhcube;
  ea.nhcube = s->nhcube;
  ea.shift = plan->shift;
  ea.level = plan->reallocate ? st->level.p : nullptr;
  ea.slope = s->ladder ? s->ladder->slope : 0.0;
  ea.rec = rec;
  ea.nc = plan->ncomp;
  ea.c1 = st->c1.p;
  ea.c2 = st->c2.p;
  for (int c = 0; ea.nc > 1 && c < ea.nc; c++) ea.cshift[c] = plan->cshift[c];
  const unsigned blocks = (unsigned)grid_for(whole1 - whole0, kAdaptThreads, st->nsm);
  if (ea.nc > 1) launch_estimate_vec(blocks, q, ea);
  if (realloc) launch_allocation(st, s, q, &ea, rec, reset);
  else estimate_kernel<<<blocks, kAdaptThreads, 0, q>>>(ea);
  if (refine) {
    /* The map's refinement needs only the map sums: it runs beside the
     * estimate and the allocation, on a stream of its own. */
    cudaStreamWaitEvent(st->stream2, st->ev1, 0);
    launch_refine(st, g, plan->alpha, st->stream2, rec);
    cudaEventRecord(st->ev_join, st->stream2);
    cudaStreamWaitEvent(q, st->ev_join, 0);
  }
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "launching the iteration's kernels", st->device);
}

} // namespace strata_cuda
