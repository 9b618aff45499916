/*
 * fn_pow.h — pow, cbrt, hypot.  pow: e^(b log|a|), log|a| as a double-double to ~2^-69
 * (dual_el_log_dd), b times it exact from 21-bit pieces, then dual_exp_dd.  cbrt: polynomial seed
 * rounded to 17 bits so t^3 is exact, then t (1 + d)^(1/3), d = (x - t^3)/t^3.  hypot: scaled,
 * sqrt(x^2 + y^2) corrected by the exact residual h^2 - x^2 - y^2 (Dekker squares).  Max error
 * measured by tests/test_fn_explog.c: pow 0.521, cbrt 0.5003, hypot 0.500 ulp.  Included by fn.h.
 */
#ifndef DUAL_FN_POW_H
#define DUAL_FN_POW_H

#include "fn_exp.h"
#include "fn_log.h"

/* ---- constants (scripts/fncoef/explog.py) ---- */
#define DUAL_EL_CBRT2 0x1.428a2f98d728bp+0
#define DUAL_EL_CBRT_HALF 0x1.965fea53d6e3dp-1
#define DUAL_EL_CBRT_C1 0x1.5555555555555p-2 /* (1 + d)^(1/3) = 1 + C1 d + C2 d^2 + C3 d^3 + ... */
#define DUAL_EL_CBRT_C2 -0x1.c71c71c71c71cp-4
#define DUAL_EL_CBRT_C3 0x1.f9add3c0ca458p-5

/* cbrt(m) ~ P0 + P1 m + ... + P5 m^5 on [1, 2]; abs error 2^-19.5 */
#define DUAL_EL_CBRT_P0 0x1.e53b7c42d6774p-2
#define DUAL_EL_CBRT_P1 0x1.ac2d313741836p-1
#define DUAL_EL_CBRT_P2 -0x1.ddcd3b4ef2b40p-2
#define DUAL_EL_CBRT_P3 0x1.9b95b5cd25d4dp-3
#define DUAL_EL_CBRT_P4 -0x1.97bd99c668173p-5
#define DUAL_EL_CBRT_P5 0x1.592445ff5be57p-8

/* b: 0 not an integer, 1 odd, 2 even (|b| >= 2^53 and +-inf count as even), from its bits: with
 * b = 2^e 1.m, the low 52 - e bits of 1.m are its fraction, the next one its parity. */
DUAL_INLINE int dual_el_parity(double b) {
  uint64_t ub = dual_bits(b);
  int eb = (int)((ub >> 52) & 0x7ffu) - 1023;
  if (eb >= 53) return 2;
  if (eb < 0) return 0;
  uint64_t mb = (ub & 0x000fffffffffffffull) | 0x0010000000000000ull;
  int fb = 52 - eb;
  return (mb & ((1ull << fb) - 1u)) ? 0 : 2 - (int)((mb >> fb) & 1u);
}

DUAL_FN_CLONE double dual_pow(double a, double b) {
  double sign = 1.0;
  int kadj = 0;
  /* one test for the common case: a positive normal, b finite and nonzero (a == 1 needs no
   * special case there: log 1 = 0 exactly) */
  if (dual_bits(a) - 0x0010000000000000ull >= 0x7fe0000000000000ull ||
      (dual_bits(b) << 1) - 1u >= 0xffdfffffffffffffull) {
    if (b == 0.0 || a == 1.0) return 1.0; /* even for a NaN, b NaN */
    if (a != a || b != b) return a + b;
    int bint = dual_el_parity(b);
    double aa = fabs(a);
    if (fabs(b) == dual_el_inf()) {
      if (aa == 1.0) return 1.0; /* pow(-1, +-inf) */
      return ((aa > 1.0) == (b > 0.0)) ? dual_el_inf() : 0.0;
    }
    int neg = (dual_bits(a) >> 63) != 0 && bint == 1; /* sign of the result */
    if (aa == dual_el_inf() || a == 0.0) {
      double r = ((a == 0.0) == (b < 0.0)) ? dual_el_inf() : 0.0;
      return neg ? -r : r;
    }
    if (a < 0.0 && bint == 0) return dual_el_nan();
    sign = neg ? -1.0 : 1.0;
    a = aa;
    if (a < 0x1p-1022) { /* subnormal */
      a *= 0x1p54;
      kadj = -54;
    }
  }
  dual_el_dd l = dual_el_log_dd(a, kadj);
  /* y = b (lh + ll): bh lh exact (21-bit pieces), the rest below 2^-19 |y| */
  double bh = dual_el_trunc21(b), bl = b - bh;
  double lh = dual_el_trunc21(l.hi);
  double ll = (l.hi - lh) + l.lo;
  double yh = bh * lh;
  double r;
  if (!(fabs(yh) < 1000.0)) { /* certain overflow / underflow (also b huge: yh +-inf) */
    r = yh > 0.0 ? dual_el_inf() : 0.0;
  } else { /* |yl| <= 2^-19 |y|, unnormalized: dual_exp_dd takes it as it is */
    r = dual_exp_dd(yh, bl * lh + b * ll);
  }
  return sign * r;
}

DUAL_FN double dual_cbrt(double x) {
  uint64_t ux = dual_bits(x);
  uint64_t sign = ux & 0x8000000000000000ull;
  ux ^= sign;
  int kadj = 0;
  if (ux - 0x0010000000000000ull >= 0x7fe0000000000000ull) { /* 0, subnormal, inf, NaN */
    if (ux == 0 || ux >= 0x7ff0000000000000ull) return x + x;
    ux = dual_bits(dual_from_bits(ux) * 0x1p54);
    kadj = -54;
  }
  /* |x| = 2^e m, m in [1, 2); e + 1 = 3q + j, xr = 2^(j-1) m in [0.5, 4), cbrt|x| = 2^q cbrt(xr) */
  int e1 = (int)(ux >> 52) - 1022 + kadj;
  int q = (e1 + 1200) / 3 - 400; /* floor((e1)/3), the dividend kept positive */
  int j = e1 - 3 * q;
  double m = dual_from_bits((ux & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  double xr = m * dual_pow2i(j - 1);
  double p = ((DUAL_EL_CBRT_P0 + DUAL_EL_CBRT_P1 * m) + (m * m) * (DUAL_EL_CBRT_P2 + DUAL_EL_CBRT_P3 * m)) +
             ((m * m) * (m * m)) * (DUAL_EL_CBRT_P4 + DUAL_EL_CBRT_P5 * m);
  /* times 2^((j-1)/3), selected by masks (a branch on j would mispredict) */
  uint64_t cj = ((0 - (uint64_t)(j == 0)) & dual_bits(DUAL_EL_CBRT_HALF)) |
               ((0 - (uint64_t)(j == 1)) & 0x3ff0000000000000ull) |
               ((0 - (uint64_t)(j == 2)) & dual_bits(DUAL_EL_CBRT2));
  double t = p * dual_from_bits(cj); /* relative error 2^-19 */
  t = (t + 0x1.8p36) - 0x1.8p36; /* to a multiple of 2^-16: 17 bits, t in [0.79, 1.59] */
  double t3 = (t * t) * t;        /* exact (51 bits) */
  double d = (xr - t3) / t3;      /* xr - t3 exact (Sterbenz); |d| < 2^-15 */
  /* (1 + d)^(1/3) = 1 + d/3 - d^2/9 + 5 d^3/81 - ..., the d^4 term below 2^-64 */
  double c = t * (d * (DUAL_EL_CBRT_C1 + d * (DUAL_EL_CBRT_C2 + d * DUAL_EL_CBRT_C3)));
  double r = (t + c) * dual_pow2i(q);
  return dual_from_bits(dual_bits(r) | sign);
}

DUAL_FN double dual_hypot(double a, double b) {
  double x = fabs(a), y = fabs(b);
  if (x == dual_el_inf() || y == dual_el_inf()) return dual_el_inf(); /* even with a NaN */
  if (x != x || y != y) return x + y;
  if (x < y) {
    double t = x;
    x = y;
    y = t;
  }
  /* y <= x; y < 2^-54 x: the result rounds to x (also y == 0) */
  uint64_t ex = dual_bits(x) >> 52, ey = dual_bits(y) >> 52;
  if (ex - ey > 54 || y == 0.0) return x + y;
  /* scale so that the squares neither overflow nor underflow, and x^2 + y^2 stays normal */
  int k = 0;
  if (ex > 1023 + 500) {
    x *= 0x1p-600;
    y *= 0x1p-600;
    k = 600;
  } else if (ey < 1023 - 500) {
    x *= 0x1p600;
    y *= 0x1p600;
    k = -600;
  }
  dual_el_dd xx = dual_el_sqr(x), yy = dual_el_sqr(y);
  double h = sqrt(xx.hi + yy.hi);
  dual_el_dd hh = dual_el_sqr(h);
  /* h^2 - x^2 - y^2: hh - xx is exact (Sterbenz), the rest is below 2^-100 h^2 in error */
  double d = ((hh.hi - xx.hi) - yy.hi) + ((hh.lo - xx.lo) - yy.lo);
  double lo = -d / (2.0 * h); /* sqrt(h^2 - d) = h - d/(2h) - ... */
  if (k == 0) return h + lo;
  if (k > 0) return (h + lo) * 0x1p600; /* exact, or +inf */
  if (h >= 0x1p-422) return (h + lo) * 0x1p-600; /* normal result */
  return dual_el_ldexp_rare(h, lo, -600);
}

#endif /* DUAL_FN_POW_H */
