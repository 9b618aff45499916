/*
 * qr_small.h — the least-squares solver's dense kernels, after Moré's Levenberg–Marquardt
 * (MINPACK's qrfac, qrsolv and lmpar, as the algorithms of J. J. Moré, "The Levenberg–Marquardt
 * algorithm: implementation and theory", 1978): Householder QR with column pivoting of the
 * m x n Jacobian, the damped least-squares solve through Givens rotations, and the
 * Levenberg–Marquardt parameter for a trust region.  Written once for the CPU and the GPU
 * (DUAL_INLINE) with every array strided by s: element (i, j) of a column-major matrix with
 * leading dimension ld at a[(j * ld + i) * s], entry j of a vector at v[j * s].  The CPU passes a
 * point's contiguous arrays (s = 1), a GPU thread its column of element-major batch arrays
 * (s = the batch's point count).  Loops in a fixed order: a point's results are the same bits on
 * every thread, chunk and device.
 */
#ifndef DUAL_QR_SMALL_H
#define DUAL_QR_SMALL_H

#include "dual/portable.h"
#include "solve/vec_small.h"

#define DUAL_QR_AT(a, ld, i, j) ((a)[((int64_t)(j) * (ld) + (i)) * s])
#define DUAL_QR_V(v, j) ((v)[(int64_t)(j) * s])

/* A P = Q R for the m x n column-major A (lda >= m, m >= n): R's strict upper triangle in A,
 * its diagonal in rdiag, the Householder vectors in A's lower part; ipvt the permutation (column
 * j of A P is column ipvt[j] of A); acnorm the column norms of A; wa n doubles of work. */
DUAL_INLINE void dual_qr_factor(int m, int n, double *A, int lda, int32_t *ipvt, double *rdiag,
                                double *acnorm, double *wa, int64_t s) {
  for (int j = 0; j < n; ++j) {
    DUAL_QR_V(acnorm, j) = dual_sv_norm(&DUAL_QR_AT(A, lda, 0, j), m, s);
    DUAL_QR_V(rdiag, j) = DUAL_QR_V(wa, j) = DUAL_QR_V(acnorm, j);
    DUAL_QR_V(ipvt, j) = j;
  }
  const int minmn = m < n ? m : n;
  for (int j = 0; j < minmn; ++j) {
    int kmax = j;
    for (int k = j; k < n; ++k)
      if (DUAL_QR_V(rdiag, k) > DUAL_QR_V(rdiag, kmax)) kmax = k;
    if (kmax != j) {
      for (int i = 0; i < m; ++i) {
        const double t = DUAL_QR_AT(A, lda, i, j);
        DUAL_QR_AT(A, lda, i, j) = DUAL_QR_AT(A, lda, i, kmax);
        DUAL_QR_AT(A, lda, i, kmax) = t;
      }
      DUAL_QR_V(rdiag, kmax) = DUAL_QR_V(rdiag, j);
      DUAL_QR_V(wa, kmax) = DUAL_QR_V(wa, j);
      const int32_t t = DUAL_QR_V(ipvt, j);
      DUAL_QR_V(ipvt, j) = DUAL_QR_V(ipvt, kmax);
      DUAL_QR_V(ipvt, kmax) = t;
    }
    double ajnorm = dual_sv_norm(&DUAL_QR_AT(A, lda, j, j), m - j, s);
    if (ajnorm != 0.0) {
      if (DUAL_QR_AT(A, lda, j, j) < 0.0) ajnorm = -ajnorm;
      for (int i = j; i < m; ++i) DUAL_QR_AT(A, lda, i, j) /= ajnorm;
      DUAL_QR_AT(A, lda, j, j) += 1.0;
      for (int k = j + 1; k < n; ++k) {
        double sum = 0.0;
        for (int i = j; i < m; ++i) sum += DUAL_QR_AT(A, lda, i, j) * DUAL_QR_AT(A, lda, i, k);
        const double temp = sum / DUAL_QR_AT(A, lda, j, j);
        for (int i = j; i < m; ++i) DUAL_QR_AT(A, lda, i, k) -= temp * DUAL_QR_AT(A, lda, i, j);
        if (DUAL_QR_V(rdiag, k) != 0.0) {
          const double q = DUAL_QR_AT(A, lda, j, k) / DUAL_QR_V(rdiag, k);
          const double sq = 1.0 - q * q;
          DUAL_QR_V(rdiag, k) *= sqrt(sq > 0.0 ? sq : 0.0);
          const double r = DUAL_QR_V(rdiag, k) / DUAL_QR_V(wa, k);
          if (0.05 * r * r <= DBL_EPSILON) {
            DUAL_QR_V(rdiag, k) = dual_sv_norm(&DUAL_QR_AT(A, lda, j + 1, k), m - j - 1, s);
            DUAL_QR_V(wa, k) = DUAL_QR_V(rdiag, k);
          }
        }
      }
    }
    DUAL_QR_V(rdiag, j) = -ajnorm;
  }
}

/* b (m values) becomes Q^T b with the factors of dual_qr_factor; then A's diagonal gets rdiag
 * (A's upper n x n triangle is R).  qtb: the first n values of Q^T b. */
DUAL_INLINE void dual_qr_apply_qt(int m, int n, double *A, int lda, const double *rdiag, double *b,
                                  double *qtb, int64_t s) {
  for (int j = 0; j < n; ++j) {
    if (DUAL_QR_AT(A, lda, j, j) != 0.0) {
      double sum = 0.0;
      for (int i = j; i < m; ++i) sum += DUAL_QR_AT(A, lda, i, j) * DUAL_QR_V(b, i);
      const double temp = -sum / DUAL_QR_AT(A, lda, j, j);
      for (int i = j; i < m; ++i) DUAL_QR_V(b, i) += DUAL_QR_AT(A, lda, i, j) * temp;
    }
    DUAL_QR_AT(A, lda, j, j) = DUAL_QR_V(rdiag, j);
    DUAL_QR_V(qtb, j) = DUAL_QR_V(b, j);
  }
}

/* Solve (R^T R + D^T D) z = R^T qtb in the permuted variables through the factor S (S^T S = P^T
 * (J^T J + D^T D) P): Givens rotations eliminate D row by row.  r's strict lower triangle gets
 * S's, sdiag S's diagonal; x the solution.  wa: n doubles. */
DUAL_INLINE void dual_qr_damped_solve(int n, double *r, int ldr, const int32_t *ipvt,
                                      const double *diag, const double *qtb, double *x,
                                      double *sdiag, double *wa, int64_t s) {
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) DUAL_QR_AT(r, ldr, i, j) = DUAL_QR_AT(r, ldr, j, i);
    DUAL_QR_V(x, j) = DUAL_QR_AT(r, ldr, j, j);
    DUAL_QR_V(wa, j) = DUAL_QR_V(qtb, j);
  }
  for (int j = 0; j < n; ++j) {
    const int l = DUAL_QR_V(ipvt, j);
    if (DUAL_QR_V(diag, l) != 0.0) {
      for (int k = j; k < n; ++k) DUAL_QR_V(sdiag, k) = 0.0;
      DUAL_QR_V(sdiag, j) = DUAL_QR_V(diag, l);
      double qtbpj = 0.0;
      for (int k = j; k < n; ++k) {
        if (DUAL_QR_V(sdiag, k) == 0.0) continue;
        double c, sn;
        const double rkk = DUAL_QR_AT(r, ldr, k, k), sk = DUAL_QR_V(sdiag, k);
        if (fabs(rkk) < fabs(sk)) {
          const double cot = rkk / sk;
          sn = 0.5 / sqrt(0.25 + 0.25 * cot * cot);
          c = sn * cot;
        } else {
          const double tan = sk / rkk;
          c = 0.5 / sqrt(0.25 + 0.25 * tan * tan);
          sn = c * tan;
        }
        DUAL_QR_AT(r, ldr, k, k) = c * rkk + sn * sk;
        const double t = c * DUAL_QR_V(wa, k) + sn * qtbpj;
        qtbpj = -sn * DUAL_QR_V(wa, k) + c * qtbpj;
        DUAL_QR_V(wa, k) = t;
        for (int i = k + 1; i < n; ++i) {
          const double u = c * DUAL_QR_AT(r, ldr, i, k) + sn * DUAL_QR_V(sdiag, i);
          DUAL_QR_V(sdiag, i) = -sn * DUAL_QR_AT(r, ldr, i, k) + c * DUAL_QR_V(sdiag, i);
          DUAL_QR_AT(r, ldr, i, k) = u;
        }
      }
    }
    DUAL_QR_V(sdiag, j) = DUAL_QR_AT(r, ldr, j, j);
    DUAL_QR_AT(r, ldr, j, j) = DUAL_QR_V(x, j);
  }
  int nsing = n;
  for (int j = 0; j < n; ++j) {
    if (DUAL_QR_V(sdiag, j) == 0.0 && nsing == n) nsing = j;
    if (nsing < n) DUAL_QR_V(wa, j) = 0.0;
  }
  for (int j = nsing - 1; j >= 0; --j) {
    double sum = 0.0;
    for (int i = j + 1; i < nsing; ++i) sum += DUAL_QR_AT(r, ldr, i, j) * DUAL_QR_V(wa, i);
    DUAL_QR_V(wa, j) = (DUAL_QR_V(wa, j) - sum) / DUAL_QR_V(sdiag, j);
  }
  for (int j = 0; j < n; ++j) DUAL_QR_V(x, DUAL_QR_V(ipvt, j)) = DUAL_QR_V(wa, j);
}

/* The Levenberg–Marquardt parameter *par (in: an initial estimate) for the trust region
 * ||D x|| <= delta, with R (n x n upper triangle of r, ldr), ipvt, diag (D) and qtb; x gets the
 * step's negative (the solution of min ||J x - f||^2 + par ||D x||^2 with f's Q^T b = qtb), sdiag
 * the diagonal of the factor S; r's strict lower triangle is overwritten.  wa1, wa2: n doubles. */
DUAL_INLINE void dual_lm_parameter(int n, double *r, int ldr, const int32_t *ipvt,
                                   const double *diag, const double *qtb, double delta, double *par,
                                   double *x, double *sdiag, double *wa1, double *wa2, int64_t s) {
  const double dwarf = DBL_MIN;
  /* the Gauss-Newton direction (least squares where R is singular) */
  int nsing = n;
  for (int j = 0; j < n; ++j) {
    DUAL_QR_V(wa1, j) = DUAL_QR_V(qtb, j);
    if (DUAL_QR_AT(r, ldr, j, j) == 0.0 && nsing == n) nsing = j;
    if (nsing < n) DUAL_QR_V(wa1, j) = 0.0;
  }
  for (int j = nsing - 1; j >= 0; --j) {
    DUAL_QR_V(wa1, j) /= DUAL_QR_AT(r, ldr, j, j);
    const double t = DUAL_QR_V(wa1, j);
    for (int i = 0; i < j; ++i) DUAL_QR_V(wa1, i) -= DUAL_QR_AT(r, ldr, i, j) * t;
  }
  for (int j = 0; j < n; ++j) DUAL_QR_V(x, DUAL_QR_V(ipvt, j)) = DUAL_QR_V(wa1, j);
  int iter = 0;
  for (int j = 0; j < n; ++j) DUAL_QR_V(wa2, j) = DUAL_QR_V(diag, j) * DUAL_QR_V(x, j);
  double dxnorm = dual_sv_norm(wa2, n, s);
  double fp = dxnorm - delta;
  if (fp <= 0.1 * delta) {
    *par = 0.0;
    return;
  }
  /* lower bound parl of the zero (when the Jacobian has full rank) */
  double parl = 0.0;
  if (nsing == n) {
    for (int j = 0; j < n; ++j) {
      const int l = DUAL_QR_V(ipvt, j);
      DUAL_QR_V(wa1, j) = DUAL_QR_V(diag, l) * (DUAL_QR_V(wa2, l) / dxnorm);
    }
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int i = 0; i < j; ++i) sum += DUAL_QR_AT(r, ldr, i, j) * DUAL_QR_V(wa1, i);
      DUAL_QR_V(wa1, j) = (DUAL_QR_V(wa1, j) - sum) / DUAL_QR_AT(r, ldr, j, j);
    }
    const double t = dual_sv_norm(wa1, n, s);
    parl = ((fp / delta) / t) / t;
  }
  /* upper bound paru */
  for (int j = 0; j < n; ++j) {
    double sum = 0.0;
    for (int i = 0; i <= j; ++i) sum += DUAL_QR_AT(r, ldr, i, j) * DUAL_QR_V(qtb, i);
    DUAL_QR_V(wa1, j) = sum / DUAL_QR_V(diag, DUAL_QR_V(ipvt, j));
  }
  const double gnorm = dual_sv_norm(wa1, n, s);
  double paru = gnorm / delta;
  if (paru == 0.0) paru = dwarf / (delta < 0.1 ? delta : 0.1);
  double p = *par;
  if (p < parl) p = parl;
  if (p > paru) p = paru;
  if (p == 0.0) p = gnorm / dxnorm;
  for (;;) {
    ++iter;
    if (p == 0.0) p = dwarf > 0.001 * paru ? dwarf : 0.001 * paru;
    const double sp = sqrt(p);
    for (int j = 0; j < n; ++j) DUAL_QR_V(wa1, j) = sp * DUAL_QR_V(diag, j);
    dual_qr_damped_solve(n, r, ldr, ipvt, wa1, qtb, x, sdiag, wa2, s);
    for (int j = 0; j < n; ++j) DUAL_QR_V(wa2, j) = DUAL_QR_V(diag, j) * DUAL_QR_V(x, j);
    dxnorm = dual_sv_norm(wa2, n, s);
    const double prev = fp;
    fp = dxnorm - delta;
    if (fabs(fp) <= 0.1 * delta || (parl == 0.0 && fp <= prev && prev < 0.0) || iter == 10) break;
    /* Newton's correction */
    for (int j = 0; j < n; ++j) {
      const int l = DUAL_QR_V(ipvt, j);
      DUAL_QR_V(wa1, j) = DUAL_QR_V(diag, l) * (DUAL_QR_V(wa2, l) / dxnorm);
    }
    for (int j = 0; j < n; ++j) {
      DUAL_QR_V(wa1, j) /= DUAL_QR_V(sdiag, j);
      const double t = DUAL_QR_V(wa1, j);
      for (int i = j + 1; i < n; ++i) DUAL_QR_V(wa1, i) -= DUAL_QR_AT(r, ldr, i, j) * t;
    }
    const double t = dual_sv_norm(wa1, n, s);
    const double parc = ((fp / delta) / t) / t;
    if (fp > 0.0 && p > parl) parl = p;
    if (fp < 0.0 && p < paru) paru = p;
    p = parl > p + parc ? parl : p + parc;
  }
  *par = p;
}

#endif /* DUAL_QR_SMALL_H */
