/*
 * plan.c — builds the GPU plan of plan.h: lane masks per pass (lanes.c), then the packed tangent
 * slots (slots.h: a register's block holds the lanes of its mask).
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "dual/portable.h"
#include "lanes.h"
#include "slots.h"

int dual_plan_build(const dual_program *prog, int mode, int width, int64_t pass0, int64_t npass,
                    dual_plan_instr *recs, int64_t *n_slots) {
  const int64_t ni = prog->n_instr;
  const size_t nact = (size_t)prog->n_active + 1, nis = (size_t)(ni > 0 ? ni : 1);
  dual_lanes *lanes = (dual_lanes *)malloc(nis * sizeof *lanes);
  uint8_t *dies = (uint8_t *)malloc(2 * nis + nact);
  uint32_t *scratch = (uint32_t *)malloc((3 * nact + nis) * sizeof *scratch);
  dual_slot_pool sp;
  memset(&sp, 0, sizeof sp);
  int ok = lanes != NULL && dies != NULL && scratch != NULL && dual_slot_pool_init(&sp);
  uint32_t *need = scratch + 3 * nact;
  uint8_t *inplace = dies + nis + nact;
  *n_slots = 0;
  if (ok) dual_slots_last_uses(prog, dies + nis, dies);
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
      need[t] = (uint32_t)DUAL_POPC(q[t].md);
      inplace[t] = q[t].ma == q[t].md;
    }
    if (width > 0) {
      sp.peak = 0;
      ok = dual_slots_assign(prog, dies, q, need, inplace, scratch + nact, scratch + 2 * nact, &sp);
      if (sp.peak > *n_slots) *n_slots = sp.peak;
    }
    for (int64_t t = 0; t < ni; ++t) /* constants travel in the record */
      if ((int)(q[t].op_dst >> DUAL_DST_BITS) == DUAL_OP_LDK) {
        uint64_t bits;
        memcpy(&bits, &prog->consts[q[t].a], sizeof bits);
        q[t].oa = (uint32_t)bits, q[t].ob = (uint32_t)(bits >> 32);
      }
  }
  dual_slot_pool_free(&sp);
  free(lanes);
  free(dies);
  free(scratch);
  return ok ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
}
