/*
 * op_sampling.h — the random-point helpers of the per-op suites (test_conformance.c,
 * test_rules2.c): a splitmix64 stream and the uniform, log-uniform and near-a-point draws they
 * build each op's strata from.  Header-only (static inline).
 */
#ifndef DUAL_OP_SAMPLING_H
#define DUAL_OP_SAMPLING_H

#include <math.h>
#include <stdint.h>

typedef struct rng {
  uint64_t s;
} rng;
static inline uint64_t next64(rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline double u01(rng *r) { return (double)(next64(r) >> 11) * 0x1p-53; }
static inline int below(rng *r, int n) { return (int)(u01(r) * n); }
static inline double unif(rng *r, double lo, double hi) { return lo + (hi - lo) * u01(r); }
static inline double sgn(rng *r) { return (next64(r) & 1) ? -1.0 : 1.0; }
/* log-uniform magnitude in [lo, hi] (lo > 0) */
static inline double logu(rng *r, double lo, double hi) {
  return exp(log(lo) + (log(hi) - log(lo)) * u01(r));
}
static inline double slogu(rng *r, double lo, double hi) { return sgn(r) * logu(r, lo, hi); }
/* p moved toward dir (+1 / -1) by a log-uniform relative amount in [lo, hi]; never p itself */
static inline double near(rng *r, double p, double dir, double lo, double hi) {
  double x = p + dir * logu(r, lo, hi) * fmax(1.0, fabs(p));
  if (x == p) x = nextafter(p, dir * INFINITY);
  return x;
}
static inline double pick(rng *r, const double *v, int n) { return v[below(r, n)]; }

#endif /* DUAL_OP_SAMPLING_H */
