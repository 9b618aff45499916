/*
 * lu_small.h — LU factorization with partial pivoting for the solvers' small per-point systems,
 * in place, one point per call, restricted to the matrix's structural band (lower bandwidth p,
 * upper q: A_ij = 0 for i - j > p or j - i > q; p = q = n - 1 for a dense matrix).  Written once
 * for the CPU and the GPU (DUAL_INLINE): element (r, c) of A lives at A[r * rs + c * cs] and entry
 * k of a vector at v[k * s], so the CPU works on a point's contiguous row-major matrix (rs = n,
 * cs = 1, s = 1) and a GPU thread on its point's column of a batch stored element-major (rs = n K,
 * cs = K, s = K for K points).  Plain loops in a fixed order: a point's factors and solution are
 * the same bits on every thread, chunk and device (the GPU's lane groups, kernels/newton_kernels.cu,
 * follow the same band rules).
 *
 * A dense matrix is factored as LAPACK's dgetrf does (whole rows swapped, b permuted before the
 * solves).  A banded one as dgbtrf does: the pivot among the p rows below the diagonal, a swap
 * moving the columns from k to k + p + q (U's bandwidth after interchanges), each step's
 * multipliers left in the rows where they were computed and the interchanges applied to b step
 * by step in the solve; the operations outside the band, all on zeros, are not made.  Its values
 * are those of the dense factorization's; a bit may differ only in the sign of an exact zero (or
 * where the dense one would multiply an overflowed entry by a zero into a NaN).
 */
#ifndef DUAL_LU_SMALL_H
#define DUAL_LU_SMALL_H

#include "dual/portable.h"

/* Whether (p, q) leave out any entry of an n x n matrix (else the dense organization runs). */
DUAL_INLINE int dual_lu_banded(int n, int p, int q) { return p < n - 1 || q < n - 1; }

/* The band's limits at step k: the last row that may hold a nonzero in column k, and the last
 * column the pivot row may reach (p + q after the interchanges). */
DUAL_INLINE int dual_lu_last(int n, int k, int w) { return n - 1 - k <= w ? n - 1 : k + w; }

/* Step k's pivot: the first row r in k .. last of largest |A_rk| (a NaN never wins), its
 * magnitude in *best. */
DUAL_INLINE int dual_lu_pivot(const double *A, int64_t rs, int64_t cs, int k, int last, double *best) {
  int r = k;
  double b = fabs(A[k * rs + k * cs]);
  for (int i = k + 1; i <= last; ++i) {
    const double a = fabs(A[i * rs + k * cs]);
    if (a > b) b = a, r = i;
  }
  *best = b;
  return r;
}

/* Rows k and r exchanged over the columns j0 .. j1. */
DUAL_INLINE void dual_lu_swap_rows(double *A, int64_t rs, int64_t cs, int k, int r, int j0, int j1) {
  for (int j = j0; j <= j1; ++j) {
    const double t = A[k * rs + j * cs];
    A[k * rs + j * cs] = A[r * rs + j * cs];
    A[r * rs + j * cs] = t;
  }
}

/* The elimination for a caller that has the singularity threshold tiny (n * eps * max |A_ij| of a
 * finite, nonzero A) already: P A = L U with U in the upper triangle and L's multipliers below
 * the diagonal, piv[k * s] the row interchanged with row k at step k.  Returns 0, or 1 when A is
 * singular to working precision: a pivot of magnitude <= tiny (A is then partly factored). */
DUAL_INLINE int dual_lu_eliminate(double *A, int n, int64_t rs, int64_t cs, int32_t *piv, int64_t s,
                                  double tiny, int p, int q) {
  double best;
  if (!dual_lu_banded(n, p, q)) { /* dense: dgetrf's loops, whole rows swapped */
    for (int k = 0; k < n; ++k) {
      const int r = dual_lu_pivot(A, rs, cs, k, n - 1, &best);
      piv[k * s] = r;
      if (best <= tiny) return 1;
      if (r != k) dual_lu_swap_rows(A, rs, cs, k, r, 0, n - 1);
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
  for (int k = 0; k < n; ++k) { /* banded: dgbtrf's */
    const int last = dual_lu_last(n, k, p), end = dual_lu_last(n, k, p + q);
    const int r = dual_lu_pivot(A, rs, cs, k, last, &best);
    piv[k * s] = r;
    if (best <= tiny) return 1;
    if (r != k) dual_lu_swap_rows(A, rs, cs, k, r, k, end);
    const double d = A[k * rs + k * cs];
    for (int i = k + 1; i <= last; ++i) {
      const double l = A[i * rs + k * cs] / d;
      A[i * rs + k * cs] = l;
      if (l != 0.0)
        for (int j = k + 1; j <= end; ++j) A[i * rs + j * cs] -= l * A[k * rs + j * cs];
    }
  }
  return 0;
}

/* Factor the dense n x n matrix A.  Returns 0, or 1 when A is singular to working precision: a
 * pivot of magnitude <= n * eps * max |A_ij| (or A is zero or not finite); A is then partly
 * factored. */
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
  return dual_lu_eliminate(A, n, rs, cs, piv, s, tiny, n - 1, n - 1);
}

/* Step k's interchange of b's entries k and r. */
DUAL_INLINE void dual_lu_interchange(double *b, int64_t s, int k, int r) {
  if (r == k) return;
  const double t = b[k * s];
  b[k * s] = b[r * s];
  b[r * s] = t;
}

/* Solve A x = b in place (b, entries b[k * s], becomes x) with the factors of dual_lu_eliminate
 * for the same p, q (pivots piv[k * ps]). */
DUAL_INLINE void dual_lu_solve(const double *A, int n, int64_t rs, int64_t cs, const int32_t *piv,
                               int64_t ps, double *b, int64_t s, int p, int q) {
  const int band = dual_lu_banded(n, p, q);
  if (band) { /* forward, L y = P b: step k's interchange, then y_k to the rows of its multipliers */
    for (int k = 0; k < n; ++k) {
      dual_lu_interchange(b, s, k, piv[k * ps]);
      const double yk = b[k * s];
      for (int i = k + 1, last = dual_lu_last(n, k, p); i <= last; ++i) b[i * s] -= A[i * rs + k * cs] * yk;
    }
  } else { /* the interchanges first (L's rows were swapped with A's), then row by row */
    for (int k = 0; k < n; ++k) dual_lu_interchange(b, s, k, piv[k * ps]);
    for (int i = 1; i < n; ++i) {
      double v = b[i * s];
      for (int j = 0; j < i; ++j) v -= A[i * rs + j * cs] * b[j * s];
      b[i * s] = v;
    }
  }
  /* back: x_i = (y_i - sum_{j > i} U_ij x_j) (1 / U_ii), j descending (the order in which a GPU
   * lane group gets each x_j, kernels/newton_kernels.cu).  The reciprocal, as LAPACK's optimized
   * triangular solves take it, is off the chain of dependent x_i where the quotient was on it
   * (bratu15, 1 thread, 2 cores: +4 %); x_i may differ from the quotient's in the last bit. */
  for (int i = n - 1; i >= 0; --i) {
    double v = b[i * s];
    const double r = 1.0 / A[i * rs + i * cs];
    for (int j = band ? dual_lu_last(n, i, p + q) : n - 1; j > i; --j) v -= A[i * rs + j * cs] * b[j * s];
    b[i * s] = v * r;
  }
}

#endif /* DUAL_LU_SMALL_H */
