/*
 * vec_small.h — the solvers' vector tests, written once for the CPU and the GPU (DUAL_INLINE):
 * finiteness and the 2-norm of n entries at stride s (entry j of v at v[j * s]), in a fixed order,
 * so that a point's results are the same bits on every thread, chunk and device.
 */
#ifndef DUAL_VEC_SMALL_H
#define DUAL_VEC_SMALL_H

#include "dual/portable.h"

/* 1 when the n entries v[j * s] are finite (no early exit: a loop the compiler vectorizes, and a
 * straight one where a GPU lane runs it). */
DUAL_INLINE int dual_sv_finite(const double *v, int64_t n, int64_t s) {
  int ok = 1;
  for (int64_t j = 0; j < n; ++j) ok &= fabs(v[j * s]) <= DBL_MAX;
  return ok;
}

/* Where ||v||_2 may be taken as the square root of the plain sum of squares: the largest
 * magnitude amax in [2^-500, 2^500] (no overflow; what underflows is below rounding). */
DUAL_INLINE int dual_sv_plain_range(double amax, int n) {
  return amax >= 0x1p-500 && amax <= 0x1p500 && n < (1 << 20);
}

/* The sum of squares of the n entries v[j * s] in the order of a group of DUAL_SV_LANES GPU lanes:
 * entry j goes to partial j mod DUAL_SV_LANES (j ascending), then the partials are added in a
 * pairwise tree, p[l] += p[l + h] for h = DUAL_SV_LANES / 2, ..., 1 — what butterfly shuffles of
 * the lanes' partials give on every lane (kernels/newton_kernels.cu), so that CPU, GPU thread and
 * GPU group give the same bits. */
#define DUAL_SV_LANES 16
DUAL_INLINE double dual_sv_sumsq(const double *v, int n, int64_t s) {
  double p[DUAL_SV_LANES];
  int m = n < DUAL_SV_LANES ? n : DUAL_SV_LANES; /* the partials that may be nonzero */
  if (m <= 0) return 0.0;
  for (int l = 0; l < m; ++l) p[l] = v[l * s] * v[l * s];
  for (int j = DUAL_SV_LANES; j < n; ++j) p[j % DUAL_SV_LANES] += v[j * s] * v[j * s];
  /* the tree; adding a partial that is +0 (past m) changes nothing, so those adds are skipped:
   * the first level that adds anything is the largest power of two h < m */
  int h = 1;
  while (2 * h < m) h *= 2;
  for (; h > 0; h >>= 1) {
    for (int l = 0; l + h < m; ++l) p[l] += p[l + h];
    m = h;
  }
  return p[0];
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
  if (dual_sv_plain_range(amax, n)) {
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

/* ||v||_2 as dual_sv_norm, its plain sum in dual_sv_sumsq's order (the Newton solver's norm). */
DUAL_INLINE double dual_sv_norm_lanes(const double *v, int n, int64_t s) {
  double amax = 0.0;
  for (int j = 0; j < n; ++j) {
    const double a = fabs(v[j * s]);
    amax = a > amax ? a : amax;
  }
  return dual_sv_plain_range(amax, n) ? sqrt(dual_sv_sumsq(v, n, s)) : dual_sv_norm(v, n, s);
}

#endif /* DUAL_VEC_SMALL_H */
