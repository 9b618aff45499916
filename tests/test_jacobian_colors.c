/*
 * test_jacobian_colors.c — the structure and column coloring of a program's Jacobian
 * (solve/jacobian_colors.h): hand-counted structures and colorings (Bratu's tridiagonal rows
 * take 3 colors, a cyclic pair product 2, a dense system n and no view, constant outputs 1),
 * every coloring checked to give distinct colors within each row, and J S from a colored view (program.h), expanded in place,
 * bitwise equal to the dense J of the same engine at every width (MGH 9, 13, 14, tridiagonal
 * and cyclic systems up to n = 48; the dense Jacobian is the one the other tests check against
 * independent references).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dualbatch.h"
#include "mgh_equations.h"
#include "program.h"
#include "solve/jacobian_colors.h"
#include "row_programs.h"
#include "test_arrays.h"

static dual_context *cpu(void) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS);
  return ctx;
}


/* Each row's colors are distinct, every color is used, and the structure lists each row's
 * columns in increasing order. */
static void check_coloring(const dual_jac_colors *c) {
  int *seen = calloc((size_t)c->n + 1, sizeof *seen);
  for (int32_t j = 0; j < c->n; ++j) {
    cr_assert(c->color[j] >= 0 && c->color[j] < c->ncolors, "column %d: color %d of %d", j, c->color[j], c->ncolors);
    seen[c->color[j]] = 1;
  }
  for (int32_t k = 0; k < c->ncolors; ++k) cr_assert(seen[k], "color %d unused", k);
  for (int32_t i = 0; i < c->m; ++i) {
    memset(seen, 0, sizeof *seen * ((size_t)c->n + 1));
    for (int32_t e = c->row_start[i]; e < c->row_start[i + 1]; ++e) {
      if (e > c->row_start[i]) cr_assert(c->cols[e] > c->cols[e - 1], "row %d: columns out of order", i);
      cr_assert(!seen[c->color[c->cols[e]]], "row %d: two columns of color %d", i, c->color[c->cols[e]]);
      seen[c->color[c->cols[e]]] = 1;
    }
  }
  free(seen);
}

Test(jacobian_colors, hand_counted_structures_and_colorings) {
  dual_context *ctx = cpu();
  dual_jac_colors c;
  /* tridiagonal n = 15: 43 entries, colors j mod 3 */
  dual_program *prog = row_program(ctx, 15, row_tridiagonal);
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  cr_assert(c.row_start[15] == 43 && c.lo == 1 && c.hi == 1 && c.ncolors == 3, "nnz %d band (%d, %d) colors %d",
            c.row_start[15], c.lo, c.hi, c.ncolors);
  for (int j = 0; j < 15; ++j) cr_assert_eq(c.color[j], j % 3, "column %d", j);
  cr_assert_not_null(c.view);
  cr_assert_eq(dual_program_jacobian_columns(c.view), 3);
  check_coloring(&c);
  dual_jac_colors_free(&c);
  dual_program_destroy(&prog);
  /* cyclic n = 40 (two passes of 32 columns): rows {i, i + 1}, the last {0, 39}: colors 0, 1, 0, ... */
  prog = row_program(ctx, 40, row_cyclic);
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  cr_assert(c.row_start[40] == 80 && c.lo == 39 && c.hi == 1 && c.ncolors == 2, "nnz %d band (%d, %d) colors %d",
            c.row_start[40], c.lo, c.hi, c.ncolors);
  check_coloring(&c);
  dual_jac_colors_free(&c);
  dual_program_destroy(&prog);
  /* dense n = 7: one color per column, no view */
  prog = row_program(ctx, 7, row_dense);
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  cr_assert(c.row_start[7] == 49 && c.ncolors == 7 && c.view == NULL);
  check_coloring(&c);
  dual_jac_colors_free(&c);
  dual_program_destroy(&prog);
  /* outputs that no input reaches: no entries, every column color 0 (no two share a row), one
   * direction */
  prog = compile_ok(ctx, "input x[3]\noutput f[2]\nf[0] = 1\nf[1] = 2\n");
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  cr_assert(c.row_start[2] == 0 && c.ncolors == 1 && c.view != NULL, "nnz %d colors %d view %p", c.row_start[2],
            c.ncolors, (void *)c.view);
  check_coloring(&c);
  dual_jac_colors_free(&c);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* J S of prog's colored view at B points, expanded in place, against the dense J, bitwise, at the
 * automatic width and at widths 1 .. 32. */
static void expand_equals_dense(dual_context *ctx, const dual_program *prog, int B, const double *x) {
  dual_jac_colors c;
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  check_coloring(&c);
  cr_assert_not_null(c.view, "no view: %d colors for %d columns", c.ncolors, c.n);
  const int n = c.n, m = c.m;
  double *J = malloc(sizeof(double) * (size_t)(B * m * n)), *Jc = malloc(sizeof(double) * (size_t)(B * m * n));
  double *y = malloc(sizeof(double) * (size_t)(B * m)), *yc = malloc(sizeof(double) * (size_t)(B * m));
  double row[64];
  cr_assert(c.ncolors <= 64);
  const int widths[7] = {0, 1, 2, 4, 8, 16, 32};
  for (int w = 0; w < 7; ++w) {
    cr_assert_eq(dual_context_set_width(ctx, widths[w]), DUAL_SUCCESS);
    cr_assert_eq(dual_jacobian(ctx, prog, B, x, n, NULL, 0, y, m, J, (int64_t)m * n, NULL), DUAL_SUCCESS, "%s",
                 dual_context_last_error(ctx));
    dual_batch b;
    dual_batch_init(&b);
    b.count = B, b.x = x, b.x_ps = n, b.x_es = 1, b.y = yc, b.y_ps = m, b.y_es = 1;
    for (int64_t e = 0; e < (int64_t)B * m * n; ++e) Jc[e] = NAN; /* every entry must be written */
    b.d = Jc, b.d_ps = (int64_t)m * n, b.d_rs = c.ncolors, b.d_cs = 1;
    cr_assert_eq(dual_run(ctx, c.view, DUAL_MODE_JACOBIAN, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    for (int p = 0; p < B; ++p)
      dual_jac_expand(m, n, c.ncolors, c.color, c.row_start, c.cols, Jc + (int64_t)p * m * n, Jc + (int64_t)p * m * n,
                      1, row);
    cr_assert(memcmp(y, yc, sizeof(double) * (size_t)(B * m)) == 0, "width %d: values differ", widths[w]);
    for (int64_t e = 0; e < (int64_t)B * m * n; ++e)
      cr_assert(memcmp(&J[e], &Jc[e], sizeof(double)) == 0,
                "width %d, point %lld, entry (%lld, %lld): %a expanded, %a dense", widths[w],
                (long long)(e / (m * n)), (long long)(e % (m * n) / n), (long long)(e % n), Jc[e], J[e]);
  }
  cr_assert_eq(dual_context_set_width(ctx, 0), DUAL_SUCCESS);
  free(J), free(Jc), free(y), free(yc);
  dual_jac_colors_free(&c);
}

Test(jacobian_colors, expanded_jacobians_equal_the_dense_ones_bitwise) {
  dual_context *ctx = cpu();
  enum { B = 37 };
  double x[B * 48];
  for (int k = 0; k < B * 48; ++k) x[k] = 0.9 * sin(0.37 * k + 0.1) - 0.05; /* signs of both kinds */
  const int ns[3] = {15, 40, 48};
  for (int z = 0; z < 3; ++z) {
    dual_program *prog = row_program(ctx, ns[z], z == 1 ? row_cyclic : row_tridiagonal);
    expand_equals_dense(ctx, prog, B, x);
    dual_program_destroy(&prog);
  }
  /* MGH: discrete boundary value (9), Broyden tridiagonal (13), Broyden banded (14, band (5, 1),
   * 7 colors) at n = 12 and 24 */
  const int probs[3] = {9, 13, 14};
  for (int k = 0; k < 3; ++k)
    for (int n = 12; n <= 24; n += 12) {
      char *src = mgh_equations_source(probs[k], n);
      dual_program *prog = compile_ok(ctx, src);
      expand_equals_dense(ctx, prog, B, x);
      dual_program_destroy(&prog);
      free(src);
    }
  dual_context_destroy(&ctx);
}

/* A colored view runs forward Jacobians and evaluations only: anything else is an internal
 * error, not a wrong answer. */
Test(jacobian_colors, a_view_refuses_other_modes) {
  dual_context *ctx = cpu();
  dual_program *prog = row_program(ctx, 6, row_tridiagonal);
  dual_jac_colors c;
  cr_assert_eq(dual_jac_colors_build(prog, &c), DUAL_SUCCESS);
  cr_assert_not_null(c.view);
  double x[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, y[6], v[6] = {1, 0, 0, 0, 0, 0}, d[36];
  dual_batch b;
  dual_batch_init(&b);
  b.count = 1, b.x = x, b.x_ps = 6, b.x_es = 1, b.y = y, b.y_ps = 6, b.y_es = 1;
  b.v = v, b.v_ps = 6, b.v_es = 1, b.d = d, b.d_ps = 6, b.d_rs = 1, b.d_cs = 0;
  cr_assert_eq(dual_run(ctx, c.view, DUAL_MODE_JVP, &b), DUAL_ERR_INTERNAL);
  cr_assert(strstr(dual_context_last_error(ctx), "colored view") != NULL, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE), DUAL_SUCCESS);
  b.d_ps = 36, b.d_rs = c.ncolors, b.d_cs = 1;
  cr_assert_eq(dual_run(ctx, c.view, DUAL_MODE_JACOBIAN, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_FORWARD, "a view runs forward whatever the context asks");
  dual_jac_colors_free(&c);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}
