/*
 * vec_small.h — the solvers' vector tests, written once for the CPU and the GPU (DUAL_INLINE):
 * finiteness and the 2-norm of n entries at stride s (entry j of v at v[j * s]), in a fixed order,
 * so that a point's results are the same bits on every thread, chunk and device.
 */
#ifndef DUAL_VEC_SMALL_H
#define DUAL_VEC_SMALL_H

#include "dual/portable.h"

/* 1 when the n entries v[j * s] are finite. */
DUAL_INLINE int dual_sv_finite(const double *v, int64_t n, int64_t s) {
  for (int64_t j = 0; j < n; ++j)
    if (!(fabs(v[j * s]) <= DBL_MAX)) return 0;
  return 1;
}

/* ||v||_2 of the n entries v[j * s] in a fixed order: the plain sum of squares where the largest
 * magnitude lies in [2^-500, 2^500] (no overflow; what underflows is below rounding), else by
 * scaled sums of squares (no overflow for finite v).  The plain sum has no division per entry,
 * which matters where a GPU lane runs it for a whole group. */
DUAL_INLINE double dual_sv_norm(const double *v, int n, int64_t s) {
  double amax = 0.0;
  for (int j = 0; j < n; ++j) {
    const double a = fabs(v[j * s]);
    amax = a > amax ? a : amax;
  }
  if (amax >= 0x1p-500 && amax <= 0x1p500 && n < (1 << 20)) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j) sum += v[j * s] * v[j * s];
    return sqrt(sum);
  }
  double scale = 0.0, ssq = 1.0;
  for (int j = 0; j < n; ++j) {
    const double a = fabs(v[j * s]);
    if (a == 0.0) continue;
    if (a > scale) {
      const double r = scale / a;
      ssq = 1.0 + ssq * r * r;
      scale = a;
    } else {
      const double r = a / scale;
      ssq += r * r;
    }
  }
  return scale * sqrt(ssq);
}

#endif /* DUAL_VEC_SMALL_H */
