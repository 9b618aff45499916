/*
 * test_bitwise.c — results must be bitwise identical for every width N, block size and thread
 * count (DESIGN.md numerical conventions).  Checked on hundreds of randomly generated programs
 * mixing every op of the table, and on eval vs derivative modes (same values).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "random_program.h"

static uint64_t rng_state;
static double uniform(double lo, double hi) { return rp_uniform(&rng_state, lo, hi); }

#define NIN 7
#define NPAR 2
#define NOUT 3
static dual_program *random_program(dual_context *ctx, int len) {
  dual_program *prog = rp_random_program(ctx, &rng_state, len, NIN, NPAR, NOUT);
  cr_assert_not_null(prog, "%s", dual_context_last_error(ctx));
  return prog;
}

/* Same bits, or NaN in both places (NaN payloads are not specified). */
static void assert_same(const double *a, const double *b, int64_t n, const char *what, int width) {
  for (int64_t i = 0; i < n; ++i) {
    if (isnan(a[i]) && isnan(b[i])) continue;
    cr_assert(memcmp(&a[i], &b[i], sizeof(double)) == 0,
              "%s differs at %lld for width %d: %.17g vs %.17g", what, (long long)i, width, a[i], b[i]);
  }
}

static int64_t finite_nonzero, total_entries; /* guards against a vacuous comparison */

#define B 203 /* not a multiple of any block size: exercises remainder blocks */

static void check_program(dual_context *ctx, const dual_program *prog) {
  double *x = malloc(sizeof(double) * B * NIN), *p = malloc(sizeof(double) * B * NPAR);
  for (int i = 0; i < B * NIN; ++i) x[i] = uniform(-1.5, 1.5);
  for (int i = 0; i < B * NPAR; ++i) p[i] = uniform(-1.5, 1.5);
  x[5] = 0.0; /* kinks and singular points appear too */
  x[11] = 1.0;
  double *y0 = malloc(sizeof(double) * B * NOUT), *j0 = malloc(sizeof(double) * B * NOUT * NIN);
  double *y1 = malloc(sizeof(double) * B * NOUT), *j1 = malloc(sizeof(double) * B * NOUT * NIN);
  int32_t *s0 = malloc(sizeof(int32_t) * B), *s1 = malloc(sizeof(int32_t) * B);
  cr_assert_eq(dual_context_set_width(ctx, 1), 0);
  cr_assert_eq(dual_context_set_threads(ctx, 1), 0);
  cr_assert_eq(dual_jacobian(ctx, prog, B, x, NIN, p, NPAR, y0, NOUT, j0, NOUT * NIN, s0), 0);
  for (int i = 0; i < B * NOUT * NIN; ++i) finite_nonzero += isfinite(j0[i]) && j0[i] != 0.0;
  total_entries += B * NOUT * NIN;
  for (int w = 2; w <= 32; w *= 2) {
    for (int threads = 1; threads <= 2; ++threads) {
      cr_assert_eq(dual_context_set_width(ctx, w), 0);
      cr_assert_eq(dual_context_set_threads(ctx, threads), 0);
      cr_assert_eq(dual_jacobian(ctx, prog, B, x, NIN, p, NPAR, y1, NOUT, j1, NOUT * NIN, s1), 0);
      assert_same(y0, y1, B * NOUT, "value", w);
      assert_same(j0, j1, B * NOUT * NIN, "jacobian", w);
      cr_assert(memcmp(s0, s1, sizeof(int32_t) * B) == 0, "status differs for width %d", w);
    }
  }
  cr_assert_eq(dual_eval(ctx, prog, B, x, NIN, p, NPAR, y1, NOUT, s1), 0);
  assert_same(y0, y1, B * NOUT, "eval value", 0);
  /* JVP along e_3 equals Jacobian column 3 (same arithmetic per direction; a JVP propagates the
   * numerically zero directions the Jacobian skips as structural zeros, so only the sign of a
   * zero may differ). */
  double *v = calloc((size_t)B * NIN, sizeof(double)), *jv = malloc(sizeof(double) * B * NOUT);
  for (int i = 0; i < B; ++i) v[i * NIN + 3] = 1.0;
  cr_assert_eq(dual_jvp(ctx, prog, B, x, NIN, p, NPAR, v, NIN, y1, NOUT, jv, NOUT, s1), 0);
  for (int i = 0; i < B; ++i)
    for (int r = 0; r < NOUT; ++r) {
      double a = j0[(i * NOUT + r) * NIN + 3], c = jv[i * NOUT + r];
      cr_assert(a == c || (isnan(a) && isnan(c)), "jvp vs jacobian column: %.17g vs %.17g", a, c);
    }
  free(x), free(p), free(y0), free(j0), free(y1), free(j1), free(s0), free(s1), free(v), free(jv);
}

Test(bitwise, random_programs_all_widths_threads) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  rng_state = 12345;
  for (int trial = 0; trial < 300; ++trial) {
    dual_program *prog = random_program(ctx, 60 + trial % 40);
    if (trial % rp_sweep_step() == 0) check_program(ctx, prog);
    dual_program_destroy(&prog);
  }
  cr_assert_gt(finite_nonzero, total_entries / 5, "only %lld of %lld derivatives are finite and nonzero",
               (long long)finite_nonzero, (long long)total_entries);
  dual_context_destroy(&ctx);
}

/* A point's result does not depend on where it falls in a block (full or padded last block). */
Test(bitwise, batch_size_and_position_do_not_matter) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  rng_state = 777;
  dual_program *prog = random_program(ctx, 120);
  double *x = malloc(sizeof(double) * B * NIN), *p = malloc(sizeof(double) * B * NPAR);
  for (int i = 0; i < B * NIN; ++i) x[i] = uniform(-1.5, 1.5);
  for (int i = 0; i < B * NPAR; ++i) p[i] = uniform(-1.5, 1.5);
  double *j0 = malloc(sizeof(double) * B * NOUT * NIN), *j1 = malloc(sizeof(double) * B * NOUT * NIN);
  cr_assert_eq(dual_jacobian(ctx, prog, B, x, NIN, p, NPAR, NULL, 0, j0, NOUT * NIN, NULL), 0);
  const int offsets[] = {0, 1, 5, 9, 17, 100, 202}, counts[] = {1, 3, 7, 8, 9, 33, 1};
  for (int w = 1; w <= 32; w *= 2) {
    cr_assert_eq(dual_context_set_width(ctx, w), 0);
    for (int i = 0; i < 7; ++i) {
      int o = offsets[i], c = counts[i];
      cr_assert_eq(dual_jacobian(ctx, prog, c, x + o * NIN, NIN, p + o * NPAR, NPAR, NULL, 0, j1,
                                 NOUT * NIN, NULL), 0);
      assert_same(j0 + o * NOUT * NIN, j1, c * NOUT * NIN, "jacobian (sub-batch)", w);
    }
  }
  free(x), free(p), free(j0), free(j1);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* The benchmark functions (BENCHMARKS.md), every width and thread count, bit for bit. */
static void check_file(const char *path) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile_file(ctx, path, &prog), 0, "%s", dual_context_last_error(ctx));
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog),
            m = dual_program_num_outputs(prog);
  const int64_t pts = 301;
  double *x = malloc(sizeof(double) * (size_t)(pts * n)), *p = malloc(sizeof(double) * (size_t)(pts * (np + 1)));
  for (int64_t i = 0; i < pts * n; ++i) x[i] = uniform(0.5, 1.5);
  for (int64_t i = 0; i < pts * np; ++i) p[i] = uniform(-1, 1);
  size_t nj = (size_t)(pts * m * n);
  double *j0 = malloc(sizeof(double) * nj), *j1 = malloc(sizeof(double) * nj);
  cr_assert_eq(dual_context_set_width(ctx, 1), 0);
  cr_assert_eq(dual_jacobian(ctx, prog, pts, x, n, p, np, NULL, 0, j0, m * n, NULL), 0);
  int64_t nonzero = 0;
  for (size_t i = 0; i < nj; ++i) nonzero += isfinite(j0[i]) && j0[i] != 0.0;
  cr_assert_gt(nonzero, (int64_t)nj / 20, "%s: derivatives are mostly zero", path);
  for (int w = 2; w <= 32; w *= 2)
    for (int t = 1; t <= 2; ++t) {
      cr_assert_eq(dual_context_set_width(ctx, w), 0);
      cr_assert_eq(dual_context_set_threads(ctx, t), 0);
      cr_assert_eq(dual_jacobian(ctx, prog, pts, x, n, p, np, NULL, 0, j1, m * n, NULL), 0);
      assert_same(j0, j1, (int64_t)nj, path, w);
    }
  free(x), free(p), free(j0), free(j1);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(bitwise, benchmark_functions) {
  rng_state = 4242;
  check_file(DUAL_SOURCE_DIR "/bench/programs/ba.db");
  check_file(DUAL_SOURCE_DIR "/bench/programs/kin.db");
  check_file(DUAL_SOURCE_DIR "/bench/programs/hess.db");
}

/* A program with 300 tangent registers live at once takes the small-block variants of the wide
 * kernels (cpu/engine.c); it must give the same bits as width 1. */
Test(bitwise, large_register_files_take_small_blocks) {
  enum { NX = 300 };
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0);
  dual_builder *b = NULL;
  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  int32_t x[NX], t[NX], acc, args[2];
  for (int i = 0; i < NX; ++i) cr_assert_eq(dual_builder_input(b, NULL, &x[i]), 0);
  for (int i = 0; i < NX; ++i) cr_assert_eq(dual_builder_apply(b, "sin", 1, &x[i], &t[i]), 0);
  acc = t[NX - 1];
  for (int i = NX - 2; i >= 0; --i) { /* every t stays live until here */
    args[0] = t[i], args[1] = x[(i * 7) % NX];
    int32_t prod;
    cr_assert_eq(dual_builder_apply(b, "*", 2, args, &prod), 0);
    args[0] = acc, args[1] = prod;
    cr_assert_eq(dual_builder_apply(b, "+", 2, args, &acc), 0);
  }
  cr_assert_eq(dual_builder_output(b, "f", acc), 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_builder_finish(b, &prog), 0, "%s", dual_context_last_error(ctx));
  dual_builder_destroy(&b);
  cr_assert_gt(dual_program_num_active_registers(prog), 256);
  enum { P = 100 };
  double *xs = malloc(sizeof(double) * P * NX), *g0 = malloc(sizeof(double) * P * NX),
         *g1 = malloc(sizeof(double) * P * NX);
  rng_state = 99;
  for (int i = 0; i < P * NX; ++i) xs[i] = uniform(-2, 2);
  cr_assert_eq(dual_context_set_width(ctx, 1), 0);
  cr_assert_eq(dual_gradient(ctx, prog, P, xs, NX, NULL, 0, NULL, g0, NX, NULL), 0);
  for (int w = 8; w <= 32; w *= 2) {
    cr_assert_eq(dual_context_set_width(ctx, w), 0);
    cr_assert_eq(dual_gradient(ctx, prog, P, xs, NX, NULL, 0, NULL, g1, NX, NULL), 0);
    assert_same(g0, g1, P * NX, "gradient (small blocks)", w);
  }
  double ref = cos(xs[NX - 1]); /* d/dx_{NX-1} of t_{NX-1}, plus products that use x_{NX-1} */
  for (int i = 0; i < NX - 1; ++i)
    if ((i * 7) % NX == NX - 1) ref += sin(xs[i]);
  cr_assert_float_eq(g0[NX - 1], ref, 1e-14);
  free(xs), free(g0), free(g1);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
