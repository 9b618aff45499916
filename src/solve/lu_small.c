/*
 * lu_small.c — LU with partial pivoting (lu_small.h): right-looking, row by row, the pivot the
 * first entry of largest magnitude in its column.
 */
#include "solve/lu_small.h"

#include <float.h>
#include <math.h>

int dual_lu_factor(double *A, int n, int lda, int32_t *piv) {
  double amax = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double a = fabs(A[i * lda + j]);
      if (!(a <= DBL_MAX)) return 1; /* inf or NaN */
      if (a > amax) amax = a;
    }
  const double tiny = (double)n * DBL_EPSILON * amax;
  if (amax == 0.0) return 1;
  for (int k = 0; k < n; ++k) {
    int r = k;
    double best = fabs(A[k * lda + k]);
    for (int i = k + 1; i < n; ++i) {
      const double a = fabs(A[i * lda + k]);
      if (a > best) best = a, r = i;
    }
    piv[k] = r;
    if (best <= tiny) return 1;
    if (r != k)
      for (int j = 0; j < n; ++j) {
        const double t = A[k * lda + j];
        A[k * lda + j] = A[r * lda + j];
        A[r * lda + j] = t;
      }
    const double d = A[k * lda + k];
    for (int i = k + 1; i < n; ++i) {
      const double l = A[i * lda + k] / d;
      A[i * lda + k] = l;
      if (l != 0.0)
        for (int j = k + 1; j < n; ++j) A[i * lda + j] -= l * A[k * lda + j];
    }
  }
  return 0;
}

void dual_lu_solve(const double *A, int n, int lda, const int32_t *piv, double *b) {
  for (int k = 0; k < n; ++k) {
    const int r = piv[k];
    if (r != k) {
      const double t = b[k];
      b[k] = b[r];
      b[r] = t;
    }
  }
  for (int i = 1; i < n; ++i) {
    double s = b[i];
    for (int j = 0; j < i; ++j) s -= A[i * lda + j] * b[j];
    b[i] = s;
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int j = i + 1; j < n; ++j) s -= A[i * lda + j] * b[j];
    b[i] = s / A[i * lda + i];
  }
}
