/*
 * fn_log.h — log, log2, log10, log1p, and the log kernels of fn_pow.h/fn_hyp.h (dual_el_log_*).
 * Table-free: x = 2^k m, m near one of four centres c (1, 1.1875, 1.4375, 1.6875), s = (m-c)/(m+c),
 * |s| <= 0.0478, kept as sh + sl (sh 21 bits: exact products); log(m/c) = 2 atanh(s) by a minimax
 * series in s^2 (scripts/fncoef/explog.py); k ln2 + log(c) + 2s summed exactly as a double-double.
 * Max error measured by tests/test_fn_explog.c: log 0.502, log2 0.504, log10 0.503, log1p 0.502 ulp.
 * Includes fn_exp.h; included by fn.h, fn_pow.h and fn_hyp.h.
 */
#ifndef DUAL_FN_LOG_H
#define DUAL_FN_LOG_H

#include "fn_exp.h"

/* ---- constants (scripts/fncoef/explog.py) ---- */
#define DUAL_EL_INV_LN2_S1 0x1.7154768000000p+0  /* DUAL_EL_INV_LN2 = S1 + S2 exactly, S1 26 bits */
#define DUAL_EL_INV_LN2_S2 -0x1.6a3e810000000p-27
#define DUAL_EL_INV_LN2_H 0x1.71547652b82fep+0
#define DUAL_EL_INV_LN2_L 0x1.777d0ffda0d24p-56
#define DUAL_EL_INV_LN10_S1 0x1.bcb7b18000000p-2  /* DUAL_EL_INV_LN10 = S1 + S2 exactly, S1 26 bits */
#define DUAL_EL_INV_LN10_S2 -0x1.6c8d790000000p-29
#define DUAL_EL_INV_LN10_H 0x1.bcb7b1526e50ep-2
#define DUAL_EL_INV_LN10_L 0x1.95355baaafad3p-57
#define DUAL_EL_LOG10_2_42 0x1.34413509f7800p-2  /* log10(2) to 42 bits */
#define DUAL_EL_LOG10_2_42L 0x1.fef311f12b358p-46
#define DUAL_EL_LOG_T1 0x16f83u /* m >= 1.089725 */
#define DUAL_EL_LOG_T2 0x4e790u /* m >= 1.306534 */
#define DUAL_EL_LOG_T3 0x8eb7du /* m >= 1.557492 */
#define DUAL_EL_LOG_T4 0xd64d5u /* m >= 1.837117 */
#define DUAL_EL_LOGC1_H 0x1.5ff3070a78000p-3  /* log(1.1875) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOGC1_L 0x1.3d3c873e20a07p-43
#define DUAL_EL_LOG2C1_H 0x1.fbc16b9026000p-3  /* log2(1.1875) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOG2C1_L 0x1.0144751b3314fp-44
#define DUAL_EL_LOG10C1_H 0x1.31b3055c46000p-4  /* log10(1.1875) truncated to a multiple of 2^-43 */
#define DUAL_EL_LOG10C1_L 0x1.11801b420b9b2p-44
#define DUAL_EL_LOGC2_H 0x1.739d7f6bbd000p-2  /* log(1.4375) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOGC2_L 0x1.a7389314feb50p-52
#define DUAL_EL_LOG2C2_H 0x1.0c10500d63800p-1  /* log2(1.4375) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOG2C2_L 0x1.532c412ba94dbp-44
#define DUAL_EL_LOG10C2_H 0x1.42c7e7fe3f000p-3  /* log10(1.4375) truncated to a multiple of 2^-43 */
#define DUAL_EL_LOG10C2_L 0x1.8038b75509d50p-44
#define DUAL_EL_LOGC3_H 0x1.0be72e4252800p-1  /* log(1.6875) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOGC3_L 0x1.415b4c4bdd99fp-44
#define DUAL_EL_LOG2C3_H 0x1.82809d5be7000p-1  /* log2(1.6875) truncated to a multiple of 2^-42 */
#define DUAL_EL_LOG2C3_L 0x1.cb6f70109b0f1p-47
#define DUAL_EL_LOG10C3_H 0x1.d165300e33000p-3  /* log10(1.6875) truncated to a multiple of 2^-43 */
#define DUAL_EL_LOG10C3_L 0x1.fb4e01451e226p-46
#define DUAL_EL_TWO_THIRDS_11 0x1.5540000000000p-1  /* 2/3 to 11 bits */
#define DUAL_EL_TWO_THIRDS_11L 0x1.5555555555555p-13
#define DUAL_EL_TWO_THIRDS 0x1.5555555555555p-1

/* atanh(s)/s - 1 ~ z (P0 + P1 z + ... + P4 z^4), z = s^2 <= 0.0478^2; error 2^-67.0 */
#define DUAL_EL_LOG_P0 0x1.5555555555557p-2
#define DUAL_EL_LOG_P1 0x1.9999999993e7dp-3
#define DUAL_EL_LOG_P2 0x1.249249540b6e5p-3
#define DUAL_EL_LOG_P3 0x1.c71b20a13ec34p-4
#define DUAL_EL_LOG_P4 0x1.7675e090aa544p-4

/* 3 atanh(s)/s - 3 - z ~ z^2 (R0 + R1 z + ... + R4 z^4), z = s^2 <= 0.0478^2; abs error 2^-76.0 */
#define DUAL_EL_LOG_R0 0x1.333333333333ap-1
#define DUAL_EL_LOG_R1 0x1.b6db6db6cc5eap-2
#define DUAL_EL_LOG_R2 0x1.555555b52534ep-2
#define DUAL_EL_LOG_R3 0x1.1744b7ca96753p-2
#define DUAL_EL_LOG_R4 0x1.dba88696bcf79p-3

/* v1, v2 or v3 for j = 1, 2, 3, +0 for j = 0: a selection by masks, not a branch (random
 * mantissas would mispredict it) nor a table. */
DUAL_INLINE double dual_el_sel3(int j, double v1, double v2, double v3) {
  uint64_t m1 = (uint64_t)0 - (uint64_t)(j == 1);
  uint64_t m2 = (uint64_t)0 - (uint64_t)(j == 2);
  uint64_t m3 = (uint64_t)0 - (uint64_t)(j == 3);
  return dual_from_bits((m1 & dual_bits(v1)) | (m2 & dual_bits(v2)) | (m3 & dual_bits(v3)));
}

/* The reduced argument of x + xl = 2^k m: k, the centre index j (c = 1 + {0, 3, 7, 11}/16),
 * s = (m - c)/(m + c) as a double and as sh + sl (sh 21 bits, |error| < 2^-70 |s|), and
 * log(c) = lch + lcl. */
typedef struct dual_el_logarg {
  double kd, s, sh, sl, lch, lcl;
  int j;
} dual_el_logarg;

/* x positive normal, |xl| <= ulp(x)/2 (has_xl, a constant: 0 when there is no xl), kadj added to
 * the exponent (-54 for a subnormal the caller scaled by 2^54). */
DUAL_INLINE dual_el_logarg dual_el_log_reduce(double x, double xl, int kadj, int has_xl) {
  uint64_t ux = dual_bits(x);
  uint32_t top = (uint32_t)(ux >> 32) & 0xfffffu; /* top 20 mantissa bits of m in [1, 2) */
  int big = top >= DUAL_EL_LOG_T4;                 /* m >= 1.8371: m/2, k+1, centre 1 */
  int j = (top >= DUAL_EL_LOG_T1) + (top >= DUAL_EL_LOG_T2) + (top >= DUAL_EL_LOG_T3) - 3 * big;
  int k = (int)(ux >> 52) - 1023 + big;
  double m = dual_from_bits((ux & 0x000fffffffffffffull) | ((uint64_t)(1023 - big) << 52));
  double c = dual_from_bits(0x3ff0000000000000ull | ((uint64_t)(4 * j - (j > 0)) << 48));
  double u = m - c;         /* exact (Sterbenz) */
  double d = m + c;
  double dh = dual_el_trunc21(d);
  double dl = m - (dh - c); /* exact: dh + dl = m + c */
  double v = 1.0 / d;
  dual_el_logarg a;
  if (has_xl) {
    double ml = (xl * dual_pow2i(-(k / 2))) * dual_pow2i(k / 2 - k); /* xl 2^-k, in two exact steps */
    a.s = (u + ml) * v;
    a.sh = dual_el_trunc21(a.s);
    /* u - sh dh is exact: sh dh has 42 bits and is within 2^-19 of u + ml, |ml| <= 2^-53 */
    a.sl = v * (((u - a.sh * dh) + ml) - a.sh * (dl + ml));
  } else {
    a.s = u * v;
    a.sh = dual_el_trunc21(a.s);
    a.sl = v * ((u - a.sh * dh) - a.sh * dl); /* u - sh dh exact (Sterbenz) */
  }
  a.kd = (double)(k + kadj);
  a.j = j;
  a.lch = dual_el_sel3(j, DUAL_EL_LOGC1_H, DUAL_EL_LOGC2_H, DUAL_EL_LOGC3_H);
  a.lcl = dual_el_sel3(j, DUAL_EL_LOGC1_L, DUAL_EL_LOGC2_L, DUAL_EL_LOGC3_L);
  return a;
}

/* 2 atanh(s) - 2s = 2s z P(z), |.| <= 2^-10 |2s|. */
DUAL_INLINE double dual_el_log_t(double s) {
  double z = s * s;
  double z2 = z * z;
  double p = (DUAL_EL_LOG_P0 + DUAL_EL_LOG_P1 * z) + z2 * ((DUAL_EL_LOG_P2 + DUAL_EL_LOG_P3 * z) + z2 * DUAL_EL_LOG_P4);
  return ((2.0 * s) * z) * p;
}

/* log(x + xl) = hi + lo (|lo| <= 2^-9 |hi|, not normalized), relative error about 2^-61: for log,
 * log1p and fn_hyp.h.  Arguments as dual_el_log_reduce. */
DUAL_INLINE dual_el_dd dual_el_log_lean(double x, double xl, int kadj, int has_xl) {
  dual_el_logarg a = dual_el_log_reduce(x, xl, kadj, has_xl);
  double t = dual_el_log_t(a.s);
  /* k LN2_42 + lch is exact (both multiples of 2^-42, below 2^10); adding 2 sh is exact by
   * Fast2Sum: |k ln2 + log c| >= 0.169 > |2 sh| unless it is 0.  The small terms are summed before
   * t arrives (the polynomial is the longest dependency chain). */
  double big = a.kd * DUAL_EL_LN2_42 + a.lch;
  dual_el_dd h = dual_el_fast2sum(big, 2.0 * a.sh);
  double lo = (h.lo + (2.0 * a.sl + (a.kd * DUAL_EL_LN2_42L + a.lcl))) + t;
  return dual_el_make(h.hi, lo);
}

/* log2(x) (base2 = 1) or log10(x) (base2 = 0, both constants) as hi + lo, relative error about
 * 2^-61: the lean kernel with k log_b(2) + log_b(c) exact as above, and 2 atanh(s) times
 * 1/ln(b) = S1 + S2 + L with 2 sh S1 and 2 sh S2 exact (21-bit sh, 26-bit S1).  x positive normal. */
DUAL_INLINE dual_el_dd dual_el_log_base(double x, int kadj, int base2) {
  dual_el_logarg a = dual_el_log_reduce(x, 0.0, kadj, 0);
  double t = dual_el_log_t(a.s);
  double m1 = base2 ? DUAL_EL_INV_LN2_S1 : DUAL_EL_INV_LN10_S1;
  double m2 = base2 ? DUAL_EL_INV_LN2_S2 : DUAL_EL_INV_LN10_S2;
  double mh = base2 ? DUAL_EL_INV_LN2_H : DUAL_EL_INV_LN10_H;
  double ml = base2 ? DUAL_EL_INV_LN2_L : DUAL_EL_INV_LN10_L;
  double lch = base2 ? dual_el_sel3(a.j, DUAL_EL_LOG2C1_H, DUAL_EL_LOG2C2_H, DUAL_EL_LOG2C3_H)
                     : dual_el_sel3(a.j, DUAL_EL_LOG10C1_H, DUAL_EL_LOG10C2_H, DUAL_EL_LOG10C3_H);
  double lcl = base2 ? dual_el_sel3(a.j, DUAL_EL_LOG2C1_L, DUAL_EL_LOG2C2_L, DUAL_EL_LOG2C3_L)
                     : dual_el_sel3(a.j, DUAL_EL_LOG10C1_L, DUAL_EL_LOG10C2_L, DUAL_EL_LOG10C3_L);
  /* log2: k is exact by itself; log10: k log10(2) to 42 bits is exact, and so is the sum */
  double big = (base2 ? a.kd : a.kd * DUAL_EL_LOG10_2_42) + lch;
  double lk = base2 ? 0.0 : a.kd * DUAL_EL_LOG10_2_42L;
  double s2 = 2.0 * a.sh;
  /* |k log_b 2 + log_b c| > |2 sh / ln b| (log2: 0.245 > 0.138, log10: 0.074 > 0.042) unless it
   * is 0: Fast2Sum is exact */
  dual_el_dd h = dual_el_fast2sum(big, s2 * m1);
  double lo = (h.lo + (s2 * m2 + (s2 * ml + ((2.0 * a.sl) * mh + (lk + lcl))))) + t * mh;
  return dual_el_make(h.hi, lo);
}

/* log(x) = hi + lo (|lo| < 2^-17 |hi|, not normalized) with relative error about 2^-69, for pow.
 * 2 atanh(s) = 2s + (2/3) s^3 + (2/3) s z^2 R(z), s = sh + sl: 2 sh is exact, and so is
 * (2/3) sh^3 as c11 sh^2 sh with 2/3 = c11 + c11l (c11 11 bits) and sh^2 (42 bits) cut into two
 * 21-bit halves; 2 sh^2 sl + 2 sh sl^2 + c11l sh^3, the R term (below 2^-19 |2s|) and the rest go
 * into the low part in plain double arithmetic.  x positive normal. */
DUAL_INLINE dual_el_dd dual_el_log_dd(double x, int kadj) {
  dual_el_logarg a = dual_el_log_reduce(x, 0.0, kadj, 0);
  double z = a.s * a.s;
  double z2 = z * z;
  double rp = (DUAL_EL_LOG_R0 + DUAL_EL_LOG_R1 * z) + z2 * ((DUAL_EL_LOG_R2 + DUAL_EL_LOG_R3 * z) + z2 * DUAL_EL_LOG_R4);
  double tail = ((DUAL_EL_TWO_THIRDS * a.s) * z2) * rp;
  double sh2 = a.sh * a.sh; /* exact, 42 bits */
  double sh2h = dual_el_trunc21(sh2);
  double sh2l = sh2 - sh2h;                          /* exact, 21 bits */
  double c1 = (DUAL_EL_TWO_THIRDS_11 * sh2h) * a.sh; /* exact: 11 + 21 + 21 bits */
  double c2 = (DUAL_EL_TWO_THIRDS_11 * sh2l) * a.sh; /* exact */
  double c3 = ((2.0 * a.sh) * a.sl) * (a.sh + a.sl) + DUAL_EL_TWO_THIRDS_11L * (sh2 * a.sh);
  double big = a.kd * DUAL_EL_LN2_42 + a.lch;        /* exact */
  dual_el_dd h1 = dual_el_fast2sum(big, 2.0 * a.sh); /* exact, as in the lean kernel */
  dual_el_dd h2 = dual_el_fast2sum(h1.hi, c1);       /* exact: |h1.hi| >= 0.07 or = 2 sh */
  double lo = ((h1.lo + h2.lo) + ((2.0 * a.sl + (c2 + c3)) + (a.kd * DUAL_EL_LN2_42L + a.lcl))) + tail;
  return dual_el_make(h2.hi, lo);
}

/* The Annex F result for x NaN, <= 0 or +inf. */
DUAL_INLINE double dual_el_log_special(double x) {
  if (x != x) return x + x;
  if (x == 0.0) return -dual_el_inf();
  if (x < 0.0) return dual_el_nan();
  return x; /* +inf */
}

/* Is x outside [DBL_MIN, DBL_MAX] (NaN, negative, 0, subnormal, inf)? */
DUAL_INLINE int dual_el_not_pos_normal(double x) {
  return dual_bits(x) - 0x0010000000000000ull >= 0x7fe0000000000000ull;
}

DUAL_FN double dual_log(double x) {
  int kadj = 0;
  if (dual_el_not_pos_normal(x)) {
    if (!(x > 0.0 && x < dual_el_inf())) return dual_el_log_special(x);
    x *= 0x1p54; /* subnormal */
    kadj = -54;
  }
  dual_el_dd l = dual_el_log_lean(x, 0.0, kadj, 0);
  return l.hi + l.lo;
}

DUAL_FN double dual_log2(double x) {
  int kadj = 0;
  if (dual_el_not_pos_normal(x)) {
    if (!(x > 0.0 && x < dual_el_inf())) return dual_el_log_special(x);
    x *= 0x1p54; /* subnormal */
    kadj = -54;
  }
  dual_el_dd l = dual_el_log_base(x, kadj, 1);
  return l.hi + l.lo;
}

DUAL_FN double dual_log10(double x) {
  int kadj = 0;
  if (dual_el_not_pos_normal(x)) {
    if (!(x > 0.0 && x < dual_el_inf())) return dual_el_log_special(x);
    x *= 0x1p54; /* subnormal */
    kadj = -54;
  }
  dual_el_dd l = dual_el_log_base(x, kadj, 0);
  return l.hi + l.lo;
}

DUAL_FN double dual_log1p(double x) {
  if (!(x > -1.0 && x < 0x1p60)) {
    if (x != x) return x + x;
    if (x == -1.0) return -dual_el_inf();
    if (x < -1.0) return dual_el_nan();
    return dual_log(x); /* log1p(x) = log(x) + 1/x, and 1/x < 2^-65 log(x) */
  }
  if (fabs(x) < 0x1p-54) return x; /* x - x^2/2 rounds to x; keeps -0 and subnormals */
  /* 1 + x = u + ul exactly; u >= 2^-53 is normal */
  dual_el_dd u = dual_el_2sum(1.0, x);
  dual_el_dd l = dual_el_log_lean(u.hi, u.lo, 0, 1);
  return l.hi + l.lo;
}

#endif /* DUAL_FN_LOG_H */
