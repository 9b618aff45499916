/*
 * qr_small.h — the least-squares solver's dense kernels, after Moré's Levenberg–Marquardt
 * (MINPACK's qrfac, qrsolv and lmpar, as the algorithms of J. J. Moré, "The Levenberg–Marquardt
 * algorithm: implementation and theory", 1978): Householder QR with column pivoting of the
 * m x n Jacobian, the damped least-squares solve through Givens rotations, and the
 * Levenberg–Marquardt parameter for a trust region.  Column-major arrays, loops in a fixed order:
 * a point's results are the same bits on every thread.
 */
#ifndef DUAL_QR_SMALL_H
#define DUAL_QR_SMALL_H

#include <stdint.h>

/* A P = Q R for the m x n column-major A (lda >= m, m >= n): R's strict upper triangle in A,
 * its diagonal in rdiag, the Householder vectors in A's lower part; ipvt the permutation (column
 * j of A P is column ipvt[j] of A); acnorm the column norms of A; wa n doubles of work. */
void dual_qr_factor(int m, int n, double *A, int lda, int32_t *ipvt, double *rdiag, double *acnorm,
                    double *wa);

/* b (m values) becomes Q^T b with the factors of dual_qr_factor; then A's diagonal gets rdiag
 * (A's upper n x n triangle is R).  qtb: the first n values of Q^T b. */
void dual_qr_apply_qt(int m, int n, double *A, int lda, const double *rdiag, double *b, double *qtb);

/* The Levenberg–Marquardt parameter *par (in: an initial estimate) for the trust region
 * ||D x|| <= delta, with R (n x n upper triangle of r, ldr), ipvt, diag (D) and qtb; x gets the
 * step's negative (the solution of min ||J x - f||^2 + par ||D x||^2 with f's Q^T b = qtb), sdiag
 * the diagonal of the factor S; r's strict lower triangle is overwritten.  wa1, wa2: n doubles. */
void dual_lm_parameter(int n, double *r, int ldr, const int32_t *ipvt, const double *diag,
                       const double *qtb, double delta, double *par, double *x, double *sdiag,
                       double *wa1, double *wa2);

/* ||v||_2 without overflow (solve_common.h's dual_solve_norm). */

#endif /* DUAL_QR_SMALL_H */
