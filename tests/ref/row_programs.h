/*
 * row_programs.h — square test programs written row by row (output i = row(i, n, buf)), and
 * the rows the structure tests share: Bratu's tridiagonal rows, a cyclic product, a dense sum.  Header-only, for Criterion tests.
 */
#ifndef DUAL_TEST_ROW_PROGRAMS_H
#define DUAL_TEST_ROW_PROGRAMS_H

#include <stdio.h>
#include <stdlib.h>

#include "test_arrays.h"

typedef const char *(*row_fn)(int i, int n, char *buf); /* buf: 200 bytes */

/* The program of n inputs x and n outputs f, f[i] = row(i, n, buf). */
static inline dual_program *row_program(dual_context *ctx, int n, row_fn row) {
  size_t cap = 256 + (size_t)n * 200;
  char *src = malloc(cap), buf[200];
  cr_assert_not_null(src);
  int len = snprintf(src, cap, "input x[%d]\noutput f[%d]\n", n, n);
  for (int i = 0; i < n; ++i) len += snprintf(src + len, cap - (size_t)len, "f[%d] = %s\n", i, row(i, n, buf));
  dual_program *prog = compile_ok(ctx, src);
  free(src);
  return prog;
}

/* Bratu's rows: -2 x_i + exp(x_i) + x_{i-1} + x_{i+1} (a tridiagonal J). */
static inline const char *row_tridiagonal(int i, int n, char *b) {
  int len = snprintf(b, 200, "-2 * x[%d] + exp(x[%d])", i, i);
  if (i > 0) len += snprintf(b + len, 200 - (size_t)len, " + x[%d]", i - 1);
  if (i < n - 1) snprintf(b + len, 200 - (size_t)len, " + x[%d]", i + 1);
  return b;
}

/* x_i x_{i+1}, the last row wrapping to x_0: band (n - 1, 1), two colors for even n. */
static inline const char *row_cyclic(int i, int n, char *b) {
  snprintf(b, 200, "x[%d] * x[%d]", i, (i + 1) % n);
  return b;
}

/* i + the sum of every input: a dense J. */
static inline const char *row_dense(int i, int n, char *b) {
  int len = snprintf(b, 200, "%d", i);
  for (int j = 0; j < n; ++j) len += snprintf(b + len, 200 - (size_t)len, " + x[%d]", j);
  return b;
}

#endif /* DUAL_TEST_ROW_PROGRAMS_H */
