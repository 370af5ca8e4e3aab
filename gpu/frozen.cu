/* Frozen iterations of several ranks overlap (cuda_state's next):
 * iteration k + 1, the same plan one iteration on (src/plan.h's
 * next_alike), is queued behind iteration k's exchange before the host
 * waits for k's estimate, so the device goes on sampling while the host
 * reads it; if the run stops, or asks anything else, that iteration is
 * waited for and dropped. */
#include "state.cuh"

namespace strata_cuda {

namespace {

/* Frozen iterations of several ranks (cuda_state's next): the sampling,
 * estimate and packing of plan (its iteration and shifts; the rest as
 * next's) into record and buffer slot `slot`, queued on the sampling
 * stream. */
void launch_frozen(cuda_state *st, const strata_plan *plan, const strata_strat *s,
                   const strata_map *g, int slot)
{
  auto &n = st->next;
  cudaStream_t q = st->stream;
  IterRecord *rec = st->rec.p + slot;
  cudaMemcpyAsync(rec, &st->h_rec.p[0], sizeof(IterRecord), cudaMemcpyHostToDevice, q);
  KernelArgs a = n.a;
  a.iteration = plan->iteration;
  a.ubits = plan->ubits;
  for (int d = 0; d < plan->problem->dim; d++) a.ushift[d] = plan->ushift[d];
  a.shift = plan->shift;
  for (int c = 0; plan->ncomp > 1 && c < plan->ncomp; c++) a.cshift[c] = plan->cshift[c];
  a.bad = &rec->bad;
  if (a.total > 0) {
    void *args[] = {&a};
    cudaLaunchKernel(n.l.k, dim3((unsigned)n.l.blocks), dim3((unsigned)n.l.threads), args,
                     n.l.smem, q);
  }
  launch_resident(st, plan, s, g, n.nh_uniform, n.xa.whole0, n.xa.whole1, false, false, rec,
                  nullptr);
  ExchangeArgs xa = n.xa;
  const size_t nx = (size_t)xa.size(false);
  xa.x = st->xbuf.p + (size_t)slot * nx;
  xa.rec = rec;
  cudaMemsetAsync(xa.x, 0, nx * sizeof(double), q);
  pack_kernel<<<1, kAdaptThreads, 0, q>>>(xa, false);
  cudaEventRecord(st->ev_pack[slot], q);
}

} // namespace

/* The first of the frozen iterations: its plan of the exchange and how
 * its sampling kernel runs (l, with the arguments a), kept for those that
 * follow, then queued into slot 0 and exchanged. */
int start_frozen(cuda_state *st, strata_plan *plan, const Launch &l, const KernelArgs &a,
                 long long nh_uniform)
{
  const strata_strat *s = plan->strat;
  const strata_map *g = plan->map;
  auto &n = st->next;
  int prc = plan_exchange(st, plan, s, &n.xa, st->stream);
  if (prc != STRATA_OK) return prc;
  if (!st->xbuf.reserve(2 * (size_t)n.xa.size(false)))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the ranks' exchange",
                        st->device);
  n.xa.s1 = st->s1.p;
  n.xa.s2 = st->s2.p;
  n.pr = plan->problem;
  n.seed = plan->seed;
  n.shift = plan->shift;
  n.i0 = plan->i0;
  n.i1 = plan->i1;
  n.map_gen = g->generation;
  n.strat_gen = s->generation;
  n.l = l;
  n.a = a;
  n.nh_uniform = nh_uniform;
  n.iteration = plan->iteration;
  launch_frozen(st, plan, s, g, 0);
  return frozen_exchange(st, plan, s, g, 0);
}

/* The iteration in slot `slot`, sampled already or queued: its exchange
 * and finish on xstream, then the next one queued behind them where the
 * run will want it, and this one's estimate read.  The next sampling
 * kernel waits for the exchange on the device: it fills every SM for its
 * whole length (one wave), so an exchange kernel started beside it would
 * wait for a free SM, and a peer's would spin, holding one of this
 * rank's blocks back, until then; ordered, the device pauses only for
 * the exchange's latency and the host never waits for a round trip. */
int frozen_exchange(cuda_state *st, strata_plan *plan, const strata_strat *s,
                    const strata_map *g, int slot)
{
  auto &n = st->next;
  ExchangeArgs xa = n.xa;
  const size_t nx = (size_t)xa.size(false);
  xa.x = st->xbuf.p + (size_t)slot * nx;
  xa.rec = st->rec.p + slot;
  xa.shift = plan->shift;
  cudaStream_t x = st->xstream;
  cudaStreamWaitEvent(x, st->ev_pack[slot], 0);
  int rc = strata_cuda_peers_allreduce(st->peers, xa.x, nx, x);
  if (rc != STRATA_OK) return rc;
  finish_kernel<<<1, 1, 0, x>>>(xa);
  cudaMemcpyAsync(&st->h_rec.p[1 + slot], xa.rec, sizeof(IterRecord), cudaMemcpyDeviceToHost, x);
  cudaEventRecord(st->ev_done[slot], x);
  n.on = plan->next_alike != 0;
  if (n.on) {
    const int nc = plan->ncomp > 1 ? plan->ncomp : 0;
    n.slot = 1 - slot;
    n.iteration = plan->iteration + 1;
    n.shift = plan->next_shift;
    for (int c = 0; c < nc; c++) n.cshift[c] = plan->next_cshift[c];
    strata_plan next = *plan;
    next.iteration = n.iteration;
    next.shift = n.shift;
    next.cshift = n.cshift;
    cudaStreamWaitEvent(st->stream, st->ev_done[slot], 0);
    launch_frozen(st, &next, s, g, n.slot);
  }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaEventSynchronize(st->ev_done[slot]);
  if (e != cudaSuccess) return cuda_fail(e, "running the iteration", st->device);
  return read_record(st, plan, st->h_rec.p[1 + slot]);
}

/* Whether plan is the frozen iteration already in flight. */
bool next_is(const cuda_state *st, const strata_plan *plan)
{
  const auto &n = st->next;
  if (!(n.on && exchanges(plan) && !plan->adapt && plan->iteration == n.iteration &&
        plan->problem == n.pr && plan->seed == n.seed && plan->shift == n.shift &&
        plan->i0 == n.i0 && plan->i1 == n.i1 && plan->map->generation == n.map_gen &&
        plan->strat->generation == n.strat_gen))
    return false;
  for (int c = 0; plan->ncomp > 1 && c < plan->ncomp; c++)
    if (plan->cshift[c] != n.cshift[c]) return false;
  return true;
}

/* The iteration in flight is not wanted: waited for (its kernels clear
 * the sums behind them) and dropped. */
int drop_next(cuda_state *st)
{
  st->next.on = false;
  cudaError_t e = cudaStreamSynchronize(st->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st->xstream);
  return e == cudaSuccess ? STRATA_OK : cuda_fail(e, "finishing an iteration", st->device);
}

} // namespace strata_cuda
