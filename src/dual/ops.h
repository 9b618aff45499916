/*
 * ops.h — the opcode enum and per-op metadata, expanded from ops.def.
 * Included by the compiler passes, the validator, the disassembler, the engines and the tests.
 * Valid C11 and CUDA.
 */
#ifndef DUAL_OPS_H
#define DUAL_OPS_H

#include "portable.h"

/* How an op's tangent is formed (ops.def "prop" column). */
enum dual_prop {
  DUAL_PROP_LOAD,
  DUAL_PROP_OUT,
  DUAL_PROP_LIN,
  DUAL_PROP_MUL,
  DUAL_PROP_ADD,
  DUAL_PROP_SUB,
  DUAL_PROP_NEG,
  DUAL_PROP_CHOOSE,
  DUAL_PROP_NONE
};

/* How an op's result adjoint flows back to its operands (ops.def "adj" column). */
enum dual_adj {
  DUAL_ADJ_MISSING, /* no rule: never in the table (tests/test_reverse.c fails on it) */
  DUAL_ADJ_GRAD,
  DUAL_ADJ_SEED,
  DUAL_ADJ_LIN,
  DUAL_ADJ_ADD,
  DUAL_ADJ_SUB,
  DUAL_ADJ_NEG,
  DUAL_ADJ_CHOOSE,
  DUAL_ADJ_NONE
};

/* ops.def "flags" column.  F_D2AA / F_D2AB / F_D2BB: the second partial d2r/da2 (da db, db2)
 * of this op may be nonzero; where the flag is absent dual_rule2_NAME stores exactly 0.0 there
 * and the second-order engines skip the term structurally.  No op has a second partial in c. */
enum dual_op_flag { F_COMM = 1, F_CHECK = 2, F_BOOL = 4, F_D2AA = 8, F_D2AB = 16, F_D2BB = 32, F_SPECIAL = 64 };

typedef enum dual_op {
#define OP(name, spelling, arity, prop, adj, flags, synopsis) DUAL_OP_##name,
#include "ops.def"
#undef OP
  DUAL_OP_COUNT
} dual_op;

typedef struct dual_op_info {
  const char *name;      /* "ADD" */
  const char *spelling;  /* "+" ; "" for internal ops */
  int arity;             /* register operands read */
  int prop;              /* enum dual_prop */
  int adj;               /* enum dual_adj */
  int flags;             /* enum dual_op_flag */
  const char *synopsis;  /* "r=a+b ; t=ta+tb" */
} dual_op_info;

/* Does the result of `op` carry tangents, given which operands do?  The one activity rule, used
 * by the compiler to assign register classes and by the validator to check them. */
DUAL_INLINE int dual_result_active(int op, int prop, int act_a, int act_b, int act_c) {
  if (op == DUAL_OP_LDX) return 1;
  if (prop == DUAL_PROP_LOAD || prop == DUAL_PROP_NONE || prop == DUAL_PROP_OUT) return 0;
  if (op == DUAL_OP_SELECT) return act_b || act_c; /* the condition's partial is always 0 */
  return act_a || act_b || act_c;
}

/* Host-side table (defined in src/ops.c). */
extern const dual_op_info dual_op_table[DUAL_OP_COUNT];

/* Look an op up by its spelling; returns -1 if none.  Also accepts the operator aliases
 * "^" (pow) and "?:" (select). */
int dual_op_by_spelling(const char *spelling);

#endif /* DUAL_OPS_H */
