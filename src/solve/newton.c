/*
 * newton.c — dual_newton: damped Newton for a batch of square systems.  A chunk of points is
 * solved in rounds, as on the GPU (kernels/gpu_newton.c): each round evaluates F and J at every
 * point not done, at its iterate or its line search's trial point, in one engine call, then runs
 * each point's verdict on its trial point and its Newton step (newton_point.h).  A point's
 * arithmetic never depends on the others, so results are the same bits for any chunking and
 * thread count.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "gpu.h"
#include "dualbatch.h"
#include "exec.h"
#include "multi_gpu.h"
#include "solve/hybrid.h"
#include "solve/newton_point.h"
#include "solve/solve_common.h"

enum { ACTIVE = DUAL_NEWTON_ACTIVE };

/* The points a CPU solve left singular or with a failed line search, with their starting points
 * (row i of x0 is point idx[i]'s), for the fallback chain: each chunk keeps its starts while it
 * runs (in its thread's cache) and adds its failures as it ends.  Before, the whole batch's starts
 * were copied before the solve, by one thread, into fresh memory: 16 threads waited for it (bratu15,
 * 16 cores: 67 ms of a 440 ms call at B = 1e6 on the project's machine, 2 threads: a tenth). */
typedef struct newton_fails {
  int n;
  int64_t k, cap;
  int64_t *idx;
  double *x0;
} newton_fails;

typedef struct chunk {
  dual_context *ctx;
  const dual_program *prog;
  const dual_jac_colors *jc; /* J's structure and coloring (its view computes J S) */
  int packed;  /* the round's J are J S, packed, each expanded into Jx where used (alone only) */
  double *Jx;  /* packed: one point's J (n * n), then a row of J S (ncolors) */
  dual_newton_opts o;
  int n, np, threads;
  int alone; /* 1: the chunk is one thread's, its engine calls run on that thread alone
              * (dual_solve_residuals_cpu); 0: every call runs on `threads` threads (dual_run) */
  double *x;
  int64_t ldx;
  const double *p;
  int64_t ldp;
  dual_newton_pts P; /* per point of the chunk */
  int32_t *info, *iters; /* the caller's results (each may be NULL) */
  double *fnorm;
  struct newton_fails *fails; /* where the chunk's failing points go with their starts (NULL: nowhere) */
  double *x0c;                /* fails: the chunk's starting points, n a point */
  int32_t *phase;   /* per point of the chunk: DUAL_NEWTON_DONE, _NEED_J, _NEED_F */
  double *dx, *xt;  /* per point of the chunk: its Newton step and trial point */
  /* per point of the round (gathered) */
  int64_t *idx;
  double *xa, *pa, *F, *J;
  int32_t *piv;
} chunk;

/* The round's options for the program: the caller's, and J's structural band for the LU. */
static dual_newton_opts newton_opts(const dual_program *prog, const dual_solve_options *o) {
  dual_newton_opts r = dual_newton_opts_of(o);
  dual_solve_jacobian_band(prog, &r.band_lo, &r.band_hi);
  return r;
}

/* Whether the nn entries of J are all finite, and max |J_ij| in *amax (meaningful when they are):
 * one pass that the compiler vectorizes, where the scans of dual_sv_finite and dual_lu_factor are
 * two with early exits.  A maximum is exact in any order, so amax is dual_lu_factor's. */
static int jacobian_scan(const double *J, int64_t nn, double *amax) {
  double m = 0.0;
  int bad = 0;
  if (nn < 16) { /* too short for the vector loop's setup to pay (n <= 3) */
    for (int64_t e = 0; e < nn; ++e) {
      const double a = fabs(J[e]);
      bad |= !(a <= DBL_MAX);
      m = a > m ? a : m;
    }
    *amax = m;
    return !bad;
  }
#pragma omp simd reduction(max : m) reduction(| : bad)
  for (int64_t e = 0; e < nn; ++e) {
    const double a = fabs(J[e]);
    bad |= !(a <= DBL_MAX);
    m = a > m ? a : m;
  }
  *amax = m;
  return !bad;
}

/* A round's per-point code after F and J at the k gathered points (newton_point.h, the GPU's
 * round): a point at a trial point gets the line search's verdict, and where the step was
 * accepted and the point goes on, its next Newton step with the J evaluated there; a point at a
 * new iterate takes its Newton step (the tests, then the LU step and the first trial point, J
 * scanned by jacobian_scan: dual_newton_step's bits). */
static void round_points(chunk *c, int64_t k) {
  const int n = c->n;
  const int64_t nn = (int64_t)n * n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(c->threads) if (c->threads > 1 && k >= 64)
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = c->idx[i];
    double *x = c->x + b * c->ldx, *dx = c->dx + b * n, *xt = c->xt + b * n;
    if (c->phase[b] == DUAL_NEWTON_NEED_F) {
      const int more = dual_newton_judge(&c->o, &c->P, b, n, c->F + i * n, 1, x, dx, xt, 1);
      if (more || c->P.state[b] != ACTIVE) {
        c->phase[b] = dual_newton_next_phase(&c->P, b, more);
        continue;
      }
    }
    double *J = c->J + i * nn;
    double amax;
    int jfinite;
    if (c->packed) { /* this point's J from its J S, in the thread's cache */
      const dual_jac_colors *jc = c->jc;
      const double *JS = c->J + i * (int64_t)n * jc->ncolors;
      /* J S's entries are J's structural ones and exact zeros: the same maximum and finiteness */
      jfinite = jacobian_scan(JS, (int64_t)n * jc->ncolors, &amax);
      /* its band alone, the entries the LU reads (2 cores, 2 threads, B = 4e4, against the whole
       * J: bratu15 +3.7 %, bratu48 +4 %) */
      J = c->Jx;
      const int lo = dual_newton_band(c->o.band_lo, n), up = lo + dual_newton_band(c->o.band_hi, n);
      dual_jac_expand_band(n, jc->ncolors, jc->color, jc->row_start, jc->cols, JS, J, lo, up);
    } else {
      jfinite = jacobian_scan(J, nn, &amax);
    }
    const int more = dual_newton_step_scanned(&c->o, &c->P, b, n, c->F + i * n, J, c->piv + i * n, 1,
                                              x, dx, xt, 1, jfinite, amax);
    c->phase[b] = dual_newton_next_phase(&c->P, b, more);
  }
}

/* F and J at the k gathered points c->xa (parameters c->pa) into c->F and c->J. */
static int residuals(chunk *c, int64_t k) {
  if (c->packed) return dual_solve_residuals_cpu_packed(c->ctx, c->jc, k, c->xa, c->pa, c->F, c->J);
  if (c->alone) return dual_solve_residuals_cpu(c->ctx, c->prog, c->jc, k, c->xa, c->pa, c->F, c->J, 1);
  return dual_solve_residuals(c->ctx, c->prog, c->jc, k, c->xa, c->pa, c->F, c->J);
}

/* Rounds until every point of the chunk is done: each evaluates F and J at the points not done,
 * at their iterates or their line search's trial points (so that an accepted step goes straight
 * on to the next Newton step, as on the GPU), then runs round_points.  A trial point the line
 * search rejects had its J evaluated for nothing, but an accepted one's F is not evaluated twice
 * (before: F alone at trial points, then F and J again at the accepted one).  2-core AMD, 2
 * threads, B = 4e4: kin 6.46e4 -> 7.03e4 cells/s, bratu15 4.84e5 -> 4.95e5, bratu48 1.01e5 ->
 * 1.20e5, rob3 unchanged; every solution, status, count and norm bitwise the same. */
static int solve_chunk(chunk *c, int64_t b0, int64_t count) {
  const int n = c->n, np = c->np;
  for (int64_t b = 0; b < count; ++b) {
    c->P.state[b] = ACTIVE, c->P.steps[b] = 0, c->P.damped[b] = 0;
    c->phase[b] = DUAL_NEWTON_NEED_J;
  }
  double *x0 = c->x;
  const double *p0 = c->p;
  if (c->fails != NULL)
    for (int64_t b = 0; b < count; ++b)
      memcpy(c->x0c + b * n, x0 + (b0 + b) * c->ldx, sizeof(double) * (size_t)n);
  c->x = x0 + b0 * c->ldx;
  c->p = p0 != NULL ? p0 + b0 * c->ldp : NULL;
  int st = DUAL_SUCCESS;
  for (;;) {
    int64_t k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (c->phase[b] != DUAL_NEWTON_DONE) c->idx[k++] = b;
    if (k == 0) break;
    for (int64_t i = 0; i < k; ++i) { /* the points' iterates or trial points, and parameters */
      const int64_t b = c->idx[i];
      const double *src = c->phase[b] == DUAL_NEWTON_NEED_F ? c->xt + b * n : c->x + b * c->ldx;
      for (int j = 0; j < n; ++j) c->xa[i * n + j] = src[j];
      if (c->p != NULL)
        for (int j = 0; j < np; ++j) c->pa[i * np + j] = c->p[b * c->ldp + j];
    }
    st = residuals(c, k);
    if (st != DUAL_SUCCESS) break;
    round_points(c, k);
  }
  c->x = x0, c->p = p0;
  return st;
}

/* A chunk's arrays for C points (the caller fills the rest); 0 when out of memory (what was
 * allocated is chunk_free's). */
static int chunk_alloc(chunk *c, int64_t C) {
  const size_t n = (size_t)(c->n > 0 ? c->n : 1), np = (size_t)(c->np > 0 ? c->np : 1);
  const size_t pts = (size_t)C;
  dual_newton_pts *P = &c->P;
  P->state = malloc(sizeof(int32_t) * pts), P->steps = malloc(sizeof(int32_t) * pts);
  P->reductions = malloc(sizeof(int32_t) * pts), P->damped = malloc(sizeof(int32_t) * pts);
  P->last = malloc(sizeof(int32_t) * pts);
  P->fn = malloc(sizeof(double) * pts), P->fn0 = malloc(sizeof(double) * pts);
  P->alpha = malloc(sizeof(double) * pts), P->phi0 = malloc(sizeof(double) * pts);
  c->idx = malloc(sizeof(int64_t) * pts);
  c->xa = malloc(sizeof(double) * pts * n), c->pa = malloc(sizeof(double) * pts * np);
  c->F = malloc(sizeof(double) * pts * n), c->J = malloc(sizeof(double) * pts * n * n);
  c->dx = malloc(sizeof(double) * pts * n), c->xt = malloc(sizeof(double) * pts * n);
  c->piv = malloc(sizeof(int32_t) * pts * n), c->phase = malloc(sizeof(int32_t) * pts);
  c->Jx = malloc(sizeof(double) * (n * n + n));
  c->x0c = c->fails != NULL ? malloc(sizeof(double) * pts * n) : NULL;
  return (c->fails == NULL || c->x0c != NULL) && P->state && P->steps && P->reductions && P->damped &&
         P->last && P->fn && P->fn0 &&
         P->alpha && P->phi0 && c->idx && c->xa && c->pa && c->F && c->J && c->dx && c->xt && c->piv &&
         c->phase && c->Jx;
}

static void chunk_free(chunk *c) {
  dual_newton_pts *P = &c->P;
  free(P->state), free(P->steps), free(P->reductions), free(P->damped), free(P->last), free(P->fn);
  free(P->fn0), free(P->alpha), free(P->phi0), free(c->idx), free(c->xa), free(c->pa), free(c->F);
  free(c->J), free(c->dx), free(c->xt), free(c->piv), free(c->phase), free(c->Jx), free(c->x0c);
}

static int failed(int32_t s) { return s == DUAL_SOLVE_SINGULAR || s == DUAL_SOLVE_LINE_SEARCH; }

/* The chunk's failing points (b0 + b) and their starts added to c->fails, under a lock. */
static int keep_fails(chunk *c, int64_t b0, int64_t cnt) {
  int64_t k = 0;
  for (int64_t b = 0; b < cnt; ++b) k += failed(c->P.state[b]);
  if (k == 0) return DUAL_SUCCESS;
  newton_fails *f = c->fails;
  const int n = f->n;
  int st = DUAL_SUCCESS;
#pragma omp critical(dual_newton_fails)
  {
    if (f->k + k > f->cap) {
      const int64_t cap = 2 * (f->k + k);
      int64_t *idx = realloc(f->idx, sizeof(int64_t) * (size_t)cap);
      if (idx != NULL) f->idx = idx;
      double *x0 = idx != NULL ? realloc(f->x0, sizeof(double) * (size_t)cap * (size_t)n) : NULL;
      if (x0 != NULL) f->x0 = x0, f->cap = cap;
      else st = dual_fail(c->ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory keeping %lld failed points' starts",
                          (long long)(f->k + k));
    }
    for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b)
      if (failed(c->P.state[b])) {
        f->idx[f->k] = b0 + b;
        memcpy(f->x0 + f->k * n, c->x0c + b * n, sizeof(double) * (size_t)n);
        f->k++;
      }
  }
  return st;
}

/* Points b0 .. b0 + cnt by the chunk's arrays, their results to the caller's (dual_solve_chunk_fn). */
static int newton_chunk(void *w, int64_t b0, int64_t cnt) {
  chunk *c = w;
  const int st = solve_chunk(c, b0, cnt);
  for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b) {
    if (c->info != NULL) c->info[b0 + b] = c->P.state[b];
    if (c->iters != NULL) c->iters[b0 + b] = c->P.steps[b];
    if (c->fnorm != NULL) c->fnorm[b0 + b] = c->P.fn[b];
  }
  return st == DUAL_SUCCESS && c->fails != NULL ? keep_fails(c, b0, cnt) : st;
}

/* Line-search Newton on B points on the CPU (options checked, max_iter set): info, iters, fnorm
 * for each.  On a CPU context the points go in chunks of dual_solve_thread_chunk, each solved by one thread
 * alone (its own arrays, its engine calls on that thread), the threads taking chunks in turn; on
 * a GPU context (the points the GPU left), in larger chunks, each round's engine call on the
 * context (dual_run, which may try the GPU) and the per-point loops over the threads.  A point's
 * arithmetic is the same either way. */
static int newton_points_cpu(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                             int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                             int32_t *info, int32_t *iters, double *fnorm, newton_fails *fails) {
  const char *fn = "dual_newton";
  if (B == 0) return DUAL_SUCCESS;
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  const int threads = dual_solve_threads(ctx), alone = ctx->device != DUAL_DEVICE_GPU;
  if (!alone) fails = NULL; /* the chunks' engine calls spread over the threads: the caller keeps the starts */
  const int64_t per_point = 8 * ((int64_t)n * n + (fails != NULL ? 7 : 6) * (int64_t)n + np + 8);
  const int64_t C = alone ? dual_solve_thread_chunk(B, per_point, threads) : dual_solve_chunk(B, n, n, np);
  const int64_t chunks = (B + C - 1) / C;
  const int T = !alone ? 1 : chunks < threads ? (int)chunks : threads;
  dual_jac_colors jc;
  /* on a CPU context J S stays packed and each point's J is expanded where it is factored (in
   * cache), so the view pays wherever it has fewer directions (2 cores, 2 threads, B = 4e4, against
   * the whole-J rounds: bratu15 5.09e5 -> 5.23e5 cells/s, bratu48 1.26e5 -> 1.46e5, kin 7.16e4 ->
   * 7.20e4); elsewhere only where it saves the engine a pass (the shared expansion writes whole J) */
  int st = dual_solve_colors(ctx, fn, prog, !alone, &jc);
  if (st != DUAL_SUCCESS) return st;
  chunk *cs = calloc((size_t)T, sizeof *cs);
  if (cs == NULL) st = DUAL_ERR_NO_MEMORY;
  dual_newton_opts no = dual_newton_opts_of(o);
  no.band_lo = jc.lo, no.band_hi = jc.hi;
  for (int t = 0; t < T && st == DUAL_SUCCESS; ++t) {
    chunk *c = &cs[t];
    c->o = no;
    c->packed = alone && jc.view != NULL;
    c->ctx = ctx, c->prog = prog, c->jc = &jc, c->n = n, c->np = np, c->threads = alone ? 1 : threads;
    c->alone = alone;
    c->x = x, c->ldx = ldx, c->p = np > 0 ? p : NULL, c->ldp = ldp;
    c->info = info, c->iters = iters, c->fnorm = fnorm, c->fails = fails;
    if (!chunk_alloc(c, C)) st = DUAL_ERR_NO_MEMORY;
  }
  if (st != DUAL_SUCCESS) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for the work arrays of %lld points",
                   fn, (long long)C);
  } else {
    st = dual_solve_run_chunks(B, C, T, cs, sizeof *cs, newton_chunk);
    if (st == DUAL_SUCCESS && alone && B > 0) dual_run_cpu_record(ctx, prog, DUAL_MODE_JACOBIAN);
  }
  for (int t = 0; cs != NULL && t < T; ++t) chunk_free(&cs[t]);
  free(cs);
  dual_jac_colors_free(&jc);
  return st;
}

/* Line-search Newton on B points on the context's device: a GPU context keeps the iterates on the
 * GPU (kernels/gpu_newton.c, the same bits); where that fails and the context was AUTO, the points
 * it did not finish run on the CPU, with a note saying why. */
static int newton_points(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                         int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                         int32_t *info, int32_t *iters, double *fnorm) {
  if (ctx->device != DUAL_DEVICE_GPU)
    return newton_points_cpu(ctx, prog, o, B, x, ldx, p, ldp, info, iters, fnorm, NULL);
  const dual_newton_opts no = newton_opts(prog, o);
  int64_t done = 0;
  int st = dual_gpu_newton(ctx, prog, &no, B, x, ldx, p, ldp, info, iters, fnorm, 0, NULL, &done);
  if (st == DUAL_SUCCESS) {
    ctx->last_device = DUAL_DEVICE_GPU;
    return st;
  }
  char *note = NULL;
  if (!dual_solve_may_fall_back(ctx, "dual_newton", st, 0, B, done, &note)) return st;
  const int np = dual_program_num_params(prog);
  st = newton_points_cpu(ctx, prog, o, B - done, x + done * ldx, ldx,
                         np > 0 ? p + done * ldp : p, ldp, info ? info + done : NULL,
                         iters ? iters + done : NULL, fnorm ? fnorm + done : NULL, NULL);
  if (st == DUAL_SUCCESS) dual_solve_fell_back(ctx, note);
  else free(note);
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

/* The last fallback, for the points idx[0..k) whose info is still a failure: each restarts from
 * its starting point (row i of x0, n a row) with Powell's hybrid method (hybrid.h, one
 * point at a time), then Newton from where that stopped decides.  A point it solves gets its x,
 * info and fnorm from there; one it does not keeps the earlier ones (iters counts the work
 * either way).  Host memory. */
static int hybrid_rescue(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                         int64_t k, const int64_t *idx, double *x, int64_t ldx, const double *x0,
                         const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                         double *fnorm) {
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  int64_t *left = malloc(sizeof(int64_t) * (size_t)(k > 0 ? k : 1));
  double *keep = malloc(sizeof(double) * (size_t)((k > 0 ? k : 1) * (n + 1)));
  int32_t *kinfo = malloc(sizeof(int32_t) * (size_t)(k > 0 ? k : 1));
  if (left == NULL || keep == NULL || kinfo == NULL) {
    free(left), free(keep), free(kinfo);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for the fallback");
  }
  int64_t m = 0;
  int st = DUAL_SUCCESS;
  for (int64_t i = 0; i < k && st == DUAL_SUCCESS; ++i) {
    const int64_t b = idx[i];
    if (info[b] == DUAL_SOLVE_CONVERGED || info[b] == DUAL_SOLVE_NONFINITE) continue;
    double *xb = x + b * ldx;
    memcpy(keep + m * (n + 1), xb, sizeof(double) * (size_t)n); /* the earlier result */
    keep[m * (n + 1) + n] = fnorm != NULL ? fnorm[b] : 0.0, kinfo[m] = info[b];
    left[m++] = b;
    memcpy(xb, x0 + i * n, sizeof(double) * (size_t)n);
    int32_t steps = 0;
    st = dual_hybrid_point(ctx, prog, o, xb, np > 0 ? p + b * ldp : NULL, &steps);
    iters[b] += steps;
  }
  if (st == DUAL_SUCCESS && m > 0) {
    double *xs = malloc(sizeof(double) * (size_t)(m * n)), *ps = np > 0 ? malloc(sizeof(double) * (size_t)(m * np)) : NULL;
    double *fs = malloc(sizeof(double) * (size_t)m);
    int32_t *is = malloc(sizeof(int32_t) * (size_t)m), *its = malloc(sizeof(int32_t) * (size_t)m);
    if (xs == NULL || (np > 0 && ps == NULL) || fs == NULL || is == NULL || its == NULL) {
      st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for the fallback");
    } else {
      dual_solve_gather(m, left, n, np, x, ldx, p, ldp, xs, ps, 1);
      st = newton_points_cpu(ctx, prog, o, m, xs, n, ps, np, is, its, fs, NULL);
      for (int64_t i = 0; st == DUAL_SUCCESS && i < m; ++i) {
        const int64_t b = left[i];
        iters[b] += its[i];
        const int solved = is[i] == DUAL_SOLVE_CONVERGED;
        memcpy(x + b * ldx, solved ? xs + i * n : keep + i * (n + 1), sizeof(double) * (size_t)n);
        info[b] = solved ? is[i] : kinfo[i];
        if (fnorm != NULL) fnorm[b] = solved ? fs[i] : keep[i * (n + 1) + n];
      }
    }
    free(xs), free(ps), free(fs), free(is), free(its);
  }
  free(left), free(keep), free(kinfo);
  return st;
}

/* The fallback chain for the k points fail[0..k) (indices into x, p, info, iters, fnorm; host
 * memory) that Newton left singular or with a failed line search: the trust region and Newton
 * from where they stopped (rescue); those still failing, the same from their starting points
 * (row i of x0 is fail[i]'s, n a row; x0 NULL: no restarts); last, the hybrid method from the
 * starts (hybrid_rescue).  fail and x0's rows are reordered together. */
static int fallbacks(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                     int64_t k, int64_t *fail, double *x, int64_t ldx, double *x0,
                     const double *p, int64_t ldp, int32_t *info, int32_t *iters, double *fnorm) {
  const int n = dual_program_num_inputs(prog);
  int st = rescue(ctx, prog, o, k, fail, x, ldx, p, ldp, info, iters, fnorm);
  /* still failing: the trust region again, from the starting point (Newton's path may have
   * led it into a basin without a root) */
  int64_t k2 = 0;
  for (int64_t i = 0; st == DUAL_SUCCESS && x0 != NULL && i < k; ++i) {
    const int64_t b = fail[i];
    if (info[b] == DUAL_SOLVE_CONVERGED || info[b] == DUAL_SOLVE_NONFINITE) continue;
    if (k2 != i) memcpy(x0 + k2 * n, x0 + i * n, sizeof(double) * (size_t)n);
    memcpy(x + b * ldx, x0 + k2 * n, sizeof(double) * (size_t)n);
    fail[k2++] = b;
  }
  if (st == DUAL_SUCCESS && k2 > 0) st = rescue(ctx, prog, o, k2, fail, x, ldx, p, ldp, info, iters, fnorm);
  /* the last fallback: the hybrid method from the starting point */
  if (st == DUAL_SUCCESS && k2 > 0)
    st = hybrid_rescue(ctx, prog, o, k2, fail, x, ldx, x0, p, ldp, info, iters, fnorm);
  return st;
}

static int cmp_index(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* f's points in index order (the chunks add theirs as they end, in any order), their starts with
 * them.  The fallback's arithmetic is a point's own, so only its notes' order depends on this. */
static int sort_fails(dual_context *ctx, newton_fails *f) {
  const int n = f->n;
  int64_t *key = malloc(sizeof(int64_t) * 2 * (size_t)f->k);
  double *x0 = malloc(sizeof(double) * (size_t)f->k * (size_t)n);
  if (key == NULL || x0 == NULL) {
    free(key), free(x0);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for %lld failed points", (long long)f->k);
  }
  for (int64_t i = 0; i < f->k; ++i) key[2 * i] = f->idx[i], key[2 * i + 1] = i;
  qsort(key, (size_t)f->k, 2 * sizeof(int64_t), cmp_index); /* indices are distinct */
  for (int64_t i = 0; i < f->k; ++i) {
    f->idx[i] = key[2 * i];
    memcpy(x0 + i * n, f->x0 + key[2 * i + 1] * n, sizeof(double) * (size_t)n);
  }
  free(f->x0), free(key);
  f->x0 = x0;
  return DUAL_SUCCESS;
}

/* Points per slice of dual_newton's batch on a GPU context: the starting points kept for the
 * fallback take n doubles a point, up to 256 MiB a slice (a CPU context keeps only its failing
 * points', newton_fails).  Every slice ends in a wait for its slowest chunk, so
 * slices are made large: sliced by the CPU's 64 MiB work chunk, 16 threads, B = 1e5, a slice of
 * kin_steady was 34 thread chunks and of bratu15 33, three turns of 16 threads of which the last
 * had one or two chunks to do (kin 2.60e5 cells/s with those slices). */
static int64_t slice_points(int64_t B, int n) {
  int64_t S = ((int64_t)256 << 20) / (8 * (int64_t)(n > 0 ? n : 1));
  if (S < 65536) S = 65536;
  return S < B ? S : B;
}

/* dual_newton on device-memory arrays (a GPU context): slices of S points solved in place on the
 * device; the few points that need the fallback are copied to the host with their starts, go
 * through the fallback chain as in host memory (fallbacks) and are copied back. */
static int newton_device(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                         int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                         int32_t *info, int32_t *iters, double *fnorm) {
  const char *fn = "dual_newton";
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  const int64_t S = slice_points(B, n);
  const dual_newton_opts no = newton_opts(prog, o);
  int32_t *state = malloc(sizeof(int32_t) * (size_t)S);
  int64_t *fail = malloc(sizeof(int64_t) * (size_t)S);
  double *x0 = NULL; /* the starting points, on the device, for the fallback's restarts */
  int st = DUAL_SUCCESS;
  if (state == NULL || fail == NULL)
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for %lld points' statuses", fn, (long long)S);
  if (st == DUAL_SUCCESS && n > 0 && o->line_search)
    st = dual_gpu_solve_buffer(ctx, 1, sizeof(double) * (size_t)S * (size_t)n, (void **)&x0,
                               "dual_newton: keeping the starts");
  for (int64_t b0 = 0; st == DUAL_SUCCESS && b0 < B; b0 += S) {
    const int64_t cnt = B - b0 < S ? B - b0 : S;
    double *xs = x + b0 * ldx;
    const double *ps = np > 0 ? p + b0 * ldp : NULL;
    int64_t done = 0;
    const size_t row = sizeof(double) * (size_t)n, prow = sizeof(double) * (size_t)np;
    if (x0 != NULL)
      st = dual_gpu_copy(ctx, x0, row, xs, sizeof(double) * (size_t)ldx, row, cnt, "dual_newton: keeping the starts");
    if (st == DUAL_SUCCESS)
      st = dual_gpu_newton(ctx, prog, &no, cnt, xs, ldx, ps, ldp, info ? info + b0 : NULL,
                           iters ? iters + b0 : NULL, fnorm ? fnorm + b0 : NULL, 1, state, &done);
    int64_t k = 0;
    for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b)
      if (state[b] == DUAL_SOLVE_SINGULAR || state[b] == DUAL_SOLVE_LINE_SEARCH) fail[k++] = b;
    if (st != DUAL_SUCCESS || k == 0 || n == 0 || !o->line_search) continue;
    /* the fallback on host copies of the failing points */
    double *xh = malloc(sizeof(double) * (size_t)(k * n)), *ph = np > 0 ? malloc(sizeof(double) * (size_t)(k * np)) : NULL;
    double *fh = malloc(sizeof(double) * (size_t)k), *x0h = malloc(sizeof(double) * (size_t)(k * n));
    int32_t *ih = malloc(sizeof(int32_t) * (size_t)k), *th = malloc(sizeof(int32_t) * (size_t)k);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)k);
    if (xh == NULL || (np > 0 && ph == NULL) || fh == NULL || x0h == NULL || ih == NULL || th == NULL || idx == NULL)
      st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for %lld points' fallback", fn, (long long)k);
    for (int64_t i = 0; st == DUAL_SUCCESS && i < k; ++i) {
      const int64_t b = fail[i];
      idx[i] = i, ih[i] = state[b], th[i] = 0, fh[i] = NAN;
      st = dual_gpu_copy(ctx, xh + i * n, row, xs + b * ldx, row, row, 1, "dual_newton: fallback points");
      if (st == DUAL_SUCCESS)
        st = dual_gpu_copy(ctx, x0h + i * n, row, x0 + b * n, row, row, 1, "dual_newton: fallback points");
      if (st == DUAL_SUCCESS && np > 0)
        st = dual_gpu_copy(ctx, ph + i * np, prow, ps + b * ldp, prow, prow, 1, "dual_newton: fallback points");
      if (st == DUAL_SUCCESS && iters != NULL)
        st = dual_gpu_copy(ctx, th + i, 4, iters + b0 + b, 4, 4, 1, "dual_newton: fallback points");
    }
    if (st == DUAL_SUCCESS) st = fallbacks(ctx, prog, o, k, idx, xh, n, x0h, ph, np, ih, th, fh);
    for (int64_t i = 0; st == DUAL_SUCCESS && i < k; ++i) {
      const int64_t b = fail[i];
      st = dual_gpu_copy(ctx, xs + b * ldx, row, xh + i * n, row, row, 1, "dual_newton: fallback results");
      if (st == DUAL_SUCCESS && info != NULL)
        st = dual_gpu_copy(ctx, info + b0 + b, 4, ih + i, 4, 4, 1, "dual_newton: fallback results");
      if (st == DUAL_SUCCESS && iters != NULL)
        st = dual_gpu_copy(ctx, iters + b0 + b, 4, th + i, 4, 4, 1, "dual_newton: fallback results");
      if (st == DUAL_SUCCESS && fnorm != NULL)
        st = dual_gpu_copy(ctx, fnorm + b0 + b, 8, fh + i, 8, 8, 1, "dual_newton: fallback results");
    }
    free(xh), free(ph), free(fh), free(x0h), free(ih), free(th), free(idx);
  }
  free(state), free(fail);
  return st;
}

/* dual_newton on host arrays on a CPU context: the chunks keep their failing points' starts
 * (newton_fails), and those points go through the fallback chain, in index order. */
static int newton_host_cpu(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                           int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                           int32_t *info, int32_t *iters, double *fnorm) {
  const int n = dual_program_num_inputs(prog);
  int32_t *inf = info != NULL ? info : malloc(sizeof(int32_t) * (size_t)B);
  int32_t *it = iters != NULL ? iters : malloc(sizeof(int32_t) * (size_t)B);
  newton_fails f = {.n = n};
  int st = DUAL_SUCCESS;
  if (inf == NULL || it == NULL)
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_newton: out of memory for %lld points' results", (long long)B);
  const int keep = o->line_search && n > 0;
  if (st == DUAL_SUCCESS) st = newton_points_cpu(ctx, prog, o, B, x, ldx, p, ldp, inf, it, fnorm, keep ? &f : NULL);
  if (st == DUAL_SUCCESS && f.k > 0) st = sort_fails(ctx, &f);
  if (st == DUAL_SUCCESS && f.k > 0) st = fallbacks(ctx, prog, o, f.k, f.idx, x, ldx, f.x0, p, ldp, inf, it, fnorm);
  free(f.idx), free(f.x0);
  if (info == NULL) free(inf);
  if (iters == NULL) free(it);
  return st;
}

/* dual_newton on host arrays on a GPU context: slices of the batch (the starts kept for the
 * fallback and the per-point results it needs take bounded memory), each copied for the fallback
 * (by the threads), solved (newton_points), its failing points' starts gathered in index order and
 * those points through the fallback chain. */
static int newton_host_gpu(dual_context *ctx, const dual_program *prog, const dual_solve_options *o,
                           int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                           int32_t *info, int32_t *iters, double *fnorm) {
  const char *fn = "dual_newton";
  const int n = dual_program_num_inputs(prog), threads = dual_solve_threads(ctx);
  const int64_t S = slice_points(B, n);
  int32_t *inf_buf = info == NULL ? malloc(sizeof(int32_t) * (size_t)S) : NULL;
  int32_t *it_buf = iters == NULL ? malloc(sizeof(int32_t) * (size_t)S) : NULL;
  int64_t *fail = malloc(sizeof(int64_t) * (size_t)S);
  /* the starting points, for a second rescue (none where they do not fit in memory) */
  double *x0 = o->line_search && n > 0 ? malloc(sizeof(double) * (size_t)S * (size_t)n) : NULL;
  int st = DUAL_SUCCESS;
  if ((info == NULL && inf_buf == NULL) || (iters == NULL && it_buf == NULL) || fail == NULL)
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "%s: out of memory for %lld points' results", fn, (long long)S);
  for (int64_t b0 = 0; st == DUAL_SUCCESS && b0 < B; b0 += S) {
    const int64_t cnt = B - b0 < S ? B - b0 : S;
    double *xs = x + b0 * ldx, *fns = fnorm != NULL ? fnorm + b0 : NULL;
    const double *ps = p != NULL ? p + b0 * ldp : NULL;
    int32_t *inf = info != NULL ? info + b0 : inf_buf, *it = iters != NULL ? iters + b0 : it_buf;
    if (x0 != NULL) {
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && cnt * n > 65536)
      for (int64_t b = 0; b < cnt; ++b) memcpy(x0 + b * n, xs + b * ldx, sizeof(double) * (size_t)n);
    }
    st = newton_points(ctx, prog, o, cnt, xs, ldx, ps, ldp, inf, it, fns);
    int64_t k = 0;
    for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b)
      if (failed(inf[b])) fail[k++] = b;
    if (st != DUAL_SUCCESS || k == 0 || n == 0 || !o->line_search) continue;
    for (int64_t i = 0; x0 != NULL && i < k; ++i) /* row i: fail[i]'s start (fail[i] >= i, increasing) */
      if (fail[i] != i) memcpy(x0 + i * n, x0 + fail[i] * n, sizeof(double) * (size_t)n);
    st = fallbacks(ctx, prog, o, k, fail, xs, ldx, x0, ps, ldp, inf, it, fns);
  }
  free(x0), free(fail), free(inf_buf), free(it_buf);
  return st;
}

/* Points [first, first + count) of the call by dual_newton on ctx (one device's share). */
static int newton_share(dual_context *ctx, int64_t first, int64_t count, void *arg) {
  const dual_solve_args *a = (const dual_solve_args *)arg;
  return DUAL_SOLVE_SHARE(dual_newton, ctx, a, first, count);
}

static int newton_call(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt,
                       int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                       int32_t *info, int32_t *iters, double *fnorm) {
  const char *fn = "dual_newton";
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
  int device_mem = 0;
  if (st == DUAL_SUCCESS) st = dual_solve_check_memory(ctx, fn, 1, x, p, info, iters, fnorm, &device_mem);
  if (st != DUAL_SUCCESS) return st;
  dual_clear_error(ctx);
  if (B == 0) return DUAL_SUCCESS;
  if (device_mem) return newton_device(ctx, prog, &o, B, x, ldx, p, ldp, info, iters, fnorm);
  if (ctx->device == DUAL_DEVICE_GPU && ctx->n_gpus > 1 && !ctx->solve_share) { /* a share per GPU */
    dual_solve_args a = {prog, opt, x, ldx, p, ldp, info, iters, fnorm};
    return dual_multi_gpu_solve(ctx, B, newton_share, &a);
  }
  return ctx->device == DUAL_DEVICE_GPU ? newton_host_gpu(ctx, prog, &o, B, x, ldx, p, ldp, info, iters, fnorm)
                                        : newton_host_cpu(ctx, prog, &o, B, x, ldx, p, ldp, info, iters, fnorm);
}

int dual_newton(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt,
                int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                int32_t *iters, double *fnorm) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  dual_solve_begin(ctx);
  return dual_solve_end(ctx, newton_call(ctx, prog, opt, B, x, ldx, p, ldp, info, iters, fnorm));
}
