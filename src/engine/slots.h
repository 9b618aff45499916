/*
 * slots.h — packed per-point storage for the interpreters' derivative components: every
 * definition of an active register gets a block of consecutive "slots" for its lifetime (from
 * its definition to its last use), and blocks are recycled by size.  Used by the first-order GPU
 * plan (plan.c: a block holds a register's lanes) and the second-order plan (plan2.c: its lanes,
 * then its pairs).  The layout changes where derivatives are stored, never which operations run,
 * so results do not depend on it.  Host code.
 */
#ifndef DUAL_SLOTS_H
#define DUAL_SLOTS_H

#include <stdint.h>

#include "engine/plan.h"
#include "program.h"

/* The free ranges of the slot space, sorted by offset and merged when adjacent, and its top.
 * A block is taken first-fit, so freed blocks of any sizes serve later requests (second-order
 * blocks grow as accumulators gather pairs: recycling by exact size left hess at 898 slots per
 * point instead of 396). */
typedef struct dual_slot_pool {
  uint32_t *off, *len; /* free ranges */
  int64_t n, cap;
  int64_t top, peak;
} dual_slot_pool;

/* Operand bits of dies[t] (plan.h records: a, b, c). */
enum { DUAL_DIES_A = 1, DUAL_DIES_B = 2, DUAL_DIES_C = 4 };

int dual_slot_pool_init(dual_slot_pool *sp); /* 1, or 0 out of memory */
void dual_slot_pool_free(dual_slot_pool *sp);

/* dies[t]: which operands of instruction t read an active register for the last time (live:
 * scratch of n_active bytes). */
void dual_slots_last_uses(const dual_program *prog, uint8_t *live, uint8_t *dies);

/* Assign the slot offsets (oa, ob, oc, od) of one pass's records: instruction t's result needs
 * need[t] slots; when inplace[t] is set it may keep operand a's block (dst == a, a dies there,
 * and the block has the same layout).  off, cnt: scratch of n_active entries.  sp->peak grows to
 * the slots per point.  Returns 1, or 0 when out of memory. */
int dual_slots_assign(const dual_program *prog, const uint8_t *dies, dual_plan_instr *recs,
                      const uint32_t *need, const uint8_t *inplace, uint32_t *off, uint32_t *cnt,
                      dual_slot_pool *sp);

#endif /* DUAL_SLOTS_H */
