/*
 * cublas_batched.h — cuBLAS's batched LU (getrfBatched, getrsBatched) for dual_newton's GPU
 * rounds and its batched QR (geqrfBatched) for dual_lsq's (cublas_batched.c).  cuBLAS is opened
 * with dlopen on first use, as NVRTC is: a build needs no cuBLAS, and a machine without it keeps
 * the in-kernel factorizations.
 */
#ifndef DUAL_CUBLAS_BATCHED_H
#define DUAL_CUBLAS_BATCHED_H

#include "kernels/gpu_state.h"

/* 1 when cuBLAS could be loaded (the file DUALBATCH_CUBLAS names if set, "none" for none; else
 * libcublas.so.13, .12, .so); else 0 and why (may be NULL) says what failed. */
int dual_cublas_available(char *why, size_t cap);

/* Factor the count n x n column-major matrices A[i] (lda n, device pointers in a device array)
 * as P A = L U (piv: n ints per matrix, info: one per matrix, 0 or the first zero pivot), then
 * solve A^T x = b in place for each B[i] (n entries): dx = -J^{-1} F for A = J^T, on the
 * context's cuBLAS handle (created on first use) on `stream`.  A DUAL_ERR_* status when cuBLAS
 * is missing or fails. */
int dual_cublas_lu_solve(dual_context *ctx, struct dual_gpu *g, cudaStream_t stream, int n,
                         double *const *A, int *piv, int *info, double *const *B, int count);

/* Factor the count m x n column-major matrices A[i] (lda, device pointers in a device array) as
 * A = Q R by Householder reflections without pivoting (geqrfBatched: R in the upper triangle,
 * the reflectors below it and their scalars in Tau[i], min(m, n) each), on the context's handle
 * on `stream`.  A DUAL_ERR_* status when cuBLAS is missing or fails. */
int dual_cublas_qr(dual_context *ctx, struct dual_gpu *g, cudaStream_t stream, int m, int n,
                   double *const *A, int lda, double *const *Tau, int count);

/* Destroy the context's handle (dual_gpu_release). */
void dual_cublas_release(struct dual_gpu *g);

#endif /* DUAL_CUBLAS_BATCHED_H */
