/*
 * test_gpu_reverse_hvp.c — forward-over-reverse Hessians and HVPs on the GPU against the CPU
 * engine (label `gpu`; every test skips without a device).  The CPU's forward-over-reverse is
 * checked against hand-derived Hessians and nested forward mode in test_reverse_hvp.c; both
 * engines run the same pair sweeps (engine/interp_rev.h) and plan, so the GPU's values,
 * gradients, Hessian entries and flags must equal the CPU's bit for bit (NaN with NaN): on random
 * programs in both Hessian layouts, on the benchmark functions with host and device arrays, and
 * with checkpointed segments and chunks forced by small memory limits.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_program.h"
#include "dualbatch.h"
#include "random_program.h"
#include "test_arrays.h"

/* One second-order evaluation with host arrays: an HVP (v != NULL) or a Hessian in `layout`;
 * the gradients are asked for when `grad`. */
typedef struct for_result {
  int64_t B, m, n, len;
  double *y, *d, *h;
  int32_t *st;
} for_result;

static int for_call(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                    const double *p, const double *v, int layout, int grad, for_result *r) {
  r->B = B, r->n = dual_program_num_inputs(prog), r->m = dual_program_num_outputs(prog);
  const int64_t n = r->n, m = r->m, np = dual_program_num_params(prog);
  r->len = v != NULL ? n : layout == DUAL_HESSIAN_PACKED ? n * (n + 1) / 2 : n * n;
  r->y = calloc((size_t)(B * m + 1), sizeof(double));
  r->d = grad ? calloc((size_t)(B * m * n + 1), sizeof(double)) : NULL;
  r->h = calloc((size_t)(B * m * r->len + 1), sizeof(double));
  r->st = calloc((size_t)(B + 1), sizeof(int32_t));
  cr_assert(r->y && r->h && r->st && (r->d || !grad));
  if (v != NULL)
    return dual_hvp(ctx, prog, B, x, n, p, np, v, n, r->y, m, r->d, m * n, r->h, m * n, r->st);
  return dual_hessian(ctx, prog, B, x, n, p, np, r->y, m, r->d, m * n, r->h, m * r->len, layout, r->st);
}

static for_result run(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                      const double *p, const double *v, int layout, int grad) {
  for_result r;
  const int rc = for_call(ctx, prog, B, x, p, v, layout, grad, &r);
  cr_assert_eq(rc, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_REVERSE);
  return r;
}

static void release(for_result *r) { free(r->y), free(r->d), free(r->h), free(r->st); }

/* Entries that differ (NaN equals NaN); status words compared exactly. */
static int64_t count_diff(const for_result *a, const for_result *b) {
  int64_t nd = 0;
  for (int64_t i = 0; i < a->B * a->m; ++i) nd += !same_bits(a->y[i], b->y[i]);
  for (int64_t i = 0; a->d != NULL && i < a->B * a->m * a->n; ++i) nd += !same_bits(a->d[i], b->d[i]);
  for (int64_t i = 0; i < a->B * a->m * a->len; ++i) nd += !same_bits(a->h[i], b->h[i]);
  for (int64_t i = 0; i < a->B; ++i) nd += a->st[i] != b->st[i];
  return nd;
}

static int64_t entries(const for_result *a) {
  return a->B * (a->m + (a->d != NULL ? a->m * a->n : 0) + a->m * a->len + 1);
}

Test(gpu_reverse_hvp, random_programs_equal_the_cpu_bitwise) {
  need_gpu();
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  int64_t diff = 0, total = 0;
  for (int i = 0; i < 60; i += rp_sweep_step()) {
    uint64_t s = 0x4f0ULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 12), m = 1 + rp_pick(&s, 3), np = 2;
    dual_program *prog = rp_random_program(cpu, &s, 40, nin, np, m);
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 500;
    double *x = random_array(&s, B * nin, -3.0, 3.0), *p = random_array(&s, B * np, -2.0, 2.0);
    double *v = random_array(&s, B * nin, -1.0, 1.0);
    for (int k = 0; k < 10; ++k) x[rp_pick(&s, (int)(B * nin))] = (double)(rp_pick(&s, 5) - 2);
    for (int kind = 0; kind < 3; ++kind) { /* HVP, full Hessian with J, packed without */
      const double *vv = kind == 0 ? v : NULL;
      const int layout = kind == 2 ? DUAL_HESSIAN_PACKED : DUAL_HESSIAN_FULL, grad = kind < 2;
      for_result a = run(cpu, prog, B, x, p, vv, layout, grad), b = run(gpu, prog, B, x, p, vv, layout, grad);
      cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
      diff += count_diff(&a, &b), total += entries(&a);
      release(&a), release(&b);
    }
    free(x), free(p), free(v);
    dual_program_destroy(&prog);
  }
  cr_log_info("random programs (forward-over-reverse): %lld of %lld entries not bitwise equal",
              (long long)diff, (long long)total);
  cr_assert_eq(diff, 0);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* hess's Hessian and HVP, grad's HVP (n = 1024): host arrays, then grad's HVP with device arrays
 * in place and with host arrays in chunks under a small memory limit. */
Test(gpu_reverse_hvp, benchmark_functions_equal_the_cpu_bitwise) {
  need_gpu();
#ifdef DUAL_HAVE_CUDA
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  dual_program *hess = bench_program(cpu, "hess"), *grad = bench_program(cpu, "grad");
  uint64_t s = 0x77aULL;
  {
    const int64_t B = 20000, n = dual_program_num_inputs(hess), np = dual_program_num_params(hess);
    double *x = random_array(&s, B * n, 0.5, 1.5), *p = random_array(&s, B * np + 1, 0.5, 1.5);
    double *v = random_array(&s, B * n, -1.0, 1.0);
    for_result a = run(cpu, hess, B, x, p, NULL, DUAL_HESSIAN_FULL, 1);
    for_result b = run(gpu, hess, B, x, p, NULL, DUAL_HESSIAN_FULL, 1);
    for_result c = run(cpu, hess, B, x, p, v, 0, 1), d = run(gpu, hess, B, x, p, v, 0, 1);
    const int64_t nh = count_diff(&a, &b), nv = count_diff(&c, &d);
    cr_log_info("hess: Hessian %lld, HVP %lld entries not bitwise equal", (long long)nh, (long long)nv);
    cr_expect_eq(nh + nv, 0);
    release(&a), release(&b), release(&c), release(&d);
    free(x), free(p), free(v);
  }
  const int64_t B = 3000, n = 1024;
  double *x = random_array(&s, B * n, -2.0, 2.0), *v = random_array(&s, B * n, -1.0, 1.0);
  for_result a = run(cpu, grad, B, x, NULL, v, 0, 1), b = run(gpu, grad, B, x, NULL, v, 0, 1);
  const int64_t host = count_diff(&a, &b);
  release(&b);
  const size_t bytes = sizeof(double) * (size_t)(B * n);
  double *dx = to_device(x, bytes), *dv = to_device(v, bytes), *dy = to_device(NULL, sizeof(double) * (size_t)B);
  double *dg = to_device(NULL, bytes), *dh = to_device(NULL, bytes);
  int32_t *dst = to_device(NULL, sizeof(int32_t) * (size_t)B);
  dual_batch bt;
  dual_batch_init(&bt);
  bt.count = B, bt.memory = DUAL_MEMORY_DEVICE;
  bt.x = dx, bt.x_ps = n, bt.x_es = 1;
  bt.v = dv, bt.v_ps = n, bt.v_es = 1;
  bt.y = dy, bt.y_ps = 1, bt.y_es = 1;
  bt.d = dg, bt.d_ps = n, bt.d_rs = n, bt.d_cs = 1;
  bt.h = dh, bt.h_ps = n, bt.h_rs = n, bt.h_es = 1;
  bt.status = dst;
  cr_assert_eq(dual_run(gpu, grad, DUAL_MODE_HVP, &bt), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  cr_assert_eq(dual_context_last_ad_mode(gpu), DUAL_AD_REVERSE);
  for_result c = a; /* the same shape, filled from the device */
  c.y = malloc(sizeof(double) * (size_t)B), c.d = malloc(bytes), c.h = malloc(bytes);
  c.st = malloc(sizeof(int32_t) * (size_t)B);
  cr_assert_eq(cudaMemcpy(c.y, dy, sizeof(double) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(c.d, dg, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(c.h, dh, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(c.st, dst, sizeof(int32_t) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  const int64_t device = count_diff(&a, &c);
  cr_assert_eq(dual_context_set_memory_limit(gpu, 160 << 20), DUAL_SUCCESS);
  for_result e = run(gpu, grad, B, x, NULL, v, 0, 1);
  const int64_t chunked = count_diff(&a, &e);
  cr_log_info("grad HVP: host %lld, device %lld, chunked host %lld entries not bitwise equal",
              (long long)host, (long long)device, (long long)chunked);
  cr_assert_eq(host + device + chunked, 0);
  cudaFree(dx), cudaFree(dv), cudaFree(dy), cudaFree(dg), cudaFree(dh), cudaFree(dst);
  release(&a), release(&c), release(&e);
  free(x), free(v);
  dual_program_destroy(&hess), dual_program_destroy(&grad);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
#endif
}

/* Limits falling in steps of 10% until none fits: every Hessian and HVP the GPU checkpoints (its
 * note says so) equals the CPU's whole-tape result; the last limit is refused with a clear error. */
Test(gpu_reverse_hvp, checkpointed_segments_equal_the_cpu) {
  need_gpu();
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU);
  int64_t runs = 0, diff = 0;
  int most = 0;
  const int step = rp_sweep_step(); /* every step-th program under DUALBATCH_TEST_SWEEP_DIV */
  for (int i = 0; i < 6; i += step) {
    uint64_t s = 0x3c1ULL + (uint64_t)i;
    const int nin = 2 + rp_pick(&s, 6), m = 1 + rp_pick(&s, 2);
    dual_program *prog = rp_chain_program(cpu, &s, nin, m, 100 + rp_pick(&s, 300));
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 400;
    double *x = random_array(&s, B * nin, -2.0, 2.0), *v = random_array(&s, B * nin, -1.0, 1.0);
    for_result a = run(cpu, prog, B, x, NULL, NULL, DUAL_HESSIAN_FULL, 1);
    for_result av = run(cpu, prog, B, x, NULL, v, 0, 1);
    const double regs = dual_program_num_registers(prog), ni = (double)dual_program_num_instructions(prog);
    for (double lim = 128.0 * 8.0 * (6 * regs + 8 * ni) + (1 << 20);; lim *= 0.9) {
      dual_context *gpu = reverse_context(DUAL_DEVICE_GPU); /* fresh: the limit binds the whole pool */
      cr_assert_eq(dual_context_set_memory_limit(gpu, (int64_t)lim), DUAL_SUCCESS);
      for_result probe;
      const int rc = for_call(gpu, prog, 1, x, NULL, v, 0, 1, &probe);
      release(&probe);
      if (rc != DUAL_SUCCESS) {
        cr_assert_eq(rc, DUAL_ERR_NO_MEMORY, "%s", dual_context_last_error(gpu));
        cr_assert(strstr(dual_context_last_error(gpu), "memory limit") != NULL, "%s",
                  dual_context_last_error(gpu));
        dual_context_destroy(&gpu);
        break;
      }
      const char *note = strstr(dual_context_last_note(gpu), "ran in ");
      if (note != NULL) {
        const int nseg = atoi(note + 7);
        most = nseg > most ? nseg : most;
        for_result b = run(gpu, prog, B, x, NULL, NULL, DUAL_HESSIAN_FULL, 1);
        for_result bv = run(gpu, prog, B, x, NULL, v, 0, 1);
        diff += count_diff(&a, &b) + count_diff(&av, &bv), ++runs;
        release(&b), release(&bv);
      }
      dual_context_destroy(&gpu);
    }
    release(&a), release(&av);
    free(x), free(v);
    dual_program_destroy(&prog);
  }
  cr_log_info("GPU forward-over-reverse checkpointing: %lld segmented runs (up to %d segments), "
              "%lld entries not bitwise equal to the CPU", (long long)runs, most, (long long)diff);
  cr_assert(runs >= (step == 1 ? 6 : 1) && most >= 3 && diff == 0);
  dual_context_destroy(&cpu);
}

/* AUTO on the GPU (run.c's model, fitted to the compiled tier): forward-over-reverse for the HVP
 * of a scalar function at every n; for its Hessian from n = 12 while the compiled
 * forward-over-reverse kernel is within the compile rule (the ring at n = 16: 2 768 terms; at
 * n = 64: 44 864, over the 12 000), nested forward otherwise. */
/* Row i of the ring's Hessian times v = 1: -sin(x_i) x_{i+1} + cos(x_i) + cos(x_{i-1}). */
static double ring_hv(const double *x, int n, int i) {
  return -sin(x[i]) * x[(i + 1) % n] + cos(x[i]) + cos(x[(i + n - 1) % n]);
}

Test(gpu_reverse_hvp, auto_mode_choice) {
  need_gpu();
  dual_context *gpu = NULL;
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  static const int sizes[3] = {8, 16, 64};
  static const int want_hess[3] = {DUAL_AD_FORWARD, DUAL_AD_REVERSE, DUAL_AD_FORWARD};
  for (int k = 0; k < 3; ++k) {
    const int n = sizes[k];
    char src[256];
    snprintf(src, sizeof src, "input x[%d]\noutput f = sum(i in 0..%d, sin(x[i]) * x[(i + 1) %% %d])\n", n, n, n);
    dual_program *prog = NULL;
    cr_assert_eq(dual_program_compile(gpu, src, "ring", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    static double x[64], v[64], hv[64], H[64 * 64], y[1];
    for (int i = 0; i < n; ++i) x[i] = 0.1 * i, v[i] = 1.0;
    cr_assert_eq(dual_hvp(gpu, prog, 1, x, n, NULL, 0, v, n, y, 1, NULL, 0, hv, n, NULL), DUAL_SUCCESS);
    cr_assert_eq(dual_context_last_ad_mode(gpu), DUAL_AD_REVERSE, "HVP at n = %d", n);
    for (int i = 0; i < n; ++i) {
      const double ref = ring_hv(x, n, i);
      cr_assert(fabs(hv[i] - ref) <= 1e-14 * (1 + fabs(ref)), "n %d, i %d: %.17g vs %.17g", n, i, hv[i], ref);
    }
    cr_assert_eq(dual_hessian(gpu, prog, 1, x, n, NULL, 0, y, 1, NULL, 0, H, n * n, DUAL_HESSIAN_FULL, NULL), DUAL_SUCCESS);
    cr_assert_eq(dual_context_last_ad_mode(gpu), want_hess[k], "Hessian at n = %d", n);
    for (int i = 0; i < n; ++i) { /* H v with v = 1 */
      double hv_i = 0.0;
      for (int j = 0; j < n; ++j) hv_i += H[i * n + j];
      const double ref = ring_hv(x, n, i);
      cr_assert(fabs(hv_i - ref) <= 1e-13 * (1 + fabs(ref)), "Hessian n %d, row %d: %.17g vs %.17g", n, i, hv_i, ref);
    }
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&gpu);
}
