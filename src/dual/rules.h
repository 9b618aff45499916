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
 *
 * Beside each rule, its second order (issue 4, nested-dual Hessians; see DUAL_RULE2 below):
 * void dual_rule2_NAME(a, b, c, r, d, dd) stores dd = (d2r/da2, d2r/da db, d2r/db2), given the
 * value r and the partials d that dual_rule_NAME returned at (a, b, c).
 */
#ifndef DUAL_RULES_H
#define DUAL_RULES_H

#include "portable.h" /* first: math.h, stdint.h (dualbatch.h's types under NVRTC) */
#include "dualbatch.h"
#include "fn.h"

#define DUAL_LN2 0.693147180559945309417232121458176568
#define DUAL_LN10 2.30258509299404568401799145468436421
#define DUAL_2_SQRTPI 1.12837916709551257389615890312154517 /* 2/sqrt(pi) */

#define DUAL_RULE(name)                                                                          \
  DUAL_INLINE double dual_rule_##name(double a, double b, double c, double *DUAL_RESTRICT d,    \
                                      int *DUAL_RESTRICT flags)
#define DUAL_UNUSED3 (void)a, (void)b, (void)c, (void)flags
#define DUAL_D(x, y, z) (d[0] = (x), d[1] = (y), d[2] = (z))

/*
 * Second partials of op at (a, b, c), given the value r and the first partials d[] that
 * dual_rule_NAME returned there: dd[0] = d2r/da2, dd[1] = d2r/da db, dd[2] = d2r/db2.  No op of
 * the table has a nonzero second partial involving c (FMA = a*b + c is linear in c, SELECT's
 * condition carries no tangent), so three entries suffice.  An entry whose flag F_D2AA / F_D2AB /
 * F_D2BB (ops.def) is absent is stored as exactly 0.0 at every point, NaN and Inf operands
 * included: the engines skip those terms structurally.  The formulas reuse r and d[] where that
 * is as accurate (exp'' = r, log'' = -d^2, atan2's from its d[]), else call fn.h; each is within
 * a few ulp of the exact second partial (tests/test_rules2.c), except that pow's d2/da db =
 * a^(b-1) (1 + b log a) loses relative accuracy next to its zero b log a = -1 (the rounding of
 * log a, amplified by |b log a| / |1 + b log a|), and that where pow has to call pow for a^(b-2)
 * or a^(b-1) with a rounded exponent (b < 1 and r / a^k not a normal number), that rounding adds
 * up to |log a| ulp, as in its first order.
 *
 * Conventions (the second-order rules raise no per-point flags: the first-order rule flags the
 * same points as DOMAIN / SINGULAR):
 *  - Kinks and jumps: abs, relu, min, max, select, sign, floor, ceil, the comparisons and logic
 *    ops, and hypot at the origin have second partials 0 everywhere, the kink included (the side
 *    the first order takes is linear there, or constant).
 *  - Singular points, where a first partial is infinite: the signed infinity of the one-sided
 *    limit that the formula gives: -inf for sqrt, log, log2, log10 at +-0, log1p at -1 and acosh
 *    at 1; cbrt at +0 -inf, at -0 +inf; asin and atanh at +-1 +-inf; acos at +-1 -+inf; a/b at
 *    b = +-0: d2/da db = -inf, d2/db2 = sign(a) sign(b) inf (NaN at 0/0); atan2 at the origin NaN
 *    (as its first partials).  At atan2's cut (a = +-0, b < 0) the formulas of the smooth
 *    continuation: d2/da2 = d2/db2 = +-0, d2/da db = -1/b^2.
 *  - pow, consistent with its first order (d/da = 0 when b == 0; d/db = 0 at a == 0 with b > 0,
 *    NaN for a < 0): d2/da2 = b (b-1) a^(b-2), exactly 0 when b == 0 or b == 1; at a = +-0 the
 *    one-sided limit: 2 for b == 2, 0 for b > 2, +inf for 1 < b < 2 (where the first partial
 *    is still finite and unflagged), -inf for 0 < b < 1, +inf for b < 0 (-inf at a = -0 when b is
 *    an odd negative integer).  d2/da db = a^(b-1) (1 + b log a) and d2/db2 = r (log a)^2 for
 *    a > 0; at a == 0: d2/db2 = 0 for b > 0 (0^b = 0 there), d2/da db = 0 for b > 1, -inf for
 *    0 < b <= 1 (the limit a -> 0+), and both NaN for b <= 0; NaN for every a < 0 (b varies only
 *    over the integers there).
 *  - Outside the domain (value NaN from finite operands: log(-1), asin(2), pow(-2, 0.5), ...):
 *    NaN in every entry whose flag is present.
 */
#define DUAL_RULE2(name)                                                                         \
  DUAL_INLINE void dual_rule2_##name(double a, double b, double c, double r,                   \
                                     const double *DUAL_RESTRICT d, double *DUAL_RESTRICT dd)
#define DUAL_UNUSED2 (void)a, (void)b, (void)c, (void)r, (void)d
#define DUAL_DD(x, y, z) (dd[0] = (x), dd[1] = (y), dd[2] = (z))

/* Leaves and stores are handled by the engines; these keep the X-macro expansion uniform. */
DUAL_RULE(LDX) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(LDP) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(LDK) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(OUT) { DUAL_UNUSED3; DUAL_D(1, 0, 0); return a; }
DUAL_RULE2(LDX) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE2(LDP) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE2(LDK) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE2(OUT) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
/* Random draws are leaves like LDP: the engines compute them (dual/random.h). */
DUAL_RULE(RNORM) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE(RUNIF) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return 0.0; }
DUAL_RULE2(RNORM) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE2(RUNIF) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }

/* --- arithmetic ------------------------------------------------------------------------------ */
DUAL_RULE(ADD) { DUAL_UNUSED3; DUAL_D(1, 1, 0); return a + b; }
DUAL_RULE2(ADD) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(SUB) { DUAL_UNUSED3; DUAL_D(1, -1, 0); return a - b; }
DUAL_RULE2(SUB) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(MUL) { DUAL_UNUSED3; DUAL_D(b, a, 0); return a * b; }
DUAL_RULE2(MUL) { DUAL_UNUSED2; DUAL_DD(0, 1, 0); }
DUAL_RULE(NEG) { DUAL_UNUSED3; DUAL_D(-1, 0, 0); return -a; }
DUAL_RULE2(NEG) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(DIV) {
  DUAL_UNUSED3;
  double r = a / b, ib = 1.0 / b;
  *flags |= (b == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D(ib, -r * ib, 0);
  return r;
}
/* d = (1/b, -r/b): d2/da db = -1/b^2, d2/db2 = 2a/b^3 = (2r/b)/b, not 2r (1/b^2), which would
 * overflow for tiny b where the result does not (a = 1e-200, b = 1e-160). */
DUAL_RULE2(DIV) { DUAL_UNUSED2; DUAL_DD(0, -d[0] * d[0], -2.0 * d[1] * d[0]); }
DUAL_RULE(SQUARE) { DUAL_UNUSED3; DUAL_D(2.0 * a, 0, 0); return a * a; }
DUAL_RULE2(SQUARE) { DUAL_UNUSED2; DUAL_DD(2, 0, 0); }

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
/* a^(b-k), k = 1 or 2, for pow's second partials (r = a^b): pow(a, b - k) where b - k is exact
 * (k/2 <= b < 2^53: Sterbenz, and above 2k a multiple of ulp(b)), so integer b stay exact;
 * else r / a^k, which has no rounded exponent (up to |log a| ulp), where r and the quotient are
 * normal numbers; else pow. */
DUAL_INLINE double dual_pow_less(double a, double b, double r, int k) {
  if (!(b >= 0.5 * k)) {
    double q = (k == 1) ? r / a : r / a / a;
    if (fabs(r) >= 0x1p-1022 && fabs(q) >= 0x1p-1022 && fabs(q) < INFINITY) return q;
  }
  return dual_pow(a, b - (double)k);
}
/* pow: d2/da2 = b (b-1) a^(b-2); d2/da db = a^(b-1) (1 + b log a), d2/db2 = r (log a)^2 for
 * a > 0; a == 0 and a < 0 as documented above (the limits a -> 0+, NaN for a negative base).
 * Where a^(b-2) overflows but b (b-1) a^(b-2) does not (b = 1e-300 at a = 1e-300: -1e300):
 * d[0] (b-1)/a.  NaN wherever the value is NaN (a < 0 with b not an integer: b - 2 may round
 * to an integer there). */
DUAL_RULE2(POW) {
  DUAL_UNUSED2;
  if (r != r) {
    DUAL_DD(r, r, r);
    return;
  }
  double daa = 0.0, dab, dbb;
  if (b != 0.0 && b != 1.0) {
    daa = b * (b - 1.0) * dual_pow_less(a, b, r, 2);
    if (fabs(daa) == INFINITY && a != 0.0) daa = d[0] * ((b - 1.0) / a);
  }
  if (a > 0.0) {
    double l = dual_log(a);
    dab = dual_pow_less(a, b, r, 1) * fma(b, l, 1.0);
    dbb = r * (l * l);
  } else if (a == 0.0 && b > 0.0) {
    dab = (b > 1.0) ? 0.0 : -INFINITY;
    dbb = 0.0;
  } else {
    dab = dbb = NAN;
  }
  DUAL_DD(daa, dab, dbb);
}
DUAL_RULE(FMA) { DUAL_UNUSED3; DUAL_D(b, a, 1); return fma(a, b, c); }
DUAL_RULE2(FMA) { DUAL_UNUSED2; DUAL_DD(0, 1, 0); }

/* --- roots, exponentials, logarithms ---------------------------------------------------------- */
DUAL_RULE(SQRT) {
  DUAL_UNUSED3;
  double r = sqrt(a);
  *flags |= (a < 0.0) ? DUAL_PT_DOMAIN : ((a == 0.0) ? DUAL_PT_SINGULAR : 0);
  DUAL_D(0.5 / r, 0, 0);
  return r;
}
/* -1/(4 a^(3/2)) = -(d/2)/a: no a*r product to underflow; -inf at +-0, NaN for a < 0 */
DUAL_RULE2(SQRT) { DUAL_UNUSED2; DUAL_DD(-0.5 * d[0] / a, 0, 0); }
DUAL_RULE(CBRT) {
  DUAL_UNUSED3;
  double r = dual_cbrt(a);
  *flags |= (a == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D(1.0 / (3.0 * r * r), 0, 0);
  return r;
}
/* -2/9 a^(-5/3) = -(2/3) d / a: -inf at +0, +inf at -0 */
DUAL_RULE2(CBRT) { DUAL_UNUSED2; DUAL_DD((-2.0 / 3.0) * d[0] / a, 0, 0); }
DUAL_RULE(EXP) { DUAL_UNUSED3; double r = dual_exp(a); DUAL_D(r, 0, 0); return r; }
DUAL_RULE2(EXP) { DUAL_UNUSED2; DUAL_DD(r, 0, 0); }
DUAL_RULE(EXP2) { DUAL_UNUSED3; double r = dual_exp2(a); DUAL_D(DUAL_LN2 * r, 0, 0); return r; }
DUAL_RULE2(EXP2) { DUAL_UNUSED2; DUAL_DD(DUAL_LN2 * d[0], 0, 0); }
DUAL_RULE(EXPM1) { DUAL_UNUSED3; DUAL_D(dual_exp(a), 0, 0); return dual_expm1(a); }
DUAL_RULE2(EXPM1) { DUAL_UNUSED2; DUAL_DD(d[0], 0, 0); } /* exp(a) */

#define DUAL_LOG_FLAGS(x, lo)                                                                    \
  (*flags |= ((x) < (lo)) ? DUAL_PT_DOMAIN : (((x) == (lo)) ? DUAL_PT_SINGULAR : 0))
DUAL_RULE(LOG) { DUAL_UNUSED3; DUAL_LOG_FLAGS(a, 0.0); DUAL_D(1.0 / a, 0, 0); return dual_log(a); }
/* The log family: -1/a^2 (over ln 2, ln 10), -inf at the singular point; d = 1/a is finite
 * below the domain, so NaN is stored there explicitly. */
DUAL_RULE2(LOG) { DUAL_UNUSED2; DUAL_DD((a < 0.0) ? NAN : -d[0] * d[0], 0, 0); }
DUAL_RULE(LOG2) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, 0.0);
  DUAL_D(1.0 / (a * DUAL_LN2), 0, 0);
  return dual_log2(a);
}
DUAL_RULE2(LOG2) { DUAL_UNUSED2; DUAL_DD((a < 0.0) ? NAN : -d[0] / a, 0, 0); }
DUAL_RULE(LOG10) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, 0.0);
  DUAL_D(1.0 / (a * DUAL_LN10), 0, 0);
  return dual_log10(a);
}
DUAL_RULE2(LOG10) { DUAL_UNUSED2; DUAL_DD((a < 0.0) ? NAN : -d[0] / a, 0, 0); }
DUAL_RULE(LOG1P) {
  DUAL_UNUSED3;
  DUAL_LOG_FLAGS(a, -1.0);
  DUAL_D(1.0 / (1.0 + a), 0, 0);
  return dual_log1p(a);
}
DUAL_RULE2(LOG1P) { DUAL_UNUSED2; DUAL_DD((a < -1.0) ? NAN : -d[0] * d[0], 0, 0); }
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
/* (b^2, -ab, a^2) / r^3 as d_i (d_j / r): the unit vector d = (a, b)/r keeps every product in
 * range unless the result is out of range; 0 at the origin (the kink convention). */
DUAL_RULE2(HYPOT) {
  DUAL_UNUSED2;
  if (r == 0.0) {
    DUAL_DD(0, 0, 0);
  } else {
    double ar = d[0] / r, br = d[1] / r;
    DUAL_DD(d[1] * br, -d[0] * br, d[0] * ar);
  }
}

/* --- trigonometric and hyperbolic --------------------------------------------------------------- */
DUAL_RULE(SIN) {
  DUAL_UNUSED3;
  double s, co;
  dual_sincos(a, &s, &co);
  DUAL_D(co, 0, 0);
  return s;
}
DUAL_RULE2(SIN) { DUAL_UNUSED2; DUAL_DD(-r, 0, 0); }
DUAL_RULE(COS) {
  DUAL_UNUSED3;
  double s, co;
  dual_sincos(a, &s, &co);
  DUAL_D(-s, 0, 0);
  return co;
}
DUAL_RULE2(COS) { DUAL_UNUSED2; DUAL_DD(-r, 0, 0); }
DUAL_RULE(TAN) { DUAL_UNUSED3; double r = dual_tan(a); DUAL_D(1.0 + r * r, 0, 0); return r; }
DUAL_RULE2(TAN) { DUAL_UNUSED2; DUAL_DD(2.0 * r * d[0], 0, 0); } /* 2 tan (1 + tan^2) */
/* 1 - a*a written as (1-a)(1+a): exact near |a| = 1 where the slope is largest. */
#define DUAL_UNIT_FLAGS(x)                                                                       \
  (*flags |= (fabs(x) > 1.0) ? DUAL_PT_DOMAIN : ((fabs(x) == 1.0) ? DUAL_PT_SINGULAR : 0))
DUAL_RULE(ASIN) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(1.0 / sqrt((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_asin(a);
}
/* a / (1 - a^2)^(3/2) = a d^3 (d = +inf at +-1, NaN outside [-1, 1]) */
DUAL_RULE2(ASIN) { DUAL_UNUSED2; DUAL_DD(a * d[0] * d[0] * d[0], 0, 0); }
DUAL_RULE(ACOS) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(-1.0 / sqrt((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_acos(a);
}
/* -a / (1 - a^2)^(3/2) = a d^3 again, d being negative */
DUAL_RULE2(ACOS) { DUAL_UNUSED2; DUAL_DD(a * d[0] * d[0] * d[0], 0, 0); }
DUAL_RULE(ATAN) { DUAL_UNUSED3; DUAL_D(1.0 / (1.0 + a * a), 0, 0); return dual_atan(a); }
DUAL_RULE2(ATAN) { DUAL_UNUSED2; DUAL_DD(-2.0 * a * d[0] * d[0], 0, 0); }
/* atan2(a, b) = angle of the point (x = b, y = a); singular at the origin. */
DUAL_RULE(ATAN2) {
  DUAL_UNUSED3;
  double h = dual_hypot(a, b);
  *flags |= (h == 0.0) ? DUAL_PT_SINGULAR : 0;
  DUAL_D((b / h) / h, (-a / h) / h, 0);
  return dual_atan2(a, b);
}
/* With s = a^2 + b^2: d2/da2 = -2ab/s^2 = 2 da db, d2/db2 = -d2/da2, and d2/da db =
 * (a^2 - b^2)/s^2 = db^2 - da^2, which cancels where |a| ~ |b|: it is computed as
 * ((a-b)/h) ((a+b)/h) / h / h instead, a - b and a + b exact there (Sterbenz); a and b are
 * scaled by 1/4 (exactly) when h is so large that a +- b could overflow.  NaN at the origin. */
DUAL_RULE2(ATAN2) {
  DUAL_UNUSED2;
  double h = dual_hypot(a, b), k = (h > 0x1p1020) ? 0.25 : 1.0;
  double p = (a * k - b * k) / (h * k), q = (a * k + b * k) / (h * k);
  double daa = 2.0 * d[0] * d[1];
  DUAL_DD(daa, p * q / h / h, -daa);
}
DUAL_RULE(SINH) { DUAL_UNUSED3; DUAL_D(dual_cosh(a), 0, 0); return dual_sinh(a); }
DUAL_RULE2(SINH) { DUAL_UNUSED2; DUAL_DD(r, 0, 0); }
DUAL_RULE(COSH) { DUAL_UNUSED3; DUAL_D(dual_sinh(a), 0, 0); return dual_cosh(a); }
DUAL_RULE2(COSH) { DUAL_UNUSED2; DUAL_DD(r, 0, 0); }
/* tanh' = 1 - r^2 cancels for |a| > 1 (0 instead of 5e-17 at a = 19); 4e/(1+e)^2 with
 * e = exp(-2|a|) is accurate to a few ulp everywhere and underflows gracefully. */
DUAL_RULE(TANH) {
  DUAL_UNUSED3;
  double e = dual_exp(-2.0 * fabs(a));
  DUAL_D(4.0 * e / ((1.0 + e) * (1.0 + e)), 0, 0);
  return dual_tanh(a);
}
DUAL_RULE2(TANH) { DUAL_UNUSED2; DUAL_DD(-2.0 * r * d[0], 0, 0); } /* -2 tanh sech^2 */
DUAL_RULE(ASINH) { DUAL_UNUSED3; DUAL_D(1.0 / dual_hypot(a, 1.0), 0, 0); return dual_asinh(a); }
/* -a / (1 + a^2)^(3/2) = -a d^3 */
DUAL_RULE2(ASINH) { DUAL_UNUSED2; DUAL_DD(-a * d[0] * d[0] * d[0], 0, 0); }
DUAL_RULE(ACOSH) {
  DUAL_UNUSED3;
  *flags |= (a < 1.0) ? DUAL_PT_DOMAIN : ((a == 1.0) ? DUAL_PT_SINGULAR : 0);
  DUAL_D(1.0 / (sqrt(a - 1.0) * sqrt(a + 1.0)), 0, 0);
  return dual_acosh(a);
}
/* -a / (a^2 - 1)^(3/2) = -a d^3 (-inf at 1, NaN below) */
DUAL_RULE2(ACOSH) { DUAL_UNUSED2; DUAL_DD(-a * d[0] * d[0] * d[0], 0, 0); }
DUAL_RULE(ATANH) {
  DUAL_UNUSED3;
  DUAL_UNIT_FLAGS(a);
  DUAL_D(1.0 / ((1.0 - a) * (1.0 + a)), 0, 0);
  return dual_atanh(a);
}
/* 2a / (1 - a^2)^2 = 2 a d^2 (+-inf at +-1); d is finite outside [-1, 1]: NaN stored there */
DUAL_RULE2(ATANH) { DUAL_UNUSED2; DUAL_DD((fabs(a) > 1.0) ? NAN : 2.0 * a * d[0] * d[0], 0, 0); }

/* --- special functions and activations ---------------------------------------------------------- */
/* exp(-a^2) with a^2 split exactly into hi + lo (fma), so the large exponent loses no bits:
 * exp(-hi - lo) = exp(-hi) (1 - lo) to the last ulp, where lo is tiny. */
DUAL_INLINE double dual_exp_neg_square(double a) {
  double hi = a * a, lo = fma(a, a, -hi);
  return dual_exp(-hi) * (1.0 - lo);
}
DUAL_RULE(ERF) { DUAL_UNUSED3; DUAL_D(DUAL_2_SQRTPI * dual_exp_neg_square(a), 0, 0); return dual_erf(a); }
DUAL_RULE2(ERF) { DUAL_UNUSED2; DUAL_DD(-2.0 * a * d[0], 0, 0); }
DUAL_RULE(ERFC) { DUAL_UNUSED3; DUAL_D(-DUAL_2_SQRTPI * dual_exp_neg_square(a), 0, 0); return dual_erfc(a); }
DUAL_RULE2(ERFC) { DUAL_UNUSED2; DUAL_DD(-2.0 * a * d[0], 0, 0); }
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
/* r(1-r)(1-2r) with 1 - 2r = -tanh(a/2): no cancellation near 0 */
DUAL_RULE2(SIGMOID) { DUAL_UNUSED2; DUAL_DD(-d[0] * dual_tanh(0.5 * a), 0, 0); }
DUAL_RULE(SOFTPLUS) {
  DUAL_UNUSED3;
  DUAL_D(dual_sigmoid(a), 0, 0);
  return (a > 0.0) ? a + dual_log1p(dual_exp(-a)) : dual_log1p(dual_exp(a));
}
DUAL_RULE2(SOFTPLUS) { DUAL_UNUSED2; DUAL_DD(d[0] * dual_sigmoid(-a), 0, 0); } /* sigmoid' */
DUAL_RULE(RELU) { DUAL_UNUSED3; DUAL_D((a > 0.0) ? 1.0 : 0.0, 0, 0); return (a > 0.0) ? a : ((a != a) ? a : 0.0); }
DUAL_RULE2(RELU) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(ABS) {
  DUAL_UNUSED3;
  DUAL_D((a > 0.0) ? 1.0 : ((a < 0.0) ? -1.0 : 0.0), 0, 0);
  return fabs(a);
}
DUAL_RULE2(ABS) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }

/* --- choices: the tangent is the chosen operand's; NaN propagates ------------------------------- */
DUAL_RULE(MIN) {
  DUAL_UNUSED3;
  int pa = (a <= b) || (a != a);
  DUAL_D(pa ? 1.0 : 0.0, pa ? 0.0 : 1.0, 0);
  return pa ? a : b;
}
DUAL_RULE2(MIN) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(MAX) {
  DUAL_UNUSED3;
  int pa = (a >= b) || (a != a);
  DUAL_D(pa ? 1.0 : 0.0, pa ? 0.0 : 1.0, 0);
  return pa ? a : b;
}
DUAL_RULE2(MAX) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(SELECT) {
  DUAL_UNUSED3;
  int pb = (a != 0.0);
  DUAL_D(0, pb ? 1.0 : 0.0, pb ? 0.0 : 1.0);
  return pb ? b : c;
}
DUAL_RULE2(SELECT) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }

/* --- piecewise constant: no tangent ----------------------------------------------------------- */
DUAL_RULE(SIGN) {
  DUAL_UNUSED3;
  DUAL_D(0, 0, 0);
  return (a > 0.0) ? 1.0 : ((a < 0.0) ? -1.0 : a); /* sign(+-0) = +-0, sign(NaN) = NaN */
}
DUAL_RULE2(SIGN) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(FLOOR) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return floor(a); }
DUAL_RULE2(FLOOR) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_RULE(CEIL) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return ceil(a); }
DUAL_RULE2(CEIL) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
#define DUAL_BOOL_RULE(name, expr)                                                               \
  DUAL_RULE(name) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return (expr) ? 1.0 : 0.0; }                \
  DUAL_RULE2(name) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }
DUAL_BOOL_RULE(LT, a < b)
DUAL_BOOL_RULE(LE, a <= b)
DUAL_BOOL_RULE(GT, a > b)
DUAL_BOOL_RULE(GE, a >= b)
DUAL_BOOL_RULE(EQ, a == b)
DUAL_BOOL_RULE(NE, a != b)
DUAL_BOOL_RULE(AND, a != 0.0 && b != 0.0)
DUAL_BOOL_RULE(OR, a != 0.0 || b != 0.0)
DUAL_BOOL_RULE(NOT, a == 0.0)
/* nograd(a): the value passes, the derivative is zero by definition (a stop-gradient, as the
 * score-function estimator of dual_sgrad uses for its draws). */
DUAL_RULE(NOGRAD) { DUAL_UNUSED3; DUAL_D(0, 0, 0); return a; }
DUAL_RULE2(NOGRAD) { DUAL_UNUSED2; DUAL_DD(0, 0, 0); }

#endif /* DUAL_RULES_H */
