/* The device's buffers, and what is copied into them that is not the
 * map or the allocation (residency.cu): QMC randomizations, integrand
 * tables.  Buffers grow on demand and are kept from iteration to
 * iteration, run to run. */
#include <climits>
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

namespace {

void release_tables(cuda_state *st)
{
  for (void *p : st->table_mem) cudaFree(p);
  st->table_mem.clear();
  st->tables_of = nullptr;
}

} // namespace

/* This iteration's randomizations, when they are new to the device. */
int upload_qmc(cuda_state *st, const strata_qmc *qm, cudaStream_t q)
{
  if (st->qmc_gen == qm->generation) return STRATA_OK;
  const size_t nd = (size_t)qm->nrand * (size_t)qm->dim;
  cudaError_t e = cudaSuccess;
  if (qm->rule == STRATA_QMC_SOBOL) {
    if (!st->qdirs.reserve(nd * 64) || !st->qdshift.reserve(nd))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the QMC tables", st->device);
    e = cudaMemcpyAsync(st->qdirs.p, qm->dirs, nd * 64 * sizeof(uint64_t), cudaMemcpyHostToDevice, q);
    if (e == cudaSuccess)
      e = cudaMemcpyAsync(st->qdshift.p, qm->dshift, nd * sizeof(uint64_t), cudaMemcpyHostToDevice, q);
  } else {
    if (!st->qshift.reserve(nd))
      return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the QMC tables", st->device);
    e = cudaMemcpyAsync(st->qshift.p, qm->shift, nd * sizeof(double), cudaMemcpyHostToDevice, q);
  }
  /* The host arrays are pageable: the copies are done when these return,
   * so the next iteration may redraw them. */
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "uploading the QMC randomizations", st->device);
  st->qmc_gen = qm->generation;
  return STRATA_OK;
}

bool tables_current(const cuda_state *st, const strata_problem *pr)
{
  const uint64_t h = pr->source ? pr->source->tables_hash : 0;
  return pr->ntables == 0 || (st->tables_of == pr->tables && st->tables_hash == h);
}

/* Copies the problem's tables to the device, pointers rewritten, when they
 * are not the ones already there. */
int upload_tables(cuda_state *st, const strata_problem *pr, cudaStream_t q)
{
  if (tables_current(st, pr)) return STRATA_OK;
  const uint64_t h = pr->source ? pr->source->tables_hash : 0;
  release_tables(st);
  std::vector<strata_table> dev(pr->tables, pr->tables + pr->ntables);
  auto copy = [&](const double *src, size_t n, const double **dst) -> bool {
    if (!src) return true;
    void *p = nullptr;
    if (cudaMalloc(&p, n * sizeof(double)) != cudaSuccess) return false;
    st->table_mem.push_back(p);
    *dst = static_cast<const double *>(p);
    return cudaMemcpy(p, src, n * sizeof(double), cudaMemcpyHostToDevice) == cudaSuccess;
  };
  for (strata_table &t : dev) {
    if (!copy(t.v, (size_t)t.nx * (size_t)t.ny, &t.v) || !copy(t.x, (size_t)t.nx, &t.x) ||
        !copy(t.y, (size_t)t.ny, &t.y)) {
      release_tables(st);
      return strata_error(STRATA_ENOMEM, "cuda device %d: no room for the integrand's tables",
                          st->device);
    }
  }
  if (!st->tables.reserve(dev.size()) ||
      cudaMemcpyAsync(st->tables.p, dev.data(), dev.size() * sizeof(strata_table),
                      cudaMemcpyHostToDevice, q) != cudaSuccess ||
      cudaStreamSynchronize(q) != cudaSuccess) {
    release_tables(st);
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot copy the tables", st->device);
  }
  st->tables_of = pr->tables;
  st->tables_hash = h;
  return STRATA_OK;
}

/* What the iteration kept on the device needs beyond the sampling's own
 * buffers: the record, and with reallocation the levels, the shares'
 * scratch, the histogram, the step table and the allocation's blocks'
 * totals. */
int reserve_resident(cuda_state *st, const strata_strat *s, const strata_map *g, bool resident,
                     bool realloc, bool refine)
{
  const size_t nhc = (size_t)s->nhcube;
  bool ok = st->rec.reserve(2);
  if (ok && !st->h_rec.p) {
    ok = st->h_rec.reserve(3);
    if (ok) init_record(&st->h_rec.p[0]);
  }
  if (ok && resident) ok = st->level.reserve(nhc);
  if (ok && realloc) {
    /* The histogram is cleared behind every use; the step table is the
     * same for every ladder (2^(r/128)): both are set once. */
    if (!st->hist.p)
      ok = st->hist.reserve(STRATA_SHARE_BINS + 1) &&
           cudaMemset(st->hist.p, 0, (STRATA_SHARE_BINS + 1) * sizeof(unsigned long long)) ==
               cudaSuccess;
    if (ok && !st->step.p)
      ok = st->step.reserve(STRATA_SHARE_STEPS) &&
           cudaMemcpy(st->step.p, s->ladder->step, sizeof s->ladder->step,
                      cudaMemcpyHostToDevice) == cudaSuccess;
    ok = ok && st->dshare.reserve(nhc) && st->count.reserve(nhc) &&
         st->btot.reserve(2 * (size_t)st->realloc_blocks);
  }
  if (ok && refine)
    ok = st->refine_scratch.reserve((size_t)strata_map_naxes(g) * 4 * ((size_t)g->ninc + 1));
  if (!ok)
    return strata_error(STRATA_ENOMEM, "cuda device %d (%s): not enough device memory to keep "
                        "%lld hypercubes' iteration on the device", st->device, st->name,
                        (long long)s->nhcube);
  return STRATA_OK;
}

/* What every iteration uses on the device: the map, the allocation, the
 * per-hypercube sums and the map sums. */
int reserve_core(cuda_state *st, const strata_strat *s, const strata_map *g)
{
  const size_t cells = (size_t)g->dim * (size_t)g->ninc;
  const size_t nedges = (size_t)strata_map_naxes(g) * (size_t)(g->ninc + 1);
  if (!st->edges.reserve(nedges) || !st->start.reserve((size_t)s->nhcube + 1) ||
      !reserve_sums(st->s1, st->sums_dirty, (size_t)s->nhcube) ||
      !reserve_sums(st->s2, st->sums_dirty, (size_t)s->nhcube) ||
      !reserve_sums(st->wsum, st->map_dirty, cells) || !reserve_sums(st->wcnt, st->map_dirty, cells))
    return strata_error(STRATA_ENOMEM, "cuda device %d (%s): not enough device memory for "
                        "%lld hypercubes and %zu map cells", st->device, st->name,
                        (long long)s->nhcube, cells);
  return STRATA_OK;
}

void release_buffers(cuda_state *st)
{
  st->edges.release();
  st->xmap.release();
  st->s1.release();
  st->s2.release();
  st->wsum.release();
  st->start.release();
  st->wcnt.release();
  st->rec.release();
  st->h_rec.release();
  st->level.release();
  st->step.release();
  st->refine_scratch.release();
  st->dshare.release();
  st->hist.release();
  st->count.release();
  st->btot.release();
  st->qdirs.release();
  st->qdshift.release();
  st->qshift.release();
  st->h_s1.release();
  st->h_s2.release();
  st->h_w.release();
  st->h_c.release();
  st->h_start.release();
  st->split.release();
  st->h_split.release();
  st->xbuf.release();
  st->lv16.release();
  st->shared.release();
  st->h_shared.release();
  st->seg.release();
  st->h_seg.release();
  st->c1.release();
  st->c2.release();
  st->h_c1.release();
  st->h_c2.release();
  st->eval_y.release();
  st->eval_f.release();
  st->wtop.release();
  st->wtop_sorted.release();
  st->wtop_index.release();
  st->wtop_index_sorted.release();
  st->sort_tmp.release();
  st->h_topw.release();
  st->h_topi.release();
  st->chan.release();
  st->chW.release();
  st->chblocks.release();
  st->h_ch.release();
  release_tables(st);
  st->tables.release();
}

} // namespace strata_cuda
