/*
 * apply_rule.h — call the rule of any op by opcode (a switch expanded from ops.def).
 * Used where ops are not known at compile time of the caller: the constant folder and tests.
 * The engines expand their own dispatch so each case inlines its rule into a point loop.
 */
#ifndef DUAL_APPLY_RULE_H
#define DUAL_APPLY_RULE_H

#include "ops.h"
#include "rules.h"

DUAL_INLINE double dual_apply_rule(int op, double a, double b, double c, double *d, int *flags) {
  switch (op) {
#define OP(name, spelling, arity, prop, fl, synopsis)                                            \
  case DUAL_OP_##name:                                                                           \
    return dual_rule_##name(a, b, c, d, flags);
#include "ops.def"
#undef OP
  default:
    d[0] = d[1] = d[2] = 0.0;
    return 0.0;
  }
}

#endif /* DUAL_APPLY_RULE_H */
