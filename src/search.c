/* The peak search (search.h, doc/peaks.md "The search").
 *
 * A round's ascents advance together: at every pass each live ascent asks
 * for what it needs next (the 2 dim points of a central-difference
 * gradient, or one trial point of its line search), and all the requests go
 * to the evaluator as one batch, which the backend spreads over its threads
 * or its device.  Each ascent's path depends on its start alone, so the
 * batching changes no bit of it.  The ends are then judged one after the
 * other in start order, the first to reach a mode keeping it.
 *
 * Ascents that run together cannot learn from each other's modes, so the
 * starts are picked on distinct hills (pick_starts); where that leaves a
 * round short of its ascents, the candidates are ranked afresh against the
 * modes its first ascents found, and the rest start together after them.
 * Started all at once, a round's best candidates would mostly climb the
 * tallest peak, round which they crowd (bench/peaks/search_family.sh
 * measures what each choice finds). */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "philox.h"
#include "qmc.h"

#define RESIDUAL_START 1.3862943611198906 /* log 4: f above 4 A(x) starts an ascent */
#define TRIED_RADIUS 0.1                  /* no start this close to one that found nothing */
#define FD_STEP 1e-4                      /* finite-difference step of gradients and Hessians */
#define MIN_CURVATURE 16.0                /* Hessian eigenvalue floor: an sd of at most 0.25 */
#define MIN_RIDGE_CURVATURE 1.0           /* a mode's flattest direction: an sd of at most 1 */
#define WALL 1e6                          /* -log t where t vanishes: a wall to back off from */
#define PG_TOL 1e-5                       /* projected gradient of -log t that ends an ascent */
#define F_TOL 2.220446049250313e-09       /* relative decrease that ends one (L-BFGS-B's factr 1e7) */
#define ARMIJO 1e-4
#define FIRST_STEP 0.1                    /* length of an ascent's first step in the cube */
#define MAX_TRIALS 30                     /* line search trials of one step */
#define HILL_POOL 64                      /* candidates a round's starts are picked from */
#define LOG_2PI 1.8378770664093453

/* The Sobol' starts' own Philox tag: their scramble differs from the run's
 * QMC points under the same seed. */
#define SEARCH_SOBOL_TAG 0x5EA4C000u

void strata_search_params_default(strata_search_params *p)
{
  p->starts = 1024;
  p->ascents = 4;
  p->max_ascents = 32;
  p->max_modes = 16;
  p->max_steps = 60;
  p->min_mass = 1e-3;
}

struct strata_search {
  int dim;
  strata_search_params p;
  strata_peak *modes; /* p.max_modes */
  int nmodes;
  double *tried;      /* starts that found nothing, p.max_ascents of dim */
  int ntried;
  int64_t evals;
  int rounds, nascents;
  /* The batch: points and values, grown as needed. */
  double *by, *bf;
  int64_t bcap;
};

/* What an ascent climbs: log f, or the residual log(f - sum_j A_j) with the
 * first nmodes modes (those known when the climb began). */
typedef struct {
  const strata_search *s;
  int residual, nmodes;
} target;

enum { ASC_GRAD, ASC_TRIAL, ASC_DONE };

typedef struct {
  double x[STRATA_MAX_DIM], g[STRATA_MAX_DIM], p[STRATA_MAX_DIM], xt[STRATA_MAX_DIM];
  double xprev[STRATA_MAX_DIM], gprev[STRATA_MAX_DIM];
  double hinv[STRATA_MAX_DIM * STRATA_MAX_DIM];
  double phi, phiprev, gp, alpha;
  int state, steps, trials, updated;
} ascent;

int strata_search_alloc(int dim, const strata_search_params *p, strata_search **out)
{
  STRATA_GIVEN(p, "search parameters");
  STRATA_GIVEN(out, "search to set");
  *out = NULL;
  if (dim < 1 || dim > STRATA_MAX_DIM)
    return strata_error(STRATA_EINVAL, "peak search: dim %d outside 1..%d", dim, STRATA_MAX_DIM);
  if (p->starts < 0 || p->ascents < 0 || p->max_ascents < 0 || p->max_modes < 0 ||
      p->max_steps < 1 || !(p->min_mass >= 0.0 && p->min_mass <= 1.0))
    return strata_error(STRATA_EINVAL, "peak search: parameters out of range (starts %d, "
                        "ascents %d, max_ascents %d, max_modes %d, max_steps %d, min_mass %g)",
                        p->starts, p->ascents, p->max_ascents, p->max_modes, p->max_steps,
                        p->min_mass);
  strata_search *s = calloc(1, sizeof *s);
  if (!s) return strata_error(STRATA_ENOMEM, "peak search: out of memory");
  s->dim = dim;
  s->p = *p;
  s->modes = calloc((size_t)p->max_modes + 1, sizeof *s->modes);
  s->tried = calloc((size_t)p->max_ascents * (size_t)dim + 1, sizeof *s->tried);
  if (!s->modes || !s->tried) {
    strata_search_free(s);
    return strata_error(STRATA_ENOMEM, "peak search: out of memory for %d modes", p->max_modes);
  }
  *out = s;
  return STRATA_OK;
}

void strata_search_free(strata_search *s)
{
  if (!s) return;
  free(s->modes);
  free(s->tried);
  free(s->by);
  free(s->bf);
  free(s);
}

int strata_search_nmodes(const strata_search *s) { return s->nmodes; }
const strata_peak *strata_search_mode(const strata_search *s, int j)
{
  return j >= 0 && j < s->nmodes ? &s->modes[j] : NULL;
}
int64_t strata_search_evals(const strata_search *s) { return s->evals; }
int strata_search_rounds(const strata_search *s) { return s->rounds; }
int strata_search_nascents(const strata_search *s) { return s->nascents; }

/* (x - m)^T H (x - m) */
static inline __attribute__((always_inline)) double maha2_of(const strata_peak *md, int dim,
                                                             const double *x)
{
  double z[STRATA_MAX_DIM], q = 0.0;
  for (int i = 0; i < dim; i++) z[i] = x[i] - md->m[i];
  for (int i = 0; i < dim; i++) {
    double r = 0.0;
    for (int j = 0; j < dim; j++) r += md->hess[i * dim + j] * z[j];
    q += z[i] * r;
  }
  return q;
}

/* maha2_of, its loops unrolled for the dimensions up to 8 (the same sums
 * in the same order): a round ranks every candidate against every mode. */
static double maha2(const strata_peak *md, int dim, const double *x)
{
  switch (dim) {
  case 1: return maha2_of(md, 1, x);
  case 2: return maha2_of(md, 2, x);
  case 3: return maha2_of(md, 3, x);
  case 4: return maha2_of(md, 4, x);
  case 5: return maha2_of(md, 5, x);
  case 6: return maha2_of(md, 6, x);
  case 7: return maha2_of(md, 7, x);
  case 8: return maha2_of(md, 8, x);
  default: return maha2_of(md, dim, x);
  }
}

/* log sum_j A_j(y) over the first n modes, summed as it goes (the
 * largest term so far factored out); -inf with none. */
static double explained_by(const strata_search *s, int n, const double *y)
{
  double top = -INFINITY, sum = 0.0;
  for (int j = 0; j < n; j++) {
    const double la = s->modes[j].logf - 0.5 * maha2(&s->modes[j], s->dim, y);
    if (la > top) {
      sum = sum * exp(top - la) + 1.0;
      top = la;
    } else if (la > -INFINITY) {
      sum += exp(la - top);
    }
  }
  return top > -INFINITY ? top + log(sum) : -INFINITY;
}

double strata_search_explained(const strata_search *s, const double *y)
{
  return explained_by(s, s->nmodes, y);
}

double strata_search_product_cover(const strata_search *s, int j)
{
  const int dim = s->dim, n = s->nmodes;
  if (j < 0 || j >= n) return NAN;
  double top = -INFINITY;
  for (int k = 0; k < n; k++)
    if (s->modes[k].logmass > top) top = s->modes[k].logmass;
  /* Both densities are the mixture's, normalised by its mass; the largest
   * mass is factored out of each. */
  double wsum = 0.0, joint = 0.0;
  const double *x = s->modes[j].m;
  for (int k = 0; k < n; k++) {
    wsum += exp(s->modes[k].logmass - top);
    joint += exp(s->modes[k].logf - top - 0.5 * maha2(&s->modes[k], dim, x));
  }
  double logprod = -dim * log(wsum);
  for (int i = 0; i < dim; i++) {
    double p = 0.0;
    for (int k = 0; k < n; k++) {
      const strata_peak *md = &s->modes[k];
      double v = 0.0; /* (H^-1)_ii = sum_l L_il^2: the marginal's variance */
      for (int l = 0; l <= i; l++) v += md->chol[i * dim + l] * md->chol[i * dim + l];
      const double u = x[i] - md->m[i];
      p += exp(md->logmass - top - 0.5 * u * u / v) / sqrt(2.0 * M_PI * v);
    }
    logprod += log(p);
  }
  return exp(logprod - log(joint / wsum));
}

/* |f| as the search takes it: a value that is not finite (a singularity on
 * the boundary) is no peak to climb, and counts as 0. */
static double clean(double f)
{
  f = fabs(f);
  return isfinite(f) ? f : 0.0;
}

/* log t at y from f = |f(y)|: -inf where t vanishes. */
static double target_log(const target *t, const double *y, double f)
{
  if (!(f > 0.0)) return -INFINITY;
  const double lf = log(f);
  if (!t->residual) return lf;
  const double la = explained_by(t->s, t->nmodes, y);
  if (!(la < lf)) return -INFINITY;
  return lf + log1p(-exp(la - lf));
}

static double target_phi(const target *t, const double *y, double f)
{
  const double l = target_log(t, y, f);
  return l > -WALL ? -l : WALL;
}

static int batch_reserve(strata_search *s, int64_t n)
{
  if (n <= s->bcap) return 0;
  double *y = realloc(s->by, sizeof(double) * (size_t)n * (size_t)s->dim);
  if (y) s->by = y;
  double *f = realloc(s->bf, sizeof(double) * (size_t)n);
  if (f) s->bf = f;
  if (!y || !f)
    return strata_error(STRATA_ENOMEM, "peak search: no memory for a batch of %lld points",
                        (long long)n);
  s->bcap = n;
  return 0;
}

/* The batch's n points through eval, counted; values cleaned. */
static int evaluate(strata_search *s, int64_t n, strata_eval_fn eval, void *ctx)
{
  if (n == 0) return STRATA_OK;
  int rc = eval(ctx, n, s->by, s->bf);
  s->evals += n;
  if (rc != STRATA_OK) return rc;
  for (int64_t i = 0; i < n; i++) s->bf[i] = clean(s->bf[i]);
  return STRATA_OK;
}

static double clip01(double v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

/* The central-difference stencil of a gradient at x, kept inside the cube. */
static void grad_points(int dim, const double *x, double *y)
{
  for (int i = 0; i < dim; i++) {
    double *up = y + (size_t)(2 * i) * dim, *dn = up + dim;
    memcpy(up, x, sizeof(double) * (size_t)dim);
    memcpy(dn, x, sizeof(double) * (size_t)dim);
    up[i] = clip01(x[i] + FD_STEP);
    dn[i] = clip01(x[i] - FD_STEP);
  }
}

static int active(const ascent *a, int i)
{
  return (a->x[i] <= 0.0 && a->g[i] > 0.0) || (a->x[i] >= 1.0 && a->g[i] < 0.0);
}

/* The inverse Hessian's first guess: a first step of FIRST_STEP along the
 * steepest descent, a fraction of a wide peak's width. */
static void hinv_reset(ascent *a, int dim)
{
  double gn = 0.0;
  for (int i = 0; i < dim; i++)
    if (!active(a, i)) gn += a->g[i] * a->g[i];
  gn = sqrt(gn);
  const double scale = gn > 0.0 ? FIRST_STEP / gn : 1.0;
  memset(a->hinv, 0, sizeof(double) * (size_t)dim * (size_t)dim);
  for (int i = 0; i < dim; i++) a->hinv[i * dim + i] = scale;
  a->updated = 0;
}

/* BFGS's update of the inverse Hessian with s = x - xprev, y = g - gprev;
 * before the first, the scale s.y / y.y (Nocedal and Wright, 6.20).
 * Skipped where the curvature s.y is not positive. */
static void bfgs_update(ascent *a, int dim)
{
  double s[STRATA_MAX_DIM], y[STRATA_MAX_DIM], hy[STRATA_MAX_DIM];
  double sy = 0.0, yy = 0.0;
  for (int i = 0; i < dim; i++) {
    s[i] = a->x[i] - a->xprev[i];
    y[i] = a->g[i] - a->gprev[i];
    sy += s[i] * y[i];
    yy += y[i] * y[i];
  }
  if (!(yy > 0.0) || !(sy > 2.220446049250313e-16 * yy) || !isfinite(sy) || !isfinite(yy)) return;
  if (!a->updated) {
    memset(a->hinv, 0, sizeof(double) * (size_t)dim * (size_t)dim);
    for (int i = 0; i < dim; i++) a->hinv[i * dim + i] = sy / yy;
    a->updated = 1;
  }
  double yhy = 0.0;
  for (int i = 0; i < dim; i++) {
    double r = 0.0;
    for (int j = 0; j < dim; j++) r += a->hinv[i * dim + j] * y[j];
    hy[i] = r;
    yhy += y[i] * r;
  }
  const double rho = 1.0 / sy, c = (1.0 + rho * yhy) * rho;
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++)
      a->hinv[i * dim + j] += c * s[i] * s[j] - rho * (hy[i] * s[j] + s[i] * hy[j]);
}

/* The next step's direction and first trial, or the ascent's end. */
static void next_step(ascent *a, int dim, int max_steps)
{
  double pg = 0.0;
  for (int i = 0; i < dim; i++)
    if (!active(a, i) && fabs(a->g[i]) > pg) pg = fabs(a->g[i]);
  if (pg <= PG_TOL || a->steps >= max_steps || !(a->phi < WALL)) {
    a->state = ASC_DONE;
    return;
  }
  for (int pass = 0; pass < 2; pass++) {
    a->gp = 0.0;
    for (int i = 0; i < dim; i++) {
      double r = 0.0;
      if (!active(a, i))
        for (int j = 0; j < dim; j++)
          if (!active(a, j)) r -= a->hinv[i * dim + j] * a->g[j];
      a->p[i] = r;
      a->gp += a->g[i] * r;
    }
    if (a->gp < 0.0) break;
    hinv_reset(a, dim); /* not a descent direction: start the curvature afresh */
  }
  if (!(a->gp < 0.0)) {
    a->state = ASC_DONE;
    return;
  }
  a->alpha = 1.0;
  a->trials = 0;
  for (int i = 0; i < dim; i++) a->xt[i] = clip01(a->x[i] + a->p[i]);
  a->state = ASC_TRIAL;
}

/* The trial point's value phit: accepted (Armijo's decrease along the
 * projected step), or a shorter trial from the quadratic through phi, the
 * slope and phit (a gaussian peak's -log f is one). */
static void take_trial(ascent *a, int dim, double phit)
{
  double dec = 0.0, len = 0.0;
  for (int i = 0; i < dim; i++) {
    dec += a->g[i] * (a->xt[i] - a->x[i]);
    len += fabs(a->xt[i] - a->x[i]);
  }
  if (phit <= a->phi + ARMIJO * dec && dec < 0.0) {
    memcpy(a->xprev, a->x, sizeof(double) * (size_t)dim);
    memcpy(a->gprev, a->g, sizeof(double) * (size_t)dim);
    a->phiprev = a->phi;
    memcpy(a->x, a->xt, sizeof(double) * (size_t)dim);
    a->phi = phit;
    a->steps++;
    a->state = ASC_GRAD;
    return;
  }
  if (++a->trials >= MAX_TRIALS || len < 1e-12) {
    a->state = ASC_DONE;
    return;
  }
  const double al = a->alpha, c = (phit - a->phi - a->gp * al) / (al * al);
  double next = c > 0.0 ? -a->gp / (2.0 * c) : 0.5 * al;
  if (!(next >= 0.1 * al)) next = 0.1 * al;
  if (next > 0.5 * al) next = 0.5 * al;
  a->alpha = next;
  for (int i = 0; i < dim; i++) a->xt[i] = clip01(a->x[i] + next * a->p[i]);
}

/* The gradient from its stencil's values f (2 dim); after a step, the
 * curvature update and the tests that end an ascent. */
static void take_grad(ascent *a, const target *t, int dim, int max_steps, const double *y,
                      const double *f)
{
  for (int i = 0; i < dim; i++) {
    const double *up = y + (size_t)(2 * i) * dim, *dn = up + dim;
    const double pu = target_phi(t, up, f[2 * i]), pd = target_phi(t, dn, f[2 * i + 1]);
    a->g[i] = (pu - pd) / (up[i] - dn[i]);
  }
  if (a->steps == 0) {
    hinv_reset(a, dim);
  } else {
    bfgs_update(a, dim);
    const double big = fmax(fmax(fabs(a->phi), fabs(a->phiprev)), 1.0);
    if (a->phiprev - a->phi <= F_TOL * big) {
      a->state = ASC_DONE;
      return;
    }
  }
  next_step(a, dim, max_steps);
}

/* n ascents of t from their starts (x, phi set), together, a batch a pass. */
static int climb(strata_search *s, const target *t, int n, ascent *asc, strata_eval_fn eval,
                 void *ctx)
{
  const int dim = s->dim;
  for (int k = 0; k < n; k++) {
    asc[k].state = asc[k].phi < WALL ? ASC_GRAD : ASC_DONE;
    asc[k].steps = 0;
    asc[k].updated = 0;
  }
  for (;;) {
    int64_t np = 0;
    for (int k = 0; k < n; k++)
      np += asc[k].state == ASC_GRAD ? 2 * dim : asc[k].state == ASC_TRIAL ? 1 : 0;
    if (np == 0) return STRATA_OK;
    int rc = batch_reserve(s, np);
    if (rc) return rc;
    int64_t at = 0;
    for (int k = 0; k < n; k++) {
      if (asc[k].state == ASC_GRAD) {
        grad_points(dim, asc[k].x, s->by + at * dim);
        at += 2 * dim;
      } else if (asc[k].state == ASC_TRIAL) {
        memcpy(s->by + at * dim, asc[k].xt, sizeof(double) * (size_t)dim);
        at++;
      }
    }
    if ((rc = evaluate(s, np, eval, ctx)) != STRATA_OK) return rc;
    at = 0;
    for (int k = 0; k < n; k++) {
      ascent *a = &asc[k];
      if (a->state == ASC_GRAD) {
        take_grad(a, t, dim, s->p.max_steps, s->by + at * dim, s->bf + at);
        at += 2 * dim;
      } else if (a->state == ASC_TRIAL) {
        take_trial(a, dim, target_phi(t, s->by + at * dim, s->bf[at]));
        at++;
      }
    }
  }
}

/* Eigen-decomposition of the symmetric n x n matrix a (destroyed) by
 * cyclic Jacobi rotations: eigenvalues into w, eigenvectors into the
 * columns of v. */
static void jacobi_eigen(int n, double *a, double *w, double *v)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) v[i * n + j] = i == j;
  for (int sweep = 0; sweep < 100; sweep++) {
    double off = 0.0, diag = 0.0;
    for (int i = 0; i < n; i++) {
      diag += a[i * n + i] * a[i * n + i];
      for (int j = i + 1; j < n; j++) off += a[i * n + j] * a[i * n + j];
    }
    if (off <= 1e-30 * diag || off == 0.0) break;
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) {
        const double apq = a[p * n + q];
        if (apq == 0.0) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
        const double tt = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        const double c = 1.0 / sqrt(tt * tt + 1.0), sn = tt * c;
        for (int k = 0; k < n; k++) {
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - sn * akq;
          a[k * n + q] = sn * akp + c * akq;
        }
        for (int k = 0; k < n; k++) {
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - sn * aqk;
          a[q * n + k] = sn * apk + c * aqk;
        }
        for (int k = 0; k < n; k++) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - sn * vkq;
          v[k * n + q] = sn * vkp + c * vkq;
        }
      }
  }
  for (int i = 0; i < n; i++) w[i] = a[i * n + i];
}

/* A mode at m with value logf from the raw finite-difference Hessian h:
 * eigenvalues floored, H^-1's Cholesky factor, the Laplace mass.  Returns
 * h's largest eigenvalue, and its smallest in *least. */
static double mode_make(strata_peak *md, int dim, const double *m, double logf, const double *h,
                        double *least)
{
  double a[STRATA_MAX_DIM * STRATA_MAX_DIM], v[STRATA_MAX_DIM * STRATA_MAX_DIM];
  double lam[STRATA_MAX_DIM], cov[STRATA_MAX_DIM * STRATA_MAX_DIM];
  memset(md, 0, sizeof *md);
  memcpy(md->m, m, sizeof(double) * (size_t)dim);
  md->logf = logf;
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++) a[i * dim + j] = 0.5 * (h[i * dim + j] + h[j * dim + i]);
  jacobi_eigen(dim, a, lam, v);
  double logdet = 0.0, top = -INFINITY;
  *least = INFINITY;
  for (int k = 0; k < dim; k++) {
    if (lam[k] > top) top = lam[k];
    if (!(lam[k] >= *least)) *least = lam[k];
    if (!(lam[k] >= MIN_CURVATURE)) lam[k] = MIN_CURVATURE;
    logdet += log(lam[k]);
  }
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++) {
      double hs = 0.0, cs = 0.0;
      for (int k = 0; k < dim; k++) {
        hs += v[i * dim + k] * lam[k] * v[j * dim + k];
        cs += v[i * dim + k] / lam[k] * v[j * dim + k];
      }
      md->hess[i * dim + j] = hs;
      cov[i * dim + j] = cs;
    }
  /* L L^T = H^-1, which the floor keeps positive definite. */
  for (int j = 0; j < dim; j++) {
    double d = cov[j * dim + j];
    for (int k = 0; k < j; k++) d -= md->chol[j * dim + k] * md->chol[j * dim + k];
    d = sqrt(d > 0.0 ? d : 0.0);
    md->chol[j * dim + j] = d;
    for (int i = j + 1; i < dim; i++) {
      double r = cov[i * dim + j];
      for (int k = 0; k < j; k++) r -= md->chol[i * dim + k] * md->chol[j * dim + k];
      md->chol[i * dim + j] = d > 0.0 ? r / d : 0.0;
    }
  }
  md->logmass = logf + 0.5 * dim * LOG_2PI - 0.5 * logdet;
  return top;
}

/* The Hessian of -log t at x (moved FD_STEP inside the cube), from one
 * batch of 1 + 2 dim^2 points, into h; *logt the value at its centre and
 * *logf log |f| there.  Returns 1 where t vanishes at a point of the
 * stencil (no peak there), else 0, or an error code < 0. */
static int hessian(strata_search *s, const target *t, const double *x, double *h,
                   double *centre, double *logt, double *logf, strata_eval_fn eval, void *ctx)
{
  const int dim = s->dim;
  const int64_t np = 1 + 2 * (int64_t)dim * dim;
  int rc = batch_reserve(s, np);
  if (rc) return -rc;
  for (int i = 0; i < dim; i++) {
    double c = x[i];
    if (c < FD_STEP) c = FD_STEP;
    if (c > 1.0 - FD_STEP) c = 1.0 - FD_STEP;
    centre[i] = c;
  }
  double *y = s->by;
  int64_t at = 0;
  memcpy(y, centre, sizeof(double) * (size_t)dim);
  at++;
  static const int sgn[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  for (int i = 0; i < dim; i++)
    for (int e = -1; e <= 1; e += 2, at++) {
      memcpy(y + at * dim, centre, sizeof(double) * (size_t)dim);
      y[at * dim + i] += -e * FD_STEP;
    }
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < i; j++)
      for (int k = 0; k < 4; k++, at++) {
        memcpy(y + at * dim, centre, sizeof(double) * (size_t)dim);
        y[at * dim + i] += sgn[k][0] * FD_STEP;
        y[at * dim + j] += sgn[k][1] * FD_STEP;
      }
  if ((rc = evaluate(s, np, eval, ctx)) != STRATA_OK) return -rc;
  double v[1 + 2 * STRATA_MAX_DIM * STRATA_MAX_DIM];
  for (int64_t k = 0; k < np; k++) {
    const double l = target_log(t, y + k * dim, s->bf[k]);
    if (!isfinite(l)) return 1;
    v[k] = -l;
  }
  *logt = -v[0];
  *logf = log(s->bf[0]);
  const double h2 = FD_STEP * FD_STEP;
  at = 1 + 2 * dim;
  for (int i = 0; i < dim; i++) {
    h[i * dim + i] = (v[1 + 2 * i] + v[2 + 2 * i] - 2.0 * v[0]) / h2;
    for (int j = 0; j < i; j++, at += 4)
      h[i * dim + j] = h[j * dim + i] = (v[at] - v[at + 1] - v[at + 2] + v[at + 3]) / (4.0 * h2);
  }
  return 0;
}

static int near_mode(const strata_search *s, const double *x)
{
  for (int j = 0; j < s->nmodes; j++)
    if (maha2(&s->modes[j], s->dim, x) <= 1.0) return 1;
  return 0;
}

/* Whether a residual maximum at x (log |f| there logf) is a ripple of a
 * known mode's tails: f there at least half the mode's, on the mode's own
 * hill (f at their midpoint no lower than at the lesser end, the
 * hill-valley test of pick_starts).  A peak that is not a gaussian (a cusp,
 * Lorentzian tails) leaves such maxima in the residual of its Laplace
 * approximation, a "mode" per ascent; a component hidden on a peak's flank
 * stands lower.  Returns 1, 0, or an error code < 0. */
static int ripple(strata_search *s, const double *x, double logf, strata_eval_fn eval, void *ctx)
{
  const int dim = s->dim;
  int rc = batch_reserve(s, s->nmodes);
  if (rc) return -rc;
  int n = 0, which[s->nmodes > 0 ? s->nmodes : 1];
  for (int j = 0; j < s->nmodes; j++) {
    if (!(logf >= s->modes[j].logf - log(2.0))) continue;
    for (int d = 0; d < dim; d++) s->by[n * dim + d] = 0.5 * (x[d] + s->modes[j].m[d]);
    which[n++] = j;
  }
  if ((rc = evaluate(s, n, eval, ctx)) != STRATA_OK) return -rc;
  for (int k = 0; k < n; k++)
    if (log(s->bf[k]) >= fmin(logf, s->modes[which[k]].logf)) return 1;
  return 0;
}

/* An ascent's end: a new mode if it is none of the known ones and carries
 * mass (*found 1).  Returns 2 where it ended within one Mahalanobis unit of
 * a known mode, 1 where t vanished beside it (no peak), 0, or an error
 * code < 0. */
static int judge_end(strata_search *s, const target *t, const ascent *a, int known, int *found,
                     strata_eval_fn eval, void *ctx)
{
  const int dim = s->dim;
  *found = 0;
  if (!(a->phi < WALL)) return 0;
  if (near_mode(s, a->x)) return 2;
  double h[STRATA_MAX_DIM * STRATA_MAX_DIM], c[STRATA_MAX_DIM], logt, logf;
  int rc = hessian(s, t, a->x, h, c, &logt, &logf, eval, ctx);
  if (rc != 0) return rc;
  for (int i = 0; i < dim * dim; i++)
    if (!isfinite(h[i])) return 1;
  if (s->nmodes >= s->p.max_modes) return 0;
  strata_peak md;
  /* A maximum where log t is flatter than the floor in every direction (a
   * constant, the corner a monotone f rises to) is no peak: the map follows
   * f there, and a channel shaped by the floor alone would only dilute it. */
  double least;
  if (!(mode_make(&md, dim, a->x, -a->phi, h, &least) >= MIN_CURVATURE)) return 0;
  /* Nor is a maximum that stays flat across the cube in some direction (a
   * ridge or a valley's floor, as a cosine's crests): the map follows f
   * along it, and the point where an ascent stopped on it is any point. */
  if (!(least >= MIN_RIDGE_CURVATURE)) return 0;
  md.known = known;
  double top = -INFINITY;
  for (int j = 0; j < s->nmodes; j++)
    if (s->modes[j].logmass > top) top = s->modes[j].logmass;
  if (s->nmodes > 0 && md.logmass < top + log(s->p.min_mass)) return 0;
  /* A residual maximum counts only where the modes explain less than half
   * of f: elsewhere the residual of an imperfect approximation would give
   * a "mode" per ascent. */
  if (t->residual && !(strata_search_explained(s, c) < logf + log(0.5))) return 0;
  if (t->residual) {
    const int r = ripple(s, a->x, logf, eval, ctx);
    if (r != 0) return r < 0 ? r : 0;
  }
  s->modes[s->nmodes++] = md;
  *found = 1;
  return 0;
}

typedef struct {
  int64_t i;
  double r;
} candidate;

static int by_residual(const void *a, const void *b)
{
  const candidate *x = a, *y = b;
  if (x->r != y->r) return x->r > y->r ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

static int barred(const strata_search *s, const double *y)
{
  for (int k = 0; k < s->ntried; k++) {
    double d2 = 0.0;
    for (int i = 0; i < s->dim; i++) {
      const double e = y[i] - s->tried[(size_t)k * s->dim + i];
      d2 += e * e;
    }
    if (d2 < TRIED_RADIUS * TRIED_RADIUS) return 1;
  }
  return 0;
}

/* log f - log sum_j A_j at y, or -inf as soon as one mode alone explains
 * more than a quarter of f there: the candidates are many, and near the
 * modes found (most of them, later in a run) the first close mode ends it. */
static double residual(const strata_search *s, const double *y, double lf)
{
  for (int j = 0; j < s->nmodes; j++)
    if (s->modes[j].logf - 0.5 * maha2(&s->modes[j], s->dim, y) >= lf - RESIDUAL_START)
      return -INFINITY;
  return lf - strata_search_explained(s, y);
}

/* The candidates the modes explain least by more than RESIDUAL_START, at
 * most `most` of them, by (residual, index), into best. */
static int rank_candidates(const strata_search *s, int64_t n, const double *y, const double *f,
                           const char *used, int most, candidate *best)
{
  const int dim = s->dim;
  int ns = 0;
  for (int64_t i = 0; i < n; i++) {
    const double fi = clean(f[i]);
    if (!(fi > 0.0) || used[i]) continue;
    const double r = residual(s, y + i * dim, log(fi));
    if (!(r > RESIDUAL_START)) continue;
    candidate c = {i, r};
    if (ns == most && by_residual(&c, &best[ns - 1]) >= 0) continue;
    if (barred(s, y + i * dim)) continue;
    int at = ns < most ? ns++ : most - 1;
    while (at > 0 && by_residual(&c, &best[at - 1]) < 0) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = c;
  }
  return ns;
}

/* The round's starts: the user's points all; else the best candidates by
 * (residual, index), passing over one that shares a hill with a start
 * already taken.  Ascents that start all at once cannot learn from each
 * other, and the best candidates crowd round the tallest peak: the
 * hill-valley test (Maree, Alderliesten and Bosman's HillVallEA) takes
 * two points for one hill where f at their midpoint is no lower than at
 * both, an evaluation per pair, each candidate's pairs in one batch.
 * Returns the number of starts, or an error code < 0. */
static int pick_starts(strata_search *s, int64_t n, const double *y, const double *f,
                       const char *used, int known, int most, int64_t *start, strata_eval_fn eval,
                       void *ctx)
{
  const int dim = s->dim;
  int ns = 0;
  if (known) {
    for (int64_t i = 0; i < n && ns < most; i++)
      if (!used[i]) start[ns++] = i;
    return ns;
  }
  candidate pool[HILL_POOL];
  const int np = rank_candidates(s, n, y, f, used, HILL_POOL, pool);
  int rc = batch_reserve(s, most);
  if (rc) return -rc;
  for (int c = 0; c < np && ns < most; c++) {
    const double *yc = y + pool[c].i * dim;
    for (int k = 0; k < ns; k++)
      for (int d = 0; d < dim; d++) s->by[k * dim + d] = 0.5 * (yc[d] + y[start[k] * dim + d]);
    if ((rc = evaluate(s, ns, eval, ctx)) != STRATA_OK) return -rc;
    int apart = 1;
    for (int k = 0; k < ns && apart; k++)
      if (s->bf[k] >= fmin(clean(f[pool[c].i]), clean(f[start[k]]))) apart = 0;
    if (apart) start[ns++] = pool[c].i;
  }
  return ns;
}

static int wave(strata_search *s, int64_t n, const double *y, const double *f, char *used,
                int known, int most, int *started, strata_eval_fn eval, void *ctx)
{
  const int dim = s->dim;
  *started = 0;
  int64_t *start = malloc(sizeof(int64_t) * (size_t)most);
  ascent *asc = malloc(sizeof(ascent) * (size_t)most);
  int *again = malloc(sizeof(int) * (size_t)most), *found = calloc((size_t)most, sizeof(int));
  int rc = STRATA_OK;
  if (!start || !asc || !again || !found) {
    rc = strata_error(STRATA_ENOMEM, "peak search: out of memory for %d ascents", most);
    goto out;
  }
  const int ns = pick_starts(s, n, y, f, used, known, most, start, eval, ctx);
  if (ns < 0) {
    rc = -ns;
    goto out;
  }
  s->nascents += ns;
  *started = ns;
  for (int k = 0; k < ns; k++) used[start[k]] = 1;
  /* First log |f| from every start, together; the ends judged in start order. */
  const target tf = {s, 0, 0};
  for (int k = 0; k < ns; k++) {
    memcpy(asc[k].x, y + start[k] * dim, sizeof(double) * (size_t)dim);
    asc[k].phi = target_phi(&tf, asc[k].x, clean(f[start[k]]));
  }
  if ((rc = climb(s, &tf, ns, asc, eval, ctx)) != STRATA_OK) goto out;
  int nagain = 0;
  for (int k = 0; k < ns; k++) {
    const int r = judge_end(s, &tf, &asc[k], known, &found[k], eval, ctx);
    if (r < 0) {
      rc = -r;
      goto out;
    }
    /* An end at a known mode: the residual may hide a component there. */
    if (r == 2) again[nagain++] = k;
  }
  /* Then the residual log(f - sum A) from the starts whose ascent ended at a
   * known mode, with the modes known now. */
  if (nagain > 0) {
    const target tr = {s, 1, s->nmodes};
    ascent *res = malloc(sizeof(ascent) * (size_t)nagain);
    if (!res) {
      rc = strata_error(STRATA_ENOMEM, "peak search: out of memory for %d ascents", nagain);
      goto out;
    }
    for (int k = 0; k < nagain; k++) {
      const double *y0 = y + start[again[k]] * dim;
      memcpy(res[k].x, y0, sizeof(double) * (size_t)dim);
      res[k].phi = target_phi(&tr, y0, clean(f[start[again[k]]]));
    }
    rc = climb(s, &tr, nagain, res, eval, ctx);
    for (int k = 0; k < nagain && rc == STRATA_OK; k++) {
      const int r = judge_end(s, &tr, &res[k], known, &found[again[k]], eval, ctx);
      if (r < 0) rc = -r;
    }
    free(res);
    if (rc != STRATA_OK) goto out;
  }
  for (int k = 0; k < ns; k++)
    if (!found[k] && s->ntried < s->p.max_ascents) {
      memcpy(s->tried + (size_t)s->ntried * dim, y + start[k] * dim, sizeof(double) * (size_t)dim);
      s->ntried++;
    }
out:
  free(start);
  free(asc);
  free(again);
  free(found);
  return rc;
}

static int round_of(strata_search *s, int64_t n, const double *y, const double *f, int known,
                    int most, strata_eval_fn eval, void *ctx)
{
  s->rounds++;
  if (most > s->p.max_ascents - s->nascents) most = s->p.max_ascents - s->nascents;
  if (most <= 0 || n <= 0) return STRATA_OK;
  char *used = calloc((size_t)n, 1);
  if (!used) return strata_error(STRATA_ENOMEM, "peak search: out of memory for %lld candidates",
                                 (long long)n);
  int rc = STRATA_OK;
  while (most > 0 && rc == STRATA_OK) {
    int started;
    rc = wave(s, n, y, f, used, known, most, &started, eval, ctx);
    if (started == 0) break;
    most -= started;
  }
  free(used);
  return rc;
}

int strata_search_round(strata_search *s, int64_t n, const double *y, const double *f,
                        int known, strata_eval_fn eval, void *ctx)
{
  STRATA_GIVEN(s, "search");
  STRATA_GIVEN(eval, "evaluator");
  if (n > 0) {
    STRATA_GIVEN(y, "candidates");
    STRATA_GIVEN(f, "candidates' values");
  }
  return round_of(s, n, y, f, known, known ? s->p.max_ascents : s->p.ascents, eval, ctx);
}

int strata_search_sobol(strata_search *s, uint64_t seed, strata_eval_fn eval, void *ctx)
{
  STRATA_GIVEN(s, "search");
  STRATA_GIVEN(eval, "evaluator");
  const int n = s->p.starts;
  if (n <= 0) return round_of(s, 0, NULL, NULL, 0, 2 * s->p.ascents, eval, ctx);
  int log2n = 1;
  while ((1 << log2n) < n) log2n++;
  strata_qmc *q = strata_qmc_alloc(STRATA_QMC_SOBOL, s->dim, 1, log2n);
  if (!q) return STRATA_ENOMEM;
  uint32_t c[4] = {SEARCH_SOBOL_TAG, 0, 0, 0};
  strata_philox4x32_10(c, seed);
  strata_qmc_randomize(q, (uint64_t)c[0] | (uint64_t)c[1] << 32, 0);
  int rc = batch_reserve(s, n);
  if (rc) {
    strata_qmc_free(q);
    return rc;
  }
  strata_qmc_cursor cur = {.next = -1};
  for (int i = 0; i < n; i++) strata_qmc_point(q, &cur, i, s->by + (size_t)i * s->dim);
  strata_qmc_free(q);
  if ((rc = evaluate(s, n, eval, ctx)) != STRATA_OK) return rc;
  /* The round's batches reuse the batch buffer: the Sobol' set takes it
   * over, and the round's batches, a few points each, get one of their
   * own (a copy would touch as many pages again). */
  double *y = s->by, *f = s->bf;
  s->by = NULL;
  s->bf = NULL;
  s->bcap = 0;
  rc = round_of(s, n, y, f, 0, 2 * s->p.ascents, eval, ctx);
  free(y);
  free(f);
  return rc;
}

/* The state: dim, counts, then the modes' and the failed starts' room in
 * full, so that its size depends on dim and the parameters alone. */
enum { HEAD = 6 };
static size_t mode_doubles(int dim) { return (size_t)dim * (1 + 2 * (size_t)dim) + 3; }

size_t strata_search_state_size(const strata_search *s)
{
  return HEAD + (size_t)s->p.max_modes * mode_doubles(s->dim) +
         (size_t)s->p.max_ascents * (size_t)s->dim;
}

void strata_search_state_get(const strata_search *s, double *buf)
{
  const int dim = s->dim;
  memset(buf, 0, sizeof(double) * strata_search_state_size(s));
  buf[0] = dim;
  buf[1] = s->nmodes;
  buf[2] = s->ntried;
  buf[3] = (double)s->evals;
  buf[4] = s->rounds;
  buf[5] = s->nascents;
  double *b = buf + HEAD;
  for (int j = 0; j < s->nmodes; j++, b += mode_doubles(dim)) {
    const strata_peak *md = &s->modes[j];
    memcpy(b, md->m, sizeof(double) * (size_t)dim);
    memcpy(b + dim, md->hess, sizeof(double) * (size_t)dim * dim);
    memcpy(b + dim + dim * dim, md->chol, sizeof(double) * (size_t)dim * dim);
    b[dim + 2 * dim * dim] = md->logf;
    b[dim + 2 * dim * dim + 1] = md->logmass;
    b[dim + 2 * dim * dim + 2] = md->known;
  }
  memcpy(buf + HEAD + (size_t)s->p.max_modes * mode_doubles(dim), s->tried,
         sizeof(double) * (size_t)s->ntried * (size_t)dim);
}

int strata_search_state_set(strata_search *s, const double *buf, size_t n)
{
  STRATA_GIVEN(s, "search");
  STRATA_GIVEN(buf, "search state");
  const int dim = s->dim;
  if (n != strata_search_state_size(s) || buf[0] != dim)
    return strata_error(STRATA_EINVAL, "peak search state: %zu doubles for dim %g, expected "
                        "%zu for dim %d", n, n > 0 ? buf[0] : 0.0, strata_search_state_size(s),
                        dim);
  if (!(buf[1] >= 0 && buf[1] <= s->p.max_modes && buf[2] >= 0 && buf[2] <= s->p.max_ascents &&
        buf[3] >= 0 && buf[4] >= 0 && buf[5] >= 0))
    return strata_error(STRATA_EINVAL, "peak search state: %g modes and %g failed starts "
                        "(at most %d and %d)", buf[1], buf[2], s->p.max_modes, s->p.max_ascents);
  s->nmodes = (int)buf[1];
  s->ntried = (int)buf[2];
  s->evals = (int64_t)buf[3];
  s->rounds = (int)buf[4];
  s->nascents = (int)buf[5];
  const double *b = buf + HEAD;
  for (int j = 0; j < s->nmodes; j++, b += mode_doubles(dim)) {
    strata_peak *md = &s->modes[j];
    memset(md, 0, sizeof *md);
    memcpy(md->m, b, sizeof(double) * (size_t)dim);
    memcpy(md->hess, b + dim, sizeof(double) * (size_t)dim * dim);
    memcpy(md->chol, b + dim + dim * dim, sizeof(double) * (size_t)dim * dim);
    md->logf = b[dim + 2 * dim * dim];
    md->logmass = b[dim + 2 * dim * dim + 1];
    md->known = (int)b[dim + 2 * dim * dim + 2];
  }
  memcpy(s->tried, buf + HEAD + (size_t)s->p.max_modes * mode_doubles(dim),
         sizeof(double) * (size_t)s->ntried * (size_t)dim);
  return STRATA_OK;
}
