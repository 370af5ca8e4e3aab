/* CPU backend: OpenMP over fixed chunks of hypercubes.
 *
 * Results must not depend on the number of threads.  Per-hypercube sums are
 * each made by one thread in sample order, so they are already fixed; the
 * map's per-increment sums mix many hypercubes, so each chunk has its own and
 * the chunks are added in chunk order.  The chunking depends only on the
 * hypercube range, never on the threads.
 *
 * Within a chunk the samples go in batches: their points first
 * (points_cpu.h), then the integrand's values, then the values into the
 * sums, one sample after the other.
 *
 * A vector integrand of more than STRATA_MAX_COMP components has no
 * per-hypercube sums: each chunk streams its hypercubes' moments into its
 * own part of the estimate (compstream.h), and the parts are added in
 * chunk order.  The chunks then run in waves of as many as there are
 * threads, so that only that many parts (ncomp^2 / 2 doubles each) exist
 * at once; the order of addition, and so the result, stays the chunks'. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend_cpu.h"
#include "compstream.h"
#include "error.h"
#include "points_cpu.h"

#define CPU_MAX_CHUNKS 128
/* Each chunk's map sums cost dim*ninc doubles to clear and add: below this
 * many samples a chunk would spend more on that than on sampling. */
#define CPU_MIN_CHUNK_SAMPLES 8192
/* Samples per batch of the library's own forms (f, fv), and of fu, which
 * takes the points of a batch one by one; the caller's batch form (fb)
 * has its own size. */
#define CPU_BATCH 256

/* One map increment's sums in a chunk: the squares, and the samples
 * counted in an integer, which is exactly the sum of 1.0 per sample that
 * it stands for; side by side, so that a sample touches one cache line. */
typedef struct {
  double w;
  uint32_t n;
} map_cell;

/* A thread's working arrays, kept from call to call: one batch's points
 * (x, jac, and inc per axis), values (fv) and squares for the map (w2),
 * for batches of up to cap samples of up to dim axes and nc components,
 * and the map sums (cells of them) of the chunk it is sampling. */
typedef struct {
  int64_t cap;
  int dim, nc;
  size_t cells;
  double *x, *jac, *fv, *w2;
  int *inc;
  int64_t *pass;  /* the samples that passed the list's bar, and their hypercubes */
  double *passw; /* their weights */
  map_cell *map;
} cpu_scratch;

typedef struct {
  int nthreads;
  double *chunk_w;      /* [CPU_MAX_CHUNKS][2][dim*ninc] */
  size_t chunk_w_len;
  cpu_scratch *scratch; /* one per thread */
  int nscratch;
  strata_compstream **streams; /* many components: one per chunk of a wave */
  int nstreams;
  /* The peak search: each thread's largest weights, and per chunk and per
   * channel block the channels' W sums (plan.h's chsum). */
  strata_khat_top *tops;
  int ntops;
  double *chunk_W, *block_W;
  size_t chunk_W_len, block_W_len;
} cpu_backend;

typedef struct {
  int64_t bad_index;    /* first sample with a non-finite value, or -1 */
  double bad_fx;
  int bad_comp;         /* its component (vector integrands), or -1 */
  double bad_x[STRATA_MAX_DIM];
} chunk_status;

static void mark_bad(chunk_status *st, int64_t i, double fx, int comp, const double *x, int dim)
{
  st->bad_index = i;
  st->bad_fx = fx;
  st->bad_comp = comp;
  memcpy(st->bad_x, x, sizeof(double) * (size_t)dim);
}

/* The integrand's nc values at the n points x, through the problem's form. */
static void problem_values(const strata_problem *pr, int64_t n, const double *x, int nc,
                           double *fv)
{
  const int dim = pr->dim;
  if (pr->f)
    for (int64_t j = 0; j < n; j++) fv[j] = pr->f(x + j * dim, dim, pr->params);
  else if (pr->fv)
    for (int64_t j = 0; j < n; j++) pr->fv(x + j * dim, dim, pr->params, pr->tables, fv + j * nc);
  else if (pr->fb)
    pr->fb(n, x, dim, pr->user, fv);
  else
    for (int64_t j = 0; j < n; j++) pr->fu(x + j * dim, dim, pr->user, fv + j * nc);
}

/* The quantity that adapts the map and the allocation (backend.h). */
static inline double adapting_value(const strata_problem *pr, int nc, double jac,
                                    const double *w, const double *fv)
{
  if (nc <= 1) return w[0];
  if (pr->adapt_comp >= 0) return w[pr->adapt_comp];
  double s = 0.0;
  for (int c = 0; c < nc; c++) s += fabs(fv[c]);
  return jac * s;
}

/* The adapting value gw of a sample into its hypercube's sums (sum[0],
 * sum[1]), and its square for the map's sums into *w2. */
static inline void add_adapting(const strata_plan *plan, double gw, double *sum, double *w2)
{
  const double ws = gw * plan->map_scale, dw = gw - plan->shift;
  *w2 = ws * ws;
  sum[0] += dw;
  sum[1] += dw * dw;
}

/* One sample's ncomp values f, at the point of Jacobian jac: into its
 * hypercube's sums (sum[0], sum[1]; c1, c2), and its square of the
 * adapting value for the map's sums into *w2.  Every form adds through it,
 * in sample order, so that they all give the same bits for the same
 * values.  Returns the first component that is not finite (nothing added),
 * or -1. */
static inline int add_values(const strata_plan *plan, int nc, double jac, const double *f,
                             double *sum, double *c1, double *c2, double *w2)
{
  double w[STRATA_MAX_COMP], dc[STRATA_MAX_COMP];
  for (int c = 0; c < nc; c++) {
    if (!isfinite(f[c])) return c;
    w[c] = jac * f[c];
  }
  add_adapting(plan, adapting_value(plan->problem, nc, jac, w, f), sum, w2);
  if (nc > 1) {
    for (int c = 0; c < nc; c++) {
      dc[c] = w[c] - plan->cshift[c];
      c1[c] += dc[c];
    }
    for (int a = 0, p = 0; a < nc; a++)
      for (int b2 = a; b2 < nc; b2++, p++) c2[p] += dc[a] * dc[b2];
  }
  return -1;
}

/* add_values for many components, into the stream. */
static inline int add_streamed(const strata_plan *plan, double jac, const double *f,
                               double *sum, double *w2, strata_compstream *cst)
{
  double abs_sum;
  const int bad = strata_compstream_scan(cst, f, &abs_sum);
  if (bad >= 0) return bad;
  const int k = plan->problem->adapt_comp;
  add_adapting(plan, jac * (k >= 0 ? f[k] : abs_sum), sum, w2);
  strata_compstream_add(cst, jac);
  return -1;
}

/* One cell's sums while its samples are added: the cell h, the sums of
 * the adapting value and of its square, and a vector integrand's (in cst
 * for many components). */
typedef struct {
  int64_t h;
  double sum[2];
  double c1[STRATA_MAX_COMP], c2[STRATA_MAX_COMP * (STRATA_MAX_COMP + 1) / 2];
  strata_compstream *cst;
} cell_sums;

/* The volume of one of the plan's hypercubes. */
static double hcube_volume(const strata_plan *plan)
{
  return 1.0 / (double)plan->strat->nhcube;
}

/* Cell cs->h is complete: its sums into the plan, and on to the next. */
static inline void cell_close(const strata_plan *plan, int nc, cell_sums *cs)
{
  const int np = nc * (nc + 1) / 2;
  if (cs->cst) {
    const int64_t *start = plan->strat->start, h = cs->h;
    strata_compstream_close(cs->cst, h, start[h + 1] - start[h], hcube_volume(plan));
    if (h + 1 < plan->strat->nhcube)
      strata_compstream_open(cs->cst, start[h + 2] - start[h + 1], hcube_volume(plan));
  }
  plan->s1[cs->h] = cs->sum[0];
  plan->s2[cs->h] = cs->sum[1];
  cs->sum[0] = cs->sum[1] = 0.0;
  if (plan->c1) {
    memcpy(plan->c1 + (size_t)cs->h * (size_t)nc, cs->c1, sizeof(double) * (size_t)nc);
    memcpy(plan->c2 + (size_t)cs->h * (size_t)np, cs->c2, sizeof(double) * (size_t)np);
    memset(cs->c1, 0, sizeof(double) * (size_t)nc);
    memset(cs->c2, 0, sizeof(double) * (size_t)np);
  }
  cs->h++;
}

/* What a chunk or block of a run with the peak search adds up besides the
 * hypercubes' sums: per channel the sums of (alpha_c g_c / g) (f / g)^2
 * (W, nchannels of them, with channels) and the largest weights (top). */
typedef struct {
  double *W;
  strata_khat_top *top;
} peaks_acc;

/* A weight into the list of the largest, with its point z (in the unit
 * cube) and |f| there: the search's next starts. */
static void keep_largest(peaks_acc *acc, int dim, double w, int64_t index, const double *z,
                         double f)
{
  double zf[STRATA_MAX_DIM + 1];
  memcpy(zf, z, sizeof(double) * (size_t)dim);
  zf[dim] = fabs(f);
  strata_khat_top_add(acc->top, w, index, zf);
}

/* The list's least weight as a bar to the map's value |f jac|, per sample
 * of a hypercube: w = |f jac| N / (n_h nhcube) ranks at least as high as
 * least only where |f jac| >= n_h least nhcube / N, n_h times this.  It is
 * set a part in 1e12 low, below the roundings of either side, so that the
 * bar passes every sample the list could keep; the weight itself is made
 * only for the few it passes. */
static inline double map_bar(const strata_plan *plan, double least)
{
  return least * ((double)plan->strat->nhcube / (double)plan->strat->total) * (1.0 - 1e-12);
}

/* x's dim doubles into row: for the dimensions up to 8 a copy of known
 * length, a few moves, where a loop of unknown length checks its length
 * and alignment first. */
static inline void copy_point(double *row, const double *x, int dim)
{
  switch (dim) {
#define COPY_POINT(D) \
  case D: memcpy(row, x, sizeof(double) * D); return;
    COPY_POINT(1) COPY_POINT(2) COPY_POINT(3) COPY_POINT(4)
    COPY_POINT(5) COPY_POINT(6) COPY_POINT(7) COPY_POINT(8)
#undef COPY_POINT
  default:
    for (int d = 0; d < dim; d++) row[d] = x[d];
  }
}

/* The samples of a batch of the map alone that passed the list's bar
 * (npass of them: pass holds each one's place j in the batch and its
 * hypercube h): each one's weight |f| vol / g_map = |f| jac N / (n_h
 * nhcube) into the largest weights' list where that keeps it, with its
 * point in the box (map_points_to_unit takes the rows the list keeps to
 * the unit cube once the map's samples are in: most entries do not stay).
 * Out of the sampling loop's code, which notes the samples that pass
 * without a branch (a branch on the bar was mispredicted at most of
 * them); the bar the loop compares with is the list's least at the
 * batch's start, and the list keeps only what ranks above its least now. */
static __attribute__((noinline)) void keep_map_samples(const strata_plan *plan, peaks_acc *acc,
                                                       const int64_t *pass, double *w,
                                                       int64_t npass, int64_t i0, const double *xs,
                                                       const double *fv, const double *jacs)
{
  const int64_t *start = plan->strat->start;
  const int dim = plan->problem->dim;
  const double N = (double)plan->strat->total, nhc = (double)plan->strat->nhcube;
  /* The weights first: their divisions overlap, where each one's wait
   * would hold up the list's test of it. */
  for (int64_t k = 0; k < npass; k++) {
    const int64_t j = pass[2 * k], h = pass[2 * k + 1];
    w[k] = fabs(fv[j]) * jacs[j] * (N / ((double)(start[h + 1] - start[h]) * nhc));
  }
  for (int64_t k = 0; k < npass; k++) {
    const int64_t j = pass[2 * k];
    double *row = strata_khat_top_slot(acc->top, w[k], i0 + j);
    if (!row) continue;
    copy_point(row, xs + j * dim, dim);
    row[dim] = fabs(fv[j]);
  }
}

/* A point x of the box in the unit cube. */
static void unit_point(const strata_plan *plan, const double *x, double *z)
{
  for (int d = 0; d < plan->problem->dim; d++)
    z[d] = (x[d] - plan->map->lower[d]) / plan->map->width[d];
}

/* The points keep_map_samples wrote in the box, of the entries the list
 * keeps (cut to its cap first), in the unit cube. */
static void map_points_to_unit(const strata_plan *plan, strata_khat_top *top)
{
  strata_khat_top_settle(top);
  const int dim = plan->problem->dim;
  double z[STRATA_MAX_DIM];
  for (int64_t i = 0; i < top->n; i++) {
    double *row = top->x + top->slot[i] * top->dim;
    unit_point(plan, row, z);
    memcpy(row, z, sizeof(double) * (size_t)dim);
  }
}

/* Samples i0 .. i0 + n - 1 with values fv (nc each) at Jacobians jac into
 * their cells' sums, in sample order; the squares for the map's sums into
 * w2.  With top (a scalar integrand on the map alone, with the peak
 * search), each sample's weight into the list of the largest too, in the
 * same pass: a sample costs a comparison of |f jac| with the hypercube's
 * bar (map_bar), and its weight and point are made only where it passes.
 * Returns the first sample whose value is not finite (*bad its
 * component), or -1.  Always inlined, so that nc = 1 makes the scalar
 * integrand's loop of its own. */
static inline __attribute__((always_inline)) int64_t
add_batch(const strata_plan *plan, int nc, int64_t i0, int64_t n, const double *jac,
          const double *fv, double *w2, cell_sums *cs, int *bad, peaks_acc *top,
          const double *x, int64_t *pass, double *passw)
{
  const int64_t *start = plan->strat->start;
  double per_sample = 0.0, bar = 0.0; /* map_bar, and n_h times it */
  if (top) {
    per_sample = map_bar(plan, strata_khat_top_least(top->top));
    bar = per_sample * (double)(start[cs->h + 1] - start[cs->h]);
  }
  /* The running sums in a local, which the compiler keeps in registers. */
  double sum[2] = {cs->sum[0], cs->sum[1]};
  int64_t npass = 0;
  for (int64_t j = 0; j < n; j++) {
    while (i0 + j >= start[cs->h + 1]) {
      cs->sum[0] = sum[0];
      cs->sum[1] = sum[1];
      cell_close(plan, nc, cs);
      sum[0] = sum[1] = 0.0;
      if (top) bar = per_sample * (double)(start[cs->h + 1] - start[cs->h]);
    }
    if (top) { /* a scalar integrand (no stream), whose f jac the bar takes too */
      const double fjac = fabs(jac[j] * fv[j]); /* before w2's store, which may alias them */
      *bad = add_values(plan, 1, jac[j], fv + j, sum, cs->c1, cs->c2, w2 + j);
      if (*bad >= 0) return j;
      pass[2 * npass] = j;
      pass[2 * npass + 1] = cs->h;
      npass += fjac >= bar;
      continue;
    }
    *bad = cs->cst ? add_streamed(plan, jac[j], fv + j * nc, sum, w2 + j, cs->cst)
                   : add_values(plan, nc, jac[j], fv + j * nc, sum, cs->c1, cs->c2, w2 + j);
    if (*bad >= 0) return j;
  }
  cs->sum[0] = sum[0];
  cs->sum[1] = sum[1];
  if (npass > 0) keep_map_samples(plan, top, pass, passw, npass, i0, x, fv, jac);
  return -1;
}

/* A batch's samples into the chunk's map sums, axis by axis: each
 * increment still receives its samples in sample order. */
static void add_map_sums(int dim, int ninc, int64_t n, const int *inc, size_t istride,
                         const double *w2, map_cell *map)
{
  for (int d = 0; d < dim; d++) {
    map_cell *md = map + (size_t)d * (size_t)ninc;
    const int *id = inc + (size_t)d * istride;
    for (int64_t j = 0; j < n; j++) {
      md[id[j]].w += w2[j];
      md[id[j]].n++;
    }
  }
}

/* The counts so far into cc, before they outgrow their 32 bits: whole
 * numbers, so the parts add up exactly to the whole.  The sums of squares
 * stay where they are: split, they would round otherwise than one sum in
 * sample order. */
static void map_counts_out(map_cell *map, size_t cells, int first, double *cc)
{
  for (size_t c = 0; c < cells; c++) {
    cc[c] = first ? map[c].n : cc[c] + map[c].n;
    map[c].n = 0;
  }
}

/* The chunk's map sums into cw and cc (first: no counts went out yet). */
static void map_sums_out(map_cell *map, size_t cells, int first, double *cw, double *cc)
{
  map_counts_out(map, cells, first, cc);
  for (size_t c = 0; c < cells; c++) {
    cw[c] = map[c].w;
    map[c].w = 0.0;
  }
}

/* One point's weight |f| vol / g into acc (W, top), with channels; gm is
 * alpha_0 g_map(z) and g the whole mixture.  Returns alpha_0 g_map / g,
 * the part of f the map keeps. */
static double weigh(const strata_plan *plan, double f, double vol, double gm, const double *z,
                    int64_t index, peaks_acc *acc)
{
  const strata_channels *ch = plan->channels;
  double a[STRATA_MAX_CHANNELS + 2];
  const double g = gm + strata_channels_parts(ch, z, a), w = fabs(f) * vol / g, w2 = w * w;
  acc->W[0] += gm / g * w2;
  for (int c = 1; c < strata_channels_count(ch); c++) acc->W[c] += a[c] / g * w2;
  keep_largest(acc, plan->problem->dim, w, index, z, f);
  return gm / g;
}

/* A batch of the map's samples i0 .. i0 + n - 1 weighed with channels, *hw
 * their running hypercube: each value becomes f alpha_0 g_map / g.  A
 * scalar integrand's. */
static void weigh_map_batch(const strata_plan *plan, int64_t i0, int64_t n, cpu_scratch *sc,
                            int64_t *hw, peaks_acc *acc)
{
  const strata_strat *s = plan->strat;
  const int dim = plan->problem->dim;
  const double nhc = (double)s->nhcube;
  double z[STRATA_MAX_DIM];
  const double vol = strata_backend_box_volume(plan), N = (double)plan->channels->N;
  for (int64_t j = 0; j < n; j++) {
    while (i0 + j >= s->start[*hw + 1]) ++*hw;
    const double nh = (double)(s->start[*hw + 1] - s->start[*hw]);
    const double gm = nh * nhc * vol / (N * sc->jac[j]);
    unit_point(plan, sc->x + j * dim, z);
    sc->fv[j] *= weigh(plan, sc->fv[j], vol, gm, z, i0 + j, acc);
  }
}

/* Channel block b: its points drawn, evaluated inside the cube (outside
 * f is 0), valued f vol alpha_c / g into out (points, mean, sum of squared
 * deviations), weighed into acc.  Returns 0, or -1 with st naming the
 * first point whose value is not finite. */
static int sample_block(const strata_plan *plan, int64_t b, cpu_scratch *sc, peaks_acc *acc,
                        double *out, chunk_status *st)
{
  const strata_channels *ch = plan->channels;
  const strata_problem *pr = plan->problem;
  const int dim = pr->dim;
  int c;
  int64_t j0, j1;
  strata_channels_block(ch, b, &c, &j0, &j1);
  const int64_t n = j1 - j0;
  double z[STRATA_CHANNEL_BLOCK][STRATA_MAX_DIM];
  char in[STRATA_CHANNEL_BLOCK];
  int64_t m = 0;
  for (int64_t j = 0; j < n; j++) {
    in[j] = (char)strata_channels_point(ch, plan->seed, plan->iteration, c, j0 + j, z[j]);
    if (!in[j]) continue;
    for (int d = 0; d < dim; d++)
      sc->x[m * dim + d] = plan->map->lower[d] + plan->map->width[d] * z[j][d];
    m++;
  }
  problem_values(pr, m, sc->x, 1, sc->fv);
  const double vol = strata_backend_box_volume(plan), share = (double)ch->n[c] / (double)ch->N;
  double mean = 0.0, m2 = 0.0;
  for (int64_t j = 0, k = 0; j < n; j++) {
    const double f = in[j] ? sc->fv[k++] : 0.0;
    if (!isfinite(f)) {
      st->bad_index = strata_channels_index(ch, c, j0 + j);
      st->bad_fx = f;
      st->bad_comp = -1;
      memcpy(st->bad_x, sc->x + (k - 1) * dim, sizeof(double) * (size_t)dim);
      return -1;
    }
    const double gm = strata_backend_map_density(plan, z[j]);
    double a[STRATA_MAX_CHANNELS + 2];
    const double g = gm + strata_channels_parts(ch, z[j], a);
    if (in[j]) weigh(plan, f, vol, gm, z[j], strata_channels_index(ch, c, j0 + j), acc);
    const double v = f * vol * share / g, d = v - mean;
    mean += d / (double)(j + 1);
    m2 += d * (v - mean);
  }
  out[0] = (double)n;
  out[1] = mean;
  out[2] = m2;
  return 0;
}

/* Hypercubes [ha, hb), in batches of B samples: the points, the
 * integrand's values at them, then the values added in sample order,
 * and the chunk's map sums into cw and cc.  Always inlined, for
 * add_batch's sake. */
static inline __attribute__((always_inline)) void
sample_chunk_nc(const strata_plan *plan, int nc, int64_t ha, int64_t hb, int64_t B,
                cpu_scratch *sc, strata_compstream *cst, double *cw, double *cc,
                peaks_acc *acc, chunk_status *st)
{
  int64_t hw = ha; /* the hypercube of the samples weighed (acc) */
  const strata_problem *pr = plan->problem;
  const int dim = pr->dim, ninc = strata_map_res(plan->map);
  st->bad_index = -1;
  strata_points_walk walk;
  strata_points_start(plan, ha, &walk);
  cell_sums cs = {.h = ha, .cst = cst};
  if (cst) {
    strata_compstream_clear(cst);
    strata_compstream_open(cst, plan->strat->start[ha + 1] - plan->strat->start[ha],
                           hcube_volume(plan));
  }
  int64_t counted = 0; /* samples in the map's counts since they last went out */
  int out = 0;         /* times they went out */
  const int64_t iend = plan->strat->start[hb];
  for (int64_t i0 = plan->strat->start[ha]; i0 < iend; i0 += B) {
    const int64_t n = iend - i0 < B ? iend - i0 : B;
    for (int64_t j = 0; j < n; j += STRATA_POINT_BLOCK)
      strata_points_block(plan, &walk, i0 + j,
                          (int)(n - j < STRATA_POINT_BLOCK ? n - j : STRATA_POINT_BLOCK),
                          sc->x + j * dim, sc->jac + j, sc->inc + j, (size_t)B);
    problem_values(pr, n, sc->x, nc, sc->fv);
    if (acc && plan->channels) weigh_map_batch(plan, i0, n, sc, &hw, acc);
    int bad;
    /* The map alone weighed in its own copy of the loop. */
    const int64_t j =
        acc && !plan->channels
            ? add_batch(plan, nc, i0, n, sc->jac, sc->fv, sc->w2, &cs, &bad, acc, sc->x, sc->pass,
                        sc->passw)
            : add_batch(plan, nc, i0, n, sc->jac, sc->fv, sc->w2, &cs, &bad, NULL, NULL, NULL,
                        NULL);
    if (j >= 0) {
      mark_bad(st, i0 + j, sc->fv[j * nc + bad], nc > 1 ? bad : -1, sc->x + j * dim, dim);
      memset(sc->map, 0, sizeof(map_cell) * sc->cells); /* as the next chunk expects it */
      return;
    }
    if (plan->adapt) {
      if (counted + n > UINT32_MAX) {
        map_counts_out(sc->map, sc->cells, !out++, cc);
        counted = 0;
      }
      add_map_sums(dim, ninc, n, sc->inc, (size_t)B, sc->w2, sc->map);
      counted += n;
    }
  }
  while (cs.h < hb) cell_close(plan, nc, &cs);
  if (plan->adapt) map_sums_out(sc->map, sc->cells, !out, cw, cc);
}

/* A scalar integrand's chunk, with the peak search and without: each
 * loop a function of its own, whose code a change to the other's does not
 * move. */
static __attribute__((noinline)) void sample_chunk_scalar(const strata_plan *plan, int64_t ha,
                                                          int64_t hb, int64_t B, cpu_scratch *sc,
                                                          double *cw, double *cc, chunk_status *st)
{
  sample_chunk_nc(plan, 1, ha, hb, B, sc, NULL, cw, cc, NULL, st);
}

static __attribute__((noinline)) void sample_chunk_peaks(const strata_plan *plan, int64_t ha,
                                                         int64_t hb, int64_t B, cpu_scratch *sc,
                                                         double *cw, double *cc, peaks_acc *acc,
                                                         chunk_status *st)
{
  sample_chunk_nc(plan, 1, ha, hb, B, sc, NULL, cw, cc, acc, st);
}

static void sample_chunk(const strata_plan *plan, int64_t ha, int64_t hb, int64_t B,
                         cpu_scratch *sc, strata_compstream *cst, double *cw, double *cc,
                         peaks_acc *acc, chunk_status *st)
{
  const int nc = plan->problem->ncomp > 1 ? plan->problem->ncomp : 1;
  if (nc == 1 && acc) sample_chunk_peaks(plan, ha, hb, B, sc, cw, cc, acc, st);
  else if (nc == 1) sample_chunk_scalar(plan, ha, hb, B, sc, cw, cc, st);
  else if (!cst) sample_chunk_nc(plan, nc, ha, hb, B, sc, NULL, cw, cc, NULL, st);
  else sample_chunk_nc(plan, nc, ha, hb, B, sc, cst, cw, cc, NULL, st);
}

/* n streams of nc components, those kept from the last call where they fit. */
static int streams_reserve(cpu_backend *cb, int n, int nc)
{
  if (cb->nstreams > 0 && cb->streams[0]->nc != nc) {
    for (int i = 0; i < cb->nstreams; i++) strata_compstream_free(cb->streams[i]);
    cb->nstreams = 0;
  }
  if (n <= cb->nstreams) return 0;
  strata_compstream **more = realloc(cb->streams, sizeof *more * (size_t)n);
  if (!more) return -1;
  cb->streams = more;
  for (; cb->nstreams < n; cb->nstreams++)
    if (!(cb->streams[cb->nstreams] = strata_compstream_alloc(nc))) return -1;
  return 0;
}

static void scratch_free(cpu_scratch *sc)
{
  free(sc->x);
  free(sc->jac);
  free(sc->fv);
  free(sc->w2);
  free(sc->inc);
  free(sc->pass);
  free(sc->passw);
  free(sc->map);
  memset(sc, 0, sizeof *sc);
}

/* nt threads' working arrays for batches of B samples, with the map sums
 * zeroed: those kept from the last call where they are large enough. */
static int scratch_reserve(cpu_backend *cb, int nt, const strata_plan *plan, int64_t B)
{
  const strata_problem *pr = plan->problem;
  const int dim = pr->dim, nc = pr->ncomp > 1 ? pr->ncomp : 1;
  const size_t cells = (size_t)dim * (size_t)strata_map_res(plan->map);
  if (nt > cb->nscratch) {
    cpu_scratch *more = realloc(cb->scratch, sizeof *more * (size_t)nt);
    if (!more) return -1;
    memset(more + cb->nscratch, 0, sizeof *more * (size_t)(nt - cb->nscratch));
    cb->scratch = more;
    cb->nscratch = nt;
  }
  for (int t = 0; t < nt; t++) {
    cpu_scratch *sc = &cb->scratch[t];
    if (sc->x && sc->cap >= B && sc->dim >= dim && sc->nc >= nc && sc->cells == cells)
      continue;
    scratch_free(sc);
    const size_t n = (size_t)B;
    sc->x = malloc(sizeof(double) * n * (size_t)dim);
    sc->jac = malloc(sizeof(double) * n);
    sc->fv = malloc(sizeof(double) * n * (size_t)nc);
    sc->w2 = malloc(sizeof(double) * n);
    sc->inc = malloc(sizeof(int) * n * (size_t)dim);
    sc->pass = malloc(sizeof(int64_t) * 2 * n);
    sc->passw = malloc(sizeof(double) * n);
    sc->map = calloc(cells, sizeof(map_cell));
    if (!sc->x || !sc->jac || !sc->fv || !sc->w2 || !sc->inc || !sc->pass || !sc->passw ||
        !sc->map) {
      scratch_free(sc);
      return -1;
    }
    sc->cap = B;
    sc->dim = dim;
    sc->nc = nc;
    sc->cells = cells;
  }
  return 0;
}

/* The backends' shared message, naming the component of a vector integrand. */
static int report_bad(const strata_plan *plan, const chunk_status *st)
{
  int rc = strata_backend_report_nonfinite(plan, st->bad_fx, st->bad_index, st->bad_x);
  if (st->bad_comp < 0) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "%s in component %d of %d", msg, st->bad_comp,
                      plan->problem->ncomp);
}

/* The nchunk chunks' hypercubes, bounds[0 .. nchunk]: their boundaries
 * balance samples, not hypercubes (VEGAS+ piles samples into few
 * hypercubes), and each chunk holds at least one. */
static void chunk_bounds(const strata_plan *plan, int nchunk, int64_t *bounds)
{
  const strata_strat *s = plan->strat;
  const int64_t first = s->start[plan->h0], total = s->start[plan->h1] - first;
  bounds[0] = plan->h0;
  for (int c = 1; c < nchunk; c++) {
    int64_t h = strata_strat_find(s, first + total * c / nchunk);
    if (h <= bounds[c - 1]) h = bounds[c - 1] + 1;
    if (h > plan->h1 - (nchunk - c)) h = plan->h1 - (nchunk - c);
    bounds[c] = h;
  }
  bounds[nchunk] = plan->h1;
}

/* The chunks' map sums (chunk_w) into the plan's: per increment 0.0 +
 * chunk 0 + chunk 1 + ..., in chunk order, a stretch of increments at a
 * time, chunk by chunk, so that each chunk's sums are read in order. */
static void add_chunks_map_sums(const strata_plan *plan, const double *chunk_w, int nchunk,
                                size_t cells, int nt)
{
  enum { STRETCH = 512 };
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#else
  (void)nt;
#endif
  for (size_t i0 = 0; i0 < cells; i0 += STRETCH) {
    const size_t m = cells - i0 < STRETCH ? cells - i0 : STRETCH;
    double w[STRETCH], n[STRETCH];
    for (size_t i = 0; i < m; i++) w[i] = n[i] = 0.0;
    for (int c = 0; c < nchunk; c++) {
      const double *cw = chunk_w + (size_t)c * 2 * cells + i0, *cc = cw + cells;
      for (size_t i = 0; i < m; i++) {
        w[i] += cw[i];
        n[i] += cc[i];
      }
    }
    for (size_t i = 0; i < m; i++) {
      plan->wsum[i0 + i] += w[i];
      plan->wcount[i0 + i] += n[i];
    }
  }
}

/* The threads a call samples with. */
static int threads(const cpu_backend *cb)
{
#ifdef _OPENMP
  return cb->nthreads > 0 ? cb->nthreads : omp_get_max_threads();
#else
  (void)cb;
  return 1;
#endif
}

/* *buf holds at least n doubles (kept from call to call). */
static int peaks_reserve(double **buf, size_t *len, size_t n)
{
  if (n <= *len) return 0;
  double *more = realloc(*buf, sizeof(double) * n);
  if (!more) return -1;
  *buf = more;
  *len = n;
  return 0;
}

/* The nchunk chunks sampled by nt threads, each chunk's outcome into st:
 * in one wave, or where many components stream (streamed) in waves of nt
 * chunks, whose parts of the estimate are added into the plan's in chunk
 * order. */
static void sample_chunks(cpu_backend *cb, strata_plan *plan, const int64_t *bounds, int nchunk,
                          int64_t B, int nt, int streamed, chunk_status *st)
{
  const size_t cells = (size_t)plan->problem->dim * (size_t)strata_map_res(plan->map);
  const int wave = streamed ? nt : nchunk;
  plan->bad = -1;
  for (int w0 = 0; w0 < nchunk; w0 += wave) {
    const int w1 = nchunk - w0 < wave ? nchunk : w0 + wave;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
    for (int c = w0; c < w1; c++) {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      double *cw = plan->adapt ? cb->chunk_w + (size_t)c * 2 * cells : NULL;
      peaks_acc acc = {cb->chunk_W ? cb->chunk_W + (size_t)c * (size_t)plan->nchannels : NULL,
                       &cb->tops[t]};
      sample_chunk(plan, bounds[c], bounds[c + 1], B, &cb->scratch[t],
                   streamed ? cb->streams[c - w0] : NULL, cw, cw ? cw + cells : NULL,
                   plan->peaks ? &acc : NULL, &st[c]);
    }
    for (int c = w0; streamed && c < w1; c++) {
      const strata_compstream *cst = cb->streams[c - w0];
      if (plan->bad < 0 && cst->bad >= 0) {
        plan->bad = cst->bad;
        plan->bad_near = cst->bad_near;
      }
      strata_compstream_into_part(cst, plan->part);
    }
  }
}

static int sample_map(cpu_backend *cb, strata_plan *plan)
{
  const strata_strat *s = plan->strat;
  const int64_t nh = plan->h1 - plan->h0;
  if (nh <= 0) return STRATA_OK;
  const int64_t first = s->start[plan->h0], total = s->start[plan->h1] - first;
  int64_t want = total / CPU_MIN_CHUNK_SAMPLES;
  if (want > CPU_MAX_CHUNKS) want = CPU_MAX_CHUNKS;
  if (want > nh) want = nh;
  const int nchunk = want < 1 ? 1 : (int)want;
  const size_t cells = (size_t)plan->problem->dim * (size_t)strata_map_res(plan->map);

  if (plan->adapt) {
    size_t need = (size_t)nchunk * 2 * cells;
    if (need > cb->chunk_w_len) {
      free(cb->chunk_w);
      cb->chunk_w = malloc(sizeof(double) * need);
      cb->chunk_w_len = cb->chunk_w ? need : 0;
      if (!cb->chunk_w)
        return strata_error(STRATA_ENOMEM, "cpu backend: cannot allocate %zu MB for map sums",
                            need * sizeof(double) >> 20);
    }
  }

  int64_t bounds[CPU_MAX_CHUNKS + 1];
  chunk_bounds(plan, nchunk, bounds);

  /* The batch: the caller's for fb (no longer than the longest chunk,
   * whose batches are then the same), else CPU_BATCH. */
  const strata_problem *pr = plan->problem;
  int64_t B = pr->fb ? (pr->batch > 0 ? pr->batch : 1024) : CPU_BATCH, longest = 1;
  for (int c = 0; c < nchunk; c++)
    if (s->start[bounds[c + 1]] - s->start[bounds[c]] > longest)
      longest = s->start[bounds[c + 1]] - s->start[bounds[c]];
  if (B > longest) B = longest;

  const int nt = threads(cb);
  if (plan->peaks && B < STRATA_CHANNEL_BLOCK) B = STRATA_CHANNEL_BLOCK; /* the blocks' too */
  if (scratch_reserve(cb, nt, plan, B) != 0)
    return strata_error(STRATA_ENOMEM, "cpu backend: no memory for %d threads' batches of "
                        "%lld points", nt, (long long)B);

  /* Many components (streamed): a part of the estimate for each chunk of a wave. */
  const int streamed = pr->ncomp > 1 && !plan->c1;
  if (streamed && streams_reserve(cb, nt, pr->ncomp) != 0)
    return strata_error(STRATA_ENOMEM, "cpu backend: no memory for %d threads' sums of %d "
                        "components (%zu MB each)", nt, pr->ncomp,
                        (size_t)pr->ncomp * (size_t)(pr->ncomp + 1) / 2 * sizeof(double) >> 20);
  chunk_status st[CPU_MAX_CHUNKS];
  const size_t nW = (size_t)plan->nchannels;
  if (plan->channels && peaks_reserve(&cb->chunk_W, &cb->chunk_W_len, (size_t)nchunk * nW) != 0)
    return strata_error(STRATA_ENOMEM, "cpu backend: out of memory");
  if (cb->chunk_W) memset(cb->chunk_W, 0, sizeof(double) * (size_t)nchunk * nW);
  sample_chunks(cb, plan, bounds, nchunk, B, nt, streamed, st);
  for (int c = 0; plan->channels && c < nchunk; c++) /* in chunk order */
    for (size_t k = 0; k < nW; k++) plan->chsum[k] += cb->chunk_W[(size_t)c * nW + k];

  int worst = -1;
  for (int c = 0; c < nchunk; c++)
    if (st[c].bad_index >= 0) {
      worst = c;
      break; /* chunks are in sample order: the first one has the first bad sample */
    }
  if (worst >= 0)
    return report_bad(plan, &st[worst]);

  if (plan->adapt) add_chunks_map_sums(plan, cb->chunk_w, nchunk, cells, nt);
  if (streamed) {
    strata_compstream_mirror(plan->ncomp, plan->part);
    if (plan->bad >= 0) return STRATA_OK;
  }
  return plan->combine != STRATA_COMBINE_CELLS ? strata_backend_host_part(plan) : STRATA_OK;
}

/* The channels' blocks of this rank (plan->chb0 .. chb1), by nt threads:
 * each block's sums into the plan's chsum at its place, their W in block
 * order after the map's. */
static int sample_channels(cpu_backend *cb, strata_plan *plan, int nt)
{
  const int64_t nb = plan->chb1 - plan->chb0;
  const size_t nW = (size_t)plan->nchannels;
  if (nb <= 0) return STRATA_OK;
  if (scratch_reserve(cb, nt, plan, STRATA_CHANNEL_BLOCK) != 0 ||
      peaks_reserve(&cb->block_W, &cb->block_W_len, (size_t)nb * nW) != 0)
    return strata_error(STRATA_ENOMEM, "cpu backend: out of memory for the channels' points");
  memset(cb->block_W, 0, sizeof(double) * (size_t)nb * nW);
  chunk_status st = {.bad_index = -1};
  int64_t first_bad = -1;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
  for (int64_t b = plan->chb0; b < plan->chb1; b++) {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    peaks_acc acc = {cb->block_W + (size_t)(b - plan->chb0) * nW, &cb->tops[t]};
    chunk_status mine = {.bad_index = -1};
    if (sample_block(plan, b, &cb->scratch[t], &acc,
                     plan->chsum + nW + (size_t)b * STRATA_CHANNEL_BLOCK_SUMS, &mine) != 0) {
#ifdef _OPENMP
#pragma omp critical(strata_channel_bad)
#endif
      if (first_bad < 0 || b < first_bad) {
        first_bad = b;
        st = mine;
      }
    }
  }
  if (first_bad >= 0) return report_bad(plan, &st);
  for (int64_t b = 0; b < nb; b++)
    for (size_t k = 0; k < nW; k++) plan->chsum[k] += cb->block_W[(size_t)b * nW + k];
  return STRATA_OK;
}

/* The map's samples, then with the peak search on the channels' points,
 * and every thread's largest weights into the plan's list. */
static int cpu_sample(strata_backend *b, strata_plan *plan)
{
  cpu_backend *cb = b->self;
  const int nt = threads(cb);
  if (plan->peaks) {
    if (cb->ntops < nt) {
      strata_khat_top *more = realloc(cb->tops, sizeof *more * (size_t)nt);
      if (!more) return strata_error(STRATA_ENOMEM, "cpu backend: out of memory");
      memset(more + cb->ntops, 0, sizeof *more * (size_t)(nt - cb->ntops));
      cb->tops = more;
      cb->ntops = nt;
    }
    for (int t = 0; t < nt; t++) {
      if (cb->tops[t].cap != plan->top->cap || cb->tops[t].dim != plan->top->dim) {
        strata_khat_top_free(&cb->tops[t]);
        if (strata_khat_top_init(&cb->tops[t], plan->top->cap, plan->top->dim) != STRATA_OK)
          return strata_error(STRATA_ENOMEM, "cpu backend: out of memory");
      }
      strata_khat_top_clear(&cb->tops[t]);
    }
  }
  int rc = sample_map(cb, plan);
  for (int t = 0; rc == STRATA_OK && plan->peaks && !plan->channels && t < nt; t++)
    map_points_to_unit(plan, &cb->tops[t]);
  if (rc == STRATA_OK && plan->channels) rc = sample_channels(cb, plan, nt);
  for (int t = 0; rc == STRATA_OK && plan->peaks && t < nt; t++)
    strata_khat_top_take(plan->top, &cb->tops[t]);
  return rc;
}

/* The peak search's points (backend.h's eval): stretches of the batch, one
 * thread each, through the problem's form as sampling calls it.  The
 * search's batches are small (a few gradients' stencils), so the stretches
 * are cut to give every thread a share, down to a few points: an
 * integrand worth a search is often costly. */
static int cpu_eval(strata_backend *b, const strata_problem *pr, int64_t n, const double *y,
                    double *f)
{
  const cpu_backend *cb = b->self;
  const int dim = pr->dim, nc = pr->ncomp > 1 ? pr->ncomp : 1;
  int64_t B = pr->fb ? (pr->batch > 0 ? pr->batch : 1024) : CPU_BATCH;
  int nt = cb->nthreads, nomem = 0;
#ifdef _OPENMP
  if (nt <= 0) nt = omp_get_max_threads();
#else
  nt = 1;
#endif
  const int64_t share = (n + nt - 1) / nt, least = share > 16 ? share : 16;
  if (B > least) B = least;
  const int64_t nstretch = (n + B - 1) / B;
  if (nt > nstretch) nt = nstretch > 0 ? (int)nstretch : 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) reduction(|| : nomem)
#endif
  {
    double *x = malloc(sizeof(double) * (size_t)B * (size_t)dim);
    double *fv = malloc(sizeof(double) * (size_t)B * (size_t)nc);
    if (!x || !fv) nomem = 1;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
    for (int64_t c = 0; c < nstretch; c++) {
      if (!x || !fv) continue;
      const int64_t i0 = c * B, m = n - i0 < B ? n - i0 : B;
      for (int64_t j = 0; j < m; j++)
        for (int d = 0; d < dim; d++)
          x[j * dim + d] = pr->lower[d] + (pr->upper[d] - pr->lower[d]) * y[(i0 + j) * dim + d];
      problem_values(pr, m, x, nc, fv);
      for (int64_t j = 0; j < m; j++) {
        const double *v = fv + j * nc;
        double a = 0.0;
        if (nc == 1) a = fabs(v[0]);
        else if (pr->adapt_comp >= 0) a = fabs(v[pr->adapt_comp]);
        else
          for (int k = 0; k < nc; k++) a += fabs(v[k]);
        f[i0 + j] = a;
      }
    }
    free(x);
    free(fv);
  }
  if (nomem)
    return strata_error(STRATA_ENOMEM, "cpu backend: no memory for batches of %lld points",
                        (long long)B);
  return STRATA_OK;
}

static void cpu_free(strata_backend *b)
{
  cpu_backend *cb = b->self;
  for (int t = 0; t < cb->nscratch; t++) scratch_free(&cb->scratch[t]);
  free(cb->scratch);
  for (int i = 0; i < cb->nstreams; i++) strata_compstream_free(cb->streams[i]);
  free(cb->streams);
  free(cb->chunk_w);
  for (int t = 0; t < cb->ntops; t++) strata_khat_top_free(&cb->tops[t]);
  free(cb->tops);
  free(cb->chunk_W);
  free(cb->block_W);
  free(cb);
  free(b);
}

strata_backend *strata_backend_cpu_new(int nthreads)
{
  strata_backend *b = calloc(1, sizeof *b);
  cpu_backend *cb = calloc(1, sizeof *cb);
  if (!b || !cb) {
    free(b);
    free(cb);
    strata_error(STRATA_ENOMEM, "cpu backend: out of memory");
    return NULL;
  }
  cb->nthreads = nthreads;
  b->name = "cpu";
  b->self = cb;
  b->sample = cpu_sample;
  b->adapt = strata_backend_host_adapt;
  b->free = cpu_free;
  b->eval = cpu_eval;
  return b;
}
