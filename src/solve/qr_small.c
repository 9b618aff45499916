/*
 * qr_small.c — Householder QR with column pivoting, the damped solve by Givens rotations and the
 * Levenberg–Marquardt parameter (qr_small.h).
 */
#include "solve/qr_small.h"

#include <float.h>
#include <math.h>

#include "solve/solve_common.h"

#define AT(a, ld, i, j) ((a)[(int64_t)(j) * (ld) + (i)])

void dual_qr_factor(int m, int n, double *A, int lda, int32_t *ipvt, double *rdiag, double *acnorm,
                    double *wa) {
  for (int j = 0; j < n; ++j) {
    acnorm[j] = dual_solve_norm(&AT(A, lda, 0, j), m);
    rdiag[j] = wa[j] = acnorm[j];
    ipvt[j] = j;
  }
  const int minmn = m < n ? m : n;
  for (int j = 0; j < minmn; ++j) {
    int kmax = j;
    for (int k = j; k < n; ++k)
      if (rdiag[k] > rdiag[kmax]) kmax = k;
    if (kmax != j) {
      for (int i = 0; i < m; ++i) {
        const double t = AT(A, lda, i, j);
        AT(A, lda, i, j) = AT(A, lda, i, kmax);
        AT(A, lda, i, kmax) = t;
      }
      rdiag[kmax] = rdiag[j];
      wa[kmax] = wa[j];
      const int32_t t = ipvt[j];
      ipvt[j] = ipvt[kmax];
      ipvt[kmax] = t;
    }
    double ajnorm = dual_solve_norm(&AT(A, lda, j, j), m - j);
    if (ajnorm != 0.0) {
      if (AT(A, lda, j, j) < 0.0) ajnorm = -ajnorm;
      for (int i = j; i < m; ++i) AT(A, lda, i, j) /= ajnorm;
      AT(A, lda, j, j) += 1.0;
      for (int k = j + 1; k < n; ++k) {
        double sum = 0.0;
        for (int i = j; i < m; ++i) sum += AT(A, lda, i, j) * AT(A, lda, i, k);
        const double temp = sum / AT(A, lda, j, j);
        for (int i = j; i < m; ++i) AT(A, lda, i, k) -= temp * AT(A, lda, i, j);
        if (rdiag[k] != 0.0) {
          const double q = AT(A, lda, j, k) / rdiag[k];
          const double s = 1.0 - q * q;
          rdiag[k] *= sqrt(s > 0.0 ? s : 0.0);
          const double r = rdiag[k] / wa[k];
          if (0.05 * r * r <= DBL_EPSILON) {
            rdiag[k] = dual_solve_norm(&AT(A, lda, j + 1, k), m - j - 1);
            wa[k] = rdiag[k];
          }
        }
      }
    }
    rdiag[j] = -ajnorm;
  }
}

void dual_qr_apply_qt(int m, int n, double *A, int lda, const double *rdiag, double *b, double *qtb) {
  for (int j = 0; j < n; ++j) {
    if (AT(A, lda, j, j) != 0.0) {
      double sum = 0.0;
      for (int i = j; i < m; ++i) sum += AT(A, lda, i, j) * b[i];
      const double temp = -sum / AT(A, lda, j, j);
      for (int i = j; i < m; ++i) b[i] += AT(A, lda, i, j) * temp;
    }
    AT(A, lda, j, j) = rdiag[j];
    qtb[j] = b[j];
  }
}

/* Solve (R^T R + D^T D) z = R^T qtb in the permuted variables through the factor S (S^T S = P^T
 * (J^T J + D^T D) P): Givens rotations eliminate D row by row.  r's strict lower triangle gets
 * S's, sdiag S's diagonal; x the solution.  wa: n doubles. */
static void qr_damped_solve(int n, double *r, int ldr, const int32_t *ipvt, const double *diag,
                            const double *qtb, double *x, double *sdiag, double *wa) {
  for (int j = 0; j < n; ++j) {
    for (int i = j; i < n; ++i) AT(r, ldr, i, j) = AT(r, ldr, j, i);
    x[j] = AT(r, ldr, j, j);
    wa[j] = qtb[j];
  }
  for (int j = 0; j < n; ++j) {
    const int l = ipvt[j];
    if (diag[l] != 0.0) {
      for (int k = j; k < n; ++k) sdiag[k] = 0.0;
      sdiag[j] = diag[l];
      double qtbpj = 0.0;
      for (int k = j; k < n; ++k) {
        if (sdiag[k] == 0.0) continue;
        double c, s;
        if (fabs(AT(r, ldr, k, k)) < fabs(sdiag[k])) {
          const double cot = AT(r, ldr, k, k) / sdiag[k];
          s = 0.5 / sqrt(0.25 + 0.25 * cot * cot);
          c = s * cot;
        } else {
          const double tan = sdiag[k] / AT(r, ldr, k, k);
          c = 0.5 / sqrt(0.25 + 0.25 * tan * tan);
          s = c * tan;
        }
        AT(r, ldr, k, k) = c * AT(r, ldr, k, k) + s * sdiag[k];
        const double t = c * wa[k] + s * qtbpj;
        qtbpj = -s * wa[k] + c * qtbpj;
        wa[k] = t;
        for (int i = k + 1; i < n; ++i) {
          const double u = c * AT(r, ldr, i, k) + s * sdiag[i];
          sdiag[i] = -s * AT(r, ldr, i, k) + c * sdiag[i];
          AT(r, ldr, i, k) = u;
        }
      }
    }
    sdiag[j] = AT(r, ldr, j, j);
    AT(r, ldr, j, j) = x[j];
  }
  int nsing = n;
  for (int j = 0; j < n; ++j) {
    if (sdiag[j] == 0.0 && nsing == n) nsing = j;
    if (nsing < n) wa[j] = 0.0;
  }
  for (int j = nsing - 1; j >= 0; --j) {
    double sum = 0.0;
    for (int i = j + 1; i < nsing; ++i) sum += AT(r, ldr, i, j) * wa[i];
    wa[j] = (wa[j] - sum) / sdiag[j];
  }
  for (int j = 0; j < n; ++j) x[ipvt[j]] = wa[j];
}

void dual_lm_parameter(int n, double *r, int ldr, const int32_t *ipvt, const double *diag,
                       const double *qtb, double delta, double *par, double *x, double *sdiag,
                       double *wa1, double *wa2) {
  const double dwarf = DBL_MIN;
  /* the Gauss-Newton direction (least squares where R is singular) */
  int nsing = n;
  for (int j = 0; j < n; ++j) {
    wa1[j] = qtb[j];
    if (AT(r, ldr, j, j) == 0.0 && nsing == n) nsing = j;
    if (nsing < n) wa1[j] = 0.0;
  }
  for (int j = nsing - 1; j >= 0; --j) {
    wa1[j] /= AT(r, ldr, j, j);
    const double t = wa1[j];
    for (int i = 0; i < j; ++i) wa1[i] -= AT(r, ldr, i, j) * t;
  }
  for (int j = 0; j < n; ++j) x[ipvt[j]] = wa1[j];
  int iter = 0;
  for (int j = 0; j < n; ++j) wa2[j] = diag[j] * x[j];
  double dxnorm = dual_solve_norm(wa2, n);
  double fp = dxnorm - delta;
  if (fp <= 0.1 * delta) {
    *par = 0.0;
    return;
  }
  /* lower bound parl of the zero (when the Jacobian has full rank) */
  double parl = 0.0;
  if (nsing == n) {
    for (int j = 0; j < n; ++j) {
      const int l = ipvt[j];
      wa1[j] = diag[l] * (wa2[l] / dxnorm);
    }
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int i = 0; i < j; ++i) sum += AT(r, ldr, i, j) * wa1[i];
      wa1[j] = (wa1[j] - sum) / AT(r, ldr, j, j);
    }
    const double t = dual_solve_norm(wa1, n);
    parl = ((fp / delta) / t) / t;
  }
  /* upper bound paru */
  for (int j = 0; j < n; ++j) {
    double sum = 0.0;
    for (int i = 0; i <= j; ++i) sum += AT(r, ldr, i, j) * qtb[i];
    wa1[j] = sum / diag[ipvt[j]];
  }
  const double gnorm = dual_solve_norm(wa1, n);
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
    for (int j = 0; j < n; ++j) wa1[j] = sp * diag[j];
    qr_damped_solve(n, r, ldr, ipvt, wa1, qtb, x, sdiag, wa2);
    for (int j = 0; j < n; ++j) wa2[j] = diag[j] * x[j];
    dxnorm = dual_solve_norm(wa2, n);
    const double prev = fp;
    fp = dxnorm - delta;
    if (fabs(fp) <= 0.1 * delta || (parl == 0.0 && fp <= prev && prev < 0.0) || iter == 10) break;
    /* Newton's correction */
    for (int j = 0; j < n; ++j) {
      const int l = ipvt[j];
      wa1[j] = diag[l] * (wa2[l] / dxnorm);
    }
    for (int j = 0; j < n; ++j) {
      wa1[j] /= sdiag[j];
      const double t = wa1[j];
      for (int i = j + 1; i < n; ++i) wa1[i] -= AT(r, ldr, i, j) * t;
    }
    const double t = dual_solve_norm(wa1, n);
    const double parc = ((fp / delta) / t) / t;
    if (fp > 0.0 && p > parl) parl = p;
    if (fp < 0.0 && p < paru) paru = p;
    p = parl > p + parc ? parl : p + parc;
  }
  *par = p;
}
