/*
 * plan.h — a program prepared for the GPU interpreter: one record per instruction and pass, with
 * the pass's lane masks (lanes.h) and a packed tangent layout.
 *
 * A register holding a value of lane mask m needs tangent storage for popcount(m) lanes only, not
 * for all W: the plan gives every definition of an active register a block of popcount(m)
 * consecutive "slots" for its lifetime (from its definition to its last use), and lane k of it
 * lives in slot offset + popcount(m & (2^k - 1)).  Blocks are recycled by size, so the per-point
 * tangent storage is the peak of simultaneously live lanes (kin: 71 registers x 32 lanes = 2272
 * slots uncompressed; far fewer packed), which decides how many points fit in on-chip memory.
 * The layout changes where tangents are stored, never which operations run, so results are
 * identical to an uncompressed layout.  Host code, independent of CUDA.
 */
#ifndef DUAL_PLAN_H
#define DUAL_PLAN_H

#include <stdint.h>

#include "program.h"

/* One instruction of one pass.  For LDK, the constant's bits are in (oa, ob) (no tangent). */
typedef struct dual_plan_instr {
  uint32_t op_dst, a, b, c; /* the bytecode words (bytecode.h) */
  uint32_t ma, mb, mc, md;  /* lane masks of the operands and of the result */
  uint32_t oa, ob, oc, od;  /* slot offsets of the operands' and the result's packed tangents */
} dual_plan_instr;

/* Fill recs[(pass - pass0) * n_instr + t] for passes pass0 .. pass0 + npass - 1 of a job (mode:
 * dual_mode; width: lanes per pass, 0 for eval).  *n_slots receives the tangent slots a point
 * needs (the peak over those passes).  Returns DUAL_SUCCESS or DUAL_ERR_NO_MEMORY (scratch). */
int dual_plan_build(const dual_program *prog, int mode, int width, int64_t pass0, int64_t npass,
                    dual_plan_instr *recs, int64_t *n_slots);

#endif /* DUAL_PLAN_H */
