/*
 * quad_ref.h — an independent quad-precision (__float128, libquadmath) reference for every op of
 * src/dual/ops.def: values from libquadmath and partial derivatives by Richardson-extrapolated
 * 4th-order central differences in quad.  It never includes src/dual/rules.h: only the opcode
 * numbers (DUAL_OP_* of dual/ops.h) are shared.  Used by tests/test_conformance.c.
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

#endif /* DUAL_QUAD_REF_H */
