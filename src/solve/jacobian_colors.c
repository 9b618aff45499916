/*
 * jacobian_colors.c — the structure, band and column coloring of a program's Jacobian
 * (jacobian_colors.h): one forward lane analysis per 32 columns, then a greedy coloring.
 */
#include "solve/jacobian_colors.h"

#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "engine/lanes.h"
#include "program.h"

/* Row-major bit matrix of the entries that may be nonzero (m rows of `words` 32-bit words), from
 * the OUT instructions' lane masks of dense Jacobian passes of 32 columns.  NULL on OOM. */
static uint32_t *structure(const dual_program *prog, int64_t words) {
  const int32_t n = prog->n_in, m = prog->n_out;
  uint32_t *bits = (uint32_t *)calloc((size_t)(m > 0 ? m : 1) * (size_t)(words > 0 ? words : 1), sizeof *bits);
  uint32_t *reg_mask = (uint32_t *)malloc(sizeof *reg_mask * (size_t)(prog->n_active + 1));
  dual_lanes *lanes = (dual_lanes *)malloc(sizeof *lanes * (size_t)(prog->n_instr > 0 ? prog->n_instr : 1));
  if (bits != NULL && reg_mask != NULL && lanes != NULL) {
    for (int32_t c0 = 0; c0 < n; c0 += 32) {
      memset(reg_mask, 0, sizeof *reg_mask * (size_t)(prog->n_active + 1));
      dual_lanes_compute(prog, DUAL_MODE_JACOBIAN, 32, c0, reg_mask, lanes);
      for (int64_t t = 0; t < prog->n_instr; ++t) {
        const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
        if (dual_op_table[DUAL_INSTR_OP(w)].prop == DUAL_PROP_OUT)
          bits[(int64_t)DUAL_INSTR_B(w) * words + c0 / 32] |= lanes[t].a;
      }
    }
  } else {
    free(bits);
    bits = NULL;
  }
  free(reg_mask);
  free(lanes);
  return bits;
}

void dual_jac_colors_free(dual_jac_colors *c) {
  free(c->color);
  free(c->row_start);
  free(c->cols);
  dual_program_destroy(&c->view);
  memset(c, 0, sizeof *c);
}

int dual_jac_colors_build(const dual_program *prog, dual_jac_colors *c) {
  memset(c, 0, sizeof *c);
  const int32_t n = prog->n_in, m = prog->n_out;
  const int64_t words = (n + 31) / 32;
  c->n = n, c->m = m;
  uint32_t *bits = structure(prog, words);
  int64_t nnz = 0;
  for (int64_t e = 0; bits != NULL && e < (int64_t)m * words; ++e) nnz += DUAL_POPC(bits[e]);
  c->color = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  c->row_start = (int32_t *)malloc(sizeof(int32_t) * (size_t)(m + 1));
  c->cols = (int32_t *)malloc(sizeof(int32_t) * (size_t)(nnz > 0 ? nnz : 1));
  /* scratch: each column's rows (CSC) and the colors taken around a column */
  int32_t *col_start = (int32_t *)calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *rows = (int32_t *)malloc(sizeof(int32_t) * (size_t)(nnz > 0 ? nnz : 1));
  int32_t *taken = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  int ok = bits && c->color && c->row_start && c->cols && col_start && rows && taken;
  if (ok) {
    int32_t e = 0, lo = 0, hi = 0;
    for (int32_t i = 0; i < m; ++i) {
      c->row_start[i] = e;
      for (int32_t j = 0; j < n; ++j)
        if ((bits[(int64_t)i * words + j / 32] >> (j % 32)) & 1u) {
          c->cols[e++] = j, ++col_start[j + 1];
          if (i - j > lo) lo = i - j;
          if (j - i > hi) hi = j - i;
        }
    }
    c->row_start[m] = e;
    c->lo = lo, c->hi = hi;
    for (int32_t j = 0; j < n; ++j) col_start[j + 1] += col_start[j];
    for (int32_t j = 0; j < n; ++j) taken[j] = col_start[j]; /* fill positions for now */
    for (int32_t i = 0; i < m; ++i)
      for (int32_t q = c->row_start[i]; q < c->row_start[i + 1]; ++q) rows[taken[c->cols[q]]++] = i;
    /* greedy: taken[k] == j marks color k as used next to column j */
    for (int32_t k = 0; k < n; ++k) taken[k] = -1;
    int32_t ncolors = 0;
    for (int32_t j = 0; j < n; ++j) {
      for (int32_t q = col_start[j]; q < col_start[j + 1]; ++q) {
        const int32_t i = rows[q];
        for (int32_t r = c->row_start[i]; r < c->row_start[i + 1] && c->cols[r] < j; ++r)
          taken[c->color[c->cols[r]]] = j;
      }
      int32_t k = 0;
      while (taken[k] == j) ++k;
      c->color[j] = k;
      if (k + 1 > ncolors) ncolors = k + 1;
    }
    c->ncolors = ncolors;
    if (ncolors > 0 && ncolors < n) {
      c->view = dual_program_colored(prog, c->color, ncolors);
      ok = c->view != NULL;
    }
  }
  free(bits);
  free(col_start);
  free(rows);
  free(taken);
  if (!ok) {
    dual_jac_colors_free(c);
    return DUAL_ERR_NO_MEMORY;
  }
  return DUAL_SUCCESS;
}
