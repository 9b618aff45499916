/*
 * test_gpu_engine.c — the CUDA engine against the CPU engine (label `gpu`; every test skips
 * without a device).
 *
 * The CPU engine is the reference (its derivatives are checked against independent references in
 * test_conformance and test_workloads).  Both engines run the same rules with the library's own
 * elementary functions (src/dual/fn.h), so GPU results must equal the CPU's bitwise — values,
 * derivatives and status flags — for every op (including huge and special arguments), on random
 * programs and for the benchmark functions; the difference is also measured against the 1e-13
 * row-scaled bound of the acceptance.  On the GPU, results must be bitwise identical across
 * widths, chunkings and plan groups, and device-memory batches must equal host-memory ones.
 * Errors: device arrays on a CPU context, mislabelled pointers, injected allocation and launch
 * failures (AUTO falls back to the CPU and says so; GPU fails cleanly), a memory limit too small
 * for any chunk.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dual/ops.h"
#include "engine/plan.h" /* dual_plan_instr: the plan record */
#include "dualbatch.h"
#include "bench_program.h"
#include "random_program.h"
#include "test_arrays.h"

#define TOL 1e-13

/* A context in forward mode: this file tests the forward engines (AUTO would take reverse mode
 * for hess's gradient on the GPU and forward on the CPU: test_gpu_reverse compares those). */
static dual_context *context(int device) {
  dual_context *ctx = NULL;
  int st = dual_context_create(&ctx, device);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD), DUAL_SUCCESS);
  return ctx;
}

/* Results of one Jacobian evaluation. */
typedef struct result {
  int64_t B, n, m;
  double *y, *J;
  int32_t *st;
} result;

static result jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                       const double *p) {
  result r = {B, dual_program_num_inputs(prog), dual_program_num_outputs(prog), NULL, NULL, NULL};
  r.y = malloc(sizeof(double) * (size_t)(B * r.m + 1));
  r.J = malloc(sizeof(double) * (size_t)(B * r.m * r.n + 1));
  r.st = malloc(sizeof(int32_t) * (size_t)(B + 1));
  const int64_t np = dual_program_num_params(prog);
  int st = dual_jacobian(ctx, prog, B, x, r.n, p, np, r.y, r.m, r.J, r.m * r.n, r.st);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  return r;
}

static void result_free(result *r) { free(r->y), free(r->J), free(r->st); }

/* Entry-wise difference scaled by its row's largest finite magnitude (values: the point's values
 * form one row).  Non-finite entries must agree exactly (NaN with NaN).  Returns the largest
 * scaled difference and counts the entries that are not bitwise equal. */
static double row_scaled_diff(const double *a, const double *b, int64_t rows, int64_t len,
                              int64_t *not_bitwise) {
  double worst = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const double *ar = a + r * len, *br = b + r * len;
    double scale = 0.0;
    for (int64_t j = 0; j < len; ++j)
      if (isfinite(ar[j]) && fabs(ar[j]) > scale) scale = fabs(ar[j]);
    for (int64_t j = 0; j < len; ++j) {
      if (same_bits(ar[j], br[j])) continue;
      ++*not_bitwise;
      if (!isfinite(ar[j]) || !isfinite(br[j])) {
        cr_assert(ar[j] == br[j], "row %lld entry %lld: %.17g vs %.17g", (long long)r, (long long)j,
                  ar[j], br[j]);
        continue;
      }
      double d = fabs(ar[j] - br[j]) / (scale > 0.0 ? scale : 1.0);
      if (d > worst) worst = d;
    }
  }
  return worst;
}

/* GPU against CPU: values per point, Jacobian per row; statuses equal. */
static double compare(const result *cpu, const result *gpu, int64_t *not_bitwise) {
  double w1 = row_scaled_diff(cpu->y, gpu->y, cpu->B, cpu->m, not_bitwise);
  double w2 = row_scaled_diff(cpu->J, gpu->J, cpu->B * cpu->m, cpu->n, not_bitwise);
  for (int64_t i = 0; i < cpu->B; ++i)
    cr_assert_eq(cpu->st[i], gpu->st[i], "point %lld: status %d (CPU) vs %d (GPU)", (long long)i,
                 cpu->st[i], gpu->st[i]);
  return w1 > w2 ? w1 : w2;
}

static void assert_bitwise(const result *a, const result *b, const char *what) {
  for (int64_t i = 0; i < a->B * a->m; ++i)
    cr_assert(same_bits(a->y[i], b->y[i]), "%s: value %lld differs", what, (long long)i);
  for (int64_t i = 0; i < a->B * a->m * a->n; ++i)
    cr_assert(same_bits(a->J[i], b->J[i]), "%s: derivative %lld differs: %.17g vs %.17g", what,
              (long long)i, a->J[i], b->J[i]);
  cr_assert(memcmp(a->st, b->st, sizeof(int32_t) * (size_t)a->B) == 0, "%s: status differs", what);
}

Test(gpu, every_op_matches_cpu) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 4242;
  const int64_t B = 2048;
  char differ[2048] = "";
  int ndiffer = 0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    const dual_op_info *info = &dual_op_table[op];
    if (info->spelling[0] == '\0') continue;
    dual_program *prog = rp_op_program(cpu, op);
    cr_assert_not_null(prog, "op %s: %s", info->name, dual_context_last_error(cpu));
    double *x = random_array(&rng, B * 3, -3.0, 3.0);
    for (int64_t i = 0; i < B * 3; i += 7) x[i] = rp_uniform(&rng, -40.0, 40.0); /* wide range */
    for (int64_t i = 5; i < B * 3; i += 13) /* huge arguments: trig reduction, overflow */
      x[i] = (rp_next(&rng) & 1 ? -1.0 : 1.0) * pow(10.0, rp_uniform(&rng, 0.0, 308.0));
    x[0] = 0.0, x[3] = 1.0, x[6] = -1.0; /* kinks and singular points */
    x[9] = NAN, x[12] = INFINITY, x[15] = -INFINITY, x[18] = -0.0, x[21] = 4.9e-324;
    result c = jacobian(cpu, prog, B, x, NULL), g = jacobian(gpu, prog, B, x, NULL);
    cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
    int64_t nb = 0;
    double worst = compare(&c, &g, &nb);
    cr_assert_leq(worst, TOL, "op %s: GPU differs from CPU by %.3g (row-scaled)", info->name, worst);
    if (nb > 0) {
      ++ndiffer;
      size_t len = strlen(differ);
      snprintf(differ + len, sizeof differ - len, "%s%s (%lld of %lld entries, worst %.2g)",
               len ? ", " : "", info->name, (long long)nb, (long long)(B * 4), worst);
    }
    cr_expect_eq(nb, 0, "op %s: %lld entries differ from the CPU's bits", info->name, (long long)nb);
    result_free(&c), result_free(&g);
    free(x);
    dual_program_destroy(&prog);
  }
  cr_log_info("ops not bitwise equal on CPU and GPU (%d): %s", ndiffer, ndiffer ? differ : "none");
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* 200 random programs in RANDOM_SLICES slices of their own (own seeds), one test process each:
 * under the compiled tier every program is compiled at several widths, and the slices let
 * Criterion's --jobs spread those compiles over the host's cores. */
#define RANDOM_SLICES 8
#define RANDOM_PER_SLICE 25

ParameterizedTestParameters(gpu, random_programs_match_cpu_and_are_bitwise_across_widths) {
  static int slices[RANDOM_SLICES];
  for (int s = 0; s < RANDOM_SLICES; ++s) slices[s] = s;
  return cr_make_param_array(int, slices, RANDOM_SLICES);
}

ParameterizedTest(int *slice, gpu, random_programs_match_cpu_and_are_bitwise_across_widths) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 2024 + 7919 * (uint64_t)*slice;
  const int64_t B = 1000;
  double worst = 0.0;
  int64_t nb = 0, entries = 0;
  for (int i = *slice * RANDOM_PER_SLICE; i < (*slice + 1) * RANDOM_PER_SLICE; ++i) {
    dual_program *prog = rp_random_program(cpu, &rng, 40 + i % 80, 7, 2, 3);
    cr_assert_not_null(prog);
    double *x = random_array(&rng, B * 7, -1.5, 1.5), *p = random_array(&rng, B * 2, -1.5, 1.5);
    x[5] = 0.0, x[11] = 1.0;
    result c = jacobian(cpu, prog, B, x, p);
    result g0 = {0};
    for (int w = 1; w <= 32; w *= 2) {
      cr_assert_eq(dual_context_set_width(gpu, w), 0);
      result g = jacobian(gpu, prog, B, x, p);
      if (w == 1) {
        double d = compare(&c, &g, &nb);
        if (d > worst) worst = d;
        entries += B * 3 * 8;
        g0 = g;
        continue;
      }
      assert_bitwise(&g0, &g, "GPU width 1 vs wider");
      result_free(&g);
    }
    cr_assert_eq(dual_context_set_width(gpu, 0), 0);
    result_free(&c), result_free(&g0);
    free(x), free(p);
    dual_program_destroy(&prog);
  }
  cr_log_info("random programs, slice %d: worst row-scaled GPU-CPU difference %.3g; %lld of %lld "
              "entries not bitwise equal", *slice, worst, (long long)nb, (long long)entries);
  cr_assert_leq(worst, TOL);
  cr_assert_eq(nb, 0, "random programs: %lld entries differ from the CPU's bits", (long long)nb);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* ba/kin/hess points as in BENCHMARKS.md (approximately: the distributions, not the stream). */
static void workload_points(const char *name, uint64_t *rng, int64_t B, double **x, double **p) {
  if (strcmp(name, "ba") == 0) {
    *x = random_array(rng, B * 15, -1.5, 1.5);
    *p = random_array(rng, B * 2, -1.5, 1.5);
    for (int64_t i = 0; i < B; ++i) (*x)[i * 15 + 13] += 10.0, (*x)[i * 15 + 14] = 1.0;
  } else if (strcmp(name, "kin") == 0) {
    *x = random_array(rng, B * 32, 0.5, 1.5);
    *p = NULL;
  } else {
    *x = random_array(rng, B * 16, -1.5, 1.5);
    *p = NULL;
  }
}

Test(gpu, benchmark_functions_match_cpu_across_widths_and_chunks) {
  need_gpu();
  static const char *names[] = {"ba", "kin", "hess"};
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 7;
  const int64_t B = 30011; /* not a multiple of any block or chunk size */
  for (int f = 0; f < 3; ++f) {
    dual_program *prog = bench_program(cpu, names[f]);
    double *x, *p;
    workload_points(names[f], &rng, B, &x, &p);
    x[0] = 0.0;
    result c = jacobian(cpu, prog, B, x, p), g = jacobian(gpu, prog, B, x, p);
    int64_t nb = 0;
    double d = compare(&c, &g, &nb);
    cr_log_info("%s: worst row-scaled GPU-CPU difference %.3g, %lld entries not bitwise equal",
                names[f], d, (long long)nb);
    cr_assert_leq(d, TOL, "%s: GPU differs from CPU by %.3g", names[f], d);
    cr_assert_eq(nb, 0, "%s: %lld entries differ from the CPU's bits", names[f], (long long)nb);
    for (int w = 1; w <= 32; w *= 2) {
      cr_assert_eq(dual_context_set_width(gpu, w), 0);
      result gw = jacobian(gpu, prog, B, x, p);
      assert_bitwise(&g, &gw, "width");
      result_free(&gw);
    }
    cr_assert_eq(dual_context_set_width(gpu, 0), 0);
    /* a pool limit that holds only a few thousand points: many chunks, same bits */
    cr_assert_eq(dual_context_set_memory_limit(gpu, 24 << 20), 0);
    result gs = jacobian(gpu, prog, B, x, p);
    assert_bitwise(&g, &gs, "small pool (chunked)");
    result_free(&gs);
    cr_assert_eq(dual_context_set_memory_limit(gpu, 0), 0);
    result_free(&c), result_free(&g);
    free(x), free(p);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* A plan over a quarter of the memory limit is uploaded in groups of passes (gpu_run.c), and each
 * group's chunks copy back only their own columns of J (a pitched copy, gpu_stage.c).  A ring of
 * 512 inputs with 2 outputs at width 1 has 512 passes of a plan record per instruction (some
 * 4,000), about 100 MB of plan: under a 64 MiB limit a group holds 16 MiB of it, so the Jacobian
 * runs in several groups (checked below from the instruction count), on the interpreter (the
 * compiled tier has no plan).  The same bits as without the limit and as the CPU. */
Test(gpu, plan_groups_under_a_small_limit_equal_the_cpu_bitwise) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  cr_assert_eq(dual_context_set_tier(gpu, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_width(gpu, 1), DUAL_SUCCESS);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(cpu, "input x[512]\n"
                                         "output f = sum(i in 0..511, sin(x[i]) * x[i + 1]) + sin(x[511]) * x[0]\n"
                                         "output g = sum(i in 0..512, exp(0.1 * x[i]) * x[i])\n", "ring512", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(cpu));
  const int64_t per_pass = dual_program_num_instructions(prog) * (int64_t)sizeof(dual_plan_instr);
  const int64_t groups = (512 + (16 << 20) / per_pass - 1) / ((16 << 20) / per_pass);
  cr_assert(groups >= 4, "the plan would run in %lld groups", (long long)groups);
  uint64_t rng = 41;
  const int64_t B = 700;
  double *x = random_array(&rng, B * 512, -1.5, 1.5);
  result c = jacobian(cpu, prog, B, x, NULL), g = jacobian(gpu, prog, B, x, NULL);
  cr_assert_eq(dual_context_set_memory_limit(gpu, 64 << 20), DUAL_SUCCESS);
  result gs = jacobian(gpu, prog, B, x, NULL);
  cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
  assert_bitwise(&c, &g, "the GPU against the CPU");
  assert_bitwise(&g, &gs, "the plan in groups under a 64 MiB limit");
  result_free(&c), result_free(&g), result_free(&gs);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu, eval_jvp_gradient_match_cpu) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 11;
  const int64_t B = 5003;
  dual_program *ba = bench_program(cpu, "ba"), *hess = bench_program(cpu, "hess");
  double *x, *p, *v = random_array(&rng, B * 15, -1, 1);
  workload_points("ba", &rng, B, &x, &p);
  double *y[2], *jv[2];
  int32_t *st[2];
  dual_context *ctxs[2] = {cpu, gpu};
  for (int k = 0; k < 2; ++k) {
    y[k] = malloc(sizeof(double) * B * 2), jv[k] = malloc(sizeof(double) * B * 2);
    st[k] = malloc(sizeof(int32_t) * B);
    cr_assert_eq(dual_jvp(ctxs[k], ba, B, x, 15, p, 2, v, 15, y[k], 2, jv[k], 2, st[k]), 0);
  }
  int64_t nb = 0;
  cr_assert_leq(row_scaled_diff(jv[0], jv[1], B, 2, &nb), TOL, "ba JVP");
  cr_assert_leq(row_scaled_diff(y[0], y[1], B, 2, &nb), TOL, "ba JVP values");
  for (int k = 0; k < 2; ++k)
    cr_assert_eq(dual_eval(ctxs[k], ba, B, x, 15, p, 2, y[k], 2, st[k]), 0);
  cr_assert_leq(row_scaled_diff(y[0], y[1], B, 2, &nb), TOL, "ba eval");
  cr_assert(memcmp(st[0], st[1], sizeof(int32_t) * B) == 0, "eval status");
  double *hx = random_array(&rng, B * 16, -1.5, 1.5), *f[2], *g[2];
  for (int k = 0; k < 2; ++k) {
    f[k] = malloc(sizeof(double) * B), g[k] = malloc(sizeof(double) * B * 16);
    cr_assert_eq(dual_gradient(ctxs[k], hess, B, hx, 16, NULL, 0, f[k], g[k], 16, st[k]), 0);
  }
  cr_assert_leq(row_scaled_diff(g[0], g[1], B, 16, &nb), TOL, "hess gradient");
  cr_assert_leq(row_scaled_diff(f[0], f[1], B, 1, &nb), TOL, "hess value");
  cr_assert_eq(nb, 0, "eval/JVP/gradient: %lld entries differ from the CPU's bits", (long long)nb);
  for (int k = 0; k < 2; ++k) free(y[k]), free(jv[k]), free(st[k]), free(f[k]), free(g[k]);
  free(x), free(p), free(v), free(hx);
  dual_program_destroy(&ba), dual_program_destroy(&hess);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

#ifdef DUAL_HAVE_CUDA
Test(gpu, device_arrays_equal_host_arrays) {
  need_gpu();
  dual_context *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 5;
  const int64_t B = 70001;
  dual_program *prog = bench_program(gpu, "ba");
  double *x, *p;
  workload_points("ba", &rng, B, &x, &p);
  result h = jacobian(gpu, prog, B, x, p);
  /* the device batch is column-major (point index fastest): strides the library must honour */
  double *xt = malloc(sizeof(double) * B * 15), *pt = malloc(sizeof(double) * B * 2);
  for (int64_t i = 0; i < B; ++i) {
    for (int j = 0; j < 15; ++j) xt[j * B + i] = x[i * 15 + j];
    for (int j = 0; j < 2; ++j) pt[j * B + i] = p[i * 2 + j];
  }
  double *dx = to_device(xt, sizeof(double) * B * 15), *dp = to_device(pt, sizeof(double) * B * 2);
  double *dy = to_device(NULL, sizeof(double) * B * 2), *dJ = to_device(NULL, sizeof(double) * B * 30);
  int32_t *ds = to_device(NULL, sizeof(int32_t) * B);
  cudaStream_t stream;
  cr_assert_eq(cudaStreamCreate(&stream), cudaSuccess);
  cr_assert_eq(dual_context_set_stream(gpu, stream), 0);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = 1, b.x_es = B;
  b.p = dp, b.p_ps = 1, b.p_es = B;
  b.y = dy, b.y_ps = 2, b.y_es = 1;
  b.d = dJ, b.d_ps = 30, b.d_rs = 15, b.d_cs = 1;
  b.status = ds;
  cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_JACOBIAN, &b), 0, "%s", dual_context_last_error(gpu));
  result d = {B, 15, 2, malloc(sizeof(double) * B * 2), malloc(sizeof(double) * B * 30),
              malloc(sizeof(int32_t) * B)};
  cr_assert_eq(cudaMemcpy(d.y, dy, sizeof(double) * B * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.J, dJ, sizeof(double) * B * 30, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.st, ds, sizeof(int32_t) * B, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_bitwise(&h, &d, "device arrays vs host arrays");
  /* a host pointer in a batch that says device memory is refused, not dereferenced */
  b.x = x;
  cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_JACOBIAN, &b), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(gpu), "host pointer") != NULL, "%s",
            dual_context_last_error(gpu));
  /* and device pointers in a host batch are refused too */
  b.x = dx, b.memory = DUAL_MEMORY_HOST;
  cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_JACOBIAN, &b), DUAL_ERR_ARGUMENT);
  cudaFree(dx), cudaFree(dp), cudaFree(dy), cudaFree(dJ), cudaFree(ds);
  cudaStreamDestroy(stream);
  result_free(&h), result_free(&d);
  free(x), free(p), free(xt), free(pt);
  dual_program_destroy(&prog);
  dual_context_destroy(&gpu);
}
#endif

#ifdef DUAL_HAVE_CUDA
/* Device arrays filled by a plain cudaMemcpy from pageable memory just before the call, on the
 * context's own stream: the call must see the copied values.  Such a copy returns before its DMA
 * ends, and the context's streams are non-blocking, so the library orders its kernels after the
 * legacy stream (dual_gpu_device_stream); without that, this test read stale zeros.  2^24 points
 * of y = 2 x + 1 (128 MiB of x: the DMA takes milliseconds), three rounds of new values. */
Test(gpu, device_arrays_just_copied_from_pageable_memory) {
  need_gpu();
  dual_context *gpu = context(DUAL_DEVICE_GPU);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(gpu, "input x\noutput y = 2 * x + 1\n", "copied", &prog), DUAL_SUCCESS);
  const int64_t B = (int64_t)1 << 24;
  double *hx = malloc(sizeof(double) * B), *hy = malloc(sizeof(double) * B);
  cr_assert(hx != NULL && hy != NULL);
  double *dx = to_device(NULL, sizeof(double) * B), *dy = to_device(NULL, sizeof(double) * B);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = 1, b.x_es = 1, b.y = dy, b.y_ps = 1, b.y_es = 1;
  for (int round = 1; round <= 3; ++round) {
    cr_assert_eq(cudaMemset(dx, 0, sizeof(double) * B), cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    for (int64_t i = 0; i < B; ++i) hx[i] = (double)(round * B + i);
    cr_assert_eq(cudaMemcpy(dx, hx, sizeof(double) * B, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_EVAL, &b), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    cr_assert_eq(cudaMemcpy(hy, dy, sizeof(double) * B, cudaMemcpyDeviceToHost), cudaSuccess);
    int64_t wrong = 0, first = -1;
    for (int64_t i = 0; i < B; ++i)
      if (hy[i] != 2.0 * hx[i] + 1.0 && wrong++ == 0) first = i;
    cr_assert_eq(wrong, 0, "round %d: %lld of %lld points wrong, the first %lld: y = %.17g for x = %.17g", round,
                 (long long)wrong, (long long)B, (long long)first, first >= 0 ? hy[first] : 0.0,
                 first >= 0 ? hx[first] : 0.0);
  }
  cudaFree(dx), cudaFree(dy);
  free(hx), free(hy);
  dual_program_destroy(&prog);
  dual_context_destroy(&gpu);
}
#endif

/* Host arrays page-locked with dual_host_pin are copied straight to and from the device, chunk by
 * chunk, with no staging copy (gpu_stage.c): the CPU's bits for the first-order engine (ba and
 * kin Jacobians: in one pass, and in many chunks under a small pool), the second-order one (hess's
 * Hessian, whose scattered columns still go through staging) and reverse mode (ba's VJP); with
 * every array locked, and with only some.  Then the errors: a range locked twice, unlocking a
 * pointer never locked, a NULL pointer, a zero size; the context works after them. */
static void *locked_copy(dual_context *ctx, const void *src, size_t bytes) {
  void *p = malloc(bytes);
  cr_assert_not_null(p);
  if (src != NULL) memcpy(p, src, bytes);
  else memset(p, 0xff, bytes); /* results: NaN bits until written */
  cr_assert_eq(dual_host_pin(ctx, p, (int64_t)bytes), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  return p;
}

static void unlock_free(dual_context *ctx, void *p) {
  cr_assert_eq(dual_host_unpin(ctx, p), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  free(p);
}

Test(gpu, page_locked_host_arrays_equal_the_cpu_bitwise) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *gpu = context(DUAL_DEVICE_GPU);
  uint64_t rng = 29;
  const int64_t B = 40009; /* 3 chunks of the staging path's 16384-point minimum */
  static const char *names[] = {"ba", "kin"};
  for (int f = 0; f < 2; ++f) {
    dual_program *prog = bench_program(cpu, names[f]);
    const int64_t n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog),
                  np = dual_program_num_params(prog);
    double *x, *p;
    workload_points(names[f], &rng, B, &x, &p);
    result c = jacobian(cpu, prog, B, x, p);
    result g = {B, n, m, NULL, NULL, NULL};
    double *lx = locked_copy(gpu, x, sizeof(double) * (size_t)(B * n));
    double *lp = np > 0 ? locked_copy(gpu, p, sizeof(double) * (size_t)(B * np)) : NULL;
    g.y = locked_copy(gpu, NULL, sizeof(double) * (size_t)(B * m));
    g.J = locked_copy(gpu, NULL, sizeof(double) * (size_t)(B * m * n));
    g.st = locked_copy(gpu, NULL, sizeof(int32_t) * (size_t)B);
    for (int pool = 0; pool < 2; ++pool) {
      cr_assert_eq(dual_context_set_memory_limit(gpu, pool ? 24 << 20 : 0), DUAL_SUCCESS);
      memset(g.y, 0xff, sizeof(double) * (size_t)(B * m)), memset(g.J, 0xff, sizeof(double) * (size_t)(B * m * n));
      cr_assert_eq(dual_jacobian(gpu, prog, B, lx, n, lp, np, g.y, m, g.J, m * n, g.st), DUAL_SUCCESS, "%s",
                   dual_context_last_error(gpu));
      assert_bitwise(&c, &g, pool ? "locked arrays, a small pool" : "locked arrays");
    }
    cr_assert_eq(dual_context_set_memory_limit(gpu, 0), DUAL_SUCCESS);
    /* only the Jacobian locked: the inputs and values through staging */
    result h = jacobian(gpu, prog, B, x, p);
    assert_bitwise(&c, &h, "pageable arrays");
    memset(g.J, 0xff, sizeof(double) * (size_t)(B * m * n));
    cr_assert_eq(dual_jacobian(gpu, prog, B, x, n, p, np, h.y, m, g.J, m * n, h.st), DUAL_SUCCESS);
    cr_assert(memcmp(c.J, g.J, sizeof(double) * (size_t)(B * m * n)) == 0, "%s: only J locked", names[f]);
    if (f == 0) { /* ba's VJP, the cotangents and gradients locked */
      double *u = random_array(&rng, B * m, -1, 1), *gc = malloc(sizeof(double) * (size_t)(B * n));
      double *lu = locked_copy(gpu, u, sizeof(double) * (size_t)(B * m)), *lg = locked_copy(gpu, NULL, sizeof(double) * (size_t)(B * n));
      cr_assert_eq(dual_vjp(cpu, prog, B, x, n, p, np, u, m, NULL, 0, gc, n, c.st), DUAL_SUCCESS);
      cr_assert_eq(dual_vjp(gpu, prog, B, lx, n, lp, np, lu, m, NULL, 0, lg, n, g.st), DUAL_SUCCESS, "%s",
                   dual_context_last_error(gpu));
      cr_assert(memcmp(gc, lg, sizeof(double) * (size_t)(B * n)) == 0, "ba VJP: locked arrays differ from the CPU");
      unlock_free(gpu, lu), unlock_free(gpu, lg);
      free(u), free(gc);
    }
    unlock_free(gpu, lx), unlock_free(gpu, g.y), unlock_free(gpu, g.J), unlock_free(gpu, g.st);
    if (lp != NULL) unlock_free(gpu, lp);
    result_free(&c), result_free(&h);
    free(x), free(p);
    dual_program_destroy(&prog);
  }
  { /* hess's Hessian: x locked, H (scattered components) staged from locked memory */
    dual_program *hess = bench_program(cpu, "hess");
    const int64_t n = 16, HB = 20011;
    double *hx = random_array(&rng, HB * n, -1.5, 1.5), *Hc = malloc(sizeof(double) * (size_t)(HB * n * n));
    int32_t *sc = malloc(sizeof(int32_t) * (size_t)HB);
    double *lx = locked_copy(gpu, hx, sizeof(double) * (size_t)(HB * n)),
           *lH = locked_copy(gpu, NULL, sizeof(double) * (size_t)(HB * n * n));
    int32_t *ls = locked_copy(gpu, NULL, sizeof(int32_t) * (size_t)HB);
    cr_assert_eq(dual_hessian(cpu, hess, HB, hx, n, NULL, 0, NULL, 0, NULL, 0, Hc, n * n, DUAL_HESSIAN_FULL, sc),
                 DUAL_SUCCESS);
    cr_assert_eq(dual_hessian(gpu, hess, HB, lx, n, NULL, 0, NULL, 0, NULL, 0, lH, n * n, DUAL_HESSIAN_FULL, ls),
                 DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    cr_assert(memcmp(Hc, lH, sizeof(double) * (size_t)(HB * n * n)) == 0, "hess Hessian: locked arrays differ");
    cr_assert(memcmp(sc, ls, sizeof(int32_t) * (size_t)HB) == 0, "hess Hessian: statuses differ");
    unlock_free(gpu, lx), unlock_free(gpu, lH), unlock_free(gpu, ls);
    free(hx), free(Hc), free(sc);
    dual_program_destroy(&hess);
  }
  /* the errors, each with its reason; the context still works after them */
  double *a = malloc(sizeof(double) * 4096), *b = malloc(sizeof(double) * 64);
  cr_assert(a != NULL && b != NULL);
  cr_assert_eq(dual_host_pin(gpu, a, sizeof(double) * 4096), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  cr_assert_eq(dual_host_pin(gpu, a + 100, 8), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(gpu), "already page-locked"), "%s", dual_context_last_error(gpu));
  cr_assert_eq(dual_host_unpin(gpu, b), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(gpu), "does not start a range"), "%s", dual_context_last_error(gpu));
  cr_assert_eq(dual_host_pin(gpu, NULL, 8), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_host_pin(gpu, b, 0), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_host_unpin(gpu, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_host_unpin(gpu, a), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  cr_assert_eq(dual_host_unpin(gpu, a), DUAL_ERR_ARGUMENT, "a range unlocked twice");
  free(a), free(b);
  dual_program *ba = bench_program(cpu, "ba");
  double *x, *p;
  workload_points("ba", &rng, 1000, &x, &p);
  result r = jacobian(gpu, ba, 1000, x, p);
  result_free(&r);
  free(x), free(p);
  dual_program_destroy(&ba);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu, failures_fall_back_with_auto_and_fail_with_gpu) {
  need_gpu();
  dual_context *cpu = context(DUAL_DEVICE_CPU), *autoc = context(DUAL_DEVICE_AUTO),
               *gpu = context(DUAL_DEVICE_GPU);
  cr_assert_eq(dual_context_device(autoc), DUAL_DEVICE_GPU);
  /* the GPU first, the CPU where it fails (the dispatch model might put B = 4000 on the CPU) */
  cr_assert_eq(dual_context_set_knob(autoc, DUAL_KNOB_DISPATCH, 1), DUAL_SUCCESS);
  uint64_t rng = 3;
  const int64_t B = 4000;
  dual_program *prog = bench_program(cpu, "kin");
  double *x, *p;
  workload_points("kin", &rng, B, &x, &p);
  result c = jacobian(cpu, prog, B, x, p);
  static const char *faults[] = {"launch", "alloc"};
  static const int expect[] = {DUAL_ERR_DEVICE, DUAL_ERR_NO_MEMORY};
  for (int k = 0; k < 2; ++k) {
    setenv("DUALBATCH_GPU_FAULT", faults[k], 1);
    result a = jacobian(autoc, prog, B, x, p); /* succeeds, on the CPU */
    cr_assert_eq(dual_context_last_device(autoc), DUAL_DEVICE_CPU);
    cr_assert(strstr(dual_context_last_note(autoc), "ran on the CPU") != NULL, "note: %s",
              dual_context_last_note(autoc));
    assert_bitwise(&c, &a, "AUTO fallback");
    result_free(&a);
    double *y = malloc(sizeof(double) * B * 32), *J = malloc(sizeof(double) * B * 1024);
    int st = dual_jacobian(gpu, prog, B, x, 32, NULL, 0, y, 32, J, 1024, NULL);
    cr_assert_eq(st, expect[k], "fault %s: status %d (%s)", faults[k], st, dual_context_last_error(gpu));
    cr_assert(strstr(dual_context_last_error(gpu), "GPU") != NULL, "%s", dual_context_last_error(gpu));
    free(y), free(J);
    unsetenv("DUALBATCH_GPU_FAULT");
  }
  /* after the faults, both contexts work on the GPU again */
  result a = jacobian(autoc, prog, B, x, p);
  cr_assert_eq(dual_context_last_device(autoc), DUAL_DEVICE_GPU);
  cr_assert_str_eq(dual_context_last_note(autoc), "");
  result_free(&a);
  /* a memory limit that cannot hold one chunk: a clean error, no crash */
  cr_assert_eq(dual_context_set_memory_limit(gpu, 4096), 0);
  double *y = malloc(sizeof(double) * B * 32), *J = malloc(sizeof(double) * B * 1024);
  cr_assert_eq(dual_jacobian(gpu, prog, B, x, 32, NULL, 0, y, 32, J, 1024, NULL), DUAL_ERR_NO_MEMORY);
  free(y), free(J);
  result_free(&c);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&autoc), dual_context_destroy(&gpu);
}

/* Without a device (or CUDA), asking for the GPU fails cleanly; AUTO gives the CPU. */
Test(gpu, no_device_behaviour) {
  if (dual_device_count() > 0) cr_skip_test("a device is present (covered by the tests above)");
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_GPU), DUAL_ERR_NO_DEVICE);
  cr_assert_not_null(ctx);
  cr_assert_eq(dual_context_device(ctx), DUAL_DEVICE_CPU);
  dual_context_destroy(&ctx);
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_AUTO), DUAL_SUCCESS);
  cr_assert_eq(dual_context_device(ctx), DUAL_DEVICE_CPU);
  dual_batch b;
  dual_batch_init(&b);
  b.memory = DUAL_MEMORY_DEVICE;
  b.count = 1;
  dual_program *prog = bench_program(ctx, "hess");
  double x[16] = {0}, f, g[16];
  b.x = x, b.x_ps = 16, b.x_es = 1, b.y = &f, b.y_ps = 1, b.y_es = 1, b.d = g, b.d_ps = 16, b.d_cs = 1;
  cr_assert_eq(dual_run(ctx, prog, DUAL_MODE_GRADIENT, &b), DUAL_ERR_NO_DEVICE);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
