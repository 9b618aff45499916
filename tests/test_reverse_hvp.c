/*
 * test_reverse_hvp.c — forward-over-reverse Hessians and Hessian-vector products (reverse mode
 * for dual_hessian / dual_hvp): against the hand-derived Hessians of hess and the six classic
 * functions (tests/ref/classic_ref.c, hess_ref.c), against nested forward mode (itself checked by
 * test_hessian.c) on random programs, exact symmetry, bitwise reproducibility across threads,
 * batch splits and checkpointed segments, and AUTO's choice.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_program.h"
#include "classic_ref.h"
#include "dualbatch.h"
#include "hess_ref.h"
#include "random_program.h"
#include "test_arrays.h"


static void hessian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                    const double *p, double *y, double *J, double *H, int layout, int32_t *st) {
  const int64_t n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int64_t len = layout == DUAL_HESSIAN_PACKED ? n * (n + 1) / 2 : n * n;
  int rc = dual_hessian(ctx, prog, B, x, n, p, dual_program_num_params(prog), y, m, J, m * n, H,
                        m * len, layout, st);
  cr_assert_eq(rc, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
}

static void hvp(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                const double *p, const double *v, double *y, double *J, double *Hv, int32_t *st) {
  const int64_t n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  int rc = dual_hvp(ctx, prog, B, x, n, p, dual_program_num_params(prog), v, n, y, m, J, m * n,
                    Hv, m * n, st);
  cr_assert_eq(rc, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
}

/* Bitwise equal arrays, NaN equal to NaN (IEEE leaves a NaN's sign and payload open). */
static int same(const double *a, const double *b, int64_t len) {
  for (int64_t i = 0; i < len; ++i)
    if (!same_bits(a[i], b[i])) return 0;
  return 1;
}

/* hess and the classic functions: the reverse-mode Hessian against the hand-derived one. */
Test(reverse_hvp, hessians_match_hand_derived_references) {
  dual_context *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  double worst = 0.0;
  for (int f = -1; f < classic_fn_count; ++f) {
    dual_program *prog = NULL;
    if (f < 0) prog = bench_program(rev, "hess");
    else cr_assert_eq(dual_program_compile(rev, classic_fns[f].source, classic_fns[f].name, &prog), DUAL_SUCCESS);
    const int n = dual_program_num_inputs(prog);
    const int64_t B = 200;
    uint64_t s = 0x1f0ULL + (uint64_t)(f + 1);
    double *x = malloc(sizeof(double) * B * n), *H = malloc(sizeof(double) * B * n * n);
    double *ref = malloc(sizeof(double) * n * n), *y = malloc(sizeof(double) * B);
    double *J = malloc(sizeof(double) * B * n), *g = malloc(sizeof(double) * n);
    cr_assert(x && H && ref && y && J && g);
    for (int64_t k = 0; k < B * n; ++k) x[k] = rp_uniform(&s, -1.5, 1.5);
    hessian(rev, prog, B, x, NULL, y, J, H, DUAL_HESSIAN_FULL, NULL);
    cr_assert_eq(dual_context_last_ad_mode(rev), DUAL_AD_REVERSE);
    double w = 0.0;
    for (int64_t b = 0; b < B; ++b) {
      const double *xb = x + b * n;
      if (f < 0) hess_ref_hessian(xb, ref), hess_ref_gradient(xb, g);
      else classic_fns[f].hessian(xb, ref), classic_fns[f].gradient(xb, g);
      double scale = 0.0, gs = 0.0;
      for (int k = 0; k < n * n; ++k) scale = fmax(scale, fabs(ref[k]));
      for (int k = 0; k < n; ++k) gs = fmax(gs, fabs(g[k]));
      for (int k = 0; k < n * n; ++k) w = fmax(w, fabs(H[b * n * n + k] - ref[k]) / scale);
      for (int k = 0; k < n; ++k) w = fmax(w, fabs(J[b * n + k] - g[k]) / gs);
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < j; ++k)
          cr_assert(memcmp(&H[b * n * n + j * n + k], &H[b * n * n + k * n + j], 8) == 0, "not symmetric");
    }
    cr_log_info("%s: reverse-mode Hessian and gradient, worst scaled error %.3g", f < 0 ? "hess" : classic_fns[f].name, w);
    worst = fmax(worst, w);
    free(x), free(H), free(ref), free(y), free(J), free(g);
    dual_program_destroy(&prog);
  }
  cr_assert(worst <= 1e-12, "worst %.3g", worst);
  dual_context_destroy(&rev);
}

/* f(x, y) = sqrt(x y) at (0, 1), where the adjoint of x y is infinite: a d' term that is exactly
 * zero adds nothing even against that infinite adjoint (engine/interp_rev.h), so the Hessian is
 * the limit along x -> 0+ — H_xx = -y^2 / (4 (xy)^(3/2)) -> -inf, H_xy = 1 / (4 sqrt(xy)) -> +inf,
 * H_yy = -x^2 / (4 (xy)^(3/2)) -> 0 (f is 0 on the whole line x = 0) — instead of the NaN that
 * 0 * inf gave; the gradient's dx is +inf, dy = 0/0 is NaN.  Structurally zero entries (z does
 * not enter x y) are exactly +0, even beside infinities. */
Test(reverse_hvp, zero_second_derivative_terms_add_nothing_against_infinite_adjoints) {
  dual_context *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(rev, "input x\ninput y\ninput z\noutput f = sqrt(x * y) + z", "sqrtxy", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(rev));
  const double x[3] = {0.0, 1.0, 2.0};
  double y, J[3], H[9], Hv[3];
  int32_t st = 0;
  hessian(rev, prog, 1, x, NULL, &y, J, H, DUAL_HESSIAN_FULL, &st);
  cr_assert_eq(dual_context_last_ad_mode(rev), DUAL_AD_REVERSE);
  cr_assert(y == 2.0);
  cr_assert(J[0] == INFINITY && isnan(J[1]) && J[2] == 1.0, "gradient %g %g %g", J[0], J[1], J[2]);
  cr_assert(H[0] == -INFINITY, "H_xx = %g", H[0]);
  cr_assert(H[1] == INFINITY && H[3] == INFINITY, "H_xy = %g, H_yx = %g", H[1], H[3]);
  cr_assert(H[4] == 0.0 && !signbit(H[4]), "H_yy = %g", H[4]);
  const int zs[5] = {2, 5, 6, 7, 8}; /* (x,z) (y,z) (z,x) (z,y) (z,z) */
  for (int i = 0; i < 5; ++i) cr_assert(H[zs[i]] == 0.0 && !signbit(H[zs[i]]), "H[%d] = %g", zs[i], H[zs[i]]);
  /* an HVP along (1, 0, 0) is the sweep that gave H's column x: its y entry takes the partial
   * d(xy)/dy = x = 0 times the infinite g' of x y, NaN as in the gradient (the Hessian stores
   * (x, y) from the sweep along y instead, j <= k) */
  const double v[3] = {1.0, 0.0, 0.0};
  hvp(rev, prog, 1, x, NULL, v, NULL, NULL, Hv, &st);
  cr_assert(Hv[0] == -INFINITY && isnan(Hv[1]) && Hv[2] == 0.0 && !signbit(Hv[2]), "Hv %g %g %g", Hv[0],
            Hv[1], Hv[2]);
  dual_program_destroy(&prog);
  dual_context_destroy(&rev);
}

/* f(x, y) = y sqrt(x) at (0, 2), where the tangent of sqrt(x) along x is infinite: y * s has no
 * second partial in s alone (ops.def: MUL may have only d2/da db), so that term of d' is left out
 * rather than computed as 0 * inf = NaN (engine/interp_rev.h), and the Hessian is the limit along
 * x -> 0+: H_xx = -y / (4 x^(3/2)) -> -inf, H_xy = 1 / (2 sqrt(x)) -> +inf, H_yy = 0; the gradient
 * (y / (2 sqrt(x)), sqrt(x)) = (+inf, 0).  Before, H_xx was NaN. */
Test(reverse_hvp, second_partials_that_are_always_zero_add_nothing_against_infinite_tangents) {
  dual_context *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(rev, "input x\ninput y\noutput f = y * sqrt(x)", "ysqrtx", &prog),
               DUAL_SUCCESS, "%s", dual_context_last_error(rev));
  const double x[2] = {0.0, 2.0};
  double y, J[2], H[4], Hv[2];
  int32_t st = 0;
  hessian(rev, prog, 1, x, NULL, &y, J, H, DUAL_HESSIAN_FULL, &st);
  cr_assert_eq(dual_context_last_ad_mode(rev), DUAL_AD_REVERSE);
  cr_assert(y == 0.0);
  cr_assert(J[0] == INFINITY && J[1] == 0.0, "gradient %g %g", J[0], J[1]);
  cr_assert(H[0] == -INFINITY, "H_xx = %g", H[0]);
  cr_assert(H[1] == INFINITY && H[2] == INFINITY, "H_xy = %g, H_yx = %g", H[1], H[2]);
  cr_assert(H[3] == 0.0, "H_yy = %g", H[3]);
  const double v[2] = {1.0, 0.0}; /* the sweep along x: H's column x */
  hvp(rev, prog, 1, x, NULL, v, NULL, NULL, Hv, &st);
  cr_assert(Hv[0] == -INFINITY && Hv[1] == INFINITY, "Hv %g %g", Hv[0], Hv[1]);
  dual_program_destroy(&prog);
  dual_context_destroy(&rev);
}

/* Random programs: forward-over-reverse against nested forward mode (row-scaled, 1e-12: the two
 * sum the same second-order terms in different orders), HVPs and full / packed Hessians; the
 * values bitwise equal. */
Test(reverse_hvp, random_programs_match_forward_mode) {
  dual_context *fwd = mode_context(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0), *rev = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 0);
  double worst = 0.0;
  int64_t entries = 0, nonfinite = 0;
  for (int i = 0; i < 150; ++i) {
    uint64_t s = 0xf0eULL + (uint64_t)i;
    const int nin = 1 + rp_pick(&s, 20), m = 1 + rp_pick(&s, 2), np = 1;
    dual_program *prog = rp_random_program(fwd, &s, 30, nin, np, m);
    cr_assert(prog != NULL);
    const int64_t B = 40, len = (int64_t)nin * (nin + 1) / 2;
    double *x = malloc(sizeof(double) * B * nin), *p = malloc(sizeof(double) * B * np);
    double *v = malloc(sizeof(double) * B * nin);
    double *y1 = malloc(sizeof(double) * B * m), *y2 = malloc(sizeof(double) * B * m);
    double *J1 = malloc(sizeof(double) * B * m * nin), *J2 = malloc(sizeof(double) * B * m * nin);
    double *H1 = malloc(sizeof(double) * B * m * nin * nin), *H2 = malloc(sizeof(double) * B * m * nin * nin);
    int32_t *s1 = malloc(sizeof(int32_t) * B), *s2 = malloc(sizeof(int32_t) * B);
    cr_assert(x && p && v && y1 && y2 && J1 && J2 && H1 && H2 && s1 && s2);
    for (int64_t k = 0; k < B * nin; ++k) x[k] = rp_uniform(&s, -2.0, 2.0), v[k] = rp_uniform(&s, -1.0, 1.0);
    for (int64_t k = 0; k < B * np; ++k) p[k] = rp_uniform(&s, -1.0, 1.0);
    for (int form = 0; form < 3; ++form) { /* HVP, full, packed */
      const int64_t per = form == 0 ? nin : (form == 1 ? (int64_t)nin * nin : len);
      if (form == 0) {
        hvp(fwd, prog, B, x, p, v, y1, J1, H1, s1), hvp(rev, prog, B, x, p, v, y2, J2, H2, s2);
      } else {
        const int layout = form == 1 ? DUAL_HESSIAN_FULL : DUAL_HESSIAN_PACKED;
        hessian(fwd, prog, B, x, p, y1, J1, H1, layout, s1), hessian(rev, prog, B, x, p, y2, J2, H2, layout, s2);
      }
      cr_assert(same(y1, y2, B * m), "program %d: values differ", i);
      for (int64_t b = 0; b < B; ++b) {
        if (s1[b] & (DUAL_PT_SINGULAR | DUAL_PT_DOMAIN | DUAL_PT_NAN | DUAL_PT_INF)) continue;
        for (int r = 0; r < m; ++r) {
          const double *h1 = H1 + (b * m + r) * per, *h2 = H2 + (b * m + r) * per;
          double scale = 0.0;
          for (int64_t k = 0; k < per; ++k) scale = fmax(scale, fabs(h1[k]));
          if (scale == 0.0) scale = 1.0;
          for (int64_t k = 0; k < per; ++k) {
            if (!isfinite(h1[k]) || !isfinite(h2[k])) { ++nonfinite; continue; }
            worst = fmax(worst, fabs(h1[k] - h2[k]) / scale), ++entries;
          }
        }
      }
    }
    free(x), free(p), free(v), free(y1), free(y2), free(J1), free(J2), free(H1), free(H2), free(s1), free(s2);
    dual_program_destroy(&prog);
  }
  cr_log_info("150 random programs: forward-over-reverse vs nested forward, worst row-scaled "
              "difference %.3g over %lld entries (%lld non-finite skipped)", worst, (long long)entries,
              (long long)nonfinite);
  cr_assert(worst <= 1e-12);
  dual_context_destroy(&fwd), dual_context_destroy(&rev);
}

/* Threads, batch splits and checkpointed segments give the same bits. */
Test(reverse_hvp, bitwise_across_threads_splits_and_segments) {
  dual_context *one = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 1), *two = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 2);
  dual_context *cut = mode_context(DUAL_DEVICE_CPU, DUAL_AD_REVERSE, 1);
  uint64_t s = 0x5f1ULL;
  dual_program *prog = rp_chain_program(one, &s, 6, 2, 300);
  cr_assert(prog != NULL);
  const int64_t B = 101, n = 6, m = 2;
  double *x = malloc(sizeof(double) * B * n), *y = malloc(sizeof(double) * B * m);
  double *J = malloc(sizeof(double) * B * m * n);
  double *H1 = malloc(sizeof(double) * B * m * n * n), *H2 = malloc(sizeof(double) * B * m * n * n);
  cr_assert(x && y && J && H1 && H2);
  for (int64_t k = 0; k < B * n; ++k) x[k] = rp_uniform(&s, -2.0, 2.0);
  hessian(one, prog, B, x, NULL, y, J, H1, DUAL_HESSIAN_FULL, NULL);
  hessian(two, prog, 60, x, NULL, y, J, H2, DUAL_HESSIAN_FULL, NULL);
  hessian(two, prog, B - 60, x + 60 * n, NULL, y + 60 * m, J + 60 * m * n, H2 + 60 * m * n * n, DUAL_HESSIAN_FULL, NULL);
  cr_assert(same(H1, H2, B * m * n * n), "threads / splits differ");
  int segmented = 0;
  for (double lim = 16.0 * 8.0 * 8.0 * (double)dual_program_num_instructions(prog); lim > 2048; lim *= 0.8) {
    cr_assert_eq(dual_context_set_memory_limit(cut, (int64_t)lim), DUAL_SUCCESS);
    if (dual_hessian(cut, prog, B, x, n, NULL, 0, y, m, J, m * n, H2, m * n * n, DUAL_HESSIAN_FULL, NULL) != DUAL_SUCCESS) break;
    if (strstr(dual_context_last_note(cut), "segments") == NULL) continue;
    ++segmented;
    cr_assert(same(H1, H2, B * m * n * n), "checkpointed Hessian differs (%s)",
              dual_context_last_note(cut));
  }
  cr_log_info("forward-over-reverse: %d checkpointed runs bitwise equal", segmented);
  cr_assert(segmented >= 2);
  free(x), free(y), free(J), free(H1), free(H2);
  dual_program_destroy(&prog);
  dual_context_destroy(&one), dual_context_destroy(&two), dual_context_destroy(&cut);
}

/* AUTO (run.c's model): forward-over-reverse for the HVP of a scalar function, nested forward for
 * an HVP of several outputs with few inputs and for Hessians of up to a few hundred inputs. */
Test(reverse_hvp, auto_mode_choice) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 1);
  dual_program *one = NULL, *three = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x[200]\noutput f = sum(i in 0..200, sin(x[i]) * x[(i + 1) % 200])\n", "b", &one), DUAL_SUCCESS);
  cr_assert_eq(dual_program_compile(ctx, "input x[8]\noutput f = x[0] * x[1]\noutput g = sin(x[2])\noutput h = x[7]\n", "t", &three), DUAL_SUCCESS);
  static double x[200], v[200], hv[600], H[200 * 200], y[3];
  for (int k = 0; k < 200; ++k) x[k] = 0.01 * k, v[k] = 1.0;
  hvp(ctx, one, 1, x, NULL, v, y, NULL, hv, NULL);
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_REVERSE);
  /* H v of sum sin(x_i) x_{i+1} with v = 1: -sin(x_k) x_{k+1} + cos(x_k) + cos(x_{k-1}) */
  for (int k = 0; k < 200; ++k) {
    const double want = -sin(x[k]) * x[(k + 1) % 200] + cos(x[k]) + cos(x[(k + 199) % 200]);
    cr_assert(fabs(hv[k] - want) <= 1e-14 * (1 + fabs(want)), "k %d: %.17g vs %.17g", k, hv[k], want);
  }
  hessian(ctx, one, 1, x, NULL, y, NULL, H, DUAL_HESSIAN_FULL, NULL);
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_FORWARD);
  hvp(ctx, three, 1, x, NULL, v, y, NULL, hv, NULL);
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_FORWARD);
  cr_assert(hv[0] == 1.0 && hv[1] == 1.0 && hv[8 + 2] == -sin(x[2]) && hv[16 + 7] == 0.0);
  dual_program_destroy(&one), dual_program_destroy(&three);
  dual_context_destroy(&ctx);
}
