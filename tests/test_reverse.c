/*
 * test_reverse.c — reverse mode on the CPU (issue 5, first part): dual_vjp and the reverse
 * gradients and Jacobians of DUAL_AD_REVERSE against forward mode (checked against independent
 * references in test_conformance, test_workloads and test_hessian) on random programs and the
 * benchmark functions, the hess gradient against its hand-derived formula, reproducibility over
 * thread counts, and the argument errors.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_program.h"
#include "dualbatch.h"
#include "test_arrays.h"

#include "hess_ref.h"
#include "random_program.h"

/* Forward and reverse sum the same products in different orders (forward: along each input's
 * tangent; reverse: along each output's adjoint), so entries differ by rounding, amplified where
 * terms cancel: 1e-13 relative to the row's largest magnitude (the bound). */
#define REV_TOL 1e-13

/* Row-scaled difference of two m x n blocks; non-finite entries must sit in the same places
 * (*mismatch counts those that do not). */
static double row_diff(const double *a, const double *b, int m, int n, int64_t *mismatch) {
  double worst = 0.0;
  for (int i = 0; i < m; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j)
      if (isfinite(b[i * n + j])) s = fmax(s, fabs(b[i * n + j]));
    if (s == 0.0) s = 1.0;
    for (int j = 0; j < n; ++j) {
      const double x = a[i * n + j], y = b[i * n + j];
      if (!isfinite(x) || !isfinite(y)) {
        *mismatch += !(x == y || (isnan(x) && isnan(y)));
        continue;
      }
      worst = fmax(worst, fabs(x - y) / s);
    }
  }
  return worst;
}

static void jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                     const double *p, double *y, double *J, int32_t *st) {
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  int rc = dual_jacobian(ctx, prog, B, x, n, p, np, y, m, J, (int64_t)m * n, st);
  cr_assert_eq(rc, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
}

Test(reverse, random_programs_match_forward_jacobians_and_vjps) {
  dual_context *fwd = mode_context(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0), *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  double worst = 0.0, worst_vjp = 0.0;
  int64_t mismatch = 0, entries = 0, singular = 0;
  for (int i = 0; i < 300; i += rp_sweep_step()) {
    uint64_t s = 0x7e5ULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 40), m = 1 + rp_pick(&s, 3), np = 2;
    dual_program *prog = rp_random_program(fwd, &s, 40, nin, np, m);
    cr_assert(prog != NULL, "%s", dual_context_last_error(fwd));
    const int64_t B = 50;
    double *x = malloc(sizeof(double) * (size_t)(B * nin)), *p = malloc(sizeof(double) * (size_t)(B * np));
    double *u = malloc(sizeof(double) * (size_t)(B * m));
    double *y1 = malloc(sizeof(double) * (size_t)(B * m)), *y2 = malloc(sizeof(double) * (size_t)(B * m));
    double *J1 = malloc(sizeof(double) * (size_t)(B * m * nin)), *J2 = malloc(sizeof(double) * (size_t)(B * m * nin));
    double *g = malloc(sizeof(double) * (size_t)(B * nin)), *gf = malloc(sizeof(double) * (size_t)(B * nin));
    int32_t *st1 = malloc(sizeof(int32_t) * (size_t)B), *st2 = malloc(sizeof(int32_t) * (size_t)B);
    char *skip_vjp = malloc((size_t)B);
    cr_assert(x && p && u && y1 && y2 && J1 && J2 && g && gf && st1 && st2 && skip_vjp);
    for (int64_t k = 0; k < B * nin; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
    for (int64_t k = 0; k < B * np; ++k) p[k] = rp_uniform(&s, -2.0, 2.0);
    for (int64_t k = 0; k < B * m; ++k) u[k] = rp_uniform(&s, -1.0, 1.0);
    jacobian(fwd, prog, B, x, p, y1, J1, st1);
    cr_assert_eq(dual_context_last_ad_mode(fwd), DUAL_AD_FORWARD);
    jacobian(rev, prog, B, x, p, y2, J2, st2);
    cr_assert_eq(dual_context_last_ad_mode(rev), DUAL_AD_REVERSE);
    /* At a point where an infinite partial meets a zero one (flagged SINGULAR) the two modes may
     * place a NaN differently: forward drops a term whose tangent is zero, reverse one whose
     * adjoint is zero, and the zero sits on a different side of the chain.  There only the
     * entries finite in both modes are compared (and the NaN flag may differ). */
    for (int64_t b = 0; b < B; ++b) {
      skip_vjp[b] = (st1[b] & (DUAL_PT_SINGULAR | DUAL_PT_DOMAIN)) != 0;
      if (skip_vjp[b]) {
        ++singular;
        for (int k = 0; k < m * nin; ++k)
          if (!isfinite(J1[b * m * nin + k]) || !isfinite(J2[b * m * nin + k]))
            J2[b * m * nin + k] = J1[b * m * nin + k];
      } else {
        cr_assert_eq(st1[b], st2[b], "program %d, point %lld: status %d forward, %d reverse", i,
                     (long long)b, st1[b], st2[b]);
      }
    }
    for (int64_t b = 0; b < B; ++b) {
      worst = fmax(worst, row_diff(J2 + b * m * nin, J1 + b * m * nin, m, nin, &mismatch));
      entries += m * nin;
    }
    /* VJP against u^T J of the forward Jacobian, relative to sum_r |u_r| max_k |J_rk| */
    cr_assert_eq(dual_vjp(rev, prog, B, x, nin, p, np, u, m, NULL, m, g, nin, st2), DUAL_SUCCESS);
    for (int64_t b = 0; b < B; ++b)
      for (int j = 0; j < nin; ++j) {
        double sum = 0.0, scale = 0.0;
        for (int r = 0; r < m; ++r) { /* scale: |u_r| times the row's largest entry */
          sum += u[b * m + r] * J1[(b * m + r) * nin + j];
          double rmax = 0.0;
          for (int k = 0; k < nin; ++k) rmax = fmax(rmax, fabs(J1[(b * m + r) * nin + k]));
          scale += fabs(u[b * m + r]) * rmax;
        }
        const double got = g[b * nin + j];
        if (skip_vjp[b] && (!isfinite(sum) || !isfinite(got))) continue;
        if (!isfinite(sum) || !isfinite(got)) {
          mismatch += !(got == sum || (isnan(got) && isnan(sum)));
          continue;
        }
        worst_vjp = fmax(worst_vjp, fabs(got - sum) / (scale > 0.0 ? scale : 1.0));
      }
    free(x), free(p), free(u), free(y1), free(y2), free(J1), free(J2), free(g), free(gf), free(st1), free(st2);
    free(skip_vjp);
    dual_program_destroy(&prog);
  }
  cr_log_info("300 random programs: reverse vs forward Jacobian worst row-scaled difference %.3g "
              "over %lld entries, VJP vs u^T J %.3g, non-finite placements that differ: %lld; "
              "%lld singular or out-of-domain points compared on their finite entries only",
              worst, (long long)entries, worst_vjp, (long long)mismatch, (long long)singular);
  cr_assert(worst <= REV_TOL, "reverse Jacobian differs from forward by %.3g", worst);
  cr_assert(worst_vjp <= REV_TOL, "VJP differs from u^T J by %.3g", worst_vjp);
  cr_assert_eq(mismatch, 0, "%lld non-finite entries differ between the modes", (long long)mismatch);
  dual_context_destroy(&fwd), dual_context_destroy(&rev);
}

Test(reverse, benchmark_functions_match_forward) {
  const char *names[3] = {"ba", "kin", "hess"};
  dual_context *fwd = mode_context(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0), *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  for (int w = 0; w < 3; ++w) {
    dual_program *prog = bench_program(fwd, names[w]);
    const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
    const int np = dual_program_num_params(prog);
    const int64_t B = 1000;
    uint64_t s = 0xbe7cULL + (uint64_t)w;
    double *x = malloc(sizeof(double) * (size_t)(B * n)), *p = malloc(sizeof(double) * (size_t)(B * np + 1));
    double *y = malloc(sizeof(double) * (size_t)(B * m)), *J1 = malloc(sizeof(double) * (size_t)(B * m * n));
    double *J2 = malloc(sizeof(double) * (size_t)(B * m * n));
    cr_assert(x && p && y && J1 && J2);
    for (int64_t k = 0; k < B * n; ++k)
      x[k] = w == 1 ? rp_uniform(&s, 0.5, 1.5) : rp_uniform(&s, -1.0, 1.0) + (w == 0 && k % n == 13 ? 10.0 : 0.0);
    for (int64_t k = 0; k < B * np; ++k) p[k] = rp_uniform(&s, -1.0, 1.0);
    jacobian(fwd, prog, B, x, np ? p : NULL, y, J1, NULL);
    jacobian(rev, prog, B, x, np ? p : NULL, y, J2, NULL);
    double worst = 0.0;
    int64_t mismatch = 0;
    for (int64_t b = 0; b < B; ++b) worst = fmax(worst, row_diff(J2 + b * m * n, J1 + b * m * n, m, n, &mismatch));
    cr_log_info("%s: reverse vs forward Jacobian, worst row-scaled difference %.3g", names[w], worst);
    cr_assert(worst <= REV_TOL && mismatch == 0, "%s: %.3g (%lld non-finite mismatches)", names[w],
              worst, (long long)mismatch);
    if (w == 2) { /* the hess gradient against its hand-derived formula */
      for (int64_t b = 0; b < B; ++b) {
        double g[HESS_REF_N], gs = 0.0;
        hess_ref_gradient(x + b * n, g);
        for (int j = 0; j < n; ++j) gs = fmax(gs, fabs(g[j]));
        for (int j = 0; j < n; ++j)
          cr_assert(fabs(J2[b * n + j] - g[j]) <= 1e-12 * gs, "hess gradient %d at %lld", j, (long long)b);
      }
    }
    free(x), free(p), free(y), free(J1), free(J2);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&fwd), dual_context_destroy(&rev);
}

/* grad (n = 1024): df/dx_j = cos(x_j) x_{j+1} + sin(x_{j-1}) + 2 x_j / (1 + sum x^2), indices mod
 * n, by hand; forward and reverse both against it. */
Test(reverse, grad_workload_matches_its_formula_in_both_modes) {
  enum { N = 1024 };
  const int64_t B = 48;
  dual_context *fwd = mode_context(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0), *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  dual_program *prog = bench_program(fwd, "grad");
  cr_assert_eq(dual_program_num_inputs(prog), N);
  uint64_t s = 0x9a4dULL;
  double *x = malloc(sizeof(double) * B * N), *y = malloc(sizeof(double) * B);
  double *g1 = malloc(sizeof(double) * B * N), *g2 = malloc(sizeof(double) * B * N);
  cr_assert(x && y && g1 && g2);
  for (int64_t k = 0; k < B * N; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
  jacobian(fwd, prog, B, x, NULL, y, g1, NULL);
  jacobian(rev, prog, B, x, NULL, y, g2, NULL);
  double worst[2] = {0.0, 0.0};
  for (int64_t b = 0; b < B; ++b) {
    const double *xb = x + b * N;
    double q = 0.0, ref[N], scale = 0.0;
    for (int j = 0; j < N; ++j) q += xb[j] * xb[j];
    for (int j = 0; j < N; ++j) {
      ref[j] = cos(xb[j]) * xb[(j + 1) % N] + sin(xb[(j + N - 1) % N]) + 2.0 * xb[j] / (1.0 + q);
      scale = fmax(scale, fabs(ref[j]));
    }
    for (int j = 0; j < N; ++j) {
      worst[0] = fmax(worst[0], fabs(g1[b * N + j] - ref[j]) / scale);
      worst[1] = fmax(worst[1], fabs(g2[b * N + j] - ref[j]) / scale);
    }
  }
  cr_log_info("grad: worst scaled difference from the formula: forward %.3g, reverse %.3g", worst[0], worst[1]);
  cr_assert(worst[0] <= 1e-12 && worst[1] <= 1e-12);
  free(x), free(y), free(g1), free(g2);
  dual_program_destroy(&prog);
  dual_context_destroy(&fwd), dual_context_destroy(&rev);
}

Test(reverse, bitwise_across_thread_counts_and_batch_splits) {
  dual_context *one = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 1), *two = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 2);
  dual_program *prog = bench_program(one, "kin");
  const int64_t B = 777;
  const int n = 32, m = 32;
  uint64_t s = 0x11ULL;
  double *x = malloc(sizeof(double) * B * n), *y = malloc(sizeof(double) * B * m);
  double *J1 = malloc(sizeof(double) * B * m * n), *J2 = malloc(sizeof(double) * B * m * n);
  cr_assert(x && y && J1 && J2);
  for (int64_t k = 0; k < B * n; ++k) x[k] = rp_uniform(&s, 0.5, 1.5);
  jacobian(one, prog, B, x, NULL, y, J1, NULL);
  jacobian(two, prog, 500, x, NULL, y, J2, NULL);
  jacobian(two, prog, B - 500, x + 500 * n, NULL, y + 500 * m, J2 + 500 * m * n, NULL);
  cr_assert(memcmp(J1, J2, sizeof(double) * B * m * n) == 0, "reverse Jacobians differ");
  free(x), free(y), free(J1), free(J2);
  dual_program_destroy(&prog);
  dual_context_destroy(&one), dual_context_destroy(&two);
}

/* Checkpointing (engine/rev_plan.h): under a memory limit too small for a block's whole tape
 * the program runs in recomputed segments (the context's note says so); results are bitwise
 * those of one segment, for Jacobians (a sweep per output) and VJPs, and a limit too small for
 * any segmentation is an error that says so. */
Test(reverse, checkpointed_segments_are_bitwise_the_whole_tape) {
  dual_context *whole = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 1), *cut = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 1);
  /* the interpreter's checkpointing against its own whole tape, compared bit for bit, NaNs
   * included (a compiled module keeps no tape, and its NaNs may differ in sign: README,
   * "Reproducible"; the CPU compiled tier's scratch against the limit is test_cpu_jit's) */
  cr_assert_eq(dual_context_set_tier(whole, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_tier(cut, DUAL_TIER_INTERPRET), DUAL_SUCCESS);
  int64_t tried = 0;
  int most = 0;
  for (int i = 0; i < 40; i += rp_sweep_step()) {
    uint64_t s = 0xc4eULL + (uint64_t)i;
    const int nin = 2 + rp_pick(&s, 10), m = 1 + rp_pick(&s, 3), np = 0;
    dual_program *prog = rp_chain_program(whole, &s, nin, m, 40 + rp_pick(&s, 200));
    cr_assert(prog != NULL, "%s", dual_context_last_error(whole));
    const int64_t B = 37;
    double *x = malloc(sizeof(double) * B * nin);
    double *y = malloc(sizeof(double) * B * m), *u = malloc(sizeof(double) * B * m);
    double *J1 = malloc(sizeof(double) * B * m * nin), *J2 = malloc(sizeof(double) * B * m * nin);
    double *V1 = malloc(sizeof(double) * B * nin);
    int32_t *s1 = malloc(sizeof(int32_t) * B), *s2 = malloc(sizeof(int32_t) * B);
    cr_assert(x && y && u && J1 && J2 && V1 && s1 && s2);
    for (int64_t k = 0; k < B * nin; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
    for (int64_t k = 0; k < B * m; ++k) u[k] = rp_uniform(&s, -1.0, 1.0);
    jacobian(whole, prog, B, x, NULL, y, J1, s1);
    cr_assert_eq(dual_vjp(whole, prog, B, x, nin, NULL, np, u, m, NULL, m, V1, nin, NULL), DUAL_SUCCESS);
    /* limits falling in steps of 10% until none fits: every segmented run against the whole */
    const int64_t regs = dual_program_num_registers(prog);
    for (double lim = 16.0 * 8.0 * (double)(4 * regs + 4 * dual_program_num_instructions(prog));;
         lim *= 0.9) {
      cr_assert(lim >= 1.0, "program %d: no memory limit is too small", i);
      cr_assert_eq(dual_context_set_memory_limit(cut, (int64_t)lim), DUAL_SUCCESS);
      const int rc = dual_jacobian(cut, prog, B, x, nin, NULL, np, y, m, J2, (int64_t)m * nin, s2);
      if (rc != DUAL_SUCCESS) {
        cr_assert_eq(rc, DUAL_ERR_NO_MEMORY, "%s", dual_context_last_error(cut));
        cr_assert(strstr(dual_context_last_error(cut), "memory limit") != NULL);
        break;
      }
      const char *note = strstr(dual_context_last_note(cut), "in ");
      if (note == NULL) continue; /* still one segment */
      const int nseg = atoi(note + 3);
      ++tried, most = nseg > most ? nseg : most;
      cr_assert(nseg >= 2, "%s", dual_context_last_note(cut));
      cr_assert(memcmp(J1, J2, sizeof(double) * B * m * nin) == 0, "program %d, %d segments: Jacobian differs", i, nseg);
      cr_assert(memcmp(s1, s2, sizeof(int32_t) * B) == 0, "program %d: flags differ", i);
      cr_assert_eq(dual_vjp(cut, prog, B, x, nin, NULL, np, u, m, NULL, m, J2, nin, s2), DUAL_SUCCESS);
      cr_assert(memcmp(V1, J2, sizeof(double) * B * nin) == 0, "program %d, %d segments: VJP differs", i, nseg);
    }
    free(x), free(y), free(u), free(J1), free(J2), free(V1), free(s1), free(s2);
    dual_program_destroy(&prog);
  }
  cr_log_info("checkpointing: %lld segmented runs of 40 programs (up to %d segments), bitwise "
              "equal to the whole tape", (long long)tried, most);
  cr_assert(tried >= 40 / rp_sweep_step() && most >= 4);
  /* far too little memory: a clear error, no crash */
  dual_program *prog = bench_program(whole, "kin");
  double x[32] = {0}, y[32], J[32 * 32];
  cr_assert_eq(dual_context_set_memory_limit(cut, 4096), DUAL_SUCCESS);
  cr_assert_eq(dual_jacobian(cut, prog, 1, x, 32, NULL, 0, y, 32, J, 32 * 32, NULL), DUAL_ERR_NO_MEMORY);
  cr_assert(strstr(dual_context_last_error(cut), "memory limit") != NULL, "%s", dual_context_last_error(cut));
  dual_program_destroy(&prog);
  dual_context_destroy(&whole), dual_context_destroy(&cut);
}

/* AUTO's choice on the CPU (run.c's cost model), reported by dual_context_last_ad_mode: forward
 * for few inputs, reverse for many; a Jacobian weighs one adjoint sweep per output; a forced
 * width never changes the choice. */
Test(reverse, auto_mode_choice_is_reported) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 1);
  static const struct { const char *src; int want; } cases[] = {
      {"input x[8]\noutput f = sum(i in 0..8, sin(x[i]))\n", DUAL_AD_FORWARD},
      {"input x[32]\noutput f = sum(i in 0..32, sin(x[i]))\n", DUAL_AD_FORWARD},
      {"input x[40]\noutput f = sum(i in 0..40, sin(x[i]))\n", DUAL_AD_REVERSE},
      {"input x[300]\noutput f = sum(i in 0..300, sin(x[i]))\n", DUAL_AD_REVERSE},
      /* 40 inputs, 2 outputs: forward 2 passes of 32 + 4 = 72 (or 60 at 16) < 12 + 56: forward */
      {"input x[40]\noutput f = sum(i in 0..40, sin(x[i]))\noutput g = x[0]\n", DUAL_AD_FORWARD},
      {"input x[300]\noutput f = sum(i in 0..300, sin(x[i]))\noutput g = x[0]\n", DUAL_AD_REVERSE},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    dual_program *prog = NULL;
    cr_assert_eq(dual_program_compile(ctx, cases[c].src, "auto", &prog), DUAL_SUCCESS);
    const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
    double *x = calloc((size_t)n, sizeof(double)), *d = calloc((size_t)(n * m), sizeof(double)), y[2];
    cr_assert(x && d);
    for (int width = 0; width <= 4; width += 4) {
      cr_assert_eq(dual_context_set_width(ctx, width), DUAL_SUCCESS);
      jacobian(ctx, prog, 1, x, NULL, y, d, NULL);
      cr_assert_eq(dual_context_last_ad_mode(ctx), cases[c].want, "case %zu (width %d): got mode %d",
                   c, width, dual_context_last_ad_mode(ctx));
      for (int j = 0; j < n; ++j) cr_assert_eq(d[j], 1.0, "d sin / dx at 0 is 1");
    }
    free(x), free(d);
    dual_program_destroy(&prog);
  }
  cr_assert_eq(dual_context_set_width(ctx, 0), DUAL_SUCCESS);
  dual_context_destroy(&ctx);
}

Test(reverse, argument_errors) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  cr_assert_eq(dual_context_set_ad_mode(ctx, 7), DUAL_ERR_ARGUMENT);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x[2]\noutput f = x[0] * x[1]\noutput g = sin(x[0])\n",
                                    "t", &prog), DUAL_SUCCESS);
  double x[4] = {1, 2, 3, NAN}, u[4] = {1, 0.5, 2, 1}, g[4];
  int32_t st[2];
  cr_assert_eq(dual_vjp(ctx, prog, 2, x, 2, NULL, 0, NULL, 2, NULL, 2, g, 2, st), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "cotangent") != NULL);
  cr_assert_eq(dual_vjp(ctx, prog, 2, x, 2, NULL, 0, u, 1, NULL, 2, g, 2, st), DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_vjp(ctx, prog, 2, x, 2, NULL, 0, u, 2, NULL, 2, g, 1, st), DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_vjp(ctx, prog, 2, x, 2, NULL, 0, u, 2, NULL, 2, g, 2, st), DUAL_SUCCESS);
  /* point 0: g = u0 * (x1, x0) + u1 * (cos x0, 0); point 1 has a NaN input and is flagged */
  cr_assert(fabs(g[0] - (1.0 * 2.0 + 0.5 * cos(1.0))) <= 1e-15 && g[1] == 1.0);
  cr_assert_eq(st[0], 0);
  cr_assert(st[1] & DUAL_PT_BAD_INPUT);
  u[0] = INFINITY;
  cr_assert_eq(dual_vjp(ctx, prog, 1, x, 2, NULL, 0, u, 2, NULL, 2, g, 2, st), DUAL_SUCCESS);
  cr_assert(st[0] & DUAL_PT_BAD_INPUT, "a non-finite cotangent flags its point");
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
