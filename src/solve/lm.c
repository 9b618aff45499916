/*
 * lm.c — dual_lsq: Levenberg–Marquardt for a batch of least-squares problems, the trust-region
 * method of MINPACK's lmder (Moré 1978: QR with column pivoting, the parameter from the secular
 * equation, scaling by the Jacobian's column norms), per point as a state machine so that a
 * chunk of points advances in rounds: one engine call for the Jacobians of the points that took
 * a step, one for the residuals at every point's trial step.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dualbatch.h"
#include "solve/qr_small.h"
#include "solve/solve_common.h"

enum { NEED_J = -1, TRIAL = -2 };

typedef struct lm {
  dual_context *ctx;
  const dual_program *prog;
  dual_solve_options o;
  int n, m, np, threads, max_evals;
  double *x;
  int64_t ldx;
  const double *p;
  int64_t ldp;
  /* per point of the chunk */
  int32_t *state, *njev, *nfev, *ipvt;
  double *fnorm, *par, *delta, *xnorm, *gnorm, *pnorm;
  double *diag, *A, *rdiag, *acnorm, *qtf, *step, *sdiag, *wa1, *wa2, *wa3;
  /* compacted engine buffers */
  int64_t *idx;
  double *xa, *pa, *Fa, *Ja;
} lm;

#define PT(arr, b, len) ((arr) + (int64_t)(b) * (len))

/* New Jacobian at an accepted point (row i of point slot i of Fa, Ja): factor, scale, gradient
 * test; the point's first one also sets the scaling and the trust region. */
static void take_jacobian(lm *L, int64_t i, int64_t b) {
  const int n = L->n, m = L->m;
  const double *Fi = PT(L->Fa, i, m), *Ji = PT(L->Ja, i, (int64_t)m * n);
  double *A = PT(L->A, b, (int64_t)m * n), *diag = PT(L->diag, b, n);
  double *rdiag = PT(L->rdiag, b, n), *acnorm = PT(L->acnorm, b, n), *qtf = PT(L->qtf, b, n);
  int32_t *ipvt = PT(L->ipvt, b, n);
  const double *xb = L->x + b * L->ldx;
  if (!dual_solve_finite(Fi, m) || !dual_solve_finite(Ji, (int64_t)m * n)) {
    if (L->njev[b] == 0) L->fnorm[b] = dual_solve_finite(Fi, m) ? dual_solve_norm(Fi, m) : NAN;
    L->state[b] = DUAL_SOLVE_NONFINITE;
    return;
  }
  const int first = L->njev[b] == 0;
  L->njev[b] += 1;
  if (first) {
    L->nfev[b] = 1;
    L->fnorm[b] = dual_solve_norm(Fi, m);
  }
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < n; ++j) A[(int64_t)j * m + r] = Ji[(int64_t)r * n + j];
  dual_qr_factor(m, n, A, m, ipvt, rdiag, acnorm, PT(L->wa1, b, n));
  if (first) {
    for (int j = 0; j < n; ++j) diag[j] = acnorm[j] != 0.0 ? acnorm[j] : 1.0;
    double *w = PT(L->wa3, b, n);
    for (int j = 0; j < n; ++j) w[j] = diag[j] * xb[j];
    L->xnorm[b] = dual_solve_norm(w, n);
    L->delta[b] = L->o.step_bound * L->xnorm[b];
    if (L->delta[b] == 0.0) L->delta[b] = L->o.step_bound;
    L->par[b] = 0.0;
  }
  double *wq = PT(L->wa2, b, m > n ? m : n); /* F, to become Q^T F */
  for (int r = 0; r < m; ++r) wq[r] = Fi[r];
  dual_qr_apply_qt(m, n, A, m, rdiag, wq, qtf);
  /* the cosine of the largest angle between F and a column of J */
  double gnorm = 0.0;
  const double fn = L->fnorm[b];
  if (fn != 0.0)
    for (int j = 0; j < n; ++j) {
      const int l = ipvt[j];
      if (acnorm[l] == 0.0) continue;
      double sum = 0.0;
      for (int r = 0; r <= j; ++r) sum += A[(int64_t)j * m + r] * (qtf[r] / fn);
      const double g = fabs(sum / acnorm[l]);
      if (g > gnorm) gnorm = g;
    }
  L->gnorm[b] = gnorm;
  if (gnorm <= L->o.g_tol || fn <= L->o.f_abs) {
    L->state[b] = DUAL_SOLVE_CONVERGED;
    return;
  }
  if (L->o.max_iter > 0 && L->njev[b] > L->o.max_iter) {
    L->state[b] = DUAL_SOLVE_MAX_ITER;
    return;
  }
  for (int j = 0; j < n; ++j)
    if (acnorm[j] > diag[j]) diag[j] = acnorm[j];
  L->state[b] = TRIAL;
}

/* The trial step for the current trust region: step = x + p, p from the LM parameter. */
static void make_trial(lm *L, int64_t b) {
  const int n = L->n, m = L->m;
  double *A = PT(L->A, b, (int64_t)m * n), *diag = PT(L->diag, b, n), *p = PT(L->step, b, n);
  double *w1 = PT(L->wa1, b, n), *w2 = PT(L->wa2, b, m > n ? m : n), *w3 = PT(L->wa3, b, n);
  dual_lm_parameter(n, A, m, PT(L->ipvt, b, n), diag, PT(L->qtf, b, n), L->delta[b], &L->par[b], p,
                    PT(L->sdiag, b, n), w1, w2);
  for (int j = 0; j < n; ++j) p[j] = -p[j];
  for (int j = 0; j < n; ++j) w3[j] = diag[j] * p[j];
  L->pnorm[b] = dual_solve_norm(w3, n);
  if (L->njev[b] == 1 && L->nfev[b] == 1 && L->pnorm[b] < L->delta[b]) L->delta[b] = L->pnorm[b];
}

/* Judge the trial point's residuals Ft: the ratio of actual to predicted reduction moves the
 * trust region; accept or not; MINPACK's termination tests. */
static void judge_trial(lm *L, int64_t b, const double *Ft, const double *xt) {
  const int n = L->n, m = L->m;
  const double *A = PT(L->A, b, (int64_t)m * n), *p = PT(L->step, b, n);
  const int32_t *ipvt = PT(L->ipvt, b, n);
  double *w3 = PT(L->wa3, b, n);
  L->nfev[b] += 1;
  const double fn = L->fnorm[b];
  const int finite = dual_solve_finite(Ft, m);
  const double fn1 = finite ? dual_solve_norm(Ft, m) : INFINITY;
  double actred = -1.0;
  if (0.1 * fn1 < fn) actred = 1.0 - (fn1 / fn) * (fn1 / fn);
  /* the predicted reduction, from R P^T p */
  for (int j = 0; j < n; ++j) {
    w3[j] = 0.0;
    const double t = p[ipvt[j]];
    for (int r = 0; r <= j; ++r) w3[r] += A[(int64_t)j * m + r] * t;
  }
  const double t1 = dual_solve_norm(w3, n) / fn;
  const double t2 = sqrt(L->par[b]) * L->pnorm[b] / fn;
  const double prered = t1 * t1 + t2 * t2 / 0.5;
  const double dirder = -(t1 * t1 + t2 * t2);
  const double ratio = prered != 0.0 ? actred / prered : 0.0;
  if (ratio <= 0.25) {
    double temp = actred >= 0.0 ? 0.5 : 0.5 * dirder / (dirder + 0.5 * actred);
    if (0.1 * fn1 >= fn || temp < 0.1) temp = 0.1;
    const double bound = L->pnorm[b] / 0.1;
    L->delta[b] = temp * (L->delta[b] < bound ? L->delta[b] : bound);
    L->par[b] /= temp;
  } else if (L->par[b] == 0.0 || ratio >= 0.75) {
    L->delta[b] = L->pnorm[b] / 0.5;
    L->par[b] *= 0.5;
  }
  const int accept = ratio >= 1e-4;
  if (accept) {
    double *xb = L->x + b * L->ldx, *diag = PT(L->diag, b, n);
    for (int j = 0; j < n; ++j) xb[j] = xt[j];
    for (int j = 0; j < n; ++j) w3[j] = diag[j] * xb[j];
    L->xnorm[b] = dual_solve_norm(w3, n);
    L->fnorm[b] = fn1;
  }
  const double ftol = L->o.f_red, xtol = L->o.x_rel;
  const int small_red = fabs(actred) <= ftol && prered <= ftol && 0.5 * ratio <= 1.0;
  const int small_delta = L->delta[b] <= xtol * L->xnorm[b];
  if (small_red || small_delta || L->fnorm[b] <= L->o.f_abs) {
    L->state[b] = DUAL_SOLVE_CONVERGED;
  } else if (L->nfev[b] >= L->max_evals) {
    L->state[b] = DUAL_SOLVE_MAX_ITER;
  } else if ((fabs(actred) <= DBL_EPSILON && prered <= DBL_EPSILON && 0.5 * ratio <= 1.0) ||
             L->delta[b] <= DBL_EPSILON * L->xnorm[b] || L->gnorm[b] <= DBL_EPSILON) {
    L->state[b] = DUAL_SOLVE_NO_PROGRESS;
  } else {
    L->state[b] = accept ? NEED_J : TRIAL;
  }
}

static int solve_chunk(lm *L, int64_t b0, int64_t count) {
  const int n = L->n, m = L->m, np = L->np;
  double *x0 = L->x;
  const double *p0 = L->p;
  L->x = x0 + b0 * L->ldx;
  L->p = p0 != NULL ? p0 + b0 * L->ldp : NULL;
  for (int64_t b = 0; b < count; ++b) L->state[b] = NEED_J, L->njev[b] = 0, L->nfev[b] = 0;
  int st = DUAL_SUCCESS;
  for (;;) {
    /* Jacobians where a step was accepted (or at the start) */
    int64_t k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (L->state[b] == NEED_J) L->idx[k++] = b;
    if (k > 0) {
      dual_solve_gather(k, L->idx, n, np, L->x, L->ldx, L->p, L->ldp, L->xa, L->pa, L->threads);
      st = dual_solve_residuals(L->ctx, L->prog, k, L->xa, L->pa, L->Fa, L->Ja);
      if (st != DUAL_SUCCESS) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (k >= 64)
      for (int64_t i = 0; i < k; ++i) take_jacobian(L, i, L->idx[i]);
    }
    /* trial steps of every point still going */
    k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (L->state[b] == TRIAL) L->idx[k++] = b;
    if (k == 0) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (k >= 64)
    for (int64_t i = 0; i < k; ++i) {
      const int64_t b = L->idx[i];
      make_trial(L, b);
      const double *xb = L->x + b * L->ldx, *p = PT(L->step, b, n);
      for (int j = 0; j < n; ++j) L->xa[i * n + j] = xb[j] + p[j];
      if (np > 0)
        for (int j = 0; j < np; ++j) L->pa[i * np + j] = L->p[b * L->ldp + j];
    }
    st = dual_solve_residuals(L->ctx, L->prog, k, L->xa, L->pa, L->Fa, NULL);
    if (st != DUAL_SUCCESS) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (k >= 64)
    for (int64_t i = 0; i < k; ++i) judge_trial(L, L->idx[i], PT(L->Fa, i, m), PT(L->xa, i, n));
  }
  L->x = x0, L->p = p0;
  return st;
}

int dual_lsq(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt, int64_t B,
             double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
             double *fnorm) {
  const char *fn = "dual_lsq";
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (prog == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: program is NULL", fn);
  lm L;
  memset(&L, 0, sizeof L);
  int st = dual_solve_check_options(ctx, fn, opt, &L.o);
  if (st != DUAL_SUCCESS) return st;
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  if (m < n || n < 1)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s: the program has %d outputs and %d inputs; least squares needs m >= n >= 1",
                     fn, m, n);
  st = dual_solve_check_arrays(ctx, fn, prog, B, x, ldx, p, ldp);
  int device_mem = 0;
  if (st == DUAL_SUCCESS) st = dual_solve_check_memory(ctx, fn, 0, x, p, info, iters, fnorm, &device_mem);
  if (st != DUAL_SUCCESS) return st;
  dual_clear_error(ctx);
  if (B == 0) return DUAL_SUCCESS;
  L.max_evals = L.o.max_evals > 0 ? L.o.max_evals : 100 * (n + 1);
  const int64_t C = dual_solve_chunk(B, n, 2 * m, np);
  L.ctx = ctx, L.prog = prog, L.n = n, L.m = m, L.np = np, L.threads = dual_solve_threads(ctx);
  L.x = x, L.ldx = ldx, L.p = np > 0 ? p : NULL, L.ldp = ldp;
  const size_t c = (size_t)C, N = (size_t)n, M = (size_t)m, MN = M * N, W = M > N ? M : N;
  L.state = malloc(4 * c), L.njev = malloc(4 * c), L.nfev = malloc(4 * c), L.ipvt = malloc(4 * c * N);
  L.fnorm = malloc(8 * c), L.par = malloc(8 * c), L.delta = malloc(8 * c), L.xnorm = malloc(8 * c);
  L.gnorm = malloc(8 * c), L.pnorm = malloc(8 * c);
  L.diag = malloc(8 * c * N), L.A = malloc(8 * c * MN), L.rdiag = malloc(8 * c * N);
  L.acnorm = malloc(8 * c * N), L.qtf = malloc(8 * c * N);
  L.step = malloc(8 * c * N), L.sdiag = malloc(8 * c * N), L.wa1 = malloc(8 * c * N);
  L.wa2 = malloc(8 * c * W), L.wa3 = malloc(8 * c * N);
  L.idx = malloc(8 * c), L.xa = malloc(8 * c * N), L.pa = malloc(8 * c * (np > 0 ? (size_t)np : 1));
  L.Fa = malloc(8 * c * M), L.Ja = malloc(8 * c * MN);
  void *all[] = {L.state, L.njev, L.nfev, L.ipvt, L.fnorm, L.par, L.delta, L.xnorm, L.gnorm,
                 L.pnorm, L.diag, L.A, L.rdiag, L.acnorm, L.qtf, L.step, L.sdiag, L.wa1,
                 L.wa2, L.wa3, L.idx, L.xa, L.pa, L.Fa, L.Ja};
  const int nall = (int)(sizeof all / sizeof all[0]);
  int oom = 0;
  for (int i = 0; i < nall; ++i) oom |= all[i] == NULL;
  if (oom) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for the work arrays of %lld points",
                   fn, (long long)C);
  } else {
    for (int64_t b0 = 0; b0 < B; b0 += C) {
      const int64_t cnt = B - b0 < C ? B - b0 : C;
      st = solve_chunk(&L, b0, cnt);
      if (st != DUAL_SUCCESS) break;
      for (int64_t b = 0; b < cnt; ++b) {
        if (info != NULL) info[b0 + b] = L.state[b];
        if (iters != NULL) iters[b0 + b] = L.njev[b];
        if (fnorm != NULL) fnorm[b0 + b] = L.fnorm[b];
      }
    }
  }
  for (int i = 0; i < nall; ++i) free(all[i]);
  return st;
}
