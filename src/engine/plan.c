/*
 * plan.c — builds the GPU plan of plan.h: lane masks per pass (lanes.c), then the packed tangent
 * slots by a linear sweep that frees a register's block at its last use and recycles blocks of
 * equal size (no coalescing: sizes are 1..32, and a program reuses the same few sizes).
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "dual/portable.h"
#include "lanes.h"

enum { DIES_A = 1, DIES_B = 2, DIES_C = 4 };

/* Recycled blocks, one stack of offsets per size 1..32, and the top of the slot space. */
typedef struct slot_pool {
  uint32_t *stack[33];
  int64_t len[33], cap[33];
  int64_t top, peak;
} slot_pool;

static int pool_free(slot_pool *sp, uint32_t off, uint32_t cnt) {
  if (sp->len[cnt] == sp->cap[cnt]) {
    int64_t cap = sp->cap[cnt] ? 2 * sp->cap[cnt] : 16;
    uint32_t *s = (uint32_t *)realloc(sp->stack[cnt], (size_t)cap * sizeof *s);
    if (s == NULL) return 0;
    sp->stack[cnt] = s;
    sp->cap[cnt] = cap;
  }
  sp->stack[cnt][sp->len[cnt]++] = off;
  return 1;
}

static uint32_t pool_alloc(slot_pool *sp, uint32_t cnt) {
  if (sp->len[cnt] > 0) return sp->stack[cnt][--sp->len[cnt]];
  uint32_t off = (uint32_t)sp->top;
  sp->top += cnt;
  if (sp->top > sp->peak) sp->peak = sp->top;
  return off;
}

/* Which of an instruction's a, b, c fields are registers read by it. */
static int reads_of(int op) {
  const dual_op_info *info = &dual_op_table[op];
  if (info->prop == DUAL_PROP_LOAD) return 0;
  if (info->prop == DUAL_PROP_OUT) return DIES_A;
  return (info->arity > 0 ? DIES_A : 0) | (info->arity > 1 ? DIES_B : 0) |
         (info->arity > 2 ? DIES_C : 0);
}

/* dies[t]: which operands of instruction t read an active register for the last time. */
static void last_uses(const dual_program *prog, uint8_t *live, uint8_t *dies) {
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

/* Slots of one pass (lanes already in recs[].ma/mb/mc). */
static int assign_slots(const dual_program *prog, const uint8_t *dies, dual_plan_instr *recs,
                        uint32_t *off, uint32_t *cnt, slot_pool *sp) {
  memset(cnt, 0, (size_t)prog->n_active * sizeof *cnt);
  for (int i = 1; i <= 32; ++i) sp->len[i] = 0;
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
    if (dual_op_table[op].prop != DUAL_PROP_OUT && dst < prog->n_active) {
      const uint32_t need = (uint32_t)DUAL_POPC(q->md);
      /* In place (dst == a, a dies here) when the lanes are the same: the block carries over. */
      if (need > 0 && dst == r[0] && (dies[t] & DIES_A) && rcnt[0] == need && q->ma == q->md) {
        q->od = roff[0];
        reused = 1;
      } else {
        int is_operand = ((reads & DIES_A) && dst == r[0]) || ((reads & DIES_B) && dst == r[1]) ||
                         ((reads & DIES_C) && dst == r[2]);
        if (!is_operand && cnt[dst] > 0 && !pool_free(sp, off[dst], cnt[dst])) return 0;
        q->od = need > 0 ? pool_alloc(sp, need) : 0;
      }
      off[dst] = q->od;
      cnt[dst] = need;
    }
    /* Free the blocks of operands read for the last time (after the result got its block, so a
     * result never shares storage with an operand it is computed from, except in place). */
    for (int i = 0; i < 3; ++i) {
      if (!((dies[t] >> i) & 1) || rcnt[i] == 0) continue;
      if (i == 0 && reused) continue;
      int dup = 0; /* the same register read twice (a * a): free once */
      for (int j = 0; j < i; ++j) dup |= ((dies[t] >> j) & 1) && r[j] == r[i];
      if (dup) continue;
      if (!pool_free(sp, roff[i], rcnt[i])) return 0;
      if (r[i] != dst) cnt[r[i]] = 0;
    }
  }
  return 1;
}

int dual_plan_build(const dual_program *prog, int mode, int width, int64_t pass0, int64_t npass,
                    dual_plan_instr *recs, int64_t *n_slots) {
  const int64_t ni = prog->n_instr;
  const size_t nact = (size_t)prog->n_active + 1;
  dual_lanes *lanes = (dual_lanes *)malloc((size_t)(ni > 0 ? ni : 1) * sizeof *lanes);
  uint8_t *dies = (uint8_t *)malloc((size_t)(ni > 0 ? ni : 1) + nact);
  uint32_t *scratch = (uint32_t *)malloc(3 * nact * sizeof *scratch);
  slot_pool sp;
  memset(&sp, 0, sizeof sp);
  int ok = lanes != NULL && dies != NULL && scratch != NULL;
  *n_slots = 0;
  if (ok) last_uses(prog, dies + ni, dies);
  for (int64_t pass = pass0; ok && pass < pass0 + npass; ++pass) {
    dual_plan_instr *q = recs + (pass - pass0) * ni;
    if (width > 0) dual_lanes_compute(prog, mode, width, (int32_t)(pass * width), scratch, lanes);
    for (int64_t t = 0; t < ni; ++t) {
      const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
      const int op = DUAL_INSTR_OP(w);
      memset(&q[t], 0, sizeof q[t]);
      q[t].op_dst = w[0], q[t].a = w[1], q[t].b = w[2], q[t].c = w[3];
      if (width > 0) {
        q[t].ma = lanes[t].a, q[t].mb = lanes[t].b, q[t].mc = lanes[t].c;
        if (op == DUAL_OP_LDX) q[t].md = lanes[t].a;
        else if (dual_op_table[op].prop != DUAL_PROP_OUT) q[t].md = q[t].ma | q[t].mb | q[t].mc;
      }
    }
    if (width > 0) {
      sp.peak = 0;
      ok = assign_slots(prog, dies, q, scratch + nact, scratch + 2 * nact, &sp);
      if (sp.peak > *n_slots) *n_slots = sp.peak;
    }
    for (int64_t t = 0; t < ni; ++t) /* constants travel in the record */
      if ((int)(q[t].op_dst >> DUAL_DST_BITS) == DUAL_OP_LDK) {
        uint64_t bits;
        memcpy(&bits, &prog->consts[q[t].a], sizeof bits);
        q[t].oa = (uint32_t)bits, q[t].ob = (uint32_t)(bits >> 32);
      }
  }
  for (int i = 0; i <= 32; ++i) free(sp.stack[i]);
  free(lanes);
  free(dies);
  free(scratch);
  return ok ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
}
