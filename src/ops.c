/*
 * ops.c — the host-side op metadata table, expanded from src/dual/ops.def, and lookup by name.
 */
#include <string.h>

#include "dual/ops.h"

const dual_op_info dual_op_table[DUAL_OP_COUNT] = {
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  {#name, spelling, arity, DUAL_PROP_##prop, DUAL_ADJ_##adj, flags, synopsis},
#include "dual/ops.def"
#undef OP
};

int dual_op_by_spelling(const char *spelling) {
  if (spelling == NULL || spelling[0] == '\0') return -1;
  if (strcmp(spelling, "^") == 0) return DUAL_OP_POW;
  if (strcmp(spelling, "?:") == 0) return DUAL_OP_SELECT;
  for (int op = 0; op < DUAL_OP_COUNT; ++op)
    if (strcmp(dual_op_table[op].spelling, spelling) == 0) return op;
  return -1;
}
