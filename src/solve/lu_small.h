/*
 * lu_small.h — dense LU factorization with partial pivoting for the solvers' small per-point
 * systems (n up to a few hundred), row-major, in place.  Plain loops in a fixed order, so a
 * point's factors and solution are the same bits on every thread and in every chunk.
 */
#ifndef DUAL_LU_SMALL_H
#define DUAL_LU_SMALL_H

#include <stdint.h>

/* Factor the n x n row-major matrix A (leading dimension lda) as P A = L U: U in the upper
 * triangle, L's multipliers below (unit diagonal implied), piv[k] the row swapped with row k at
 * step k.  Returns 0, or 1 when A is singular to working precision: a pivot of magnitude
 * <= n * eps * max |A_ij| (or A is zero or not finite); A is then partly factored. */
int dual_lu_factor(double *A, int n, int lda, int32_t *piv);

/* Solve A x = b in place (b becomes x) with the factors of dual_lu_factor. */
void dual_lu_solve(const double *A, int n, int lda, const int32_t *piv, double *b);

#endif /* DUAL_LU_SMALL_H */
