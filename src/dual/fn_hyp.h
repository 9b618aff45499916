/*
 * fn_hyp.h — dual_sinh, dual_cosh, dual_tanh, dual_asinh, dual_acosh, dual_atanh.  Near 0,
 * minimax rationals from scripts/fncoef/hyp_erf.py (acosh near 1: sqrt(2t) (1 + t R(t)));
 * beyond, fn_exp.h's e^r and fn_log.h's log kernels in double-double, arguments formed exactly,
 * one final rounding.  Max error (tests/test_fn_hyp_erf.c): sinh 0.77, cosh 0.56, tanh 0.65, asinh
 * 0.70, acosh 0.71, atanh 0.65 ulp.  C11 and CUDA; included by fn.h.
 */
#ifndef DUAL_FN_HYP_H
#define DUAL_FN_HYP_H

#include "fn_bits.h"
#include "fn_exp.h"
#include "fn_log.h"

/* a * b = hi + lo exactly (Dekker's product), for |a|, |b| < 2^995, barring underflow. */
DUAL_INLINE dual_el_dd dual_hyp_mul(double a, double b) {
  dual_el_dd as = dual_el_split(a), bs = dual_el_split(b);
  double p = a * b;
  return dual_el_make(p, ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo);
}

/* e^a = 2^k (e.hi + e.lo), e.hi in [0.7, 1.42], relative error about 2^-58, for |a| <= 745:
 * Cody–Waite reduction as in dual_el_exp_reduced, then fn_exp.h's double-double kernel. */
DUAL_INLINE dual_el_dd dual_hyp_exp_k(double a, int *k) {
  double kd = (a * DUAL_EL_INV_LN2 + 0x1.8p52) - 0x1.8p52; /* nearest integer to a/ln2 */
  double t = a - kd * DUAL_EL_LN2_42;                      /* exact */
  dual_el_dd r = dual_el_fast2sum(t, -(kd * DUAL_EL_LN2_42L));
  *k = (int)kd;
  return dual_el_exp_kernel(r.hi, r.lo, 0);
}

/* (e^a +- e^-a) / 2 (sign = +-1) for 1 <= a < 20, rounded once: e^a = 2^k (e.hi + e.lo) and
 * e^-a = 2^-k i, i = 1/e.hi; while e^-a is more than 2^-5 of the result (sinh: a < 2, cosh:
 * a < 1.5), i gets its low part il from the exact residual of i e.hi. */
DUAL_INLINE double dual_hyp_cosh_sinh(double a, double sign) {
  int k;
  dual_el_dd e = dual_hyp_exp_k(a, &k);
  double i = 1.0 / e.hi, il = 0.0;
  if (a < ((sign < 0.0) ? 2.0 : 1.5)) {
    dual_el_dd p = dual_hyp_mul(i, e.hi);
    il = i * (((1.0 - p.hi) - p.lo) - i * e.lo); /* 1 - p.hi is exact */
  }
  double up = dual_pow2i(k - 1), dn = sign * dual_pow2i(-k - 1);
  dual_el_dd s = dual_el_fast2sum(e.hi * up, i * dn); /* e^a > 7 e^-a */
  return s.hi + (s.lo + (e.lo * up + il * dn));
}

/* e^a / 2 for 20 <= a (e^-a < 2^-57 e^a), +inf from 710.4758600739439 on, NaN stays NaN. */
DUAL_INLINE double dual_hyp_half_exp(double a) {
  if (!(a < 711.0)) return a * 0x1p1023;
  int k;
  dual_el_dd e = dual_hyp_exp_k(a, &k);
  return dual_el_ldexp(e.hi, e.lo, k - 1);
}

/* log(x + xl) for a double-double x + xl, 1 <= x < 2^61, |xl| <= ulp(x): fn_log.h's kernel. */
DUAL_INLINE double dual_hyp_log_dd(double x, double xl) {
  dual_el_dd w = dual_el_fast2sum(x, xl); /* normalized, as the kernel wants */
  dual_el_dd l = dual_el_log_lean(w.hi, w.lo, 0, 1);
  return l.hi + l.lo;
}

/* asinh(a) = log(a + sqrt(a^2 + 1)) for 0.7 <= a < 2: a^2 + 1 = s + sl and a + sqrt(s + sl) =
 * w + wl exactly to about 2^-100, then log of the double-double. */
DUAL_INLINE double dual_hyp_asinh_mid(double a) {
  dual_el_dd h = dual_el_sqr(a);
  dual_el_dd s = dual_el_2sum(h.hi, 1.0);
  double r = sqrt(s.hi);
  dual_el_dd rr = dual_hyp_mul(r, r);
  double rl = (((s.hi - rr.hi) - rr.lo) + (s.lo + h.lo)) / (r + r); /* s.hi - rr.hi exact */
  dual_el_dd w = dual_el_fast2sum(r, a);                              /* r > a */
  return dual_hyp_log_dd(w.hi, w.lo + rl);
}

/* log(2a) + c for 2 <= a < 2^26, c = log((1 + sqrt(1 +- u)) / 2) (asinh: +, acosh: -) with
 * u = 1/a^2 <= 1/4, given as c = u P(u) / Q(u); |c| <= 0.07 log(2a). */
DUAL_INLINE double dual_hyp_log2x_plus(double a, double c) {
  dual_el_dd l = dual_el_log_lean(a + a, 0.0, 0, 0);
  return l.hi + (l.lo + c);
}

/* log(a) + ln 2 for 2^1023 <= a <= DBL_MAX. */
DUAL_INLINE double dual_hyp_log_huge(double a) {
  dual_el_dd l = dual_el_log_lean(a, 0.0, 0, 0);
  dual_el_dd s = dual_el_fast2sum(l.hi, DUAL_EL_LN2);
  return s.hi + (s.lo + (l.lo + DUAL_EL_LN2L));
}

DUAL_FN double dual_sinh(double x) {
  const double P0 = 0x1.5555555555556p-3, P1 = 0x1.111111111101ep-7;
  const double P2 = 0x1.a01a01a037269p-13, P3 = 0x1.71de3a3b06beep-19;
  const double P4 = 0x1.ae646ff5099dep-26, P5 = 0x1.6116f4a10f2dbp-33;
  const double P6 = 0x1.b5c8970f0e982p-41;
  double a = fabs(x);
  if (a < 1.0) {
    if (a < 0x1p-28) return x; /* also +-0 and subnormals */
    double z = x * x;
    double p = P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * (P5 + z * P6)))));
    return x + (x * z) * p;
  }
  double r = (a < 20.0) ? dual_hyp_cosh_sinh(a, -1.0) : dual_hyp_half_exp(a);
  return copysign(r, x);
}

DUAL_FN double dual_cosh(double x) {
  const double P0 = 0x1.55555555554b7p-5, P1 = 0x1.6c16c16c280f1p-10;
  const double P2 = 0x1.a01a0189abeadp-16, P3 = 0x1.27e509ab477afp-22;
  const double P4 = 0x1.1ee41db4bf91cp-29, P5 = 0x1.99ebd39b39487p-37;
  double a = fabs(x);
  if (a < 1.0) { /* 1 + x^2/2 + x^4 P(x^2), the first two terms exact: x^2 = xh^2 + xl (x + xh) */
    double z = x * x;
    double p = P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * P5))));
    double xh = dual_el_trunc21(x);
    double hz = 0.5 * (xh * xh);              /* exact */
    double lz = 0.5 * ((x - xh) * (x + xh)); /* x^2/2 - hz, relative error 2^-52 */
    dual_el_dd s = dual_el_fast2sum(1.0, hz);
    return s.hi + (s.lo + (lz + (z * z) * p));
  }
  if (a < 20.0) return dual_hyp_cosh_sinh(a, 1.0);
  return dual_hyp_half_exp(a);
}

DUAL_FN double dual_tanh(double x) {
  const double P0 = -0x1.5555555555555p-2, P1 = -0x1.4f947ad0df213p-6;
  const double P2 = -0x1.a028d857ed698p-13;
  const double Q1 = 0x1.d88570a0c36a2p-2, Q2 = 0x1.7d3dfb8723d74p-6;
  const double Q3 = 0x1.af79af929b5f9p-13;
  double a = fabs(x);
  if (a < 0.4) {
    if (a < 0x1p-28) return x;
    double z = x * x;
    double p = P0 + z * (P1 + z * P2);
    double q = 1.0 + z * (Q1 + z * (Q2 + z * Q3));
    return x + (x * z) * (p / q);
  }
  double r = 1.0; /* 1 - tanh(a) < 2^-56 from 20 on */
  if (a < 20.0) {
    /* 1 - 2 / (e^2a + 1): e^2a + 1 = d + dl exactly, 2 / (d + dl) = q + ql, where ql carries the
     * exact residual of q d while q is more than 2^-5 of the result (a < 1.5) */
    int k;
    dual_el_dd e = dual_hyp_exp_k(a + a, &k);
    double sc = dual_pow2i(k);
    dual_el_dd d = dual_el_fast2sum(e.hi * sc, 1.0);
    double dl = d.lo + e.lo * sc;
    double rd = 1.0 / d.hi;
    double q = 2.0 * rd, ql;
    if (a < 1.5) {
      dual_el_dd p = dual_hyp_mul(q, d.hi);
      ql = (((2.0 - p.hi) - p.lo) - q * dl) * rd; /* 2 - p.hi is exact */
    } else {
      ql = -q * (dl * rd);
    }
    dual_el_dd s = dual_el_fast2sum(1.0, -q);
    r = s.hi + (s.lo - ql);
  } else if (a != a) {
    return x + x;
  }
  return copysign(r, x);
}

DUAL_FN double dual_asinh(double x) {
  const double P0 = -0x1.5555555555554p-3, P1 = -0x1.5fc0016708373p-2;
  const double P2 = -0x1.e6b7fa7c45db3p-3, P3 = -0x1.0101abcd7f219p-4;
  const double P4 = -0x1.4950b8719fc7ap-8, P5 = -0x1.42740d5eb409dp-16;
  const double Q1 = 0x1.41699aa6dfbe2p1, Q2 = 0x1.24de922769ea1p1;
  const double Q3 = 0x1.d4e1f3e7cae39p-1, Q4 = 0x1.391ff20ae1ea9p-3;
  const double Q5 = 0x1.fca2dadca5104p-8;
  double a = fabs(x);
  if (a < 0.7) {
    if (a < 0x1p-28) return x;
    double z = x * x;
    double p = P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * P5))));
    double q = 1.0 + z * (Q1 + z * (Q2 + z * (Q3 + z * (Q4 + z * Q5))));
    return x + (x * z) * (p / q);
  }
  double r;
  if (a < 2.0) {
    r = dual_hyp_asinh_mid(a);
  } else if (a < 0x1p26) {
    const double D0 = 0x1.fffffffffffe9p-3, D1 = 0x1.a3b98aedd2c17p-2;
    const double D2 = 0x1.97aeb9ca606bp-3, D3 = 0x1.c706a854c16e1p-6;
    const double D4 = 0x1.5c6eed3b5258fp-12;
    const double E1 = 0x1.01dcc576e9278p1, E2 = 0x1.57e79ba92306p0;
    const double E3 = 0x1.53d7ca6c272f4p-2, E4 = 0x1.773afaf45c3c9p-6;
    double u = 1.0 / (a * a);
    double p = D0 + u * (D1 + u * (D2 + u * (D3 + u * D4)));
    double q = 1.0 + u * (E1 + u * (E2 + u * (E3 + u * E4)));
    r = dual_hyp_log2x_plus(a, u * (p / q));
  } else if (a < 0x1p1023) { /* log(2a) + 1/(4a^2), the second term below 2^-57 of the first */
    r = dual_log(a + a);
  } else if (a <= 0x1.fffffffffffffp1023) {
    r = dual_hyp_log_huge(a);
  } else { /* +-inf, NaN */
    return x + x;
  }
  return copysign(r, x);
}

DUAL_FN double dual_acosh(double x) {
  const double P0 = -0x1.5555555555553p-4, P1 = -0x1.5eea7f0aea071p-4;
  const double P2 = -0x1.e419512ac270bp-6, P3 = -0x1.fd3b3a5163f89p-9;
  const double P4 = -0x1.44848b9e8efa6p-13, P5 = -0x1.3ab1fc6f8397fp-22;
  const double Q1 = 0x1.40c978e1c9176p0, Q2 = 0x1.239b03768edd8p-1;
  const double Q3 = 0x1.d17c13932a96ap-4, Q4 = 0x1.35b3822e8207p-7;
  const double Q5 = 0x1.f4aea8dce73a7p-13;
  if (x < 2.0) {
    if (!(x > 1.0)) return (x == 1.0) ? 0.0 : dual_el_nan(); /* x < 1, -inf */
    /* acosh(1 + t) = sqrt(2t) (1 + t R(t)) with t = x - 1 exact and sqrt(2t) = s + sl:
     * s + (sl + s t R) = s + s (t R + d / (2 s^2)), d = 2t - s^2 exactly, s^2 = 2t (1 + 2^-52) */
    double t = x - 1.0;
    double t2 = t + t;
    double s = sqrt(t2);
    dual_el_dd ss = dual_hyp_mul(s, s);
    double d = (t2 - ss.hi) - ss.lo; /* t2 - ss.hi is exact (Sterbenz) */
    double p = P0 + t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
    double q = 1.0 + t * (Q1 + t * (Q2 + t * (Q3 + t * (Q4 + t * Q5))));
    /* t R + d / (4t) = (4 t^2 P + d Q) / (4 t Q): one division */
    double t4 = 4.0 * t;
    return s + s * ((t4 * (t * p) + d * q) / (t4 * q));
  }
  if (x < 0x1p26) {
    const double D0 = -0x1p-2, D1 = 0x1.28acb79a61cbdp-1;
    const double D2 = -0x1.dc8ebaca680cep-2, D3 = 0x1.32aaf488a9cfdp-3;
    const double D4 = -0x1.05d53afd63ef4p-6, D5 = 0x1.57342f93e609fp-13;
    const double E1 = -0x1.58acb79a61cbbp1, E2 = 0x1.54dd77946dfbcp1;
    const double E3 = -0x1.2c5e477350231p0, E4 = 0x1.c02e1d44c0f6fp-3;
    const double E5 = -0x1.992fe7d147cf1p-7;
    double u = 1.0 / (x * x);
    double p = D0 + u * (D1 + u * (D2 + u * (D3 + u * (D4 + u * D5))));
    double q = 1.0 + u * (E1 + u * (E2 + u * (E3 + u * (E4 + u * E5))));
    return dual_hyp_log2x_plus(x, u * (p / q));
  }
  if (x < 0x1p1023) return dual_log(x + x); /* log(2x) - 1/(4x^2) */
  if (x <= 0x1.fffffffffffffp1023) return dual_hyp_log_huge(x);
  return x + x; /* +inf, NaN */
}

DUAL_FN double dual_atanh(double x) {
  const double P0 = 0x1.5555555555557p-2, P1 = -0x1.2e032e8f59a45p-1;
  const double P2 = 0x1.422dca6862767p-2, P3 = -0x1.8e22847a89b34p-5;
  const double P4 = 0x1.349ed4b253506p-12;
  const double Q1 = -0x1.2f4f2fb84fff4p1, Q2 = 0x1.efe41c0a8748p0;
  const double Q3 = -0x1.406d685f61383p-1, Q4 = 0x1.037b12f2ccbf5p-4;
  double a = fabs(x);
  if (a < 0.4) {
    if (a < 0x1p-28) return x;
    double z = x * x;
    double p = P0 + z * (P1 + z * (P2 + z * (P3 + z * P4)));
    double q = 1.0 + z * (Q1 + z * (Q2 + z * (Q3 + z * Q4)));
    return x + (x * z) * (p / q);
  }
  if (a < 1.0) { /* log((1 + a) / (1 - a)) / 2: 1 +- a = n + nl, m + ml exactly, quotient g + gl */
    dual_el_dd n = dual_el_fast2sum(1.0, a);
    dual_el_dd m = dual_el_fast2sum(1.0, -a);
    double rm = 1.0 / m.hi;
    double g = n.hi * rm;
    dual_el_dd p = dual_hyp_mul(g, m.hi);
    double gl = ((((n.hi - p.hi) - p.lo) + n.lo) - g * m.lo) * rm; /* n.hi - p.hi exact */
    return copysign(0.5 * dual_hyp_log_dd(g, gl), x);
  }
  if (a == 1.0) return copysign(dual_el_inf(), x);
  return (a != a) ? x + x : dual_el_nan();
}

#endif /* DUAL_FN_HYP_H */
