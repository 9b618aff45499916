/*
 * lanes.h — structural sparsity of the tangents within one forward pass.
 *
 * A pass carries W directions ("lanes"): Jacobian pass c seeds input c0+k in lane k (in a colored
 * view, program.h, the inputs whose direction is c0+k), a JVP seeds every input in lane 0.  Lane
 * k of a register can only be nonzero if the register depends on an input seeded there, which the
 * bytecode tells before any point is seen.  dual_lanes_compute records, for every instruction,
 * the lane masks of its operands; the interpreters then run tangent loops only over lanes some
 * operand may fill, treating the others as exact zeros.  This is exact (skipped terms are zero
 * tangents, which contribute nothing: interp_ops.h) and the work on a lane never depends on W,
 * so results stay bitwise identical for every width.
 * Host code (engine-independent); the CUDA engine copies the masks to the device.
 */
#ifndef DUAL_LANES_H
#define DUAL_LANES_H

#include <stdint.h>

#include "program.h"

/* Lane masks of instruction t's operands in one pass (bit k = lane k may be nonzero).  For LDX,
 * `a` is the seed mask; for OUT, `a` is the stored register's mask. */
typedef struct dual_lanes {
  uint32_t a, b, c;
} dual_lanes;

/* Fill lanes[0 .. n_instr) for a pass of `width` lanes whose first direction is input c0
 * (mode: dual_mode).  reg_mask is scratch of n_active entries. */
void dual_lanes_compute(const dual_program *prog, int mode, int width, int32_t c0,
                        uint32_t *reg_mask, dual_lanes *lanes);

#endif /* DUAL_LANES_H */
