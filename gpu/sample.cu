/* One iteration's sampling on the device, as its plan (src/plan.h) says:
 * the kernel, the buffers and copies it needs, its arguments and launch
 * shape, the launch, and what comes back: the record of a stratified
 * iteration kept on the device, or the cells' sums of plain MC and QMC.
 *
 * What stays on the device: the random numbers, the points, the integrand
 * values.  Random numbers: src/philox.h's Philox4x32-10 with its counter
 * layout, so the GPU draws the very points the CPU backend
 * draws.  QMC iterations take their points from src/qmc_points.h instead,
 * with the randomizations the host drew for the iteration: the same bits
 * again. */
#include <math.h>
#include <string.h>
#include <climits>

#include "state.cuh"

namespace strata_cuda {

namespace {

/* The sizes of an iteration on this rank.  What runs where is the plan's
 * (src/plan.h): read through the helpers of state.cuh, never decided
 * again here. */
struct Sizes {
  size_t cells;            /* dim x the map's resolution (strata_map_res) map cells */
  long long nh;            /* this rank's hypercubes */
  int nc, np;              /* components, and their products' sums per hypercube */
  bool uniform;            /* every hypercube has nh_uniform samples */
  long long nh_uniform;
};

Sizes sizes_of(const strata_plan *plan)
{
  const strata_strat *s = plan->strat;
  Sizes z;
  z.cells = (size_t)plan->problem->dim * (size_t)strata_map_res(plan->map);
  z.nh = plan->h1 - plan->h0;
  z.nc = plan->ncomp;
  z.np = z.nc * (z.nc + 1) / 2;
  z.uniform = !s->adaptive && (s->even || s->start[s->nhcube] == s->nh[0] * s->nhcube);
  z.nh_uniform = !z.uniform ? 0 : s->even ? s->even_q : s->nh[0];
  return z;
}

/* The sampling kernel: a built-in integrand's (kernels.cu), or a user's
 * compiled by NVRTC (jit.cu). */
int find_kernel(cuda_state *st, const strata_plan *plan, const void **k)
{
  const strata_problem *pr = plan->problem;
  const int pts = plan->peaks ? kPhiloxTop
                  : !plan->qmc ? (plan->ubits != 32 ? kPhiloxPacked : kPhilox)
                  : plan->qmc->rule == STRATA_QMC_SOBOL ? kSobol : kLattice;
  const int id = pr->f ? builtin_id(pr->f) : -1;
  if (id >= 0) {
    *k = (const void *)builtin_kernel(id, pr->dim, st->generic, plan->adapt, pts);
    return STRATA_OK;
  }
  if (pr->source) {
    if (!st->jit && !(st->jit = strata_jit_new(st->device)))
      return strata_error(STRATA_ENOMEM, "out of memory");
    return strata_jit_kernel(st->jit, pr->source, pr->dim, plan->adapt, pts, k);
  }
  return no_device_version(pr);
}

/* Buffers reserved, what the device lacks copied there, the sums that
 * will be added into cleared, and the record set to its start. */
int prepare(cuda_state *st, const strata_plan *plan, const Sizes &z)
{
  const strata_problem *pr = plan->problem;
  const strata_map *g = plan->map;
  const strata_strat *s = plan->strat;
  const size_t cells = z.cells;
  const long long nh = z.nh;
  const int nc = z.nc, np = z.np;
  int rrc = reserve_core(st, s, g);
  if (rrc != STRATA_OK) return rrc;
  /* Page-locked staging only for what crosses PCIe on this path: locking
   * memory takes milliseconds per megabyte, more than a short run. */
  if (!st->h_w.reserve(cells) || !st->h_c.reserve(cells + 1) ||
      (!resident(plan) && (!st->h_s1.reserve((size_t)nh) || !st->h_s2.reserve((size_t)nh))))
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock %zu MB of host memory "
                        "for transfers", st->device, (size_t)(2 * nh + 2 * (long long)cells) * 8 >> 20);
  cudaStream_t q = st->stream;
  rrc = upload_state(st, g, s, !z.uniform, q);
  if (rrc != STRATA_OK) return rrc;
  if (plan->qmc) {
    int rc = upload_qmc(st, plan->qmc, q);
    if (rc != STRATA_OK) return rc;
  }
  int trc = upload_tables(st, pr, q);
  if (trc != STRATA_OK) return trc;
  if (nc > 1) {
    if (!reserve_sums(st->c1, st->c1_dirty, (size_t)s->nhcube * nc) ||
        !reserve_sums(st->c2, st->c2_dirty, (size_t)s->nhcube * np) ||
        (!resident(plan) && (!st->h_c1.reserve((size_t)nh * nc) || !st->h_c2.reserve((size_t)nh * np))))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the sums of %d "
                          "components", st->device, nc);
    st->c1_dirty.wipe(q, (size_t)(plan->h0 * nc), (size_t)(plan->h1 * nc), st->c1.p);
    st->c2_dirty.wipe(q, (size_t)(plan->h0 * np), (size_t)(plan->h1 * np), st->c2.p);
  }
  rrc = reserve_resident(st, s, g, resident(plan), reallocates_here(plan), refines_here(plan));
  if (rrc != STRATA_OK) return rrc;
  st->sums_dirty.wipe(q, (size_t)plan->h0, (size_t)(plan->h1 > plan->h0 ? plan->h1 : plan->h0),
                     st->s1.p, st->s2.p);
  if (plan->adapt) st->map_dirty.wipe(q, 0, cells, st->wsum.p, st->wcnt.p);
  cudaMemcpyAsync(st->rec.p + rec_slot(plan), &st->h_rec.p[0], sizeof(IterRecord),
                  cudaMemcpyHostToDevice, q);
  return STRATA_OK;
}

/* Names the first bad sample like the CPU backend would: the point is
 * recomputed on the host from the same counters. */
int report_bad(const strata_plan *plan, long long i)
{
  const strata_problem *pr = plan->problem;
  int inc[STRATA_MAX_DIM];
  double y[STRATA_MAX_DIM], x[STRATA_MAX_DIM], out[STRATA_MAX_COMP];
  const strata_channels *ch = plan->channels;
  if (ch && i >= ch->n[0]) { /* a channel's point (channel_kernel.cuh) */
    int c;
    int64_t j;
    strata_chan_of_index(ch, i, &c, &j);
    strata_channels_point(ch, plan->seed, plan->iteration, c, j, y);
    for (int d = 0; d < pr->dim; d++) x[d] = plan->map->lower[d] + plan->map->width[d] * y[d];
  } else {
    strata_backend_point(plan, i, y);
    strata_map_apply(plan->map, y, x, inc);
  }
  double fx = NAN;
  if (pr->f) {
    fx = pr->f(x, pr->dim, pr->params);
  } else {
    pr->fv(x, pr->dim, pr->params, pr->tables, out);
    for (int c = 0; c < (pr->ncomp > 1 ? pr->ncomp : 1) && isfinite(fx = out[c]); c++) {
    }
  }
  return strata_backend_report_nonfinite(plan, isfinite(fx) ? NAN : fx, i, x);
}

void read_kernel_time(cuda_state *st)
{
  float ms = 0.0f;
  if (cudaEventElapsedTime(&ms, st->ev0, st->ev1) == cudaSuccess) st->last_kernel_s = 1e-3 * ms;
  if (st->launched > 0) st->sample_cost_s = st->last_kernel_s / (double)st->launched;
}

/* Names the hypercube whose sums overflowed, with the value they came to,
 * as the host's estimate would. */
int report_overflow(cuda_state *st, strata_plan *plan, long long h)
{
  const int nc = plan->ncomp;
  double s1 = 0.0, c1 = 0.0;
  long long se[2] = {0, 0};
  cudaMemcpy(&s1, st->s1.p + h, sizeof s1, cudaMemcpyDeviceToHost);
  if (nc > 1) cudaMemcpy(&c1, st->c1.p + h * nc, sizeof c1, cudaMemcpyDeviceToHost);
  cudaMemcpy(se, st->start.p + h, sizeof se, cudaMemcpyDeviceToHost);
  const strata_strat *s = plan->strat;
  const double n = !s->adaptive ? (double)(s->even ? s->even_q : s->nh[0])
                                 : (double)(se[1] - se[0]);
  plan->bad = h;
  plan->bad_near = s1 / n + plan->shift;
  /* A vector integrand's first component, as the host's estimate names it,
   * where that is what overflowed. */
  if (nc > 1 && !isfinite(c1 / n + plan->cshift[0])) plan->bad_near = c1 / n + plan->cshift[0];
  return STRATA_OK;
}

/* The sampling kernel's arguments; for a frozen map, its table in x made
 * first where the map changed. */
int fill_args(cuda_state *st, const strata_plan *plan, const Sizes &z,
              KernelArgs *out)
{
  const strata_problem *pr = plan->problem;
  const strata_map *g = plan->map;
  const strata_strat *s = plan->strat;
  const int dim = pr->dim, ninc = strata_map_res(g), nc = z.nc;
  const bool exchange = exchanges(plan), uniform = z.uniform;
  const long long nh_uniform = z.nh_uniform;
  IterRecord *rec = st->rec.p + rec_slot(plan);
  cudaStream_t q = st->stream;
  KernelArgs &a = *out;
  memset(&a, 0, sizeof a);
  a.edges = st->edges.p;
  a.start = st->start.p;
  a.s1 = st->s1.p;
  a.s2 = st->s2.p;
  a.wsum = st->wsum.p;
  a.wcnt = st->wcnt.p;
  a.bad = &rec->bad;
  for (int d = 0; d < dim; d++) {
    a.lower[d] = g->lower[d];
    a.width[d] = g->width[d];
  }
  for (int i = 0; i < pr->nparams; i++) a.params[i] = pr->params[i];
  a.tables = pr->ntables ? st->tables.p : nullptr;
  a.c1 = st->c1.p;
  a.c2 = st->c2.p;
  a.adapt_comp = pr->adapt_comp;
  for (int c = 0; nc > 1 && c < nc; c++) a.cshift[c] = plan->cshift[c];
  a.dim = dim;
  a.ninc = ninc;
  a.group = g->group;
  a.axis_stride = g->shared ? 0 : g->ninc + 1;
  a.M = s->M;
  a.invM = 1.0 / s->M;
  a.h0 = plan->h0;
  a.h1 = plan->h1;
  /* (An allocation adapted on the device has a stale start[] here: its
   * ends and the ranks' split points are known.) */
  a.first = exchange ? plan->i0 : start_known(st, s, plan->h0);
  const long long last = exchange ? plan->i1 : start_known(st, s, plan->h1);
  if (a.first < 0 || last < 0)
    return strata_error(STRATA_EBACKEND, "cuda device %d: hypercubes %lld..%lld are not where "
                        "the allocation on the device splits", st->device, (long long)plan->h0,
                        (long long)plan->h1);
  a.total = last - a.first;
  a.nh_uniform = nh_uniform;
  if (!uniform && s->even) {
    a.even_q = s->even_q;
    a.even_rem = s->even_rem;
  }
  if (!plan->adapt) {
    const double2 *had = st->xmap.p;
    if (!st->xmap.reserve((size_t)dim * ninc))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the map's table",
                          st->device);
    if (st->xmap_ver != st->map_ver || st->xmap.p != had || st->xmap_group != g->group) {
      xmap_kernel<<<(unsigned)grid_for((long long)dim * ninc, kAdaptThreads, st->nsm),
                    kAdaptThreads, 0, q>>>(st->xmap.p, a);
      st->xmap_ver = st->map_ver;
      st->xmap_group = g->group;
    }
    a.xmap = st->xmap.p;
    a.jscale = pow((double)ninc, dim);
  }
  if (plan->peaks) {
    int wrc = reserve_weights(st, a.total + channel_slots(plan));
    if (wrc == STRATA_OK && plan->channels) wrc = prepare_channels(st, plan, &a);
    if (wrc != STRATA_OK) return wrc;
    a.wtop = st->wtop.p;
    a.wper = (double)strata_strat_total(s) / (double)s->nhcube;
  }
  a.seed = plan->seed;
  strata_philox_round_keys(plan->seed, a.rk);
  a.iteration = plan->iteration;
  a.ubits = plan->ubits;
  for (int d = 0; d < dim; d++) a.ushift[d] = plan->ushift[d];
  a.shift = plan->shift;
  a.map_scale = plan->map_scale;
  if (plan->qmc) {
    a.log2n = plan->qmc->log2n;
    a.qdirs = st->qdirs.p;
    a.qdshift = st->qdshift.p;
    a.qshift = st->qshift.p;
    for (int d = 0; d < dim; d++) a.qz[d] = plan->qmc->z[d];
  }
  return STRATA_OK;
}

/* How the kernel runs: the map sums in shared memory where they fit, and
 * as many blocks as the device holds at once, fewer where each would see
 * too few samples per map cell. */
int shape(cuda_state *st, const strata_plan *plan, const Sizes &z, KernelArgs *pa,
          Launch *l)
{
  KernelArgs &a = *pa;
  const void *k = l->k;
  const size_t cells = z.cells;
  cudaError_t e;
  /* A dear integrand in an iteration too small to fill the GPU with the
   * usual chunks (5e5 samples of cuVegas's ridge in chunks of 16 are 122
   * blocks on 132 SMs): one sample a thread, as many blocks as that takes,
   * so that the block scheduler keeps every SM busy to the end, and the map
   * sums straight to global memory, where a block's shared copy would cost
   * a flush of every cell for a few samples (gpu/README.md). */
  const long long small_threads = (a.total + kSmallChunk - 1) / kSmallChunk;
  const bool wide = small_threads < (long long)st->nsm * st->max_threads_sm &&
                    st->sample_cost_s * (double)a.total >= kWideFromS;
  /* Map sums go to shared memory whenever they fit: global atomics on a
   * few thousand cells serialise, and adapting kernels through shared
   * memory are several times faster at every neval (doc/design.md, "Map
   * sums in shared memory"). */
  size_t smem = 0;
  if (plan->adapt && !wide) {
    const size_t need = cells * (sizeof(double) + sizeof(unsigned int));
    if (need <= st->smem_optin) {
      a.shared_acc = 1;
      smem = need;
    }
  }
  if (k != st->occ_kernel || smem != st->occ_smem) {
    if (smem > 48 * 1024) {
      e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
      if (e != cudaSuccess) return cuda_fail(e, "reserving shared memory", st->device);
    }
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, kThreads, smem);
    st->occ_kernel = k;
    st->occ_smem = smem;
    st->occ_per_sm = e != cudaSuccess || per_sm < 1 ? 1 : per_sm;
  }
  const long long resident_blocks = (long long)st->occ_per_sm * st->nsm;
  a.chunk = wide                          ? 1
            : a.total >= kLargeChunkFrom ? kLargeChunk
            : small_threads < resident_blocks * kThreads ? kSmallChunk / 2
                                                          : kSmallChunk;
  const long long nchunk = (a.total + a.chunk - 1) / a.chunk;
  l->threads = wide ? kWideThreads : kThreads;
  long long blocks = (nchunk + l->threads - 1) / l->threads;
  if (!wide && blocks > resident_blocks) blocks = resident_blocks;
  /* Every block clears and flushes all cells: give each at least half a
   * sample per cell, the fastest of the floors compared (doc/design.md,
   * "Map sums in shared memory"). */
  if (a.shared_acc) {
    long long cap = 2 * a.total / (long long)cells;
    if (cap < 1) cap = 1;
    if (blocks > cap) blocks = cap;
    /* The shared counts are 32-bit: no block may take 2^32 samples. */
    if (blocks <= a.total >> 31) blocks = (a.total >> 31) + 1;
  }
  if (blocks < 1) blocks = 1;
  l->blocks = blocks;
  l->smem = smem;
  return STRATA_OK;
}

/* The sampling kernel, between the events that time it. */
int launch(cuda_state *st, const KernelArgs &a, const Launch &l)
{
  cudaStream_t q = st->stream;
  const void *k = l.k;
  const long long blocks = l.blocks;
  const size_t smem = l.smem;
  cudaError_t e;
  cudaEventRecord(st->ev0, q);
  st->launched = a.total;
  st->last_chunk = a.chunk;
  void *args[] = {const_cast<KernelArgs *>(&a)};
  if (a.total > 0) {
    e = cudaLaunchKernel(k, dim3((unsigned)blocks), dim3((unsigned)l.threads), args, smem, q);
    if (e != cudaSuccess) return cuda_fail(e, "launching the sampling kernel", st->device);
  }
  cudaEventRecord(st->ev1, q);
  return STRATA_OK;
}

/* A stratified iteration kept on the device: the estimate and, where
 * made here, the adaptation or the ranks' exchange queued behind the
 * sampling (kernel k with arguments a, launched as l), then where the plan
 * allows the next iteration's sampling queued behind them (ahead.cu),
 * then this iteration's record read; where the host adapts (ranks whose
 * devices do not exchange), the map sums and levels too. */
int finish_resident(cuda_state *st, strata_plan *plan, const Sizes &z, const KernelArgs &a,
                    const Launch &l)
{
  const strata_map *g = plan->map;
  const strata_strat *s = plan->strat;
  const bool exchange = exchanges(plan);
  const size_t cells = z.cells;
  const long long nh = z.nh;
  const int slot = rec_slot(plan);
  IterRecord *rec = st->rec.p + slot;
  cudaStream_t q = st->stream;
  cudaError_t e;
  int rrc;
  ExchangeArgs xa;
  long long whole0 = plan->h0, whole1 = plan->h1;
  if (exchange) {
    int prc = plan_exchange(st, plan, s, &xa, q);
    if (prc != STRATA_OK) return prc;
    whole0 = xa.whole0;
    whole1 = xa.whole1;
  }
  const bool ahead = plan->next_adapts_alike && ahead_kind(st, plan);
  int arc = launch_resident(st, plan, s, g, z.nh_uniform, whole0, whole1, reallocates_here(plan) && !exchange,
                            refines_here(plan) && !exchange, rec,
                            ahead ? st->rec.p + (1 - slot) : nullptr);
  if (arc == STRATA_OK && exchange)
    arc = launch_exchange(st, plan, s, g, xa, reallocates_here(plan), refines_here(plan));
  if (arc != STRATA_OK) return arc;
  if (!st->rec_posted)
    cudaMemcpyAsync(&st->h_rec.p[1 + slot], rec, sizeof(IterRecord), cudaMemcpyDeviceToHost, q);
  st->rec_posted = false;
  if (plan->adapt_at == STRATA_ADAPT_HOST) {
    cudaMemcpyAsync(st->h_w.p, st->wsum.p, cells * sizeof(double), cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c.p, st->wcnt.p, cells * sizeof(unsigned long long),
                    cudaMemcpyDeviceToHost, q);
  }
  /* The host allocates: after the host's adaptation, and after a frozen
   * iteration of a long run's finer stratification (plan.h, reallocate). */
  if (plan->reallocate && !adapts_here(plan))
    cudaMemcpyAsync(plan->level + plan->h0, st->level.p + plan->h0, (size_t)nh * sizeof(double),
                    cudaMemcpyDeviceToHost, q);
  cudaEventRecord(st->ev_tail, q);
  if (ahead) {
    /* The next kernel's shape by what is known of the cost now, not this
     * one's: the first iteration's kernel, shaped before any cost was
     * known, would otherwise hand its shape on to every later one, and a
     * dear integrand would never get its wide launch. */
    KernelArgs na;
    memcpy(&na, &a, sizeof na);
    na.shared_acc = 0;
    Launch nl = l;
    rrc = shape(st, plan, z, &na, &nl);
    if (rrc == STRATA_OK)
      rrc = queue_ahead(st, plan, nl, na, &rec->next);
    if (rrc != STRATA_OK) return rrc;
  }
  e = cudaEventSynchronize(st->ev_tail);
  if (e != cudaSuccess) return cuda_fail(e, "running the iteration", st->device);
  read_kernel_time(st);
  const IterRecord &out = st->h_rec.p[1 + slot];
  if (ahead) st->ahead.used = out.next;
  rrc = read_record(st, plan, out);
  if (rrc != STRATA_OK) return rrc;
  if (plan->adapt_at == STRATA_ADAPT_HOST)
    for (size_t c = 0; c < cells; c++) {
      plan->wsum[c] = st->h_w.p[c];
      plan->wcount[c] = (double)st->h_c.p[c];
    }
  if (adapts_here(plan)) {
    if (refines_here(plan)) st->map_dirty.clear(); /* (the refinement clears them) */
    st->adapted_total = out.total;
  }
  return STRATA_OK;
}

/* Plain MC and QMC (few cells) and ranks whose devices do not exchange:
 * the cells' sums and, adapting, the map sums come back to the host. */
int read_sums(cuda_state *st, strata_plan *plan, const Sizes &z)
{
  const size_t cells = z.cells;
  const long long nh = z.nh;
  const int nc = z.nc, np = z.np;
  IterRecord *rec = st->rec.p + rec_slot(plan);
  cudaStream_t q = st->stream;
  cudaError_t e;
  unsigned long long *bad = st->h_c.p + cells; /* (the spare slot prepare reserved) */
  cudaMemcpyAsync(st->h_s1.p, st->s1.p + plan->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(st->h_s2.p, st->s2.p + plan->h0, (size_t)nh * sizeof(double),
                  cudaMemcpyDeviceToHost, q);
  cudaMemcpyAsync(bad, &rec->bad, sizeof *bad, cudaMemcpyDeviceToHost, q);
  if (nc > 1) {
    cudaMemcpyAsync(st->h_c1.p, st->c1.p + plan->h0 * nc, (size_t)nh * nc * sizeof(double),
                    cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c2.p, st->c2.p + plan->h0 * np, (size_t)nh * np * sizeof(double),
                    cudaMemcpyDeviceToHost, q);
  }
  if (plan->adapt) {
    cudaMemcpyAsync(st->h_w.p, st->wsum.p, cells * sizeof(double), cudaMemcpyDeviceToHost, q);
    cudaMemcpyAsync(st->h_c.p, st->wcnt.p, cells * sizeof(unsigned long long),
                    cudaMemcpyDeviceToHost, q);
  }
  e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "running the sampling kernel", st->device);
  read_kernel_time(st);
  if (*bad != kNoBad) return report_bad(plan, (long long)*bad);
  memcpy(plan->s1 + plan->h0, st->h_s1.p, (size_t)nh * sizeof(double));
  memcpy(plan->s2 + plan->h0, st->h_s2.p, (size_t)nh * sizeof(double));
  if (nc > 1) {
    memcpy(plan->c1 + plan->h0 * nc, st->h_c1.p, (size_t)nh * nc * sizeof(double));
    memcpy(plan->c2 + plan->h0 * np, st->h_c2.p, (size_t)nh * np * sizeof(double));
  }
  /* (Set, not added: this backend is its rank's only contributor, and the
   * caller leaves the host's map sums alone where the device kept them.) */
  if (plan->adapt)
    for (size_t c = 0; c < cells; c++) {
      plan->wsum[c] = st->h_w.p[c];
      plan->wcount[c] = (double)st->h_c.p[c];
    }
  return STRATA_OK;
}
} // namespace

int no_device_version(const strata_problem *pr)
{
  return strata_error(STRATA_EBACKEND, "integrand '%s' has no GPU version: the CUDA backend "
                      "runs the built-in integrands and integrand sources that strata "
                      "compiles (integrand = file:PATH or inline)",
                      pr->name ? pr->name : "(unnamed)");
}

/* What an iteration's record brings back: the first bad sample or
 * overflowing hypercube, reported as the host would, else its estimate
 * (a vector integrand's covariance from its upper triangle, mirrored)
 * into plan->part.  The estimate kernels cleared the sums behind them. */
int read_record(cuda_state *st, strata_plan *plan, const IterRecord &out)
{
  if (out.bad != kNoBad) return report_bad(plan, (long long)out.bad);
  if (out.bad_h != LLONG_MAX) return report_overflow(st, plan, out.bad_h);
  const int nc = plan->ncomp;
  st->sums_dirty.clear();
  if (nc > 1) { /* (a scalar run leaves what the component sums held as it was) */
    st->c1_dirty.clear();
    st->c2_dirty.clear();
  }
  if (nc == 1) {
    plan->part[0] = out.part[0];
    plan->part[1] = out.part[1];
    return STRATA_OK;
  }
  for (int c = 0; c < nc; c++) plan->part[c] = out.vpart[c];
  for (int x = 0, p = 0; x < nc; x++)
    for (int y = x; y < nc; y++, p++)
      plan->part[nc + x * nc + y] = plan->part[nc + y * nc + x] = out.vpart[nc + p];
  return STRATA_OK;
}

int cuda_sample(strata_backend *b, strata_plan *plan)
{
  cuda_state *st = static_cast<cuda_state *>(b->self);
  st->last_kernel_s = 0.0;
  const Sizes z = sizes_of(plan);
  if (z.nh <= 0 && !exchanges(plan)) return STRATA_OK;
  cudaError_t e = cudaSetDevice(st->device);
  if (e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", st->device);
  if (st->next.on) {
    if (next_is(st, plan)) return frozen_exchange(st, plan, plan->strat, plan->map, st->next.slot);
    int drc = drop_next(st);
    if (drc != STRATA_OK) return drc;
  }
  Launch l;
  KernelArgs a;
  int rc = find_kernel(st, plan, &l.k);
  if (rc != STRATA_OK) return rc;
  if (st->ahead.on) {
    /* (fill_args only reads, for the plans that are queued ahead) */
    if (ahead_kind(st, plan) && fill_args(st, plan, z, &a) == STRATA_OK &&
        ahead_is(st, plan, l.k, a)) {
      take_ahead(st, plan);
      l = st->ahead.l;
      KernelArgs ran;
      memcpy(&ran, &st->ahead.a, sizeof ran);
      return finish_resident(st, plan, z, ran, l);
    }
    rc = drop_ahead(st);
    if (rc != STRATA_OK) return rc;
  }
  rc = prepare(st, plan, z);
  if (rc == STRATA_OK) rc = fill_args(st, plan, z, &a);
  if (rc == STRATA_OK) rc = shape(st, plan, z, &a, &l);
  if (rc != STRATA_OK) return rc;
  if (exchanges(plan) && !plan->adapt)
    return start_frozen(st, plan, l, a, z.nh_uniform);
  rc = launch(st, a, l);
  if (rc == STRATA_OK && plan->channels) rc = launch_channels(st, plan, a);
  if (rc != STRATA_OK) return rc;
  rc = resident(plan) ? finish_resident(st, plan, z, a, l) : read_sums(st, plan, z);
  if (rc == STRATA_OK && plan->channels) rc = read_channels(st, plan);
  if (rc == STRATA_OK && plan->peaks) rc = keep_top(st, plan, a.first, a.total, channel_slots(plan));
  return rc;
}

} // namespace strata_cuda
