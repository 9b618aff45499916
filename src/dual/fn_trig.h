/*
 * fn_trig.h — dual_sin, dual_cos, dual_tan, dual_sincos: the library's own sine, cosine, tangent.
 * x = k pi/2 + r, r a double-double: Cody–Waite (pi/2 in 4 pieces) for |x| < 2^20, exact Payne–
 * Hanek (1216 bits of 2/pi) above; minimax polynomials on |r| <= pi/4 (scripts/fncoef/trig.py).
 * Max error measured by tests/test_fn_trig.c (3e6 arguments): sin 0.544, cos 0.538, tan 0.543 ulp.
 * Valid C11 and CUDA; included by src/dual/rules.h (SIN, COS, TAN) and tests/test_fn_trig.c.
 */
#ifndef DUAL_FN_TRIG_H
#define DUAL_FN_TRIG_H

#include "fn_bits.h"

/* The huge-argument reduction is rare: out of line, so that the common path keeps few registers
 * on the GPU; still one definition for host and device. */
#if defined(__CUDACC__)
#define DUAL_TRIG_COLD static __noinline__ __host__ __device__
#elif defined(__GNUC__) || defined(__clang__)
#define DUAL_TRIG_COLD static inline __attribute__((cold))
#else
#define DUAL_TRIG_COLD static inline
#endif

/* Count leading zeros of a nonzero 64-bit word. */
#if defined(__CUDA_ARCH__)
#define DUAL_TRIG_CLZ64(x) __clzll((long long)(x))
#elif defined(__GNUC__) || defined(__clang__)
#define DUAL_TRIG_CLZ64(x) __builtin_clzll(x)
#else
DUAL_INLINE int dual_trig_clz64_portable(uint64_t x) {
  int n = 0;
  while (!(x >> 63)) x <<= 1, ++n;
  return n;
}
#define DUAL_TRIG_CLZ64(x) dual_trig_clz64_portable(x)
#endif

/* Bits of 2/pi (scripts/fncoef/trig.py): word j >= 1 holds bits 64(j-1)+1 .. 64j after the
 * binary point, most significant first; word 0 is zero padding. */
#define DUAL_TRIG_2OPI_N 20
#define DUAL_TRIG_2OPI_WORDS                                                                       \
  0x0000000000000000ULL, 0xa2f9836e4e441529ULL, 0xfc2757d1f534ddc0ULL, 0xdb6295993c439041ULL,     \
      0xfe5163abdebbc561ULL, 0xb7246e3a424dd2e0ULL, 0x06492eea09d1921cULL, 0xfe1deb1cb129a73eULL, \
      0xe88235f52ebb4484ULL, 0xe99c7026b45f7e41ULL, 0x3991d639835339f4ULL, 0x9c845f8bbdf9283bULL, \
      0x1ff897ffde05980fULL, 0xef2f118b5a0a6d1fULL, 0x6d367ecf27cb09b7ULL, 0x4f463f669e5fea2dULL, \
      0x7527bac7ebe5f17bULL, 0x3d0739f78a5292eaULL, 0x6bfb5fb11f8d5d08ULL, 0x56033046fc7b6babULL

static const uint64_t dual_trig_2opi_host[DUAL_TRIG_2OPI_N] = {DUAL_TRIG_2OPI_WORDS};
#if defined(__CUDACC__)
static __device__ const uint64_t dual_trig_2opi_dev[DUAL_TRIG_2OPI_N] = {DUAL_TRIG_2OPI_WORDS};
#endif

DUAL_INLINE uint64_t dual_trig_2opi(int i) {
#if defined(__CUDA_ARCH__)
  return dual_trig_2opi_dev[i];
#else
  return dual_trig_2opi_host[i];
#endif
}

/* a * b = hi 2^64 + lo, exactly. */
DUAL_INLINE void dual_trig_mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__CUDA_ARCH__)
  *hi = (uint64_t)__umul64hi((unsigned long long)a, (unsigned long long)b);
#elif defined(__SIZEOF_INT128__)
  __extension__ unsigned __int128 p = (unsigned __int128)a * b;
  *hi = (uint64_t)(p >> 64);
#else
  uint64_t al = a & 0xFFFFFFFFu, ah = a >> 32, bl = b & 0xFFFFFFFFu, bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
  *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
  *lo = a * b;
}

/* Payne–Hanek: for finite ax >= 2^20, ax = k pi/2 + rh + rl with |rh + rl| <= pi/4, to a relative
 * error below 2^-100 (|ax - k pi/2| > 2^-62 for every double).  Returns k mod 4.
 * ax = m 2^e; only the bits of 2/pi of weight 2^-(e-1) .. 2^-(e+190) matter: the higher ones
 * give multiples of 4 quadrants, the lower ones less than 2^-137.  m times that 192-bit window,
 * modulo 2^192, is x 2/pi mod 4 in units of 2^-190.  The result comes back by value: through
 * pointers, the GPU compiler keeps it in local memory, and the wait for that memory at the
 * paths' merge holds up every small argument too (it shares the loads' scoreboard). */
typedef struct dual_trig_big {
  double rh, rl;
  int k;
} dual_trig_big;
DUAL_TRIG_COLD dual_trig_big dual_trig_reduce_big(double ax) {
  dual_trig_big r;
  uint64_t u = dual_bits(ax);
  uint64_t m = (u & 0x000FFFFFFFFFFFFFULL) | 0x0010000000000000ULL;
  int e = (int)(u >> 52) - 1075;
  int q = e + 62; /* index of bit 2^-(e-1) of 2/pi in the padded table, 30 .. 1033 */
  int wi = q >> 6, sh = q & 63;
  uint64_t a0 = dual_trig_2opi(wi), a1 = dual_trig_2opi(wi + 1);
  uint64_t a2 = dual_trig_2opi(wi + 2), a3 = dual_trig_2opi(wi + 3);
  /* (x >> 1) >> (63 - sh) is x >> (64 - sh), and 0 when sh = 0 */
  uint64_t w0 = (a0 << sh) | ((a1 >> 1) >> (63 - sh));
  uint64_t w1 = (a1 << sh) | ((a2 >> 1) >> (63 - sh));
  uint64_t w2 = (a2 << sh) | ((a3 >> 1) >> (63 - sh));
  uint64_t h1, l1, h2, l2;
  dual_trig_mul64(m, w2, &h2, &l2);
  dual_trig_mul64(m, w1, &h1, &l1);
  uint64_t p2 = l2;
  uint64_t p1 = h2 + l1;
  uint64_t p0 = h1 + m * w0 + (uint64_t)(p1 < l1);
  /* fraction bits, as a signed 192-bit fixed-point number in [-1/2, 1/2) */
  uint64_t f0 = (p0 << 2) | (p1 >> 62), f1 = (p1 << 2) | (p2 >> 62), f2 = p2 << 2;
  int neg = (int)(f0 >> 63);
  int k = ((int)(p0 >> 62) + neg) & 3;
  if (neg) { /* negate the 192-bit number */
    f0 = ~f0;
    f1 = ~f1;
    f2 = ~f2 + 1u;
    f1 += (uint64_t)(f2 == 0);
    f0 += (uint64_t)(f1 == 0 && f2 == 0);
  }
  int s = 0;
  if (f0 == 0) {
    f0 = f1;
    f1 = f2;
    f2 = 0;
    s = 64;
  }
  if (f0 == 0) { /* cannot happen for a double; kept for safety */
    r.rh = 0.0, r.rl = 0.0, r.k = k;
    return r;
  }
  int lz = DUAL_TRIG_CLZ64(f0);
  f0 = (f0 << lz) | ((f1 >> 1) >> (63 - lz));
  f1 = (f1 << lz) | ((f2 >> 1) >> (63 - lz));
  s += lz;
  /* |f| = fh + fl: the top 53 and the next 53 bits (both conversions exact) */
  double fh = (double)(f0 >> 11) * dual_pow2i(-53 - s);
  double fl = (double)(((f0 << 53) >> 11) | (f1 >> 22)) * dual_pow2i(-106 - s);
  /* r = f pi/2: exact product fh * PIO2_HI (Veltkamp/Dekker), the rest in double */
  const double PIO2_HI = 0x1.921fb54442d18p0, PIO2_LO = 0x1.1a62633145c07p-54;
  const double PIO2_HI_H = 0x1.921fb58p0, PIO2_HI_L = -0x1.dde974p-27; /* 26 + 23 bits */
  double c = 0x1.0000002p27 * fh; /* 2^27 + 1 */
  double fhh = c - (c - fh);
  double fhl = fh - fhh;
  double ph = fh * PIO2_HI;
  double pe = (((fhh * PIO2_HI_H - ph) + fhh * PIO2_HI_L) + fhl * PIO2_HI_H) + fhl * PIO2_HI_L;
  double pl = pe + (fh * PIO2_LO + fl * PIO2_HI);
  double h = ph + pl;
  double l = pl - (h - ph);
  r.rh = neg ? -h : h;
  r.rl = neg ? -l : l;
  r.k = k;
  return r;
}

/* |x| = k pi/2 + rh + rl for ax < 2^20 (Cody–Waite): k mod 4 returned. */
DUAL_INLINE int dual_trig_reduce_cw(double ax, double *rh, double *rl) {
  /* Cody–Waite: pi/2 = PIO2_1 + PIO2_2 + PIO2_3 + PIO2_4 + O(2^-160); the first three have 33
   * bits, so k * PIO2_i is exact for k < 2^20, and ax - k PIO2_1 is exact (Sterbenz). */
  const double INVPIO2 = 0x1.45f306dc9c883p-1;
  const double PIO2_1 = 0x1.921fb544p0, PIO2_2 = 0x1.0b4611a6p-34;
  const double PIO2_3 = 0x1.3198a2ep-69, PIO2_4 = 0x1.b839a252049c1p-104;
  double kd = (ax * INVPIO2 + 0x1.8p52) - 0x1.8p52;
  double t = ax - kd * PIO2_1;
  double p2 = kd * PIO2_2, p3 = kd * PIO2_3;
  /* s1 + e1 = t - p2 and s2 + e2 = s1 - p3 exactly (2Sum) */
  double s1 = t - p2;
  double b1 = s1 - t;
  double e1 = (t - (s1 - b1)) - (p2 + b1);
  double s2 = s1 - p3;
  double b2 = s2 - s1;
  double e2 = (s1 - (s2 - b2)) - (p3 + b2);
  double tail = (e1 + e2) - kd * PIO2_4;
  double h = s2 + tail;
  *rh = h;
  *rl = tail - (h - s2);
  return (int)kd & 3;
}

/* For finite ax >= 0: ax = k pi/2 + rh + rl, |rh + rl| <= pi/4 + 2^-30, |rl| <= ulp(rh) / 2,
 * relative error below 2^-70.  Returns k mod 4. */
#if defined(DUAL_FN_JIT_CPU) && !defined(__CUDACC__)
/* The CPU compiled tier's code: the huge-argument reduction as three SIMD clones (a clone returns
 * one scalar), each handed the Cody–Waite figure and giving it back where ax < 2^20 — a compare a
 * lane — and the exact reduction's above, so that a point loop over sin, cos and tan vectorizes
 * (a branch around the out-of-line reduction keeps it scalar with gcc 12).  The same arithmetic
 * as below, lane by lane. */
/* c ? a : b for c 0 or 1, as bit masks (with two of sin, cos, tan in one loop, gcc 12 turns ?:
 * between their large operands into branches it then cannot if-convert) */
#define DUAL_TRIG_PICK(c, a, b)                                                                    \
  dual_from_bits((dual_bits(a) & (0 - (uint64_t)(c))) | (dual_bits(b) & ((uint64_t)(c) - 1)))
#pragma omp declare simd notinbranch
static __attribute__((noinline, unused)) double dual_trig_big_rh(double ax, double rh) {
  return ax < 0x1p20 ? rh : dual_trig_reduce_big(ax).rh;
}
#pragma omp declare simd notinbranch
static __attribute__((noinline, unused)) double dual_trig_big_rl(double ax, double rl) {
  return ax < 0x1p20 ? rl : dual_trig_reduce_big(ax).rl;
}
/* (k travels as a double: a clone of an int function has twice the lanes of the double ones,
 * and the loop could not call it) */
#pragma omp declare simd notinbranch
static __attribute__((noinline, unused)) double dual_trig_big_k(double ax, double k) {
  return ax < 0x1p20 ? k : (double)dual_trig_reduce_big(ax).k;
}
DUAL_INLINE int dual_trig_reduce(double ax, double *rh, double *rl) {
  double h, l;
  const int k = dual_trig_reduce_cw(DUAL_TRIG_PICK(ax < 0x1p20, ax, 0.0), &h, &l);
  *rh = dual_trig_big_rh(ax, h);
  *rl = dual_trig_big_rl(ax, l);
  return (int)dual_trig_big_k(ax, (double)k);
}
#else
#define DUAL_TRIG_PICK(c, a, b) ((c) ? (a) : (b))
DUAL_INLINE int dual_trig_reduce(double ax, double *rh, double *rl) {
  if (!(ax < 0x1p20)) {
    const dual_trig_big b = dual_trig_reduce_big(ax);
    *rh = b.rh;
    *rl = b.rl;
    return b.k;
  }
  return dual_trig_reduce_cw(ax, rh, rl);
}
#endif

/* rh^2 = z + zl exactly (Veltkamp split of rh, Dekker's product); shared by the sin and cos
 * kernels (computed once in dual_sincos after common-subexpression elimination). */
DUAL_INLINE void dual_trig_sq(double rh, double *hh, double *hl, double *z, double *zl) {
  double c = 0x1.0000002p27 * rh; /* 2^27 + 1 */
  double h = c - (c - rh);
  double l = rh - h;
  double q = rh * rh;
  *hh = h;
  *hl = l;
  *z = q;
  *zl = ((h * h - q) + 2.0 * h * l) + l * l;
}

/* The two big terms of an odd kernel, rh + c0 rh^3 = s + e exactly plus the small error terms
 * ve (of rh^3 = v + ve) and ae (of c0 v, Dekker's product with c0 = c0h + c0l, 26 + 26 bits),
 * for |c0 rh^2| < 1 (Fast2Sum).  (hh, hl, z, zl) come from dual_trig_sq(rh). */
typedef struct dual_trig_cube {
  double v, ve, ae, s, e;
} dual_trig_cube;
DUAL_INLINE dual_trig_cube dual_trig_cube_term(double rh, double hh, double hl, double z,
                                               double zl, double c0, double c0h, double c0l) {
  dual_trig_cube c;
  c.v = z * rh; /* rh^3 = v + ve */
  double cz = 0x1.0000002p27 * z;
  double zh = cz - (cz - z);
  double zt = z - zh;
  c.ve = ((((zh * hh - c.v) + zh * hl) + zt * hh) + zt * hl) + zl * rh;
  double a = c.v * c0; /* c0 v = a + ae */
  double cv = 0x1.0000002p27 * c.v;
  double vh = cv - (cv - c.v);
  double vt = c.v - vh;
  c.ae = (((vh * c0h - a) + vh * c0l) + vt * c0h) + vt * c0l;
  c.s = rh + a; /* rh + a = s + e (Fast2Sum, |a| < |rh|) */
  c.e = a - (c.s - rh);
  return c;
}

/* sin(rh + rl) for |rh| <= pi/4 + 2^-30, |rl| <= ulp(rh).  The big terms rh + S0 rh^3 are
 * summed exactly (rh^3 as a double-double, S0 rh^3 by Dekker's product), so the error is the
 * final rounding plus ~2^-60 relative. */
DUAL_INLINE double dual_trig_sin_k(double rh, double rl) {
  const double S0 = -0x1.5555555555555p-3, S1 = 0x1.1111111111068p-7;
  const double S2 = -0x1.a01a019ffe08bp-13, S3 = 0x1.71de3a332c25bp-19;
  const double S4 = -0x1.ae642b992999ep-26, S5 = 0x1.61093a08083b2p-33;
  const double S6 = -0x1.9fb672f0d00bap-41;
  const double S0H = -0x1.5555558p-3, S0L = 0x1.5555558p-30; /* S0 = S0H + S0L, 26 + 26 bits */
  double hh, hl, z, zl;
  dual_trig_sq(rh, &hh, &hl, &z, &zl);
  double z2 = z * z;
  double p = (S1 + z * S2) + z2 * ((S3 + z * S4) + z2 * (S5 + z * S6));
  const dual_trig_cube c = dual_trig_cube_term(rh, hh, hl, z, zl, S0, S0H, S0L);
  /* sin(rh + rl) = rh + rh^3 (S0 + z p) + rl (1 - rh^2/2) + O(2^-60 |rh|) */
  return c.s + (c.e + ((c.ae + c.ve * S0) + (c.v * (z * p) + (rl - (0.5 * z) * rl))));
}

/* cos(rh + rl) for |rh| <= pi/4 + 2^-30, |rl| <= ulp(rh). */
DUAL_INLINE double dual_trig_cos_k(double rh, double rl) {
  const double C0 = 0x1.555555555554bp-5, C1 = -0x1.6c16c16c15015p-10;
  const double C2 = 0x1.a01a019c8f254p-16, C3 = -0x1.27e4f7f19148dp-22;
  const double C4 = 0x1.1ee9dbcefc08cp-29, C5 = -0x1.8fa6848759c75p-37;
  double hh, hl, z, zl;
  dual_trig_sq(rh, &hh, &hl, &z, &zl);
  double z2 = z * z;
  /* rh^4 C(rh^2), with the leading rh^4 from z + zl: its relative error shows at 0.03 ulp */
  double p = (z2 + 2.0 * z * zl) * ((C0 + z * C1) + z2 * ((C2 + z * C3) + z2 * (C4 + z * C5)));
  double hz = 0.5 * z;
  double w = 1.0 - hz;
  /* cos(rh + rl) = 1 - rh^2/2 + rh^4 C(rh^2) - rl sin(rh), sin(rh) = rh (1 - rh^2/6) + O(rh^5);
   * (1 - w) - hz is the rounding error of w */
  return w + ((((1.0 - w) - hz) - 0.5 * zl) + (p - (rh * rl) * (1.0 - 0x1.5555555555555p-3 * z)));
}

/* Low 32 bits of the significand cleared: products of two such numbers are exact. */
DUAL_INLINE double dual_trig_trunc32(double x) {
  return dual_from_bits(dual_bits(x) & 0xFFFFFFFF00000000ULL);
}

/* (nh + nl) / (dh + dl) for double-doubles, one rounding plus ~2^-70: one division; the quotient
 * qt truncated to 21 bits makes nh - qt dh exact, and the remainder corrects it. */
DUAL_INLINE double dual_trig_div_dd(double nh, double nl, double dh, double dl) {
  double rd = 1.0 / dh;
  double qt = dual_trig_trunc32(nh * rd);
  double dt = dual_trig_trunc32(dh);
  double r = (((nh - qt * dt) - qt * (dh - dt)) + nl) - qt * dl;
  return qt + r * rd;
}

/* tan(rh + rl) (odd = 0) or -1/tan(rh + rl) (odd = 1) for |rh| <= pi/4 + 2^-30, |rl| <= ulp(rh).
 * Above |rh| = 0.55, tan(pi/4 - y) = (1 - tan y) / (1 + tan y) keeps the polynomial short.
 * tan of the (reduced) argument is formed as a double-double like sin: rh + T0 rh^3 exactly. */
DUAL_INLINE double dual_trig_tan_k(double rh, double rl, int odd) {
  const double T0 = 0x1.5555555555554p-2, T1 = 0x1.111111111135dp-3;
  const double T2 = 0x1.ba1ba1b9ef8d2p-5, T3 = 0x1.664f488ffdb62p-6;
  const double T4 = 0x1.226e330b61f66p-7, T5 = 0x1.d6d4558da2da8p-9;
  const double T6 = 0x1.7d9991271fe8fp-10, T7 = 0x1.35d6850575fabp-11;
  const double T8 = 0x1.ecdd588bab9f4p-13, T9 = 0x1.c88cc0f437755p-14;
  const double T10 = 0x1.273b5fb43f261p-16, T11 = 0x1.3823afe65f5f8p-15;
  const double T0H = 0x1.5555558p-2, T0L = -0x1.555556p-29; /* T0 = T0H + T0L, 26 + 26 bits */
  const double PIO4_HI = 0x1.921fb54442d18p-1, PIO4_LO = 0x1.1a62633145c07p-55;
  int big = !(rh < 0.55 && rh > -0.55);
  double sgn = 1.0;
  if (big) { /* y = pi/4 - |r|, in [-2^-30, 0.236]; PIO4_HI - |rh| is exact (Sterbenz) */
    if (rh < 0.0) {
      rh = -rh;
      rl = -rl;
      sgn = -1.0;
    }
    double yh = PIO4_HI - rh;
    double yl = PIO4_LO - rl;
    rh = yh + yl;
    rl = yl - (rh - yh);
  }
  double hh, hl, z, zl;
  dual_trig_sq(rh, &hh, &hl, &z, &zl);
  double z2 = z * z;
  double z4 = z2 * z2;
  double q = ((T1 + z * T2) + z2 * (T3 + z * T4)) +
             z4 * (((T5 + z * T6) + z2 * (T7 + z * T8)) + z4 * ((T9 + z * T10) + z2 * T11));
  const dual_trig_cube c = dual_trig_cube_term(rh, hh, hl, z, zl, T0, T0H, T0L);
  const double s = c.s;
  /* tan(rh + rl) = rh + rh^3 (T0 + z q(z)) + rl sec^2(rh), sec^2 = 1 + z + 2/3 z^2 + O(z^3) */
  double rest = c.e + ((c.ae + c.ve * T0) + (z * (c.v * q) + (rl + (z + 0x1.5555555555555p-1 * z2) * rl)));
  double wh = s + rest;
  if (!big && !odd) return wh;
  double wl = rest - (wh - s);
  double nh, nl, dh, dl;
  if (!big) { /* -1 / w */
    nh = -1.0;
    nl = 0.0;
    dh = wh;
    dl = wl;
  } else { /* 1 - w and 1 + w (|w| < 1/4: Fast2Sum) */
    double mh = 1.0 - wh;
    double ml = ((1.0 - mh) - wh) - wl;
    double ph = 1.0 + wh;
    double pl = ((1.0 - ph) + wh) + wl;
    if (odd) { /* -cot(pi/4 - y) = -(1 + w) / (1 - w) */
      nh = -ph;
      nl = -pl;
      dh = mh;
      dl = ml;
    } else {
      nh = mh;
      nl = ml;
      dh = ph;
      dl = pl;
    }
  }
  return sgn * dual_trig_div_dd(nh, nl, dh, dl);
}

/* -r when bit 0 of f is set, r otherwise, without a branch. */
DUAL_INLINE double dual_trig_flip(double r, uint64_t f) {
  return dual_from_bits(dual_bits(r) ^ (f << 63));
}

/* A NaN or infinite argument: elsewhere the functions return x - x first; in the CPU compiled
 * tier's code it goes through the reduction as 0 and x - x is chosen at the end (a branch around
 * the reduction's clone calls keeps the point loop scalar).  The same results either way. */
#if defined(DUAL_FN_JIT_CPU) && !defined(__CUDACC__)
#define DUAL_TRIG_ARG(x, xs)                                                                       \
  const int fin_ = fabs(x) <= 0x1.fffffffffffffp1023;                                              \
  const double xs = DUAL_TRIG_PICK(fin_, (x), 0.0);
#define DUAL_TRIG_RESULT(x, r) DUAL_TRIG_PICK(fin_, (r), (x) - (x))
#else
#define DUAL_TRIG_ARG(x, xs)                                                                       \
  if (!(fabs(x) <= 0x1.fffffffffffffp1023)) return (x) - (x); /* NaN, +-inf -> NaN */            \
  const double xs = (x);
#define DUAL_TRIG_RESULT(x, r) (r)
#endif

DUAL_FN double dual_sin(double x) {
  DUAL_TRIG_ARG(x, xs)
  double rh, rl;
  int k = dual_trig_reduce(fabs(xs), &rh, &rl);
  double r = DUAL_TRIG_PICK(k & 1, dual_trig_cos_k(rh, rl), dual_trig_sin_k(rh, rl));
  /* sin(-x) = -sin(x): the sign of x (also of -0) flips the quadrant's sign */
  return DUAL_TRIG_RESULT(x, dual_trig_flip(r, (uint64_t)(k >> 1) ^ (dual_bits(xs) >> 63)));
}

DUAL_FN double dual_cos(double x) {
  DUAL_TRIG_ARG(x, xs)
  double rh, rl;
  int k = dual_trig_reduce(fabs(xs), &rh, &rl);
  double r = DUAL_TRIG_PICK(k & 1, dual_trig_sin_k(rh, rl), dual_trig_cos_k(rh, rl));
  return DUAL_TRIG_RESULT(x, dual_trig_flip(r, (uint64_t)((k + 1) >> 1)));
}

/* sin and cos of one argument, one reduction; bitwise equal to dual_sin(x) and dual_cos(x). */
#if defined(DUAL_FN_JIT_CPU) && defined(DUAL_FN_OUTLINE) && !defined(__CUDACC__) && (defined(__GNUC__) || defined(__clang__))
/* (a SIMD clone returns one scalar: the two clones) */
DUAL_INLINE void dual_sincos(double x, double *s, double *c) {
  *s = dual_sin(x);
  *c = dual_cos(x);
}
#else
DUAL_FN void dual_sincos(double x, double *s, double *c) {
#if defined(DUAL_FN_JIT_CPU) && !defined(__CUDACC__)
  const int fin_ = fabs(x) <= 0x1.fffffffffffffp1023;
  const double xs = DUAL_TRIG_PICK(fin_, x, 0.0);
#else
  if (!(fabs(x) <= 0x1.fffffffffffffp1023)) {
    *s = x - x;
    *c = x - x;
    return;
  }
  const double xs = x;
#endif
  double rh, rl;
  int k = dual_trig_reduce(fabs(xs), &rh, &rl);
  double sk = dual_trig_sin_k(rh, rl);
  double ck = dual_trig_cos_k(rh, rl);
  double sr = DUAL_TRIG_PICK(k & 1, ck, sk);
  double cr = DUAL_TRIG_PICK(k & 1, sk, ck);
  *s = DUAL_TRIG_RESULT(x, dual_trig_flip(sr, (uint64_t)(k >> 1) ^ (dual_bits(xs) >> 63)));
  *c = DUAL_TRIG_RESULT(x, dual_trig_flip(cr, (uint64_t)((k + 1) >> 1)));
}
#endif

DUAL_FN double dual_tan(double x) {
  DUAL_TRIG_ARG(x, xs)
  double rh, rl;
  int k = dual_trig_reduce(fabs(xs), &rh, &rl);
  double r = dual_trig_tan_k(rh, rl, k & 1);
  return DUAL_TRIG_RESULT(x, dual_trig_flip(r, dual_bits(xs) >> 63));
}

#endif /* DUAL_FN_TRIG_H */
