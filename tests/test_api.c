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
  /* a CPU context has no GPU to choose, and says which device it is on */
  cr_assert_eq(dual_context_gpu(c2), -1);
  cr_assert_eq(dual_context_set_gpu(c2, 0), DUAL_ERR_NO_DEVICE);
  cr_assert_not_null(strstr(dual_context_last_error(c2), "runs on the CPU"), "%s", dual_context_last_error(c2));
  dual_context_destroy(&c2);
  cr_assert_eq(dual_context_set_gpu(NULL, 0), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_gpu(NULL), -1);
  /* several GPUs: the list checked first, then the context's device */
  cr_assert_eq(dual_context_create(&c2, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  const int two[2] = {0, 1}, twice[2] = {1, 1}, seventeen[17] = {0};
  cr_assert_eq(dual_context_set_gpus(c2, 2, twice), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(c2), "listed twice"), "%s", dual_context_last_error(c2));
  cr_assert_eq(dual_context_set_gpus(c2, 0, two), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_gpus(c2, 17, seventeen), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_gpus(c2, 2, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_gpus(c2, 2, two), DUAL_ERR_NO_DEVICE);
  int got[4] = {-7, -7, -7, -7};
  cr_assert_eq(dual_context_gpus(c2, got, 4), 0);
  cr_assert_eq(got[0], -7, "nothing written for a CPU context");
  dual_context_destroy(&c2);
  cr_assert_eq(dual_context_set_gpus(NULL, 2, two), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_gpus(NULL, got, 4), 0);
  /* gpu:N names a device: N decimal digits and nothing else */
  static const char *bad[] = {"gpu:", "gpu:x", "gpu:-1", "gpu:1x", "gpu: 1", "gpu:99999", "gpu1",
                              "gpu:0,", "gpu:0,,1", "gpu:0;1", "gpu:0,x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    setenv("DUALBATCH_DEVICE", bad[i], 1);
    cr_assert_eq(dual_context_create(&c2, DUAL_DEVICE_AUTO), DUAL_ERR_ARGUMENT, "%s", bad[i]);
    cr_assert_not_null(strstr(dual_context_last_error(c2), "gpu:N"), "%s", dual_context_last_error(c2));
    cr_assert_eq(dual_context_device(c2), DUAL_DEVICE_CPU);
    dual_context_destroy(&c2);
  }
  /* a device past the last one (every one, without a GPU): NO_DEVICE and a CPU context */
  static const char *past[] = {"gpu:4000", "gpu:0,4000"};
  for (int i = 0; i < 2; ++i) {
    setenv("DUALBATCH_DEVICE", past[i], 1);
    cr_assert_eq(dual_context_create(&c2, DUAL_DEVICE_AUTO), DUAL_ERR_NO_DEVICE, "%s", past[i]);
    cr_assert_eq(dual_context_device(c2), DUAL_DEVICE_CPU);
    cr_assert_eq(dual_context_gpu(c2), -1);
    cr_assert_eq(dual_context_gpus(c2, NULL, 0), 0);
    dual_context_destroy(&c2);
  }
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

/* Issue 22: every function that takes a context treats a NULL one the same way — it returns
 * DUAL_ERR_ARGUMENT and leaves its output pointers NULL (compile, load and builder_create took
 * NULL, builder_create even returned success); getters return their documented neutral values. */
Test(api, a_null_context_is_an_argument_error_everywhere) {
  const int A = DUAL_ERR_ARGUMENT;
  dual_program *p = prog2(), *q = (dual_program *)&q;
  double x[2] = {0.5, 2.0}, c = 1.0, v[2] = {1, 0}, y[2], d[8], h[16];
  int32_t st[1], info[1], iters[1];
  int64_t n64 = 0;
  char buf[64];
  cr_assert_eq(dual_program_compile(NULL, "input x\noutput y = x\n", NULL, &q), A);
  cr_assert_null(q);
  q = (dual_program *)&q;
  cr_assert_eq(dual_program_compile_file(NULL, "/nonexistent", &q), A);
  cr_assert_null(q);
  cr_assert_eq(dual_program_save(NULL, p, NULL, 0, &n64), A);
  cr_assert_eq(dual_program_save_file(NULL, p, "/tmp/never-written.dbc"), A);
  q = (dual_program *)&q;
  cr_assert_eq(dual_program_load(NULL, "DUALBC", 6, &q), A);
  cr_assert_null(q);
  q = (dual_program *)&q;
  cr_assert_eq(dual_program_load_file(NULL, "/nonexistent", &q), A);
  cr_assert_null(q);
  dual_builder *b = (dual_builder *)&b;
  cr_assert_eq(dual_builder_create(NULL, &b), A);
  cr_assert_null(b);
  cr_assert_eq(dual_eval(NULL, p, 1, x, 2, &c, 1, y, 2, st), A);
  cr_assert_eq(dual_jvp(NULL, p, 1, x, 2, &c, 1, v, 2, y, 2, d, 2, st), A);
  cr_assert_eq(dual_jacobian(NULL, p, 1, x, 2, &c, 1, y, 2, d, 4, st), A);
  cr_assert_eq(dual_gradient(NULL, p, 1, x, 2, &c, 1, y, d, 2, st), A);
  cr_assert_eq(dual_hessian(NULL, p, 1, x, 2, &c, 1, y, 2, d, 4, h, 8, DUAL_HESSIAN_FULL, st), A);
  cr_assert_eq(dual_hvp(NULL, p, 1, x, 2, &c, 1, v, 2, y, 2, d, 4, h, 4, st), A);
  cr_assert_eq(dual_vjp(NULL, p, 1, x, 2, &c, 1, v, 2, y, 2, d, 2, st), A);
  cr_assert_eq(dual_sgrad(NULL, p, 1, x, 2, &c, 1, 4, 0, 0, y, d, 2, NULL, 0, st), A);
  dual_batch batch;
  dual_batch_init(&batch);
  batch.count = 1, batch.x = x, batch.x_ps = 2, batch.x_es = 1, batch.p = &c, batch.p_ps = 1;
  batch.p_es = 1, batch.y = y, batch.y_ps = 2, batch.y_es = 1;
  cr_assert_eq(dual_run(NULL, p, DUAL_MODE_EVAL, &batch), A);
  cr_assert_eq(dual_newton(NULL, p, NULL, 1, x, 2, &c, 1, info, iters, y), A);
  cr_assert_eq(dual_lsq(NULL, p, NULL, 1, x, 2, &c, 1, info, iters, y), A);
  cr_assert_eq(dual_context_calibrate(NULL, buf, sizeof buf), A);
  cr_assert_eq(dual_context_set_stream(NULL, NULL), A);
  cr_assert_eq(dual_host_pin(NULL, &(double){0}, 8), A);
  cr_assert_eq(dual_host_unpin(NULL, &(double){0}), A);
  cr_assert_eq(dual_context_set_memory_limit(NULL, 0), A);
  cr_assert_eq(dual_context_set_threads(NULL, 1), A);
  cr_assert_eq(dual_context_set_width(NULL, 1), A);
  cr_assert_eq(dual_context_set_ad_mode(NULL, DUAL_AD_AUTO), A);
  cr_assert_eq(dual_context_set_tier(NULL, DUAL_TIER_AUTO), A);
  cr_assert_eq(dual_context_set_cache_dir(NULL, "/tmp"), A);
  cr_assert_eq(dual_context_cache_usage(NULL, buf, sizeof buf, &n64, &n64), A);
  cr_assert_eq(dual_context_cache_clear(NULL, &n64), A);
  cr_assert_eq(dual_context_set_knob(NULL, DUAL_KNOB_DISPATCH, 0), A);
  cr_assert_eq(dual_context_set_seed(NULL, 1), A);
  int64_t g = 7, cpu = 7;
  cr_assert_eq(dual_context_last_split(NULL, &g, &cpu), A);
  /* the getters: neutral values, no crash */
  cr_assert_eq(dual_context_knob(NULL, DUAL_KNOB_DISPATCH), 0);
  cr_assert_str_eq(dual_context_last_note(NULL), "");
  cr_assert_not_null(dual_context_last_error(NULL));
  cr_assert_eq(dual_context_last_ad_mode(NULL), DUAL_AD_FORWARD);
  cr_assert_eq(dual_context_last_tier(NULL), DUAL_TIER_INTERPRET);
  cr_assert_eq(dual_context_device(NULL), DUAL_DEVICE_CPU);
  cr_assert_eq(dual_context_last_device(NULL), DUAL_DEVICE_CPU);
  cr_assert_str_eq(dual_context_last_error(NULL), "no context");
  dual_context *none = NULL;
  dual_context_destroy(&none);
  dual_context_destroy(NULL);
  dual_program_destroy(&p);
}

/* Issue 22: a memory limit below one block of points per thread was taken as no limit (the
 * reverse-mode budget divided down to 0, which means unbounded). */
Test(api, memory_limits_below_the_minimum_are_argument_errors) {
  for (int64_t bytes = 1; bytes < DUAL_MEMORY_LIMIT_MIN; bytes = bytes * 2 + 1)
    cr_assert_eq(dual_context_set_memory_limit(ctx, bytes), DUAL_ERR_ARGUMENT, "%lld", (long long)bytes);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "at least 1024 bytes"), "%s",
                     dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_memory_limit(ctx, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_memory_limit(ctx, 0), DUAL_SUCCESS);
  /* the smallest limit over 16 threads leaves each 64 bytes, under one block of 16 points */
  cr_assert_eq(dual_context_set_memory_limit(ctx, DUAL_MEMORY_LIMIT_MIN), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx, 16), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_tier(ctx, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  dual_program *p = prog2();
  enum { B = 256 };
  double *x = calloc(2 * B, sizeof(double)), *y = calloc(2 * B, sizeof(double)),
         *J = calloc(4 * B, sizeof(double)), c[B];
  for (int k = 0; k < 2 * B; ++k) x[k] = 1.0 + 0.01 * k;
  for (int k = 0; k < B; ++k) c[k] = 1.0;
  cr_assert_eq(dual_jacobian(ctx, p, B, x, 2, c, 1, y, 2, J, 4, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "less than one block"), "%s",
                     dual_context_last_error(ctx));
  /* with the default limit the same call runs, and J matches the hand formulas */
  cr_assert_eq(dual_context_set_memory_limit(ctx, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_jacobian(ctx, p, B, x, 2, c, 1, y, 2, J, 4, NULL), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  for (int k = 0; k < B; ++k) {
    const double a = x[2 * k], e = x[2 * k + 1];
    cr_assert_float_eq(J[4 * k + 0], e + cos(a), 1e-14);
    cr_assert_float_eq(J[4 * k + 1], a, 1e-14);
    cr_assert_eq(J[4 * k + 2], 0.0);
    cr_assert_float_eq(J[4 * k + 3], 1.0 / e, 1e-14);
  }
  free(x), free(y), free(J);
  dual_program_destroy(&p);
}

/* dual_host_pin on a CPU context: nothing to speed up, so nothing is locked and both calls
 * succeed (unpinning what was never pinned too); the arguments are still checked. */
Test(api, host_pin_on_the_cpu_does_nothing_and_checks_its_arguments) {
  dual_context *cpu = NULL;
  cr_assert_eq(dual_context_create(&cpu, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  double a[64] = {0};
  cr_assert_eq(dual_host_pin(cpu, a, sizeof a), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  cr_assert_eq(dual_host_pin(cpu, a, sizeof a), DUAL_SUCCESS, "twice: still nothing locked");
  cr_assert_eq(dual_host_unpin(cpu, a), DUAL_SUCCESS);
  cr_assert_eq(dual_host_unpin(cpu, a + 1), DUAL_SUCCESS);
  cr_assert_eq(dual_host_pin(cpu, NULL, 8), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(cpu), "NULL pointer"), "%s", dual_context_last_error(cpu));
  cr_assert_eq(dual_host_pin(cpu, a, 0), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(cpu), "below 1 byte"), "%s", dual_context_last_error(cpu));
  cr_assert_eq(dual_host_pin(cpu, a, -8), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_host_unpin(cpu, NULL), DUAL_ERR_ARGUMENT);
  dual_context_destroy(&cpu);
}
