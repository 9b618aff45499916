/*
 * hybrid.c — dual_newton's last fallback (hybrid.h): Powell's hybrid method for one point on the
 * host, a port of MINPACK's hybrj as hybrj1 runs it (mode 2 with diag = 1, so unscaled; factor
 * = step_bound, 100 by default; xtol = x_rel, 1.49e-8 where that is 0; at most 100 (n + 1)
 * evaluations of F).
 *
 * The Jacobian is factored J = Q R by Householder reflections without pivoting (qrfac), Q is
 * formed explicitly (qform) and R kept packed by rows.  Each step is the dogleg (dogleg) in the
 * trust region ||p|| <= delta between the Gauss-Newton step R^-1 Q^T F and the steepest descent;
 * delta follows the ratio of actual to predicted reduction.  Between exact Jacobians the model
 * takes Broyden's rank-1 update, applied to the factors themselves: R becomes R + u v^T brought
 * back to triangular form by Givens rotations (r1updt), and the same rotations go into Q and into
 * Q^T F (r1mpyq).  Two failed steps in a row bring a new Jacobian.  The iteration stops on
 * hybrj's tests: delta <= xtol ||x|| or F = 0 (hybrj's info 1), the evaluation limit (2), a step
 * below the rounding of x (3), no progress over five Jacobians or ten steps (4, 5).
 *
 * Loops, norms (enorm, MINPACK's three-sum norm) and the order of the floating-point operations
 * are hybrj's, with its multiplications and divisions by diag = 1 left out (exact), so that from
 * the same start and the same F and J it takes the same steps.  Beyond hybrj: a trial point whose
 * F is not finite counts as a failed step (hybrj's arithmetic makes it one) and does not update
 * the factors; a Jacobian that is not finite ends the run.  Only points that Newton, the trust
 * region and both restarts left unsolved come here, so its cost does not matter.
 */
#include "solve/hybrid.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "solve/newton_point.h"
#include "solve/solve_common.h"

/* Column-major n x n: element (i, j) of a. */
#define AT(a, n, i, j) ((a)[(size_t)(j) * (size_t)(n) + (size_t)(i)])

/* One run's state: the problem, the evaluation count and the work arrays. */
typedef struct hyb {
  dual_context *ctx;
  const dual_program *prog;
  const double *p;
  int n, nfev, maxfev;
  double *Jrm;  /* the engine's Jacobian, row-major n x n */
  double *fjac; /* the factored Jacobian, then Q, column-major n x n */
  double *r;    /* R, upper triangle packed by rows, n (n + 1) / 2 */
  double *F;    /* F at the iterate */
  double *Fjev; /* F from a Jacobian's evaluation (the iterate's F is kept from its own) */
  double *qtf;  /* Q^T F */
  double *wa1, *wa2, *wa3, *wa4; /* hybrj's work vectors: mostly the step, the trial point, the
                                  * model's residual and F at the trial point */
} hyb;

/* ||x||_2 as MINPACK's enorm computes it: separate sums for the small, the intermediate and the
 * large components, so that nothing overflows or underflows destructively. */
static double enorm(int n, const double *x) {
  const double rdwarf = 3.834e-20, rgiant = 1.304e19, agiant = rgiant / (double)n;
  double s1 = 0.0, s2 = 0.0, s3 = 0.0, x1max = 0.0, x3max = 0.0;
  for (int i = 0; i < n; ++i) {
    const double xabs = fabs(x[i]);
    if (xabs > rdwarf && xabs < agiant) {
      s2 += xabs * xabs;
    } else if (xabs <= rdwarf) {
      if (xabs <= x3max) {
        if (xabs != 0.0) {
          const double t = xabs / x3max;
          s3 += t * t;
        }
      } else {
        const double t = x3max / xabs;
        s3 = 1.0 + s3 * (t * t);
        x3max = xabs;
      }
    } else if (xabs <= x1max) {
      const double t = xabs / x1max;
      s1 += t * t;
    } else {
      const double t = x1max / xabs;
      s1 = 1.0 + s1 * (t * t);
      x1max = xabs;
    }
  }
  if (s1 != 0.0) return x1max * sqrt(s1 + (s2 / x1max) / x1max);
  if (s2 == 0.0) return x3max * sqrt(s3);
  if (s2 >= x3max) return sqrt(s2 * (1.0 + (x3max / s2) * (x3max * s3)));
  return sqrt(x3max * ((s2 / x3max) + (x3max * s3)));
}

/* F at x (and J into h->Jrm when jac), through the engine. */
static int evaluate(hyb *h, const double *x, double *F, int jac) {
  return dual_solve_residuals(h->ctx, h->prog, NULL, 1, x, h->p, F, jac ? h->Jrm : NULL);
}

/* Householder QR of the column-major n x n a without pivoting (qrfac with pivot false): the
 * vectors u_j in a's lower triangle (u_j(j) in a(j, j)), R's strict upper triangle in a, its
 * diagonal in rdiag. */
static void qr_factor(int n, double *a, double *rdiag) {
  for (int j = 0; j < n; ++j) {
    double ajnorm = enorm(n - j, &AT(a, n, j, j));
    if (ajnorm != 0.0) {
      if (AT(a, n, j, j) < 0.0) ajnorm = -ajnorm;
      for (int i = j; i < n; ++i) AT(a, n, i, j) /= ajnorm;
      AT(a, n, j, j) += 1.0;
      for (int k = j + 1; k < n; ++k) {
        double sum = 0.0;
        for (int i = j; i < n; ++i) sum += AT(a, n, i, j) * AT(a, n, i, k);
        const double temp = sum / AT(a, n, j, j);
        for (int i = j; i < n; ++i) AT(a, n, i, k) -= temp * AT(a, n, i, j);
      }
    }
    rdiag[j] = -ajnorm;
  }
}

/* qtf = Q^T F with Q in the factored form of qr_factor. */
static void qr_apply_qt(int n, const double *a, const double *F, double *qtf) {
  memcpy(qtf, F, sizeof(double) * (size_t)n);
  for (int j = 0; j < n; ++j) {
    if (AT(a, n, j, j) == 0.0) continue;
    double sum = 0.0;
    for (int i = j; i < n; ++i) sum += AT(a, n, i, j) * qtf[i];
    const double temp = -sum / AT(a, n, j, j);
    for (int i = j; i < n; ++i) qtf[i] += AT(a, n, i, j) * temp;
  }
}

/* R (a's strict upper triangle, the diagonal rdiag) into r, packed by rows. */
static void pack_r(int n, const double *a, const double *rdiag, double *r) {
  for (int i = 0, l = 0; i < n; ++i) {
    r[l++] = rdiag[i];
    for (int j = i + 1; j < n; ++j) r[l++] = AT(a, n, i, j);
  }
}

/* The orthogonal Q accumulated in q from the factored form in its lower triangle (qform); wa:
 * n doubles of work. */
static void qr_form_q(int n, double *q, double *wa) {
  for (int j = 1; j < n; ++j)
    for (int i = 0; i < j; ++i) AT(q, n, i, j) = 0.0;
  for (int k = n - 1; k >= 0; --k) {
    for (int i = k; i < n; ++i) wa[i] = AT(q, n, i, k), AT(q, n, i, k) = 0.0;
    AT(q, n, k, k) = 1.0;
    if (wa[k] == 0.0) continue;
    for (int j = k; j < n; ++j) {
      double sum = 0.0;
      for (int i = k; i < n; ++i) sum += AT(q, n, i, j) * wa[i];
      const double temp = sum / wa[k];
      for (int i = k; i < n; ++i) AT(q, n, i, j) -= temp * wa[i];
    }
  }
}

/* The Gauss-Newton direction x = R^-1 qtb (r packed by rows), a zero diagonal entry replaced by
 * eps times the largest magnitude of its column (or eps), as dogleg does. */
static void gauss_newton(int n, const double *r, const double *qtb, double *x) {
  int jj = n * (n + 1) / 2;
  for (int k = 1; k <= n; ++k) {
    const int j = n - k;
    jj -= k; /* r[jj] = R(j, j) */
    double sum = 0.0;
    for (int i = j + 1, l = jj + 1; i < n; ++i, ++l) sum += r[l] * x[i];
    double temp = r[jj];
    if (temp == 0.0) {
      for (int i = 0, l = j; i <= j; ++i) { /* down column j: R(i, j) */
        temp = fmax(temp, fabs(r[l]));
        l += n - i - 1;
      }
      temp = DBL_EPSILON * temp;
      if (temp == 0.0) temp = DBL_EPSILON;
    }
    x[j] = (qtb[j] - sum) / temp;
  }
}

/* MINPACK's dogleg, unscaled: x the point of the dogleg path between the Gauss-Newton direction
 * and the steepest descent R^T qtb where the model is least within ||x|| <= delta (the negated
 * step).  wa1, wa2: n doubles of work. */
static void dogleg(int n, const double *r, const double *qtb, double delta, double *x, double *wa1,
                   double *wa2) {
  gauss_newton(n, r, qtb, x);
  const double qnorm = enorm(n, x);
  if (qnorm <= delta) return;
  /* the gradient direction R^T qtb */
  for (int j = 0; j < n; ++j) wa1[j] = 0.0;
  for (int j = 0, l = 0; j < n; ++j) {
    const double temp = qtb[j];
    for (int i = j; i < n; ++i, ++l) wa1[i] += r[l] * temp;
  }
  const double gnorm = enorm(n, wa1);
  double sgnorm = 0.0, alpha = delta / qnorm;
  if (gnorm != 0.0) {
    /* the minimum of the model along the gradient, at sgnorm */
    for (int j = 0; j < n; ++j) wa1[j] = wa1[j] / gnorm;
    for (int j = 0, l = 0; j < n; ++j) {
      double sum = 0.0;
      for (int i = j; i < n; ++i, ++l) sum += r[l] * wa1[i];
      wa2[j] = sum;
    }
    const double temp = enorm(n, wa2);
    sgnorm = (gnorm / temp) / temp;
    alpha = 0.0;
    if (sgnorm < delta) { /* the dogleg's second leg meets the boundary */
      const double bnorm = enorm(n, qtb), dq = delta / qnorm, sd = sgnorm / delta;
      double t = (bnorm / gnorm) * (bnorm / qnorm) * sd;
      t = t - dq * (sd * sd) + sqrt((t - dq) * (t - dq) + (1.0 - dq * dq) * (1.0 - sd * sd));
      alpha = (dq * (1.0 - sd * sd)) / t;
    }
  }
  const double temp = (1.0 - alpha) * fmin(sgnorm, delta);
  for (int j = 0; j < n; ++j) x[j] = temp * wa1[j] + alpha * x[j];
}

/* The Givens rotation that zeroes b against a (c a + s b, or its mirror for r1updt's second
 * set), as r1updt determines it; *tau the number r1mpyq recovers it from. */
static void givens(double a, double b, double *c, double *s, double *tau) {
  if (fabs(a) >= fabs(b)) {
    const double tan = b / a;
    *c = 0.5 / sqrt(0.25 + 0.25 * (tan * tan));
    *s = *c * tan;
    *tau = *s;
  } else {
    const double cotan = a / b;
    *s = 0.5 / sqrt(0.25 + 0.25 * (cotan * cotan));
    *c = *s * cotan;
    *tau = 1.0;
    if (fabs(*c) * DBL_MAX > 1.0) *tau = 1.0 / *c;
  }
}

/* r1updt for a square R (packed by rows, n (n + 1) / 2): R + u v^T made upper triangular again
 * by Givens rotations in the (j, n-1) planes, first those that turn v into a multiple of e_n
 * (leaving a spike in R's last row), then those that remove the spike.  v and w get the
 * rotations' tau (r1mpyq); w: n doubles. */
static void rank1_update(int n, double *s, const double *u, double *v, double *w) {
  int jj = n * (n + 1) / 2 - 1; /* R(n-1, n-1) */
  w[n - 1] = s[jj];
  for (int j = n - 2; j >= 0; --j) {
    jj -= n - j; /* R(j, j) */
    w[j] = 0.0;
    if (v[j] == 0.0) continue;
    double c, sn, tau;
    givens(v[n - 1], v[j], &c, &sn, &tau);
    v[n - 1] = sn * v[j] + c * v[n - 1];
    v[j] = tau;
    for (int i = j, l = jj; i < n; ++i, ++l) {
      const double temp = c * s[l] - sn * w[i];
      w[i] = sn * s[l] + c * w[i];
      s[l] = temp;
    }
  }
  for (int i = 0; i < n; ++i) w[i] += v[n - 1] * u[i];
  for (int j = 0; j < n - 1; ++j) {
    if (w[j] != 0.0) {
      double c, sn, tau;
      givens(s[jj], w[j], &c, &sn, &tau);
      for (int i = j, l = jj; i < n; ++i, ++l) {
        const double temp = c * s[l] + sn * w[i];
        w[i] = -sn * s[l] + c * w[i];
        s[l] = temp;
      }
      w[j] = tau;
    }
    jj += n - j;
  }
  s[jj] = w[n - 1];
}

/* The cosine and sine of a rotation from its tau (r1mpyq). */
static void rotation_of(double tau, double *c, double *s) {
  if (fabs(tau) > 1.0) {
    *c = 1.0 / tau;
    *s = sqrt(1.0 - *c * *c);
  } else {
    *s = tau;
    *c = sqrt(1.0 - *s * *s);
  }
}

/* r1mpyq: the m x n a (element (i, j) at a[i + j * lda]) times the rotations of rank1_update,
 * gv(n-2) ... gv(0) then gw(0) ... gw(n-2). */
static void apply_rotations(int m, int n, double *a, int lda, const double *v, const double *w) {
  double c, s;
  for (int j = n - 2; j >= 0; --j) {
    rotation_of(v[j], &c, &s);
    for (int i = 0; i < m; ++i) {
      double *aj = &a[i + (size_t)j * lda], *an = &a[i + (size_t)(n - 1) * lda];
      const double temp = c * *aj - s * *an;
      *an = s * *aj + c * *an;
      *aj = temp;
    }
  }
  for (int j = 0; j < n - 1; ++j) {
    rotation_of(w[j], &c, &s);
    for (int i = 0; i < m; ++i) {
      double *aj = &a[i + (size_t)j * lda], *an = &a[i + (size_t)(n - 1) * lda];
      const double temp = c * *aj + s * *an;
      *an = -s * *aj + c * *an;
      *aj = temp;
    }
  }
}

/* A new exact Jacobian at x (h->Jrm) factored: Q in fjac, R in r, qtf = Q^T F.  Returns 0 when
 * it is not finite. */
static int factor_jacobian(hyb *h) {
  const int n = h->n;
  if (!dual_sv_finite(h->Jrm, (int64_t)n * n, 1)) return 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) AT(h->fjac, n, i, j) = h->Jrm[(size_t)i * n + j];
  qr_factor(n, h->fjac, h->wa1);
  qr_apply_qt(n, h->fjac, h->F, h->qtf);
  pack_r(n, h->fjac, h->wa1, h->r);
  qr_form_q(n, h->fjac, h->wa1);
  return 1;
}

/* The predicted residual Q^T F + R p (p in wa1) into wa3. */
static void model_residual(hyb *h) {
  const int n = h->n;
  for (int i = 0, l = 0; i < n; ++i) {
    double sum = 0.0;
    for (int j = i; j < n; ++j, ++l) sum += h->r[l] * h->wa1[j];
    h->wa3[i] = h->qtf[i] + sum;
  }
}

/* Broyden's update of the factors after the step p (wa1, norm pnorm) to F1 (wa4), with wa3 the
 * model's Q^T F + R p: R + (Q^T F1 - wa3) (p / pnorm)^T refactored, Q and qtf rotated alike;
 * qtf becomes Q^T F1 where the step was taken. */
static void broyden_update(hyb *h, double pnorm, int taken) {
  const int n = h->n;
  for (int j = 0; j < n; ++j) {
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += AT(h->fjac, n, i, j) * h->wa4[i];
    h->wa2[j] = (sum - h->wa3[j]) / pnorm;
    h->wa1[j] = h->wa1[j] / pnorm;
    if (taken) h->qtf[j] = sum;
  }
  rank1_update(n, h->r, h->wa1, h->wa2, h->wa3);
  apply_rotations(n, n, h->fjac, n, h->wa2, h->wa3);
  apply_rotations(1, n, h->qtf, 1, h->wa2, h->wa3);
}

/* hybrj's monitors: the region's radius, ||x|| and ||F|| at the iterate, the iterate's number
 * (1 until a step is taken) and the counters of successes, failures and slow progress. */
typedef struct monitor {
  double delta, xnorm, fnorm;
  int iter, ncsuc, ncfail, nslow1, nslow2;
} monitor;

/* The ratio of the actual to the predicted reduction of ||F|| for the step p (wa1) to F1 (wa4,
 * norm fnorm1); wa3 gets the model's residual Q^T F + R p, *actred the actual reduction. */
static double reduction_ratio(hyb *h, double fnorm, double fnorm1, double *actred) {
  *actred = -1.0;
  if (fnorm1 < fnorm) *actred = 1.0 - (fnorm1 / fnorm) * (fnorm1 / fnorm);
  model_residual(h);
  const double temp = enorm(h->n, h->wa3);
  double prered = 0.0;
  if (temp < fnorm) prered = 1.0 - (temp / fnorm) * (temp / fnorm);
  return prered > 0.0 ? *actred / prered : 0.0;
}

/* hybrj's update of the radius after a step of length pnorm with the given ratio. */
static void update_radius(monitor *m, double ratio, double pnorm) {
  if (ratio >= 0.1) {
    m->ncfail = 0, ++m->ncsuc;
    if (ratio >= 0.5 || m->ncsuc > 1) m->delta = fmax(m->delta, pnorm / 0.5);
    if (fabs(ratio - 1.0) <= 0.1) m->delta = pnorm / 0.5;
  } else {
    m->ncsuc = 0, ++m->ncfail;
    m->delta = 0.5 * m->delta;
  }
}

/* hybrj's tests after a step: 1 when the iteration ends (its info 1, then 2 to 5; and a step of
 * length zero or not finite, which hybrj never meets). */
static int finished(const hyb *h, const monitor *m, double xtol, double pnorm) {
  if (m->delta <= xtol * m->xnorm || m->fnorm == 0.0) return 1;
  return h->nfev >= h->maxfev || 0.1 * fmax(0.1 * m->delta, pnorm) <= DBL_EPSILON * m->xnorm ||
         m->nslow2 == 5 || m->nslow1 == 10 || !(pnorm > 0.0);
}

/* hybrj's inner loop: steps from x on the model of the Jacobian just factored, updated after
 * each, until two failures in a row (returns 0: a new Jacobian) or the end (returns 1).  *st: an
 * engine failure, which ends it too. */
static int model_steps(hyb *h, monitor *m, double xtol, double *x, int *st) {
  const int n = h->n;
  for (int jeval = 1;; jeval = 0) {
    dogleg(n, h->r, h->qtf, m->delta, h->wa1, h->wa2, h->wa3);
    for (int j = 0; j < n; ++j) {
      h->wa1[j] = -h->wa1[j];
      h->wa2[j] = x[j] + h->wa1[j];
    }
    const double pnorm = enorm(n, h->wa1);
    if (m->iter == 1) m->delta = fmin(m->delta, pnorm);
    *st = evaluate(h, h->wa2, h->wa4, 0);
    if (*st != DUAL_SUCCESS) return 1;
    ++h->nfev;
    const double fnorm1 = enorm(n, h->wa4);
    double actred;
    const double ratio = reduction_ratio(h, m->fnorm, fnorm1, &actred);
    update_radius(m, ratio, pnorm);
    const int taken = ratio >= 1e-4;
    if (taken) {
      memcpy(x, h->wa2, sizeof(double) * (size_t)n);
      memcpy(h->F, h->wa4, sizeof(double) * (size_t)n);
      m->xnorm = enorm(n, x);
      m->fnorm = fnorm1;
      ++m->iter;
    }
    ++m->nslow1;
    if (actred >= 0.001) m->nslow1 = 0;
    if (jeval) ++m->nslow2;
    if (actred >= 0.1) m->nslow2 = 0;
    if (finished(h, m, xtol, pnorm)) return 1;
    if (m->ncfail == 2) return 0;
    if (dual_sv_finite(h->wa4, n, 1)) broyden_update(h, pnorm, taken);
  }
}

/* hybrj's outer loop from x (F and J at x already in h->F, h->Jrm): a new Jacobian at x, its
 * factors, the steps on its model.  *steps: the steps taken. */
static int iterate(hyb *h, const dual_solve_options *o, double *x, int32_t *steps) {
  const double xtol = o->x_rel > 0.0 ? o->x_rel : 1.4901161193847656e-08;
  monitor m = {0.0, 0.0, enorm(h->n, h->F), 1, 0, 0, 0, 0};
  int st = DUAL_SUCCESS, stop = 0;
  for (int first = 1; !stop; first = 0) {
    if (!first && (st = evaluate(h, x, h->Fjev, 1)) != DUAL_SUCCESS) break;
    if (!factor_jacobian(h)) break;
    if (m.iter == 1) { /* the first region */
      m.xnorm = enorm(h->n, x);
      m.delta = o->step_bound * m.xnorm;
      if (m.delta == 0.0) m.delta = o->step_bound;
    }
    stop = model_steps(h, &m, xtol, x, &st);
  }
  *steps = m.iter - 1;
  return st;
}

int dual_hybrid_point(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                      double *x, const double *p, int32_t *steps) {
  const int n = dual_program_num_inputs(prog);
  const size_t nn = (size_t)n * (size_t)n;
  const size_t nr = (size_t)n * (size_t)(n + 1) / 2;
  double *mem = malloc(sizeof(double) * (2 * nn + nr + 7 * (size_t)n + 1));
  if (mem == NULL)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for the hybrid fallback");
  hyb h = {.ctx = ctx, .prog = prog, .p = p, .n = n, .nfev = 0, .maxfev = 100 * (n + 1)};
  h.Jrm = mem, h.fjac = h.Jrm + nn, h.r = h.fjac + nn, h.F = h.r + nr;
  h.Fjev = h.F + n, h.qtf = h.Fjev + n, h.wa1 = h.qtf + n, h.wa2 = h.wa1 + n, h.wa3 = h.wa2 + n;
  h.wa4 = h.wa3 + n;
  int32_t taken = 0;
  int st = n > 0 ? evaluate(&h, x, h.F, 1) : DUAL_SUCCESS; /* F, and the first J */
  h.nfev = 1;
  if (st == DUAL_SUCCESS && n > 0 && dual_sv_finite(h.F, n, 1)) st = iterate(&h, o, x, &taken);
  if (steps != NULL) *steps = taken;
  free(mem);
  return st;
}
