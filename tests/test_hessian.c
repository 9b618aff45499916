/*
 * test_hessian.c — second order on the CPU: dual_hessian and dual_hvp against hand-derived
 * Hessians (the hess benchmark function of tests/ref/hess_ref.c, a three-output program), the
 * engine's components of every op against the op's second-order rule (itself checked against
 * quad-precision differences in test_rules2.c), the six classic test functions of Moré, Garbow
 * and Hillstrom (tests/ref/classic_ref.c), exact symmetry, bitwise identical results for
 * every width, thread count, chunking and layout, agreement with the first-order calls, and the
 * argument errors.
 */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_program.h"
#include "classic_ref.h"
#include "dual/apply_rule.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "hess_ref.h"
#include "program.h"
#include "random_program.h"
#include "test_arrays.h"

/* Hand-derived references are evaluated in double precision in a different order, so entries
 * differ by rounding (~1e-16 relative to the entries of a row that are summed).  1e-12 relative
 * to the largest entry of the row is the acceptance bound of the issue and leaves a factor of
 * ~1e3 of margin; a wrong term is O(1). */
#define HESS_TOL 1e-12
#define NPTS 1000
static const int WIDTHS[] = {1, 2, 4, 8, 16, 32};
#define NWIDTHS ((int)(sizeof WIDTHS / sizeof WIDTHS[0]))

/* ---- helpers ------------------------------------------------------------------------------------ */
static uint64_t rng = 0x4e55e7ULL;
static double normal01(void) {
  const double u = rp_uniform(&rng, 0x1p-53, 1.0), v = rp_uniform(&rng, 0.0, 1.0);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static dual_context *make_ctx(int width, int threads) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_width(ctx, width), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx, threads), DUAL_SUCCESS);
  return ctx;
}

/* Largest |entry| of each n-entry row of a reference, for the row-scaled comparison. */
static double row_scale(const double *row, int n) {
  double s = 0.0;
  for (int j = 0; j < n; ++j) s = fmax(s, fabs(row[j]));
  return s > 0.0 ? s : 1.0;
}

/* Asserts every entry within HESS_TOL of the reference, relative to its row's largest entry;
 * returns the largest such relative difference (printed by the tests as evidence). */
static double assert_rows_close(const double *got, const double *want, int rows, int cols,
                                const char *what, int64_t point) {
  double worst = 0.0;
  for (int i = 0; i < rows; ++i) {
    const double s = row_scale(want + i * cols, cols);
    for (int j = 0; j < cols; ++j) {
      const double g = got[i * cols + j], w = want[i * cols + j];
      cr_assert(fabs(g - w) <= HESS_TOL * s, "%s[%d][%d] at point %lld: %.17g, reference %.17g",
                what, i, j, (long long)point, g, w);
      worst = fmax(worst, fabs(g - w) / s);
    }
  }
  return worst;
}

typedef struct hess_out {
  double *y, *J, *H;
  int32_t *st;
} hess_out;

static hess_out hess_alloc(int64_t B, int m, int n, int layout) {
  const int64_t len = layout == DUAL_HESSIAN_PACKED ? (int64_t)n * (n + 1) / 2 : (int64_t)n * n;
  hess_out o = {calloc((size_t)(B * m), sizeof(double)), calloc((size_t)(B * m * n), sizeof(double)),
                calloc((size_t)(B * m * len), sizeof(double)), calloc((size_t)B, sizeof(int32_t))};
  cr_assert(o.y && o.J && o.H && o.st);
  return o;
}

static void hess_free(hess_out *o) {
  free(o->y), free(o->J), free(o->H), free(o->st);
}

static void run_hessian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                        const double *p, int layout, hess_out *o) {
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  const int64_t len = layout == DUAL_HESSIAN_PACKED ? (int64_t)n * (n + 1) / 2 : (int64_t)n * n;
  int st = dual_hessian(ctx, prog, B, x, n, p, np, o->y, m, o->J, (int64_t)m * n, o->H, m * len,
                        layout, o->st);
  cr_assert(st == DUAL_SUCCESS, "dual_hessian: %s", dual_context_last_error(ctx));
}

static double *normal_points(int64_t B, int n) {
  double *x = malloc(sizeof(double) * (size_t)(B * n));
  cr_assert(x);
  for (int64_t i = 0; i < B * n; ++i) x[i] = normal01();
  return x;
}

/* ---- the hess benchmark function -------------------------------------------------------------- */
Test(hessian, hess_matches_hand_derived_hessian) {
  const int n = HESS_REF_N;
  double *x = normal_points(NPTS, n), worst = 0.0;
  for (int iw = -1; iw < NWIDTHS; ++iw) {
    const int w = iw < 0 ? 0 : WIDTHS[iw];
    dual_context *ctx = make_ctx(w, 0);
    dual_program *prog = bench_program(ctx, "hess");
    hess_out o = hess_alloc(NPTS, 1, n, DUAL_HESSIAN_FULL);
    run_hessian(ctx, prog, NPTS, x, NULL, DUAL_HESSIAN_FULL, &o);
    for (int64_t b = 0; b < NPTS; ++b) {
      const double *xb = x + b * n;
      double g[HESS_REF_N], H[HESS_REF_N * HESS_REF_N];
      const double f = hess_ref_value(xb);
      hess_ref_gradient(xb, g);
      hess_ref_hessian(xb, H);
      cr_assert(fabs(o.y[b] - f) <= HESS_TOL * fabs(f), "f at %lld", (long long)b);
      assert_rows_close(o.J + b * n, g, 1, n, "gradient", b);
      worst = fmax(worst, assert_rows_close(o.H + b * n * n, H, n, n, "H", b));
      cr_assert_eq(o.st[b], 0);
    }
    hess_free(&o);
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  cr_log_info("hess: worst row-scaled |H - H_ref| over %d points and 7 widths: %.3g", NPTS, worst);
  free(x);
}

Test(hessian, hvp_of_hess_matches_hand_derived_hessian_times_v) {
  const int n = HESS_REF_N;
  double *x = normal_points(NPTS, n), *v = normal_points(NPTS, n);
  double *hv = malloc(sizeof(double) * NPTS * n), *g = malloc(sizeof(double) * NPTS * n);
  double *y = malloc(sizeof(double) * NPTS);
  double *ref_hv = NULL, *ref_g = NULL;
  cr_assert(hv && g && y);
  for (int iw = -1; iw < NWIDTHS; ++iw) {
    const int w = iw < 0 ? 0 : WIDTHS[iw];
    dual_context *ctx = make_ctx(w, 0);
    dual_program *prog = bench_program(ctx, "hess");
    int st = dual_hvp(ctx, prog, NPTS, x, n, NULL, 0, v, n, y, 1, g, n, hv, n, NULL);
    cr_assert(st == DUAL_SUCCESS, "dual_hvp: %s", dual_context_last_error(ctx));
    for (int64_t b = 0; b < NPTS; ++b) {
      double H[HESS_REF_N * HESS_REF_N], want[HESS_REF_N], scale = 0.0;
      hess_ref_hessian(x + b * n, H);
      for (int j = 0; j < n; ++j) {
        want[j] = 0.0;
        for (int k = 0; k < n; ++k) want[j] += H[j * n + k] * v[b * n + k];
        for (int k = 0; k < n; ++k) scale = fmax(scale, fabs(H[j * n + k] * v[b * n + k]));
      }
      for (int j = 0; j < n; ++j)
        cr_assert(fabs(hv[b * n + j] - want[j]) <= HESS_TOL * scale,
                  "(H v)[%d] at point %lld, width %d: %.17g, reference %.17g", j, (long long)b, w,
                  hv[b * n + j], want[j]);
    }
    if (ref_hv == NULL) { /* every width: bitwise the same */
      ref_hv = malloc(sizeof(double) * NPTS * n), ref_g = malloc(sizeof(double) * NPTS * n);
      cr_assert(ref_hv && ref_g);
      memcpy(ref_hv, hv, sizeof(double) * NPTS * n), memcpy(ref_g, g, sizeof(double) * NPTS * n);
    } else {
      cr_assert(memcmp(ref_hv, hv, sizeof(double) * NPTS * n) == 0, "H v differs at width %d", w);
      cr_assert(memcmp(ref_g, g, sizeof(double) * NPTS * n) == 0, "gradient differs at width %d", w);
    }
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  free(ref_hv), free(ref_g), free(hv), free(g), free(y), free(x), free(v);
}

/* ---- the classic test functions: Rosenbrock, Powell singular, Wood, Beale, helical valley, Box
 * 3-D, at the standard starting point and 300 random points in the boxes test_classic_ref.c
 * checks its references on (helical valley: |x1| >= 0.2, away from its branch cut) ------------ */
Test(hessian, classic_functions_match_hand_derived_hessians) {
  static const double lo[6][4] = {{-3, -3}, {-3, -3, -3, -3}, {-3, -3, -3, -3}, {-4.5, -4.5},
                                  {0.2, -3, -3}, {-2, -2, -20}};
  static const double hi[6][4] = {{3, 3}, {3, 3, 3, 3}, {3, 3, 3, 3}, {4.5, 4.5}, {3, 3, 3},
                                  {20, 20, 20}};
  cr_assert_eq(classic_fn_count, 6);
  for (int f = 0; f < classic_fn_count; ++f) {
    const classic_fn *fn = &classic_fns[f];
    const int n = fn->n;
    const int64_t B = 301;
    double worst = 0.0;
    double *x = malloc(sizeof(double) * (size_t)(B * n));
    cr_assert(x);
    for (int j = 0; j < n; ++j) x[j] = fn->x0[j];
    for (int64_t b = 1; b < B; ++b)
      for (int j = 0; j < n; ++j) {
        x[b * n + j] = rp_uniform(&rng, lo[f][j], hi[f][j]);
        if (f == 4 && j == 0 && rp_pick(&rng, 2)) x[b * n] = -x[b * n]; /* helical: both signs of x1 */
      }
    for (int iw = 0; iw < 3; ++iw) {
      dual_context *ctx = make_ctx(iw == 0 ? 0 : (iw == 1 ? 1 : 2), 0);
      dual_program *prog = compile_ok(ctx, fn->source);
      cr_assert_eq(dual_program_num_inputs(prog), n, "%s", fn->name);
      hess_out o = hess_alloc(B, 1, n, DUAL_HESSIAN_FULL);
      run_hessian(ctx, prog, B, x, NULL, DUAL_HESSIAN_FULL, &o);
      for (int64_t b = 0; b < B; ++b) {
        double g[4], H[16];
        fn->gradient(x + b * n, g);
        fn->hessian(x + b * n, H);
        const double f0 = fn->value(x + b * n);
        cr_assert(fabs(o.y[b] - f0) <= HESS_TOL * fmax(fabs(f0), 1e-300), "%s: f at %lld", fn->name,
                  (long long)b);
        assert_rows_close(o.J + b * n, g, 1, n, fn->name, b);
        worst = fmax(worst, assert_rows_close(o.H + b * n * n, H, n, n, fn->name, b));
      }
      hess_free(&o);
      dual_program_destroy(&prog);
      dual_context_destroy(&ctx);
    }
    cr_log_info("%s: worst row-scaled |H - H_ref| over %lld points and 3 widths: %.3g", fn->name,
                (long long)B, worst);
    free(x);
  }
}

/* ---- several outputs, by hand ----------------------------------------------------------------- */
/* f0 = x y z, f1 = exp(x) sin(y), f2 = x / y + z^2 (outputs 0..2, inputs x, y, z). */
static void three_outputs_hessians(const double *p, double H[3][9]) {
  const double x = p[0], y = p[1], z = p[2], ex = exp(x), s = sin(y), c = cos(y);
  const double h0[9] = {0, z, y, z, 0, x, y, x, 0};
  const double h1[9] = {ex * s, ex * c, 0, ex * c, -ex * s, 0, 0, 0, 0};
  const double h2[9] = {0, -1 / (y * y), 0, -1 / (y * y), 2 * x / (y * y * y), 0, 0, 0, 2};
  memcpy(H[0], h0, sizeof h0), memcpy(H[1], h1, sizeof h1), memcpy(H[2], h2, sizeof h2);
}

Test(hessian, three_outputs_match_hand_derived_hessians_in_both_layouts) {
  const char *src = "input x; input y; input z\n"
                    "output f0 = x * y * z\noutput f1 = exp(x) * sin(y)\noutput f2 = x / y + z^2\n";
  const int64_t B = 257;
  double *x = normal_points(B, 3);
  for (int64_t b = 0; b < B; ++b) x[b * 3 + 1] += x[b * 3 + 1] >= 0 ? 0.5 : -0.5; /* y away from 0 */
  dual_context *ctx = make_ctx(0, 0);
  dual_program *prog = compile_ok(ctx, src);
  hess_out full = hess_alloc(B, 3, 3, DUAL_HESSIAN_FULL), packed = hess_alloc(B, 3, 3, DUAL_HESSIAN_PACKED);
  run_hessian(ctx, prog, B, x, NULL, DUAL_HESSIAN_FULL, &full);
  run_hessian(ctx, prog, B, x, NULL, DUAL_HESSIAN_PACKED, &packed);
  for (int64_t b = 0; b < B; ++b) {
    double H[3][9];
    three_outputs_hessians(x + b * 3, H);
    for (int i = 0; i < 3; ++i) {
      assert_rows_close(full.H + (b * 3 + i) * 9, H[i], 3, 3, "H_i", b);
      const double *pk = packed.H + (b * 3 + i) * 6; /* (0,0) (0,1) (0,2) (1,1) (1,2) (2,2) */
      const int jj[6] = {0, 0, 0, 1, 1, 2}, kk[6] = {0, 1, 2, 1, 2, 2};
      for (int e = 0; e < 6; ++e)
        cr_assert(memcmp(&pk[e], &full.H[(b * 3 + i) * 9 + jj[e] * 3 + kk[e]], sizeof(double)) == 0,
                  "packed entry %d of output %d differs from the full layout", e, i);
    }
  }
  hess_free(&full), hess_free(&packed);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  free(x);
}

/* ---- bitwise: widths, threads, chunking; symmetry; agreement with first order ---------------- */
/* Same bits, or NaN in both places (NaN payloads and signs are not specified, as in
 * test_bitwise.c). */
static void assert_same(const double *a, const double *b, size_t count, const char *what, int w, int t) {
  for (size_t i = 0; i < count; ++i)
    cr_assert(same_bits(a[i], b[i]), "%s entry %zu differs at width %d, %d threads: %.17g vs %.17g",
              what, i, w, t, a[i], b[i]);
}

static void check_invariance(const dual_program *prog, int64_t B, const double *x, const double *p,
                             const char *name) {
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  const size_t hb = (size_t)(B * m * n * n);
  dual_context *ctx = make_ctx(1, 1);
  hess_out ref = hess_alloc(B, m, n, DUAL_HESSIAN_FULL);
  run_hessian(ctx, prog, B, x, p, DUAL_HESSIAN_FULL, &ref);
  /* exact symmetry */
  for (int64_t b = 0; b < B * m; ++b)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < j; ++k) {
        const double *Hb = ref.H + b * n * n;
        cr_assert(same_bits(Hb[j * n + k], Hb[k * n + j]),
                  "%s: H[%d][%d] != H[%d][%d]", name, j, k, k, j);
      }
  /* the first-order calls give the same values and Jacobian */
  double *y = malloc(sizeof(double) * (size_t)(B * m)), *J = malloc(sizeof(double) * (size_t)(B * m * n));
  int32_t *st = malloc(sizeof(int32_t) * (size_t)B);
  cr_assert(y && J && st);
  cr_assert_eq(dual_jacobian(ctx, prog, B, x, n, p, np, y, m, J, (int64_t)m * n, st), DUAL_SUCCESS);
  assert_same(y, ref.y, (size_t)(B * m), "values (dual_jacobian against dual_hessian)", 0, 1);
  for (int64_t e = 0; e < B * m * n; ++e)
    cr_assert(same_bits(J[e], ref.J[e]),
              "%s: Jacobian entry %lld (point %lld) is %.17g, dual_jacobian's %.17g", name,
              (long long)e, (long long)(e / (m * n)), ref.J[e], J[e]);
  free(y), free(J), free(st);
  dual_context_destroy(&ctx);
  for (int iw = 0; iw < NWIDTHS; ++iw)
    for (int t = 1; t <= 2; ++t) {
      ctx = make_ctx(WIDTHS[iw], t);
      hess_out o = hess_alloc(B, m, n, DUAL_HESSIAN_FULL);
      run_hessian(ctx, prog, B, x, p, DUAL_HESSIAN_FULL, &o);
      assert_same(o.H, ref.H, hb, "H", WIDTHS[iw], t);
      assert_same(o.J, ref.J, (size_t)(B * m * n), "J", WIDTHS[iw], t);
      cr_assert(memcmp(o.st, ref.st, sizeof(int32_t) * (size_t)B) == 0, "status differs at width %d", WIDTHS[iw]);
      hess_free(&o);
      dual_context_destroy(&ctx);
    }
  /* chunking: the batch in uneven pieces gives the same bits */
  ctx = make_ctx(0, 2);
  hess_out o = hess_alloc(B, m, n, DUAL_HESSIAN_FULL);
  const int64_t cuts[] = {0, 1, 18, 100, B};
  for (int c = 0; c + 1 < (int)(sizeof cuts / sizeof cuts[0]); ++c) {
    const int64_t b0 = cuts[c], cnt = cuts[c + 1] - cuts[c];
    const int st2 = dual_hessian(ctx, prog, cnt, x + b0 * n, n, p ? p + b0 * np : NULL, np,
                                 o.y + b0 * m, m, o.J + b0 * m * n, (int64_t)m * n,
                                 o.H + b0 * m * n * n, (int64_t)m * n * n, DUAL_HESSIAN_FULL, o.st + b0);
    cr_assert_eq(st2, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  }
  assert_same(o.H, ref.H, hb, "H (chunked)", 0, 2);
  hess_free(&o);
  hess_free(&ref);
  dual_context_destroy(&ctx);
}

Test(hessian, hess_is_symmetric_and_bitwise_across_widths_threads_chunks) {
  dual_context *ctx = make_ctx(0, 0);
  dual_program *prog = bench_program(ctx, "hess");
  double *x = normal_points(300, HESS_REF_N);
  check_invariance(prog, 300, x, NULL, "hess");
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(hessian, random_programs_are_symmetric_and_bitwise_across_widths_threads_chunks) {
  dual_context *ctx = make_ctx(0, 0);
  for (int i = 0; i < 12; ++i) {
    uint64_t s = 0x2d0ULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 40); /* up to 40 inputs: several diagonal and off-diagonal blocks */
    dual_program *prog = rp_random_program(ctx, &s, 60, nin, 2, 2);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    const int64_t B = 120;
    double *x = malloc(sizeof(double) * (size_t)(B * nin)), *p = malloc(sizeof(double) * (size_t)(B * 2));
    cr_assert(x && p);
    for (int64_t k = 0; k < B * nin; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
    for (int64_t k = 0; k < B * 2; ++k) p[k] = rp_uniform(&s, -2.0, 2.0);
    char name[32];
    snprintf(name, sizeof name, "random program %d", i);
    check_invariance(prog, B, x, p, name);
    free(x), free(p);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* ---- random programs against a dense reference -------------------------------------------------
 * An independent second-order evaluator, written here from the documented formula only: every
 * register carries all n lanes and all n x n components (no pair sets, no slots, no copy elision,
 * no blocking), computed point by point from the rules.  The engine's plan decides which terms
 * are structural zeros and where each component lives; the dense evaluator adds those zero terms
 * instead, which changes nothing but the sign of a zero.  So every value, gradient entry and
 * Hessian entry must be equal as numbers (or NaN in both places). */
#define TMUL(d, t) (((t) == 0.0 && !(fabs(d) <= DBL_MAX)) ? 0.0 : (d) * (t))
#define TT(s, t) ((((s) == 0.0 && !(fabs(t) <= DBL_MAX)) || ((t) == 0.0 && !(fabs(s) <= DBL_MAX))) ? 0.0 : (s) * (t))

static void dense_point(const dual_program *prog, const double *x, const double *pp, double *y,
                        double *g, double *H) {
  const int n = prog->n_in, nact = prog->n_active;
  double *V = calloc((size_t)prog->n_regs + 1, sizeof *V);
  double *T = calloc((size_t)(nact + 1) * (size_t)n + 1, sizeof *T);
  double *Hh = calloc((size_t)(nact + 1) * (size_t)(n * n) + 1, sizeof *Hh);
  double *tt = malloc(sizeof(double) * (size_t)n + 8), *hh = malloc(sizeof(double) * (size_t)(n * n) + 8);
  cr_assert(V && T && Hh && tt && hh);
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), r[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const dual_op_info *info = &dual_op_table[op];
    if (op == DUAL_OP_LDX || op == DUAL_OP_LDP || op == DUAL_OP_LDK) {
      V[dst] = op == DUAL_OP_LDX ? x[r[0]] : (op == DUAL_OP_LDP ? pp[r[0]] : prog->consts[r[0]]);
      if (dst < nact) {
        memset(T + (size_t)dst * n, 0, sizeof(double) * (size_t)n);
        memset(Hh + (size_t)dst * n * n, 0, sizeof(double) * (size_t)(n * n));
        if (op == DUAL_OP_LDX) T[(size_t)dst * n + r[0]] = 1.0;
      }
      continue;
    }
    if (op == DUAL_OP_OUT) {
      y[r[1]] = V[r[0]];
      for (int k = 0; k < n; ++k) g[r[1] * n + k] = r[0] < nact ? T[(size_t)r[0] * n + k] : 0.0;
      for (int k = 0; k < n * n; ++k) H[(size_t)r[1] * n * n + k] = r[0] < nact ? Hh[(size_t)r[0] * n * n + k] : 0.0;
      continue;
    }
    double d[3], dd[3];
    int fl = 0;
    const double a = V[r[0]], b = info->arity > 1 ? V[r[1]] : 0.0, c = info->arity > 2 ? V[r[2]] : 0.0;
    const double val = dual_apply_rule(op, a, b, c, d, &fl);
    dual_apply_rule2(op, a, b, c, val, d, dd);
    if (dst < nact) {
      int act[3];
      for (int i = 0; i < 3; ++i)
        act[i] = i < info->arity && r[i] < nact && !(op == DUAL_OP_SELECT && i == 0);
      const double *Ta = T + (size_t)r[0] * n, *Tb = T + (size_t)r[1] * n;
      if (info->prop == DUAL_PROP_CHOOSE) {
        const int ch = d[0] != 0.0 ? 0 : (d[1] != 0.0 ? 1 : 2);
        for (int k = 0; k < n; ++k) tt[k] = act[ch] ? T[(size_t)r[ch] * n + k] : 0.0;
        for (int k = 0; k < n * n; ++k) hh[k] = act[ch] ? Hh[(size_t)r[ch] * n * n + k] : 0.0;
      } else {
        for (int k = 0; k < n; ++k) {
          tt[k] = -0.0;
          for (int i = 0; i < 3; ++i)
            if (act[i]) tt[k] += TMUL(d[i], T[(size_t)r[i] * n + k]);
        }
        for (int k = 0; k < n; ++k)
          for (int l = k; l < n; ++l) {
            double h = -0.0;
            for (int i = 0; i < 3; ++i)
              if (act[i]) h += TMUL(d[i], Hh[(size_t)r[i] * n * n + k * n + l]);
            if ((info->flags & F_D2AA) && act[0]) h += TMUL(dd[0], TT(Ta[k], Ta[l]));
            if ((info->flags & F_D2BB) && act[1]) h += TMUL(dd[2], TT(Tb[k], Tb[l]));
            if ((info->flags & F_D2AB) && act[0] && act[1])
              h += TMUL(dd[1], -0.0 + TT(Ta[k], Tb[l]) + TT(Tb[k], Ta[l]));
            hh[k * n + l] = hh[l * n + k] = h;
          }
      }
      memcpy(T + (size_t)dst * n, tt, sizeof(double) * (size_t)n);
      memcpy(Hh + (size_t)dst * n * n, hh, sizeof(double) * (size_t)(n * n));
    }
    V[dst] = val;
  }
  free(V), free(T), free(Hh), free(tt), free(hh);
}

static int same_number(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

Test(hessian, random_programs_match_a_dense_reference) {
  int64_t compared = 0;
  for (int i = 0; i < 60; i += rp_sweep_step()) {
    uint64_t s = 0xde05eULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 32), np = 2, m = 2;
    dual_context *ctx = make_ctx(i % 3 == 0 ? 4 : 0, 0); /* width 4: off-diagonal blocks */
    dual_program *prog = rp_random_program(ctx, &s, 50, nin, np, m);
    cr_assert(prog != NULL, "%s", dual_context_last_error(ctx));
    const int64_t B = 40;
    double *x = malloc(sizeof(double) * (size_t)(B * nin)), *p = malloc(sizeof(double) * (size_t)(B * np));
    cr_assert(x && p);
    for (int64_t k = 0; k < B * nin; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
    for (int64_t k = 0; k < B * np; ++k) p[k] = rp_uniform(&s, -2.0, 2.0);
    hess_out o = hess_alloc(B, m, nin, DUAL_HESSIAN_FULL);
    run_hessian(ctx, prog, B, x, p, DUAL_HESSIAN_FULL, &o);
    double *y = malloc(sizeof(double) * m), *g = malloc(sizeof(double) * (size_t)(m * nin));
    double *H = malloc(sizeof(double) * (size_t)(m * nin * nin));
    cr_assert(y && g && H);
    for (int64_t b = 0; b < B; ++b) {
      dense_point(prog, x + b * nin, p + b * np, y, g, H);
      for (int j = 0; j < m; ++j) cr_assert(same_number(o.y[b * m + j], y[j]), "program %d: y", i);
      for (int j = 0; j < m * nin; ++j)
        cr_assert(same_number(o.J[b * m * nin + j], g[j]), "program %d (n = %d), point %lld: J[%d] = %.17g, dense %.17g",
                  i, nin, (long long)b, j, o.J[b * m * nin + j], g[j]);
      for (int j = 0; j < m * nin * nin; ++j)
        cr_assert(same_number(o.H[b * m * nin * nin + j], H[j]),
                  "program %d (n = %d), point %lld: H entry %d = %.17g, dense %.17g", i, nin,
                  (long long)b, j, o.H[b * m * nin * nin + j], H[j]);
      compared += m * (1 + nin + nin * nin);
    }
    free(y), free(g), free(H), free(x), free(p);
    hess_free(&o);
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  cr_log_info("random programs: %lld entries equal to the dense reference", (long long)compared);
}

/* ---- every op through the engine equals its second-order rule ------------------------------- */
/* f = op(x0, x1, x2) with distinct inputs: the components are d2f/dxi dxj = the rule's second
 * partials (times the unit seeds, exactly), so the engine's plumbing (pair sets, entries, slots,
 * terms) must reproduce dual_apply_rule2 bit for bit, also at kinks and singular points. */
Test(hessian, every_op_through_the_engine_equals_its_rule) {
  dual_context *ctx = make_ctx(0, 1);
  static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-300, 1e300, 4.5};
  const int nspecial = (int)(sizeof special / sizeof special[0]);
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (info->spelling[0] == '\0' || info->prop == DUAL_PROP_NONE) continue;
    dual_builder *bl = NULL;
    cr_assert_eq(dual_builder_create(ctx, &bl), DUAL_SUCCESS);
    int32_t in[3], r;
    const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < info->arity; ++k) cr_assert_eq(dual_builder_input(bl, names[k], &in[k]), DUAL_SUCCESS);
    cr_assert_eq(dual_builder_apply(bl, info->spelling, info->arity, in, &r), DUAL_SUCCESS, "%s", info->name);
    cr_assert_eq(dual_builder_output(bl, "f", r), DUAL_SUCCESS);
    dual_program *prog = NULL;
    cr_assert_eq(dual_builder_finish(bl, &prog), DUAL_SUCCESS, "%s: %s", info->name, dual_context_last_error(ctx));
    dual_builder_destroy(&bl);
    const int ar = info->arity;
    const int64_t B = 400;
    double *x = malloc(sizeof(double) * (size_t)(B * ar));
    cr_assert(x);
    uint64_t s = 0x0b5ULL + (uint64_t)op;
    for (int64_t b = 0; b < B; ++b)
      for (int k = 0; k < ar; ++k)
        x[b * ar + k] = b < nspecial * nspecial ? special[(k == 0 ? b : b / nspecial) % nspecial]
                                                : rp_uniform(&s, -3.0, 3.0);
    hess_out o = hess_alloc(B, 1, ar, DUAL_HESSIAN_FULL);
    run_hessian(ctx, prog, B, x, NULL, DUAL_HESSIAN_FULL, &o);
    for (int64_t b = 0; b < B; ++b) {
      const double a = x[b * ar], bb = ar > 1 ? x[b * ar + 1] : 0.0, c = ar > 2 ? x[b * ar + 2] : 0.0;
      double d[3], dd[3];
      int fl = 0;
      const double rv = dual_apply_rule(op, a, bb, c, d, &fl);
      dual_apply_rule2(op, a, bb, c, rv, d, dd);
      /* structurally absent second partials are written as exact zeros */
      const double want[3][3] = {{(info->flags & F_D2AA) ? dd[0] : 0.0, (info->flags & F_D2AB) ? dd[1] : 0.0, 0.0},
                                 {(info->flags & F_D2AB) ? dd[1] : 0.0, (info->flags & F_D2BB) ? dd[2] : 0.0, 0.0},
                                 {0.0, 0.0, 0.0}};
      for (int j = 0; j < ar; ++j)
        for (int k = 0; k < ar; ++k) {
          const double got = o.H[b * ar * ar + j * ar + k];
          cr_assert(memcmp(&got, &want[j][k], sizeof got) == 0 || (got != got && want[j][k] != want[j][k]),
                    "%s at (%.17g, %.17g, %.17g): H[%d][%d] = %.17g, rule %.17g", info->name, a, bb, c,
                    j, k, got, want[j][k]);
        }
    }
    hess_free(&o);
    free(x);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* ---- bad input ------------------------------------------------------------------------------- */
Test(hessian, argument_errors_and_nan_inputs) {
  dual_context *ctx = make_ctx(0, 0);
  dual_program *prog = compile_ok(ctx, "input x[2]\noutput f = x[0] * exp(x[1])\n");
  double x[4] = {1.0, 2.0, NAN, 0.5}, y[2], J[4], H[8], v[4] = {1, 1, 1, 1};
  int32_t st[2];
  cr_assert_eq(dual_hessian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, NULL, 4, DUAL_HESSIAN_FULL, st),
               DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "second-derivative array") != NULL);
  cr_assert_eq(dual_hessian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, H, 4, 7, st), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "layout") != NULL);
  cr_assert_eq(dual_hessian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, H, 3, DUAL_HESSIAN_FULL, st),
               DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_hvp(ctx, prog, 2, x, 2, NULL, 0, NULL, 2, y, 1, J, 2, H, 2, st), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_hvp(ctx, prog, 2, x, 2, NULL, 0, v, 1, y, 1, J, 2, H, 2, st), DUAL_ERR_DIMENSION);
  /* a NaN input flags its point and leaves the other exact */
  cr_assert_eq(dual_hessian(ctx, prog, 2, x, 2, NULL, 0, y, 1, J, 2, H, 4, DUAL_HESSIAN_FULL, st),
               DUAL_SUCCESS);
  cr_assert_eq(st[0], 0);
  cr_assert(st[1] & DUAL_PT_BAD_INPUT);
  const double e2 = exp(2.0);
  const double want[4] = {0.0, e2, e2, e2}; /* f = x0 e^x1: H = [[0, e^x1], [e^x1, x0 e^x1]] */
  for (int k = 0; k < 4; ++k) cr_assert(fabs(H[k] - want[k]) <= 1e-15 * e2, "H[%d] = %.17g", k, H[k]);
  /* NULL y and J are allowed */
  cr_assert_eq(dual_hessian(ctx, prog, 2, x, 2, NULL, 0, NULL, 1, NULL, 2, H, 4, DUAL_HESSIAN_PACKED, st),
               DUAL_SUCCESS);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
