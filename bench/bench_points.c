/*
 * bench_points.c — splitmix64 + Box–Muller and the ba/kin/hess/grad point generators of
 * BENCHMARKS.md.
 * Plain C11 and libm only, so the points are the same on every platform for a given seed.
 */
#include "bench_points.h"

#include <math.h>

void bench_rng_seed(bench_rng *rng, uint64_t seed) {
  rng->state = seed;
  rng->spare = 0.0;
  rng->has_spare = 0;
}

uint64_t bench_rng_next(bench_rng *rng) {
  uint64_t z = (rng->state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double bench_rng_uniform(bench_rng *rng) {
  return (double)(bench_rng_next(rng) >> 11) * 0x1.0p-53;
}

double bench_rng_normal(bench_rng *rng) {
  if (rng->has_spare) {
    rng->has_spare = 0;
    return rng->spare;
  }
  const double two_pi = 6.283185307179586476925286766559;
  double u1 = (double)((bench_rng_next(rng) >> 11) + 1) * 0x1.0p-53; /* (0, 1]: log is finite */
  double u2 = bench_rng_uniform(rng);
  double r = sqrt(-2.0 * log(u1));
  rng->spare = r * sin(two_pi * u2);
  rng->has_spare = 1;
  return r * cos(two_pi * u2);
}

void bench_points_ba(int64_t B, uint64_t seed, double *x, double *feat) {
  bench_rng rng;
  bench_rng_seed(&rng, seed);
  for (int64_t i = 0; i < B * 15; ++i) x[i] = bench_rng_normal(&rng);
  for (int64_t b = 0; b < B; ++b) {
    x[b * 15 + 13] += 10.0; /* X2: points in front of the camera */
    x[b * 15 + 14] = 1.0;   /* w */
  }
  for (int64_t i = 0; i < B * 2; ++i) feat[i] = bench_rng_normal(&rng);
}

void bench_points_kin(int64_t B, uint64_t seed, double *x) {
  bench_rng rng;
  bench_rng_seed(&rng, seed);
  for (int64_t i = 0; i < B * 32; ++i) x[i] = 0.5 + bench_rng_uniform(&rng);
}

void bench_points_hess(int64_t B, uint64_t seed, double *x) {
  bench_rng rng;
  bench_rng_seed(&rng, seed);
  for (int64_t i = 0; i < B * 16; ++i) x[i] = bench_rng_normal(&rng);
}

void bench_points_grad(int64_t B, int32_t n, uint64_t seed, double *x) {
  bench_rng rng;
  bench_rng_seed(&rng, seed);
  for (int64_t i = 0; i < B * n; ++i) x[i] = bench_rng_normal(&rng);
}
