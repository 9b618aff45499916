/*
 * newton.c — dual_newton: damped Newton for a batch of square systems.  A chunk of points is
 * solved in rounds: each round evaluates F and J at every active point in one engine call,
 * factors and solves per point, then runs the line search's trial evaluations (one engine call
 * per reduction round, for the points still searching) until every point has accepted a step or
 * finished.  A point's arithmetic never depends on the others, so results are the same bits for
 * any chunking and thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dualbatch.h"
#include "solve/lu_small.h"
#include "solve/solve_common.h"

enum { ACTIVE = -1, MAX_REDUCTIONS = 40, MAX_DAMPED = 10 };
static const double ARMIJO = 1e-4;

typedef struct chunk {
  dual_context *ctx;
  const dual_program *prog;
  dual_solve_options o;
  int n, np, threads;
  double *x;
  int64_t ldx;
  const double *p;
  int64_t ldp;
  /* per point of the chunk */
  int32_t *state, *steps, *reductions, *damped, *last;
  double *fn, *fn0, *alpha, *phi0;
  /* per active point (compacted) */
  int64_t *idx;
  double *xa, *pa, *F, *J, *dx, *xt;
  int32_t *piv;
} chunk;

static void finish(chunk *c, int64_t b, int status) { c->state[b] = status; }

/* After F and J at the k active points: the convergence tests on F, then the Newton step and the
 * first trial point x + dx (xt).  Points that finish leave idx[i] = -1. */
static void newton_steps(chunk *c, int64_t k) {
  const int n = c->n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(c->threads) if (k >= 64)
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = c->idx[i];
    double *F = c->F + i * n, *J = c->J + i * (int64_t)n * n, *dx = c->dx + i * n;
    if (!dual_solve_finite(F, n) || !dual_solve_finite(J, (int64_t)n * n)) {
      c->fn[b] = dual_solve_finite(F, n) ? dual_solve_norm(F, n) : NAN;
      finish(c, b, DUAL_SOLVE_NONFINITE), c->idx[i] = -1;
      continue;
    }
    const double fn = dual_solve_norm(F, n);
    c->fn[b] = fn;
    if (c->steps[b] == 0) c->fn0[b] = fn;
    if (fn == 0.0 || fn <= c->o.f_abs || fn <= c->o.f_rel * c->fn0[b]) {
      finish(c, b, DUAL_SOLVE_CONVERGED), c->idx[i] = -1;
      continue;
    }
    if (c->steps[b] >= c->o.max_iter) {
      finish(c, b, DUAL_SOLVE_MAX_ITER), c->idx[i] = -1;
      continue;
    }
    if (dual_lu_factor(J, n, n, c->piv + i * n)) {
      finish(c, b, DUAL_SOLVE_SINGULAR), c->idx[i] = -1;
      continue;
    }
    for (int j = 0; j < n; ++j) dx[j] = -F[j];
    dual_lu_solve(J, n, n, c->piv + i * n, dx);
    if (!dual_solve_finite(dx, n)) {
      finish(c, b, DUAL_SOLVE_SINGULAR), c->idx[i] = -1;
      continue;
    }
    c->alpha[b] = 1.0, c->reductions[b] = 0;
    c->phi0[b] = 0.5 * fn * fn;
    /* the step test: a full Newton step this small is taken without the line search (near the
     * root, phi is rounding noise that need not decrease) and ends the iteration */
    const double *xi = c->xa + i * n;
    double x2 = 0.0, s2 = 0.0;
    for (int j = 0; j < n; ++j) x2 += xi[j] * xi[j], s2 += dx[j] * dx[j];
    c->last[b] = sqrt(s2) <= c->o.x_rel * sqrt(x2) + c->o.x_abs;
    for (int j = 0; j < n; ++j) c->xt[i * n + j] = c->xa[i * n + j] + dx[j];
  }
}

/* Drop finished points (idx -1) from the compacted arrays, keeping the order; the per-point
 * vectors in `keep` (each `len` doubles per point) move along.  Returns the new count. */
static int64_t compact(chunk *c, int64_t k, double **keep, const int *len, int nkeep) {
  int64_t w = 0;
  for (int64_t i = 0; i < k; ++i) {
    if (c->idx[i] < 0) continue;
    if (w != i) {
      c->idx[w] = c->idx[i];
      for (int v = 0; v < nkeep; ++v)
        memmove(keep[v] + w * len[v], keep[v] + i * len[v], sizeof(double) * (size_t)len[v]);
    }
    ++w;
  }
  return w;
}

/* Judge the trial points xt (F there in c->F): accept (x = xt, the tests on the new F), or
 * reduce alpha and set the next trial point.  Points that accepted or finished leave idx -1. */
static void judge_trials(chunk *c, int64_t k) {
  const int n = c->n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(c->threads) if (k >= 64)
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = c->idx[i];
    const double *Ft = c->F + i * n, *dx = c->dx + i * n;
    double *xt = c->xt + i * n;
    const double a = c->alpha[b], phi0 = c->phi0[b];
    const int finite = dual_solve_finite(Ft, n);
    const double fnt = finite ? dual_solve_norm(Ft, n) : INFINITY;
    const double phi = 0.5 * fnt * fnt;
    /* phi'(0) = -2 phi0 along the Newton direction */
    if (finite && (!c->o.line_search || c->last[b] || phi <= phi0 - 2.0 * ARMIJO * a * phi0)) {
      double *xb = c->x + b * c->ldx;
      for (int j = 0; j < n; ++j) xb[j] = xt[j];
      c->steps[b] += 1;
      c->fn[b] = fnt;
      c->damped[b] = a < 1.0 ? c->damped[b] + 1 : 0;
      if (fnt == 0.0 || fnt <= c->o.f_abs || fnt <= c->o.f_rel * c->fn0[b] || c->last[b])
        finish(c, b, DUAL_SOLVE_CONVERGED);
      else if (c->steps[b] >= c->o.max_iter)
        finish(c, b, DUAL_SOLVE_MAX_ITER);
      else if (c->damped[b] >= MAX_DAMPED)
        finish(c, b, DUAL_SOLVE_LINE_SEARCH); /* stalled: the trust region takes over */
      c->idx[i] = -1; /* accepted: next round (a new Jacobian) or done */
      continue;
    }
    if (++c->reductions[b] > MAX_REDUCTIONS) {
      finish(c, b, DUAL_SOLVE_LINE_SEARCH), c->idx[i] = -1;
      continue;
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
    c->alpha[b] = an;
    const double *xb = c->x + b * c->ldx;
    for (int j = 0; j < n; ++j) xt[j] = xb[j] + an * dx[j];
  }
}

static int solve_chunk(chunk *c, int64_t b0, int64_t count) {
  const int n = c->n, np = c->np;
  for (int64_t b = 0; b < count; ++b) c->state[b] = ACTIVE, c->steps[b] = 0, c->damped[b] = 0;
  double *x0 = c->x;
  const double *p0 = c->p;
  c->x = x0 + b0 * c->ldx;
  c->p = p0 != NULL ? p0 + b0 * c->ldp : NULL;
  int st = DUAL_SUCCESS;
  for (;;) {
    int64_t k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (c->state[b] == ACTIVE) c->idx[k++] = b;
    if (k == 0) break;
    dual_solve_gather(k, c->idx, n, np, c->x, c->ldx, c->p, c->ldp, c->xa, c->pa, c->threads);
    st = dual_solve_residuals(c->ctx, c->prog, k, c->xa, c->pa, c->F, c->J);
    if (st != DUAL_SUCCESS) break;
    newton_steps(c, k);
    double *keep[] = {c->xt, c->dx, c->pa};
    const int len[] = {n, n, np};
    k = compact(c, k, keep, len, np > 0 ? 3 : 2);
    while (k > 0) { /* the line search's rounds */
      st = dual_solve_residuals(c->ctx, c->prog, k, c->xt, c->pa, c->F, NULL);
      if (st != DUAL_SUCCESS) break;
      judge_trials(c, k);
      k = compact(c, k, keep, len, np > 0 ? 3 : 2);
    }
    if (st != DUAL_SUCCESS) break;
  }
  c->x = x0, c->p = p0;
  return st;
}

/* Line-search Newton on B points (options checked, max_iter set): info, iters, fnorm for each. */
static int newton_points(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                         int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                         int32_t *info, int32_t *iters, double *fnorm) {
  const char *fn = "dual_newton";
  chunk c;
  memset(&c, 0, sizeof c);
  c.o = *o;
  int st = DUAL_SUCCESS;
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  const int64_t C = dual_solve_chunk(B, n, n, np);
  c.ctx = ctx, c.prog = prog, c.n = n, c.np = np, c.threads = dual_solve_threads(ctx);
  c.x = x, c.ldx = ldx, c.p = np > 0 ? p : NULL, c.ldp = ldp;
  const size_t nn = (size_t)n;
  c.state = malloc(sizeof(int32_t) * (size_t)C), c.steps = malloc(sizeof(int32_t) * (size_t)C);
  c.reductions = malloc(sizeof(int32_t) * (size_t)C), c.damped = malloc(sizeof(int32_t) * (size_t)C);
  c.last = malloc(sizeof(int32_t) * (size_t)C);
  c.fn = malloc(sizeof(double) * (size_t)C), c.fn0 = malloc(sizeof(double) * (size_t)C);
  c.alpha = malloc(sizeof(double) * (size_t)C), c.phi0 = malloc(sizeof(double) * (size_t)C);
  c.idx = malloc(sizeof(int64_t) * (size_t)C);
  c.xa = malloc(sizeof(double) * (size_t)C * (nn ? nn : 1));
  c.pa = malloc(sizeof(double) * (size_t)C * (size_t)(np ? np : 1));
  c.F = malloc(sizeof(double) * (size_t)C * (nn ? nn : 1));
  c.J = malloc(sizeof(double) * (size_t)C * (nn > 0 ? nn * nn : 1));
  c.dx = malloc(sizeof(double) * (size_t)C * (nn ? nn : 1));
  c.xt = malloc(sizeof(double) * (size_t)C * (nn ? nn : 1));
  c.piv = malloc(sizeof(int32_t) * (size_t)C * (nn ? nn : 1));
  if (!c.state || !c.steps || !c.reductions || !c.damped || !c.last || !c.fn || !c.fn0 || !c.alpha || !c.phi0 || !c.idx ||
      !c.xa || !c.pa || !c.F || !c.J || !c.dx || !c.xt || !c.piv) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for the work arrays of %lld points",
                   fn, (long long)C);
  } else {
    for (int64_t b0 = 0; b0 < B && st == DUAL_SUCCESS; b0 += C) {
      const int64_t cnt = B - b0 < C ? B - b0 : C;
      st = solve_chunk(&c, b0, cnt);
      if (st != DUAL_SUCCESS) break;
      for (int64_t b = 0; b < cnt; ++b) {
        if (info != NULL) info[b0 + b] = c.state[b];
        if (iters != NULL) iters[b0 + b] = c.steps[b];
        if (fnorm != NULL) fnorm[b0 + b] = c.fn[b];
      }
    }
  }
  free(c.state), free(c.steps), free(c.reductions), free(c.damped), free(c.last), free(c.fn), free(c.fn0), free(c.alpha);
  free(c.phi0), free(c.idx), free(c.xa), free(c.pa), free(c.F), free(c.J), free(c.dx), free(c.xt);
  free(c.piv);
  return st;
}

/* The points of `fail` (k of them, indices into the batch) gathered, solved by the trust region
 * (dual_lsq, the same options), then by Newton again from where it stopped: a point converges
 * only by Newton's own tests.  Their info, iters (adding up) and fnorm are updated. */
static int rescue(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                  int64_t k, const int64_t *fail, double *x, int64_t ldx, const double *p,
                  int64_t ldp, int32_t *info, int32_t *iters, double *fnorm) {
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  double *xs = malloc(sizeof(double) * (size_t)(k * n)), *ps = NULL, *fs = malloc(sizeof(double) * (size_t)k);
  int32_t *is = malloc(sizeof(int32_t) * (size_t)k), *its = malloc(sizeof(int32_t) * (size_t)k);
  int32_t *its2 = malloc(sizeof(int32_t) * (size_t)k);
  if (np > 0) ps = malloc(sizeof(double) * (size_t)(k * np));
  int st = DUAL_SUCCESS;
  if (xs == NULL || fs == NULL || is == NULL || its == NULL || its2 == NULL || (np > 0 && ps == NULL)) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for %lld points' fallback", (long long)k);
  } else {
    dual_solve_gather(k, fail, n, np, x, ldx, p, ldp, xs, ps, dual_solve_threads(ctx));
    dual_solve_options lo = *o;
    lo.max_iter = 0;
    st = dual_lsq(ctx, prog, &lo, k, xs, n, ps, np, is, its, fs);
    if (st == DUAL_SUCCESS)
      st = newton_points(ctx, prog, o, k, xs, n, ps, np, is, its2, fs);
    if (st == DUAL_SUCCESS)
      for (int64_t i = 0; i < k; ++i) {
        const int64_t b = fail[i];
        for (int j = 0; j < n; ++j) x[b * ldx + j] = xs[i * n + j];
        if (info != NULL) info[b] = is[i];
        if (iters != NULL) iters[b] += its[i] + its2[i];
        if (fnorm != NULL) fnorm[b] = fs[i];
      }
  }
  free(xs), free(ps), free(fs), free(is), free(its), free(its2);
  return st;
}

int dual_newton(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt,
                int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                int32_t *iters, double *fnorm) {
  const char *fn = "dual_newton";
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (prog == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: program is NULL", fn);
  dual_solve_options o;
  int st = dual_solve_check_options(ctx, fn, opt, &o);
  if (st != DUAL_SUCCESS) return st;
  if (o.max_iter == 0) o.max_iter = 50;
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  if (m != n)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s: the program has %d outputs and %d inputs; Newton needs a square system "
                     "(dual_lsq solves m > n)", fn, m, n);
  st = dual_solve_check_arrays(ctx, fn, prog, B, x, ldx, p, ldp);
  if (st != DUAL_SUCCESS) return st;
  dual_clear_error(ctx);
  if (B == 0) return DUAL_SUCCESS;
  /* slices of the batch, so that the starting points kept for the fallback and the per-point
   * results it needs (the caller's info and iters may be NULL) take bounded memory */
  const int np = dual_program_num_params(prog);
  const int64_t S = dual_solve_chunk(B, n, n, np);
  int32_t *inf_buf = info == NULL ? malloc(sizeof(int32_t) * (size_t)S) : NULL;
  int32_t *it_buf = iters == NULL ? malloc(sizeof(int32_t) * (size_t)S) : NULL;
  int64_t *fail = malloc(sizeof(int64_t) * (size_t)S);
  /* the starting points, for a second rescue (none where they do not fit in memory) */
  double *x0 = o.line_search && n > 0 ? malloc(sizeof(double) * (size_t)S * (size_t)n) : NULL;
  if ((info == NULL && inf_buf == NULL) || (iters == NULL && it_buf == NULL) || fail == NULL) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for %lld points' results", fn, (long long)S);
  }
  for (int64_t b0 = 0; st == DUAL_SUCCESS && b0 < B; b0 += S) {
    const int64_t cnt = B - b0 < S ? B - b0 : S;
    double *xs = x + b0 * ldx, *fns = fnorm != NULL ? fnorm + b0 : NULL;
    const double *ps = p != NULL ? p + b0 * ldp : NULL;
    int32_t *inf = info != NULL ? info + b0 : inf_buf, *it = iters != NULL ? iters + b0 : it_buf;
    if (x0 != NULL)
      for (int64_t b = 0; b < cnt; ++b)
        for (int j = 0; j < n; ++j) x0[b * n + j] = xs[b * ldx + j];
    st = newton_points(ctx, prog, &o, cnt, xs, ldx, ps, ldp, inf, it, fns);
    int64_t k = 0;
    for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b)
      if (inf[b] == DUAL_SOLVE_SINGULAR || inf[b] == DUAL_SOLVE_LINE_SEARCH) fail[k++] = b;
    if (st == DUAL_SUCCESS && k > 0 && n > 0 && o.line_search)
      st = rescue(ctx, prog, &o, k, fail, xs, ldx, ps, ldp, inf, it, fns);
    /* still failing: the trust region again, from the starting point (Newton's path may have
     * led it into a basin without a root) */
    int64_t k2 = 0;
    for (int64_t i = 0; st == DUAL_SUCCESS && x0 != NULL && i < k; ++i) {
      const int64_t b = fail[i];
      if (inf[b] == DUAL_SOLVE_CONVERGED || inf[b] == DUAL_SOLVE_NONFINITE) continue;
      fail[k2++] = b;
      for (int j = 0; j < n; ++j) xs[b * ldx + j] = x0[b * n + j];
    }
    if (k2 > 0) st = rescue(ctx, prog, &o, k2, fail, xs, ldx, ps, ldp, inf, it, fns);
  }
  free(x0), free(fail), free(inf_buf), free(it_buf);
  return st;
}
