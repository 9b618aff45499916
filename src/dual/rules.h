/*
 * rules.h — the value and first-derivative rule of every op, written once.
 *
 * Each rule is  double dual_rule_NAME(double a, double b, double c, double d[3], int *flags):
 * it returns the value r = op(a, b, c) and stores the local partials d = (dr/da, dr/db, dr/dc);
 * for CHOOSE ops d holds 1 at the chosen operand and 0 elsewhere; NONE ops store zeros.  Rules that
 * detect a domain error or a singular point OR DUAL_PT_* bits into *flags.  The tangent of the
 * result is then sum_i d[i] * t_i (prop.h), so a derivative rule lives in exactly one place and
 * is shared by the CPU interpreter, the CUDA kernel and the compile-time constant folder.
 * Kink conventions (DESIGN.md): derivatives at kinks take the documented side; see ops.def.
 * Transcendental functions are the library's own (fn.h, dual_*), never libm's or CUDA's, so the
 * rules round identically on every engine; sqrt, fma, floor, ceil and fabs are exact in IEEE 754.
 */
#ifndef DUAL_RULES_H
#define DUAL_RULES_H

#include <math.h>

#include "dualbatch.h"
#include "fn.h"
#include "portable.h"

#define DUAL_LN2 0.693147180559945309417232121458176568
#define DUAL_LN10 2.30258509299404568401799145468436421
#define DUAL_2_SQRTPI 1.12837916709551257389615890312154517 /* 2/sqrt(pi) */

#define DUAL_RULE(name)                                                                          \
  DUAL_INLINE double dual_rule_##name(double a, double b, double c, double *DUAL_RESTRICT d,    \
                                      int *DUAL_RESTRICT flags)
#define DUAL_UNUSED3 (void)a, (void)b, (void)c, (void)flags
#define DUAL_D(x, y, z) (d[0] = (x), d[1] = (y), d[2] = (z))

/* Leaves and stores are handled by the engines; these keep the X-macro expansion uniform. */
DUAL_RULE(LDX) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(LDP) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(LDK) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(OUT) { DUAL_UNUSED3; DUAL_D(1, 0, 0); return a; }

/* --- arithmetic ------------------------------------------------------------------------------ */
DUAL_RULE(ADD) { DUAL_UNUSED3; DUAL_D(1, 1, 0); return a + b; }
DUAL_RULE(SUB) { DUAL_UNUSED3; DUAL_D(1, -1, 0); return a - b; }
DUAL_RULE(MUL) { DUAL_UNUSED3; DUAL_D(b, a, 0); return a * b; }
DUAL_RULE(NEG) { DUAL_UNUSED3; DUAL_D(-1, 0, 0); return -a; }
DUAL_RULE(DIV) {
  DUAL_UNUSED3;
  double r = a / b, ib = 1.0 / b;
  *flags |= (b == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D(ib, -r * ib, 0);
  return r;
}
DUAL_RULE(SQUARE) { DUAL_UNUSED3; DUAL_D(2.0 * a, 0, 0); return a * a; }

/* pow: d/da = b a^(b-1) (0 when b == 0, so pow(0,0) has slope 0); d/db = r log a for a > 0, the
 * right-side limit 0 at a == 0 with b > 0, NaN otherwise (undefined for a negative base). */
DUAL_RULE(POW) {
  DUAL_UNUSED3;
  double r = dual_pow(a, b);
  double da = (b == 0.0) ? 0.0 : b * dual_pow(a, b - 1.0);
  double db = (a > 0.0) ? r * dual_log(a) : ((a == 0.0 && b > 0.0) ? 0.0 : NAN);
  *flags |= (a < 0.0 && b != floor(b) && b == b) ? DUAL_PT_DOMAIN : 0;
  *flags |= (a == 0.0 && b < 1.0 && b != 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D(da, db, 0);
  return r;
}
DUAL_RULE(FMA) { DUAL_UNUSED3; DUAL_D(b, a, 1); return fma(a, b, c); }

/* --- roots, exponentials, logarithms ---------------------------------------------------------- */
DUAL_RULE(SQRT) {
  DUAL_UNUSED3;
  double r = sqrt(a);
  *flags |= (a < 0.0) ? DUAL_PT_DOMAIN : ((a == 0.0) ? DUAL_PT_SINGULAR : 0);
  DUAL_D(0.5 / r, 0, 0);
  return r;
}
DUAL_RULE(CBRT) {
  DUAL_UNUSED3;
  double r = dual_cbrt(a);
  *flags |= (a == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D(1.0 / (3.0 * r * r), 0, 0);
  return r;
}
DUAL_RULE(EXP) { DUAL_UNUSED3; double r = dual_exp(a); DUAL_D(r, 0, 0); return r; }
DUAL_RULE(EXP2) { DUAL_UNUSED3; double r = dual_exp2(a); DUAL_D(DUAL_LN2 * r, 0, 0); return r; }
DUAL_RULE(EXPM1) { DUAL_UNUSED3; DUAL_D(dual_exp(a), 0, 0); return dual_expm1(a); }

#define DUAL_LOG_FLAGS(x, lo)                                                                    \
  (*flags |= ((x) < (lo)) ? DUAL_PT_DOMAIN : (((x) == (lo)) ? DUAL_PT_SINGULAR : 0))
DUAL_RULE(LOG) { DUAL_UNUSED3; DUAL_LOG_FLAGS(a, 0.0); DUAL_D(1.0 / a, 0, 0); return dual_log(a); }
DUAL_RULE(LOG2) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, 0.0);
  DUAL_D(1.0 / (a * DUAL_LN2), 0, 0);
  return dual_log2(a);
}
DUAL_RULE(LOG10) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, 0.0);
  DUAL_D(1.0 / (a * DUAL_LN10), 0, 0);
  return dual_log10(a);
}
DUAL_RULE(LOG1P) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, -1.0);
  DUAL_D(1.0 / (1.0 + a), 0, 0);
  return dual_log1p(a);
}
/* hypot: slope 0 at the origin (the kink convention of abs, which hypot(a, 0) equals). */
DUAL_RULE(HYPOT) {
  DUAL_UNUSED3;
  double r = dual_hypot(a, b);
  if (r == 0.0) {
    DUAL_D(0, 0, 0);
  } else {
    DUAL_D(a / r, b / r, 0);
  }
  return r;
}

/* --- trigonometric and hyperbolic --------------------------------------------------------------- */
DUAL_RULE(SIN) {
  DUAL_UNUSED3;
  double s, co;
  dual_sincos(a, &s, &co);
  DUAL_D(co, 0, 0);
  return s;
}
DUAL_RULE(COS) {
  DUAL_UNUSED3;
  double s, co;
  dual_sincos(a, &s, &co);
  DUAL_D(-s, 0, 0);
  return co;
}
DUAL_RULE(TAN) { DUAL_UNUSED3; double r = dual_tan(a); DUAL_D(1.0 + r * r, 0, 0); return r; }
/* 1 - a*a written as (1-a)(1+a): exact near |a| = 1 where the slope is largest. */
#define DUAL_UNIT_FLAGS(x)                                                                       \
  (*flags |= (fabs(x) > 1.0) ? DUAL_PT_DOMAIN : ((fabs(x) == 1.0) ? DUAL_PT_SINGULAR : 0))
DUAL_RULE(ASIN) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(1.0 / sqrt((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_asin(a);
}
DUAL_RULE(ACOS) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(-1.0 / sqrt((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_acos(a);
}
DUAL_RULE(ATAN) { DUAL_UNUSED3; DUAL_D(1.0 / (1.0 + a * a), 0, 0); return dual_atan(a); }
/* atan2(a, b) = angle of the point (x = b, y = a); singular at the origin. */
DUAL_RULE(ATAN2) {
  DUAL_UNUSED3;
  double h = dual_hypot(a, b);
  *flags |= (h == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D((b / h) / h, (-a / h) / h, 0);
  return dual_atan2(a, b);
}
DUAL_RULE(SINH) { DUAL_UNUSED3; DUAL_D(dual_cosh(a), 0, 0); return dual_sinh(a); }
DUAL_RULE(COSH) { DUAL_UNUSED3; DUAL_D(dual_sinh(a), 0, 0); return dual_cosh(a); }
/* tanh' = 1 - r^2 cancels for |a| > 1 (0 instead of 5e-17 at a = 19); 4e/(1+e)^2 with
 * e = exp(-2|a|) is accurate to a few ulp everywhere and underflows gracefully. */
DUAL_RULE(TANH) {
  DUAL_UNUSED3;
  double e = dual_exp(-2.0 * fabs(a));
  DUAL_D(4.0 * e / ((1.0 + e) * (1.0 + e)), 0, 0);
  return dual_tanh(a);
}
DUAL_RULE(ASINH) { DUAL_UNUSED3; DUAL_D(1.0 / dual_hypot(a, 1.0), 0, 0); return dual_asinh(a); }
DUAL_RULE(ACOSH) {
  DUAL_UNUSED3;
  *flags |= (a < 1.0) ? DUAL_PT_DOMAIN : ((a == 1.0) ? DUAL_PT_SINGULAR : 0);
  DUAL_D(1.0 / (sqrt(a - 1.0) * sqrt(a + 1.0)), 0, 0);
  return dual_acosh(a);
}
DUAL_RULE(ATANH) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(1.0 / ((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_atanh(a);
}

/* --- special functions and activations ---------------------------------------------------------- */
/* exp(-a^2) with a^2 split exactly into hi + lo (fma), so the large exponent loses no bits:
 * exp(-hi - lo) = exp(-hi) (1 - lo) to the last ulp, where lo is tiny. */
DUAL_INLINE double dual_exp_neg_square(double a) {
  double hi = a * a, lo = fma(a, a, -hi);
  return dual_exp(-hi) * (1.0 - lo);
}
DUAL_RULE(ERF) { DUAL_UNUSED3; DUAL_D(DUAL_2_SQRTPI * dual_exp_neg_square(a), 0, 0); return dual_erf(a); }
DUAL_RULE(ERFC) { DUAL_UNUSED3; DUAL_D(-DUAL_2_SQRTPI * dual_exp_neg_square(a), 0, 0); return dual_erfc(a); }
/* Logistic function, evaluated without overflow on both sides. */
DUAL_INLINE double dual_sigmoid(double a) {
  if (a >= 0.0) return 1.0 / (1.0 + dual_exp(-a));
  double e = dual_exp(a);
  return e / (1.0 + e);
}
DUAL_RULE(SIGMOID) {
  DUAL_UNUSED3;
  double r = dual_sigmoid(a);
  DUAL_D(r * dual_sigmoid(-a), 0, 0); /* r(1-r) without cancellation */
  return r;
}
DUAL_RULE(SOFTPLUS) {
  DUAL_UNUSED3;
  DUAL_D(dual_sigmoid(a), 0, 0);
  return (a > 0.0) ? a + dual_log1p(dual_exp(-a)) : dual_log1p(dual_exp(a));
}
DUAL_RULE(RELU) { DUAL_UNUSED3; DUAL_D((a > 0.0) ? 1.0 : 0.0, 0, 0); return (a > 0.0) ? a : ((a != a) ? a : 0.0); }
DUAL_RULE(ABS) {
  DUAL_UNUSED3;
  DUAL_D((a > 0.0) ? 1.0 : ((a < 0.0) ? -1.0 : 0.0), 0, 0);
  return fabs(a);
}

/* --- choices: the tangent is the chosen operand's; NaN propagates ------------------------------- */
DUAL_RULE(MIN) {
  DUAL_UNUSED3;
  int pa = (a <= b) || (a != a);
  DUAL_D(pa ? 1.0 : 0.0, pa ? 0.0 : 1.0, 0);
  return pa ? a : b;
}
DUAL_RULE(MAX) {
  DUAL_UNUSED3;
  int pa = (a >= b) || (a != a);
  DUAL_D(pa ? 1.0 : 0.0, pa ? 0.0 : 1.0, 0);
  return pa ? a : b;
}
DUAL_RULE(SELECT) {
  DUAL_UNUSED3;
  int pb = (a != 0.0);
  DUAL_D(0, pb ? 1.0 : 0.0, pb ? 0.0 : 1.0);
  return pb ? b : c;
}

/* --- piecewise constant: no tangent ----------------------------------------------------------- */
DUAL_RULE(SIGN) {
  DUAL_UNUSED3;
  DUAL_D(0, 0, 0);
  return (a > 0.0) ? 1.0 : ((a < 0.0) ? -1.0 : a); /* sign(+-0) = +-0, sign(NaN) = NaN */
}
DUAL_RULE(FLOOR) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return floor(a); }
DUAL_RULE(CEIL) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return ceil(a); }
#define DUAL_BOOL_RULE(name, expr)                                                               \
  DUAL_RULE(name) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return (expr) ? 1.0 : 0.0; }
DUAL_BOOL_RULE(LT, a < b)
DUAL_BOOL_RULE(LE, a <= b)
DUAL_BOOL_RULE(GT, a > b)
DUAL_BOOL_RULE(GE, a >= b)
DUAL_BOOL_RULE(EQ, a == b)
DUAL_BOOL_RULE(NE, a != b)
DUAL_BOOL_RULE(AND, a != 0.0 && b != 0.0)
DUAL_BOOL_RULE(OR, a != 0.0 || b != 0.0)
DUAL_BOOL_RULE(NOT, a == 0.0)

#endif /* DUAL_RULES_H */
