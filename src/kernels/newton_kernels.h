/*
 * newton_kernels.h — the interface between dual_newton's GPU driver (kernels/gpu_newton.c, C) and
 * its kernels (kernels/newton_kernels.cu): the chunk's device arrays and the launch functions.
 * Plain C, no CUDA types.  Every launch returns a cudaError_t value.
 *
 * A chunk of C points lives on the device element-major: entry j of point b of X (the iterates),
 * XT (the trial points), DX (the Newton steps) at [j * C + b], parameter j at P[j * C + b].  The
 * points an engine call evaluates are gathered into the compacted, element-major xa and pa
 * ([j * k + i] for the k points idx[0..k)), and the engine writes F and J there alike (F entry r
 * at F[r * k + i], J's element (r, c) at J[(r * n + c) * k + i]).
 */
#ifndef DUAL_NEWTON_KERNELS_H
#define DUAL_NEWTON_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "solve/newton_point.h"

#ifdef __cplusplus
extern "C" {
#endif


typedef struct dual_newton_dev {
  int64_t C;            /* points in the chunk */
  int32_t n, np;        /* unknowns (= residuals), parameters */
  dual_newton_opts o;   /* the options a round reads */
  dual_newton_pts P;    /* per-point state [C] */
  int32_t *phase;       /* [C] DUAL_NEWTON_DONE, _NEED_J, _NEED_F (newton_point.h) */
  uint8_t *flags;       /* [C] scratch of dual_newton_select */
  double *X, *XT, *DX;  /* [n][C] */
  double *P_;           /* [np][C] the parameters */
  int32_t *idx;         /* [C] the points of the current engine call */
  int64_t k;            /* how many */
  double *xa, *pa;      /* [n][k], [np][k] gathered */
  double *F, *J;        /* [n][k], [n * n][k] the engine's results */
  /* J by a colored view (solve/jacobian_colors.h) where nc > 0, for the lane groups only: the
   * engine writes J S, entry (r, c) at J[(r * nc + c) * k + i], and the groups read J's entry
   * (r, c) from J S's (r, color[c]) where bit c of row_mask[r] says it may be nonzero */
  int32_t nc;
  int8_t color[32];
  uint32_t row_mask[32];
  int32_t *piv;         /* [n][k]; cuBLAS rounds: [k][n] */
  /* cuBLAS rounds only (else NULL): the matrices A = J^T point-major ([k][n * n], column-major
   * each), the right-hand sides -F ([k][n], the steps after the solve), their device pointer
   * arrays [C], cuBLAS's info [C], each point's max |J_ij| [C] (the singularity test) */
  double *A, *Bv, **Ap, **Bp, *amax;
  int32_t *info;
} dual_newton_dev;

/* A point-major array src (point b's entry j at src[b * ld + j], device memory) into the
 * element-major dst [len][C] (to_points = 0), or element-major src into point-major dst (entry j
 * of point b at dst[b * ld + j]; to_points = 1), for points 0..c. */
int dual_newton_transpose(const double *src, double *dst, int64_t c, int64_t C, int32_t len,
                          int64_t ld, int to_points, void *stream);

/* Start every point: state active, counters zero, phase NEED_J. */
int dual_newton_init(const dual_newton_dev *d, void *stream);

/* idx[0..k) = the points not done, in increasing order; k is written to *k_dev.  `temp`
 * (temp_bytes) is scratch that dual_newton_select_bytes sizes for C points. */
size_t dual_newton_select_bytes(int64_t C);
int dual_newton_select(const dual_newton_dev *d, int64_t *k_dev, void *temp, size_t temp_bytes,
                       void *stream);

/* xa = the points' X (phase NEED_J) or XT (NEED_F) and pa = P, at the points idx[0..k). */
int dual_newton_gather(const dual_newton_dev *d, void *stream);

/* After F and J at the k gathered points, a round for each: the line search's verdict on a trial
 * point (dual_newton_judge, newton_point.h), then, for a point at a new iterate, its Newton step
 * (dual_newton_step), one thread per point (lu DUAL_NEWTON_LU_THREAD, and any n > 32), or a
 * group of lanes per point, 16 for n <= 16, else a warp (the same bits; lu DUAL_NEWTON_LU_WARP,
 * or AUTO for WARP_MIN_N < n <= 32). */
enum { DUAL_NEWTON_LU_AUTO = 0, DUAL_NEWTON_LU_THREAD = 1, DUAL_NEWTON_LU_WARP = 2, DUAL_NEWTON_LU_CUBLAS = 3 };
#define DUAL_NEWTON_WARP_MIN_N 8
int dual_newton_steps(const dual_newton_dev *d, int lu, void *stream);

/* Whether dual_newton_steps runs the lane groups for lu, which can read J S (nc > 0). */
int dual_newton_steps_use_groups(const dual_newton_dev *d, int lu);


/* A round with cuBLAS's batched LU (lu DUAL_NEWTON_LU_CUBLAS only: on the H200 it measured
 * slower than the thread-per-point LU at n = 48 and 64, and slower than the lane groups below;
 * its factors round differently from the in-kernel LU, so the points agree with the CPU's to a
 * tolerance, not bitwise).  dual_newton_blas_pointers fills Ap and Bp once per chunk;
 * dual_newton_blas_prepare runs the verdicts on trial points and the tests, and for the points
 * that take a Newton step (flags[i] = 1) sets Bv = -F and packs J^T into A; after cuBLAS,
 * dual_newton_blas_finish tests the pivots (|U_kk| <= n eps max |J_ij| is singular, as the
 * in-kernel LU's test) and sets the steps and first trial points. */
int dual_newton_blas_pointers(const dual_newton_dev *d, void *stream);
int dual_newton_blas_prepare(const dual_newton_dev *d, void *stream);
int dual_newton_blas_finish(const dual_newton_dev *d, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* DUAL_NEWTON_KERNELS_H */
