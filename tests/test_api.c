/*
 * test_api.c — the public evaluation API as a C or Fortran caller meets it: argument and
 * dimension errors with their messages, strided and column-major layouts read without copies,
 * per-point status flags (a bad point never fails the batch), device selection.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

static dual_context *ctx;
static void setup(void) { cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0); }
static void teardown(void) { dual_context_destroy(&ctx); }
TestSuite(api, .init = setup, .fini = teardown);

/* f(x, y; c) = (x*y + c*sin x, log y): J = [[y + c cos x, x], [0, 1/y]] */
static dual_program *prog2(void) {
  dual_builder *b = NULL;
  int32_t x, y, c, t, u, f, g, a[2];
  cr_assert_eq(dual_builder_create(ctx, &b), 0);
  dual_builder_input(b, "x", &x);
  dual_builder_input(b, "y", &y);
  dual_builder_param(b, "c", &c);
  a[0] = x, a[1] = y;
  dual_builder_apply(b, "*", 2, a, &t);
  dual_builder_apply(b, "sin", 1, &x, &u);
  a[0] = c, a[1] = u;
  dual_builder_apply(b, "*", 2, a, &u);
  a[0] = t, a[1] = u;
  dual_builder_apply(b, "+", 2, a, &f);
  dual_builder_apply(b, "log", 1, &y, &g);
  dual_builder_output(b, "f", f);
  dual_builder_output(b, "g", g);
  dual_program *p = NULL;
  cr_assert_eq(dual_builder_finish(b, &p), 0, "%s", dual_context_last_error(ctx));
  dual_builder_destroy(&b);
  return p;
}

/* The library's run-time version is the header's. */
Test(api, version_matches_the_header) {
  cr_assert_eq(dual_version(), DUAL_VERSION_MAJOR * 10000 + DUAL_VERSION_MINOR * 100 + DUAL_VERSION_PATCH);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", DUAL_VERSION_MAJOR, DUAL_VERSION_MINOR, DUAL_VERSION_PATCH);
  cr_assert_str_eq(dual_version_string(), want);
}

Test(api, dimension_and_argument_errors) {
  dual_program *p = prog2();
  double x[4] = {1, 2, 3, 4}, c[2] = {1, 1}, y[4], J[8];
  cr_assert_eq(dual_jacobian(ctx, p, 2, x, 1, c, 1, y, 2, J, 4, NULL), DUAL_ERR_DIMENSION);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "ldx = 1 is smaller than the 2 inputs"),
                     "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_jacobian(ctx, p, 2, x, 2, c, 1, y, 2, J, 3, NULL), DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_jacobian(ctx, p, 2, x, 2, NULL, 1, y, 2, J, 4, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "parameters"));
  cr_assert_eq(dual_jacobian(ctx, p, -1, x, 2, c, 1, y, 2, J, 4, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_gradient(ctx, p, 2, x, 2, c, 1, y, J, 2, NULL), DUAL_ERR_DIMENSION);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "scalar program"));
  cr_assert_eq(dual_eval(ctx, NULL, 2, x, 2, c, 1, y, 2, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_eval(NULL, p, 2, x, 2, c, 1, y, 2, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_eval(ctx, p, 2, x, 2, c, 1, NULL, 2, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_eval(ctx, p, 0, NULL, 2, NULL, 1, NULL, 2, NULL), 0, "empty batch is fine");
  cr_assert_eq(dual_context_set_width(ctx, 3), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_threads(ctx, -2), DUAL_ERR_ARGUMENT);
  dual_batch b;
  dual_batch_init(&b);
  b.count = 2, b.x = x, b.x_ps = INT64_MAX / 2, b.x_es = 1, b.p = c, b.p_ps = 1, b.y = y, b.y_ps = 2, b.y_es = 1;
  cr_assert_eq(dual_run(ctx, p, DUAL_MODE_EVAL, &b), DUAL_ERR_DIMENSION, "stride overflow");
  cr_assert_eq(dual_run(ctx, p, 9, &b), DUAL_ERR_ARGUMENT);
  /* a batch not made by dual_batch_init (size 0), or by another header's (another size) */
  b.x_ps = 2;
  for (int k = 0; k < 2; ++k) {
    b.size = k == 0 ? 0 : (int64_t)sizeof b - 8;
    cr_assert_eq(dual_run(ctx, p, DUAL_MODE_EVAL, &b), DUAL_ERR_ARGUMENT);
    cr_assert(strstr(dual_context_last_error(ctx), "dual_batch_init") != NULL, "%s", dual_context_last_error(ctx));
  }
  dual_batch_init(&b);
  cr_assert(b.size == (int64_t)sizeof b && b.count == 0 && b.x == NULL && b.memory == DUAL_MEMORY_HOST);
  dual_batch_init(NULL); /* harmless */
  cr_assert_str_eq(dual_status_string(DUAL_ERR_DIMENSION), "array dimensions do not match the program");
  cr_assert_str_eq(dual_status_string(12345), "unknown status");
  dual_program_destroy(&p);
}

Test(api, fortran_column_major_layout_via_strides) {
  /* Fortran x(B, n), y(B, m), J(B, m, n): element (b, i) at b + i*B */
  enum { B = 37 };
  dual_program *p = prog2();
  double x[B * 2], c[B], y[B * 2], J[B * 4];
  for (int b = 0; b < B; ++b) x[b] = 0.1 * b, x[B + b] = 1.0 + 0.05 * b, c[b] = 2.0 - 0.01 * b;
  dual_batch bt;
  dual_batch_init(&bt);
  bt.count = B;
  bt.x = x, bt.x_ps = 1, bt.x_es = B;
  bt.p = c, bt.p_ps = 1, bt.p_es = B;
  bt.y = y, bt.y_ps = 1, bt.y_es = B;
  bt.d = J, bt.d_ps = 1, bt.d_rs = B, bt.d_cs = 2 * B;
  cr_assert_eq(dual_run(ctx, p, DUAL_MODE_JACOBIAN, &bt), 0, "%s", dual_context_last_error(ctx));
  for (int b = 0; b < B; ++b) {
    double xv = x[b], yv = x[B + b], cv = c[b];
    cr_assert_float_eq(y[b], xv * yv + cv * sin(xv), 1e-15);
    cr_assert_float_eq(y[B + b], log(yv), 1e-15);
    cr_assert_float_eq(J[b], yv + cv * cos(xv), 1e-15);       /* (0,0) */
    cr_assert_float_eq(J[2 * B + b], xv, 1e-15);              /* (0,1) */
    cr_assert_eq(J[B + b], 0.0);                              /* (1,0) */
    cr_assert_float_eq(J[3 * B + b], 1.0 / yv, 1e-15);        /* (1,1) */
  }
  dual_program_destroy(&p);
}

Test(api, bad_points_are_flagged_not_fatal) {
  dual_program *p = prog2();
  double x[8] = {1, 2, NAN, 1, 1, -1, 1, 0}, c[4] = {1, 1, 1, 1}, y[8], J[16];
  int32_t st[4];
  cr_assert_eq(dual_jacobian(ctx, p, 4, x, 2, c, 1, y, 2, J, 4, st), 0);
  cr_assert_eq(st[0], 0);
  cr_assert(st[1] & DUAL_PT_BAD_INPUT);
  cr_assert(st[1] & DUAL_PT_NAN);
  cr_assert(st[2] & DUAL_PT_DOMAIN, "log(-1)");
  cr_assert(st[3] & DUAL_PT_SINGULAR, "log(0)");
  cr_assert(st[3] & DUAL_PT_INF);
  cr_assert_float_eq(y[0], 2.0 + sin(1.0), 1e-15, "good point computed");
  /* eval: log(0) is a value -inf, not a singular derivative */
  cr_assert_eq(dual_eval(ctx, p, 4, x, 2, c, 1, y, 2, st), 0);
  cr_assert_eq(st[3] & DUAL_PT_SINGULAR, 0);
  cr_assert(st[3] & DUAL_PT_INF);
  dual_program_destroy(&p);
}

Test(api, jvp_and_gradient_match_hand_derivatives) {
  dual_program *p = prog2();
  double x[2] = {0.7, 1.3}, c = 0.4, v[2] = {0.25, -2.0}, y[2], jv[2];
  cr_assert_eq(dual_jvp(ctx, p, 1, x, 2, &c, 1, v, 2, y, 2, jv, 2, NULL), 0);
  cr_assert_float_eq(jv[0], (1.3 + 0.4 * cos(0.7)) * 0.25 + 0.7 * -2.0, 1e-15);
  cr_assert_float_eq(jv[1], -2.0 / 1.3, 1e-15);
  dual_program_destroy(&p);
}

Test(api, device_selection) {
  dual_context *c2 = NULL;
  int st = dual_context_create(&c2, DUAL_DEVICE_AUTO);
  cr_assert_eq(st, 0);
  /* AUTO takes the GPU exactly when one is usable */
  cr_assert_eq(dual_context_device(c2), dual_device_count() > 0 ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU);
  dual_context_destroy(&c2);
  setenv("DUALBATCH_DEVICE", "banana", 1);
  cr_assert_eq(dual_context_create(&c2, DUAL_DEVICE_AUTO), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(c2), "banana"));
  dual_context_destroy(&c2);
  setenv("DUALBATCH_DEVICE", "cpu", 1);
  cr_assert_eq(dual_context_create(&c2, DUAL_DEVICE_GPU), 0, "env overrides the argument");
  dual_context_destroy(&c2);
  unsetenv("DUALBATCH_DEVICE");
  char info[512];
  cr_assert_gt(dual_build_info(info, sizeof info), 0);
  cr_assert_not_null(strstr(info, "CUDA"));
}

/* Tuning knobs: defaults, the environment read once at creation, the setter's range checks, the
 * tier setter; and a knob changes no result (nested diagonal Hessian blocks, bitwise). */
Test(api, knobs_tier_and_their_environment) {
  dual_context *c = NULL;
  cr_assert_eq(dual_context_create(&c, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_GPU_GROUP), 0);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_MIN_BLOCKS), -1);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_HESSIAN_NESTED), 0);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_SECOND), 1, "compiled second order by default");
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_SECOND, 2), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_REVERSE), 1, "compiled reverse mode by default");
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_REVERSE, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_SGRAD), 1, "compiled dual_sgrad by default");
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_SGRAD, 2), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(c), "DUALBATCH_JIT_SGRAD") != NULL, "%s", dual_context_last_error(c));
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_SGRAD, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_GPU_GROUP, 3), DUAL_ERR_ARGUMENT, "3 threads per point");
  cr_assert(strstr(dual_context_last_error(c), "DUALBATCH_GPU_GROUP") != NULL, "%s", dual_context_last_error(c));
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_WIDTH, 33), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_LOADS_AHEAD), 1, "loads ahead by default");
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_LOADS_AHEAD, 9), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_LOADS_AHEAD, 8), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_JIT_LOADS_AHEAD, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_JIT_LOADS_AHEAD), 0);
  const char *after = getenv("DUALBATCH_CPU_JIT_AFTER_MS"); /* (the suite's compiled-tier parameter sets it) */
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_CPU_JIT_AFTER_MS), after != NULL ? atoi(after) : 1000,
               "a second of interpreter time by default");
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_CPU_JIT_AFTER_MS, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_CPU_JIT_AFTER_MS, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_COUNT, 0), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_knob(c, DUAL_KNOB_GPU_GROUP, 4), DUAL_SUCCESS);
  cr_assert_eq(dual_context_knob(c, DUAL_KNOB_GPU_GROUP), 4);
  cr_assert_eq(dual_context_set_tier(c, 7), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_tier(c, DUAL_TIER_COMPILE), DUAL_SUCCESS);
  cr_assert_eq(dual_context_last_tier(c), DUAL_TIER_INTERPRET);

  setenv("DUALBATCH_GPU_GROUP", "8", 1);
  setenv("DUALBATCH_GPU_REGFILE", "shared", 1);
  setenv("DUALBATCH_HESSIAN_BLOCKS", "nested", 1);
  setenv("DUALBATCH_JIT_WIDTH", "99", 1); /* out of range: the default stays */
  setenv("DUALBATCH_JIT_REVERSE", "0", 1);
  setenv("DUALBATCH_JIT_SGRAD", "0", 1);
  dual_context *e = NULL;
  cr_assert_eq(dual_context_create(&e, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  unsetenv("DUALBATCH_GPU_GROUP"), unsetenv("DUALBATCH_GPU_REGFILE");
  unsetenv("DUALBATCH_HESSIAN_BLOCKS"), unsetenv("DUALBATCH_JIT_WIDTH");
  unsetenv("DUALBATCH_JIT_REVERSE");
  unsetenv("DUALBATCH_JIT_SGRAD");
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_JIT_SGRAD), 0, "DUALBATCH_JIT_SGRAD=0, read at creation");
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_GPU_GROUP), 8);
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_JIT_REVERSE), 0);
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_GPU_REGFILE), 1);
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_HESSIAN_NESTED), 1);
  cr_assert_eq(dual_context_knob(e, DUAL_KNOB_JIT_WIDTH), 0);

  /* f = x0^2 x1 + sin(x0 x1) + x1^3: its Hessian with and without nested diagonal blocks */
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(c, "input x[2]\noutput f = x[0]^2*x[1] + sin(x[0]*x[1]) + x[1]^3\n",
                                    "knob", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(c));
  const double x[4] = {0.7, -1.3, 2.0, 0.25};
  double f[2][2], g[2][4], h[2][8];
  dual_context *ctxs[2] = {c, e};
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(dual_context_set_ad_mode(ctxs[k], DUAL_AD_FORWARD), DUAL_SUCCESS);
    cr_assert_eq(dual_hessian(ctxs[k], prog, 2, x, 2, NULL, 0, f[k], 1, g[k], 2, h[k], 4,
                              DUAL_HESSIAN_FULL, NULL), DUAL_SUCCESS, "%s", dual_context_last_error(ctxs[k]));
  }
  cr_assert(memcmp(h[0], h[1], sizeof h[0]) == 0 && memcmp(g[0], g[1], sizeof g[0]) == 0,
            "a knob changed a result");
  /* and the Hessian itself, by hand: d2f/dx0^2 = 2 x1 - x1^2 sin(x0 x1), ... at the first point */
  const double a = x[0], b = x[1], s = sin(a * b), co = cos(a * b);
  cr_assert_float_eq(h[0][0], 2 * b - b * b * s, 1e-13);
  cr_assert_float_eq(h[0][1], 2 * a + co - a * b * s, 1e-13);
  cr_assert_float_eq(h[0][3], -a * a * s + 6 * b, 1e-13);
  dual_program_destroy(&prog);
  dual_context_destroy(&c);
  dual_context_destroy(&e);
}
