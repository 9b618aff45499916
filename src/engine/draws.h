/*
 * draws.h — the value of a program's random draw (ops RNORM, RUNIF) for one point and sample,
 * shared by the CPU and GPU engines so both produce the same bits.  Draw k of sample s at global
 * point b is dual/random.h's Philox stream keyed (seed, b, s, k).  Antithetic sampling pairs
 * samples 2j and 2j + 1: both read sample j's numbers, the second one mirrored (z -> -z,
 * u -> 1 - u).  Valid C11 and CUDA.
 */
#ifndef DUAL_ENGINE_DRAWS_H
#define DUAL_ENGINE_DRAWS_H

#include "dual/portable.h"
#include "dual/random.h"

/* The normal draws 2 pair and 2 pair + 1 at once (z[0], z[1]; dual/random.h computes them
 * together), antithetic mirroring included. */
DUAL_INLINE void dual_draw_normals(uint64_t seed, int64_t point, int64_t sample, int antithetic,
                                   int32_t pair, double z[2]) {
  dual_draw_normal_pair(seed, point, antithetic ? sample >> 1 : sample, pair, z);
  if (antithetic && (sample & 1)) z[0] = -z[0], z[1] = -z[1];
}

DUAL_INLINE double dual_draw_value(int normal, uint64_t seed, int64_t point, int64_t sample,
                                   int antithetic, int32_t draw) {
  if (normal) {
    double z[2];
    dual_draw_normals(seed, point, sample, antithetic, draw >> 1, z);
    return z[draw & 1];
  }
  const int64_t s = antithetic ? sample >> 1 : sample;
  const double u = dual_draw_uniform(seed, point, s, draw);
  return antithetic && (sample & 1) ? 1.0 - u : u;
}

#endif /* DUAL_ENGINE_DRAWS_H */
