/*
 * apply_rule.h — call the rule of any op by opcode (a switch expanded from ops.def), first order
 * (dual_apply_rule) or second (dual_apply_rule2).
 * Used where ops are not known at compile time of the caller: the constant folder and tests.
 * The engines expand their own dispatch so each case inlines its rule into a point loop.
 */
#ifndef DUAL_APPLY_RULE_H
#define DUAL_APPLY_RULE_H

#include "ops.h"
#include "rules.h"

DUAL_INLINE double dual_apply_rule(int op, double a, double b, double c, double *d, int *flags) {
  switch (op) {
#define OP(name, spelling, arity, prop, adj, fl, synopsis)                                       \
  case DUAL_OP_##name:                                                                           \
    return dual_rule_##name(a, b, c, d, flags);
#include "ops.def"
#undef OP
  default:
    d[0] = d[1] = d[2] = 0.0;
    return 0.0;
  }
}

/* The second partials dd = (d2r/da2, d2r/da db, d2r/db2) of any op, given the value r and the
 * partials d that dual_apply_rule returned at (a, b, c) (rules.h, DUAL_RULE2). */
DUAL_INLINE void dual_apply_rule2(int op, double a, double b, double c, double r, const double *d,
                                  double *dd) {
  switch (op) {
#define OP(name, spelling, arity, prop, adj, fl, synopsis)                                       \
  case DUAL_OP_##name:                                                                           \
    dual_rule2_##name(a, b, c, r, d, dd);                                                        \
    return;
#include "ops.def"
#undef OP
  default:
    dd[0] = dd[1] = dd[2] = 0.0;
    return;
  }
}

#endif /* DUAL_APPLY_RULE_H */
