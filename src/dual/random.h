/*
 * random.h — the counter-based random numbers of Monte-Carlo gradients: Philox-4x32-10 (Salmon,
 * Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC11; Random123), a pure
 * function of its key and counter, so every (point, sample, draw) gets its own stream with no
 * state to carry, and the CPU and GPU engines draw the same bits in any order or chunking.
 *
 * Keying of a block, dual_draw_block(seed, point, sample, c0):
 *   key     = { seed & 0xffffffff, seed >> 32 }
 *   counter = { c0, (uint32_t)sample, point & 0xffffffff, (uint64_t)point >> 32 }
 * The engines pass the global point index of the batch, so draws do not depend on chunking.
 * point uses all 64 bits; sample is used modulo 2^32.  A uniform draw k takes the block
 * c0 = k (dual_draw_bits; k < 2^31), and the normal draws 2j and 2j + 1 share the block
 * c0 = 2^31 + j: so no uniform and no other pair shares its bits.
 *
 * Uniforms take 53 bits (hi's 32 and lo's top 21) to the midpoint of their cell, strictly inside
 * (0, 1); a pair of normals is Box–Muller on the block's two such uniforms — draw 2j the cosine
 * branch, 2j + 1 the sine one, two independent N(0, 1) from one block, one log and one square
 * root (the compiled tier computes each pair once) — with a log of u1 and a sine and cosine of
 * 2 pi u2 of their own (dual_draw_log_unit, dual_draw_sincos2pi: a few ulp in plain double
 * arithmetic) and IEEE sqrt, so every engine rounds identically.  Valid C11 and CUDA.  Tests:
 * tests/test_random.c (Random123 known answers, moments, KS, stream independence).
 */
#ifndef DUAL_RANDOM_H
#define DUAL_RANDOM_H

#include "portable.h" /* first: math.h, stdint.h */
#include "fn_bits.h" /* dual_bits, dual_from_bits */

#define DUAL_PHILOX_M0 0xD2511F53u /* round multipliers */
#define DUAL_PHILOX_M1 0xCD9E8D57u
#define DUAL_PHILOX_W0 0x9E3779B9u /* Weyl key increments: golden ratio, sqrt(3) - 1 */
#define DUAL_PHILOX_W1 0xBB67AE85u

/* Philox-4x32-10: out = the 10-round bijection of ctr under key (out may not alias ctr). */
DUAL_INLINE void dual_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2],
                                    uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; ++r) {
    if (r) k0 += DUAL_PHILOX_W0, k1 += DUAL_PHILOX_W1; /* key bumped between rounds */
    uint64_t p0 = (uint64_t)DUAL_PHILOX_M0 * c0, p1 = (uint64_t)DUAL_PHILOX_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The 128 random bits of block (seed, point, sample, c0), keyed as in the header comment. */
DUAL_INLINE void dual_draw_block(uint64_t seed, int64_t point, int64_t sample, uint32_t c0,
                                 uint32_t out[4]) {
  uint64_t p = (uint64_t)point;
  uint32_t key[2], ctr[4];
  key[0] = (uint32_t)seed, key[1] = (uint32_t)(seed >> 32);
  ctr[0] = c0, ctr[1] = (uint32_t)(uint64_t)sample;
  ctr[2] = (uint32_t)p, ctr[3] = (uint32_t)(p >> 32);
  dual_philox4x32_10(ctr, key, out);
}

/* The bits of uniform draw `draw` (block c0 = draw). */
DUAL_INLINE void dual_draw_bits(uint64_t seed, int64_t point, int64_t sample, int32_t draw,
                                uint32_t out[4]) {
  dual_draw_block(seed, point, sample, (uint32_t)draw, out);
}

/* The block of the normal draws 2 pair and 2 pair + 1. */
#define DUAL_DRAW_NORMAL_BLOCK(pair) (0x80000000u | (uint32_t)(pair))

/* x = hi:lo's top 52 bits to (x + 1/2) 2^-52, in [2^-53, 1 - 2^-53]: every value is exact
 * (53 significant bits at most), strictly inside (0, 1), and 1 - u is exact and another value of
 * the same set (antithetic sampling mirrors u so). */
DUAL_INLINE double dual_bits_to_unit(uint32_t hi, uint32_t lo) {
  const uint64_t x = (uint64_t)hi << 20 | lo >> 12;
  /* (1 + x 2^-52) - 1 + 2^-53, each step exact: ((double)x + 0.5) 2^-52 without a conversion */
  return (dual_from_bits(0x3ff0000000000000ull | x) - 1.0) + 0x1p-53;
}

/* (double)v for |v| < 2^51, exactly, by the bits of 1.5 2^52 + v (whose ulp is 1): an integer
 * add and a subtraction instead of a conversion (a quarter of the FP64 rate on sm_90). */
DUAL_INLINE double dual_small_int_to_double(int64_t v) {
  return dual_from_bits(0x4338000000000000ull + (uint64_t)v) - 0x1.8p52;
}

/* A uniform draw strictly inside (0, 1). */
DUAL_INLINE double dual_draw_uniform(uint64_t seed, int64_t point, int64_t sample, int32_t draw) {
  uint32_t b[4];
  dual_draw_bits(seed, point, sample, draw, b);
  return dual_bits_to_unit(b[0], b[1]);
}

/* sin(2 pi u) and cos(2 pi u) of the uniform u = (x + 1/2) 2^-52 (x < 2^52, as
 * dual_bits_to_unit): u = j/8 + d exactly (j the nearest eighth, |d| <= 1/16), a = 2 pi d, the
 * Taylor polynomials of sin a and cos a to a^13 and a^14 (truncation below 2e-18 for
 * |a| <= pi/8), then a turn by j eighths: a few ulp, in plain double arithmetic so that every
 * engine rounds alike.  The draws need reproducible bits and normals exact to far below their
 * sampling error, not a correctly rounded sine: the library's dual_sincos (double-double, any
 * argument, 0.54 ulp) took 440 SASS instructions of a pair's 760 on sm_90. */
DUAL_INLINE void dual_draw_sincos2pi(uint64_t x, double *sn, double *cs) {
  const uint64_t j = (x + ((uint64_t)1 << 48)) >> 49; /* 0 .. 8 */
  const double d = (dual_small_int_to_double((int64_t)(x - (j << 49))) + 0.5) * 0x1p-52;
  const double a = d * 0x1.921fb54442d18p+2, a2 = a * a;
  const double s = a + a * a2 * (-0x1.5555555555555p-3 + a2 * (0x1.1111111111111p-7 +
                   a2 * (-0x1.a01a01a01a01ap-13 + a2 * (0x1.71de3a556c734p-19 +
                   a2 * (-0x1.ae64567f544e4p-26 + a2 * 0x1.6124613a86d09p-33)))));
  const double c = 1.0 + a2 * (-0.5 + a2 * (0x1.5555555555555p-5 + a2 * (-0x1.6c16c16c16c17p-10 +
                   a2 * (0x1.a01a01a01a01ap-16 + a2 * (-0x1.27e4fb7789f5cp-22 +
                   a2 * (0x1.1eed8eff8d898p-29 + a2 * -0x1.93974a8c07c9dp-37))))));
  const int odd = (int)(j & 1u), q = (int)((j >> 1) & 3u);
  const double h = 0x1.6a09e667f3bcdp-1; /* sqrt(1/2): an odd eighth turns by pi/4 first */
  const double c1 = odd ? (c - s) * h : c, s1 = odd ? (c + s) * h : s;
  *cs = q == 0 ? c1 : q == 1 ? -s1 : q == 2 ? -c1 : s1; /* then q quarter turns */
  *sn = q == 0 ? s1 : q == 1 ? c1 : q == 2 ? -s1 : -c1;
}

/* log(c) of the centres c = 1 + (2j + 1)/16 of dual_draw_log_unit, j = 0 .. 6, and 0 (j = 7:
 * centre 1), to 200 bits then rounded (mpmath). */
#define DUAL_DRAW_LOGC_VALUES                                                                    \
  0x1.f0a30c01162a6p-5, 0x1.5ff3070a793d4p-3, 0x1.1675cababa60ep-2, 0x1.739d7f6bbd007p-2,        \
      0x1.c8ff7c79a9a22p-2, 0x1.0be72e4252a83p-1, 0x1.307d7334f10bep-1, 0.0
DUAL_CONST_TABLE(dual_draw_logc, 8, DUAL_DRAW_LOGC_VALUES)
#define DUAL_DRAW_LOGC DUAL_TABLE(dual_draw_logc)

/* log(u) of a uniform u in [2^-53, 1) (dual_bits_to_unit: positive, normal, below 1): u = 2^k m,
 * m in [1, 2) against the centre c = 1 + (2j + 1)/16 of its eighth (j its top three bits; the
 * top eighth as m/2 against 1, so that u near 1 keeps its relative accuracy), s = (m - c)/(m + c)
 * (m - c exact), log(m/c) = 2 atanh(s) by its series to s^11 (|s| < 1/31: truncation below
 * 1e-19), then k ln2 + log(c) + 2 atanh(s).  A few ulp, plain double arithmetic, no special
 * cases: about a third of the instructions of the library's dual_log (0.5 ulp, any argument). */
DUAL_INLINE double dual_draw_log_unit(double u) {
  const uint64_t b = dual_bits(u);
  const int j = (int)(b >> 49) & 7, big = j == 7;
  const double k = dual_small_int_to_double((int64_t)(b >> 52) - 1023 + big);
  const double m = dual_from_bits((b & 0x000fffffffffffffull) | ((uint64_t)(1023 - big) << 52));
  const double c = dual_from_bits(0x3ff0000000000000ull | (big ? 0u : (uint64_t)(2 * j + 1) << 48));
  const double s = (m - c) / (m + c), z = s * s, s2 = 2.0 * s;
  const double t = s2 + s2 * z * (0x1.5555555555555p-2 + z * (0x1.999999999999ap-3 +
                   z * (0x1.2492492492492p-3 + z * (0x1.c71c71c71c71cp-4 + z * 0x1.745d1745d1746p-4))));
  /* ln2 = 0x1.62e42fefa38p-1 (42 bits: k times it is exact) + 0x1.ef35793c7673p-45 */
  return (k * 0x1.62e42fefa3800p-1 + DUAL_DRAW_LOGC[j]) + (t + k * 0x1.ef35793c76730p-45);
}

/* The standard normal draws 2 pair (z[0], Box–Muller's cosine branch) and 2 pair + 1 (z[1], its
 * sine branch), always finite (u1 > 0, |z| < 8.7). */
DUAL_INLINE void dual_draw_normal_pair(uint64_t seed, int64_t point, int64_t sample, int32_t pair,
                                       double z[2]) {
  uint32_t b[4];
  dual_draw_block(seed, point, sample, DUAL_DRAW_NORMAL_BLOCK(pair), b);
  const double u1 = dual_bits_to_unit(b[0], b[1]);
  const double r = sqrt(-2.0 * dual_draw_log_unit(u1));
  double sn, cs;
  dual_draw_sincos2pi((uint64_t)b[2] << 20 | b[3] >> 12, &sn, &cs);
  z[0] = r * cs, z[1] = r * sn;
}

/* Standard normal draw `draw`: its pair's member. */
DUAL_INLINE double dual_draw_normal(uint64_t seed, int64_t point, int64_t sample, int32_t draw) {
  double z[2];
  dual_draw_normal_pair(seed, point, sample, draw >> 1, z);
  return z[draw & 1];
}

#endif /* DUAL_RANDOM_H */
