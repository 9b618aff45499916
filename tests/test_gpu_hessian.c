/*
 * test_gpu_hessian.c — second order on the GPU against the CPU engine (label `gpu`; every test
 * skips without a device).  The CPU's Hessians are checked against hand-derived references in
 * test_hessian.c; both engines run the same plan (engine/plan2.h), rules and propagation code,
 * so the GPU's values, Jacobians, Hessians, H v products and status flags must equal the CPU's
 * bitwise (NaN with NaN): for every op, on random programs with several blocks of directions,
 * for the hess benchmark function in both layouts and every width, with device-memory arrays,
 * and with a memory limit that forces many chunks.
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
#include "dual/ops.h"
#include "dualbatch.h"
#include "random_program.h"
#include "test_arrays.h"

static dual_context *context(int device, int width) {
  dual_context *ctx = NULL;
  int st = dual_context_create(&ctx, device);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_width(ctx, width), DUAL_SUCCESS);
  /* nested forward mode on both (AUTO would run CPU HVPs forward-over-reverse) */
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD), DUAL_SUCCESS);
  return ctx;
}

/* One second-order evaluation's results (host memory). */
typedef struct result2 {
  int64_t B, n, m, len;
  double *y, *J, *H;
  int32_t *st;
} result2;

static result2 alloc2(const dual_program *prog, int64_t B, int mode, int layout) {
  result2 r = {B, dual_program_num_inputs(prog), dual_program_num_outputs(prog), 0, NULL, NULL, NULL, NULL};
  r.len = mode == DUAL_MODE_HVP ? r.n : (layout == DUAL_HESSIAN_PACKED ? r.n * (r.n + 1) / 2 : r.n * r.n);
  r.y = calloc((size_t)(B * r.m + 1), sizeof(double));
  r.J = calloc((size_t)(B * r.m * r.n + 1), sizeof(double));
  r.H = calloc((size_t)(B * r.m * r.len + 1), sizeof(double));
  r.st = calloc((size_t)(B + 1), sizeof(int32_t));
  cr_assert(r.y && r.J && r.H && r.st);
  return r;
}

static void free2(result2 *r) { free(r->y), free(r->J), free(r->H), free(r->st); }

/* dual_hessian (mode HESSIAN) or dual_hvp (mode HVP, direction v) of host arrays. */
static result2 second(dual_context *ctx, const dual_program *prog, int mode, int layout, int64_t B,
                      const double *x, const double *p, const double *v) {
  result2 r = alloc2(prog, B, mode, layout);
  const int64_t np = dual_program_num_params(prog);
  int st = mode == DUAL_MODE_HVP
               ? dual_hvp(ctx, prog, B, x, r.n, p, np, v, r.n, r.y, r.m, r.J, r.m * r.n, r.H,
                          r.m * r.len, r.st)
               : dual_hessian(ctx, prog, B, x, r.n, p, np, r.y, r.m, r.J, r.m * r.n, r.H,
                              r.m * r.len, layout, r.st);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  return r;
}

/* Entries of a and b that differ (NaN equals NaN); the status words must match exactly. */
static int64_t count_diff(const result2 *a, const result2 *b) {
  int64_t nd = 0;
  for (int64_t i = 0; i < a->B * a->m; ++i) nd += !same_bits(a->y[i], b->y[i]);
  for (int64_t i = 0; i < a->B * a->m * a->n; ++i) nd += !same_bits(a->J[i], b->J[i]);
  for (int64_t i = 0; i < a->B * a->m * a->len; ++i) nd += !same_bits(a->H[i], b->H[i]);
  for (int64_t i = 0; i < a->B; ++i) nd += a->st[i] != b->st[i];
  return nd;
}

Test(gpu2, hess_hessian_and_hvp_equal_cpu_in_every_layout_and_width) {
  need_gpu();
  uint64_t rng = 0x4e55ULL;
  /* 20 000 points: two staging chunks; under DUALBATCH_TEST_SWEEP_DIV=k (the sanitizer runs) a
   * k-th of them, one chunk (the chunked paths have their own tests) */
  const int64_t B = 20000 / rp_sweep_step();
  double *x = random_array(&rng, B * 16, -2.0, 2.0), *v = random_array(&rng, B * 16, -1.0, 1.0);
  static const int widths[] = {0, 1, 4, 16, 32};
  int64_t total = 0;
  for (int iw = 0; iw < 5; ++iw) {
    dual_context *cpu = context(DUAL_DEVICE_CPU, widths[iw]), *gpu = context(DUAL_DEVICE_GPU, widths[iw]);
    dual_program *prog = bench_program(cpu, "hess");
    for (int mode = DUAL_MODE_HESSIAN; mode <= DUAL_MODE_HVP; ++mode)
      for (int layout = 0; layout < (mode == DUAL_MODE_HVP ? 1 : 2); ++layout) {
        result2 c = second(cpu, prog, mode, layout, B, x, NULL, v);
        result2 g = second(gpu, prog, mode, layout, B, x, NULL, v);
        cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
        const int64_t nd = count_diff(&c, &g);
        total += nd;
        cr_expect_eq(nd, 0, "hess, width %d, %s, layout %d: %lld entries differ", widths[iw],
                     mode == DUAL_MODE_HVP ? "hvp" : "hessian", layout, (long long)nd);
        free2(&c), free2(&g);
      }
    dual_program_destroy(&prog);
    dual_context_destroy(&cpu), dual_context_destroy(&gpu);
  }
  cr_log_info("hess: %lld entries not bitwise equal on CPU and GPU (5 widths, 2 layouts, hvp)",
              (long long)total);
  free(x), free(v);
}

Test(gpu2, random_programs_equal_cpu) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU, 0), *gpu = context(DUAL_DEVICE_GPU, 0);
  int64_t total = 0, entries = 0;
  for (int i = 0; i < 40; i += rp_sweep_step()) {
    uint64_t s = 0x9a7ULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 40);
    dual_program *prog = rp_random_program(cpu, &s, 80, nin, 2, 2);
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 700;
    double *x = random_array(&s, B * nin, -2.0, 2.0), *p = random_array(&s, B * 2, -2.0, 2.0);
    double *v = random_array(&s, B * nin, -1.0, 1.0);
    for (int mode = DUAL_MODE_HESSIAN; mode <= DUAL_MODE_HVP; ++mode) {
      result2 c = second(cpu, prog, mode, DUAL_HESSIAN_FULL, B, x, p, v);
      result2 g = second(gpu, prog, mode, DUAL_HESSIAN_FULL, B, x, p, v);
      const int64_t nd = count_diff(&c, &g);
      total += nd;
      entries += B * c.m * (1 + c.n + c.len);
      cr_expect_eq(nd, 0, "random program %d (n = %d), mode %d: %lld entries differ", i, nin, mode,
                   (long long)nd);
      free2(&c), free2(&g);
    }
    free(x), free(p), free(v);
    dual_program_destroy(&prog);
  }
  cr_log_info("random programs (second order): %lld of %lld entries not bitwise equal",
              (long long)total, (long long)entries);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu2, every_op_equals_cpu) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU, 0), *gpu = context(DUAL_DEVICE_GPU, 0);
  static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e-300, 1e300, 4.5,
                                   INFINITY, -INFINITY, NAN, 4.9e-324, 710.0, -745.0};
  const int ns = (int)(sizeof special / sizeof special[0]);
  char bad[4096] = "";
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (info->spelling[0] == '\0') continue;
    dual_builder *bl = NULL;
    cr_assert_eq(dual_builder_create(cpu, &bl), DUAL_SUCCESS);
    int32_t in[3], r, r2;
    const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < info->arity; ++k) cr_assert_eq(dual_builder_input(bl, names[k], &in[k]), DUAL_SUCCESS);
    cr_assert_eq(dual_builder_apply(bl, info->spelling, info->arity, in, &r), DUAL_SUCCESS);
    const int32_t sq[2] = {r, in[0]}; /* r * a: second order through a product as well */
    cr_assert_eq(dual_builder_apply(bl, "*", 2, sq, &r2), DUAL_SUCCESS);
    cr_assert_eq(dual_builder_output(bl, "f", r2), DUAL_SUCCESS);
    dual_program *prog = NULL;
    cr_assert_eq(dual_builder_finish(bl, &prog), DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
    dual_builder_destroy(&bl);
    const int ar = info->arity;
    const int64_t B = 2000;
    uint64_t s = 0x31ULL + (uint64_t)op;
    double *x = random_array(&s, B * ar, -4.0, 4.0);
    for (int64_t b = 0; b < ns * ns && b < B; ++b)
      for (int k = 0; k < ar; ++k) x[b * ar + k] = special[(k == 0 ? b : b / ns) % ns];
    result2 c = second(cpu, prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, B, x, NULL, NULL);
    result2 g = second(gpu, prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, B, x, NULL, NULL);
    if (count_diff(&c, &g) != 0) snprintf(bad + strlen(bad), sizeof bad - strlen(bad), " %s", info->name);
    free2(&c), free2(&g);
    free(x);
    dual_program_destroy(&prog);
  }
  cr_log_info("ops whose second order is not bitwise equal on CPU and GPU:%s", bad[0] ? bad : " none");
  cr_assert_str_empty(bad, "not bitwise equal:%s", bad);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu2, device_arrays_and_small_memory_limit_equal_host_arrays) {
  need_gpu();
#ifdef DUAL_HAVE_CUDA
  uint64_t rng = 0xd7ULL;
  const int64_t B = 30000, n = 16;
  double *x = random_array(&rng, B * n, -2.0, 2.0);
  dual_context *gpu = context(DUAL_DEVICE_GPU, 0);
  dual_program *prog = bench_program(gpu, "hess");
  result2 h = second(gpu, prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, B, x, NULL, NULL);
  /* device arrays, in place */
  double *dx = to_device(x, sizeof(double) * (size_t)(B * n));
  double *dy = to_device(NULL, sizeof(double) * (size_t)B), *dJ = to_device(NULL, sizeof(double) * (size_t)(B * n));
  double *dH = to_device(NULL, sizeof(double) * (size_t)(B * n * n));
  int32_t *dst = to_device(NULL, sizeof(int32_t) * (size_t)B);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = n, b.x_es = 1;
  b.y = dy, b.y_ps = 1, b.y_es = 1;
  b.d = dJ, b.d_ps = n, b.d_rs = n, b.d_cs = 1;
  b.h = dH, b.h_ps = n * n, b.h_rs = n * n, b.h_es = 1, b.h_layout = DUAL_HESSIAN_FULL;
  b.status = dst;
  cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_HESSIAN, &b), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  result2 d = alloc2(prog, B, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL);
  cr_assert_eq(cudaMemcpy(d.y, dy, sizeof(double) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.J, dJ, sizeof(double) * (size_t)(B * n), cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.H, dH, sizeof(double) * (size_t)(B * n * n), cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.st, dst, sizeof(int32_t) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(count_diff(&h, &d), 0, "device arrays differ from host arrays");
  /* a memory limit that forces many chunks */
  cr_assert_eq(dual_context_set_memory_limit(gpu, 24 << 20), DUAL_SUCCESS);
  result2 s = second(gpu, prog, DUAL_MODE_HESSIAN, DUAL_HESSIAN_FULL, B, x, NULL, NULL);
  cr_assert_eq(count_diff(&h, &s), 0, "chunked host arrays differ");
  cudaFree(dx), cudaFree(dy), cudaFree(dJ), cudaFree(dH), cudaFree(dst);
  free2(&h), free2(&d), free2(&s);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&gpu);
#endif
}
