/* The peak search's channels on the device (src/channels.h): the
 * iteration's channels copied over, the sampling kernel's arguments for
 * them (its values become f alpha_0 g_map / g), the channels' kernel
 * (channel_kernel.cuh) queued behind the sampling, and the sums that come
 * back into the plan's chsum, laid out as the CPU backend lays them out:
 * per channel the sum of (alpha_c g_c / g) (f / g)^2, then per block its
 * points, mean and sum of squared deviations. */
#include <string.h>

#include "state.cuh"

namespace strata_cuda {

int prepare_channels(cuda_state *st, const strata_plan *plan, KernelArgs *a)
{
  const strata_channels *ch = plan->channels;
  const size_t nb = (size_t)(plan->chb1 - plan->chb0);
  const size_t nW = (size_t)plan->nchannels;
  if (!st->chan.reserve(1) || !st->chW.reserve(nW) || !st->chblocks.reserve(3 * nb + 1) ||
      !st->h_ch.reserve(nW + 3 * nb + 1))
    return strata_error(STRATA_ENOMEM, "cuda device %d: no memory for the peak search's %d "
                        "channels", st->device, plan->nchannels);
  cudaStream_t q = st->stream;
  cudaError_t e = cudaMemcpyAsync(st->chan.p, ch, sizeof *ch, cudaMemcpyHostToDevice, q);
  if (e == cudaSuccess) e = cudaMemsetAsync(st->chW.p, 0, nW * sizeof(double), q);
  if (e != cudaSuccess) return cuda_fail(e, "copying the channels", st->device);
  a->chan = st->chan.p;
  a->chW = st->chW.p;
  a->vol = strata_backend_box_volume(plan);
  a->chN = (double)ch->N;
  a->nhcube = (double)plan->strat->nhcube;
  return STRATA_OK;
}

int launch_channels(cuda_state *st, const strata_plan *plan, const KernelArgs &a)
{
  const long long nb = plan->chb1 - plan->chb0;
  if (nb <= 0) return STRATA_OK;
  const void *k = nullptr;
  int rc = find_search_kernel(st, plan->problem, true, &k);
  if (rc != STRATA_OK) return rc;
  ChannelArgs c;
  c.chb0 = plan->chb0;
  c.sums = st->chblocks.p;
  c.wtop = st->wtop.p + a.total;
  c.wtop_index = st->wtop_index.p + a.total;
  c.bad = &st->rec.p[rec_slot(plan)].bad;
  void *args[] = {const_cast<KernelArgs *>(&a), &c};
  cudaError_t e = cudaLaunchKernel(k, dim3((unsigned)nb), dim3(kChannelThreads), args, 0, st->stream);
  if (e != cudaSuccess) return cuda_fail(e, "launching the channels' kernel", st->device);
  return STRATA_OK;
}

int read_channels(cuda_state *st, strata_plan *plan)
{
  const size_t nb = (size_t)(plan->chb1 - plan->chb0);
  const size_t nW = (size_t)plan->nchannels;
  cudaStream_t q = st->stream;
  cudaError_t e = cudaMemcpyAsync(st->h_ch.p, st->chW.p, nW * sizeof(double),
                                  cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess && nb)
    e = cudaMemcpyAsync(st->h_ch.p + nW, st->chblocks.p, 3 * nb * sizeof(double),
                        cudaMemcpyDeviceToHost, q);
  if (e == cudaSuccess) e = cudaStreamSynchronize(q);
  if (e != cudaSuccess) return cuda_fail(e, "reading the channels' sums", st->device);
  for (size_t c = 0; c < nW; c++) plan->chsum[c] += st->h_ch.p[c];
  memcpy(plan->chsum + nW + (size_t)plan->chb0 * STRATA_CHANNEL_BLOCK_SUMS, st->h_ch.p + nW,
         3 * nb * sizeof(double));
  return STRATA_OK;
}

} // namespace strata_cuda
