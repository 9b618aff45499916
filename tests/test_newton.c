/*
 * test_newton.c — dual_newton on the CPU: hand-solved systems (roots in closed form, per-point
 * parameters), every failure status, option and dimension errors, bitwise equality across
 * thread counts and batch compositions, and the Moré–Garbow–Hillstrom problems 1–14 from their
 * standard starting points times 1, 10 and 100 against MINPACK's hybrj1 results
 * (tests/data/minpack: its initial residual norms check our problem definitions, its solutions
 * and exit parameters are the reference); the norms' summation order (solve/vec_small.h) against a
 * lane-by-lane simulation of the GPU groups' butterfly and an extended-precision sum; the
 * Jacobian's structural band read from programs (hand-derived bands) and the LU of
 * solve/lu_small.h, dense and banded, against a textbook dense LU (bitwise; values for the banded
 * one) and an extended-precision elimination.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "solve/lu_small.h"
#include "solve/solve_common.h"
#include "solve/vec_small.h"
#include "row_programs.h"
#include "test_arrays.h"
#include "mgh_equations.h"
#include "minpack_cases.h"

static dual_context *cpu(void) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  return ctx;
}


/* ---- closed-form roots ------------------------------------------------------------------- */

Test(newton, square_roots_of_per_point_parameters) {
  dual_context *ctx = cpu();
  /* x^2 = a and y^3 = x * b: x = sqrt(a), y = cbrt(sqrt(a) b) */
  dual_program *prog = compile_ok(ctx, "input x; input y; param a; param b\n"
                                    "output f = x^2 - a; output g = y^3 - x * b\n");
  enum { B = 1000 };
  double x[2 * B], p[2 * B], fn[B];
  int32_t info[B], it[B];
  for (int b = 0; b < B; ++b) {
    p[2 * b] = 0.5 + b * 0.01, p[2 * b + 1] = -3.0 + b * 0.007;
    x[2 * b] = 1.0 + 0.5 * (b % 3), x[2 * b + 1] = 1.0;
  }
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.f_abs = 1e-13;
  cr_assert_eq(dual_newton(ctx, prog, &o, B, x, 2, p, 2, info, it, fn), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  for (int b = 0; b < B; ++b) {
    const double rx = sqrt(p[2 * b]), ry = cbrt(rx * p[2 * b + 1]);
    cr_assert_eq(info[b], DUAL_SOLVE_CONVERGED, "point %d: %s", b, dual_solve_status_string(info[b]));
    cr_assert(fabs(x[2 * b] - rx) <= 1e-13 * rx && fabs(x[2 * b + 1] - ry) <= 1e-12 * fmax(1, fabs(ry)),
              "point %d: (%.17g, %.17g) want (%.17g, %.17g)", b, x[2 * b], x[2 * b + 1], rx, ry);
    cr_assert(it[b] >= 1 && it[b] <= 50);
    cr_assert(fn[b] <= 1e-13 || info[b] == DUAL_SOLVE_CONVERGED);
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(newton, quadratic_convergence_counts) {
  /* f = x^2 - 2 from 1: Newton's iterates 1.5, 1.41667, 1.414215..., converged by the step test
   * after at most 6 steps; the full step is taken, so x is sqrt(2) to the last bit or one ulp */
  dual_context *ctx = cpu();
  dual_program *prog = compile_ok(ctx, "input x\noutput f = x^2 - 2\n");
  double x = 1.0, fn;
  int32_t info, it;
  cr_assert_eq(dual_newton(ctx, prog, NULL, 1, &x, 1, NULL, 0, &info, &it, &fn), DUAL_SUCCESS);
  cr_assert_eq(info, DUAL_SOLVE_CONVERGED);
  cr_assert(fabs(x - sqrt(2.0)) <= 2.3e-16, "x = %.17g", x);
  cr_assert(it >= 4 && it <= 6, "%d steps", it);
  cr_assert(fn <= 5e-16, "fnorm %g", fn);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(newton, every_failure_status_and_the_batch_goes_on) {
  dual_context *ctx = cpu();
  /* point 0 converges (a = 4); point 1: a = -1, no real root: phi has its minimum at x = 0 where
   * J = 0 (singular or line search); point 2: NaN parameter; point 3: max_iter 2 from far away */
  dual_program *prog = compile_ok(ctx, "input x; param a\noutput f = x^2 - a\n");
  double x[4] = {3, 0.7, 1, 1e6}, p[4] = {4, -1, NAN, 4}, fn[4];
  int32_t info[4], it[4];
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.max_iter = 8;
  cr_assert_eq(dual_newton(ctx, prog, &o, 4, x, 1, p, 1, info, it, fn), DUAL_SUCCESS);
  cr_assert_eq(info[0], DUAL_SOLVE_CONVERGED);
  cr_assert(fabs(x[0] - 2) <= 4.5e-16);
  cr_assert(info[1] == DUAL_SOLVE_SINGULAR || info[1] == DUAL_SOLVE_LINE_SEARCH || info[1] == DUAL_SOLVE_MAX_ITER,
            "no-root point: %s", dual_solve_status_string(info[1]));
  cr_assert(fn[1] >= 1.0 - 1e-12, "||F|| >= 1 everywhere, got %g", fn[1]);
  cr_assert_eq(info[2], DUAL_SOLVE_NONFINITE);
  cr_assert_eq(info[3], DUAL_SOLVE_MAX_ITER);
  cr_assert_eq(it[3], 8);
  cr_assert(x[3] < 1e6 / 200 && x[3] > 2, "8 halvings from 1e6: %g", x[3]);
  /* a singular Jacobian everywhere (rank 1) */
  dual_program *sing = compile_ok(ctx, "input x; input y\noutput f = x + y - 1; output g = 2 * x + 2 * y - 1\n");
  double xs[2] = {0, 0};
  int32_t is;
  cr_assert_eq(dual_newton(ctx, sing, NULL, 1, xs, 2, NULL, 0, &is, NULL, NULL), DUAL_SUCCESS);
  cr_assert_eq(is, DUAL_SOLVE_SINGULAR);
  /* a line search that cannot decrease: f = atan(x) from far out on the full-step divergent
   * side converges with damping (no full steps), and without line search diverges to inf */
  dual_program *at = compile_ok(ctx, "input x\noutput f = atan(x)\n");
  double xa = 3.0;
  int32_t ia;
  cr_assert_eq(dual_newton(ctx, at, NULL, 1, &xa, 1, NULL, 0, &ia, NULL, NULL), DUAL_SUCCESS);
  cr_assert_eq(ia, DUAL_SOLVE_CONVERGED);
  cr_assert(fabs(xa) <= 1e-12, "atan root: %g", xa);
  o.line_search = 0, o.max_iter = 50;
  xa = 3.0;
  cr_assert_eq(dual_newton(ctx, at, &o, 1, &xa, 1, NULL, 0, &ia, NULL, NULL), DUAL_SUCCESS);
  cr_assert(ia == DUAL_SOLVE_NONFINITE || ia == DUAL_SOLVE_SINGULAR || ia == DUAL_SOLVE_MAX_ITER,
            "undamped Newton on atan from 3 diverges: %s at %g", dual_solve_status_string(ia), xa);
  dual_program_destroy(&prog), dual_program_destroy(&sing), dual_program_destroy(&at);
  dual_context_destroy(&ctx);
}

Test(newton, argument_errors) {
  dual_context *ctx = cpu();
  dual_program *rect = compile_ok(ctx, "input x; input y\noutput f = x + y\n");
  dual_program *sq = compile_ok(ctx, "input x; param a\noutput f = x - a\n");
  double x[2] = {1, 2}, a = 1;
  cr_assert_eq(dual_newton(ctx, rect, NULL, 1, x, 2, NULL, 0, NULL, NULL, NULL), DUAL_ERR_DIMENSION);
  cr_assert(strstr(dual_context_last_error(ctx), "square system") != NULL);
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.size = 8;
  cr_assert_eq(dual_newton(ctx, sq, &o, 1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "dual_solve_options_init") != NULL);
  dual_solve_options_init(&o);
  o.max_iter = -1;
  cr_assert_eq(dual_newton(ctx, sq, &o, 1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  dual_solve_options_init(&o);
  o.step_bound = 0;
  cr_assert_eq(dual_newton(ctx, sq, &o, 1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  dual_solve_options_init(&o);
  o.x_rel = NAN;
  cr_assert_eq(dual_newton(ctx, sq, &o, 1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "x_rel") != NULL);
  cr_assert_eq(dual_newton(ctx, sq, NULL, 1, x, 1, NULL, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_newton(ctx, sq, NULL, 1, x, 0, &a, 1, NULL, NULL, NULL), DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_newton(ctx, sq, NULL, -1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_newton(ctx, NULL, NULL, 1, x, 1, &a, 1, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_newton(ctx, sq, NULL, 0, NULL, 1, NULL, 1, NULL, NULL, NULL), DUAL_SUCCESS);
  cr_assert_str_eq(dual_solve_status_string(DUAL_SOLVE_SINGULAR), "singular Jacobian");
  cr_assert_str_eq(dual_solve_status_string(99), "unknown");
  dual_program_destroy(&rect), dual_program_destroy(&sq);
  dual_context_destroy(&ctx);
}

static int by_value(const void *a, const void *b) {
  const double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

/* ---- MGH problems against hybrj1 ---------------------------------------------------------- */

/* (.timeout: generous for the compiled-tier parameter's compiles, tests/CMakeLists.txt) */
Test(newton, mgh_problems_against_hybrj, .timeout = 1800) {
  static minpack_case cs[64];
  char why[256];
  const int nc = minpack_read_cases("hyjdrv.fortran.ref", "test_hybrj_reference_solutions.txt", cs, 64, why, sizeof why);
  cr_assert_eq(nc, 55, "%s", why);
  dual_context *ctx = cpu();
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.max_iter = 200;
  int agree = 0, other_root = 0, better = 0, same_failure = 0, missed = 0;
  char missed_list[256] = "";
  for (int c = 0; c < nc; ++c) {
    const minpack_case *m = &cs[c];
    char *src = mgh_equations_source(m->nprob, m->n);
    dual_program *prog = compile_ok(ctx, src);
    free(src);
    double x[40], F[40], fn;
    int32_t info, it;
    mgh_equations_start(m->nprob, m->n, m->factor, x);
    cr_assert_eq(dual_eval(ctx, prog, 1, x, m->n, NULL, 0, F, m->n, NULL), DUAL_SUCCESS);
    double f0 = 0;
    for (int j = 0; j < m->n; ++j) f0 += F[j] * F[j];
    f0 = sqrt(f0);
    cr_expect(fabs(f0 - m->fnorm0) <= 1e-7 * m->fnorm0, "case %d (problem %d, n %d, x%g): ||F(x0)|| %.8e, MINPACK %.8e",
              c + 1, m->nprob, m->n, m->factor, f0, m->fnorm0);
    cr_assert_eq(dual_newton(ctx, prog, &o, 1, x, m->n, NULL, 0, &info, &it, &fn), DUAL_SUCCESS);
    /* Chebyquad's roots are sets: any order of the same abscissae is the same root */
    double xs[40], rs[40], big = 0, dev = 0;
    memcpy(xs, x, sizeof(double) * (size_t)m->n), memcpy(rs, m->ref, sizeof(double) * (size_t)m->n);
    if (m->nprob == 7) qsort(xs, (size_t)m->n, sizeof(double), by_value), qsort(rs, (size_t)m->n, sizeof(double), by_value);
    for (int j = 0; j < m->n; ++j) big = fmax(big, fabs(rs[j]));
    for (int j = 0; j < m->n; ++j) { /* relative, or against 1e-4 of the largest where tiny */
      const double d = fabs(xs[j] - rs[j]) / fmax(fmax(fabs(rs[j]), 1e-4 * big), 1e-12);
      if (d > dev) dev = d;
    }
    const int same_root = dev <= 1e-5;
    /* a point reported converged is a root: ||F|| at rounding level of the start's scale */
    if (info == DUAL_SOLVE_CONVERGED)
      cr_expect(fn <= 1e-12 * fmax(1.0, m->fnorm0), "case %d: converged with ||F|| %.3e", c + 1, fn);
    const char *verdict;
    if (m->info == 1 && info == DUAL_SOLVE_CONVERGED && same_root) agree++, verdict = "agrees";
    else if (m->info == 1 && info == DUAL_SOLVE_CONVERGED) other_root++, verdict = "another root";
    else if (m->info == 1) {
      missed++, verdict = "MISSED: hybrj found a root";
      snprintf(missed_list + strlen(missed_list), sizeof missed_list - strlen(missed_list), " %d", c + 1);
    } else if (info == DUAL_SOLVE_CONVERGED) better++, verdict = "hybrj failed (info 4), ours converged";
    else same_failure++, verdict = "both failed";
    cr_log_info("case %2d problem %2d n %2d x%-3g: %s, %d steps, ||F|| %.3e (hybrj info %d, ||F|| %.3e), dev %.1e: %s",
                c + 1, m->nprob, m->n, m->factor, dual_solve_status_string(info), it, fn, m->info,
                m->fnorm_final, dev, verdict);
    dual_program_destroy(&prog);
  }
  cr_log_info("MGH 1-14: %d of 48 hybrj roots found again, %d other roots, %d missed (cases%s), %d hybrj failures "
              "solved, %d failed by both", agree, other_root, missed, missed_list, better, same_failure);
  /* Where we stand (2026-11-27, with the hybrid fallback a port of hybrj): 47 of hybrj's 48
   * roots.  Cases 26, 45 and 46 (Chebyquad n = 7 at 10 x0, trigonometric at 10 and 100 x0) come
   * from that fallback, which on its own takes hybrj's steps bit for bit when given the Fortran
   * driver's F and J, and reports hybrj's info on all 55 cases with ours.  Of hybrj's seven
   * failures (info 4) three are solved here (cases 18, 27, 44) and four fail here too (4, 5, 6:
   * Powell's singular function, ||F|| ~1e-34 at a singular J; 28).  Case 32 (Brown almost-linear n = 10 from 100 x0) is
   * solved by Newton's first stage, at the other root (1, ..., 1), so the fallback never runs;
   * hybrj itself, given F and J that differ from the Fortran's by an ulp, goes there too: its
   * path from 100 x0 is decided by rounding (the model's prediction at the fourth trial is a
   * difference of numbers of order 1e27).  The test holds that line and fails on any regression. */
  cr_expect(agree >= 47 && agree + other_root + missed == 48 && missed == 0,
            "%d agree, %d other roots, %d missed (cases%s)", agree, other_root, missed, missed_list);
  cr_expect_eq(better + same_failure, 7);
  dual_context_destroy(&ctx);
}

/* ---- reproducibility ----------------------------------------------------------------------- */

/* Results of one solver call on B points in [first, first + count): x, info, iters, fnorm. */
typedef struct run_out {
  double x[2 * 600], fn[600];
  int32_t info[600], it[600];
} run_out;

static void solve_part(dual_context *ctx, const dual_program *prog, int lsq, const double *x0,
                       const double *p, int np, int first, int count, run_out *r) {
  memcpy(r->x + 2 * first, x0 + 2 * first, sizeof(double) * 2 * (size_t)count);
  int st = lsq ? dual_lsq(ctx, prog, NULL, count, r->x + 2 * first, 2, p + np * first, np, r->info + first,
                          r->it + first, r->fn + first)
               : dual_newton(ctx, prog, NULL, count, r->x + 2 * first, 2, p + np * first, np, r->info + first,
                             r->it + first, r->fn + first);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
}

Test(newton, bitwise_across_threads_and_batch_splits) {
  /* Newton: x^2 + y = a, x y = b with a mix of starts: most converge at once, some take the
   * fallback (a < 0 has no real root for some b).  Least squares: the same residuals plus a
   * third, m = 3. */
  dual_context *one = cpu(), *two = cpu();
  cr_assert_eq(dual_context_set_threads(one, 1), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(two, 2), DUAL_SUCCESS);
  dual_program *sq = compile_ok(one, "input x; input y; param a; param b\noutput f = x^2 + y - a; output g = x * y - b\n");
  dual_program *ls = compile_ok(one, "input x; input y; param a; param b\n"
                                  "output f = x^2 + y - a; output g = x * y - b; output h = 0.1 * (x - y)\n");
  enum { B = 600 };
  static double x0[2 * B], p[2 * B];
  for (int b = 0; b < B; ++b) {
    p[2 * b] = -2.0 + 0.01 * b, p[2 * b + 1] = 0.5 * sin(0.1 * b);
    x0[2 * b] = 0.3 + 0.002 * b, x0[2 * b + 1] = -1.0 + 0.003 * b;
  }
  static run_out ref, r;
  for (int lsq = 0; lsq < 2; ++lsq) {
    const dual_program *prog = lsq ? ls : sq;
    solve_part(one, prog, lsq, x0, p, 2, 0, B, &ref);
    int kinds[6] = {0};
    for (int b = 0; b < B; ++b) kinds[ref.info[b] < 6 ? ref.info[b] : 5]++;
    cr_log_info("%s: %d converged, %d max iter, %d singular, %d line search, %d other", lsq ? "dual_lsq" : "dual_newton",
                kinds[0], kinds[1], kinds[2], kinds[4], kinds[3] + kinds[5]);
    if (!lsq) cr_assert(kinds[0] > 0 && kinds[0] < B, "the batch should mix outcomes");
    /* two threads, one call; then in three calls of uneven size */
    solve_part(two, prog, lsq, x0, p, 2, 0, B, &r);
    cr_assert(memcmp(r.x, ref.x, sizeof ref.x) == 0 && memcmp(r.fn, ref.fn, sizeof ref.fn) == 0 &&
                  memcmp(r.info, ref.info, sizeof ref.info) == 0 && memcmp(r.it, ref.it, sizeof ref.it) == 0,
              "%s: two threads differ from one", lsq ? "dual_lsq" : "dual_newton");
    memset(&r, 0, sizeof r);
    solve_part(two, prog, lsq, x0, p, 2, 0, 1, &r);
    solve_part(two, prog, lsq, x0, p, 2, 1, 377, &r);
    solve_part(two, prog, lsq, x0, p, 2, 378, B - 378, &r);
    cr_assert(memcmp(r.x, ref.x, sizeof ref.x) == 0 && memcmp(r.fn, ref.fn, sizeof ref.fn) == 0 &&
                  memcmp(r.info, ref.info, sizeof ref.info) == 0 && memcmp(r.it, ref.it, sizeof ref.it) == 0,
              "%s: a split batch differs from one call", lsq ? "dual_lsq" : "dual_newton");
    /* every converged Newton point is a root */
    for (int b = 0; !lsq && b < B; ++b)
      if (ref.info[b] == DUAL_SOLVE_CONVERGED) {
        const double X = ref.x[2 * b], Y = ref.x[2 * b + 1];
        cr_assert(fabs(X * X + Y - p[2 * b]) <= 1e-12 && fabs(X * Y - p[2 * b + 1]) <= 1e-12,
                  "point %d: (%.17g, %.17g) is not a root", b, X, Y);
      }
  }
  dual_program_destroy(&sq), dual_program_destroy(&ls);
  dual_context_destroy(&one), dual_context_destroy(&two);
}

/* ---- the norms' summation order ------------------------------------------------------------ */

/* What a group of 16 GPU lanes computes for the sum of squares (kernels/newton_kernels.cu): lane
 * l accumulates the squares of entries l, l + 16, ... from +0, then four xor-butterfly steps,
 * each lane adding its partner's value.  Simulated lane by lane; every lane must end equal. */
static double butterfly_sumsq(const double *v, int n, int *lanes_agree) {
  double p[16];
  for (int l = 0; l < 16; ++l) {
    p[l] = 0.0;
    for (int j = l; j < n; j += 16) p[l] = p[l] + v[j] * v[j];
  }
  for (int h = 8; h > 0; h >>= 1) {
    double q[16];
    for (int l = 0; l < 16; ++l) q[l] = p[l] + p[l ^ h];
    memcpy(p, q, sizeof p);
  }
  *lanes_agree = 1;
  for (int l = 1; l < 16; ++l) *lanes_agree &= memcmp(&p[l], &p[0], sizeof(double)) == 0;
  return p[0];
}

Test(newton, norms_sum_in_the_lane_groups_order) {
  srand(7);
  for (int t = 0; t < 20000; ++t) {
    const int n = rand() % 70;
    double v[70];
    long double exact = 0.0L;
    for (int j = 0; j < n; ++j) {
      const int k = rand() % 6;
      v[j] = k == 0 ? 0.0 : k == 1 ? -0.0 : ldexp(rand() / (double)RAND_MAX - 0.5, rand() % 60 - 30);
      exact += (long double)v[j] * v[j];
    }
    int agree = 0;
    const double ref = butterfly_sumsq(v, n, &agree), got = dual_sv_sumsq(v, n, 1);
    cr_assert(agree, "n %d: the simulated lanes differ", n);
    cr_assert(memcmp(&ref, &got, sizeof ref) == 0, "n %d: dual_sv_sumsq %.17g, lane order %.17g", n, got, ref);
    /* any order of n positive terms: within (n + 1) unit roundoffs (n squares, n - 1 sums) */
    cr_assert(fabsl(got - exact) <= (n + 1) * (DBL_EPSILON / 2) * exact, "n %d: sum of squares %.17g, exact %.17Lg", n, got, exact);
    const double nrm = dual_sv_norm_lanes(v, n, 1);
    cr_assert(memcmp(&nrm, &(double){sqrt(got)}, sizeof nrm) == 0, "n %d: the norm is not sqrt of the sum", n);
  }
  /* past the plain sum's range the scaled sums take over (no overflow, no underflow) */
  const double big[3] = {0x1p600, -0x1p600, 0x1p599}, small[2] = {0x1p-600, 0x1p-601};
  cr_assert_float_eq(dual_sv_norm_lanes(big, 3, 1), 0x1p600 * sqrt(2.25), 1e-15 * 0x1p600);
  cr_assert_float_eq(dual_sv_norm_lanes(small, 2, 1), 0x1p-600 * sqrt(1.25), 1e-15 * 0x1p-600);
}

/* ---- the Jacobian's band and the banded LU ------------------------------------------------ */

/* The band of dF/dx of a program of n inputs and outputs, output i written by row(i, n, buf). */
static void band_of(dual_context *ctx, int n, row_fn row, int32_t *lo, int32_t *hi) {
  dual_program *prog = row_program(ctx, n, row);
  dual_solve_jacobian_band(prog, lo, hi);
  dual_program_destroy(&prog);
}

static const char *lower_and_corner(int i, int n, char *b) { /* x_i - x_{i-1}; row 0 reaches x_3 */
  (void)n;
  if (i == 0) snprintf(b, 200, "x[0] * x[3]");
  else snprintf(b, 200, "sin(x[%d]) - x[%d]", i, i - 1);
  return b;
}
static const char *constants(int i, int n, char *b) { /* no input at all */
  (void)n;
  snprintf(b, 200, "%d", i + 1);
  return b;
}

Test(newton, jacobian_band_from_the_program) {
  dual_context *ctx = cpu();
  int32_t lo, hi;
  band_of(ctx, 15, row_tridiagonal, &lo, &hi);
  cr_assert(lo == 1 && hi == 1, "Bratu: band (%d, %d), want (1, 1)", lo, hi);
  band_of(ctx, 6, lower_and_corner, &lo, &hi);
  cr_assert(lo == 1 && hi == 3, "lower bidiagonal with f0(x3): band (%d, %d), want (1, 3)", lo, hi);
  band_of(ctx, 40, row_cyclic, &lo, &hi); /* two passes of 32 columns */
  cr_assert(lo == 39 && hi == 1, "cyclic n = 40: band (%d, %d), want (39, 1)", lo, hi);
  band_of(ctx, 7, row_dense, &lo, &hi);
  cr_assert(lo == 6 && hi == 6, "dense: band (%d, %d), want (6, 6)", lo, hi);
  band_of(ctx, 3, constants, &lo, &hi);
  cr_assert(lo == 0 && hi == 0, "no inputs used: band (%d, %d), want (0, 0)", lo, hi);
  /* MGH: discrete boundary value and Broyden tridiagonal (1, 1); Broyden banded: f_i reads
   * x_j for i - 5 <= j <= i + 1, band (5, 1) */
  const int probs[3] = {9, 13, 14}, want_lo[3] = {1, 1, 5};
  for (int k = 0; k < 3; ++k) {
    char *src = mgh_equations_source(probs[k], 12);
    dual_program *prog = compile_ok(ctx, src);
    dual_solve_jacobian_band(prog, &lo, &hi);
    cr_assert(lo == want_lo[k] && hi == 1, "MGH %d: band (%d, %d), want (%d, 1)", probs[k], lo, hi, want_lo[k]);
    dual_program_destroy(&prog);
    free(src);
  }
  dual_context_destroy(&ctx);
}

/* A textbook LU with partial pivoting on the dense matrix (LAPACK's dgetrf/dgetrs: whole rows
 * swapped, b permuted before the row-by-row forward solve; the first entry of largest magnitude
 * pivots, a zero multiplier updates nothing; the back solve multiplies by U_ii's reciprocal, as
 * optimized triangular solves do).  Returns 1 when a pivot is <= tiny. */
static int textbook_solve(double *A, int n, double tiny, int32_t *piv, double *b) {
  for (int k = 0; k < n; ++k) {
    int r = k;
    for (int i = k + 1; i < n; ++i)
      if (fabs(A[i * n + k]) > fabs(A[r * n + k])) r = i;
    piv[k] = r;
    if (fabs(A[r * n + k]) <= tiny) return 1;
    for (int j = 0; j < n; ++j) {
      const double t = A[k * n + j];
      A[k * n + j] = A[r * n + j], A[r * n + j] = t;
    }
    for (int i = k + 1; i < n; ++i) {
      A[i * n + k] /= A[k * n + k];
      if (A[i * n + k] != 0.0)
        for (int j = k + 1; j < n; ++j) A[i * n + j] -= A[i * n + k] * A[k * n + j];
    }
  }
  for (int k = 0; k < n; ++k) {
    const double t = b[k];
    b[k] = b[piv[k]], b[piv[k]] = t;
  }
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < i; ++j) b[i] -= A[i * n + j] * b[j];
  for (int i = n - 1; i >= 0; --i) {
    for (int j = n - 1; j > i; --j) b[i] -= A[i * n + j] * b[j];
    b[i] *= 1.0 / A[i * n + i];
  }
  return 0;
}

/* x of A x = b by Gaussian elimination in long double (partial pivoting). */
static void long_double_solve(const double *A0, int n, const double *b0, long double *x) {
  long double A[48 * 48], b[48];
  for (int e = 0; e < n * n; ++e) A[e] = A0[e];
  for (int i = 0; i < n; ++i) b[i] = b0[i];
  for (int k = 0; k < n; ++k) {
    int r = k;
    for (int i = k + 1; i < n; ++i)
      if (fabsl(A[i * n + k]) > fabsl(A[r * n + k])) r = i;
    for (int j = 0; j < n; ++j) {
      const long double t = A[k * n + j];
      A[k * n + j] = A[r * n + j], A[r * n + j] = t;
    }
    const long double t = b[k];
    b[k] = b[r], b[r] = t;
    for (int i = k + 1; i < n; ++i) {
      const long double l = A[i * n + k] / A[k * n + k];
      for (int j = k; j < n; ++j) A[i * n + j] -= l * A[k * n + j];
      b[i] -= l * b[k];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    long double v = b[i];
    for (int j = i + 1; j < n; ++j) v -= A[i * n + j] * x[j];
    x[i] = v / A[i * n + i];
  }
}

Test(newton, banded_lu_against_the_dense_textbook_lu) {
  srand(11);
  for (int t = 0; t < 3000; ++t) {
    const int n = 1 + rand() % 48, p = rand() % n, q = rand() % n;
    double A[48 * 48], Ab[48 * 48], Ad[48 * 48], At[48 * 48], b[48], xb[48], xd[48], xt[48];
    int32_t pb[48], pd[48], pt[48];
    double amax = 0.0;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        const int in = i - j <= p && j - i <= q, k = rand() % 8;
        /* in the band: mostly random (pivoting happens), some exact zeros of either sign */
        A[i * n + j] = !in ? 0.0 : k == 0 ? 0.0 : k == 1 ? -0.0 : rand() / (double)RAND_MAX - 0.5;
        amax = fmax(amax, fabs(A[i * n + j]));
      }
      b[i] = rand() / (double)RAND_MAX - 0.5;
    }
    const double tiny = n * DBL_EPSILON * amax;
    const size_t nn = sizeof(double) * (size_t)(n * n), nv = sizeof(double) * (size_t)n;
    memcpy(Ab, A, nn), memcpy(Ad, A, nn), memcpy(At, A, nn);
    memcpy(xb, b, nv), memcpy(xd, b, nv), memcpy(xt, b, nv);
    const int st = amax == 0.0 || textbook_solve(At, n, tiny, pt, xt);
    const int sd = amax == 0.0 || dual_lu_eliminate(Ad, n, n, 1, pd, 1, tiny, n - 1, n - 1);
    const int sb = amax == 0.0 || dual_lu_eliminate(Ab, n, n, 1, pb, 1, tiny, p, q);
    cr_assert(sd == st && sb == st, "n %d band (%d, %d): singular %d (dense %d), the textbook LU %d", n, p, q, sb, sd, st);
    if (st) continue;
    cr_assert(memcmp(pb, pt, sizeof(int32_t) * (size_t)n) == 0 && memcmp(pd, pt, sizeof(int32_t) * (size_t)n) == 0,
              "n %d band (%d, %d): the pivots differ", n, p, q);
    dual_lu_solve(Ad, n, n, 1, pd, 1, xd, 1, n - 1, n - 1);
    dual_lu_solve(Ab, n, n, 1, pb, 1, xb, 1, p, q);
    for (int i = 0; i < n; ++i) {
      /* dense: the textbook's bits; banded: its values (the sign of an exact zero may differ) */
      cr_assert(memcmp(&xd[i], &xt[i], sizeof(double)) == 0, "n %d dense: x[%d] %a, the textbook LU's %a", n, i, xd[i], xt[i]);
      cr_assert(xb[i] == xt[i], "n %d band (%d, %d): x[%d] %a, the textbook LU's %a", n, p, q, i, xb[i], xt[i]);
    }
    /* and the solution itself, against long double elimination, where A is well conditioned */
    long double x[48];
    long_double_solve(A, n, b, x);
    double err = 0.0, scale = 0.0;
    for (int i = 0; i < n; ++i) err = fmax(err, fabs(xb[i] - (double)x[i])), scale = fmax(scale, (double)fabsl(x[i]));
    if (scale < 1e3) /* a random matrix may be near singular; this bounds the error loosely */
      cr_assert(err <= 1e-6 * fmax(scale, 1.0), "n %d band (%d, %d): |x - x_ld| %g, |x| %g", n, p, q, err, scale);
  }
  /* a singular band (a zero column) is reported */
  double Z[9] = {1, 0, 0, 2, 0, 1, 0, 0, 3};
  int32_t pz[3];
  cr_assert_eq(dual_lu_eliminate(Z, 3, 3, 1, pz, 1, 3 * DBL_EPSILON * 3, 1, 1), 1);
}
