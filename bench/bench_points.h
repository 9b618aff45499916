/*
 * bench_points.h — the benchmark's point generators (BENCHMARKS.md "Points") and their portable
 * RNG: splitmix64 for uniforms, Box–Muller for normals, so every machine and every tool sees the
 * same points for a given seed.  Used by the CPU and GPU harnesses (bench_*.c).
 */
#ifndef DUAL_BENCH_POINTS_H
#define DUAL_BENCH_POINTS_H

#include <stdint.h>

typedef struct bench_rng {
  uint64_t state;
  double spare; /* second Box–Muller normal, valid when has_spare */
  int has_spare;
} bench_rng;

void bench_rng_seed(bench_rng *rng, uint64_t seed);
uint64_t bench_rng_next(bench_rng *rng); /* splitmix64 */
double bench_rng_uniform(bench_rng *rng); /* [0, 1), 53 random bits */
double bench_rng_normal(bench_rng *rng);  /* N(0, 1) */

/* ba: x [B][15] = (cam[11], X[3], w) all N(0,1), then X2 += 10 and w = 1; feat [B][2] N(0,1)
 * (x is drawn completely first, then feat). */
void bench_points_ba(int64_t B, uint64_t seed, double *x, double *feat);

/* kin: x [B][32], x_i = 0.5 + U(0,1). */
void bench_points_kin(int64_t B, uint64_t seed, double *x);

/* hess: x [B][16], all N(0,1). */
void bench_points_hess(int64_t B, uint64_t seed, double *x);

/* grad (n = 1024) and its smaller sizes (the crossover study): x [B][n], all N(0,1). */
void bench_points_grad(int64_t B, int32_t n, uint64_t seed, double *x);

#endif /* DUAL_BENCH_POINTS_H */
