/*
 * slots.c — the slot allocator of slots.h: a linear sweep that frees a register's block at its
 * last use; freed ranges are merged and taken first-fit.
 */
#include "slots.h"

#include <stdlib.h>
#include <string.h>

int dual_slot_pool_init(dual_slot_pool *sp) {
  memset(sp, 0, sizeof *sp);
  sp->cap = 64;
  sp->off = (uint32_t *)malloc((size_t)sp->cap * sizeof *sp->off);
  sp->len = (uint32_t *)malloc((size_t)sp->cap * sizeof *sp->len);
  if (sp->off == NULL || sp->len == NULL) {
    dual_slot_pool_free(sp);
    return 0;
  }
  return 1;
}

void dual_slot_pool_free(dual_slot_pool *sp) {
  free(sp->off);
  free(sp->len);
  memset(sp, 0, sizeof *sp);
}

/* Return [off, off + cnt) to the free ranges, merging it with its neighbours. */
static int pool_put(dual_slot_pool *sp, uint32_t off, uint32_t cnt) {
  int64_t i = 0;
  while (i < sp->n && sp->off[i] < off) ++i;
  const int prev = i > 0 && sp->off[i - 1] + sp->len[i - 1] == off;
  const int next = i < sp->n && off + cnt == sp->off[i];
  if (prev && next) { /* bridges two ranges */
    sp->len[i - 1] += cnt + sp->len[i];
    memmove(sp->off + i, sp->off + i + 1, (size_t)(sp->n - i - 1) * sizeof *sp->off);
    memmove(sp->len + i, sp->len + i + 1, (size_t)(sp->n - i - 1) * sizeof *sp->len);
    --sp->n;
    return 1;
  }
  if (prev) {
    sp->len[i - 1] += cnt;
    return 1;
  }
  if (next) {
    sp->off[i] = off, sp->len[i] += cnt;
    return 1;
  }
  if (sp->n == sp->cap) {
    const int64_t cap = 2 * sp->cap;
    uint32_t *o = (uint32_t *)realloc(sp->off, (size_t)cap * sizeof *o);
    if (o == NULL) return 0;
    sp->off = o;
    uint32_t *l = (uint32_t *)realloc(sp->len, (size_t)cap * sizeof *l);
    if (l == NULL) return 0;
    sp->len = l;
    sp->cap = cap;
  }
  memmove(sp->off + i + 1, sp->off + i, (size_t)(sp->n - i) * sizeof *sp->off);
  memmove(sp->len + i + 1, sp->len + i, (size_t)(sp->n - i) * sizeof *sp->len);
  sp->off[i] = off, sp->len[i] = cnt;
  ++sp->n;
  return 1;
}

/* The first free range that holds cnt slots, else the top of the space (extending a free range
 * that ends there). */
static uint32_t pool_take(dual_slot_pool *sp, uint32_t cnt) {
  for (int64_t i = 0; i < sp->n; ++i) {
    if (sp->len[i] < cnt) continue;
    const uint32_t off = sp->off[i];
    sp->off[i] += cnt, sp->len[i] -= cnt;
    if (sp->len[i] == 0) {
      memmove(sp->off + i, sp->off + i + 1, (size_t)(sp->n - i - 1) * sizeof *sp->off);
      memmove(sp->len + i, sp->len + i + 1, (size_t)(sp->n - i - 1) * sizeof *sp->len);
      --sp->n;
    }
    return off;
  }
  uint32_t off = (uint32_t)sp->top;
  if (sp->n > 0 && (int64_t)sp->off[sp->n - 1] + sp->len[sp->n - 1] == sp->top) {
    off = sp->off[sp->n - 1]; /* the last free range grows into the top */
    sp->top = (int64_t)off;
    --sp->n;
  }
  sp->top += cnt;
  if (sp->top > sp->peak) sp->peak = sp->top;
  return off;
}

/* Which of an instruction's a, b, c fields are registers read by it. */
static int reads_of(int op) {
  const dual_op_info *info = &dual_op_table[op];
  if (info->prop == DUAL_PROP_LOAD) return 0;
  if (info->prop == DUAL_PROP_OUT) return DUAL_DIES_A;
  return (info->arity > 0 ? DUAL_DIES_A : 0) | (info->arity > 1 ? DUAL_DIES_B : 0) |
         (info->arity > 2 ? DUAL_DIES_C : 0);
}

void dual_slots_last_uses(const dual_program *prog, uint8_t *live, uint8_t *dies) {
  memset(live, 0, (size_t)prog->n_active);
  for (int64_t t = prog->n_instr - 1; t >= 0; --t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), r[3] = {DUAL_INSTR_A(w), DUAL_INSTR_B(w), DUAL_INSTR_C(w)};
    const int reads = reads_of(op);
    if (dual_op_table[op].prop != DUAL_PROP_OUT && dst < prog->n_active) live[dst] = 0;
    dies[t] = 0;
    for (int i = 0; i < 3; ++i)
      if ((reads >> i) & 1 && r[i] < prog->n_active && !live[r[i]]) {
        dies[t] |= (uint8_t)(1 << i);
        live[r[i]] = 1;
      }
  }
}

int dual_slots_assign(const dual_program *prog, const uint8_t *dies, dual_plan_instr *recs,
                      const uint32_t *need, const uint8_t *inplace, uint32_t *off, uint32_t *cnt,
                      dual_slot_pool *sp) {
  memset(cnt, 0, (size_t)prog->n_active * sizeof *cnt);
  sp->n = 0;
  sp->top = 0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    dual_plan_instr *q = &recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const int32_t dst = (int32_t)(q->op_dst & ((1u << DUAL_DST_BITS) - 1u));
    const int32_t r[3] = {(int32_t)q->a, (int32_t)q->b, (int32_t)q->c};
    const int reads = reads_of(op);
    uint32_t roff[3] = {0, 0, 0}, rcnt[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i)
      if ((reads >> i) & 1 && r[i] < prog->n_active) roff[i] = off[r[i]], rcnt[i] = cnt[r[i]];
    q->oa = rcnt[0] ? roff[0] : 0;
    q->ob = rcnt[1] ? roff[1] : 0;
    q->oc = rcnt[2] ? roff[2] : 0;
    q->od = 0;
    int reused = 0;
    const int defines = dual_op_table[op].prop != DUAL_PROP_OUT && dst < prog->n_active;
    if (defines) {
      const uint32_t nd = need[t];
      /* In place (dst == a, a dies here) when the layout is the same: the block carries over. */
      if (nd > 0 && dst == r[0] && (dies[t] & DUAL_DIES_A) && rcnt[0] == nd && inplace[t]) {
        q->od = roff[0];
        reused = 1;
      } else {
        int is_operand = ((reads & DUAL_DIES_A) && dst == r[0]) ||
                         ((reads & DUAL_DIES_B) && dst == r[1]) ||
                         ((reads & DUAL_DIES_C) && dst == r[2]);
        if (!is_operand && cnt[dst] > 0 && !pool_put(sp, off[dst], cnt[dst])) return 0;
        q->od = nd > 0 ? pool_take(sp, nd) : 0;
      }
      off[dst] = q->od;
      cnt[dst] = nd;
    }
    /* Free the blocks of operands read for the last time (after the result got its block, so a
     * result never shares storage with an operand it is computed from, except in place). */
    for (int i = 0; i < 3; ++i) {
      if (!((dies[t] >> i) & 1) || rcnt[i] == 0) continue;
      if (i == 0 && reused) continue;
      int dup = 0; /* the same register read twice (a * a): free once */
      for (int j = 0; j < i; ++j) dup |= ((dies[t] >> j) & 1) && r[j] == r[i];
      if (dup) continue;
      if (!pool_put(sp, roff[i], rcnt[i])) return 0;
      if (!defines || r[i] != dst) cnt[r[i]] = 0; /* (an OUT's dst field is not a register) */
    }
  }
  return 1;
}
