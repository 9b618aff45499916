/*
 * plan2.h — one second-order pass (pass2.h) prepared for the interpreters: lane masks and packed
 * slots per instruction (the plan.h records), and one "pair entry" per second-order component an
 * instruction computes.
 *
 * A register's tangent lanes occupy a block of slots (popcount of its lane mask, as in plan.h);
 * each of its second-order components gets a slot of its own, above the lanes' space.  Only the
 * pairs that can be nonzero exist, found before any point is seen: a pair (k, l) of a result is
 * structurally nonzero when an operand carries it or when a nonzero second partial of the op
 * (ops.def F_D2AA/AB/BB) meets tangents of lanes k and l (the Rosenbrock terms of hess carry 3
 * pairs each instead of 136).  A component that ADD or SUB would only copy from an operand dying
 * there (an accumulation: h = 1 * h_a) takes over that operand's slot and costs no work.  Every
 * other component is one entry listing its slots and the terms present, so the interpreters run
 * one formula per entry (engine/interp2_ops.h) and never look at masks.  Host code, shared by the
 * CPU and GPU engines.
 */
#ifndef DUAL_PLAN2_H
#define DUAL_PLAN2_H

#include <stdint.h>

#include "engine/pass2.h"
#include "engine/plan.h"
#include "engine/slots.h"
#include "program.h"

/* Terms of a component d2r/dk dl = sum_i d_i h_i + d_aa ta_k ta_l + d_bb tb_k tb_l
 * + d_ab (ta_k tb_l + tb_k ta_l): which are present (flags), in this order. */
enum dual_pair_term {
  DUAL_PE_HA = 1,   /* operand a carries the pair: d_a * ha */
  DUAL_PE_HB = 2,   /* d_b * hb */
  DUAL_PE_HC = 4,   /* d_c * hc */
  DUAL_PE_AA = 8,   /* d_aa * (ta_k * ta_l) */
  DUAL_PE_BB = 16,  /* d_bb * (tb_k * tb_l) */
  DUAL_PE_ABKL = 32, /* ta_k * tb_l, inside d_ab * (...) */
  DUAL_PE_ABLK = 64  /* tb_k * ta_l, inside d_ab * (...) */
};
#define DUAL_PE_Q(flags) ((uint32_t)(flags) >> 16) /* the pair's index in the pass */

typedef struct dual_pair_entry {
  uint32_t flags;          /* dual_pair_term bits | q << 16 */
  uint32_t hd, ha, hb, hc; /* component slots: the result's, the operands' (where present) */
  uint32_t ak, al, bk, bl; /* tangent slots of lanes k and l of operands a and b */
} dual_pair_entry;

typedef struct dual_plan2 {
  dual_plan_instr *recs; /* [n_instr]: lane masks and lane block offsets */
  uint32_t *first;       /* [n_instr + 1]: instruction t's entries are [first[t], first[t+1]) */
  dual_pair_entry *ents; /* the entries; an OUT has one per pair of the pass (HA: present) */
  int64_t n_ents, n_slots;
  /* owned scratch */
  int64_t cap_ents;
  int words;      /* 64-bit words of a pair set */
  uint64_t *sets; /* [n_active][words] the pair set of each register */
  uint32_t *lanes, *need, *off, *cnt;
  uint8_t *dies, *inplace;
  dual_slot_pool sp;
  int64_t *comp;     /* [n_active] where a register's component slots start in `slots`, or -1 */
  uint32_t *slots;   /* the component slots of each definition, in pair order */
  int64_t n_comp, cap_comp;
  uint32_t *free_slots; /* component slots free for reuse (a stack) */
  int64_t n_free, cap_free, comp_top;
} dual_plan2;

/* Allocate the per-program parts; returns DUAL_SUCCESS or DUAL_ERR_NO_MEMORY. */
int dual_plan2_init(dual_plan2 *plan, const dual_program *prog);
/* Build the plan of one pass; returns DUAL_SUCCESS or DUAL_ERR_NO_MEMORY. */
int dual_plan2_build(dual_plan2 *plan, const dual_program *prog, const dual_pass2 *pass);
void dual_plan2_free(dual_plan2 *plan);

#endif /* DUAL_PLAN2_H */
