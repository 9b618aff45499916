/*
 * test_lang.c — the text-language front end (src/lang): programs compiled and evaluated against
 * hand-derived values and derivatives (precedence and associativity of every operator, loops,
 * reductions, vectors, compound assignment), every diagnostic with its position, caret and
 * suggestion, the limits, and a seeded fuzz run (random bytes, random tokens, mutated programs).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"

static dual_context *ctx;
static void setup(void) { cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), 0); }
static void teardown(void) { dual_context_destroy(&ctx); }
TestSuite(lang, .init = setup, .fini = teardown);
TestSuite(lang_errors, .init = setup, .fini = teardown);
TestSuite(lang_limits, .init = setup, .fini = teardown);

/* ---- helpers -----------------------------------------------------------------------------------
 */
static dual_program *compile_ok(const char *src) {
  dual_program *p = NULL;
  int st = dual_program_compile(ctx, src, "t.dl", &p);
  cr_assert(st == DUAL_SUCCESS && p != NULL, "compile failed (%s):\n%s\n--- source:\n%s",
            dual_status_string(st), dual_context_last_error(ctx), src);
  return p;
}

/* Compile `src` expecting failure with `status`; the message must contain each of the
 * NULL-terminated strings.  Returns nothing; checks that *prog stays NULL. */
static void expect_fail(const char *src, int status, const char *const *needles) {
  dual_program *p = (dual_program *)&p; /* must be reset to NULL */
  int st = dual_program_compile(ctx, src, NULL, &p);
  const char *msg = dual_context_last_error(ctx);
  cr_assert_eq(st, status, "status %d (%s), expected %d; message:\n%s\n--- source:\n%s", st,
               dual_status_string(st), status, msg, src);
  cr_assert_null(p, "*prog must be NULL after a failed compile");
  for (const char *const *n = needles; *n != NULL; ++n)
    cr_assert_not_null(strstr(msg, *n), "message lacks \"%s\":\n%s\n--- source:\n%s", *n, msg, src);
}

#define EXPECT_ERROR(src, ...)                                                                     \
  do {                                                                                             \
    const char *const needles_[] = {__VA_ARGS__, NULL};                                            \
    expect_fail(src, DUAL_ERR_SYNTAX, needles_);                                                   \
  } while (0)

static int count_substr(const char *s, const char *sub) {
  int n = 0;
  for (const char *q = strstr(s, sub); q != NULL; q = strstr(q + 1, sub)) ++n;
  return n;
}

/* y = f(x) at one point. */
static void eval1(const dual_program *p, const double *x, const double *par, double *y) {
  int32_t flags = -1;
  int n = dual_program_num_inputs(p), np = dual_program_num_params(p);
  int m = dual_program_num_outputs(p);
  int st = dual_eval(ctx, p, 1, x, n > 0 ? n : 1, par, np > 0 ? np : 1, y, m, &flags);
  cr_assert_eq(st, 0, "dual_eval: %s", dual_context_last_error(ctx));
}

static void jac1(const dual_program *p, const double *x, double *y, double *J) {
  int n = dual_program_num_inputs(p), m = dual_program_num_outputs(p);
  int st = dual_jacobian(ctx, p, 1, x, n, NULL, 1, y, m, J, (int64_t)m * n, NULL);
  cr_assert_eq(st, 0, "dual_jacobian: %s", dual_context_last_error(ctx));
}

static void assert_close(double got, double want, const char *what) {
  double tol = 1e-14 * fmax(1.0, fabs(want));
  cr_assert(fabs(got - want) <= tol, "%s: got %.17g, want %.17g", what, got, want);
}

/* ---- values: precedence and associativity ------------------------------------------------------
 */
Test(lang, precedence_and_associativity) {
  const char *src =
      "input a\ninput b\ninput c\n"
      "output o0 = a + b * c - a / b\n"          /* * / over + -, left to right */
      "output o1 = a - b - c\n"                  /* left-assoc - */
      "output o2 = a / b / c\n"                  /* left-assoc / */
      "output o3 = -a^2\n"                       /* ^ over unary minus */
      "output o4 = 2^3^2\n"                      /* right-assoc ^ = 2^9 */
      "output o5 = 2^-1 + c^-b\n"                /* unary minus in an exponent */
      "output o6 = 1 + 2 * 3 ^ 2\n"              /* 19 */
      "output o7 = a < b == b > a\n"             /* relational over equality */
      "output o8 = a > 0 && b > 0 || c > 2\n"    /* && over || */
      "output o9 = a > 0 || b > 0 && c > 9\n"    /* a>0 || (b>0 && c>9) */
      "output o10 = !a + 1\n"                    /* unary ! over + */
      "output o11 = a < 0 ? b : c < 0 ? 1 : 2\n" /* right-assoc ?: */
      "output o12 = a - -b\n"
      "output o13 = 2 * 7 % 4 + -7 % 3 + 7 % -3\n" /* (14%4) + ((-7)%3) + (7%(-3)), floored */
      "output o14 = a + b < c - 1 != a * 0 >= 1\n" /* ((a+b)<(c-1)) != ((a*0)>=1) */
      "output o15 = a <= a && !(b >= a) == 1\n"    /* (a<=a) && ((!(b>=a)) == 1) */
      "output o16 = (a + b) * c ^ (1 / 2)\n";
  dual_program *p = compile_ok(src);
  cr_assert_eq(dual_program_num_outputs(p), 17);
  double x[3] = {0.7, -1.3, 2.5}, y[17];
  eval1(p, x, NULL, y);
  double a = x[0], b = x[1], c = x[2];
  double ref[17] = {a + b * c - a / b,
                    a - b - c,
                    a / b / c,
                    -(a * a),
                    512.0,
                    0.5 + pow(c, -b),
                    19.0,
                    (double)((a < b) == (b > a)),
                    (double)((a > 0 && b > 0) || c > 2),
                    (double)(a > 0 || (b > 0 && c > 9)),
                    (double)(!a) + 1,
                    a < 0 ? b : (c < 0 ? 1 : 2),
                    a + b,
                    2.0 + 2.0 + -2.0,
                    (double)(((a + b) < (c - 1)) != ((a * 0) >= 1)),
                    (double)((a <= a) && ((!(b >= a)) == 1)),
                    (a + b) * sqrt(c)};
  for (int i = 0; i < 17; ++i) {
    char what[32];
    snprintf(what, sizeof what, "o%d", i);
    assert_close(y[i], ref[i], what);
  }
  dual_program_destroy(&p);
}

Test(lang, every_function_is_callable_with_its_arity) {
  /* Spot values of functions by name; arity comes from the op table. */
  dual_program *p = compile_ok(
      "input x\n"
      "output f0 = atan2(x, 2) + hypot(x, 2) + fma(x, 3, 1) + min(x, 0.1) + max(x, 0.1)\n"
      "output f1 = sqrt(x) + cbrt(x) + exp(x) + exp2(x) + expm1(x) + log(x) + log2(x)\n"
      "output f2 = log10(x) + log1p(x) + pow(x, 3) + sin(x) + cos(x) + tan(x) + asin(x)\n"
      "output f3 = acos(x) + atan(x) + sinh(x) + cosh(x) + tanh(x) + asinh(x) + atanh(x)\n"
      "output f4 = abs(-x) + sign(-x) + floor(x) + ceil(x) + erf(x) + erfc(x) + sigmoid(x)\n"
      "output f5 = softplus(x) + relu(-x) + square(x) + select(x - 0.5, 10, 20) + acosh(1 + x)\n");
  double x = 0.25, y[6];
  eval1(p, &x, NULL, y);
  assert_close(y[0], atan2(x, 2) + hypot(x, 2) + (x * 3 + 1) + 0.1 + 0.25, "f0");
  assert_close(y[1], sqrt(x) + cbrt(x) + exp(x) + exp2(x) + expm1(x) + log(x) + log2(x), "f1");
  assert_close(y[2], log10(x) + log1p(x) + pow(x, 3) + sin(x) + cos(x) + tan(x) + asin(x), "f2");
  assert_close(y[3], acos(x) + atan(x) + sinh(x) + cosh(x) + tanh(x) + asinh(x) + atanh(x), "f3");
  assert_close(y[4], x - 1 + 0 + 1 + erf(x) + erfc(x) + 1 / (1 + exp(-x)), "f4");
  assert_close(y[5], log1p(exp(x)) + 0 + x * x + 10 + acosh(1 + x), "f5");
  dual_program_destroy(&p);
}

/* ---- loops, reductions, vectors ----------------------------------------------------------------
 */
Test(lang, sum_of_squares_gradient_is_2x) {
  dual_program *p = compile_ok("input x[5]\noutput f = sum(i in 0..5, x[i]^2)\n");
  double x[5] = {1.5, -2, 0.25, 3, -0.5}, f, g[5];
  cr_assert_eq(dual_gradient(ctx, p, 1, x, 5, NULL, 1, &f, g, 5, NULL), 0, "%s",
               dual_context_last_error(ctx));
  double ref = 0;
  for (int i = 0; i < 5; ++i) ref += x[i] * x[i];
  assert_close(f, ref, "f");
  for (int i = 0; i < 5; ++i) assert_close(g[i], 2 * x[i], "g");
  dual_program_destroy(&p);
}

Test(lang, for_loop_vector_outputs_and_jacobian) {
  /* f[i] = (i+1) x[i] + x[(i+1) % 4]: J[i][i] = i+1, J[i][(i+1)%4] = 1. */
  dual_program *p = compile_ok("input x[4]\noutput f[4]\n"
                               "for i in 0..4 { f[i] = (i + 1) * x[i] + x[(i + 1) % 4] }\n");
  cr_assert_eq(dual_program_num_outputs(p), 4);
  cr_assert_str_eq(dual_program_output_name(p, 2), "f[2]");
  cr_assert_str_eq(dual_program_input_name(p, 3), "x[3]");
  double x[4] = {1, 2, 3, 4}, y[4], J[16];
  jac1(p, x, y, J);
  for (int i = 0; i < 4; ++i) {
    assert_close(y[i], (i + 1) * x[i] + x[(i + 1) % 4], "y");
    for (int j = 0; j < 4; ++j) {
      double want = (j == i ? i + 1 : 0) + (j == (i + 1) % 4 ? 1 : 0);
      assert_close(J[i * 4 + j], want, "J");
    }
  }
  dual_program_destroy(&p);
}

Test(lang, loop_variable_arithmetic_in_indices) {
  /* g[3 - i] = x[(2*i + 1) % 4] * 2^i ; reversed and strided indices */
  dual_program *p = compile_ok("input x[4]\noutput g[4]\n"
                               "for i in 0..4 { g[3 - i] = x[(2*i + 1) % 4] * 2^i }\n");
  double x[4] = {1.5, 2.5, -1, 7}, y[4];
  eval1(p, x, NULL, y);
  for (int i = 0; i < 4; ++i) assert_close(y[3 - i], x[(2 * i + 1) % 4] * pow(2, i), "g");
  dual_program_destroy(&p);
}

Test(lang, compound_assignment_on_outputs) {
  dual_program *p = compile_ok("input x\noutput f[2]\noutput s\n"
                               "f[0] = x\nf[0] += x*x\nf[1] = 1\nf[1] *= x\nf[1] -= 2\n"
                               "f[1] /= 4\ns = x; s -= 1; s *= s\n");
  double x = 1.75, y[3], J[3];
  jac1(p, &x, y, J);
  assert_close(y[0], x + x * x, "f0");
  assert_close(y[1], (x - 2) / 4, "f1");
  assert_close(y[2], (x - 1) * (x - 1), "s");
  assert_close(J[0], 1 + 2 * x, "df0");
  assert_close(J[1], 0.25, "df1");
  assert_close(J[2], 2 * (x - 1), "ds");
  dual_program_destroy(&p);
}

Test(lang, nested_loops_lets_and_scopes) {
  /* A 3x3 matrix-vector product with a per-row let, nested loops and a block-scoped let. */
  dual_program *p = compile_ok("input A[9]\ninput v[3]\noutput w[3]\n"
                               "for i in 0..3 {\n"
                               "  let acc = 0\n"
                               "  for j in 0..3 { acc += A[3*i + j] * v[j] }\n"
                               "  w[i] = acc\n"
                               "}\n"
                               "let acc = 2   # a new top-level name: the loop's acc is gone\n"
                               "w[0] *= acc\n");
  double x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0.5, -1, 2}, y[3];
  eval1(p, x, NULL, y);
  for (int i = 0; i < 3; ++i) {
    double r = 0;
    for (int j = 0; j < 3; ++j) r += x[3 * i + j] * x[9 + j];
    assert_close(y[i], i == 0 ? 2 * r : r, "w");
  }
  dual_program_destroy(&p);
}

Test(lang, reductions_prod_empty_and_nested) {
  dual_program *p =
      compile_ok("input x[4]\n"
                 "output p = prod(i in 1..4, x[i])\n"
                 "output e = sum(i in 3..3, x[i]) + prod(k in 5..2, x[0]) * 10\n" /* 0 + 1*10 */
                 "output t = sum(i in 0..3, sum(j in i..4, x[i] * x[j]))\n"
                 "output q = sum(i in 0..1, x[i])\n");
  double x[4] = {1.5, 2, -3, 0.5}, y[4];
  eval1(p, x, NULL, y);
  assert_close(y[0], 2 * -3 * 0.5, "prod");
  assert_close(y[1], 10, "empty");
  double t = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = i; j < 4; ++j) t += x[i] * x[j];
  assert_close(y[2], t, "nested");
  assert_close(y[3], 1.5, "one term");
  dual_program_destroy(&p);
}

Test(lang, params_consts_and_declaration_order) {
  dual_program *p = compile_ok("const n = 2 + 1\n"
                               "param w[n - 1]\n"
                               "input x[n]\n"
                               "param s\n"
                               "input z\n"
                               "const half = 1 / 2\n"
                               "output f = w[0] * x[0] + w[1] * x[2] + s * z^half\n");
  cr_assert_eq(dual_program_num_inputs(p), 4);
  cr_assert_eq(dual_program_num_params(p), 3);
  cr_assert_str_eq(dual_program_input_name(p, 3), "z");
  cr_assert_str_eq(dual_program_param_name(p, 1), "w[1]");
  cr_assert_str_eq(dual_program_param_name(p, 2), "s");
  double x[4] = {1, 2, 3, 16}, par[3] = {10, 100, 0.5}, y;
  eval1(p, x, par, &y);
  assert_close(y, 10 * 1 + 100 * 3 + 0.5 * 4, "f");
  dual_program_destroy(&p);
}

Test(lang, layout_comments_semicolons_crlf_continuations) {
  dual_program *p = compile_ok("# comment line\r\n"
                               "input x; input y   # trailing comment\r\n"
                               "\r\n"
                               "output f = x +\r\n"
                               "           y * (x\r\n"
                               "                - 1)\r\n"
                               "output g = max(x,\n  y)\n"
                               "output h = x > 0 ?\n  1 :\n  2\n"
                               "output k = .5 + 1e-3 + 2.5E+1 + 3.\n");
  double x[2] = {2, 3}, y[4];
  eval1(p, x, NULL, y);
  assert_close(y[0], 2 + 3 * (2 - 1), "f");
  assert_close(y[1], 3, "g");
  assert_close(y[2], 1, "h");
  assert_close(y[3], 0.5 + 1e-3 + 25 + 3, "k");
  dual_program_destroy(&p);
}

Test(lang, empty_and_reversed_ranges_run_zero_times) {
  dual_program *p = compile_ok("input x\noutput y = x\n"
                               "for i in 3..1 { y = 0 }\nfor i in 2..2 { y = 0 }\n");
  double x = 4, y;
  eval1(p, &x, NULL, &y);
  assert_close(y, 4, "y");
  dual_program_destroy(&p);
}

/* ---- the benchmark programs ---------------------------------------------------------------------
 */
static const char *KIN =
    "# kin: synthetic mass-action kinetics, n = m = 32, 64 reactions\n"
    "input x[32]\n"
    "output f[32]\n"
    "for i in 0..32 { f[i] = -0.1 * x[i] }\n"
    "for r in 0..64 {\n"
    "  let rate = (1 + 0.01*r) * exp(-(0.1*(r % 5)) * x[31]) * x[r % 32] * x[(7*r + 3) % 32]\n"
    "  f[r % 32] -= rate\n"
    "  f[(7*r + 3) % 32] -= rate\n"
    "  f[(13*r + 5) % 32] += 2*rate\n"
    "}\n";

Test(lang, kin_compiles_to_32_outputs_with_the_right_jacobian) {
  dual_program *p = compile_ok(KIN);
  cr_assert_eq(dual_program_num_inputs(p), 32);
  cr_assert_eq(dual_program_num_outputs(p), 32);
  double x[32], y[32], J[32 * 32], fr[32], Jr[32 * 32];
  for (int i = 0; i < 32; ++i) x[i] = 0.5 + 0.03 * i;
  jac1(p, x, y, J);
  /* Hand-derived: rate_r = k_r e^{-E_r x31} x_a x_b, so
   * d rate / d x_j = rate (-E_r [j = 31] + [j = a] / x_a + [j = b] / x_b)   (x > 0). */
  memset(Jr, 0, sizeof Jr);
  for (int i = 0; i < 32; ++i) {
    fr[i] = -0.1 * x[i];
    Jr[i * 32 + i] = -0.1;
  }
  for (int r = 0; r < 64; ++r) {
    int a = r % 32, b = (7 * r + 3) % 32, c = (13 * r + 5) % 32;
    double E = 0.1 * (r % 5);
    double rate = (1 + 0.01 * r) * exp(-E * x[31]) * x[a] * x[b];
    double d[32] = {0};
    d[31] += -E * rate;
    d[a] += rate / x[a];
    d[b] += rate / x[b];
    fr[a] -= rate;
    fr[b] -= rate;
    fr[c] += 2 * rate;
    for (int j = 0; j < 32; ++j) {
      Jr[a * 32 + j] -= d[j];
      Jr[b * 32 + j] -= d[j];
      Jr[c * 32 + j] += 2 * d[j];
    }
  }
  for (int i = 0; i < 32; ++i) {
    cr_assert(fabs(y[i] - fr[i]) <= 1e-13 * fmax(1, fabs(fr[i])), "f[%d] %.17g vs %.17g", i, y[i],
              fr[i]);
    for (int j = 0; j < 32; ++j)
      cr_assert(fabs(J[i * 32 + j] - Jr[i * 32 + j]) <= 1e-12 * fmax(1, fabs(Jr[i * 32 + j])),
                "J[%d][%d] %.17g vs %.17g", i, j, J[i * 32 + j], Jr[i * 32 + j]);
  }
  dual_program_destroy(&p);
}

Test(lang, rosenbrock_logsumexp_value_and_gradient) {
  dual_program *p =
      compile_ok("input x[16]\n"
                 "output f = sum(i in 0..15, 100*(x[i+1] - x[i]^2)^2 + (1 - x[i])^2) + "
                 "log(sum(i in 0..16, exp(x[i])))\n");
  cr_assert_eq(dual_program_num_outputs(p), 1);
  double x[16], f, g[16], fr = 0, gr[16] = {0}, se = 0;
  for (int i = 0; i < 16; ++i) x[i] = 0.3 + 0.05 * i - (i % 3) * 0.2;
  cr_assert_eq(dual_gradient(ctx, p, 1, x, 16, NULL, 1, &f, g, 16, NULL), 0);
  for (int i = 0; i < 15; ++i) {
    double u = x[i + 1] - x[i] * x[i];
    fr += 100 * u * u + (1 - x[i]) * (1 - x[i]);
    gr[i] += 200 * u * (-2 * x[i]) - 2 * (1 - x[i]);
    gr[i + 1] += 200 * u;
  }
  for (int i = 0; i < 16; ++i) se += exp(x[i]);
  fr += log(se);
  for (int i = 0; i < 16; ++i) gr[i] += exp(x[i]) / se;
  cr_assert(fabs(f - fr) <= 1e-13 * fabs(fr), "f %.17g vs %.17g", f, fr);
  for (int i = 0; i < 16; ++i)
    cr_assert(fabs(g[i] - gr[i]) <= 1e-12 * fmax(1, fabs(gr[i])), "g[%d] %.17g vs %.17g", i, g[i],
              gr[i]);
  dual_program_destroy(&p);
}

Test(lang, compile_file_and_its_name_in_messages) {
  char path[] = "/tmp/dual_test_lang_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "wb");
  fputs(KIN, f);
  fclose(f);
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile_file(ctx, path, &p), 0, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_program_num_outputs(p), 32);
  dual_program_destroy(&p);
  /* embedded NUL byte and an error message naming the file */
  f = fopen(path, "wb");
  fwrite("input x\noutput y = x \0+ 1\n", 1, 26, f);
  fclose(f);
  cr_assert_eq(dual_program_compile_file(ctx, path, &p), DUAL_ERR_SYNTAX);
  cr_assert_null(p);
  char where[128];
  snprintf(where, sizeof where, "%s:2:14: error: unexpected character '\\x00'", path);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), where), "%s",
                     dual_context_last_error(ctx));
  remove(path);
  cr_assert_eq(dual_program_compile_file(ctx, path, &p), DUAL_ERR_IO);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "cannot open"));
}

Test(lang, argument_errors) {
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx, NULL, NULL, &p), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_program_compile(ctx, "input x\noutput y = x", NULL, NULL), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_program_compile_file(ctx, NULL, &p), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_program_compile_file(ctx, "/nonexistent", NULL), DUAL_ERR_ARGUMENT);
  /* success clears the previous error */
  p = compile_ok("input x\noutput y = x");
  cr_assert_str_eq(dual_context_last_error(ctx), "no error");
  dual_program_destroy(&p);
}

/* ---- diagnostics --------------------------------------------------------------------------------
 */
Test(lang_errors, exact_format_with_source_line_and_caret) {
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx, "input x\noutput y = xx + 1\n", NULL, &p),
               DUAL_ERR_SYNTAX);
  cr_assert_str_eq(dual_context_last_error(ctx),
                   "<input>:2:12: error: undeclared name 'xx'; did you mean 'x'?\n"
                   "output y = xx + 1\n"
                   "           ^");
  cr_assert_eq(dual_program_compile(ctx, "input x\n\toutput y = sn(x)\n", "m.dl", &p),
               DUAL_ERR_SYNTAX);
  cr_assert_str_eq(dual_context_last_error(ctx),
                   "m.dl:2:13: error: unknown function 'sn'; did you mean 'sin'?\n"
                   "\toutput y = sn(x)\n"
                   "\t           ^");
  cr_assert_null(p);
}

Test(lang_errors, names) {
  EXPECT_ERROR("input x\noutput y = foo\n", "<input>:2:12: error: undeclared name 'foo'");
  EXPECT_ERROR("input alpha\noutput y = alhpa * 2\n", "2:12", "did you mean 'alpha'?");
  EXPECT_ERROR("input x\noutput y = exq(x)\n", "2:12", "unknown function 'exq'",
               "did you mean 'exp'?");
  EXPECT_ERROR("input x\ninput x\noutput y = x\n", "2:7", "'x' is already declared", "at 1:7");
  EXPECT_ERROR("input x\nlet cos = 1\noutput y = x\n", "2:5", "'cos' is a function name");
  EXPECT_ERROR("input x\noutput y = sin + x\n", "2:12", "'sin' is a function");
  EXPECT_ERROR("input x\noutput y = x(2)\n", "2:12", "'x' is an input, not a function");
  EXPECT_ERROR("input x\nlet prod = 1\noutput y = x\n", "2:5", "reserved word");
  EXPECT_ERROR("input x\nfor i in 0..2 { let i = 1 }\noutput y = x\n", "2:21",
               "'i' is already declared");
}

Test(lang_errors, assignments) {
  EXPECT_ERROR("input x\nx = 1\noutput y = x\n", "2:1", "cannot assign to 'x': it is an input");
  EXPECT_ERROR("input x\nparam q\nq = 1\noutput y = x\n", "3:1", "it is a param");
  EXPECT_ERROR("input x\nconst c = 2\nc += 1\noutput y = x\n", "3:1", "it is a const");
  EXPECT_ERROR("input x\noutput y = x\nfor i in 0..2 { i = 3 }\n", "3:17", "it is a loop variable");
  EXPECT_ERROR("input x\noutput f[2]\nf = x\n", "3:1", "'f' is a vector");
  EXPECT_ERROR("input x\noutput y\ny[0] = x\n", "3:1", "'y' is an output, not a vector");
  EXPECT_ERROR("input x\noutput y\ny += x\n", "3:1", "'y' is read by '+=' before it is assigned");
  EXPECT_ERROR("input x\noutput f[2]\nf[1] -= x\nf[0] = 1\n", "3:1",
               "'f[1]' is read by '-=' before it is assigned");
}

Test(lang_errors, indices) {
  EXPECT_ERROR("input x[3]\noutput y = x[1.5]\n", "2:14", "the index of 'x' must be an integer",
               "1.5");
  EXPECT_ERROR("input x[3]\noutput y = x[x[0]]\n", "2:14",
               "the index of 'x' must be a compile-time integer");
  EXPECT_ERROR("input x[3]\noutput y = x[3]\n", "2:14", "index 3 is out of bounds for 'x'",
               "length 3");
  EXPECT_ERROR("input x[3]\noutput y = x[-1]\n", "2:14", "index -1 is out of bounds");
  EXPECT_ERROR("input x[4]\noutput f[4]\nfor i in 0..5 { f[i] = x[i] }\n", "3:19",
               "index 4 is out of bounds for 'f'", "valid indices are 0 to 3", "when i = 4");
  EXPECT_ERROR("input x[3]\noutput y = x + 1\n", "2:12", "'x' is a vector of length 3",
               "needs an index");
  EXPECT_ERROR("input x\noutput y = x[0]\n", "2:12", "'x' is an input, not a vector");
  EXPECT_ERROR("input x\noutput y = x\nfor i in 0..2 { y = i[0] }\n", "3:21",
               "'i' is a loop variable, not a vector");
}

Test(lang_errors, unassigned_values) {
  EXPECT_ERROR("input x\noutput f[3]\nf[0] = x\nf[2] = x\n", "2:8",
               "output element 'f[1]' is never assigned");
  EXPECT_ERROR("input x\noutput f[6]\nf[0] = x\n", "2:8", "'f[1]', 'f[2]', 'f[3]' and 2 more",
               "never assigned");
  EXPECT_ERROR("input x\noutput y\n", "2:8", "output 'y' is never assigned");
  EXPECT_ERROR("input x\nlet v[3]\nv[0] = x\noutput y = v[1]\n", "4:12",
               "'v[1]' is read before it is assigned");
  EXPECT_ERROR("input x\nlet a\noutput y = a\n", "3:12", "'a' is read before it is assigned");
  EXPECT_ERROR("input x\nlet a = 1\n", "<input>:1:1: error: the program has no output");
  EXPECT_ERROR("", "<input>:1:1: error: the program has no output");
}

Test(lang_errors, calls_constants_and_ranges) {
  EXPECT_ERROR("input x\noutput y = atan2(x)\n", "2:12",
               "'atan2' takes 2 arguments, but 1 was "
               "given");
  EXPECT_ERROR("input x\noutput y = sin(x, x)\n", "'sin' takes 1 argument, but 2 were given");
  EXPECT_ERROR("input x\noutput y = fma()\n", "'fma' takes 3 arguments, but 0 were given");
  EXPECT_ERROR("input x\nconst c = x + 1\noutput y = c\n", "2:11",
               "const 'c' must be a finite compile-time constant");
  EXPECT_ERROR("input x\noutput y = x % 2\n", "2:14",
               "left operand of '%' must be a "
               "compile-time integer");
  EXPECT_ERROR("input x\noutput y = 5 % 1.5 + x\n", "2:14", "must be an integer");
  EXPECT_ERROR("input x\noutput y = 5 % 0 + x\n", "2:14", "modulo by zero");
  EXPECT_ERROR("input x\nfor i in 0..2.5 { }\noutput y = x\n", "2:13",
               "the end of the loop range must be an integer, but it is 2.5");
  EXPECT_ERROR("input x\nfor i in x..2 { }\noutput y = x\n", "2:10",
               "the start of the loop range must be a compile-time integer");
  EXPECT_ERROR("input x\noutput y = sum(i in 0..0.5, x)\n", "2:24", "the end of the sum's range");
  EXPECT_ERROR("input x[0]\noutput y = 1\n", "1:9", "length of 'x' must be at least 1");
}

Test(lang_errors, builder_errors_carry_the_statement_position) {
  /* Constant folding to a non-finite value is caught by the builder. */
  EXPECT_ERROR("input x\nconst c = 1 / 0\noutput y = c * x\n", "<input>:2:1: error:", "not finite");
  EXPECT_ERROR("input x\noutput y = x\nconst big = 1e300\ny = x * (big * big)\n",
               "4:1:", "not finite");
  EXPECT_ERROR("input x\noutput f[3]\nfor i in 0..3 {\n  f[i] = x * log(i - 1)\n}\n",
               "4:3:", "not finite", "when i = 0");
}

Test(lang_errors, syntax) {
  EXPECT_ERROR("input x\noutput y = (x + 1\n", "2:18",
               "expected ')' to close the parenthesis opened at 2:12");
  EXPECT_ERROR("input x\noutput y = x ** 2\n", "2:15", "write powers with '^'");
  EXPECT_ERROR("input x\noutput y = x & x\n", "2:14", "unexpected character '&'",
               "did you mean '&&'?");
  EXPECT_ERROR("input x\noutput y = 1e999 * x\n", "2:12", "number '1e999' is too large");
  EXPECT_ERROR("input x\noutput y = 2x\n", "2:12", "malformed number '2x'");
  EXPECT_ERROR("input x\noutput y = x @ 2\n", "2:14", "unexpected character '@'");
  EXPECT_ERROR("input x\noutput y = x\xc3\xa9\n", "2:13", "unexpected character '\\xC3'");
  EXPECT_ERROR("input x\noutput y = x 1\n", "2:14", "expected the end of the statement");
  EXPECT_ERROR("input x\noutput y = x ? 1\n", "2:17", "expected ':'");
  EXPECT_ERROR("input x\noutput y = x\n}\n", "3:1", "unexpected '}'");
  EXPECT_ERROR("input x\nfor i in 0..2 {\n  output y = x\n}\n", "3:3", "must be at the top level");
  EXPECT_ERROR("input x\nfor i in 0..2 {\noutput y = x\n", "expected '}' to close the loop body");
  EXPECT_ERROR("input x\nconst c\noutput y = x\n", "2:8",
               "expected '=' and a value after "
               "'const c'");
  EXPECT_ERROR("input x = 2\noutput y = x\n", "1:9", "cannot be given a value");
  EXPECT_ERROR("input x\nlet v[2] = 1\noutput y = x\n", "2:10",
               "a vector declaration has no initializer");
  EXPECT_ERROR("input x\nsin(x)\noutput y = x\n", "2:4", "a call is not a statement");
  EXPECT_ERROR("input x\nx + 1\noutput y = x\n", "2:3", "expected '=', '+=', '-=', '*=' or '/='");
}

Test(lang_errors, several_errors_one_per_statement_in_source_order) {
  dual_program *p = NULL;
  const char *src = "input x\n"
                    "let a = (1 +\n"            /* 1: unfinished (error at 'let' of line 3) */
                    "let b = qq + zz\n"         /* 2: undeclared qq (zz not reported) */
                    "output y = x[0] + b + a\n" /* 3: x is not a vector; a and b are quiet */
                    "output z = x $ 2\n";       /* 4: bad character */
  cr_assert_eq(dual_program_compile(ctx, src, NULL, &p), DUAL_ERR_SYNTAX);
  const char *m = dual_context_last_error(ctx);
  cr_assert_eq(count_substr(m, ": error: "), 4, "%s", m);
  const char *e1 = strstr(m, "<input>:3:1: error: expected an expression, found 'let'");
  const char *e2 = strstr(m, "<input>:3:9: error: undeclared name 'qq'");
  const char *e3 = strstr(m, "<input>:4:12: error: 'x' is an input, not a vector");
  const char *e4 = strstr(m, "<input>:5:14: error: unexpected character '$'");
  cr_assert(e1 && e2 && e3 && e4 && e1 < e2 && e2 < e3 && e3 < e4, "%s", m);
  cr_assert_null(strstr(m, "'zz'"), "only the first error of a statement: %s", m);
}

Test(lang_errors, errors_in_loops_are_reported_once) {
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx,
                                    "input x[8]\noutput f[8]\n"
                                    "for i in 0..8 { f[i] = x[i] * zz }\n",
                                    NULL, &p),
               DUAL_ERR_SYNTAX);
  const char *m = dual_context_last_error(ctx);
  cr_assert_eq(count_substr(m, ": error: "), 1, "%s", m);
  cr_assert_not_null(strstr(m, "3:31: error: undeclared name 'zz' (when i = 0)"), "%s", m);
}

Test(lang_errors, at_most_twenty_errors) {
  char src[4096] = "input x\n";
  for (int i = 0; i < 40; ++i) strcat(src, "let a = @\n");
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx, src, NULL, &p), DUAL_ERR_SYNTAX);
  const char *m = dual_context_last_error(ctx);
  cr_assert_eq(count_substr(m, ": error: "), 20, "%s", m);
  cr_assert_not_null(strstr(m, "too many errors"), "%s", m);
}

/* ---- limits
 * -------------------------------------------------------------------------------------- */
/* head + n x unit + mid + n2 x unit2 + tail, on the heap. */
static char *repeat(const char *head, const char *unit, int n, const char *mid, const char *unit2,
                    int n2, const char *tail) {
  size_t len = strlen(head) + strlen(unit) * (size_t)n + strlen(mid) + strlen(unit2) * (size_t)n2 +
               strlen(tail) + 1;
  char *s = (char *)malloc(len), *q = s;
  cr_assert_not_null(s);
  q += sprintf(q, "%s", head);
  for (int i = 0; i < n; ++i) q += sprintf(q, "%s", unit);
  q += sprintf(q, "%s", mid);
  for (int i = 0; i < n2; ++i) q += sprintf(q, "%s", unit2);
  sprintf(q, "%s", tail);
  return s;
}

Test(lang_limits, nesting_depth) {
  const char *needle[] = {"nesting too deep", NULL};
  char *s = repeat("input x\noutput y = ", "(", 240, "x", ")", 240, "\n");
  dual_program *p = compile_ok(s);
  dual_program_destroy(&p);
  free(s);
  const char *units[][2] = {
      {"(", ")"},   {"sin(", ")"},           {"-", ""}, {"x^", ""}, {"x[", "]"},
      {"x?", ":x"}, {"sum(i in 0..1, ", ")"}};
  for (size_t k = 0; k < sizeof units / sizeof units[0]; ++k) {
    s = repeat("input x\noutput y = ", units[k][0], 300, "x", units[k][1], 300, "\n");
    expect_fail(s, DUAL_ERR_SYNTAX, needle);
    free(s);
  }
  s = repeat("input x\n", "for i in 0..1 { ", 300, "", "}", 300, "\noutput y = x\n");
  expect_fail(s, DUAL_ERR_SYNTAX, needle);
  free(s);
}

Test(lang_limits, long_flat_expressions_do_not_recurse) {
  char *s = repeat("input x\noutput y = x", " + x", 100000, "", "", 0, "\n");
  dual_program *p = compile_ok(s);
  double x = 0.5, y;
  eval1(p, &x, NULL, &y);
  assert_close(y, 100001 * 0.5, "y");
  dual_program_destroy(&p);
  free(s);
}

Test(lang_limits, unrolled_work_vector_length_and_literals) {
  const char *work[] = {"steps (the limit for a source of", "<input>:2:1:", NULL};
  expect_fail("input x\nfor i in 0..4000000000 { }\noutput y = x\n", DUAL_ERR_LIMIT, work);
  expect_fail("input x\nfor i in 0..100000 { for j in 0..100000 { } }\noutput y = x\n",
              DUAL_ERR_LIMIT, work);
  EXPECT_ERROR("input x[20000000]\noutput y = 1\n", "1:9", "more than the limit of 16777216");
  EXPECT_ERROR("input x\nfor i in 0..1e300 { }\noutput y = x\n", "2:13", "magnitude at most 2^53");
  EXPECT_ERROR("input x[2]\noutput y = x[99999999999999999999]\n", "2:14",
               "magnitude at most 2^53");
  EXPECT_ERROR("input x\noutput y = 1e400 + x\n", "too large");
}

/* Issue 22: a 64-byte source unrolled a billion-iteration loop up to the global node limit
 * (4,000,000 nodes, seconds and ~190 MB).  The budget grows with the source: 65,536 nodes plus
 * 4,096 a byte, so this text (64 bytes) stops at 65,536 + 64 * 4,096 = 327,680. */
Test(lang_limits, work_is_bounded_per_source_byte) {
  const char *src = "input x\noutput f\nf = 0\nfor i in 0..1000000000 { f += sin(x*i) }\n";
  cr_assert_eq(strlen(src), 64);
  const char *nodes[] = {"more than 327680 operations (the limit for a source of 64 bytes)",
                         "<input>:4:1:", NULL};
  expect_fail(src, DUAL_ERR_LIMIT, nodes);
  /* a longer text has a larger budget: 4,096 more nodes for each byte */
  const char *src2 = "input x\noutput f\nf = 0\nfor i in 0..1000000000 { f += sin(x*i) } # pad\n";
  const char *nodes2[] = {"more than 352256 operations (the limit for a source of 70 bytes)", NULL};
  expect_fail(src2, DUAL_ERR_LIMIT, nodes2);
  /* empty iterations count as steps: 1,048,576 + 65,536 a byte (48 bytes: 4,194,304) */
  const char *steps[] = {"more than 4194304 steps (the limit for a source of 48 bytes)", NULL};
  expect_fail("input x\nfor i in 0..4000000000 { }\noutput y = x\n", DUAL_ERR_LIMIT, steps);
  /* the budget admits what a short text legitimately asks for: 60,000 iterations of a body */
  dual_program *p = compile_ok("input x[2]\noutput f = sum(i in 0..60000, sin(x[0] * i + x[1]))\n");
  cr_assert_gt(dual_program_num_instructions(p), 180000);
  dual_program_destroy(&p);
}

/* Issue 22: after the first error the result is never built, so loops are no longer unrolled:
 * the nested loops below would exceed every limit (10^12 iterations) if they were. */
Test(lang_limits, loops_after_an_error_are_not_unrolled) {
  const char *big = "for i in 0..1000000 { for j in 0..1000000 { f += x * i } }\n";
  char src[256];
  snprintf(src, sizeof src, "input x\noutput f\nf = 0 +\n%s", big); /* a syntax error first */
  const char *syntax[] = {"expected an expression", NULL};
  expect_fail(src, DUAL_ERR_SYNTAX, syntax);
  snprintf(src, sizeof src, "input x\noutput f\nf = y\n%s", big); /* a semantic error first */
  const char *undeclared[] = {"undeclared name 'y'", NULL};
  expect_fail(src, DUAL_ERR_SYNTAX, undeclared);
  /* the body is still checked once: its own error is reported */
  snprintf(src, sizeof src, "input x\noutput f\noutput g\nf = y\nfor i in 0..1000000 { g = x + z }\n");
  const char *both[] = {"undeclared name 'y'", "undeclared name 'z'", NULL};
  expect_fail(src, DUAL_ERR_SYNTAX, both);
  /* a later iteration's error still surfaces when the program had none before it */
  const char *late[] = {"index 3 is out of bounds", "(when i = 3)", NULL};
  expect_fail("input x\noutput f[3]\nfor i in 0..1000000 { f[i] = x }\n", DUAL_ERR_SYNTAX, late);
}

Test(lang_limits, long_lines_give_bounded_messages) {
  char *s = repeat("input x\noutput y = x", " + x", 250000, " + @", "", 0, "\n");
  dual_program *p = NULL;
  cr_assert_eq(dual_program_compile(ctx, s, NULL, &p), DUAL_ERR_SYNTAX);
  const char *m = dual_context_last_error(ctx);
  cr_assert_lt(strlen(m), 512, "message of %zu bytes", strlen(m));
  cr_assert_not_null(strstr(m, "unexpected character '@'"));
  /* the caret sits under the '@' of the excerpt */
  const char *line = strchr(m, '\n') + 1, *caret = strchr(line, '\n') + 1;
  const char *at = strchr(line, '@');
  cr_assert_not_null(at);
  cr_assert_eq(strchr(caret, '^') - caret, at - line, "%s", m);
  free(s);
}

/* ---- fuzz: never a crash, a hang, a leak or a built program with errors ------------------------
 */
static uint64_t rng_state;
static uint32_t rnd(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

static void fuzz_one(const char *src) {
  dual_program *p = NULL;
  int st = dual_program_compile(ctx, src, "fuzz", &p);
  cr_assert((st == DUAL_SUCCESS) == (p != NULL), "status %d with prog %p", st, (void *)p);
  if (st != DUAL_SUCCESS) {
    const char *m = dual_context_last_error(ctx);
    cr_assert(st == DUAL_ERR_SYNTAX || st == DUAL_ERR_LIMIT, "status %d: %s\n--- source:\n%s", st,
              m, src);
    cr_assert_not_null(strstr(m, "fuzz"), "%s", m);
  }
  dual_program_destroy(&p);
}

Test(lang_limits, fuzz_random_bytes) {
  rng_state = 12345;
  static const char alphabet[] = "input x[2]output y=+-*/^%<>!=&|?:;,(){}.#\n 0123456789eabsum";
  char buf[256];
  for (int it = 0; it < 3000; ++it) {
    int n = (int)(rnd() % 200);
    for (int i = 0; i < n; ++i) {
      uint32_t r = rnd();
      /* mostly program characters, some arbitrary bytes (no NUL: C string API) */
      buf[i] = (r & 7) ? alphabet[(r >> 3) % (sizeof alphabet - 1)] : (char)(1 + (r >> 3) % 255);
    }
    buf[n] = '\0';
    fuzz_one(buf);
  }
}

Test(lang_limits, fuzz_random_tokens) {
  static const char *const vocab[] = {
      "input", "param", "const", "let",   "output", "for",    "in", "sum", "prod", "x",  "y",   "f",
      "i",     "j",     "sin",   "atan2", "fma",    "select", "(",  ")",   "[",    "]",  "{",   "}",
      ",",     "..",    "=",     "+=",    "-=",     "*=",     "/=", "+",   "-",    "*",  "/",   "%",
      "^",     "<",     "<=",    ">",     ">=",     "==",     "!=", "&&",  "||",   "!",  "?",   ":",
      ";",     "\n",    "\n",    "0",     "1",      "2",      "3",  "0.5", "1e3",  "-1", "#c\n"};
  rng_state = 777;
  char buf[2048];
  for (int it = 0; it < 3000; ++it) {
    size_t len = 0;
    /* half of the cases start from a valid prefix so the semantic checks get exercised */
    const char *prefix = (it & 1) ? "input x[3]\noutput f[3]\n" : "";
    len = (size_t)snprintf(buf, sizeof buf, "%s", prefix);
    int n = (int)(rnd() % 60);
    for (int i = 0; i < n; ++i) {
      const char *t = vocab[rnd() % (sizeof vocab / sizeof vocab[0])];
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s ", t);
    }
    fuzz_one(buf);
  }
}

Test(lang_limits, fuzz_mutated_programs) {
  rng_state = 4242;
  size_t n = strlen(KIN);
  char *buf = (char *)malloc(n + 64);
  static const char *const pieces[] = {
      "[",  "]",  "{", "}",  "(",  ")", "x",  "f",    "r",    "%",
      "..", "\n", "=", "-=", "32", "0", "-1", "let ", "for ", "2.5"};
  for (int it = 0; it < 800; ++it) {
    memcpy(buf, KIN, n + 1);
    int edits = 1 + (int)(rnd() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t len = strlen(buf);
      size_t at = rnd() % (len + 1);
      const char *piece = pieces[rnd() % (sizeof pieces / sizeof pieces[0])];
      size_t del = rnd() % 4, pl = strlen(piece);
      if (at + del > len) del = len - at;
      if (len - del + pl + 1 > n + 64) continue;
      memmove(buf + at + pl, buf + at + del, len - at - del + 1);
      memcpy(buf + at, piece, pl);
    }
    fuzz_one(buf);
  }
  free(buf);
}
