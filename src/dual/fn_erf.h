/*
 * fn_erf.h — dual_erf, dual_erfc: the library's own error function and its complement.  Near 0
 * (erf: |x| < 0.46875, erfc: -0.5 < x < 0.46875) x + x (c + x^2 R(x^2)), resp. 1 - x - x (...);
 * beyond, erfc = e^-x^2 / K(x), K = 1/erfcx = a + b x + R(x) as a double-double, fn_exp.h's e^r
 * kernel, one rounding; erf = 1 - erfc, erfc(-x) = 2 - erfc(x); R from scripts/fncoef/hyp_erf.py.
 * Max error (tests/test_fn_hyp_erf.c): erf 0.77, erfc 0.64 ulp.  C11 and CUDA; included by fn.h.
 */
#ifndef DUAL_FN_ERF_H
#define DUAL_FN_ERF_H

#include "fn_bits.h"
#include "fn_exp.h"

/* a * b = hi + lo exactly (Dekker's product), for |a|, |b| < 2^995, barring underflow. */
DUAL_INLINE dual_el_dd dual_erf_mul(double a, double b) {
  dual_el_dd as = dual_el_split(a), bs = dual_el_split(b);
  double p = a * b;
  return dual_el_make(p, ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo);
}

/* x (erf(x)/x - 1) = x EFX_HI + x (EFX_LO + z S(z)), S = (erf(x)/x - 1 - EFX) / z, z = x^2 <= 1/4:
 * returns the second term; the caller adds x EFX_HI, so that no rounding of erf(x)/x - 1 itself
 * (0.128 near 0) shows. */
DUAL_INLINE double dual_erf_tail_small(double x, double z) {
  const double P0 = -0x1.812746b0379e7p-2, P1 = -0x1.7befde1478ef7p-6;
  const double P2 = -0x1.74fc36baec715p-8, P3 = 0x1.818cbcba6f753p-14;
  const double P4 = -0x1.c9e94dbc74f8fp-18;
  const double Q1 = 0x1.72554c6566c72p-2, Q2 = 0x1.ab9ce67628ee2p-5;
  const double Q3 = 0x1.c70cc4fae48cdp-9, Q4 = 0x1.557d4397e1616p-14;
  const double EFX_LO = -0x1.ca38add6025p-57;
  double p = P0 + z * (P1 + z * (P2 + z * (P3 + z * P4)));
  double q = 1.0 + z * (Q1 + z * (Q2 + z * (Q3 + z * Q4)));
  return x * (EFX_LO + z * (p / q));
}

/* c + (1.5 + f) a + rem = *hi + *lo for 0.46875 <= a < 3, f = +-2^-n small, |rem| below the line
 * c + (1.5 + f) a: the line exactly (Fast2Sum, 2Sum), then rem added with one rounding. */
DUAL_INLINE void dual_erf_line(double a, double f, double c, double rem, double *hi, double *lo) {
  dual_el_dd s1 = dual_el_fast2sum(a, 0.5 * a);
  dual_el_dd s2 = dual_el_fast2sum(s1.hi, f * a);
  dual_el_dd s3 = dual_el_2sum(s2.hi, c);
  dual_el_dd s4 = dual_el_fast2sum(s3.hi, rem);
  *hi = s4.hi;
  *lo = ((s1.lo + s2.lo) + s3.lo) + s4.lo;
}

/* erfc(a) = 2^k (hi + lo), hi in [1, 2), relative error about 2^-56, for 0.46875 <= a < 27.25
 * (erfc is subnormal from 26.54 on and rounds to 0 from 27.226 on). */
DUAL_INLINE dual_el_dd dual_erfc_core(double a, int *k) {
  double kh, kl; /* K(a) = 1 / erfcx(a) = kh + kl, relative error below 2^-57 */
  if (a < 1.25) {
    const double P0 = 0x1.00000000fda23p-4, P1 = -0x1.e1a5a11cd943bp-3;
    const double P2 = -0x1.85d451c4522bdp-5, P3 = 0x1.8feb48d1af021p-5;
    const double P4 = 0x1.58985c853807cp-5, P5 = 0x1.88ce61d0706e4p-7;
    const double P6 = 0x1.66bc7f4a33a31p-10;
    const double Q1 = 0x1.2edd6d9639414p0, Q2 = 0x1.6fb1264e5b1f9p-1;
    const double Q3 = 0x1.f759678dd8fdap-3, Q4 = 0x1.84335d710a2fp-5;
    const double Q5 = 0x1.0abfdb886dc9p-8, Q6 = 0x1.7e3b21c4496edp-21;
    double a2 = a * a, a4 = a2 * a2; /* Estrin's scheme: short dependency chains */
    double p = ((P0 + P1 * a) + a2 * (P2 + P3 * a)) + a4 * ((P4 + P5 * a) + a2 * P6);
    double q = ((1.0 + Q1 * a) + a2 * (Q2 + Q3 * a)) + a4 * ((Q4 + Q5 * a) + a2 * Q6);
    /* 0.9375 + 1.4375a + p/q, rem within 2.3% of K */
    dual_erf_line(a, -0.0625, 0.9375, p / q, &kh, &kl);
  } else if (a < 3.0) {
    const double P0 = 0x1.40000d3efc594p-2, P1 = -0x1.1766a1733e4e8p-4;
    const double P2 = -0x1.e1eccb3a7f123p-4, P3 = -0x1.4f4fd2f88c39fp-5;
    const double P4 = 0x1.5b95b6ed2bb52p-8, P5 = 0x1.8e6faefc36c7p-8;
    const double P6 = 0x1.4943dd3e625d5p-10;
    const double Q1 = 0x1.5ef3f6337a47dp0, Q2 = 0x1.db00c3c35172ap-1;
    const double Q3 = 0x1.726a7126f5128p-2, Q4 = 0x1.4bbee881368c1p-4;
    const double Q5 = 0x1.1707aa5515521p-7, Q6 = 0x1.7d4c10696221fp-24;
    double a2 = a * a, a4 = a2 * a2;
    double p = ((P0 + P1 * a) + a2 * (P2 + P3 * a)) + a4 * ((P4 + P5 * a) + a2 * P6);
    double q = ((1.0 + Q1 * a) + a2 * (Q2 + Q3 * a)) + a4 * ((Q4 + Q5 * a) + a2 * Q6);
    /* 0.6875 + 1.625a + p/q, rem within 0.7% of K */
    dual_erf_line(a, 0.125, 0.6875, p / q, &kh, &kl);
  } else {
    const double P0 = 0x1.00153dbcf55e1p0, P1 = 0x1.a62b69b4e6c4bp0;
    const double P2 = 0x1.599621bb5ea03p0, P3 = 0x1.5f84faa95191cp-1;
    const double P4 = 0x1.dfbaf592f7a9dp-3, P5 = 0x1.9994eae0f4f91p-5;
    const double P6 = 0x1.b7f8fe4a97b2bp-8;
    const double Q1 = 0x1.25ba88c7e3cbdp1, Q2 = 0x1.4684df71a4ae6p1;
    const double Q3 = 0x1.c6b52bb96dc43p0, Q4 = 0x1.a9885189010cep-1;
    const double Q5 = 0x1.166a7cacb017ep-2, Q6 = 0x1.ce29d90a1d505p-5;
    const double Q7 = 0x1.f074b92301cb1p-8;
    const double SQRTPI_HI = 0x1.c5bf891b4ef6bp0, SQRTPI_LO = -0x1.618f13eb7ca89p-54;
    double a2 = a * a, a4 = a2 * a2;
    double p = ((P0 + P1 * a) + a2 * (P2 + P3 * a)) + a4 * ((P4 + P5 * a) + a2 * P6);
    double q = ((1.0 + Q1 * a) + a2 * (Q2 + Q3 * a)) + a4 * ((Q4 + Q5 * a) + a2 * (Q6 + Q7 * a));
    double rem = p / q; /* about sqrt(pi) / (2a): at most 6% of K */
    dual_el_dd sp = dual_erf_mul(SQRTPI_HI, a);
    dual_el_dd s = dual_el_fast2sum(sp.hi, rem);
    kh = s.hi;
    kl = (sp.lo + SQRTPI_LO * a) + s.lo;
  }
  /* e^-(x2 + x2l), a^2 = x2 + x2l exactly: Cody–Waite as in fn_exp.h's dual_el_exp_reduced, then
   * its double-double kernel: e^-a^2 = 2^kd (e.hi + e.lo) */
  dual_el_dd x2 = dual_el_sqr(a);
  double kd = (-x2.hi * DUAL_EL_INV_LN2 + 0x1.8p52) - 0x1.8p52;
  double t = -x2.hi - kd * DUAL_EL_LN2_42; /* exact */
  dual_el_dd r = dual_el_fast2sum(t, -x2.lo - kd * DUAL_EL_LN2_42L);
  dual_el_dd e = dual_el_exp_kernel(r.hi, r.lo, 0);
  /* (e.hi + e.lo) / (kh + kl) = g + gl, with kh scaled by 2^-j into [1, 2) so that g lies in
   * [0.35, 1.42]; g = e.hi (1/kh) and gl from the exact residual e.hi - g kh (Sterbenz) */
  int j = (int)(dual_bits(kh) >> 52) - 1023;
  double sc = dual_pow2i(-j);
  kh *= sc;
  kl *= sc;
  double rk = 1.0 / kh;
  double g = e.hi * rk;
  dual_el_dd pr = dual_erf_mul(g, kh);
  double gl = (((e.hi - pr.hi) - pr.lo) + (e.lo - g * kl)) * rk;
  int n = (int)(dual_bits(g) >> 52) - 1023; /* -2, -1 or 0 */
  double sn = dual_pow2i(-n);
  *k = (int)kd - j + n;
  return dual_el_fast2sum(g * sn, gl * sn);
}

/* 1 - erfc(a) (c = 1) or 2 - erfc(a) (c = 2) for 0.46875 <= a < 6: erfc(a) < 0.51 < c. */
DUAL_INLINE double dual_erf_c_minus(double c, double a) {
  int k;
  dual_el_dd v = dual_erfc_core(a, &k);
  double sc = dual_pow2i(k);
  dual_el_dd s = dual_el_fast2sum(c, -(v.hi * sc));
  return s.hi + (s.lo - v.lo * sc);
}

/* erf(a) = (2/sqrt(pi)) a (1 - a^2/3 ...) for 0 <= a < 2^-1000, rounded once, onto the subnormal
 * grid too: in units of 2^-1022 the product is p + pl, and 1 + p rounds at 2^-1074. */
DUAL_INLINE double dual_erf_tiny(double a) {
  const double TWO_SQRTPI_HI = 0x1.20dd750429b6dp0, TWO_SQRTPI_LO = 0x1.1ae3a914fed8p-56;
  double b = a * 0x1p1022; /* exact, below 2^22 */
  dual_el_dd p = dual_erf_mul(TWO_SQRTPI_HI, b);
  double pl = p.lo + TWO_SQRTPI_LO * b;
  if (p.hi >= 1.0) return (p.hi + pl) * 0x1p-1022;
  dual_el_dd t = dual_el_fast2sum(1.0, p.hi);
  return ((t.hi + (t.lo + pl)) - 1.0) * 0x1p-1022;
}

DUAL_FN_CLONE double dual_erf(double x) {
  const double EFX_HI = 0x1.06eba8214db69p-3; /* 2/sqrt(pi) - 1 */
  double a = fabs(x);
  if (a < 0.46875) { /* a + a (2/sqrt(pi) - 1 + z S(z)); +-0 and subnormals too */
    if (a < 0x1p-1000) return copysign(dual_erf_tiny(a), x);
    double t = dual_erf_tail_small(a, a * a);
    return copysign(a + (a * EFX_HI + t), x);
  }
  if (a < 6.0) return copysign(dual_erf_c_minus(1.0, a), x);
  if (a != a) return x + x;
  return copysign(1.0, x); /* 1 - erf(a) < 2^-55 */
}

DUAL_FN_CLONE double dual_erfc(double x) {
  const double EFX_HI = 0x1.06eba8214db69p-3; /* 2/sqrt(pi) - 1 */
  if (x < 0.46875 && x > -0.5) { /* 1 - x - x (erf(x)/x - 1), s.hi + s.lo = 1 - x exactly */
    double t = dual_erf_tail_small(x, x * x);
    dual_el_dd s = dual_el_fast2sum(1.0, -x);
    return s.hi + (s.lo - (x * EFX_HI + t));
  }
  if (x > 0.0) {
    if (!(x < 27.25)) return 0.0; /* erfc(27.25) < 2^-1075; also +inf */
    int k;
    dual_el_dd v = dual_erfc_core(x, &k);
    return dual_el_ldexp(v.hi, v.lo, k); /* rounded once, subnormal results included */
  }
  if (x > -6.0) return dual_erf_c_minus(2.0, -x);
  return (x != x) ? x + x : 2.0; /* erfc(6) < 2^-54 */
}

#endif /* DUAL_FN_ERF_H */
