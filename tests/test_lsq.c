/*
 * test_lsq.c — dual_lsq (Levenberg–Marquardt) on the CPU: a linear least-squares problem
 * against its normal equations solved in closed form, an exact exponential fit, statuses and
 * errors, and the Moré–Garbow–Hillstrom least-squares problems 1–18 from MINPACK's starting
 * points against lmder1's results (tests/data/minpack: initial norms check the problem
 * definitions; final norms and solutions are the reference).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "test_arrays.h"
#include "mgh_lsq.h"
#include "minpack_cases.h"

static dual_context *cpu(void) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  return ctx;
}


Test(lsq, straight_line_fit_matches_the_normal_equations) {
  /* residuals a + b t_i - y_i for 6 points with per-point data: the minimizer solves
   * [n, St; St, Stt] (a, b) = (Sy, Sty) */
  dual_context *ctx = cpu();
  dual_program *prog = compile_ok(ctx, "input a; input b; param y[6]\n"
                                    "output r[6]\nfor i in 0..6 { r[i] = a + b * (i + 1) - y[i] }\n");
  enum { B = 200 };
  double x[2 * B], y[6 * B], fn[B];
  int32_t info[B], it[B];
  for (int b = 0; b < B; ++b) {
    for (int i = 0; i < 6; ++i) y[6 * b + i] = 0.3 * b - 1.7 * (i + 1) + 0.1 * sin(3.0 * i + b);
    x[2 * b] = 0, x[2 * b + 1] = 0;
  }
  cr_assert_eq(dual_lsq(ctx, prog, NULL, B, x, 2, y, 6, info, it, fn), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  for (int b = 0; b < B; ++b) {
    double S = 6, St = 0, Stt = 0, Sy = 0, Sty = 0;
    for (int i = 0; i < 6; ++i) {
      const double t = i + 1, v = y[6 * b + i];
      St += t, Stt += t * t, Sy += v, Sty += t * v;
    }
    const double det = S * Stt - St * St;
    const double a = (Sy * Stt - St * Sty) / det, bb = (S * Sty - St * Sy) / det;
    cr_assert_eq(info[b], DUAL_SOLVE_CONVERGED, "point %d: %s", b, dual_solve_status_string(info[b]));
    cr_assert(fabs(x[2 * b] - a) <= 1e-9 * fmax(1, fabs(a)) && fabs(x[2 * b + 1] - bb) <= 1e-9 * fmax(1, fabs(bb)),
              "point %d: (%.15g, %.15g), normal equations (%.15g, %.15g)", b, x[2 * b], x[2 * b + 1], a, bb);
    double r2 = 0;
    for (int i = 0; i < 6; ++i) {
      const double r = a + bb * (i + 1) - y[6 * b + i];
      r2 += r * r;
    }
    cr_assert(fabs(fn[b] - sqrt(r2)) <= 1e-9 * sqrt(r2), "||r|| %.15g want %.15g", fn[b], sqrt(r2));
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(lsq, exact_exponential_fit_recovers_the_parameters) {
  /* y_i = c exp(-k t_i) exactly: the fit returns (c, k) with ||r|| ~ 0 */
  dual_context *ctx = cpu();
  dual_program *prog = compile_ok(ctx, "input c; input k; param y[8]\noutput r[8]\n"
                                    "for i in 0..8 { r[i] = c * exp(-k * i / 4) - y[i] }\n");
  enum { B = 64 };
  double x[2 * B], y[8 * B], fn[B];
  int32_t info[B];
  for (int b = 0; b < B; ++b) {
    const double c = 1 + 0.1 * b, k = 0.2 + 0.03 * b;
    for (int i = 0; i < 8; ++i) y[8 * b + i] = c * exp(-k * i / 4);
    x[2 * b] = 1, x[2 * b + 1] = 1;
  }
  cr_assert_eq(dual_lsq(ctx, prog, NULL, B, x, 2, y, 8, info, NULL, fn), DUAL_SUCCESS);
  for (int b = 0; b < B; ++b) {
    const double c = 1 + 0.1 * b, k = 0.2 + 0.03 * b;
    cr_assert_eq(info[b], DUAL_SOLVE_CONVERGED, "point %d: %s", b, dual_solve_status_string(info[b]));
    cr_assert(fabs(x[2 * b] - c) <= 1e-8 * c && fabs(x[2 * b + 1] - k) <= 1e-8 * k,
              "point %d: (%.12g, %.12g) want (%.12g, %.12g)", b, x[2 * b], x[2 * b + 1], c, k);
    cr_assert(fn[b] <= 1e-10, "||r|| = %g", fn[b]);
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

Test(lsq, statuses_and_errors) {
  dual_context *ctx = cpu();
  dual_program *prog = compile_ok(ctx, "input a; param y[3]\noutput r[3]\nfor i in 0..3 { r[i] = exp(a) - y[i] }\n");
  double x[3] = {0, 0, 0}, y[9] = {1, 2, 3, NAN, 1, 1, 5, 5, 5};
  int32_t info[3], it[3];
  double fn[3];
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.max_evals = 3;
  cr_assert_eq(dual_lsq(ctx, prog, &o, 3, x, 1, y, 3, info, it, fn), DUAL_SUCCESS);
  cr_assert(info[0] == DUAL_SOLVE_MAX_ITER, "%s", dual_solve_status_string(info[0]));
  cr_assert_eq(info[1], DUAL_SOLVE_NONFINITE);
  cr_assert_eq(info[2], DUAL_SOLVE_MAX_ITER);
  /* with the default budget: exp(a) = mean(y) = 2, and exactly 5 */
  x[0] = x[1] = x[2] = 0;
  cr_assert_eq(dual_lsq(ctx, prog, NULL, 3, x, 1, y, 3, info, it, fn), DUAL_SUCCESS);
  cr_assert_eq(info[0], DUAL_SOLVE_CONVERGED);
  cr_assert(fabs(x[0] - log(2.0)) <= 1e-9, "%.17g", x[0]);
  cr_assert(fabs(fn[0] - sqrt(2.0)) <= 1e-12);
  cr_assert_eq(info[2], DUAL_SOLVE_CONVERGED);
  cr_assert(fabs(x[2] - log(5.0)) <= 1e-9);
  /* m < n */
  dual_program *wide = compile_ok(ctx, "input a; input b\noutput r = a + b\n");
  cr_assert_eq(dual_lsq(ctx, wide, NULL, 1, x, 2, NULL, 0, NULL, NULL, NULL), DUAL_ERR_DIMENSION);
  cr_assert(strstr(dual_context_last_error(ctx), "m >= n") != NULL);
  dual_solve_options_init(&o);
  o.g_tol = -1;
  cr_assert_eq(dual_lsq(ctx, prog, &o, 1, x, 1, y, 3, NULL, NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert(strstr(dual_context_last_error(ctx), "g_tol") != NULL);
  cr_assert_str_eq(dual_solve_status_string(DUAL_SOLVE_NO_PROGRESS), "no further progress possible");
  dual_program_destroy(&prog), dual_program_destroy(&wide);
  dual_context_destroy(&ctx);
}

/* ---- MGH problems against lmder1 ----------------------------------------------------------- */

/* (.timeout: generous, for the compiled-tier parameter's run, where each problem's products are
 * compiled by cc at their first call: tests/CMakeLists.txt) */

Test(lsq, mgh_problems_against_lmder, .timeout = 1800) {
  static minpack_case cs[64];
  char why[256];
  const int nc = minpack_read_cases("lmddrv.fortran.ref", "test_lmder_reference_solutions.txt", cs, 64, why, sizeof why);
  cr_assert_eq(nc, 53, "%s", why);
  dual_context *ctx = cpu();
  int same = 0, lower = 0, differ = 0;
  for (int c = 0; c < nc; ++c) {
    const minpack_case *q = &cs[c];
    char *src = mgh_lsq_source(q->nprob, q->n, q->m);
    cr_assert_not_null(src);
    dual_program *prog = compile_ok(ctx, src);
    free(src);
    double x[40], F[80], fn;
    int32_t info, it;
    mgh_lsq_start(q->nprob, q->n, q->factor, x);
    cr_assert_eq(dual_eval(ctx, prog, 1, x, q->n, NULL, 0, F, q->m, NULL), DUAL_SUCCESS);
    double f0 = 0;
    for (int i = 0; i < q->m; ++i) f0 += F[i] * F[i];
    f0 = sqrt(f0);
    cr_expect(fabs(f0 - q->fnorm0) <= 1e-7 * q->fnorm0, "case %d (problem %d, n %d, m %d, x%g): ||F(x0)|| %.8e, MINPACK %.8e",
              c + 1, q->nprob, q->n, q->m, q->factor, f0, q->fnorm0);
    cr_assert_eq(dual_lsq(ctx, prog, NULL, 1, x, q->n, NULL, 0, &info, &it, &fn), DUAL_SUCCESS);
    double dev = 0;
    for (int j = 0; j < q->n; ++j) {
      const double d = fabs(x[j] - q->ref[j]) / (fabs(q->ref[j]) + 1e-6);
      if (d > dev) dev = d;
    }
    /* the final norm is printed with 8 digits; near zero the absolute scale is the start's */
    const double tol = 2e-7 * q->fnorm_final + 1e-12 * q->fnorm0;
    const char *verdict;
    if (fabs(fn - q->fnorm_final) <= tol) same++, verdict = "same minimum";
    else if (fn < q->fnorm_final) lower++, verdict = "lower than lmder's";
    else differ++, verdict = "HIGHER than lmder's";
    if (q->info >= 1 && q->info <= 4)
      cr_expect(fn <= q->fnorm_final + tol, "case %d (problem %d, n %d, m %d, x%g): ||F|| %.8e, lmder %.8e (%s, %d Jacobians)",
                c + 1, q->nprob, q->n, q->m, q->factor, fn, q->fnorm_final, dual_solve_status_string(info), it);
    cr_log_info("case %2d problem %2d n %2d m %2d x%-3g: %s after %d Jacobians, ||F|| %.8e (lmder info %d, %.8e), dev %.1e: %s",
                c + 1, q->nprob, q->n, q->m, q->factor, dual_solve_status_string(info), it, fn, q->info,
                q->fnorm_final, dev, verdict);
    dual_program_destroy(&prog);
  }
  cr_log_info("MGH 1-18: %d cases at lmder's minimum, %d lower, %d higher", same, lower, differ);
  dual_context_destroy(&ctx);
}

/* ---- NIST StRD nonlinear regression ---------------------------------------------------------- */

typedef struct nist {
  const char *name, *model; /* model in b1..bk and X (the predictor) */
  int k;
} nist;

static const nist nists[] = {
    {"Misra1a", "b1 * (1 - exp(-b2 * X))", 2},
    {"Chwirut2", "exp(-b1 * X) / (b2 + b3 * X)", 3},
    {"DanWood", "b1 * X^b2", 2},
    {"BoxBOD", "b1 * (1 - exp(-b2 * X))", 2},
    {"Eckerle4", "(b1 / b2) * exp(-0.5 * ((X - b3) / b2)^2)", 3},
    {"MGH09", "b1 * (X^2 + X * b2) / (X^2 + X * b3 + b4)", 4},
    {"MGH10", "b1 * exp(b2 / (X + b3))", 3},
    {"Rat43", "b1 / ((1 + exp(b2 - b3 * X))^(1 / b4))", 4},
    {"Lanczos3", "b1 * exp(-b2 * X) + b3 * exp(-b4 * X) + b5 * exp(-b6 * X)", 6},
    {"Bennett5", "b1 * (b2 + X)^(-1 / b3)", 3},
    {"Thurber", "(b1 + b2 * X + b3 * X^2 + b4 * X^3) / (1 + b5 * X + b6 * X^2 + b7 * X^3)", 7},
};

typedef struct nist_data {
  int k, nobs;
  double start[2][8], cert[8], rss, y[300], x[300];
} nist_data;

static void read_nist(const char *name, int k, nist_data *d) {
  char path[1024], line[4096];
  snprintf(path, sizeof path, "%s/nist_strd/%s.dat", DUAL_TESTS_DATA, name);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "cannot open %s", path);
  int data = 0;
  d->k = k, d->nobs = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    int i;
    double s1, s2, c, sd;
    if (data) {
      double y, x;
      if (sscanf(line, "%lf %lf", &y, &x) == 2 && d->nobs < 300) d->y[d->nobs] = y, d->x[d->nobs++] = x;
    } else if (sscanf(line, " b%d = %lf %lf %lf %lf", &i, &s1, &s2, &c, &sd) == 5 && i >= 1 && i <= k) {
      d->start[0][i - 1] = s1, d->start[1][i - 1] = s2, d->cert[i - 1] = c;
    } else if (sscanf(line, "Residual Sum of Squares: %lf", &c) == 1) {
      d->rss = c;
    } else if (strncmp(line, "Data:  ", 7) == 0 && strstr(line, " y") != NULL) {
      data = 1;
    }
  }
  fclose(f);
  cr_assert(d->nobs > 0 && d->rss > 0, "%s: no data or no certified values", name);
}

static char *nist_source(const nist *p, const nist_data *d) {
  size_t cap = 1 << 20, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len, "input b[%d]\noutput r[%d]\n", p->k, d->nobs);
  for (int j = 1; j <= p->k; ++j) len += (size_t)snprintf(s + len, cap - len, "let b%d = b[%d]\n", j, j - 1);
  for (int i = 0; i < d->nobs; ++i) {
    len += (size_t)snprintf(s + len, cap - len, "r[%d] = %.17g - (", i, d->y[i]);
    for (const char *c = p->model; *c; ++c) {
      if (*c == 'X') len += (size_t)snprintf(s + len, cap - len, "(%.17g)", d->x[i]);
      else s[len++] = *c;
    }
    len += (size_t)snprintf(s + len, cap - len, ")\n");
  }
  s[len] = '\0';
  return s;
}

Test(lsq, nist_strd_certified_values, .timeout = 1800) {
  dual_context *ctx = cpu();
  dual_solve_options o;
  dual_solve_options_init(&o);
  o.f_red = 1e-15, o.x_rel = 1e-15, o.max_evals = 10000;
  for (size_t t = 0; t < sizeof nists / sizeof nists[0]; ++t) {
    static nist_data d;
    read_nist(nists[t].name, nists[t].k, &d);
    char *src = nist_source(&nists[t], &d);
    dual_program *prog = compile_ok(ctx, src);
    free(src);
    const int k = d.k;
    double x[16], fn[2];
    int32_t info[2], it[2];
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < k; ++j) x[s * k + j] = d.start[s][j];
    cr_assert_eq(dual_lsq(ctx, prog, &o, 2, x, k, NULL, 0, info, it, fn), DUAL_SUCCESS);
    for (int s = 0; s < 2; ++s) {
      double worst = 0; /* digits: the log relative error, as NIST's LRE */
      for (int j = 0; j < k; ++j) {
        const double e = fabs(x[s * k + j] - d.cert[j]) / fabs(d.cert[j]);
        if (e > worst) worst = e;
      }
      const double rss = fn[s] * fn[s], erss = fabs(rss - d.rss) / d.rss;
      cr_log_info("%-9s start %d: %s after %d Jacobians, RSS %.10e (certified %.10e, rel. error %.1e), "
                  "parameters to %.1f digits",
                  nists[t].name, s + 1, dual_solve_status_string(info[s]), it[s], rss, d.rss, erss,
                  worst > 0 ? -log10(worst) : 17.0);
      cr_expect(erss <= 1e-9 && worst <= 1e-6,
                "%s start %d: %s, RSS %.10e vs %.10e, largest parameter error %.2e", nists[t].name, s + 1,
                dual_solve_status_string(info[s]), rss, d.rss, worst);
    }
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}
