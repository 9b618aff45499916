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
 * root (the compiled tier computes each pair once) — with the library's own log and sincos
 * (fn.h) and IEEE sqrt, so every engine rounds identically.  Valid C11 and CUDA.  Tests:
 * tests/test_random.c (Random123 known answers, moments, KS, stream independence).
 */
#ifndef DUAL_RANDOM_H
#define DUAL_RANDOM_H

#include "portable.h" /* first: math.h, stdint.h */
#include "fn.h"

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
  return ((double)x + 0.5) * 0x1p-52;
}

/* A uniform draw strictly inside (0, 1). */
DUAL_INLINE double dual_draw_uniform(uint64_t seed, int64_t point, int64_t sample, int32_t draw) {
  uint32_t b[4];
  dual_draw_bits(seed, point, sample, draw, b);
  return dual_bits_to_unit(b[0], b[1]);
}

/* The standard normal draws 2 pair (z[0], Box–Muller's cosine branch) and 2 pair + 1 (z[1], its
 * sine branch), always finite (u1 > 0, |z| < 8.7). */
DUAL_INLINE void dual_draw_normal_pair(uint64_t seed, int64_t point, int64_t sample, int32_t pair,
                                       double z[2]) {
  uint32_t b[4];
  dual_draw_block(seed, point, sample, DUAL_DRAW_NORMAL_BLOCK(pair), b);
  const double u1 = dual_bits_to_unit(b[0], b[1]), u2 = dual_bits_to_unit(b[2], b[3]);
  const double r = sqrt(-2.0 * dual_log(u1));
  double sn, cs;
  dual_sincos(6.283185307179586 * u2, &sn, &cs);
  z[0] = r * cs, z[1] = r * sn;
}

/* Standard normal draw `draw`: its pair's member. */
DUAL_INLINE double dual_draw_normal(uint64_t seed, int64_t point, int64_t sample, int32_t draw) {
  double z[2];
  dual_draw_normal_pair(seed, point, sample, draw >> 1, z);
  return z[draw & 1];
}

#endif /* DUAL_RANDOM_H */
