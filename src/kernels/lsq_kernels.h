/*
 * lsq_kernels.h — the interface between dual_lsq's GPU driver (kernels/gpu_lsq.c, C) and its
 * kernels (kernels/lsq_kernels.cu): the chunk's device arrays and the launch functions.  Plain C,
 * no CUDA types.  Every launch returns a cudaError_t value.
 *
 * A chunk of C points lives on the device element-major: the iterates X ([n][C], entry j of point
 * b at [j * C + b]), the parameters P_ ([np][C]) and the solver's per-point state (lm_point.h's
 * dual_lm_pts with its C set).  The points an engine call evaluates are the k points idx[0..k);
 * their x and p are gathered into xa ([n][k]) and pa ([np][k]), and the engine writes F ([m][k])
 * and J (element (r, c) at [(r * n + c) * k + i]) alike.
 *
 * In cuBLAS rounds (qr = 1, DUAL_KNOB_SOLVE_QR) each point's [J F] is copied into a column-major
 * m x (n + 1) matrix of Q, which cuBLAS factors without pivoting; the upper triangle it leaves,
 * R1 and Q1^T F, becomes the point's (n + 1) x n Jacobian and n + 1 residuals (in J and F) for
 * the kernel's pivoted QR (lm_point.h: dual_lm_factor_jacobian with mr = n + 1).
 */
#ifndef DUAL_LSQ_KERNELS_H
#define DUAL_LSQ_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "solve/lm_point.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dual_lsq_dev {
  int64_t C;          /* points in the chunk */
  int32_t n, m, np;   /* unknowns, residuals, parameters */
  dual_lm_opts o;     /* the options a round reads */
  dual_lm_pts P;      /* per-point state, element-major (P.C == C) */
  uint8_t *flags;     /* [C] scratch of dual_lsq_select */
  double *X, *P_;     /* [n][C], [np][C] */
  int32_t *idx;       /* [C] the points of the current engine call */
  int64_t k;          /* how many */
  double *xa, *pa;    /* [n][k], [np][k] */
  double *F, *J;      /* [m][k], [m * n][k] the engine's results */
  int32_t qr;         /* 1: cuBLAS rounds (then m > n) */
  int32_t mr;         /* rows of each point's A: m, or n + 1 in cuBLAS rounds */
  double *Q, *tau;    /* cuBLAS rounds: [k][m * (n + 1)] the points' [J F], [k][n + 1] */
  double **Qp, **Tp;  /* [C] pointers to each point's matrix and scalars */
} dual_lsq_dev;

/* Start every point: state DUAL_LM_NEED_J, counters zero. */
int dual_lsq_init(const dual_lsq_dev *d, void *stream);

/* idx[0..k) = the points whose state is `want`, in increasing order; k is written to *k_dev.
 * `temp` (temp_bytes) is scratch that dual_newton_select_bytes (newton_kernels.h) sizes for C. */
int dual_lsq_select(const dual_lsq_dev *d, int32_t want, int64_t *k_dev, void *temp,
                    size_t temp_bytes, void *stream);

/* The points' iterates into xa (with_x) and their parameters into pa. */
int dual_lsq_gather(const dual_lsq_dev *d, int with_x, void *stream);

/* After F and J at the selected points' iterates: each point's dual_lm_take_jacobian. */
int dual_lsq_take_jacobians(const dual_lsq_dev *d, void *stream);

/* cuBLAS rounds: Qp and Tp for the chunk's C points (once per chunk). */
int dual_lsq_qr_pointers(const dual_lsq_dev *d, void *stream);

/* cuBLAS rounds, after F and J at the selected points: each point's dual_lm_jacobian_checks,
 * then [J F] into Q for cublasDgeqrfBatched (m x (n + 1), lda m, Qp, Tp). */
int dual_lsq_qr_prepare(const dual_lsq_dev *d, void *stream);

/* cuBLAS rounds, after the factorization: each point that passed the checks gets R1 and Q1^T F
 * as its Jacobian and residuals, and its dual_lm_factor_jacobian. */
int dual_lsq_qr_take(const dual_lsq_dev *d, void *stream);

/* Each selected point's dual_lm_make_trial: its trial point into xa. */
int dual_lsq_make_trials(const dual_lsq_dev *d, void *stream);

/* After F at the trial points: each point's dual_lm_judge_trial. */
int dual_lsq_judge_trials(const dual_lsq_dev *d, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* DUAL_LSQ_KERNELS_H */
