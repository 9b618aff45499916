/*
 * test_gpu_sgrad.c — dual_sgrad and random draws on the GPU against the CPU engine (label `gpu`;
 * every test skips without a device).  The CPU's estimates are checked against closed forms in
 * test_sgrad.c; the GPU runs the same draws (engine/draws.h), sweeps and reduction
 * (engine/sgrad_reduce.h), so its estimates, standard errors and flags must equal the CPU's bit
 * for bit (the acceptance bound is 1e-12 relative): pathwise in forward and reverse mode,
 * antithetic, score function, host arrays over several staging chunks, device arrays; and the
 * draws every other mode sees (eval, Jacobian, Hessian, reverse) at sample 0.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "test_arrays.h"

typedef struct estimate {
  double *f, *g, *se;
  int32_t *st;
} estimate;

/* With `jit`, the context asks for the compiled tier's sgrad kernels (DUAL_TIER_COMPILE and
 * DUAL_KNOB_JIT_SGRAD) and the run must have taken them. */
static estimate run_sgrad_jit(int device, int ad_mode, int jit, const char *src, int64_t B,
                              const double *x, const double *p, int64_t S, int flags) {
  dual_context *ctx = mode_context(device, ad_mode, 0);
  if (jit) {
    cr_assert_eq(dual_context_set_tier(ctx, DUAL_TIER_COMPILE), DUAL_SUCCESS);
    cr_assert_eq(dual_context_set_knob(ctx, DUAL_KNOB_JIT_SGRAD, 1), DUAL_SUCCESS);
  }
  dual_program *prog = compile_ok(ctx, src);
  const int64_t n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  estimate e = {malloc(sizeof(double) * B), malloc(sizeof(double) * B * n), malloc(sizeof(double) * B * n),
                malloc(sizeof(int32_t) * B)};
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, n, p, np, S, 42, flags, e.f, e.g, n, e.se, n, e.st), DUAL_SUCCESS,
               "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_device(ctx), device, "ran on %d: %s", dual_context_last_device(ctx),
               dual_context_last_note(ctx));
  if (jit) cr_assert_eq(dual_context_last_tier(ctx), DUAL_TIER_COMPILE, "%s", dual_context_last_note(ctx));
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return e;
}

static estimate run_sgrad(int device, int ad_mode, const char *src, int64_t B, const double *x,
                          const double *p, int64_t S, int flags) {
  return run_sgrad_jit(device, ad_mode, 0, src, B, x, p, S, flags);
}

static int64_t count_diff(const estimate *a, const estimate *b, int64_t B, int64_t n) {
  int64_t nd = 0;
  for (int64_t i = 0; i < B; ++i) nd += !same_bits(a->f[i], b->f[i]) + (a->st[i] != b->st[i]);
  for (int64_t i = 0; i < B * n; ++i) nd += !same_bits(a->g[i], b->g[i]) + !same_bits(a->se[i], b->se[i]);
  return nd;
}

static void release(estimate *e) { free(e->f), free(e->g), free(e->se), free(e->st); }

static const char *HESS16 =
    "input x[16]\nlet y[16]\nfor i in 0..16 { y[i] = x[i] + 0.1 * normal() }\n"
    "output f = sum(i in 0..15, 100 * (y[i+1] - y[i]^2)^2 + (1 - y[i])^2) + log(sum(i in 0..16, exp(y[i])))\n";

Test(gpu_sgrad, estimates_equal_the_cpu_bitwise) {
  need_gpu();
  static const struct {
    const char *src;
    int n, flags, mode;
    int64_t B, S;
  } cases[] = {
      {"input x\nparam s\noutput f = exp(normal(x, s))\n", 1, 0, DUAL_AD_FORWARD, 3000, 256},
      {"input x\nparam s\noutput f = sin(x + s * normal())\n", 1, DUAL_SGRAD_ANTITHETIC, DUAL_AD_FORWARD, 3000, 256},
      {"input x\nparam s\noutput f = normal(x, s) > 0\n", 1, DUAL_SGRAD_SCORE, DUAL_AD_FORWARD, 3000, 512},
      {"input x\nparam s\noutput f = normal(x, s) > 0\n", 1, DUAL_SGRAD_SCORE, DUAL_AD_REVERSE, 3000, 512},
      {NULL, 16, 0, DUAL_AD_FORWARD, 20000, 64},
      {NULL, 16, DUAL_SGRAD_ANTITHETIC, DUAL_AD_REVERSE, 20000, 64},
      {"input x[40]\noutput f = sum(i in 0..40, sin(x[i] * uniform(0.5, 1.5)) * exp(0.01 * normal(x[i], 0.2)))\n",
       40, 0, DUAL_AD_REVERSE, 5000, 32},
  };
  uint64_t rng = 7;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const int64_t B = cases[k].B, n = cases[k].n;
    const char *src = cases[k].src ? cases[k].src : HESS16;
    double *x = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B, 0.2, 0.8);
    if (k == 0) x[17] = NAN; /* a flagged point */
    estimate c = run_sgrad(DUAL_DEVICE_CPU, cases[k].mode, src, B, x, p, cases[k].S, cases[k].flags);
    estimate g = run_sgrad(DUAL_DEVICE_GPU, cases[k].mode, src, B, x, p, cases[k].S, cases[k].flags);
    const int64_t nd = count_diff(&c, &g, B, n);
    printf("sgrad case %zu (n = %lld, S = %lld, flags %d, mode %d): %lld of %lld entries not bitwise equal\n", k,
           (long long)n, (long long)cases[k].S, cases[k].flags, cases[k].mode, (long long)nd, (long long)(B * (2 + 2 * n)));
    cr_assert_eq(nd, 0);
    if (k == 0) cr_assert(c.st[17] & DUAL_PT_BAD_INPUT);
    release(&c), release(&g), free(x), free(p);
  }
}

/* The compiled tier's sgrad kernels (DUAL_KNOB_JIT_SGRAD under DUAL_TIER_COMPILE), forward mode
 * and reverse mode: pathwise, antithetic and score-function estimates, forward in one pass and
 * several (n = 16: one; n = 40: 16 + 16 + 8), split over sample blocks (small batches, partial
 * last blocks) or a point per thread, bitwise equal to the CPU's in the same AD mode (and so to
 * the interpreter's); reverse mode on the cases that differ in its kernel's shape (score,
 * antithetic, n = 16 and 20, partial last blocks, chunks of a large batch). */
Test(gpu_sgrad, compiled_kernels_equal_the_cpu_bitwise) {
  need_gpu();
  /* the contexts here ask for the compiled tier themselves, so the run of the suite's compile
   * variant is this test's; the interpret variant's would repeat it (minutes of NVRTC) */
  const char *tier = getenv("DUALBATCH_TIER");
  if (tier != NULL && strcmp(tier, "interpret") == 0)
    cr_skip_test("runs in test_gpu_sgrad[compile]: its contexts set the tier themselves");
  static const struct {
    const char *src;
    int n, flags;
    int64_t B, S;
  } cases[] = {
      {"input x\nparam s\noutput f = exp(normal(x, s))\n", 1, 0, 3000, 256},
      {"input x\nparam s\noutput f = sin(x + s * normal())\n", 1, DUAL_SGRAD_ANTITHETIC, 3000, 256},
      {"input x\nparam s\noutput f = normal(x, s) > 0\n", 1, DUAL_SGRAD_SCORE, 3000, 512},
      {NULL, 16, DUAL_SGRAD_ANTITHETIC, 20000, 64},
      {"input x[40]\noutput f = sum(i in 0..40, sin(x[i] * uniform(0.5, 1.5)) * exp(0.01 * normal(x[i], 0.2)))\n",
       40, 0, 5000, 32},
      {"input x[20]\noutput f = sum(i in 0..20, (normal(x[i], 0.5) > 0) * (1 + x[i]^2))\n", 20,
       DUAL_SGRAD_SCORE | DUAL_SGRAD_ANTITHETIC, 5000, 32},
      /* small batches run split over sample blocks (kernels/gpu_run.c): last blocks of 4 units
       * and of 2 pairs; a batch too large to split runs a point per thread */
      {"input x\nparam s\noutput f = sin(x + s * normal())\n", 1, 0, 2000, 100},
      {"input x\nparam s\noutput f = exp(normal(x, s))\n", 1, DUAL_SGRAD_ANTITHETIC, 2000, 36},
      {"input x\nparam s\noutput f = exp(normal(x, s))\n", 1, 0, 300000, 20},
  };
  uint64_t rng = 71;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const int64_t B = cases[k].B, n = cases[k].n;
    const char *src = cases[k].src ? cases[k].src : HESS16;
    double *x = random_array(&rng, B * n, -1.5, 1.5), *p = random_array(&rng, B, 0.2, 0.8);
    x[17] = NAN, x[40] = INFINITY; /* flagged points */
    for (int r = 0; r < 2; ++r) {
      const int ad = r ? DUAL_AD_REVERSE : DUAL_AD_FORWARD;
      if (r && (k <= 1 || k == 4)) continue; /* (compile time: the others cover what they would) */
      estimate c = run_sgrad(DUAL_DEVICE_CPU, ad, src, B, x, p, cases[k].S, cases[k].flags);
      estimate g = run_sgrad_jit(DUAL_DEVICE_GPU, ad, 1, src, B, x, p, cases[k].S, cases[k].flags);
      const int64_t nd = count_diff(&c, &g, B, n);
      printf("compiled sgrad case %zu (n = %lld, S = %lld, flags %d, %s): %lld of %lld entries not bitwise equal\n",
             k, (long long)n, (long long)cases[k].S, cases[k].flags, r ? "reverse" : "forward", (long long)nd,
             (long long)(B * (2 + 2 * n)));
      cr_assert_eq(nd, 0);
      cr_assert(c.st[17 / n] & DUAL_PT_BAD_INPUT);
      release(&c), release(&g);
    }
    free(x), free(p);
  }
}

/* Host arrays over several staging chunks (2^18 points each) and a device-memory batch. */
Test(gpu_sgrad, chunks_and_device_arrays) {
  need_gpu();
  enum { B = 600000, S = 8 };
  static const char *src = "input x[2]\noutput f = x[0] * exp(normal(x[1], 0.3)) + uniform()\n";
  uint64_t rng = 9;
  double *x = random_array(&rng, (int64_t)B * 2, -1, 1);
  estimate c = run_sgrad(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, src, B, x, NULL, S, DUAL_SGRAD_ANTITHETIC);
  estimate g = run_sgrad(DUAL_DEVICE_GPU, DUAL_AD_FORWARD, src, B, x, NULL, S, DUAL_SGRAD_ANTITHETIC);
  int64_t nd = count_diff(&c, &g, B, 2);
#ifdef DUAL_HAVE_CUDA
  dual_context *ctx = mode_context(DUAL_DEVICE_GPU, DUAL_AD_REVERSE, 0);
  dual_program *prog = compile_ok(ctx, src);
  double *dx = to_device(x, sizeof(double) * B * 2), *dy = to_device(NULL, sizeof(double) * B);
  double *dg = to_device(NULL, sizeof(double) * B * 2), *dse = to_device(NULL, sizeof(double) * B * 2);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = 2, b.x_es = 1;
  b.y = dy, b.y_ps = 1, b.y_es = 1;
  b.d = dg, b.d_ps = 2, b.d_cs = 1;
  b.h = dse, b.h_ps = 2, b.h_es = 1;
  b.samples = S, b.seed = 42, b.sgrad_flags = DUAL_SGRAD_ANTITHETIC;
  cr_assert_eq(dual_run(ctx, prog, DUAL_MODE_SGRAD, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  estimate r = {malloc(sizeof(double) * B), malloc(sizeof(double) * B * 2), malloc(sizeof(double) * B * 2),
                malloc(sizeof(int32_t) * B)};
  cr_assert_eq(cudaMemcpy(r.f, dy, sizeof(double) * B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(r.g, dg, sizeof(double) * B * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(r.se, dse, sizeof(double) * B * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  memcpy(r.st, c.st, sizeof(int32_t) * B); /* no status array on the device run */
  int64_t nr = 0; /* reverse against forward: rounding only */
  for (int64_t i = 0; i < (int64_t)B * 2; ++i) nr += !(fabs(r.g[i] - c.g[i]) <= 1e-12 * (1 + fabs(c.g[i])));
  for (int64_t i = 0; i < B; ++i) nr += !same_bits(r.f[i], c.f[i]);
  printf("sgrad host chunks: %lld of %lld entries not bitwise equal; device arrays (reverse mode): %lld beyond 1e-12\n",
         (long long)nd, (long long)B * 6, (long long)nr);
  cr_assert_eq(nr, 0);
  cudaFree(dx), cudaFree(dy), cudaFree(dg), cudaFree(dse);
  release(&r);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
#endif
  cr_assert_eq(nd, 0);
  release(&c), release(&g), free(x);
}

/* Outside dual_sgrad the draws take sample 0 of the context's seed on the GPU too: eval,
 * Jacobian (forward and reverse) and Hessian equal the CPU's, over host chunks. */
Test(gpu_sgrad, draws_in_every_mode) {
  need_gpu();
  enum { B = 70000, N = 3, M = 2 };
  static const char *src = "input x[3]\noutput a = x[0] * normal(x[1], 0.5) + uniform(x[2], 2)\n"
                           "output b = exp(x[2] * normal()) * x[1]\n";
  uint64_t rng = 5;
  double *x = random_array(&rng, B * N, -1, 1);
  double *r[2][3];
  for (int dev = 0; dev < 2; ++dev) {
    for (int k = 0; k < 3; ++k) r[dev][k] = calloc((size_t)B * M * N * N + 1, sizeof(double));
    dual_context *ctx = mode_context(dev ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0);
    cr_assert_eq(dual_context_set_seed(ctx, 77), DUAL_SUCCESS);
    dual_program *prog = compile_ok(ctx, src);
    cr_assert_eq(dual_jacobian(ctx, prog, B, x, N, NULL, 0, r[dev][0], M, r[dev][1], M * N, NULL), DUAL_SUCCESS);
    cr_assert_eq(dual_hessian(ctx, prog, B, x, N, NULL, 0, NULL, 0, NULL, 0, r[dev][2], M * N * N, DUAL_HESSIAN_FULL, NULL),
                 DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    cr_assert_eq(dual_context_last_device(ctx), dev ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU);
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  int64_t nd = 0;
  for (int64_t i = 0; i < (int64_t)B * M; ++i) nd += !same_bits(r[0][0][i], r[1][0][i]);
  for (int64_t i = 0; i < (int64_t)B * M * N; ++i) nd += !same_bits(r[0][1][i], r[1][1][i]);
  for (int64_t i = 0; i < (int64_t)B * M * N * N; ++i) nd += !same_bits(r[0][2][i], r[1][2][i]);
  printf("draws on the GPU (eval, Jacobian, Hessian): %lld entries not bitwise equal\n", (long long)nd);
  cr_assert_eq(nd, 0);
  for (int dev = 0; dev < 2; ++dev)
    for (int k = 0; k < 3; ++k) free(r[dev][k]);
  free(x);
}
