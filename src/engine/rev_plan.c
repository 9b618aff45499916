/*
 * rev_plan.c — the reverse sweep's auxiliary words and checkpoint segments (rev_plan.h).
 */
#include "engine/rev_plan.h"

#include <stdlib.h>
#include <string.h>

#include "bytecode.h"
#include "dual/ops.h"
#include "dualbatch.h"
#include "stress.h"

/* Rows instruction w tapes: one per operand when its active result's adjoint reads partials
 * (two for LIN ops in forward-over-reverse: d and d'). */
static int rows_of(const uint32_t *w, int32_t n_active, int for_) {
  const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
  if (DUAL_INSTR_DST(w) >= n_active) return 0;
  if (info->adj == DUAL_ADJ_LIN) return for_ ? 2 * info->arity : info->arity;
  return info->adj == DUAL_ADJ_CHOOSE ? info->arity : 0;
}

dual_rev_layout dual_rev_plan_layout(const dual_rev_plan *pl, const dual_program *prog) {
  const int64_t state = prog->n_regs + (pl->for_ ? prog->n_active : 0); /* a checkpoint */
  dual_rev_layout l;
  l.val = 0;
  l.tan = l.val + prog->n_regs;
  l.snap = l.val + state;
  l.tape = l.snap + (pl->nseg > 1 ? (int64_t)pl->nseg * state : 0);
  l.adj = l.tape + pl->tape_rows;
  l.adjd = l.adj + prog->n_active + 1;
  l.grad = l.adjd + (pl->for_ ? prog->n_active + 1 : 0);
  l.gradd = l.grad + prog->n_in + 1;
  l.scratch = l.gradd + (pl->for_ ? prog->n_in + 1 : 0);
  l.end = l.scratch + DUAL_REV_SCRATCH(pl->for_);
  return l;
}

/* Cut the program into segments of at most `cap` tape rows (greedy); fills pl->seg when it is
 * not NULL and returns the number of segments and, in *largest, the largest segment's rows. */
static int64_t cut(const dual_program *prog, int for_, int64_t cap, int64_t *seg,
                   int64_t *largest) {
  int64_t nseg = 0, rows = 0;
  *largest = 0;
  if (seg != NULL) seg[0] = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const int r = rows_of(prog->code + t * DUAL_INSTR_WORDS, prog->n_active, for_);
    if (rows + r > cap && rows > 0) {
      if (rows > *largest) *largest = rows;
      ++nseg;
      if (seg != NULL) seg[nseg] = t;
      rows = 0;
    }
    rows += r;
  }
  if (rows > *largest) *largest = rows;
  ++nseg;
  if (seg != NULL) seg[nseg] = prog->n_instr;
  return nseg;
}

int dual_rev_plan_build(dual_rev_plan *pl, const dual_program *prog, int for_, int64_t budget) {
  memset(pl, 0, sizeof *pl);
  pl->for_ = for_;
  int64_t total = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t)
    total += rows_of(prog->code + t * DUAL_INSTR_WORDS, prog->n_active, for_);
  /* the fewest segments that fit: one, else K = 2, 3, 4, 6, 8, ... of ~total/K rows each */
  int64_t nseg = 1, largest = total, cap = total > 0 ? total : 1;
  pl->nseg = 1, pl->tape_rows = total;
  int64_t need = dual_rev_plan_layout(pl, prog).end, best = need;
  if (total > DUAL_REV_MAX_ROWS || (budget > 0 && need > budget)) {
    int fits = 0;
    for (int64_t k = 2; k <= total && k <= ((int64_t)1 << 30); k += k / 2) {
      cap = (total + k - 1) / k;
      nseg = cut(prog, for_, cap, NULL, &largest);
      pl->nseg = (int32_t)nseg, pl->tape_rows = largest;
      need = dual_rev_plan_layout(pl, prog).end;
      if (need < best) best = need;
      if (largest <= DUAL_REV_MAX_ROWS && (budget <= 0 || need <= budget)) {
        fits = 1;
        break;
      }
      const int64_t state = prog->n_regs + (for_ ? prog->n_active : 0);
      if (budget > 0 && nseg * state > budget) break; /* the checkpoints alone are too big */
    }
    if (!fits) {
      pl->per_point = best;
      return DUAL_ERR_LIMIT;
    }
  }
  pl->aux = (uint32_t *)malloc(((size_t)prog->n_instr + 1) * sizeof *pl->aux);
  pl->seg = (int64_t *)malloc(((size_t)nseg + 1) * sizeof *pl->seg);
  if (pl->aux == NULL || pl->seg == NULL) {
    dual_rev_plan_free(pl);
    return DUAL_ERR_NO_MEMORY;
  }
  (void)cut(prog, for_, cap, pl->seg, &largest); /* the chosen segments' boundaries */
  int64_t rows = 0, s = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    if (s + 1 <= nseg && t == pl->seg[s + 1]) ++s, rows = 0;
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(w)];
    const int r = rows_of(w, prog->n_active, for_);
    pl->aux[t] = (uint32_t)info->adj | (uint32_t)info->arity << 4 | (uint32_t)(r > 0) << 6 |
                 (uint32_t)(r > 0 ? rows : 0) << 7;
    rows += r;
    DUAL_ASSERT(rows <= pl->tape_rows); /* no segment's tape outgrows the planned rows */
  }
  DUAL_ASSERT(pl->seg[0] == 0 && pl->seg[nseg] == prog->n_instr && s == nseg - 1);
  pl->per_point = dual_rev_plan_layout(pl, prog).end;
  return DUAL_SUCCESS;
}

void dual_rev_plan_free(dual_rev_plan *pl) {
  free(pl->aux);
  free(pl->seg);
  pl->aux = NULL, pl->seg = NULL;
}
