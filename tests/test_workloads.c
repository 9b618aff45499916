/* test_workloads.c — the benchmark programs bench/programs/{ba,kin,hess}.db against independent
 * references (tests/ref: complex-step BA, analytic kin and hess) on >= 1000 random points drawn as
 * BENCHMARKS.md says, for several multi-dual widths; and the ADBench BA golden values for
 * data/ba/test.txt (reprojection residuals, w_err and the 310 CSR Jacobian values, to 1e-10). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ba_ref.h"
#include "bench_program.h"
#include "dualbatch.h"
#include "hess_ref.h"
#include "kin_ref.h"

#define NPOINTS 1024
#define JAC_TOL 1e-12
#define GOLDEN_TOL 1e-10

static const int widths[] = {0, 1, 4, 16}; /* 0 = automatic */
#define NWIDTHS ((int)(sizeof widths / sizeof widths[0]))

/* ---- deterministic random points (splitmix64, Box-Muller) ------------------------------------ */
static uint64_t rng_state = 0x5eed5eedULL;
static double uniform01(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return ((double)(z >> 11) + 0.5) * 0x1.0p-53; /* in (0, 1) */
}
static double normal01(void) {
  return sqrt(-2.0 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

/* ---- helpers --------------------------------------------------------------------------------- */
static dual_context *make_ctx(int width) {
  dual_context *ctx = NULL;
  int st = dual_context_create(&ctx, DUAL_DEVICE_CPU);
  cr_assert(st == DUAL_SUCCESS && ctx, "dual_context_create: %s", dual_status_string(st));
  st = dual_context_set_width(ctx, width);
  cr_assert(st == DUAL_SUCCESS, "set_width(%d): %s", width, dual_context_last_error(ctx));
  return ctx;
}

static dual_program *compile_bench(dual_context *ctx, const char *name, int n, int p, int m) {
  dual_program *prog = bench_program(ctx, name);
  cr_assert(dual_program_num_inputs(prog) == n && dual_program_num_params(prog) == p &&
                dual_program_num_outputs(prog) == m,
            "%s: shape (n, p, m) = (%d, %d, %d), expected (%d, %d, %d)", name,
            (int)dual_program_num_inputs(prog), (int)dual_program_num_params(prog),
            (int)dual_program_num_outputs(prog), n, p, m);
  return prog;
}

/* Worst scaled error of one row-major rows x cols block against its reference.  Scaling: each
 * entry's |J - Jref| is divided by the largest reference magnitude of its row,
 * max(1e-300, max_j |Jref[i][j]|), so entries that are tiny because of cancellation are judged
 * on the scale of the row they belong to.  *where receives the flat index of the worst entry. */
static double row_scaled_err(const double *J, const double *Jref, int rows, int cols, int *where) {
  double worst = 0.0;
  for (int i = 0; i < rows; i++) {
    double scale = 1e-300;
    for (int j = 0; j < cols; j++)
      scale = fmax(scale, fabs(Jref[i * cols + j]));
    for (int j = 0; j < cols; j++) {
      double e = fabs(J[i * cols + j] - Jref[i * cols + j]) / scale;
      if (!(e <= worst)) { /* also catches NaN */
        worst = isnan(e) ? INFINITY : e;
        if (where)
          *where = i * cols + j;
      }
    }
  }
  return worst;
}

/* ---- ba -------------------------------------------------------------------------------------- */
static void ba_points(double *x, double *feat, int64_t B) {
  for (int64_t b = 0; b < B; b++) {
    for (int j = 0; j < BA_REF_N; j++)
      x[b * BA_REF_N + j] = normal01();
    x[b * BA_REF_N + 13] += 10.0; /* X2 += 10 */
    x[b * BA_REF_N + 14] = 1.0;   /* w = 1 */
    feat[2 * b] = normal01();
    feat[2 * b + 1] = normal01();
  }
}

/* Jacobians of ba.db vs the complex-step reference; returns the worst scaled error. */
static double ba_check(dual_context *ctx, const dual_program *prog, const double *x,
                       const double *feat, int64_t B, const char *what) {
  double *y = malloc(sizeof(double) * 2 * (size_t)B);
  double *J = malloc(sizeof(double) * 30 * (size_t)B);
  int32_t *status = malloc(sizeof(int32_t) * (size_t)B);
  cr_assert(y && J && status);
  int st = dual_jacobian(ctx, prog, B, x, BA_REF_N, feat, 2, y, 2, J, 30, status);
  cr_assert(st == DUAL_SUCCESS, "%s: dual_jacobian: %s", what, dual_context_last_error(ctx));
  double worst = 0.0;
  for (int64_t b = 0; b < B; b++) {
    double r[2], Jr[30];
    int where = 0;
    ba_ref_jacobian(&x[b * BA_REF_N], &feat[2 * b], r, Jr);
    cr_assert(status[b] == 0, "%s: point %lld flagged 0x%x", what, (long long)b, status[b]);
    double ey = row_scaled_err(&y[2 * b], r, 1, 2, NULL);
    double ej = row_scaled_err(&J[30 * b], Jr, 2, 15, &where);
    cr_assert(ey <= JAC_TOL, "%s: point %lld residual error %.3g", what, (long long)b, ey);
    cr_assert(ej <= JAC_TOL, "%s: point %lld J[%d][%d] = %.17g, reference %.17g (error %.3g)",
              what, (long long)b, where / 15, where % 15, J[30 * b + where], Jr[where], ej);
    worst = fmax(worst, fmax(ey, ej));
  }
  free(y);
  free(J);
  free(status);
  return worst;
}

Test(workloads, ba_jacobian_vs_complex_step) {
  double *x = malloc(sizeof(double) * BA_REF_N * NPOINTS);
  double *feat = malloc(sizeof(double) * 2 * NPOINTS);
  cr_assert(x && feat);
  ba_points(x, feat, NPOINTS);
  double worst = 0.0;
  for (int k = 0; k < NWIDTHS; k++) {
    dual_context *ctx = make_ctx(widths[k]);
    dual_program *prog = compile_bench(ctx, "ba", 15, 2, 2);
    cr_expect_str_eq(dual_program_input_name(prog, 0), "cam[0]");
    cr_expect_str_eq(dual_program_input_name(prog, 14), "w");
    cr_expect_str_eq(dual_program_param_name(prog, 1), "feat[1]");
    cr_expect_str_eq(dual_program_output_name(prog, 0), "r[0]");
    char what[32];
    snprintf(what, sizeof what, "ba width %d", widths[k]);
    worst = fmax(worst, ba_check(ctx, prog, x, feat, NPOINTS, what));
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  cr_log_info("ba: max row-scaled error vs complex step over %d points x %d widths: %.3g",
              NPOINTS, NWIDTHS, worst);
  free(x);
  free(feat);
}

/* theta = 0 exactly takes the first-order branch X + r x X; the unused Rodrigues branch must not
 * leak NaN or a per-point flag.  Tiny nonzero angles take the Rodrigues branch. */
Test(workloads, ba_theta_zero_branch) {
  enum { B = 64 };
  double x[B * BA_REF_N], feat[2 * B];
  ba_points(x, feat, B);
  for (int b = 0; b < B; b++) {
    double scale = (b < B / 2) ? 0.0 : pow(10.0, -(double)(b % 8) - 4.0);
    for (int j = 0; j < 3; j++)
      x[b * BA_REF_N + j] *= scale;
  }
  dual_context *ctx = make_ctx(0);
  dual_program *prog = compile_bench(ctx, "ba", 15, 2, 2);
  double worst = ba_check(ctx, prog, x, feat, B, "ba theta~0");
  cr_log_info("ba theta = 0 and tiny theta: max row-scaled error %.3g", worst);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* ---- kin ------------------------------------------------------------------------------------- */
Test(workloads, kin_jacobian_vs_analytic) {
  enum { N = KIN_REF_N };
  double *x = malloc(sizeof(double) * N * NPOINTS);
  double *y = malloc(sizeof(double) * N * NPOINTS);
  double *J = malloc(sizeof(double) * N * N * NPOINTS);
  int32_t *status = malloc(sizeof(int32_t) * NPOINTS);
  cr_assert(x && y && J && status);
  for (int64_t i = 0; i < (int64_t)N * NPOINTS; i++)
    x[i] = 0.5 + uniform01();
  double worst = 0.0;
  for (int k = 0; k < NWIDTHS; k++) {
    dual_context *ctx = make_ctx(widths[k]);
    dual_program *prog = compile_bench(ctx, "kin", N, 0, N);
    int st = dual_jacobian(ctx, prog, NPOINTS, x, N, NULL, 0, y, N, J, N * N, status);
    cr_assert(st == DUAL_SUCCESS, "kin: dual_jacobian: %s", dual_context_last_error(ctx));
    for (int64_t b = 0; b < NPOINTS; b++) {
      double f[N], Jr[N * N];
      int where = 0;
      kin_ref_residual(&x[b * N], f);
      kin_ref_jacobian(&x[b * N], Jr);
      cr_assert(status[b] == 0, "kin: point %lld flagged 0x%x", (long long)b, status[b]);
      double ey = row_scaled_err(&y[b * N], f, 1, N, NULL);
      double ej = row_scaled_err(&J[b * N * N], Jr, N, N, &where);
      cr_assert(ey <= JAC_TOL, "kin width %d: point %lld residual error %.3g", widths[k],
                (long long)b, ey);
      cr_assert(ej <= JAC_TOL, "kin width %d: point %lld J[%d][%d] = %.17g, ref %.17g (%.3g)",
                widths[k], (long long)b, where / N, where % N, J[b * N * N + where], Jr[where], ej);
      worst = fmax(worst, fmax(ey, ej));
    }
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  cr_log_info("kin: max row-scaled error vs analytic over %d points x %d widths: %.3g", NPOINTS,
              NWIDTHS, worst);
  free(x);
  free(y);
  free(J);
  free(status);
}

/* ---- hess (gradient; the Hessian itself is checked where dual_hessian lands) ---------------- */
Test(workloads, hess_gradient_vs_analytic) {
  enum { N = HESS_REF_N };
  double *x = malloc(sizeof(double) * N * NPOINTS);
  double *f = malloc(sizeof(double) * NPOINTS);
  double *g = malloc(sizeof(double) * N * NPOINTS);
  int32_t *status = malloc(sizeof(int32_t) * NPOINTS);
  cr_assert(x && f && g && status);
  for (int64_t i = 0; i < (int64_t)N * NPOINTS; i++)
    x[i] = normal01();
  double worst = 0.0;
  for (int k = 0; k < NWIDTHS; k++) {
    dual_context *ctx = make_ctx(widths[k]);
    dual_program *prog = compile_bench(ctx, "hess", N, 0, 1);
    int st = dual_gradient(ctx, prog, NPOINTS, x, N, NULL, 0, f, g, N, status);
    cr_assert(st == DUAL_SUCCESS, "hess: dual_gradient: %s", dual_context_last_error(ctx));
    for (int64_t b = 0; b < NPOINTS; b++) {
      double gr[N], fr = hess_ref_value(&x[b * N]);
      int where = 0;
      hess_ref_gradient(&x[b * N], gr);
      cr_assert(status[b] == 0, "hess: point %lld flagged 0x%x", (long long)b, status[b]);
      double ef = row_scaled_err(&f[b], &fr, 1, 1, NULL);
      double eg = row_scaled_err(&g[b * N], gr, 1, N, &where);
      cr_assert(ef <= JAC_TOL, "hess width %d: point %lld f = %.17g, ref %.17g", widths[k],
                (long long)b, f[b], fr);
      cr_assert(eg <= JAC_TOL, "hess width %d: point %lld g[%d] = %.17g, ref %.17g (%.3g)",
                widths[k], (long long)b, where, g[b * N + where], gr[where], eg);
      worst = fmax(worst, fmax(ef, eg));
    }
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
  }
  cr_log_info("hess: max row-scaled gradient error vs analytic over %d points x %d widths: %.3g",
              NPOINTS, NWIDTHS, worst);
  free(x);
  free(f);
  free(g);
  free(status);
}

/* ---- ADBench golden values ------------------------------------------------------------------- */
static const char *data_dir(void) { return DUAL_TESTS_DATA; } /* tests/data of the source tree */

static char *read_text(const char *path) {
  FILE *fp = fopen(path, "rb");
  cr_assert(fp, "ADBench data missing: cannot open %s (it ships in tests/data)", path);
  fseek(fp, 0, SEEK_END);
  long size = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  cr_assert(size >= 0);
  char *buf = malloc((size_t)size + 1);
  cr_assert(buf);
  size_t got = fread(buf, 1, (size_t)size, fp);
  buf[got] = '\0';
  fclose(fp);
  return buf;
}

/* The text after the '=' of the line that starts with KEY followed by a blank or '=' (so
 * "J.vals" does not match "J.vals.size"); NULL if absent. */
static const char *golden_field(const char *text, const char *key) {
  size_t len = strlen(key);
  for (const char *line = text; line && *line;) {
    if (strncmp(line, key, len) == 0 && (line[len] == ' ' || line[len] == '=')) {
      const char *eq = strchr(line, '=');
      const char *nl = strchr(line, '\n');
      if (eq && (!nl || eq < nl))
        return eq + 1;
    }
    line = strchr(line, '\n');
    if (line)
      line++;
  }
  return NULL;
}

static double golden_number(const char *text, const char *key) {
  const char *s = golden_field(text, key);
  cr_assert(s, "golden file: no line '%s'", key);
  char *end;
  double v = strtod(s, &end);
  cr_assert(end != s, "golden file: no number after '%s'", key);
  return v;
}

/* Relative to the entry itself; an exact golden zero must be matched to GOLDEN_TOL times the
 * largest golden magnitude of its row. */
static double golden_err(double got, double want, double row_scale) {
  return fabs(got - want) / (want != 0.0 ? fabs(want) : fmax(row_scale, 1e-300));
}

Test(workloads, adbench_ba_golden) {
  char path[1024];
  snprintf(path, sizeof path, "%s/adbench/ba/test.txt", data_dir());
  char *input = read_text(path);
  int n = 0, m = 0, p = 0, used = 0;
  cr_assert(sscanf(input, "%d %d %d%n", &n, &m, &p, &used) == 3 && n > 0 && m > 0 && p > 0,
            "%s: bad header", path);
  double vals[17]; /* one camera (11), one point (3), one weight, one feature (2) */
  const char *s = input + used;
  for (int i = 0; i < 17; i++) {
    char *end;
    vals[i] = strtod(s, &end);
    cr_assert(end != s, "%s: expected 17 numbers after the header", path);
    s = end;
  }
  free(input);

  /* Replicate as ADBench's reader does: observation i uses camera i mod n and point i mod m; the
   * compact file holds one of each, so every observation's inputs are the same 15 values. */
  double *x = malloc(sizeof(double) * 15 * (size_t)p);
  double *feat = malloc(sizeof(double) * 2 * (size_t)p);
  double *y = malloc(sizeof(double) * 2 * (size_t)p), *J = malloc(sizeof(double) * 30 * (size_t)p);
  int32_t *status = malloc(sizeof(int32_t) * (size_t)p);
  cr_assert(x && feat && y && J && status);
  for (int i = 0; i < p; i++) {
    memcpy(&x[15 * i], vals, 15 * sizeof(double));
    feat[2 * i] = vals[15];
    feat[2 * i + 1] = vals[16];
  }
  dual_context *ctx = make_ctx(0);
  dual_program *prog = compile_bench(ctx, "ba", 15, 2, 2);
  int st = dual_jacobian(ctx, prog, p, x, 15, feat, 2, y, 2, J, 30, status);
  cr_assert(st == DUAL_SUCCESS, "dual_jacobian: %s", dual_context_last_error(ctx));

  snprintf(path, sizeof path, "%s/adbench/golden/ba_test_expected.txt", data_dir());
  char *gold = read_text(path);
  /* shape of ADBench's CSR Jacobian: 2p reprojection rows of 15 entries, then p w_err rows of 1 */
  int nrows = 3 * p, ncols = 11 * n + 3 * m + p, nvals = 31 * p;
  cr_assert_eq((int)golden_number(gold, "J.nrows"), nrows);
  cr_assert_eq((int)golden_number(gold, "J.ncols"), ncols);
  cr_assert_eq((int)golden_number(gold, "J.rows.size"), nrows + 1);
  cr_assert_eq((int)golden_number(gold, "J.cols.size"), nvals);
  cr_assert_eq((int)golden_number(gold, "J.vals.size"), nvals);

  double worst = 0.0;
  double r0 = golden_number(gold, "reproj_err[2*i+0]");
  double r1 = golden_number(gold, "reproj_err[2*i+1]");
  double werr = golden_number(gold, "w_err[i]");
  for (int i = 0; i < p; i++) {
    cr_assert(status[i] == 0, "observation %d flagged 0x%x", i, status[i]);
    double e0 = golden_err(y[2 * i], r0, 0.0), e1 = golden_err(y[2 * i + 1], r1, 0.0);
    cr_assert(e0 <= GOLDEN_TOL && e1 <= GOLDEN_TOL, "obs %d: reproj_err (%.17g, %.17g), golden "
              "(%.17g, %.17g)", i, y[2 * i], y[2 * i + 1], r0, r1);
    double w = x[15 * i + 14], ew = golden_err(1.0 - w * w, werr, 0.0);
    cr_assert(ew <= GOLDEN_TOL, "obs %d: w_err %.17g, golden %.17g", i, 1.0 - w * w, werr);
    worst = fmax(worst, fmax(fmax(e0, e1), ew));
  }

  /* values in ADBench CSR order: per observation, row 2i then 2i+1, each [11 cam, 3 point,
   * 1 weight] -- exactly our row-major 2 x 15 block; then the p w_err derivatives -2w. */
  double *want = malloc(sizeof(double) * (size_t)nvals);
  cr_assert(want);
  const char *v = golden_field(gold, "J.vals");
  cr_assert(v, "golden file: no J.vals line");
  for (int k = 0; k < nvals; k++) {
    char *end;
    want[k] = strtod(v, &end);
    cr_assert(end != v, "golden file: J.vals has fewer than %d numbers", nvals);
    v = end;
  }
  for (int i = 0; i < p; i++) {
    for (int row = 0; row < 2; row++) {
      const double *g = &want[30 * i + 15 * row];
      double scale = 0.0;
      for (int j = 0; j < 15; j++)
        scale = fmax(scale, fabs(g[j]));
      for (int j = 0; j < 15; j++) {
        double got = J[30 * i + 15 * row + j], e = golden_err(got, g[j], scale);
        cr_assert(e <= GOLDEN_TOL, "obs %d: J[%d][%d] = %.17g, golden %.17g (rel %.3g)", i, row,
                  j, got, g[j], e);
        worst = fmax(worst, e);
      }
    }
    double dw = -2.0 * x[15 * i + 14], e = golden_err(dw, want[30 * p + i], 0.0);
    cr_assert(e <= GOLDEN_TOL, "obs %d: d w_err / dw = %.17g, golden %.17g", i, dw,
              want[30 * p + i]);
    worst = fmax(worst, e);
  }
  cr_log_info("ADBench BA golden (test.txt, p = %d): max relative error %.3g", p, worst);
  free(want);
  free(gold);
  free(x);
  free(feat);
  free(y);
  free(J);
  free(status);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
