/*
 * stress.c — the stress build's checks (stress.h); empty in every other build.
 */
#include "stress.h"

#if DUAL_STRESS
#include <stdio.h>

#include "dual/ops.h"
#include "program.h"

void dual_stress_fail(const char *what, const char *file, int line) {
  fprintf(stderr, "dualbatch (stress build): internal check failed: %s (%s:%d)\n", what, file, line);
  fflush(stderr);
  __builtin_trap();
}

void dual_stress_check_instr(const struct dual_program *prog, int op, int64_t dst, int64_t a,
                             int64_t b, int64_t c) {
  DUAL_ASSERT(op >= 0 && op < DUAL_OP_COUNT);
  const dual_op_info *info = &dual_op_table[op];
  const int64_t regs = prog->n_regs;
  const int64_t operand[3] = {a, b, c};
  if (info->prop == DUAL_PROP_OUT) {
    DUAL_ASSERT(a >= 0 && a < regs && b >= 0 && b < prog->n_out);
    return;
  }
  DUAL_ASSERT(dst >= 0 && dst < regs);
  if (info->prop == DUAL_PROP_LOAD) {
    if (op == DUAL_OP_LDX) DUAL_ASSERT(a >= 0 && a < prog->n_in);
    if (op == DUAL_OP_LDP) DUAL_ASSERT(a >= 0 && a < prog->n_par);
    if (op == DUAL_OP_LDK) DUAL_ASSERT(a >= 0 && a < prog->n_const);
    return;
  }
  for (int k = 0; k < info->arity; ++k) DUAL_ASSERT(operand[k] >= 0 && operand[k] < regs);
}
#else
typedef int dual_stress_unused; /* ISO C: a translation unit is not empty */
#endif
