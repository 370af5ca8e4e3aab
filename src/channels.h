/* The sampling channels beside the map (doc/peaks.md, "The channels"):
 * channel 0 is the map with its stratification, channels 1..nmode a
 * Student-t (nu = 5) at each mode the search found (where the map does
 * not cover them all), shaped by its H^-1, and the last the defensive
 * uniform part.  Every point of an iteration, whichever channel drew it,
 * is weighted f / g with
 *
 *   g(z) = alpha_0 g_map(z) + sum_c alpha_c t_c(z) + alpha_u,
 *
 * alpha_c = N_c / N the realised shares, so that (1/N) sum f / g is
 * unbiased whatever the channels are.  Coordinates are the unit cube of the
 * problem's box (z, as the search's); densities are per unit of z.
 *
 * A channel's j-th point of iteration k is a function of (seed, channel,
 * k, j) alone: Philox counters (block, k, j) under a key made from the
 * seed and a tag per channel, apart from the map's streams, so any split
 * of the points over threads and ranks draws the same points. */
#ifndef STRATA_CHANNELS_H
#define STRATA_CHANNELS_H
#include <stddef.h>
#include <stdint.h>

#include "chanmix.h"
#include "strata/strata.h"
#ifdef __cplusplus
extern "C" {
#endif

static inline int strata_channels_count(const strata_channels *ch) { return strata_chan_count(ch); }

/* No mode channel yet: the map alone with weight 1 - uniform. */
void strata_channels_init(strata_channels *ch, int dim, double uniform);
/* A channel at mode m (unit cube) with L (L L^T = H^-1, row-major, lower);
 * the new channel starts with the weight of a mode channel already there,
 * or (the first) a third of the map's.  -1 when there is no room. */
int strata_channels_add(strata_channels *ch, const double *m, const double *chol);

/* Points per mode channel, at least: max(32, 4 dim). */
int64_t strata_channels_nmin(const strata_channels *ch);
/* The counts of an iteration of N points from the weights: each mode
 * channel at least nmin, the uniform part its share, the map the rest, at
 * least STRATA_CHANNEL_MAP_MIN of N.  n[0] is then the map's target; the
 * run sets it to what its allocation gives and calls _realise. */
void strata_channels_plan(strata_channels *ch, int64_t N);
void strata_channels_realise(strata_channels *ch, int64_t n0);

/* sum_{c >= 1} alpha_c g_c(z), the channels' part of g beside the map's
 * (alpha_c the realised shares); z outside the cube has only the t's. */
double strata_channels_density(const strata_channels *ch, const double *z);
/* Each channel's alpha_c g_c(z) (c >= 1) into a[c]; returns their sum. */
double strata_channels_parts(const strata_channels *ch, const double *z, double *a);

/* Channel c's (1 <= c <= nmode + 1) point j of iteration k, in z; a
 * t channel's point may fall outside the cube (its f counts as 0).
 * Returns 1 when z is inside the unit cube. */
int strata_channels_point(const strata_channels *ch, uint64_t seed, uint32_t k, int c,
                          int64_t j, double *z);

/* Kleiss and Pittau's step from W[c] = (1/N) sum_i g_c f^2 / g^3 over
 * all of an iteration's points: alpha_c <- alpha_c sqrt(W_c), normalised
 * to 1 - uniform, the map at least STRATA_CHANNEL_MAP_MIN. */
void strata_channels_adapt(strata_channels *ch, const double *W);

/* The channels' points in blocks of STRATA_CHANNEL_BLOCK, each within one
 * channel: a block is the unit that threads and ranks share, and its sums
 * (STRATA_CHANNEL_BLOCK_SUMS doubles: points, mean, sum of squared
 * deviations of f alpha_c / g) are added in block order, so the estimate
 * is the same bits on any split. */
#define STRATA_CHANNEL_BLOCK_SUMS 3
int64_t strata_channels_nblocks(const strata_channels *ch);
/* Block b's channel c and its points [j0, j1) of that channel. */
void strata_channels_block(const strata_channels *ch, int64_t b, int *c, int64_t *j0, int64_t *j1);
/* The global sample index of channel c's point j (the map's come first). */
int64_t strata_channels_index(const strata_channels *ch, int c, int64_t j);
/* The channels' part of the estimate from the blocks' sums, in block
 * order: adds their integral and variance into I and var, and each
 * channel's (points, mean) into share[c] (c >= 1). */
void strata_channels_estimate(const strata_channels *ch, const double *blocks, double *I,
                              double *var, double *mean);

/* The state for checkpoints: strata_channels_state_size doubles. */
size_t strata_channels_state_size(int dim);
void strata_channels_state_get(const strata_channels *ch, double *buf);
int strata_channels_state_set(strata_channels *ch, const double *buf, size_t n);
#ifdef __cplusplus
}
#endif
#endif
