/*
 * quad_ref.h — an independent quad-precision (__float128, libquadmath) reference for every op of
 * src/dual/ops.def: values from libquadmath and partial derivatives by Richardson-extrapolated
 * 4th-order central differences in quad, second partials likewise.  It never includes
 * src/dual/rules.h: only the opcode numbers (DUAL_OP_* of dual/ops.h) are shared.  Used by
 * tests/test_conformance.c (values, partials) and tests/test_rules2.c (second partials).
 */
#ifndef DUAL_QUAD_REF_H
#define DUAL_QUAD_REF_H

#include <quadmath.h>

/* Return codes of quad_ref_partial*. */
enum quad_ref_code {
  QREF_NONE = 0,         /* no reference for this op (a new op of ops.def: add it here) */
  QREF_OK = 1,           /* *d (and *err) hold the derivative */
  QREF_NOT_SMOOTH = -1,  /* no two-sided derivative here: kink, jump, singular point, outside
                            the domain or a non-finite argument (the test applies the documented
                            convention of the op instead) */
  QREF_UNRESOLVED = -2   /* smooth, but beyond what quad differences resolve (e.g. sin(1e300)) */
};

/* r = op(a, b, c) in quad precision (NaN outside the domain).  Unused operands are ignored.
 * Internal ops: LDX/LDP/LDK/OUT return a (the loaded or stored value).  Returns 1, or 0 when the
 * op has no reference. */
int quad_ref_value(int op, __float128 a, __float128 b, __float128 c, __float128 *r);

/* d = d op / d (a, b, c)[which], which in 0..2, by central differences in quad with a step scaled
 * to the argument and to the distance to the nearest non-smooth point.  Returns a quad_ref_code.
 * The partial of an operand the op does not read is 0.  LDP and LDK (passive leaves) have
 * partial 0; LDX and OUT have partial 1. */
int quad_ref_partial(int op, __float128 a, __float128 b, __float128 c, int which, __float128 *d);

/* Same, also returning a bound on the reference's own error (truncation estimated from two step
 * sizes, plus quad rounding of the differenced values) in *err. */
int quad_ref_partial_err(int op, __float128 a, __float128 b, __float128 c, int which,
                         __float128 *d, __float128 *err);

/* d = d2 op / d(arg i) d(arg j), i and j in 0..2 (either order), by quad central differences on
 * the scales of quad_ref_partial_err: along one axis the 5-point second difference at steps h
 * and 2h, across two the 4-corner mixed difference at steps h, 2h, 4h, each Richardson-
 * extrapolated to 6th order, with h = 2^-20, 2^-18 or 2^-16 of the scale, whichever bound is
 * smallest; next to 0, ops odd there (sin, atan2 along either axis, erfc - 1, ...) take x times
 * their third derivative at 0, differenced likewise.  *err bounds the reference's own error as
 * for the partial (truncation from two step sizes, quad rounding amplified by 1/h^2).  Returns a
 * quad_ref_code: QREF_NOT_SMOOTH where either axis is not smooth at the point, and for a mixed
 * partial also where no two-dimensional neighbourhood is (pow at a <= 0: b varies only over the
 * integers there).  Used by tests/test_rules2.c. */
int quad_ref_second_err(int op, __float128 a, __float128 b, __float128 c, int i, int j,
                        __float128 *d, __float128 *err);

#endif /* DUAL_QUAD_REF_H */
