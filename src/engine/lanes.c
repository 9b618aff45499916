/*
 * lanes.c — computes the per-pass lane masks of lanes.h with one sweep over the bytecode.
 */
#include "lanes.h"

void dual_lanes_compute(const dual_program *prog, int mode, int width, int32_t c0,
                        uint32_t *reg_mask, dual_lanes *lanes) {
  const int32_t nact = prog->n_active;
  const uint32_t all = width >= 32 ? 0xffffffffu : ((1u << width) - 1u);
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), ra = DUAL_INSTR_A(w), rb = DUAL_INSTR_B(w),
                  rc = DUAL_INSTR_C(w);
    const dual_op_info *info = &dual_op_table[op];
    dual_lanes l = {0, 0, 0};
    if (op == DUAL_OP_LDX) {
      if (mode == DUAL_MODE_JVP) l.a = 1u & all;
      else {
        const int32_t d = prog->seed_lane != NULL ? prog->seed_lane[ra] : ra; /* its direction */
        if (d >= c0 && d - c0 < width && width > 0) l.a = 1u << (d - c0);
      }
    } else if (info->prop == DUAL_PROP_OUT) {
      l.a = ra < nact ? reg_mask[ra] : 0;
    } else if (info->prop != DUAL_PROP_LOAD && info->prop != DUAL_PROP_NONE) {
      if (info->arity > 0 && ra < nact && op != DUAL_OP_SELECT) l.a = reg_mask[ra];
      if (info->arity > 1 && rb < nact) l.b = reg_mask[rb];
      if (info->arity > 2 && rc < nact) l.c = reg_mask[rc];
    }
    if (info->prop != DUAL_PROP_OUT && dst < nact)
      reg_mask[dst] = op == DUAL_OP_LDX ? l.a : (l.a | l.b | l.c);
    lanes[t] = l;
  }
}
