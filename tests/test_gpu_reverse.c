/*
 * test_gpu_reverse.c — reverse mode on the GPU against the CPU engine (label `gpu`; every test
 * skips without a device).  The CPU's reverse mode is checked against forward mode, hand-derived
 * gradients and the quad-precision reference in test_reverse.c and test_conformance.c; both
 * engines run the same sweeps (engine/interp_rev.h), plan (engine/rev_plan.h) and rules, so the
 * GPU's values, derivatives and flags must equal the CPU's bit for bit (NaN with NaN): on random
 * programs (Jacobians and VJPs), on the benchmark functions with host and device arrays, and
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

/* One reverse-mode evaluation: a Jacobian (u == NULL) or a VJP, host arrays. */
typedef struct rev_result {
  int64_t B, n, m, rows;
  double *y, *d;
  int32_t *st;
} rev_result;

static rev_result run(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                      const double *p, const double *u) {
  rev_result r;
  r.B = B, r.n = dual_program_num_inputs(prog), r.m = dual_program_num_outputs(prog);
  r.rows = u != NULL ? 1 : r.m;
  const int64_t np = dual_program_num_params(prog);
  r.y = calloc((size_t)(B * r.m + 1), sizeof(double));
  r.d = calloc((size_t)(B * r.rows * r.n + 1), sizeof(double));
  r.st = calloc((size_t)(B + 1), sizeof(int32_t));
  cr_assert(r.y && r.d && r.st);
  int st = u != NULL ? dual_vjp(ctx, prog, B, x, r.n, p, np, u, r.m, r.y, r.m, r.d, r.n, r.st)
                     : dual_jacobian(ctx, prog, B, x, r.n, p, np, r.y, r.m, r.d, r.m * r.n, r.st);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_REVERSE);
  return r;
}

static void release(rev_result *r) { free(r->y), free(r->d), free(r->st); }

/* Entries that differ (NaN equals NaN); status words compared exactly. */
static int64_t count_diff(const rev_result *a, const rev_result *b) {
  int64_t nd = 0;
  for (int64_t i = 0; i < a->B * a->m; ++i) nd += !same_bits(a->y[i], b->y[i]);
  for (int64_t i = 0; i < a->B * a->rows * a->n; ++i) nd += !same_bits(a->d[i], b->d[i]);
  for (int64_t i = 0; i < a->B; ++i) nd += a->st[i] != b->st[i];
  return nd;
}

Test(gpu_reverse, random_programs_equal_the_cpu_bitwise) {
  need_gpu();
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  int64_t diff = 0, entries = 0;
  for (int i = 0; i < 120; i += rp_sweep_step()) {
    uint64_t s = 0x6e7ULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 40), m = 1 + rp_pick(&s, 3), np = 2;
    dual_program *prog = rp_random_program(cpu, &s, 40, nin, np, m);
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 1000;
    double *x = random_array(&s, B * nin, -3.0, 3.0), *p = random_array(&s, B * np, -2.0, 2.0);
    double *u = random_array(&s, B * m, -1.0, 1.0);
    for (int k = 0; k < 20; ++k) x[rp_pick(&s, (int)(B * nin))] = (double)(rp_pick(&s, 5) - 2);
    for (int vjp = 0; vjp < 2; ++vjp) {
      rev_result a = run(cpu, prog, B, x, p, vjp ? u : NULL), b = run(gpu, prog, B, x, p, vjp ? u : NULL);
      cr_assert_eq(dual_context_last_device(gpu), DUAL_DEVICE_GPU);
      diff += count_diff(&a, &b), entries += B * (a.m + a.rows * a.n + 1);
      release(&a), release(&b);
    }
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  cr_log_info("random programs (reverse mode): %lld of %lld entries not bitwise equal",
              (long long)diff, (long long)entries);
  cr_assert_eq(diff, 0);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

Test(gpu_reverse, benchmark_functions_equal_the_cpu_bitwise) {
  need_gpu();
  static const char *names[] = {"ba", "kin", "hess", "grad"};
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  for (int w = 0; w < 4; ++w) {
    dual_program *prog = bench_program(cpu, names[w]);
    uint64_t s = 0xbe0ULL + (uint64_t)w;
    const int64_t B = w == 3 ? 3000 : 20000, n = dual_program_num_inputs(prog);
    const int64_t np = dual_program_num_params(prog), m = dual_program_num_outputs(prog);
    double *x = random_array(&s, B * n, 0.5, 1.5), *p = random_array(&s, B * np + 1, 0.5, 1.5);
    double *u = random_array(&s, B * m, -1.0, 1.0);
    rev_result a = run(cpu, prog, B, x, p, NULL), b = run(gpu, prog, B, x, p, NULL);
    rev_result c = run(cpu, prog, B, x, p, u), d = run(gpu, prog, B, x, p, u);
    const int64_t nd = count_diff(&a, &b), nv = count_diff(&c, &d);
    cr_log_info("%s: Jacobian %lld, VJP %lld entries not bitwise equal", names[w], (long long)nd, (long long)nv);
    cr_expect_eq(nd + nv, 0, "%s differs", names[w]);
    release(&a), release(&b), release(&c), release(&d);
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* grad (n = 1024) with device arrays in place, and host arrays under a memory limit that forces
 * several chunks, against the CPU. */
Test(gpu_reverse, device_arrays_and_chunks_equal_the_cpu) {
  need_gpu();
#ifdef DUAL_HAVE_CUDA
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  dual_program *prog = bench_program(cpu, "grad");
  const int64_t B = 5000, n = 1024;
  uint64_t s = 0x9dULL;
  double *x = random_array(&s, B * n, -2.0, 2.0);
  rev_result a = run(cpu, prog, B, x, NULL, NULL);
  double *dx = to_device(x, sizeof(double) * (size_t)(B * n));
  double *dy = to_device(NULL, sizeof(double) * (size_t)B), *dg = to_device(NULL, sizeof(double) * (size_t)(B * n));
  int32_t *dst = to_device(NULL, sizeof(int32_t) * (size_t)B);
  cr_assert_eq(dual_gradient(gpu, prog, B, dx, n, NULL, 0, dy, dg, n, dst), DUAL_ERR_ARGUMENT,
               "host-memory call with device pointers must be refused");
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = n, b.x_es = 1;
  b.y = dy, b.y_ps = 1, b.y_es = 1;
  b.d = dg, b.d_ps = n, b.d_rs = n, b.d_cs = 1;
  b.status = dst;
  cr_assert_eq(dual_run(gpu, prog, DUAL_MODE_GRADIENT, &b), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
  rev_result d = run(cpu, prog, 1, x, NULL, NULL); /* shape only; refilled from the device */
  release(&d);
  d.B = B, d.n = n, d.m = 1, d.rows = 1;
  d.y = malloc(sizeof(double) * (size_t)B), d.d = malloc(sizeof(double) * (size_t)(B * n));
  d.st = malloc(sizeof(int32_t) * (size_t)B);
  cr_assert_eq(cudaMemcpy(d.y, dy, sizeof(double) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.d, dg, sizeof(double) * (size_t)(B * n), cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(cudaMemcpy(d.st, dst, sizeof(int32_t) * (size_t)B, cudaMemcpyDeviceToHost), cudaSuccess);
  cr_assert_eq(count_diff(&a, &d), 0, "device arrays differ from the CPU");
  /* host arrays, a limit that leaves room for a few blocks and chunks of a few hundred points */
  cr_assert_eq(dual_context_set_memory_limit(gpu, 120 << 20), DUAL_SUCCESS);
  rev_result c = run(gpu, prog, B, x, NULL, NULL);
  cr_assert_eq(count_diff(&a, &c), 0, "chunked host arrays differ from the CPU");
  cudaFree(dx), cudaFree(dy), cudaFree(dg), cudaFree(dst);
  release(&a), release(&c), release(&d);
  free(x);
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
#endif
}

/* Limits falling in steps of 10% until none fits: every run the GPU checkpoints (its note says
 * so) equals the CPU's whole-tape result, for Jacobians and VJPs; the last limit is refused with
 * a clear error. */
Test(gpu_reverse, checkpointed_segments_equal_the_cpu) {
  need_gpu();
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU);
  int64_t runs = 0, diff = 0;
  int most = 0;
  for (int i = 0; i < 8; ++i) {
    uint64_t s = 0x5e9ULL + (uint64_t)i;
    const int nin = 2 + rp_pick(&s, 10), m = 1 + rp_pick(&s, 3);
    dual_program *prog = rp_chain_program(cpu, &s, nin, m, 100 + rp_pick(&s, 300));
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 600;
    double *x = random_array(&s, B * nin, -2.0, 2.0), *u = random_array(&s, B * m, -1.0, 1.0);
    rev_result a = run(cpu, prog, B, x, NULL, NULL), av = run(cpu, prog, B, x, NULL, u);
    const double regs = dual_program_num_registers(prog), ni = (double)dual_program_num_instructions(prog);
    for (double lim = 128.0 * 8.0 * (4 * regs + 4 * ni) + (1 << 20);; lim *= 0.9) {
      dual_context *gpu = reverse_context(DUAL_DEVICE_GPU); /* fresh: the limit binds the whole pool */
      cr_assert_eq(dual_context_set_memory_limit(gpu, (int64_t)lim), DUAL_SUCCESS);
      double y[64], d[64 * 12];
      const int rc = dual_jacobian(gpu, prog, 1, x, nin, NULL, 0, y, m, d, m * nin, NULL);
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
        rev_result b = run(gpu, prog, B, x, NULL, NULL), bv = run(gpu, prog, B, x, NULL, u);
        diff += count_diff(&a, &b) + count_diff(&av, &bv), ++runs;
        release(&b), release(&bv);
      }
      dual_context_destroy(&gpu);
    }
    release(&a), release(&av);
    free(x), free(u);
    dual_program_destroy(&prog);
  }
  cr_log_info("GPU checkpointing: %lld segmented runs (up to %d segments), %lld entries not "
              "bitwise equal to the CPU", (long long)runs, most, (long long)diff);
  cr_assert(runs >= 8 && most >= 3 && diff == 0);
  dual_context_destroy(&cpu);
}

/* The compiled tier's reverse-mode kernels (DUAL_KNOB_JIT_REVERSE under DUAL_TIER_COMPILE):
 * Jacobians by rows and VJPs of ba and of random programs, hess's gradient, the gradient and
 * VJP of grad's family at n = 200 and of grad itself as loops (jit/jit_rev_loops.c; its
 * gradient also with its loads where they are used, DUAL_KNOB_JIT_LOADS_AHEAD = 0), and a
 * running product of 1602 instructions in segments (jit/jit_rev_segments.c), each bitwise equal
 * to the CPU (and so to the interpreter), with host arrays; the call must have run compiled. */
Test(gpu_reverse, compiled_kernels_equal_the_cpu_bitwise) {
  need_gpu();
  dual_context *cpu = reverse_context(DUAL_DEVICE_CPU), *gpu = reverse_context(DUAL_DEVICE_GPU);
  cr_assert_eq(dual_context_set_tier(gpu, DUAL_TIER_COMPILE), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_knob(gpu, DUAL_KNOB_JIT_REVERSE, 1), DUAL_SUCCESS);
  static const char *ring200 =
      "input x[200]\n"
      "let ring = sum(i in 0..199, sin(x[i]) * x[i + 1]) + sin(x[199]) * x[0]\n"
      "output f = ring + log1p(sum(i in 0..200, square(x[i])))\n";
  int64_t diff = 0, entries = 0;
  for (int k = 0; k < 8; ++k) {
    uint64_t s = 0x7e1ULL + (uint64_t)k;
    dual_program *prog = NULL;
    if (k == 0) prog = bench_program(cpu, "ba");
    else if (k == 1) prog = bench_program(cpu, "hess");
    else if (k == 2) cr_assert_eq(dual_program_compile(cpu, ring200, "ring200", &prog), DUAL_SUCCESS);
    else if (k == 3) prog = bench_program(cpu, "grad");
    else if (k == 4)
      cr_assert_eq(dual_program_compile(cpu, "input x[400]\noutput f = prod(i in 0..400, 1 + 0.001 * x[i])\n",
                                        "prod400", &prog), DUAL_SUCCESS);
    else prog = rp_random_program(cpu, &s, 40, 1 + rp_pick(&s, 12), 2, 1 + rp_pick(&s, 3));
    cr_assert(prog != NULL, "%s", dual_context_last_error(cpu));
    const int64_t B = 5000, n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
    const int64_t np = dual_program_num_params(prog);
    double *x = random_array(&s, B * n, -1.5, 1.5), *p = random_array(&s, B * (np ? np : 1), -1.0, 1.0);
    double *u = random_array(&s, B * m, -1.0, 1.0);
    x[7] = NAN, x[n + 1] = 0.0;
    for (int c = 0; c < (k == 3 ? 3 : 2); ++c) { /* gradient, VJP; grad: loads where used */
      const int vjp = c == 1;
      cr_assert_eq(dual_context_set_knob(gpu, DUAL_KNOB_JIT_LOADS_AHEAD, c == 2 ? 0 : 1), DUAL_SUCCESS);
      rev_result a = run(cpu, prog, B, x, np ? p : NULL, vjp ? u : NULL);
      rev_result b = run(gpu, prog, B, x, np ? p : NULL, vjp ? u : NULL);
      cr_assert_eq(dual_context_last_tier(gpu), DUAL_TIER_COMPILE, "%s", dual_context_last_note(gpu));
      diff += count_diff(&a, &b), entries += B * (a.m + a.rows * a.n + 1);
      release(&a), release(&b);
    }
    free(x), free(p), free(u);
    dual_program_destroy(&prog);
  }
  printf("compiled reverse mode: %lld of %lld entries not bitwise equal\n", (long long)diff, (long long)entries);
  cr_assert_eq(diff, 0);
  dual_context_destroy(&cpu), dual_context_destroy(&gpu);
}

/* AUTO's first-order choice on the GPU (run.c's model, fitted to the compiled tier): forward for
 * a gradient of fewer than 8 inputs, reverse from n = 8 while the compiled reverse kernel is
 * within the compile rule, from n = 24 otherwise (the interpreter's crossover); a Jacobian weighs
 * one adjoint sweep per output.  Each call's Jacobian is checked against the ring's hand-derived
 * gradient, df/dx_j = r (cos(x_j) x_{j+1} + sin(x_{j-1})) for r repetitions of the ring. */
Test(gpu_reverse, auto_mode_choice) {
  need_gpu();
  dual_context *gpu = NULL;
  cr_assert_eq(dual_context_create(&gpu, DUAL_DEVICE_GPU), DUAL_SUCCESS);
  /* AUTO's tier too (the [compile] variant's COMPILE would refuse the long forward program);
   * the choice of mode does not depend on the tier */
  cr_assert_eq(dual_context_set_tier(gpu, DUAL_TIER_AUTO), DUAL_SUCCESS);
  static const struct { int n, rings, outputs, want; } cases[] = {
      {4, 1, 1, DUAL_AD_FORWARD},  /* 12 against 15 */
      {8, 1, 1, DUAL_AD_REVERSE},  /* 16 against 15 */
      {16, 1, 1, DUAL_AD_REVERSE},
      {16, 1, 2, DUAL_AD_FORWARD}, /* two sweeps: 24 against 27 */
      {24, 1, 2, DUAL_AD_REVERSE}, /* 32 against 27 */
      {16, 80, 1, DUAL_AD_FORWARD}, /* 1 328 instructions: over the straight-line rule */
      {32, 80, 1, DUAL_AD_REVERSE}, /* over it too, but past the interpreter's crossover */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    const int n = cases[c].n, r = cases[c].rings, m = cases[c].outputs;
    char src[256];
    snprintf(src, sizeof src, "input x[%d]\noutput f = sum(i in 0..%d, sin(x[i %% %d]) * x[(i + 1) %% %d])\n%s",
             n, n * r, n, n, m == 2 ? "output g = x[0] * x[1]\n" : "");
    dual_program *prog = NULL;
    cr_assert_eq(dual_program_compile(gpu, src, "ring", &prog), DUAL_SUCCESS, "%s", dual_context_last_error(gpu));
    static double x[32], y[2], J[2 * 32];
    for (int i = 0; i < n; ++i) x[i] = 0.1 * i - 0.7;
    cr_assert_eq(dual_jacobian(gpu, prog, 1, x, n, NULL, 0, y, m, J, m * n, NULL), DUAL_SUCCESS,
                 "%s", dual_context_last_error(gpu));
    cr_assert_eq(dual_context_last_ad_mode(gpu), cases[c].want, "case %zu: n %d, %d rings, %d outputs", c, n, r, m);
    for (int j = 0; j < n; ++j) {
      const double ref = r * (cos(x[j]) * x[(j + 1) % n] + sin(x[(j + n - 1) % n]));
      cr_assert(fabs(J[j] - ref) <= 1e-13 * (1 + fabs(ref)), "case %zu, entry %d: %.17g vs %.17g", c, j, J[j], ref);
    }
    if (m == 2)
      for (int j = 0; j < n; ++j)
        cr_assert_eq(J[n + j], j == 0 ? x[1] : j == 1 ? x[0] : 0.0, "case %zu, d g / dx_%d", c, j);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&gpu);
}
