/*
 * fn_exp.h — exp, exp2, expm1, e^(x + xl) (dual_exp_dd), the e^r kernel and the double-double helpers
 * shared with fn_log.h, fn_pow.h, fn_hyp.h, fn_erf.h.  exp: x = (64 m + j) ln2/64 + r, a table of
 * 2^(j/64) as double-doubles and a degree-6 polynomial (dual_el_exp_tab).  The others table-free:
 * x = k ln2 + r (Cody–Waite, r + rl), e^r = 1 + r + r^2/2 + r^3 Q(r) (minimax,
 * scripts/fncoef/explog.py), 1 + r + r^2/2 summed exactly, then 2^k with one rounding (subnormal
 * results too).  Max error measured by tests/test_fn_explog.c: exp 0.509, exp2 0.544, expm1 0.574
 * ulp.  Included by fn.h and fn_*.h.
 */
#ifndef DUAL_FN_EXP_H
#define DUAL_FN_EXP_H

#include "fn_bits.h"

/* ---- constants (scripts/fncoef/explog.py) ---- */
#define DUAL_EL_LN2_42 0x1.62e42fefa3800p-1  /* ln2 to 42 bits: k * it is exact for |k| < 2^11 */
#define DUAL_EL_LN2_42L 0x1.ef35793c76730p-45 /* ln2 - DUAL_EL_LN2_42 */
#define DUAL_EL_INV_LN2 0x1.71547652b82fep+0
#define DUAL_EL_LN2 0x1.62e42fefa39efp-1
#define DUAL_EL_LN2L 0x1.abc9e3b39803fp-56    /* ln2 - DUAL_EL_LN2 */
#define DUAL_EL_LN2_S1 0x1.62e4300000000p-1  /* DUAL_EL_LN2 = S1 + S2 exactly, S1 26 bits */
#define DUAL_EL_LN2_S2 -0x1.05c6110000000p-29

/* e^r - 1 - r - r^2/2 ~ r^3 (Q0 + Q1 r + ... + Q9 r^9), |r| <= 0.3481; abs error 2^-63.8 */
#define DUAL_EL_EXP_Q0 0x1.555555555555cp-3
#define DUAL_EL_EXP_Q1 0x1.5555555555556p-5
#define DUAL_EL_EXP_Q2 0x1.111111110e967p-7
#define DUAL_EL_EXP_Q3 0x1.6c16c16c1619ap-10
#define DUAL_EL_EXP_Q4 0x1.a01a01b4a0f13p-13
#define DUAL_EL_EXP_Q5 0x1.a01a01a703c95p-16
#define DUAL_EL_EXP_Q6 0x1.71dded5059223p-19
#define DUAL_EL_EXP_Q7 0x1.27e4dba7b8105p-22
#define DUAL_EL_EXP_Q8 0x1.af70c6ae22c21p-26
#define DUAL_EL_EXP_Q9 0x1.1f717f1e2189dp-29

/* ---- double-double helpers (exact transformations; also used by fn_log.h and fn_pow.h) ---- */

/* An unevaluated sum hi + lo. */
typedef struct dual_el_dd {
  double hi, lo;
} dual_el_dd;

DUAL_INLINE dual_el_dd dual_el_make(double hi, double lo) {
  dual_el_dd r;
  r.hi = hi;
  r.lo = lo;
  return r;
}

DUAL_INLINE double dual_el_inf(void) { return dual_from_bits(0x7ff0000000000000ull); }
DUAL_INLINE double dual_el_nan(void) { return dual_from_bits(0x7ff8000000000000ull); }

/* a + b = hi + lo exactly when |a| >= |b| or a == 0 (Dekker's Fast2Sum). */
DUAL_INLINE dual_el_dd dual_el_fast2sum(double a, double b) {
  double s = a + b;
  return dual_el_make(s, b - (s - a));
}

/* a + b = hi + lo exactly, whatever the magnitudes (Knuth's TwoSum). */
DUAL_INLINE dual_el_dd dual_el_2sum(double a, double b) {
  double s = a + b;
  double bb = s - a;
  return dual_el_make(s, (a - (s - bb)) + (b - bb));
}

/* Veltkamp: x = hi + lo exactly, each half 26 significant bits (|x| < 2^995). */
DUAL_INLINE dual_el_dd dual_el_split(double x) {
  double c = 0x1.0000002p27 * x; /* (2^27 + 1) x */
  double hi = c - (c - x);
  return dual_el_make(hi, x - hi);
}

/* a^2 = hi + lo exactly (Dekker), barring underflow. */
DUAL_INLINE dual_el_dd dual_el_sqr(double a) {
  dual_el_dd s = dual_el_split(a);
  double p = a * a;
  return dual_el_make(p, ((s.hi * s.hi - p) + 2.0 * (s.hi * s.lo)) + s.lo * s.lo);
}

/* x with its low 32 mantissa bits cleared (21 significant bits): the product of two such numbers,
 * or of one and a 32-bit constant, is exact. */
DUAL_INLINE double dual_el_trunc21(double x) {
  return dual_from_bits(dual_bits(x) & 0xffffffff00000000ull);
}

/* ---- exp kernel ---- */

/* r^3 Q(r) = Q0 r^3 + r^4 (Q1 + Q2 r + ... + Q9 r^8), the second factor by Estrin's scheme (short
 * dependency chains); r2 = r*r.  Keeping Q0 r^3 apart spares it the rounding errors of the
 * polynomial's sum. */
DUAL_INLINE double dual_el_exp_tail(double r, double r2) {
  double r4 = r2 * r2;
  double q12 = DUAL_EL_EXP_Q1 + DUAL_EL_EXP_Q2 * r;
  double q34 = DUAL_EL_EXP_Q3 + DUAL_EL_EXP_Q4 * r;
  double q56 = DUAL_EL_EXP_Q5 + DUAL_EL_EXP_Q6 * r;
  double q78 = DUAL_EL_EXP_Q7 + DUAL_EL_EXP_Q8 * r;
  double q = (q12 + q34 * r2) + r4 * ((q56 + q78 * r2) + r4 * DUAL_EL_EXP_Q9);
  return (r * r2) * DUAL_EL_EXP_Q0 + r4 * q;
}

/* r^2/2 = hi + lo, hi exact (r cut into a 21-bit head and its tail), lo to 2^-73 |r^2|. */
DUAL_INLINE dual_el_dd dual_el_half_sqr(double r) {
  double rh = dual_el_trunc21(r);
  double rt = r - rh;
  return dual_el_make(0.5 * (rh * rh), (0.5 * rt) * (rh + r));
}

/* e^(r + rl) as a normalized double-double, for |r| <= 0.3481, |rl| <= 2^-53: relative error about
 * 2^-57 (exact = 0) or 2^-58 (exact = 1; a constant).  1 + r + r^2/2 is summed exactly, r^2/2
 * itself rounded to double (exp, exp2: 20% faster) or exact (expm1, pow, and the callers of
 * dual_el_exp_kernel); the rest in plain double arithmetic. */
DUAL_INLINE dual_el_dd dual_el_exp_kernel2(double r, double rl, int exact) {
  double r2 = r * r;
  dual_el_dd hs = exact ? dual_el_half_sqr(r) : dual_el_make(0.5 * r2, 0.0);
  double tail = dual_el_exp_tail(r, r2);          /* r^3 Q(r), |.| <= 0.0072 */
  dual_el_dd h1 = dual_el_fast2sum(1.0, r);       /* 1 + r */
  dual_el_dd h2 = dual_el_fast2sum(h1.hi, hs.hi); /* + r^2/2; h1.hi >= 0.65 > hs */
  /* e^rl = 1 + rl: the rl terms are rl (1 + r + r^2/2); rl r^3/6 < 2^-60 */
  double rlt = rl * (r + hs.hi);
  if (exact) rlt += hs.lo;
  double small = (h1.lo + h2.lo) + (rl + rlt);
  return dual_el_fast2sum(h2.hi, tail + small);
}

/* The kernel for fn_hyp.h and fn_erf.h: e^(r + rl) with r^2/2 exact, relative error about 2^-58.
 * exact_sq is ignored (r^2/2 is always exact); it stays for the existing callers. */
DUAL_INLINE dual_el_dd dual_el_exp_kernel(double r, double rl, int exact_sq) {
  (void)exact_sq;
  return dual_el_exp_kernel2(r, rl, 1);
}

/* (hi + lo) 2^k rounded once, hi in [0.5, 2) and |lo| <= ulp(hi)/2, k below -1021 or above 1023
 * (the rare range of dual_el_ldexp).  Also used by hypot with hi > 0 anywhere and k = -600 when
 * hi 2^k < 2^-1021. */
DUAL_INLINE double dual_el_ldexp_rare(double hi, double lo, int k) {
  if (k > 0) return (hi + lo) * 0x1p1023 * dual_pow2i(k - 1023); /* exact, or +-inf */
  /* below 2^-1021: scale so that 2^-1022 becomes 1 (exactly), then let 1 + h round on the
   * subnormal grid, so the result is rounded once */
  double s = dual_pow2i(k + 1022);
  double h = hi * s, l = lo * s;
  if (h >= 1.0) return (h + l) * 0x1p-1022;
  dual_el_dd t = dual_el_fast2sum(1.0, h);
  return ((t.hi + (t.lo + l)) - 1.0) * 0x1p-1022;
}

/* (hi + lo) 2^k for a normalized hi + lo with hi in [0.5, 2), k in [-1100, 1100]. */
DUAL_INLINE double dual_el_ldexp(double hi, double lo, int k) {
  if (k > -1022 && k < 1024) return hi * dual_pow2i(k);
  return dual_el_ldexp_rare(hi, lo, k);
}

/* e^(x + xl) for x in [-746, 709.8]; has_xl (a constant): |xl| <= 2^-9.4 and the exact kernel
 * (for pow), else xl is ignored and the faster kernel used (exp). */
DUAL_INLINE double dual_el_exp_reduced(double x, double xl, int has_xl) {
  double kd = (x * DUAL_EL_INV_LN2 + 0x1.8p52) - 0x1.8p52; /* nearest integer to x/ln2 */
  double t = x - kd * DUAL_EL_LN2_42;                      /* exact */
  dual_el_dd r;
  if (has_xl) { /* |r| <= ln2/2 + |xl| */
    r = dual_el_2sum(t, xl - kd * DUAL_EL_LN2_42L);
  } else { /* when |t| is the smaller, both are below 2^-31 and Fast2Sum errs by < 2^-84 */
    r = dual_el_fast2sum(t, kd * -DUAL_EL_LN2_42L);
  }
  dual_el_dd e = dual_el_exp_kernel2(r.hi, r.lo, has_xl);
  return dual_el_ldexp(e.hi, e.lo, (int)kd);
}

/* ---- exp by a table ---- */

/* 2^(j/64) = hi + lo for j = 0 .. 63 (hi rounded to nearest, lo the rest rounded), computed with
 * 200-bit arithmetic (mpmath).  On the GPU a __device__ array, read through the L1 cache (the
 * host copy serves host code compiled by nvcc). */
#define DUAL_EL_EXP2_64_VALUES \
    0x1.0000000000000p+0, 0x0.0p+0, \
    0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56, \
    0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55, \
    0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57, \
    0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54, \
    0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59, \
    0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54, \
    0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54, \
    0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55, \
    0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55, \
    0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54, \
    0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55, \
    0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54, \
    0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55, \
    0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55, \
    0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54, \
    0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55, \
    0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54, \
    0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54, \
    0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56, \
    0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55, \
    0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58, \
    0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59, \
    0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56, \
    0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56, \
    0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54, \
    0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55, \
    0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54, \
    0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54, \
    0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54, \
    0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54, \
    0x1.6623882552225p+0, -0x1.bb60987591c34p-54, \
    0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54, \
    0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57, \
    0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55, \
    0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54, \
    0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55, \
    0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56, \
    0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54, \
    0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54, \
    0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54, \
    0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55, \
    0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57, \
    0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54, \
    0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56, \
    0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54, \
    0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54, \
    0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54, \
    0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54, \
    0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57, \
    0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56, \
    0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55, \
    0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55, \
    0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54, \
    0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56, \
    0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54, \
    0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55, \
    0x1.da9e603db3285p+0, 0x1.c2300696db532p-54, \
    0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54, \
    0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55, \
    0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54, \
    0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54, \
    0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54, \
    0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55, \

DUAL_CONST_TABLE(dual_el_exp2_64, 128, DUAL_EL_EXP2_64_VALUES)
#define DUAL_EL_EXP2_64 DUAL_TABLE(dual_el_exp2_64)
#define DUAL_EL_INV_LN2_64 0x1.71547652b82fep+6 /* 64 / ln2 */
#define DUAL_EL_LN2_64_36 0x1.62e42fefa0000p-7 /* ln2 / 64 to 36 bits: k * it is exact, |k| < 2^17 */
#define DUAL_EL_LN2_64_L 0x1.cf79abc9e3b3ap-46 /* ln2 / 64 - DUAL_EL_LN2_64_36 */

/* e^x for x in [-746, 708]: x = (64 m + j) ln2/64 + r, |r| <= ln2/128 (+ 2^-60), then
 * 2^m 2^(j/64) e^r with e^r - 1 by its Taylor polynomial to r^6 (truncation below 2^-66),
 * 2^(j/64) (1 + p) = hi + c summed exactly (Fast2Sum, hi >= 1 > |c|) and scaled once.  Max
 * error by tests/test_fn_explog.c.  About a third of the kernel's operations (dual_el_exp_reduced),
 * one table pair read per call. */
DUAL_INLINE double dual_el_exp_tab(double x) {
  const double kd = (x * DUAL_EL_INV_LN2_64 + 0x1.8p52) - 0x1.8p52; /* nearest integer */
  const double r = (x - kd * DUAL_EL_LN2_64_36) - kd * DUAL_EL_LN2_64_L; /* the first step exact */
  const int k = (int)kd, j = k & 63, m = (k - j) / 64;
  const double r2 = r * r;
  const double q = 0.5 + r * (0x1.5555555555555p-3 + r * (0x1.5555555555555p-5 +
                                                          r * (0x1.1111111111111p-7 + r * 0x1.6c16c16c16c17p-10)));
  const double p = r + r2 * q; /* e^r - 1 */
  const double th = DUAL_EL_EXP2_64[2 * j], tl = DUAL_EL_EXP2_64[2 * j + 1];
  const double c = th * p + tl;
  const dual_el_dd e = dual_el_fast2sum(th, c);
  return dual_el_ldexp(e.hi, e.lo, m);
}

/* ---- public functions ---- */

/* e^(x + xl) for an unevaluated sum x + xl, |xl| <= 2^-9.4 (a double-double, or pow's b log a
 * from 21-bit pieces): for pow, and for callers that form their argument exactly (erfc's -x^2).
 * Relative error about 2^-58 before the final rounding. */
DUAL_INLINE double dual_exp_dd(double x, double xl) {
  if (!(fabs(x) <= 708.0)) { /* NaN, +-inf, overflow, results near or below DBL_MIN */
    if (x != x) return x + x;
    if (x > 709.8) return dual_el_inf();
    if (x < -746.0) return 0.0;
  }
  return dual_el_exp_reduced(x, xl, 1);
}

DUAL_FN double dual_exp(double x) {
  if (!(fabs(x) <= 708.0)) {
    if (x != x) return x + x;
    if (x > 709.8) return dual_el_inf();
    if (x < -746.0) return 0.0;
  }
  return dual_el_exp_tab(x);
}

DUAL_FN double dual_exp2(double x) {
  if (!(fabs(x) <= 1020.0)) {
    if (x != x) return x + x;
    if (x >= 1024.0) return dual_el_inf();
    if (x < -1080.0) return 0.0;
  }
  double kd = (x + 0x1.8p52) - 0x1.8p52; /* nearest integer */
  double r = x - kd;                     /* exact, |r| <= 1/2 */
  /* r ln2 = rh + rl: Dekker's product with the split ln2, plus r (ln2 - DUAL_EL_LN2) */
  double rh = r * DUAL_EL_LN2;
  dual_el_dd rs = dual_el_split(r);
  double rl = (((rs.hi * DUAL_EL_LN2_S1 - rh) + rs.hi * DUAL_EL_LN2_S2) + rs.lo * DUAL_EL_LN2_S1) +
              rs.lo * DUAL_EL_LN2_S2;
  rl += r * DUAL_EL_LN2L;
  dual_el_dd e = dual_el_exp_kernel2(rh, rl, 0);
  return dual_el_ldexp(e.hi, e.lo, (int)kd);
}

DUAL_FN double dual_expm1(double x) {
  double ax = fabs(x);
  if (!(ax <= 708.0)) {
    if (x != x) return x + x;
    if (x > 709.8) return dual_el_inf();
    if (x < 0.0) return -1.0;
  }
  if (ax < 0x1p-54) return x; /* x + x^2/2 rounds to x; keeps -0 and subnormals */
  if (x < -38.0) return -1.0; /* e^x < 2^-54 */
  if (ax < 0.3465) {
    /* x + x^2/2 + x^3 Q(x), with x^2/2 exact and the first sum as a double-double */
    dual_el_dd hs = dual_el_half_sqr(x);
    double tail = dual_el_exp_tail(x, x * x);
    dual_el_dd h = dual_el_fast2sum(x, hs.hi);
    return h.hi + (h.lo + (hs.lo + tail));
  }
  double kd = (x * DUAL_EL_INV_LN2 + 0x1.8p52) - 0x1.8p52;
  double t = x - kd * DUAL_EL_LN2_42;
  dual_el_dd r = dual_el_fast2sum(t, kd * -DUAL_EL_LN2_42L);
  dual_el_dd e = dual_el_exp_kernel2(r.hi, r.lo, 1);
  int k = (int)kd;
  if (k > 1000) return dual_el_ldexp(e.hi, e.lo, k); /* the -1 is far below half an ulp */
  /* 2^k e - 1, the subtraction exact, then one rounding */
  double s = dual_pow2i(k); /* k >= -55 */
  dual_el_dd d = dual_el_2sum(e.hi * s, -1.0);
  return d.hi + (d.lo + e.lo * s);
}

#endif /* DUAL_FN_EXP_H */
