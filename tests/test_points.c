/* The CPU backend makes its points a block of samples at a time
 * (points_cpu.h); each must be the point the sample gets alone
 * (strata_backend_point, then strata_map_apply), bit for bit, since every
 * backend draws the same points.  Blocks of every size, hypercubes of
 * uneven and empty shares, sample indices past 2^32, QMC cells, shared and
 * separate map axes, 32 bits a coordinate and packed uniforms. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "points_cpu.h"
#include "testutil.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next_u32(void)
{
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(rng >> 32);
}

/* A map on a box other than the unit cube whose increments have random
 * widths, as a trained map has. */
static strata_map *rough_map(int dim, int ninc, int shared)
{
  strata_map *g = strata_map_alloc(dim, ninc, shared);
  ck_assert(g != NULL);
  double lo[STRATA_MAX_DIM], up[STRATA_MAX_DIM];
  for (int d = 0; d < dim; d++) {
    lo[d] = -1.0 - 0.25 * d;
    up[d] = 2.0 + 0.5 * d;
  }
  strata_map_init(g, lo, up);
  for (int a = 0; a < strata_map_naxes(g); a++) {
    double *e = g->edges + (size_t)a * (size_t)(ninc + 1), sum = 0.0;
    e[0] = 0.0;
    for (int i = 1; i <= ninc; i++) e[i] = sum += 1.0 + next_u32() % 1000;
    for (int i = 1; i < ninc; i++) e[i] /= sum;
    e[ninc] = 1.0;
  }
  return g;
}

static void same_double(double a, double b, const char *what, int64_t i, int d)
{
  ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s of sample %lld axis %d: %.17g != %.17g",
                what, (long long)i, d, a, b);
}

/* Samples from hypercube h0's first to the last, in blocks of sizes 1,
 * 2, ..., STRATA_POINT_BLOCK, 1, ...: each against the sample alone. */
static void compare(const strata_plan *plan, int64_t h0)
{
  const strata_strat *s = plan->strat;
  const int dim = plan->problem->dim;
  double x[STRATA_POINT_BLOCK * STRATA_MAX_DIM], jac[STRATA_POINT_BLOCK];
  int inc[STRATA_MAX_DIM * STRATA_POINT_BLOCK];
  strata_points_walk w;
  strata_points_start(plan, h0, &w);
  int64_t i = s->start[h0];
  const int64_t end = s->start[s->nhcube];
  for (int n = 1; i < end; n = n % STRATA_POINT_BLOCK + 1) {
    const int m = end - i < n ? (int)(end - i) : n;
    strata_points_block(plan, &w, i, m, x, jac, inc, STRATA_POINT_BLOCK);
    for (int j = 0; j < m; j++, i++) {
      double y[STRATA_MAX_DIM], xr[STRATA_MAX_DIM];
      int ir[STRATA_MAX_DIM];
      strata_backend_point(plan, i, y);
      same_double(jac[j], strata_map_apply(plan->map, y, xr, ir), "Jacobian", i, -1);
      for (int d = 0; d < dim; d++) {
        same_double(x[j * dim + d], xr[d], "x", i, d);
        ck_assert_msg(inc[d * STRATA_POINT_BLOCK + j] == ir[d], "increment of sample %lld axis %d",
                      (long long)i, d);
      }
    }
  }
}

static strata_plan plan_of(const strata_problem *pr, const strata_map *g,
                                const strata_strat *s)
{
  return (strata_plan){.problem = pr, .map = g, .strat = s, .seed = 0x123456789abcdefULL,
                             .iteration = 7, .ubits = 32};
}

/* compare with 32 bits a coordinate and, where the dimension packs, with
 * the packed uniforms of an iteration that does not train the map. */
static void compare_widths(strata_plan *plan, int64_t h0)
{
  const int packed = STRATA_UNIFORM_PACKED_BITS(plan->problem->dim);
  plan->ubits = 32;
  strata_uniform_shifts(plan->seed, plan->iteration, plan->problem->dim, 32, plan->ushift);
  compare(plan, h0);
  if (packed == 32) return;
  plan->ubits = packed;
  strata_uniform_shifts(plan->seed, plan->iteration, plan->problem->dim, packed, plan->ushift);
  compare(plan, h0);
  plan->ubits = 32;
}

/* Hypercubes with random shares, some of them empty. */
START_TEST(test_uneven_hypercubes)
{
  const int dims[] = {1, 2, 3, 4, 5, 6, 9, 13, 32};
  for (size_t t = 0; t < sizeof dims / sizeof *dims; t++) {
    const int dim = dims[t];
    strata_problem pr = {.dim = dim};
    strata_map *g = rough_map(dim, 50, 0);
    strata_strat *s = strata_strat_alloc(dim, 4000, 4096, 0.75, 1);
    ck_assert(s != NULL);
    strata_strat_init(s);
    int64_t *nh = malloc(sizeof *nh * (size_t)s->nhcube);
    ck_assert(nh != NULL);
    for (int64_t h = 0; h < s->nhcube; h++) {
      const uint32_t v = next_u32() % 100;
      nh[h] = v < 10 ? 0 : v < 70 ? 1 + v % 4 : v < 95 ? v % 20 : 40 + v % 7;
    }
    if (s->nhcube == 1) nh[0] = 500;
    strata_strat_restore(s, nh);
    strata_plan plan = plan_of(&pr, g, s);
    compare_widths(&plan, 0);
    if (s->nhcube > 3) compare_widths(&plan, s->nhcube / 3); /* a chunk that starts later */
    free(nh);
    strata_strat_free(s);
    strata_map_free(g);
  }
}
END_TEST

/* Sample indices past 2^32: the counter's high word. */
START_TEST(test_large_indices)
{
  strata_problem pr = {.dim = 6};
  strata_map *g = rough_map(6, 100, 0);
  strata_strat *s = strata_strat_alloc(6, 4 * 64, 64, 0.75, 1);
  strata_strat_init(s);
  int64_t nh[64];
  ck_assert_int_eq(s->nhcube, 64);
  for (int h = 0; h < 64; h++) nh[h] = 1 + h % 5;
  nh[0] = (INT64_C(1) << 32) - 3;
  strata_strat_restore(s, nh);
  strata_plan plan = plan_of(&pr, g, s);
  compare_widths(&plan, 1);
  strata_strat_free(s);
  strata_map_free(g);
}
END_TEST

/* One map for all axes (vegas1d). */
START_TEST(test_shared_map)
{
  strata_problem pr = {.dim = 5};
  strata_map *g = rough_map(5, 80, 1);
  strata_strat *s = strata_strat_alloc(5, 2000, 4096, 0.75, 1);
  strata_strat_init(s);
  strata_plan plan = plan_of(&pr, g, s);
  compare_widths(&plan, 0);
  strata_strat_free(s);
  strata_map_free(g);
}
END_TEST

/* QMC points (cells of whole point sets): both rules, from the first cell
 * and from one in the middle of a randomization. */
START_TEST(test_qmc_cells)
{
  for (int rule = 0; rule < 2; rule++)
    for (int dim = 3; dim <= 7; dim += 4) {
      strata_problem pr = {.dim = dim};
      strata_map *g = rough_map(dim, 40, 0);
      strata_qmc *q = strata_qmc_alloc(rule ? STRATA_QMC_LATTICE : STRATA_QMC_SOBOL, dim, 3, 9);
      ck_assert_msg(q != NULL, "%s", strata_last_error());
      strata_qmc_randomize(q, 99, 4);
      strata_strat *s = strata_strat_alloc_cells(dim, 10, 3 << 9);
      strata_plan plan = plan_of(&pr, g, s);
      plan.qmc = q;
      compare(&plan, 0);
      compare(&plan, 4);
      strata_strat_free(s);
      strata_qmc_free(q);
      strata_map_free(g);
    }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("points");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_uneven_hypercubes);
  tcase_add_test(tc, test_large_indices);
  tcase_add_test(tc, test_shared_map);
  tcase_add_test(tc, test_qmc_cells);
  suite_add_tcase(s, tc);
  return test_run_suite(s);
}
