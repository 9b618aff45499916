/*
 * hybrid.c — dual_newton's last fallback (hybrid.h): Powell's hybrid method as MINPACK's hybrj
 * runs it, one point at a time on the host: a dogleg step in the trust region ||p|| <= delta
 * between the Gauss-Newton step and the steepest descent, the region updated by the ratio of
 * actual to predicted reduction, and Broyden rank-1 updates of the Jacobian between exact ones (a
 * new one after two failed steps in a row).  Unscaled, as hybrj1 runs hybrj (mode 2, diag = 1).
 * Written with the explicit Jacobian (an LU per step) instead of hybrj's updated
 * QR factors: the same steps up to rounding.  Only points that Newton, the trust region and both
 * restarts left unsolved come here, so its cost does not matter.
 */
#include "solve/hybrid.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "solve/newton_point.h"
#include "solve/solve_common.h"

typedef struct hyb {
  dual_context *ctx;
  const dual_program *prog;
  const double *p;
  int n, evals, max_evals;
} hyb;

static int residual(hyb *h, const double *x, double *F, double *J) {
  ++h->evals;
  return dual_solve_residuals(h->ctx, h->prog, 1, x, h->p, F, J);
}

/* The dogleg step p for B (row-major n x n), F and the radius delta.  w: 4n
 * doubles of work, Bw: n * n, piv: n.  Returns 1 when B is singular. */
static int dogleg(int n, const double *B, const double *F, double delta, double *p,
                  double *w, double *Bw, int32_t *piv) {
  double *gn = w, *g = w + n, *Bg = w + 2 * n;
  memcpy(Bw, B, sizeof(double) * (size_t)n * (size_t)n);
  for (int j = 0; j < n; ++j) gn[j] = -F[j];
  const int singular = dual_lu_factor(Bw, n, n, 1, piv, 1);
  if (!singular) dual_lu_solve(Bw, n, n, 1, piv, 1, gn, 1);
  double gnorm_s = 0.0; /* ||gn|| */
  for (int j = 0; j < n; ++j) gnorm_s += gn[j] * gn[j];
  gnorm_s = sqrt(gnorm_s);
  if (!singular && dual_sv_finite(gn, n, 1) && gnorm_s <= delta) {
    memcpy(p, gn, sizeof(double) * (size_t)n);
    return 0;
  }
  /* the gradient g = B^T F, and the Cauchy point along -g */
  for (int j = 0; j < n; ++j) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += B[i * n + j] * F[i];
    g[j] = s;
  }
  const double gs = dual_solve_norm(g, n);
  if (gs == 0.0) return 1;
  for (int i = 0; i < n; ++i) { /* B (g / ||g||) */
    double s = 0.0;
    for (int j = 0; j < n; ++j) s += B[i * n + j] * (g[j] / gs);
    Bg[i] = s;
  }
  const double bgn = dual_solve_norm(Bg, n);
  const double sgnorm = bgn > 0.0 ? gs / (bgn * bgn) : delta; /* the Cauchy step's length */
  if (singular || !dual_sv_finite(gn, n, 1) || sgnorm >= delta) {
    for (int j = 0; j < n; ++j) p[j] = -delta * (g[j] / gs);
    return 0;
  }
  /* the dogleg between the Cauchy point and the Gauss-Newton point, hybrj's formula for the
   * weight alpha of the Gauss-Newton step (||p|| = delta) */
  const double bnorm = dual_solve_norm(F, n), qnorm = gnorm_s;
  double temp = (bnorm / gs) * (bnorm / qnorm) * (sgnorm / delta);
  temp = temp - (delta / qnorm) * (sgnorm / delta) * (sgnorm / delta) +
         sqrt((temp - delta / qnorm) * (temp - delta / qnorm) +
              (1.0 - (delta / qnorm) * (delta / qnorm)) * (1.0 - (sgnorm / delta) * (sgnorm / delta)));
  const double alpha = (delta / qnorm) * (1.0 - (sgnorm / delta) * (sgnorm / delta)) / temp;
  const double sd = (1.0 - alpha) * fmin(sgnorm, delta);
  for (int j = 0; j < n; ++j) p[j] = alpha * gn[j] - sd * (g[j] / gs);
  return 0;
}

int dual_hybrid_point(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                      double *x, const double *p, int32_t *steps) {
  const int n = dual_program_num_inputs(prog);
  const size_t nn = (size_t)n * (size_t)n;
  hyb h = {ctx, prog, p, n, 0, 100 * (n + 1)};
  double *mem = malloc(sizeof(double) * (3 * nn + 9 * (size_t)n));
  int32_t *piv = malloc(sizeof(int32_t) * (size_t)n);
  if (mem == NULL || piv == NULL) {
    free(mem), free(piv);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for the hybrid fallback");
  }
  double *B = mem, *Bw = B + nn, *J = Bw + nn, *F = J + nn, *F1 = F + n, *x1 = F1 + n, *step = x1 + n;
  double *pred = step + n, *w = pred + n;
  const double xtol = o->x_rel > 0.0 ? o->x_rel : 1.4901161193847656e-08;
  int st = residual(&h, x, F, J);
  double fnorm = st == DUAL_SUCCESS ? dual_solve_norm(F, n) : 0.0;
  double delta = 0.0;
  /* first: before the first Jacobian (the radius's start); iter1: before the first
   * accepted step (hybrj's iter = 1: the radius shrinks to the step's length) */
  int first = 1, iter1 = 1, ncfail = 0, ncsuc = 0, nslow1 = 0, nslow2 = 0, done = 0, accepted = 0;
  while (st == DUAL_SUCCESS && !done && dual_sv_finite(F, n, 1) && dual_sv_finite(J, (int64_t)nn, 1)) {
    /* a new exact Jacobian */
    memcpy(B, J, sizeof(double) * nn);
    if (first) {
      double xn = 0.0;
      for (int j = 0; j < n; ++j) xn += x[j] * x[j];
      xn = sqrt(xn);
      delta = o->step_bound * (xn > 0.0 ? xn : 1.0);
      first = 0;
    }
    int jeval = 1;
    ncfail = 0;
    while (!done) {
      dogleg(n, B, F, delta, step, w, Bw, piv);
      double pnorm = 0.0, xnorm = 0.0;
      for (int j = 0; j < n; ++j) pnorm += step[j] * step[j];
      pnorm = sqrt(pnorm);
      if (iter1) delta = fmin(delta, pnorm);
      for (int j = 0; j < n; ++j) x1[j] = x[j] + step[j];
      st = residual(&h, x1, F1, J);
      if (st != DUAL_SUCCESS) break;
      const int ok1 = dual_sv_finite(F1, n, 1);
      const double fnorm1 = ok1 ? dual_solve_norm(F1, n) : INFINITY;
      const double actred = fnorm1 < fnorm ? 1.0 - (fnorm1 / fnorm) * (fnorm1 / fnorm) : -1.0;
      for (int i = 0; i < n; ++i) { /* the model's F + B p */
        double s = F[i];
        for (int j = 0; j < n; ++j) s += B[i * n + j] * step[j];
        pred[i] = s;
      }
      const double tn = dual_solve_norm(pred, n);
      const double prered = tn < fnorm ? 1.0 - (tn / fnorm) * (tn / fnorm) : 0.0;
      const double ratio = prered > 0.0 ? actred / prered : 0.0;
      if (ratio < 0.1) {
        ncsuc = 0, ++ncfail, delta *= 0.5;
      } else {
        ncfail = 0, ++ncsuc;
        if (ratio >= 0.5 || ncsuc > 1) delta = fmax(delta, pnorm / 0.5);
        if (fabs(ratio - 1.0) <= 0.1) delta = pnorm / 0.5;
      }
      const int accept = ratio >= 1e-4 && ok1;
      if (accept) {
        ++accepted, iter1 = 0;
        memcpy(x, x1, sizeof(double) * (size_t)n);
        memcpy(F, F1, sizeof(double) * (size_t)n);
        fnorm = fnorm1;
      }
      for (int j = 0; j < n; ++j) xnorm += x[j] * x[j];
      xnorm = sqrt(xnorm);
      nslow1 = actred >= 0.001 ? 0 : nslow1 + 1;
      if (jeval) nslow2 = actred >= 0.1 ? 0 : nslow2 + 1;
      if (delta <= xtol * xnorm || fnorm == 0.0 || h.evals >= h.max_evals ||
          0.1 * fmax(0.1 * delta, pnorm) <= DBL_EPSILON * xnorm || nslow2 == 5 || nslow1 == 10 || !ok1)
        done = 1;
      if (done || ncfail == 2) break; /* a new exact Jacobian (J holds the one at x1) */
      /* Broyden: B += (F1 - F_old - B p) p^T / ||p||^2, with F_old + B p = pred */
      if (pnorm > 0.0)
        for (int i = 0; i < n; ++i) {
          const double r = (F1[i] - pred[i]) / pnorm;
          for (int j = 0; j < n; ++j) B[i * n + j] += r * (step[j] / pnorm);
        }
      jeval = 0;
    }
    if (!done && st == DUAL_SUCCESS) st = residual(&h, x, F, J); /* J at the current x */
  }
  if (steps != NULL) *steps = accepted;
  free(mem), free(piv);
  return st;
}
