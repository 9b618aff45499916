/*
 * lm_point.h — one point's share of a dual_lsq round, written once for the CPU loops (solve/lm.c)
 * and the GPU kernels (kernels/lsq_kernels.cu): MINPACK lmder's iteration as a state machine.  A
 * point at a new iterate takes its Jacobian (QR, scaling, the gradient test:
 * dual_lm_take_jacobian), makes a trial step for its trust region (dual_lm_make_trial), and
 * judges the residuals there (dual_lm_judge_trial: the region's update, acceptance, lmder's
 * termination tests).  The arithmetic is the same statement for statement on both devices, so
 * the results are the same bits.
 */
#ifndef DUAL_LM_POINT_H
#define DUAL_LM_POINT_H

#include "dual/portable.h"
#include "dualbatch.h" /* DUAL_SOLVE_* */
#include "solve/qr_small.h"
#include "solve/vec_small.h"

/* What a point waits for while it works (its state; a finished point has its dual_solve_status). */
enum { DUAL_LM_NEED_J = -1, DUAL_LM_TRIAL = -2 };

/* The options a round reads (dual_solve_options' fields, by value for a kernel argument). */
typedef struct dual_lm_opts {
  double f_abs, f_red, x_rel, g_tol, step_bound;
  int32_t max_iter, max_evals;
} dual_lm_opts;

/* The solver's per-point state in a chunk.  Scalars: point b's at [b].  Vectors (ipvt, diag,
 * rdiag, acnorm, qtf, step, sdiag, wa1, wa3: n entries; wa2: max(m, n); A: m * n, J's columns
 * one after another): point-major (C == 0: point b's entries contiguous from b * length) or
 * element-major over C points (entry j of point b at [j * C + b]). */
typedef struct dual_lm_pts {
  int32_t *state, *njev, *nfev;
  double *fnorm, *par, *delta, *xnorm, *gnorm, *pnorm;
  int32_t *ipvt;
  double *diag, *A, *rdiag, *acnorm, *qtf, *step, *sdiag, *wa1, *wa2, *wa3;
  int64_t C;
} dual_lm_pts;

/* Point b's vector `arr` (length len) and the stride of its entries. */
#define DUAL_LM_VEC(P, arr, b, len) ((P)->C ? (P)->arr + (b) : (P)->arr + (int64_t)(b) * (len))
#define DUAL_LM_STRIDE(P) ((P)->C ? (P)->C : (int64_t)1)

/* The round's options from the caller's (checked) options and the residual-evaluation limit. */
DUAL_INLINE dual_lm_opts dual_lm_opts_of(const dual_solve_options *o, int max_evals) {
  dual_lm_opts r;
  r.f_abs = o->f_abs, r.f_red = o->f_red, r.x_rel = o->x_rel, r.g_tol = o->g_tol;
  r.step_bound = o->step_bound, r.max_iter = o->max_iter, r.max_evals = max_evals;
  return r;
}

/* The checks of point b's new Jacobian J at its iterate, with F there (m residuals): F's entry r
 * at F[r * fs], J's element (r, c) at J[(r * n + c) * fs].  Where F or J is not finite the state
 * becomes DUAL_SOLVE_NONFINITE and 0 is returned; else the counts move on (the first Jacobian
 * also sets fnorm = ||F||) and 1: the point's dual_lm_factor_jacobian follows. */
DUAL_INLINE int dual_lm_jacobian_checks(const dual_lm_pts *P, int64_t b, int n, int m, const double *F,
                                        const double *J, int64_t fs) {
  const int ffin = dual_sv_finite(F, m, fs);
  if (!ffin || !dual_sv_finite(J, (int64_t)m * n, fs)) {
    if (P->njev[b] == 0) P->fnorm[b] = ffin ? dual_sv_norm(F, m, fs) : NAN;
    P->state[b] = DUAL_SOLVE_NONFINITE;
    return 0;
  }
  if (P->njev[b] == 0) {
    P->nfev[b] = 1;
    P->fnorm[b] = dual_sv_norm(F, m, fs);
  }
  P->njev[b] += 1;
  return 1;
}

/* After dual_lm_jacobian_checks: factor the point's Jacobian, scale, the gradient test; the
 * point's first Jacobian also sets the scaling and the trust region.  J has mr rows (stride and
 * layout as above) and F mr entries: the m rows of the Jacobian and residuals themselves, or (the
 * GPU's cuBLAS rounds, kernels/lsq_kernels.cu) the n + 1 rows of R1 and Q1^T F from an unpivoted
 * QR of [J F], which have the same column norms, the same Q^T F after the pivoted QR below and so
 * the same Levenberg–Marquardt steps but for rounding.  The point's A keeps mr rows (its leading
 * dimension for dual_lm_make_trial and dual_lm_judge_trial).  The state becomes DUAL_LM_TRIAL or
 * a dual_solve_status. */
DUAL_INLINE void dual_lm_factor_jacobian(const dual_lm_opts *o, const dual_lm_pts *P, int64_t b, int n,
                                         int m, int mr, const double *F, const double *J, int64_t fs,
                                         const double *x, int64_t xs) {
  const int64_t s = DUAL_LM_STRIDE(P);
  double *A = DUAL_LM_VEC(P, A, b, (int64_t)m * n), *diag = DUAL_LM_VEC(P, diag, b, n);
  double *rdiag = DUAL_LM_VEC(P, rdiag, b, n), *acnorm = DUAL_LM_VEC(P, acnorm, b, n);
  double *qtf = DUAL_LM_VEC(P, qtf, b, n);
  int32_t *ipvt = DUAL_LM_VEC(P, ipvt, b, n);
  const int first = P->njev[b] == 1;
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < n; ++j) A[((int64_t)j * mr + r) * s] = J[((int64_t)r * n + j) * fs];
  dual_qr_factor(mr, n, A, mr, ipvt, rdiag, acnorm, DUAL_LM_VEC(P, wa1, b, n), s);
  if (first) {
    for (int j = 0; j < n; ++j) diag[j * s] = acnorm[j * s] != 0.0 ? acnorm[j * s] : 1.0;
    double *w = DUAL_LM_VEC(P, wa3, b, n);
    for (int j = 0; j < n; ++j) w[j * s] = diag[j * s] * x[j * xs];
    P->xnorm[b] = dual_sv_norm(w, n, s);
    P->delta[b] = o->step_bound * P->xnorm[b];
    if (P->delta[b] == 0.0) P->delta[b] = o->step_bound;
    P->par[b] = 0.0;
  }
  double *wq = DUAL_LM_VEC(P, wa2, b, m > n ? m : n); /* F, to become Q^T F */
  for (int r = 0; r < mr; ++r) wq[r * s] = F[r * fs];
  dual_qr_apply_qt(mr, n, A, mr, rdiag, wq, qtf, s);
  /* the cosine of the largest angle between F and a column of J */
  double gnorm = 0.0;
  const double fn = P->fnorm[b];
  if (fn != 0.0)
    for (int j = 0; j < n; ++j) {
      const int l = ipvt[j * s];
      if (acnorm[l * s] == 0.0) continue;
      double sum = 0.0;
      for (int r = 0; r <= j; ++r) sum += A[((int64_t)j * mr + r) * s] * (qtf[r * s] / fn);
      const double g = fabs(sum / acnorm[l * s]);
      if (g > gnorm) gnorm = g;
    }
  P->gnorm[b] = gnorm;
  if (gnorm <= o->g_tol || fn <= o->f_abs) {
    P->state[b] = DUAL_SOLVE_CONVERGED;
    return;
  }
  if (o->max_iter > 0 && P->njev[b] > o->max_iter) {
    P->state[b] = DUAL_SOLVE_MAX_ITER;
    return;
  }
  for (int j = 0; j < n; ++j)
    if (acnorm[j * s] > diag[j * s]) diag[j * s] = acnorm[j * s];
  P->state[b] = DUAL_LM_TRIAL;
}

/* Point b's new Jacobian at its iterate x (stride xs), with F there (the layouts above): the
 * checks, then the factorization of the m x n J itself. */
DUAL_INLINE void dual_lm_take_jacobian(const dual_lm_opts *o, const dual_lm_pts *P, int64_t b, int n,
                                       int m, const double *F, const double *J, int64_t fs,
                                       const double *x, int64_t xs) {
  if (dual_lm_jacobian_checks(P, b, n, m, F, J, fs)) dual_lm_factor_jacobian(o, P, b, n, m, m, F, J, fs, x, xs);
}

/* Point b's trial point xt = x + p (x stride xs, xt stride ts), p the step from the
 * Levenberg–Marquardt parameter for the current trust region; mr: the rows of the point's A
 * (dual_lm_factor_jacobian's). */
DUAL_INLINE void dual_lm_make_trial(const dual_lm_pts *P, int64_t b, int n, int m, int mr, const double *x,
                                    int64_t xs, double *xt, int64_t ts) {
  const int64_t s = DUAL_LM_STRIDE(P);
  double *A = DUAL_LM_VEC(P, A, b, (int64_t)m * n), *diag = DUAL_LM_VEC(P, diag, b, n);
  double *p = DUAL_LM_VEC(P, step, b, n), *w3 = DUAL_LM_VEC(P, wa3, b, n);
  dual_lm_parameter(n, A, mr, DUAL_LM_VEC(P, ipvt, b, n), diag, DUAL_LM_VEC(P, qtf, b, n),
                    P->delta[b], &P->par[b], p, DUAL_LM_VEC(P, sdiag, b, n),
                    DUAL_LM_VEC(P, wa1, b, n), DUAL_LM_VEC(P, wa2, b, m > n ? m : n), s);
  for (int j = 0; j < n; ++j) p[j * s] = -p[j * s];
  for (int j = 0; j < n; ++j) w3[j * s] = diag[j * s] * p[j * s];
  P->pnorm[b] = dual_sv_norm(w3, n, s);
  if (P->njev[b] == 1 && P->nfev[b] == 1 && P->pnorm[b] < P->delta[b]) P->delta[b] = P->pnorm[b];
  for (int j = 0; j < n; ++j) xt[j * ts] = x[j * xs] + p[j * s];
}

/* Point b's verdict on its trial point xt (stride ts) with the m residuals Ft there (stride fs):
 * the ratio of actual to predicted reduction moves the trust region; an accepted xt becomes x
 * (stride xs); MINPACK's termination tests.  mr: the rows of the point's A.  The state becomes
 * DUAL_LM_NEED_J (accepted), DUAL_LM_TRIAL (rejected) or a dual_solve_status. */
DUAL_INLINE void dual_lm_judge_trial(const dual_lm_opts *o, const dual_lm_pts *P, int64_t b, int n,
                                     int m, int mr, const double *Ft, int64_t fs, const double *xt,
                                     int64_t ts, double *x, int64_t xs) {
  const int64_t s = DUAL_LM_STRIDE(P);
  const double *A = DUAL_LM_VEC(P, A, b, (int64_t)m * n), *p = DUAL_LM_VEC(P, step, b, n);
  const int32_t *ipvt = DUAL_LM_VEC(P, ipvt, b, n);
  double *w3 = DUAL_LM_VEC(P, wa3, b, n);
  P->nfev[b] += 1;
  const double fn = P->fnorm[b];
  const int finite = dual_sv_finite(Ft, m, fs);
  const double fn1 = finite ? dual_sv_norm(Ft, m, fs) : INFINITY;
  double actred = -1.0;
  if (0.1 * fn1 < fn) actred = 1.0 - (fn1 / fn) * (fn1 / fn);
  /* the predicted reduction, from R P^T p */
  for (int j = 0; j < n; ++j) {
    w3[j * s] = 0.0;
    const double t = p[ipvt[j * s] * s];
    for (int r = 0; r <= j; ++r) w3[r * s] += A[((int64_t)j * mr + r) * s] * t;
  }
  const double t1 = dual_sv_norm(w3, n, s) / fn;
  const double t2 = sqrt(P->par[b]) * P->pnorm[b] / fn;
  const double prered = t1 * t1 + t2 * t2 / 0.5;
  const double dirder = -(t1 * t1 + t2 * t2);
  const double ratio = prered != 0.0 ? actred / prered : 0.0;
  if (ratio <= 0.25) {
    double temp = actred >= 0.0 ? 0.5 : 0.5 * dirder / (dirder + 0.5 * actred);
    if (0.1 * fn1 >= fn || temp < 0.1) temp = 0.1;
    const double bound = P->pnorm[b] / 0.1;
    P->delta[b] = temp * (P->delta[b] < bound ? P->delta[b] : bound);
    P->par[b] /= temp;
  } else if (P->par[b] == 0.0 || ratio >= 0.75) {
    P->delta[b] = P->pnorm[b] / 0.5;
    P->par[b] *= 0.5;
  }
  const int accept = ratio >= 1e-4;
  if (accept) {
    const double *diag = DUAL_LM_VEC(P, diag, b, n);
    for (int j = 0; j < n; ++j) x[j * xs] = xt[j * ts];
    for (int j = 0; j < n; ++j) w3[j * s] = diag[j * s] * x[j * xs];
    P->xnorm[b] = dual_sv_norm(w3, n, s);
    P->fnorm[b] = fn1;
  }
  const double ftol = o->f_red, xtol = o->x_rel;
  const int small_red = fabs(actred) <= ftol && prered <= ftol && 0.5 * ratio <= 1.0;
  const int small_delta = P->delta[b] <= xtol * P->xnorm[b];
  if (small_red || small_delta || P->fnorm[b] <= o->f_abs) {
    P->state[b] = DUAL_SOLVE_CONVERGED;
  } else if (P->nfev[b] >= o->max_evals) {
    P->state[b] = DUAL_SOLVE_MAX_ITER;
  } else if ((fabs(actred) <= DBL_EPSILON && prered <= DBL_EPSILON && 0.5 * ratio <= 1.0) ||
             P->delta[b] <= DBL_EPSILON * P->xnorm[b] || P->gnorm[b] <= DBL_EPSILON) {
    P->state[b] = DUAL_SOLVE_NO_PROGRESS;
  } else {
    P->state[b] = accept ? DUAL_LM_NEED_J : DUAL_LM_TRIAL;
  }
}

#endif /* DUAL_LM_POINT_H */
