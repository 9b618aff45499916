/*
 * lm.c — dual_lsq: Levenberg–Marquardt for a batch of least-squares problems, the trust-region
 * method of MINPACK's lmder (Moré 1978: QR with column pivoting, the parameter from the secular
 * equation, scaling by the Jacobian's column norms), per point as a state machine so that a
 * chunk of points advances in rounds: one engine call for the Jacobians of the points that took
 * a step, one for the residuals at every point's trial step.  The per-point code is
 * solve/lm_point.h's, which a GPU context runs on the device (kernels/gpu_lsq.c); here the CPU
 * path, each thread on chunks of its own, and the dispatch between them.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dualbatch.h"
#include "exec.h"
#include "gpu.h"
#include "multi_gpu.h"
#include "solve/lm_point.h"
#include "solve/solve_common.h"

typedef struct lm {
  dual_context *ctx;
  const dual_program *prog;
  const dual_jac_colors *jc; /* J's structure and coloring (its view computes J S) */
  dual_lm_opts o;
  int n, m, np, threads;
  int alone; /* 1: the chunk is one thread's, its engine calls run on that thread alone
              * (dual_solve_residuals_cpu); 0: every call runs on `threads` threads (dual_run) */
  double *x;
  int64_t ldx;
  const double *p;
  int64_t ldp;
  dual_lm_pts P; /* per point of the chunk, point-major */
  int32_t *info, *iters; /* the caller's results (each may be NULL) */
  double *fnorm;
  /* compacted engine buffers */
  int64_t *idx;
  double *xa, *pa, *Fa, *Ja;
} lm;

/* F (and J, when not NULL) at the k gathered points xs (parameters L->pa) into L->Fa. */
static int residuals(lm *L, int64_t k, const double *xs, double *J) {
  if (L->alone) return dual_solve_residuals_cpu(L->ctx, L->prog, L->jc, k, xs, L->pa, L->Fa, J, 1);
  return dual_solve_residuals(L->ctx, L->prog, L->jc, k, xs, L->pa, L->Fa, J);
}

static int solve_chunk(lm *L, int64_t b0, int64_t count) {
  const int n = L->n, m = L->m, np = L->np;
  double *x0 = L->x;
  const double *p0 = L->p;
  L->x = x0 + b0 * L->ldx;
  L->p = p0 != NULL ? p0 + b0 * L->ldp : NULL;
  dual_lm_pts *P = &L->P;
  for (int64_t b = 0; b < count; ++b) P->state[b] = DUAL_LM_NEED_J, P->njev[b] = 0, P->nfev[b] = 0;
  int st = DUAL_SUCCESS;
  for (;;) {
    /* Jacobians where a step was accepted (or at the start) */
    int64_t k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (P->state[b] == DUAL_LM_NEED_J) L->idx[k++] = b;
    if (k > 0) {
      dual_solve_gather(k, L->idx, n, np, L->x, L->ldx, L->p, L->ldp, L->xa, L->pa, L->threads);
      st = residuals(L, k, L->xa, L->Ja);
      if (st != DUAL_SUCCESS) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (L->threads > 1 && k >= 64)
      for (int64_t i = 0; i < k; ++i) {
        const int64_t b = L->idx[i];
        dual_lm_take_jacobian(&L->o, P, b, n, m, L->Fa + i * m, L->Ja + i * (int64_t)m * n, 1,
                              L->x + b * L->ldx, 1);
      }
    }
    /* trial steps of every point still going */
    k = 0;
    for (int64_t b = 0; b < count; ++b)
      if (P->state[b] == DUAL_LM_TRIAL) L->idx[k++] = b;
    if (k == 0) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (L->threads > 1 && k >= 64)
    for (int64_t i = 0; i < k; ++i) {
      const int64_t b = L->idx[i];
      dual_lm_make_trial(P, b, n, m, m, L->x + b * L->ldx, 1, L->xa + i * n, 1);
      if (np > 0)
        for (int j = 0; j < np; ++j) L->pa[i * np + j] = L->p[b * L->ldp + j];
    }
    st = residuals(L, k, L->xa, NULL);
    if (st != DUAL_SUCCESS) break;
#pragma omp parallel for schedule(dynamic, 16) num_threads(L->threads) if (L->threads > 1 && k >= 64)
    for (int64_t i = 0; i < k; ++i) {
      const int64_t b = L->idx[i];
      dual_lm_judge_trial(&L->o, P, b, n, m, m, L->Fa + i * m, 1, L->xa + i * n, 1, L->x + b * L->ldx, 1);
    }
  }
  L->x = x0, L->p = p0;
  return st;
}

/* The work arrays of a chunk of C points (point-major); 0 when out of memory (what was allocated
 * is lm_free's). */
static int lm_alloc(lm *L, int64_t C) {
  const size_t c = (size_t)C, N = (size_t)L->n, M = (size_t)L->m, MN = M * N, W = M > N ? M : N;
  const size_t NP = L->np > 0 ? (size_t)L->np : 1;
  dual_lm_pts *P = &L->P;
  P->state = malloc(4 * c), P->njev = malloc(4 * c), P->nfev = malloc(4 * c), P->ipvt = malloc(4 * c * N);
  P->fnorm = malloc(8 * c), P->par = malloc(8 * c), P->delta = malloc(8 * c), P->xnorm = malloc(8 * c);
  P->gnorm = malloc(8 * c), P->pnorm = malloc(8 * c);
  P->diag = malloc(8 * c * N), P->A = malloc(8 * c * MN), P->rdiag = malloc(8 * c * N);
  P->acnorm = malloc(8 * c * N), P->qtf = malloc(8 * c * N);
  P->step = malloc(8 * c * N), P->sdiag = malloc(8 * c * N), P->wa1 = malloc(8 * c * N);
  P->wa2 = malloc(8 * c * W), P->wa3 = malloc(8 * c * N);
  P->C = 0; /* point-major */
  L->idx = malloc(8 * c), L->xa = malloc(8 * c * N), L->pa = malloc(8 * c * NP);
  L->Fa = malloc(8 * c * M), L->Ja = malloc(8 * c * MN);
  return P->state && P->njev && P->nfev && P->ipvt && P->fnorm && P->par && P->delta && P->xnorm &&
         P->gnorm && P->pnorm && P->diag && P->A && P->rdiag && P->acnorm && P->qtf && P->step &&
         P->sdiag && P->wa1 && P->wa2 && P->wa3 && L->idx && L->xa && L->pa && L->Fa && L->Ja;
}

static void lm_free(lm *L) {
  dual_lm_pts *P = &L->P;
  free(P->state), free(P->njev), free(P->nfev), free(P->ipvt), free(P->fnorm), free(P->par);
  free(P->delta), free(P->xnorm), free(P->gnorm), free(P->pnorm), free(P->diag), free(P->A);
  free(P->rdiag), free(P->acnorm), free(P->qtf), free(P->step), free(P->sdiag), free(P->wa1);
  free(P->wa2), free(P->wa3), free(L->idx), free(L->xa), free(L->pa), free(L->Fa), free(L->Ja);
}

/* Points b0 .. b0 + cnt by the chunk's arrays, their results to the caller's (dual_solve_chunk_fn). */
static int lm_chunk(void *w, int64_t b0, int64_t cnt) {
  lm *L = w;
  const int st = solve_chunk(L, b0, cnt);
  for (int64_t b = 0; st == DUAL_SUCCESS && b < cnt; ++b) {
    if (L->info != NULL) L->info[b0 + b] = L->P.state[b];
    if (L->iters != NULL) L->iters[b0 + b] = L->P.njev[b];
    if (L->fnorm != NULL) L->fnorm[b0 + b] = L->P.fnorm[b];
  }
  return st;
}

/* Levenberg–Marquardt on B points of host memory on the CPU.  On a CPU context the points go in
 * chunks of about 2 MiB of work arrays, each solved by one thread alone (its own arrays, its
 * engine calls on that thread), the threads taking chunks in turn, as dual_newton's; on a GPU
 * context (the points the GPU left), in larger chunks, each round's engine call on the context
 * and the per-point loops over the threads.  A point's arithmetic is the same either way. */
static int lsq_points_cpu(dual_context *ctx, const dual_program *prog, const dual_lm_opts *o,
                          int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp,
                          int32_t *info, int32_t *iters, double *fnorm) {
  if (B == 0) return DUAL_SUCCESS;
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  const int threads = dual_solve_threads(ctx), alone = ctx->device != DUAL_DEVICE_GPU;
  const int64_t W = m > n ? m : n;
  const int64_t per_point = 8 * (2 * (int64_t)m * n + 11 * (int64_t)n + W + m + np + 10);
  const int64_t C = alone ? dual_solve_thread_chunk(B, per_point, threads) : dual_solve_chunk(B, n, 2 * m, np);
  const int64_t chunks = (B + C - 1) / C;
  const int T = !alone ? 1 : chunks < threads ? (int)chunks : threads;
  dual_jac_colors jc;
  int st = dual_solve_colors(ctx, "dual_lsq", prog, 1, &jc);
  if (st != DUAL_SUCCESS) return st;
  lm *Ls = calloc((size_t)T, sizeof *Ls);
  if (Ls == NULL) st = DUAL_ERR_NO_MEMORY;
  for (int t = 0; t < T && st == DUAL_SUCCESS; ++t) {
    lm *L = &Ls[t];
    L->ctx = ctx, L->prog = prog, L->jc = &jc, L->o = *o, L->n = n, L->m = m, L->np = np;
    L->threads = alone ? 1 : threads, L->alone = alone;
    L->x = x, L->ldx = ldx, L->p = np > 0 ? p : NULL, L->ldp = ldp;
    L->info = info, L->iters = iters, L->fnorm = fnorm;
    if (!lm_alloc(L, C)) st = DUAL_ERR_NO_MEMORY;
  }
  if (st != DUAL_SUCCESS) {
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "dual_lsq: out of memory for the work arrays of %lld points",
                   (long long)C);
  } else {
    st = dual_solve_run_chunks(B, C, T, Ls, sizeof *Ls, lm_chunk);
    if (st == DUAL_SUCCESS && alone) dual_run_cpu_record(ctx, prog, DUAL_MODE_JACOBIAN);
  }
  for (int t = 0; Ls != NULL && t < T; ++t) lm_free(&Ls[t]);
  free(Ls);
  dual_jac_colors_free(&jc);
  return st;
}

/* Points [first, first + count) of the call by dual_lsq on ctx (one device's share). */
static int lsq_share(dual_context *ctx, int64_t first, int64_t count, void *arg) {
  const dual_solve_args *a = (const dual_solve_args *)arg;
  return DUAL_SOLVE_SHARE(dual_lsq, ctx, a, first, count);
}

static int lsq_call(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt,
                    int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                    int32_t *iters, double *fnorm) {
  const char *fn = "dual_lsq";
  if (prog == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "%s: program is NULL", fn);
  dual_solve_options o;
  int st = dual_solve_check_options(ctx, fn, opt, &o);
  if (st != DUAL_SUCCESS) return st;
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  if (m < n || n < 1)
    return dual_fail(ctx, DUAL_ERR_DIMENSION,
                     "%s: the program has %d outputs and %d inputs; least squares needs m >= n >= 1",
                     fn, m, n);
  st = dual_solve_check_arrays(ctx, fn, prog, B, x, ldx, p, ldp);
  int device_mem = 0;
  if (st == DUAL_SUCCESS) st = dual_solve_check_memory(ctx, fn, 1, x, p, info, iters, fnorm, &device_mem);
  if (st != DUAL_SUCCESS) return st;
  dual_clear_error(ctx);
  if (B == 0) return DUAL_SUCCESS;
  const dual_lm_opts lo = dual_lm_opts_of(&o, o.max_evals > 0 ? o.max_evals : 100 * (n + 1));
  if (ctx->device != DUAL_DEVICE_GPU)
    return lsq_points_cpu(ctx, prog, &lo, B, x, ldx, p, ldp, info, iters, fnorm);
  if (ctx->n_gpus > 1 && !device_mem && !ctx->solve_share) { /* a share per GPU */
    dual_solve_args a = {prog, opt, x, ldx, p, ldp, info, iters, fnorm};
    return dual_multi_gpu_solve(ctx, B, lsq_share, &a);
  }
  /* a GPU context: the iterates stay on the device (kernels/gpu_lsq.c, the CPU's bits) */
  int64_t done = 0;
  st = dual_gpu_lsq(ctx, prog, &lo, B, x, ldx, p, ldp, info, iters, fnorm, device_mem, &done);
  if (st == DUAL_SUCCESS) {
    ctx->last_device = DUAL_DEVICE_GPU;
    return st;
  }
  char *note = NULL;
  if (!dual_solve_may_fall_back(ctx, fn, st, device_mem, B, done, &note)) return st;
  st = lsq_points_cpu(ctx, prog, &lo, B - done, x + done * ldx, ldx, np > 0 ? p + done * ldp : p,
                      ldp, info ? info + done : NULL, iters ? iters + done : NULL,
                      fnorm ? fnorm + done : NULL);
  if (st == DUAL_SUCCESS) dual_solve_fell_back(ctx, note);
  else free(note);
  return st;
}

int dual_lsq(dual_context *ctx, const dual_program *prog, const dual_solve_options *opt, int64_t B,
             double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
             double *fnorm) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  dual_solve_begin(ctx);
  return dual_solve_end(ctx, lsq_call(ctx, prog, opt, B, x, ldx, p, ldp, info, iters, fnorm));
}
