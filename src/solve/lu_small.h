/*
 * lu_small.h — dense LU factorization with partial pivoting for the solvers' small per-point
 * systems, in place, one point per call.  Written once for the CPU and the GPU (DUAL_INLINE):
 * element (r, c) of A lives at A[r * rs + c * cs] and entry k of a vector at v[k * s], so the CPU
 * works on a point's contiguous row-major matrix (rs = n, cs = 1, s = 1) and a GPU thread on its
 * point's column of a batch stored element-major (rs = n K, cs = K, s = K for K points).  Plain
 * loops in a fixed order: a point's factors and solution are the same bits on every thread,
 * chunk and device.
 */
#ifndef DUAL_LU_SMALL_H
#define DUAL_LU_SMALL_H

#include "dual/portable.h"

/* dual_lu_factor's elimination, for a caller that has the singularity threshold tiny (n * eps *
 * max |A_ij| of a finite, nonzero A) already: the factors, the pivots and the result are
 * dual_lu_factor's. */
DUAL_INLINE int dual_lu_eliminate(double *A, int n, int64_t rs, int64_t cs, int32_t *piv, int64_t s,
                                  double tiny) {
  for (int k = 0; k < n; ++k) {
    int r = k;
    double best = fabs(A[k * rs + k * cs]);
    for (int i = k + 1; i < n; ++i) {
      const double a = fabs(A[i * rs + k * cs]);
      if (a > best) best = a, r = i;
    }
    piv[k * s] = r;
    if (best <= tiny) return 1;
    if (r != k)
      for (int j = 0; j < n; ++j) {
        const double t = A[k * rs + j * cs];
        A[k * rs + j * cs] = A[r * rs + j * cs];
        A[r * rs + j * cs] = t;
      }
    const double d = A[k * rs + k * cs];
    for (int i = k + 1; i < n; ++i) {
      const double l = A[i * rs + k * cs] / d;
      A[i * rs + k * cs] = l;
      if (l != 0.0)
        for (int j = k + 1; j < n; ++j) A[i * rs + j * cs] -= l * A[k * rs + j * cs];
    }
  }
  return 0;
}

/* Factor the n x n matrix A as P A = L U: U in the upper triangle, L's multipliers below (unit
 * diagonal implied), piv[k * s] the row swapped with row k at step k.  Returns 0, or 1 when A is
 * singular to working precision: a pivot of magnitude <= n * eps * max |A_ij| (or A is zero or
 * not finite); A is then partly factored. */
DUAL_INLINE int dual_lu_factor(double *A, int n, int64_t rs, int64_t cs, int32_t *piv, int64_t s) {
  double amax = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double a = fabs(A[i * rs + j * cs]);
      if (!(a <= DBL_MAX)) return 1; /* inf or NaN */
      if (a > amax) amax = a;
    }
  const double tiny = (double)n * DBL_EPSILON * amax;
  if (amax == 0.0) return 1;
  return dual_lu_eliminate(A, n, rs, cs, piv, s, tiny);
}

/* Solve A x = b in place (b, entries b[k * s], becomes x) with the factors of dual_lu_factor
 * (pivots piv[k * ps]). */
DUAL_INLINE void dual_lu_solve(const double *A, int n, int64_t rs, int64_t cs, const int32_t *piv,
                               int64_t ps, double *b, int64_t s) {
  for (int k = 0; k < n; ++k) {
    const int r = piv[k * ps];
    if (r != k) {
      const double t = b[k * s];
      b[k * s] = b[r * s];
      b[r * s] = t;
    }
  }
  for (int i = 1; i < n; ++i) {
    double v = b[i * s];
    for (int j = 0; j < i; ++j) v -= A[i * rs + j * cs] * b[j * s];
    b[i * s] = v;
  }
  /* j descending: the order in which a GPU lane group gets each x_j (kernels/newton_kernels.cu) */
  for (int i = n - 1; i >= 0; --i) {
    double v = b[i * s];
    for (int j = n - 1; j > i; --j) v -= A[i * rs + j * cs] * b[j * s];
    b[i * s] = v / A[i * rs + i * cs];
  }
}

#endif /* DUAL_LU_SMALL_H */
