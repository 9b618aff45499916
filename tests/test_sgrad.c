/*
 * test_sgrad.c — dual_sgrad on the CPU against closed forms: E[(x + s xi)^2], E[exp(x + s xi)],
 * E[sin(x + s xi)] and a multivariate case, each gradient within 4.5 exact standard errors of
 * the truth and each standard error within a few percent of the exact sd / sqrt(S); the 1/sqrt(S)
 * fall at S = 64, 1024, 16384; antithetic sampling (exact on odd gradients, and the closed-form
 * pair variance on sin); the score-function estimator on an indicator and on sigma; forward and
 * reverse mode; bitwise reproducibility over threads, chunks, widths and runs; errors.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "test_arrays.h"

enum { NPT = 48 };
static const double SIG = 0.5;

/* x of point q: spread over [-1.5, 1.5]. */
static double xq(int q) { return -1.5 + 3.0 * q / (NPT - 1); }

typedef struct closed_form {
  const char *src;
  double (*mean_f)(double x);
  double (*mean_g)(double x);
  double (*sd_g)(double x); /* exact standard deviation of the per-sample gradient */
} closed_form;

static double sq_f(double x) { return x * x + SIG * SIG; }
static double sq_g(double x) { return 2 * x; }
static double sq_sd(double x) { (void)x; return 2 * SIG; }
static double ex_f(double x) { return exp(x + SIG * SIG / 2); }
static double ex_sd(double x) { return sqrt(exp(2 * x + SIG * SIG) * (exp(SIG * SIG) - 1)); }
static double sn_f(double x) { return sin(x) * exp(-SIG * SIG / 2); }
static double sn_g(double x) { return cos(x) * exp(-SIG * SIG / 2); }
/* Var cos(x + s xi) = (1 + cos 2x e^{-2 s^2}) / 2 - cos^2 x e^{-s^2} */
static double sn_sd(double x) {
  return sqrt((1 + cos(2 * x) * exp(-2 * SIG * SIG)) / 2 - cos(x) * cos(x) * exp(-SIG * SIG));
}

static const closed_form FORMS[3] = {
    {"input x\nparam s\noutput f = (x + s * normal())^2\n", sq_f, sq_g, sq_sd},
    {"input x\nparam s\noutput f = exp(normal(x, s))\n", ex_f, ex_f, ex_sd},
    {"input x\nparam s\noutput f = sin(x + s * normal())\n", sn_f, sn_g, sn_sd},
};

static void points(double *x, double *p) {
  for (int q = 0; q < NPT; ++q) x[q] = xq(q), p[q] = SIG;
}

/* Every gradient within 4.5 exact standard errors (sd / sqrt(S)) of the truth — about 7e-6 per
 * check, a few hundred checks; the reported SE would make the bound itself random, and at
 * S = 64 it is off by up to ~30% — every SE within `tol` of the exact one; E f within 4 exact
 * standard errors (the f of these forms has variance below that of g times 4). */
static void check_form(const closed_form *cf, int ad_mode, int64_t S, double tol, double *mean_se) {
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, ad_mode, 0);
  dual_program *prog = compile_ok(ctx, cf->src);
  double x[NPT], p[NPT], f[NPT], g[NPT], se[NPT];
  int32_t st[NPT];
  points(x, p);
  cr_assert_eq(dual_sgrad(ctx, prog, NPT, x, 1, p, 1, S, 2026, 0, f, g, 1, se, 1, st), DUAL_SUCCESS,
               "%s", dual_context_last_error(ctx));
  double sum = 0;
  for (int q = 0; q < NPT; ++q) {
    const double want = cf->mean_g(x[q]), exact_se = cf->sd_g(x[q]) / sqrt((double)S);
    cr_assert_eq(st[q], 0);
    cr_assert(fabs(g[q] - want) <= 4.5 * exact_se, "%s S=%lld x=%g: gradient %.10g, truth %.10g, SE %.3g (exact %.3g)",
              cf->src, (long long)S, x[q], g[q], want, se[q], exact_se);
    cr_assert(fabs(se[q] / exact_se - 1) <= tol, "%s S=%lld x=%g: SE %.6g, exact %.6g", cf->src,
              (long long)S, x[q], se[q], exact_se);
    cr_assert(fabs(f[q] - cf->mean_f(x[q])) <= 4 * 2 * exact_se + 1e-12, "%s x=%g: E f %.10g, truth %.10g",
              cf->src, x[q], f[q], cf->mean_f(x[q]));
    sum += se[q] / exact_se;
  }
  if (mean_se) *mean_se = sum / NPT;
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(sgrad, closed_forms_within_four_standard_errors) {
  for (int i = 0; i < 3; ++i) {
    check_form(&FORMS[i], DUAL_AD_FORWARD, 4096, 0.12, NULL);
    check_form(&FORMS[i], DUAL_AD_REVERSE, 4096, 0.12, NULL);
  }
}

/* SE * sqrt(S) estimates the sd: its mean over the points stays within a few percent of the
 * exact value at S = 64, 1024 and 16384, so the SE itself falls as 1 / sqrt(S).  Per point at
 * S = 64 only gross errors are caught (within a factor 2): exp(normal(x, 0.5))'s gradient has
 * kurtosis 8.9, so its sample sd over 64 samples varies by about 18% (sqrt((8.9 - 1) / 256))
 * with a long upper tail. */
Test(sgrad, standard_error_falls_as_one_over_sqrt_samples) {
  static const int64_t S[3] = {64, 1024, 16384};
  for (int i = 0; i < 3; ++i) {
    double r[3];
    for (int k = 0; k < 3; ++k) check_form(&FORMS[i], DUAL_AD_FORWARD, S[k], k == 0 ? 1.0 : 0.15, &r[k]);
    for (int k = 0; k < 3; ++k)
      cr_assert(fabs(r[k] - 1) <= (k == 0 ? 0.08 : 0.03), "form %d S=%lld: mean SE / (sd/sqrt S) = %.4f",
                i, (long long)S[k], r[k]);
  }
}

/* f = exp(x0 + 0.5 xi0) sin(x1 + 0.3 xi1) + (x2 + 0.2 xi2) x0, independent draws:
 * E f = e^{x0 + 0.125 - 0.045} sin x1 + x2 x0, gradient (E f0 + x2, e^{..} cos x1, x0); the last
 * component has no noise, so its SE is exactly 0 and the estimate exactly x0. */
Test(sgrad, multivariate) {
  static const char *src = "input x[3]\n"
                           "output f = exp(x[0] + 0.5 * normal()) * sin(normal(x[1], 0.3)) + "
                           "(x[2] + 0.2 * normal()) * x[0]\n";
  enum { B = 40, N = 3 };
  for (int mode = 0; mode < 2; ++mode) {
    dual_context *ctx = mode_context(DUAL_DEVICE_CPU, mode ? DUAL_AD_REVERSE : DUAL_AD_FORWARD, 0);
    dual_program *prog = compile_ok(ctx, src);
    double x[B * N], f[B], g[B * N], se[B * N];
    for (int q = 0; q < B; ++q)
      x[q * N] = -0.5 + 0.03 * q, x[q * N + 1] = 0.1 * q - 2, x[q * N + 2] = 0.7 - 0.05 * q;
    cr_assert_eq(dual_sgrad(ctx, prog, B, x, N, NULL, 0, 8192, 7, 0, f, g, N, se, N, NULL), DUAL_SUCCESS,
                 "%s", dual_context_last_error(ctx));
    for (int q = 0; q < B; ++q) {
      const double *xs = x + q * N, e = exp(xs[0] + 0.125 - 0.045);
      const double want[N] = {e * sin(xs[1]) + xs[2], e * cos(xs[1]), xs[0]};
      for (int j = 0; j < N; ++j)
        cr_assert(fabs(g[q * N + j] - want[j]) <= 4 * se[q * N + j], "point %d g[%d] %.10g truth %.10g SE %.3g",
                  q, j, g[q * N + j], want[j], se[q * N + j]);
      cr_assert_eq(se[q * N + 2], 0.0);
      cr_assert_eq(g[q * N + 2], xs[0]);
      cr_assert(fabs(f[q] - (e * sin(xs[1]) + xs[2] * xs[0])) <= 0.1);
    }
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
}

/* Antithetic pairs: a gradient odd in xi around a constant (g = 2x + s xi + (s xi)^3) is exact up
 * to rounding, where plain sampling has SE ~ sd / sqrt(S); on sin the SE is the closed-form pair
 * variance cos^2 x [(1 + e^{-2 s^2}) / 2 - e^{-s^2}] over S / 2 pairs (only cos(x) cos(s xi), the
 * even part, is left: near x = pi/2 far below plain sampling, at x = 0 twice its variance). */
Test(sgrad, antithetic_sampling) {
  enum { S = 4096 };
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_FORWARD, 0);
  dual_program *odd = compile_ok(ctx, "input x\nparam s\nlet z = s * normal()\noutput f = x^2 + x * z + x * z^3\n");
  double x[NPT], p[NPT], g[NPT], se[NPT], ga[NPT], sea[NPT];
  points(x, p);
  cr_assert_eq(dual_sgrad(ctx, odd, NPT, x, 1, p, 1, S, 3, 0, NULL, g, 1, se, 1, NULL), DUAL_SUCCESS);
  cr_assert_eq(dual_sgrad(ctx, odd, NPT, x, 1, p, 1, S, 3, DUAL_SGRAD_ANTITHETIC, NULL, ga, 1, sea, 1, NULL),
               DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  for (int q = 0; q < NPT; ++q) {
    const double sd = sqrt(SIG * SIG + 6 * pow(SIG, 4) + 15 * pow(SIG, 6)); /* Var(s xi + s^3 xi^3) */
    cr_assert(fabs(se[q] * sqrt((double)S) / sd - 1) < 0.15, "plain SE %.4g", se[q]);
    cr_assert(fabs(ga[q] - 2 * x[q]) <= 1e-14 && sea[q] <= 1e-15, "x=%g: antithetic %.17g (SE %.3g), want %.17g",
              x[q], ga[q], sea[q], 2 * x[q]);
  }
  dual_program *sn = compile_ok(ctx, FORMS[2].src);
  cr_assert_eq(dual_sgrad(ctx, sn, NPT, x, 1, p, 1, S, 3, DUAL_SGRAD_ANTITHETIC, NULL, ga, 1, sea, 1, NULL),
               DUAL_SUCCESS);
  for (int q = 0; q < NPT; ++q) {
    const double c = cos(x[q]);
    const double var = c * c * ((1 + exp(-2 * SIG * SIG)) / 2 - exp(-SIG * SIG));
    const double want = sqrt(var / (S / 2));
    cr_assert(fabs(ga[q] - sn_g(x[q])) <= 4 * sea[q] + 1e-15, "x=%g: %.10g truth %.10g", x[q], ga[q], sn_g(x[q]));
    cr_assert(want < 1e-6 || fabs(sea[q] / want - 1) < 0.12, "x=%g: antithetic SE %.5g, closed form %.5g", x[q],
              sea[q], want);
  }
  dual_program_destroy(&odd);
  dual_program_destroy(&sn);
  dual_context_destroy(&ctx);
}

static double std_normal_cdf(double t) { return 0.5 * erfc(-t / sqrt(2.0)); }

/* Score function: E[1{normal(x, s) > 0}] = Phi(x / s), gradient phi(x / s) / s, where the pathwise
 * gradient is 0; and E[normal(x, s)^2] = x^2 + s^2 with both x and s inputs: gradient (2x, 2s). */
Test(sgrad, score_function_estimator) {
  enum { S = 16384 };
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  dual_program *ind = compile_ok(ctx, "input x\nparam s\noutput f = normal(x, s) > 0\n");
  double x[NPT], p[NPT], f[NPT], g[NPT], se[NPT];
  points(x, p);
  cr_assert_eq(dual_sgrad(ctx, ind, NPT, x, 1, p, 1, S, 11, 0, f, g, 1, se, 1, NULL), DUAL_SUCCESS);
  for (int q = 0; q < NPT; ++q) cr_assert(g[q] == 0.0 && se[q] == 0.0, "pathwise indicator gradient %g", g[q]);
  for (int anti = 0; anti < 2; ++anti) {
    cr_assert_eq(dual_sgrad(ctx, ind, NPT, x, 1, p, 1, S, 11, DUAL_SGRAD_SCORE | (anti ? DUAL_SGRAD_ANTITHETIC : 0),
                            f, g, 1, se, 1, NULL),
                 DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    for (int q = 0; q < NPT; ++q) {
      const double t = x[q] / SIG, want = exp(-t * t / 2) / sqrt(2 * M_PI) / SIG;
      cr_assert(fabs(g[q] - want) <= 4 * se[q], "x=%g: score gradient %.6g truth %.6g SE %.3g", x[q], g[q], want, se[q]);
      cr_assert(se[q] > 0 && se[q] < 0.05);
      cr_assert(fabs(f[q] - std_normal_cdf(t)) <= 0.02, "x=%g: E f %.5g truth %.5g", x[q], f[q], std_normal_cdf(t));
    }
  }
  dual_program *sq = compile_ok(ctx, "input x\ninput s\noutput f = normal(x, s)^2\n");
  double xs[NPT * 2], g2[NPT * 2], se2[NPT * 2];
  for (int q = 0; q < NPT; ++q) xs[2 * q] = xq(q), xs[2 * q + 1] = 0.3 + 0.02 * q;
  cr_assert_eq(dual_sgrad(ctx, sq, NPT, xs, 2, NULL, 0, S, 5, DUAL_SGRAD_SCORE, NULL, g2, 2, se2, 2, NULL),
               DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  for (int q = 0; q < NPT; ++q)
    for (int j = 0; j < 2; ++j)
      cr_assert(fabs(g2[2 * q + j] - 2 * xs[2 * q + j]) <= 4 * se2[2 * q + j], "point %d d/d%s: %.6g truth %.6g SE %.3g",
                q, j ? "s" : "x", g2[2 * q + j], 2 * xs[2 * q + j], se2[2 * q + j]);
  dual_program_destroy(&ind);
  dual_program_destroy(&sq);
  dual_context_destroy(&ctx);
}

/* The same bits for any thread count, width, internal chunking (points 0..99 of a 5000-point
 * batch, which the CPU takes in chunks of 4096, against a 100-point batch) and run; forward and
 * reverse mode agree to rounding. */
Test(sgrad, bitwise_reproducible) {
  static const char *src = "input x[5]\nparam w\n"
                           "output f = log1p(sum(i in 0..5, (x[i] + w * normal())^2)) * exp(0.1 * uniform(x[0], x[1]))\n";
  enum { B = 5000, N = 5, S = 64 };
  double *x = malloc(sizeof(double) * B * N), *p = malloc(sizeof(double) * B);
  double *f[4], *g[4], *se[4];
  for (int k = 0; k < 4; ++k) f[k] = malloc(sizeof(double) * B), g[k] = malloc(sizeof(double) * B * N), se[k] = malloc(sizeof(double) * B * N);
  for (int i = 0; i < B * N; ++i) x[i] = sin(0.37 * i);
  for (int q = 0; q < B; ++q) p[q] = 0.2 + 0.001 * (q % 50);
  const struct { int threads, width, count, mode; } runs[4] = {
      {1, 0, B, DUAL_AD_FORWARD}, {2, 1, B, DUAL_AD_FORWARD}, {2, 4, 100, DUAL_AD_FORWARD}, {2, 0, B, DUAL_AD_REVERSE}};
  for (int k = 0; k < 4; ++k) {
    dual_context *ctx = mode_context(DUAL_DEVICE_CPU, runs[k].mode, 0);
    cr_assert_eq(dual_context_set_threads(ctx, runs[k].threads), DUAL_SUCCESS);
    cr_assert_eq(dual_context_set_width(ctx, runs[k].width), DUAL_SUCCESS);
    dual_program *prog = compile_ok(ctx, src);
    cr_assert_eq(dual_sgrad(ctx, prog, runs[k].count, x, N, p, 1, S, 99, DUAL_SGRAD_ANTITHETIC, f[k], g[k], N, se[k],
                            N, NULL),
                 DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  for (int k = 1; k < 3; ++k)
    for (int q = 0; q < runs[k].count; ++q) {
      cr_assert(memcmp(&f[k][q], &f[0][q], sizeof(double)) == 0, "run %d point %d: f differs", k, q);
      cr_assert(memcmp(g[k] + q * N, g[0] + q * N, N * sizeof(double)) == 0, "run %d point %d: g differs", k, q);
      cr_assert(memcmp(se[k] + q * N, se[0] + q * N, N * sizeof(double)) == 0, "run %d point %d: se differs", k, q);
    }
  for (int i = 0; i < B * N; ++i)
    cr_assert(fabs(g[3][i] - g[0][i]) <= 1e-13 * (1 + fabs(g[0][i])), "reverse %d: %.17g vs %.17g", i, g[3][i], g[0][i]);
  for (int k = 0; k < 4; ++k) free(f[k]), free(g[k]), free(se[k]);
  free(x), free(p);
}

/* dual_run with DUAL_MODE_SGRAD and strided outputs equals dual_sgrad; the errors. */
Test(sgrad, general_entry_point_and_errors) {
  enum { B = 30, S = 32 };
  dual_context *ctx = mode_context(DUAL_DEVICE_CPU, DUAL_AD_AUTO, 0);
  dual_program *prog = compile_ok(ctx, "input x[2]\noutput f = x[0] * exp(normal(x[1], 0.5))\n");
  double x[B * 2], f[B], g[B * 2], se[B * 2], out[B * 8];
  int32_t st[B];
  for (int i = 0; i < B * 2; ++i) x[i] = 0.1 * i - 1;
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, S, 4, 0, f, g, 2, se, 2, st), DUAL_SUCCESS);
  dual_batch b;
  dual_batch_init(&b);
  b.count = B, b.x = x, b.x_ps = 2, b.x_es = 1;
  b.y = out, b.y_ps = 8, b.y_es = 1;
  b.d = out + 1, b.d_ps = 8, b.d_cs = 3;
  b.h = out + 2, b.h_ps = 8, b.h_es = 3;
  b.samples = S, b.seed = 4;
  cr_assert_eq(dual_run(ctx, prog, DUAL_MODE_SGRAD, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  for (int q = 0; q < B; ++q) {
    cr_assert_eq(out[q * 8], f[q]);
    for (int j = 0; j < 2; ++j) {
      cr_assert_eq(out[q * 8 + 1 + 3 * j], g[q * 2 + j]);
      cr_assert_eq(out[q * 8 + 2 + 3 * j], se[q * 2 + j]);
    }
  }
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 1, 4, 0, f, g, 2, se, 2, st), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 6, 4, DUAL_SGRAD_ANTITHETIC, f, g, 2, se, 2, st), DUAL_SUCCESS);
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 7, 4, DUAL_SGRAD_ANTITHETIC, f, g, 2, se, 2, st), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 8, 4, 8, f, g, 2, se, 2, st), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 8, 4, 0, f, g, 1, se, 2, st), DUAL_ERR_DIMENSION);
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 8, 4, 0, NULL, NULL, 2, NULL, 2, st), DUAL_SUCCESS);
  dual_program *two = compile_ok(ctx, "input x\noutput a = x * normal()\noutput b = x\n");
  cr_assert_eq(dual_sgrad(ctx, two, B, x, 1, NULL, 0, 8, 4, 0, f, g, 1, se, 1, st), DUAL_ERR_DIMENSION);
  cr_assert(strstr(dual_context_last_error(ctx), "scalar program") != NULL, "%s", dual_context_last_error(ctx));
  dual_program *none = compile_ok(ctx, "input x\noutput f = x * uniform()\n");
  cr_assert_eq(dual_sgrad(ctx, none, B, x, 1, NULL, 0, 8, 4, DUAL_SGRAD_SCORE, f, g, 1, se, 1, st), DUAL_ERR_UNSUPPORTED);
  cr_assert(strstr(dual_context_last_error(ctx), "normal(mu, sigma)") != NULL, "%s", dual_context_last_error(ctx));
  dual_program *reuse = compile_ok(ctx, "input x\nlet z = normal()\noutput f = fma(0.5, z, x) + z\n");
  cr_assert_eq(dual_sgrad(ctx, reuse, B, x, 1, NULL, 0, 8, 4, DUAL_SGRAD_SCORE, f, g, 1, se, 1, st), DUAL_ERR_UNSUPPORTED);
  cr_assert(strstr(dual_context_last_error(ctx), "used outside") != NULL, "%s", dual_context_last_error(ctx));
  /* a NaN input flags its point only */
  x[6] = NAN;
  cr_assert_eq(dual_sgrad(ctx, prog, B, x, 2, NULL, 0, 8, 4, 0, f, g, 2, se, 2, st), DUAL_SUCCESS);
  for (int q = 0; q < B; ++q) cr_assert_eq(st[q] != 0, q == 3, "point %d status %d", q, st[q]);
  dual_program_destroy(&prog), dual_program_destroy(&two), dual_program_destroy(&none), dual_program_destroy(&reuse);
  dual_context_destroy(&ctx);
}
