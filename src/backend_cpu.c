/* CPU backend: OpenMP over fixed chunks of hypercubes.
 *
 * Results must not depend on the number of threads.  Per-hypercube sums are
 * each made by one thread in sample order, so they are already fixed; the
 * map's per-increment sums mix many hypercubes, so each chunk has its own and
 * the chunks are added in chunk order.  The chunking depends only on the
 * hypercube range, never on the threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "error.h"
#include "philox.h"

#define CPU_MAX_CHUNKS 128
/* Each chunk's map sums cost dim*ninc doubles to clear and add: below this
 * many samples a chunk would spend more on that than on sampling. */
#define CPU_MIN_CHUNK_SAMPLES 8192

typedef struct {
  int nthreads;
  double *chunk_w;      /* [CPU_MAX_CHUNKS][2][dim*ninc] */
  size_t chunk_w_len;
} cpu_backend;

typedef struct {
  int64_t bad_index;    /* first sample with a non-finite value, or -1 */
  double bad_fx;
  int bad_comp;         /* its component (vector integrands), or -1 */
  double bad_x[STRATA_MAX_DIM];
  int nomem;            /* no room for a batch's points */
} chunk_status;

static void mark_bad(chunk_status *st, int64_t i, double fx, int comp, const double *x, int dim)
{
  st->bad_index = i;
  st->bad_fx = fx;
  st->bad_comp = comp;
  memcpy(st->bad_x, x, sizeof(double) * (size_t)dim);
}

static void sample_chunk(const strata_sample_job *job, int64_t ha, int64_t hb,
                         double *cw, double *cc, chunk_status *st)
{
  const strata_problem *pr = job->problem;
  const strata_map *g = job->map;
  const strata_strat *s = job->strat;
  const int dim = pr->dim, ninc = g->ninc;
  double u[STRATA_MAX_DIM], y[STRATA_MAX_DIM], x[STRATA_MAX_DIM];
  int k[STRATA_MAX_DIM], inc[STRATA_MAX_DIM];
  st->bad_index = -1;
  st->nomem = 0;
  strata_qmc_cursor cur = {.next = -1};
  for (int64_t h = ha; h < hb; h++) {
    strata_strat_coords(s, h, k);
    double s1 = 0.0, s2 = 0.0;
    const int64_t i0 = s->start[h], i1 = s->start[h + 1];
    for (int64_t i = i0; i < i1; i++) {
      if (job->qmc) {
        strata_qmc_point(job->qmc, &cur, i, y);
      } else {
        strata_sample_point(job, k, i, u, y);
      }
      double jac = strata_map_apply(g, y, x, inc);
      double fx = pr->f(x, dim, pr->params);
      if (!isfinite(fx)) {
        mark_bad(st, i, fx, -1, x, dim);
        return;
      }
      double w = jac * fx, ws = w * job->map_scale, w2 = ws * ws, dw = w - job->shift;
      s1 += dw;
      s2 += dw * dw;
      if (job->adapt)
        for (int d = 0; d < dim; d++) {
          cw[(size_t)d * ninc + inc[d]] += w2;
          cc[(size_t)d * ninc + inc[d]] += 1.0;
        }
    }
    job->s1[h] = s1;
    job->s2[h] = s2;
  }
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

/* One sample's ncomp values f, at the point of Jacobian jac in map
 * increments inc: into its hypercube's sums (sum[0], sum[1]; c1, c2) and
 * the map's (cw, cc).  Both loops below add through it, in sample order, so
 * that every vector form gives the same bits.  Returns the first component
 * that is not finite (nothing added), or -1. */
static inline int add_values(const strata_sample_job *job, int nc, int dim, int ninc,
                             double jac, const double *f, const int *inc, double *sum,
                             double *c1, double *c2, double *cw, double *cc)
{
  double w[STRATA_MAX_COMP], dc[STRATA_MAX_COMP];
  for (int c = 0; c < nc; c++) {
    if (!isfinite(f[c])) return c;
    w[c] = jac * f[c];
  }
  double gw = adapting_value(job->problem, nc, jac, w, f), ws = gw * job->map_scale,
         w2 = ws * ws, dw = gw - job->shift;
  sum[0] += dw;
  sum[1] += dw * dw;
  if (job->adapt)
    for (int d = 0; d < dim; d++) {
      cw[(size_t)d * ninc + inc[d]] += w2;
      cc[(size_t)d * ninc + inc[d]] += 1.0;
    }
  if (job->c1) {
    for (int c = 0; c < nc; c++) {
      dc[c] = w[c] - job->cshift[c];
      c1[c] += dc[c];
    }
    for (int a = 0, p = 0; a < nc; a++)
      for (int b2 = a; b2 < nc; b2++, p++) c2[p] += dc[a] * dc[b2];
  }
  return -1;
}

/* The same for the extended form (fv): kept apart so that the scalar loop
 * above stays as tight as it was.  With ncomp <= 1 it adds exactly what the
 * scalar loop adds, so fv and f give the same bits for the same function. */
static void sample_chunk_vec(const strata_sample_job *job, int64_t ha, int64_t hb,
                             double *cw, double *cc, chunk_status *st)
{
  const strata_problem *pr = job->problem;
  const strata_map *g = job->map;
  const strata_strat *s = job->strat;
  const int dim = pr->dim, ninc = g->ninc;
  const int nc = pr->ncomp > 1 ? pr->ncomp : 1, np = nc * (nc + 1) / 2;
  double u[STRATA_MAX_DIM], y[STRATA_MAX_DIM], x[STRATA_MAX_DIM];
  double fv[STRATA_MAX_COMP];
  double c1[STRATA_MAX_COMP], c2[STRATA_MAX_COMP * (STRATA_MAX_COMP + 1) / 2];
  int k[STRATA_MAX_DIM], inc[STRATA_MAX_DIM];
  st->bad_index = -1;
  st->nomem = 0;
  strata_qmc_cursor cur = {.next = -1};
  for (int64_t h = ha; h < hb; h++) {
    strata_strat_coords(s, h, k);
    double sum[2] = {0.0, 0.0};
    memset(c1, 0, sizeof(double) * (size_t)nc);
    memset(c2, 0, sizeof(double) * (size_t)np);
    const int64_t i0 = s->start[h], i1 = s->start[h + 1];
    for (int64_t i = i0; i < i1; i++) {
      if (job->qmc) {
        strata_qmc_point(job->qmc, &cur, i, y);
      } else {
        strata_sample_point(job, k, i, u, y);
      }
      double jac = strata_map_apply(g, y, x, inc);
      pr->fv(x, dim, pr->params, pr->tables, fv);
      int bad = add_values(job, nc, dim, ninc, jac, fv, inc, sum, c1, c2, cw, cc);
      if (bad >= 0) {
        mark_bad(st, i, fv[bad], nc > 1 ? bad : -1, x, dim);
        return;
      }
    }
    job->s1[h] = sum[0];
    job->s2[h] = sum[1];
    if (job->c1) {
      memcpy(job->c1 + (size_t)h * (size_t)nc, c1, sizeof(double) * (size_t)nc);
      memcpy(job->c2 + (size_t)h * (size_t)np, c2, sizeof(double) * (size_t)np);
    }
  }
}

/* The caller's forms (fu, fb): the points of consecutive samples go to
 * the integrand in blocks (of one for fu), then every value is added in
 * sample order exactly as sample_chunk_vec adds it, so that the two forms,
 * and fv computing the same values, give the same bits. */
static void sample_chunk_user(const strata_sample_job *job, int64_t ha, int64_t hb,
                              double *cw, double *cc, chunk_status *st)
{
  const strata_problem *pr = job->problem;
  const strata_map *g = job->map;
  const strata_strat *s = job->strat;
  const int dim = pr->dim, ninc = g->ninc;
  const int nc = pr->ncomp > 1 ? pr->ncomp : 1, np = nc * (nc + 1) / 2;
  const int64_t B = pr->fb ? (pr->batch > 0 ? pr->batch : 1024) : 1;
  double u[STRATA_MAX_DIM], y[STRATA_MAX_DIM];
  double c1[STRATA_MAX_COMP], c2[STRATA_MAX_COMP * (STRATA_MAX_COMP + 1) / 2];
  int k[STRATA_MAX_DIM];
  st->bad_index = -1;
  st->nomem = 0;
  double *x = malloc(sizeof(double) * (size_t)(B * dim));
  double *jac = malloc(sizeof(double) * (size_t)B);
  double *fv = malloc(sizeof(double) * (size_t)(B * nc));
  int *inc = malloc(sizeof(int) * (size_t)(B * dim));
  if (!x || !jac || !fv || !inc) {
    st->nomem = 1;
    goto out;
  }
  strata_qmc_cursor cur = {.next = -1};
  int64_t h = ha, hp = ha; /* the hypercube being summed, and of the next point drawn */
  strata_strat_coords(s, hp, k);
  double sum[2] = {0.0, 0.0};
  memset(c1, 0, sizeof c1);
  memset(c2, 0, sizeof c2);
#define FLUSH()                                                                          \
  do {                                                                                   \
    job->s1[h] = sum[0];                                                                 \
    job->s2[h] = sum[1];                                                                 \
    if (job->c1) {                                                                       \
      memcpy(job->c1 + (size_t)h * (size_t)nc, c1, sizeof(double) * (size_t)nc);         \
      memcpy(job->c2 + (size_t)h * (size_t)np, c2, sizeof(double) * (size_t)np);         \
    }                                                                                    \
    sum[0] = sum[1] = 0.0;                                                               \
    memset(c1, 0, sizeof c1);                                                            \
    memset(c2, 0, sizeof c2);                                                            \
  } while (0)
  const int64_t iend = s->start[hb];
  for (int64_t i0 = s->start[ha]; i0 < iend; i0 += B) {
    const int64_t n = iend - i0 < B ? iend - i0 : B;
    for (int64_t j = 0; j < n; j++) {
      const int64_t i = i0 + j;
      if (i >= s->start[hp + 1]) {
        while (i >= s->start[hp + 1]) hp++;
        strata_strat_coords(s, hp, k);
      }
      if (job->qmc) strata_qmc_point(job->qmc, &cur, i, y);
      else strata_sample_point(job, k, i, u, y);
      jac[j] = strata_map_apply(g, y, x + j * dim, inc + j * dim);
    }
    if (pr->fb) pr->fb(n, x, dim, pr->user, fv);
    else pr->fu(x, dim, pr->user, fv);
    for (int64_t j = 0; j < n; j++) {
      const int64_t i = i0 + j;
      while (i >= s->start[h + 1]) {
        FLUSH();
        h++;
      }
      const double *f = fv + j * nc;
      int bad = add_values(job, nc, dim, ninc, jac[j], f, inc + j * dim, sum, c1, c2, cw, cc);
      if (bad >= 0) {
        mark_bad(st, i, f[bad], nc > 1 ? bad : -1, x + j * dim, dim);
        goto out;
      }
    }
  }
  for (; h < hb; h++) FLUSH();
#undef FLUSH
out:
  free(x);
  free(jac);
  free(fv);
  free(inc);
}

/* The backends' shared message, naming the component of a vector integrand. */
static int report_bad(const strata_sample_job *job, const chunk_status *st)
{
  int rc = strata_backend_report_nonfinite(job, st->bad_fx, st->bad_index, st->bad_x);
  if (st->bad_comp < 0) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", strata_last_error());
  return strata_error(rc, "%s in component %d of %d", msg, st->bad_comp,
                      job->problem->ncomp);
}

static int cpu_sample(strata_backend *b, strata_sample_job *job)
{
  cpu_backend *cb = b->self;
  const strata_strat *s = job->strat;
  const int64_t nh = job->h1 - job->h0;
  if (nh <= 0) return STRATA_OK;
  const int64_t first = s->start[job->h0], total = s->start[job->h1] - first;
  int64_t want = total / CPU_MIN_CHUNK_SAMPLES;
  if (want > CPU_MAX_CHUNKS) want = CPU_MAX_CHUNKS;
  if (want > nh) want = nh;
  const int nchunk = want < 1 ? 1 : (int)want;
  const size_t cells = (size_t)job->problem->dim * (size_t)job->map->ninc;

  if (job->adapt) {
    size_t need = (size_t)nchunk * 2 * cells;
    if (need > cb->chunk_w_len) {
      free(cb->chunk_w);
      cb->chunk_w = malloc(sizeof(double) * need);
      cb->chunk_w_len = cb->chunk_w ? need : 0;
      if (!cb->chunk_w)
        return strata_error(STRATA_ENOMEM, "cpu backend: cannot allocate %zu MB for map sums",
                            need * sizeof(double) >> 20);
    }
    memset(cb->chunk_w, 0, sizeof(double) * need);
  }

  /* Chunk boundaries balance samples, not hypercubes: VEGAS+ piles samples
   * into few hypercubes. */
  int64_t bounds[CPU_MAX_CHUNKS + 1];
  bounds[0] = job->h0;
  for (int c = 1; c < nchunk; c++) {
    int64_t h = strata_strat_find(s, first + total * c / nchunk);
    if (h <= bounds[c - 1]) h = bounds[c - 1] + 1;
    if (h > job->h1 - (nchunk - c)) h = job->h1 - (nchunk - c);
    bounds[c] = h;
  }
  bounds[nchunk] = job->h1;

  chunk_status st[CPU_MAX_CHUNKS];
  int nt = cb->nthreads;
#ifdef _OPENMP
  if (nt <= 0) nt = omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
  for (int c = 0; c < nchunk; c++) {
    double *cw = job->adapt ? cb->chunk_w + (size_t)c * 2 * cells : NULL;
    if (job->problem->f)
      sample_chunk(job, bounds[c], bounds[c + 1], cw, cw ? cw + cells : NULL, &st[c]);
    else if (job->problem->fv)
      sample_chunk_vec(job, bounds[c], bounds[c + 1], cw, cw ? cw + cells : NULL, &st[c]);
    else
      sample_chunk_user(job, bounds[c], bounds[c + 1], cw, cw ? cw + cells : NULL, &st[c]);
  }
  (void)nt;
  for (int c = 0; c < nchunk; c++)
    if (st[c].nomem) return strata_error(STRATA_ENOMEM, "cpu backend: no memory for a batch of "
                                         "%d points", job->problem->batch);

  int worst = -1;
  for (int c = 0; c < nchunk; c++)
    if (st[c].bad_index >= 0) {
      worst = c;
      break; /* chunks are in sample order: the first one has the first bad sample */
    }
  if (worst >= 0)
    return report_bad(job, &st[worst]);

  if (job->adapt) {
    const double *cwb = cb->chunk_w;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
    for (size_t i = 0; i < cells; i++) {
      double w = 0.0, n = 0.0;
      for (int c = 0; c < nchunk; c++) {
        w += cwb[(size_t)c * 2 * cells + i];
        n += cwb[(size_t)c * 2 * cells + cells + i];
      }
      job->wsum[i] += w;
      job->wcount[i] += n;
    }
  }
  return job->part ? strata_backend_host_part(job) : STRATA_OK;
}

static void cpu_free(strata_backend *b)
{
  cpu_backend *cb = b->self;
  free(cb->chunk_w);
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
  return b;
}
