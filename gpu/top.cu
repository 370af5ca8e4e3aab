/* The peak search's largest weights on the device (src/khat.h): the
 * sampling kernel of a run that searches (kPhiloxTop) writes every
 * sample's weight |f| / g, CUB sorts them with their sample indices, and
 * the cap largest come back; their points and values are made again on
 * the host from the same counters, map and channels, as report_bad names
 * a sample.  With channels the channels' kernel writes its points'
 * weights and indices after the map's.  The radix sort is stable, so equal weights keep the order of
 * their indices and the list is the one the CPU backend keeps, whatever
 * the split of the samples.
 *
 * Keeping every weight costs 32 bytes of device memory per sample of the
 * rank's share and a sort of them per iteration: a search is for runs of
 * 1e3 to 1e8 points per iteration, where that is a small part of the
 * iteration. */
#include <math.h>
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

/* The samples of one rank's iteration whose weights the device keeps, at
 * most. */
constexpr long long kMostWeights = 1LL << 28;

int reserve_weights(cuda_state *st, long long n)
{
  if (n > kMostWeights)
    return strata_error(STRATA_EINVAL, "peaks.search: the cuda backend keeps every weight of "
                        "an iteration, at most %lld per rank, and this one has %lld: set "
                        "peaks.search = off, or use more ranks", kMostWeights, n);
  if (!st->wtop.reserve((size_t)n) || !st->wtop_sorted.reserve((size_t)n) ||
      !st->wtop_index.reserve((size_t)n) || !st->wtop_index_sorted.reserve((size_t)n))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the peak search's %lld "
                        "weights", st->device, n);
  return STRATA_OK;
}

namespace {

/* Sample i's point z in the unit cube and |f| there, from its weight w:
 * one of the map's samples, or with channels one of a channel's points. */
void made_again(const strata_plan *plan, long long i, double w, double *z)
{
  const strata_strat *s = plan->strat;
  const strata_map *g = plan->map;
  const strata_channels *ch = plan->channels;
  const int dim = plan->problem->dim;
  double a[STRATA_MAX_CHANNELS + 2];
  if (ch && i >= ch->n[0]) {
    int c;
    int64_t j;
    strata_chan_of_index(ch, i, &c, &j);
    strata_channels_point(ch, plan->seed, plan->iteration, c, j, z);
    const double gz = strata_backend_map_density(plan, z) + strata_channels_parts(ch, z, a);
    z[dim] = w * gz / strata_backend_box_volume(plan);
    return;
  }
  double y[STRATA_MAX_DIM], x[STRATA_MAX_DIM];
  int inc[STRATA_MAX_DIM];
  strata_backend_point(plan, i, y);
  const double jac = strata_map_apply(g, y, x, inc);
  const int64_t h = strata_strat_find(s, i);
  const double nh = (double)(strata_strat_start_at(s, h + 1) - strata_strat_start_at(s, h));
  for (int d = 0; d < dim; d++) z[d] = (x[d] - g->lower[d]) / g->width[d];
  if (!(jac > 0.0)) {
    z[dim] = 0.0;
  } else if (ch) { /* w = |f| vol / g */
    const double vol = strata_backend_box_volume(plan);
    const double gm = nh * (double)s->nhcube * vol / ((double)ch->N * jac);
    z[dim] = w * (gm + strata_channels_parts(ch, z, a)) / vol;
  } else { /* w = |J f| N / (n_h nhcube) */
    z[dim] = w * nh * (double)s->nhcube / ((double)strata_strat_total(s) * jac);
  }
}

} // namespace

int keep_top(cuda_state *st, strata_plan *plan, long long first, long long nmap, long long nch)
{
  strata_khat_top *top = plan->top;
  const long long n = nmap + nch;
  if (!top || n <= 0) return STRATA_OK;
  cudaStream_t q = st->stream;
  if (nmap > 0)
    launch_indices(st->wtop_index.p, first, nmap, (unsigned)grid_for(nmap, 256, st->nsm), q);
  size_t bytes = 0;
  cudaError_t e = sort_weights(nullptr, bytes, st->wtop.p, st->wtop_sorted.p, st->wtop_index.p,
                               st->wtop_index_sorted.p, n, q);
  if (e == cudaSuccess && !st->sort_tmp.reserve(bytes))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory to sort the peak search's "
                        "weights", st->device);
  if (e == cudaSuccess)
    e = sort_weights(st->sort_tmp.p, bytes, st->wtop.p, st->wtop_sorted.p, st->wtop_index.p,
                     st->wtop_index_sorted.p, n, q);
  const long long m = n < top->cap ? n : top->cap;
  if (e == cudaSuccess && (!st->h_topw.reserve((size_t)m) || !st->h_topi.reserve((size_t)m)))
    return strata_error(STRATA_ENOMEM, "cuda device %d: cannot lock host memory for the peak "
                        "search's weights", st->device);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(st->h_topw.p, st->wtop_sorted.p, (size_t)m * sizeof(double),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(st->h_topi.p, st->wtop_index_sorted.p, (size_t)m * sizeof(long long),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "sorting the peak search's weights", st->device);
  for (long long j = 0; j < m; j++) {
    const double w = st->h_topw.p[j];
    const long long i = st->h_topi.p[j];
    /* (-1: a channel's point outside the cube, or a block's spare slot.) */
    if (!isfinite(w) || w < 0.0) continue;
    double z[STRATA_MAX_DIM + 1];
    made_again(plan, i, w, z);
    strata_khat_top_add(top, w, i, z);
  }
  return STRATA_OK;
}

} // namespace strata_cuda
