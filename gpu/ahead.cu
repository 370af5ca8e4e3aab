/* Adapting iterations of one rank overlap (cuda_state's ahead): where the
 * plan says that the next iteration, should the run go on, adapts here as
 * this one does (src/plan.h's next_adapts_alike), its sampling kernel is
 * queued behind this one's allocation and refinement before the host
 * waits for this one's record.  The device then goes from one iteration's
 * allocation straight into the next one's sampling, and the host's turn
 * (reading the record, the run's bookkeeping, the next plan) happens
 * while the device samples.  What the host would pass that depends on
 * this iteration's outcome, the device passes instead: the new
 * allocation's samples, and the shift and map scale by the plan's rules
 * from this estimate (adapt.cuh's finish_record).  The next plan takes the
 * queued kernel only if the kernel's arguments are the very ones that plan
 * gives; otherwise the kernel is waited for and dropped, and what it
 * added into is cleared before the next use (doc/design.md, "Adapting
 * iterations overlap"). */
#include <string.h>

#include <utility>

#include "state.cuh"

namespace strata_cuda {

/* Whether plan is of the kind that is queued ahead: one rank adapting on
 * the device with VEGAS+'s allocation, one component, pseudo-random
 * points of full width, no peak search. */
bool ahead_kind(const cuda_state *st, const strata_plan *plan)
{
  return st->ahead_allowed && reallocates_here(plan) && refines_here(plan) && !exchanges(plan) &&
         plan->ncomp == 1 && !plan->peaks && !plan->channels && !plan->qmc && plan->ubits == 32 &&
         plan->h0 == 0 && plan->h1 == plan->strat->nhcube;
}

/* Iteration plan + 1's sampling kernel, queued behind plan's iteration:
 * launched as l with plan's arguments a, but for the iteration's number, its
 * record, an allocation of the device's own (no even formula) and what
 * it takes from plan's record (from). */
int queue_ahead(cuda_state *st, const strata_plan *plan, const Launch &l, const KernelArgs &a,
                const AheadArgs *from)
{
  auto &n = st->ahead;
  memcpy(&n.a, &a, sizeof a);
  n.iteration = plan->iteration + 1;
  n.a.iteration = n.iteration;
  n.a.bad = &st->rec.p[n.iteration & 1u].bad; /* (its plan's rec_slot) */
  n.a.nh_uniform = 0;
  n.a.even_q = 0;
  n.a.even_rem = 0;
  n.a.first = 0;
  n.a.ahead = from;
  n.l = l;
  n.nhcube = plan->strat->nhcube;
  n.cells = (size_t)plan->problem->dim * (size_t)strata_map_res(plan->map);
  cudaStream_t q = st->stream;
  cudaEventRecord(st->ev_a0, q);
  void *args[] = {&n.a};
  cudaError_t e =
      cudaLaunchKernel(l.k, dim3((unsigned)l.blocks), dim3((unsigned)l.threads), args, l.smem, q);
  cudaEventRecord(st->ev_a1, q);
  if (e != cudaSuccess) return cuda_fail(e, "launching the next sampling kernel", st->device);
  n.on = true;
  return STRATA_OK;
}

/* Whether the queued iteration is plan's: the same kernel, and the
 * arguments plan gives (real, made by the caller's fill_args) equal to
 * those it ran with, the device's total, shift and map scale among them,
 * with nothing the host would first copy to the device (the map and the
 * allocation are the device's own, the tables there). */
bool ahead_is(const cuda_state *st, const strata_plan *plan, const void *k, const KernelArgs &real)
{
  const auto &n = st->ahead;
  if (!(n.on && plan->iteration == n.iteration && ahead_kind(st, plan) && k == n.l.k &&
        st->map_gen == plan->map->generation && st->strat_gen == plan->strat->generation &&
        tables_current(st, plan->problem)))
    return false;
  KernelArgs ran, want;
  memcpy(&ran, &n.a, sizeof ran);
  ran.total = n.used.total;
  ran.shift = n.used.shift;
  ran.map_scale = n.used.map_scale;
  memcpy(&want, &real, sizeof want);
  want.ahead = ran.ahead;
  want.chunk = ran.chunk; /* (the launch's shape: any covers every sample) */
  want.shared_acc = ran.shared_acc;
  return memcmp(&ran, &want, sizeof ran) == 0;
}

/* The queued iteration is plan's: its timing events become the current
 * ones, and what it adds into is in use. */
void take_ahead(cuda_state *st, const strata_plan *plan)
{
  auto &n = st->ahead;
  n.on = false;
  st->ahead_used++;
  std::swap(st->ev0, st->ev_a0);
  std::swap(st->ev1, st->ev_a1);
  st->launched = n.used.total;
  st->last_chunk = n.a.chunk;
  st->sums_dirty.mark((size_t)plan->h0, (size_t)plan->h1);
  st->map_dirty.mark(0, n.cells);
}

/* The queued iteration is not wanted: waited for, and what it added into
 * (the sums of its hypercubes and the map's) marked for clearing; its
 * record is set to its start before any other use (prepare). */
int drop_ahead(cuda_state *st)
{
  auto &n = st->ahead;
  n.on = false;
  st->ahead_dropped++;
  cudaError_t e = cudaStreamSynchronize(st->stream);
  if (e != cudaSuccess) return cuda_fail(e, "finishing an iteration", st->device);
  st->sums_dirty.mark(0, (size_t)n.nhcube);
  st->map_dirty.mark(0, n.cells);
  return STRATA_OK;
}

} // namespace strata_cuda
