/*
 * newton_point.h — one point's share of a dual_newton round, written once for the CPU loops
 * (solve/newton.c) and the GPU kernels (kernels/newton_kernels.cu): the tests on F and J, the LU
 * step and the first trial point (dual_newton_step), and the line search's verdict on a trial
 * point (dual_newton_judge).  Vectors are strided (entry j of v at v[j * s]) so that the CPU passes
 * a point's contiguous arrays and a GPU thread its column of element-major batch arrays.  The
 * arithmetic is the same statement for statement on both, so the results are the same bits.
 */
#ifndef DUAL_NEWTON_POINT_H
#define DUAL_NEWTON_POINT_H

#include "dual/portable.h"
#include "dualbatch.h" /* DUAL_SOLVE_* */
#include "solve/lu_small.h"
#include "solve/vec_small.h"

/* The solver's per-point state in a chunk (point b at index b); `state` is DUAL_NEWTON_ACTIVE
 * while the point works, else its dual_solve_status. */
typedef struct dual_newton_pts {
  int32_t *state, *steps, *reductions, *damped, *last;
  double *fn, *fn0, *alpha, *phi0;
} dual_newton_pts;

/* The options a round reads (dual_solve_options' fields, by value for a kernel argument), and
 * J's structural band (band_lo, band_hi: its lower and upper bandwidths, from the program,
 * dual_solve_jacobian_band; -1: dense), to which the LU keeps (lu_small.h). */
typedef struct dual_newton_opts {
  double f_abs, f_rel, x_abs, x_rel;
  int32_t max_iter, line_search;
  int32_t band_lo, band_hi;
} dual_newton_opts;

/* The round's options from the caller's (checked) options; J taken as dense. */
DUAL_INLINE dual_newton_opts dual_newton_opts_of(const dual_solve_options *o) {
  dual_newton_opts r;
  r.f_abs = o->f_abs, r.f_rel = o->f_rel, r.x_abs = o->x_abs, r.x_rel = o->x_rel;
  r.max_iter = o->max_iter, r.line_search = o->line_search;
  r.band_lo = -1, r.band_hi = -1;
  return r;
}

/* A bandwidth of the options for n unknowns (a negative or too large one: n - 1). */
DUAL_INLINE int dual_newton_band(int32_t w, int n) { return w < 0 || w > n - 1 ? n - 1 : (int)w; }

enum { DUAL_NEWTON_ACTIVE = -1, DUAL_NEWTON_MAX_REDUCTIONS = 40, DUAL_NEWTON_MAX_DAMPED = 10 };

/* What a point waits for between rounds (a round: F and J at every point not done, then each
 * point's verdict and step): done, F and J at its iterate, or at its trial point. */
enum { DUAL_NEWTON_DONE = 0, DUAL_NEWTON_NEED_J = 1, DUAL_NEWTON_NEED_F = 2 };

/* The phase after a round: the trial point where the point goes on judging one (more), else its
 * iterate while it works, else done. */
DUAL_INLINE int32_t dual_newton_next_phase(const dual_newton_pts *P, int64_t b, int more) {
  return more ? DUAL_NEWTON_NEED_F : P->state[b] == DUAL_NEWTON_ACTIVE ? DUAL_NEWTON_NEED_J : DUAL_NEWTON_DONE;
}
#define DUAL_NEWTON_ARMIJO 1e-4

/* Point b's tests on F at its iterate, from F's reductions (ffinite: F's entries are finite; fn:
 * its norm, dual_sv_norm_lanes, read where ffinite; jfinite: J's entries are finite): the norm,
 * convergence, the iteration limit.  Returns 1 when the point goes on to its Newton step, 0 when
 * it finished (state set). */
DUAL_INLINE int dual_newton_tests_of(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                     int ffinite, double fn, int jfinite) {
  if (!ffinite || !jfinite) {
    P->fn[b] = ffinite ? fn : NAN;
    P->state[b] = DUAL_SOLVE_NONFINITE;
    return 0;
  }
  P->fn[b] = fn;
  if (P->steps[b] == 0) P->fn0[b] = fn;
  if (fn == 0.0 || fn <= o->f_abs || fn <= o->f_rel * P->fn0[b]) {
    P->state[b] = DUAL_SOLVE_CONVERGED;
    return 0;
  }
  if (P->steps[b] >= o->max_iter) {
    P->state[b] = DUAL_SOLVE_MAX_ITER;
    return 0;
  }
  return 1;
}

/* dual_newton_tests_of for F's n entries at stride s. */
DUAL_INLINE int dual_newton_tests(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                  int n, const double *F, int64_t s, int jfinite) {
  const int ffinite = dual_sv_finite(F, n, s);
  return dual_newton_tests_of(o, P, b, ffinite, ffinite ? dual_sv_norm_lanes(F, n, s) : NAN, jfinite);
}

/* Point b after its Newton step dx, from the step's reductions (dxfinite: its entries are finite;
 * x2, dx2: the sums of squares of x and dx, dual_sv_sumsq, read where dxfinite): a step that is
 * not finite means a singular J; else the line search starts (alpha 1), the trial point to be
 * x + dx.  Returns 1 when the point goes on to judge that point, 0 when it finished (state set). */
DUAL_INLINE int dual_newton_start(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                  int dxfinite, double x2, double dx2) {
  if (!dxfinite) {
    P->state[b] = DUAL_SOLVE_SINGULAR;
    return 0;
  }
  const double fn = P->fn[b];
  P->alpha[b] = 1.0, P->reductions[b] = 0;
  P->phi0[b] = 0.5 * fn * fn;
  /* the step test: a full Newton step this small is taken without the line search (near the
   * root, phi is rounding noise that need not decrease) and ends the iteration */
  P->last[b] = sqrt(dx2) <= o->x_rel * sqrt(x2) + o->x_abs;
  return 1;
}

/* dual_newton_start for x and dx (n entries, stride sx), and the trial point xt = x + dx. */
DUAL_INLINE int dual_newton_trial(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                  int n, const double *x, const double *dx, double *xt, int64_t sx) {
  const int fin = dual_sv_finite(dx, n, sx);
  if (!dual_newton_start(o, P, b, fin, fin ? dual_sv_sumsq(x, n, sx) : 0.0, fin ? dual_sv_sumsq(dx, n, sx) : 0.0))
    return 0;
  for (int j = 0; j < n; ++j) xt[j * sx] = x[j * sx] + dx[j * sx];
  return 1;
}

/* dual_newton_step for a J already scanned: jfinite (its entries are finite) and amax (max |J_ij|,
 * read where jfinite), which is what the LU's singularity threshold needs. */
DUAL_INLINE int dual_newton_step_scanned(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                         int n, const double *F, double *J, int32_t *piv, int64_t s,
                                         const double *x, double *dx, double *xt, int64_t sx,
                                         int jfinite, double amax) {
  if (!dual_newton_tests(o, P, b, n, F, s, jfinite)) return 0;
  const int lo = dual_newton_band(o->band_lo, n), hi = dual_newton_band(o->band_hi, n);
  if (amax == 0.0 || dual_lu_eliminate(J, n, n * s, s, piv, s, (double)n * DBL_EPSILON * amax, lo, hi)) {
    P->state[b] = DUAL_SOLVE_SINGULAR;
    return 0;
  }
  for (int j = 0; j < n; ++j) dx[j * sx] = -F[j * s];
  dual_lu_solve(J, n, n * s, s, piv, s, dx, sx, lo, hi);
  return dual_newton_trial(o, P, b, n, x, dx, xt, sx);
}

/* Point b after F and J at its iterate x: the tests, then the Newton step dx (J is overwritten by
 * its LU factors, piv its pivots) and the first trial point.  F, J's entries and piv have stride
 * s (J's element (r, c) at J[(r * n + c) * s]); x, dx and xt stride sx.  Returns 1 when the point
 * goes on to judge xt, 0 when it finished (state set).  J is scanned once (a maximum is exact in
 * any order: the threshold is dual_lu_factor's). */
DUAL_INLINE int dual_newton_step(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                 int n, const double *F, double *J, int32_t *piv, int64_t s,
                                 const double *x, double *dx, double *xt, int64_t sx) {
  double amax = 0.0;
  int jfinite = 1;
  for (int64_t e = 0; e < (int64_t)n * n; ++e) {
    const double a = fabs(J[e * s]);
    jfinite &= a <= DBL_MAX;
    amax = a > amax ? a : amax;
  }
  return dual_newton_step_scanned(o, P, b, n, F, J, piv, s, x, dx, xt, sx, jfinite, amax);
}

/* The line search's verdict on point b's trial point, from F's reductions there (finite, and its
 * norm fnt, dual_sv_norm_lanes, read where finite): DUAL_NEWTON_ACCEPTED (the trial point becomes
 * the iterate; the tests on it done, state set where the point finished), DUAL_NEWTON_RETRY (the
 * next trial point is x + alpha dx, alpha the new P->alpha[b]) or DUAL_NEWTON_FAILED (state set). */
enum { DUAL_NEWTON_FAILED = 0, DUAL_NEWTON_RETRY = 1, DUAL_NEWTON_ACCEPTED = 2 };
DUAL_INLINE int dual_newton_verdict(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                    int finite, double fnt) {
  const double a = P->alpha[b], phi0 = P->phi0[b];
  const double phi = 0.5 * fnt * fnt;
  /* phi'(0) = -2 phi0 along the Newton direction */
  if (finite && (!o->line_search || P->last[b] || phi <= phi0 - 2.0 * DUAL_NEWTON_ARMIJO * a * phi0)) {
    P->steps[b] += 1;
    P->fn[b] = fnt;
    P->damped[b] = a < 1.0 ? P->damped[b] + 1 : 0;
    if (fnt == 0.0 || fnt <= o->f_abs || fnt <= o->f_rel * P->fn0[b] || P->last[b])
      P->state[b] = DUAL_SOLVE_CONVERGED;
    else if (P->steps[b] >= o->max_iter)
      P->state[b] = DUAL_SOLVE_MAX_ITER;
    else if (P->damped[b] >= DUAL_NEWTON_MAX_DAMPED)
      P->state[b] = DUAL_SOLVE_LINE_SEARCH; /* stalled: the trust region takes over */
    return DUAL_NEWTON_ACCEPTED;            /* next round (a new Jacobian) or done */
  }
  if (++P->reductions[b] > DUAL_NEWTON_MAX_REDUCTIONS) {
    P->state[b] = DUAL_SOLVE_LINE_SEARCH;
    return DUAL_NEWTON_FAILED;
  }
  /* the minimizer of the quadratic through phi0, phi'(0) and phi(a), kept in [a/10, a/2] */
  double an = 0.5 * a;
  if (finite) {
    const double den = 2.0 * (phi - phi0 + 2.0 * phi0 * a);
    const double q = den > 0.0 ? 2.0 * phi0 * a * a / den : 0.5 * a;
    an = q < 0.1 * a ? 0.1 * a : q > 0.5 * a ? 0.5 * a : q;
  } else {
    an = 0.1 * a;
  }
  P->alpha[b] = an;
  return DUAL_NEWTON_RETRY;
}

/* Point b's trial point xt with F there (Ft, stride s): dual_newton_verdict, then x = xt where it
 * was accepted, the next trial point xt = x + alpha dx where it retries (x, dx, xt stride sx).
 * Returns 1 when the point needs F at its new xt, 0 when it accepted a step or finished. */
DUAL_INLINE int dual_newton_judge(const dual_newton_opts *o, const dual_newton_pts *P, int64_t b,
                                  int n, const double *Ft, int64_t s, double *x, const double *dx,
                                  double *xt, int64_t sx) {
  const int finite = dual_sv_finite(Ft, n, s);
  const int v = dual_newton_verdict(o, P, b, finite, finite ? dual_sv_norm_lanes(Ft, n, s) : INFINITY);
  if (v == DUAL_NEWTON_ACCEPTED)
    for (int j = 0; j < n; ++j) x[j * sx] = xt[j * sx];
  if (v != DUAL_NEWTON_RETRY) return 0;
  const double an = P->alpha[b];
  for (int j = 0; j < n; ++j) xt[j * sx] = x[j * sx] + an * dx[j * sx];
  return 1;
}

#endif /* DUAL_NEWTON_POINT_H */
