/*
 * value_step.h — the value half of one instruction, written once for the interpreters
 * (engine/interp_ops.h, CPU and GPU) and the compiled tier's generated kernels
 * (jit/jit_source.c): the op's rule (dual/rules.h) gives the result and its partials d[3], and a
 * checked op (F_CHECK in ops.def) ORs its flags into the point's status word.  The tangent half
 * is engine/tangent_terms.h.  Valid C11, CUDA and NVRTC.
 */
#ifndef DUAL_VALUE_STEP_H
#define DUAL_VALUE_STEP_H

#include "dual/ops.h"   /* F_CHECK */
#include "dual/rules.h" /* dual_rule_<name> */

#define DUAL_VALUE_STEP(name, flags, a, b, c, r, d, st)                                          \
  {                                                                                              \
    int f_ = 0;                                                                                  \
    (r) = dual_rule_##name((a), (b), (c), (d), &f_);                                             \
    if ((flags)&F_CHECK) (st) |= f_;                                                             \
  }

/* A stored value's or lane's flags, DUAL_PT_NAN or DUAL_PT_INF (the CPU interpreter's test, and the
 * CPU compiled tier's), and an input's: DUAL_PT_BAD_INPUT where it is NaN or infinite. */
#define DUAL_FINITE_FLAGS(v) (((v) != (v)) * DUAL_PT_NAN | (fabs(v) == (double)INFINITY) * DUAL_PT_INF)
#define DUAL_INPUT_FLAGS(v) ((fabs(v) <= DBL_MAX) ? 0 : DUAL_PT_BAD_INPUT)

#endif /* DUAL_VALUE_STEP_H */
