/*
 * gpu_lsq.c — dual_lsq on a GPU context (gpu.h: dual_gpu_lsq): the iterates and the solver's
 * per-point state stay on the device.  A chunk of points is copied in once; each round gathers
 * the points that need a Jacobian (a stable compaction on the device), evaluates F and J there
 * with the engine in place and runs their dual_lm_take_jacobian in a kernel; then gathers the
 * points with a trial step to make, makes the trial points in a kernel, evaluates F there and
 * judges them in a kernel (solve/lm_point.h, the CPU's code, so the CPU's bits).  Only the counts
 * of points come back to the host per round; results are copied out once per chunk.  For larger
 * m x n (DUAL_KNOB_SOLVE_QR) cuBLAS's batched QR first reduces each point's [J F] to n + 1 rows
 * (lsq_kernels.h), and the kernels work on those: the results agree with the CPU's to rounding.
 */
#include <omp.h>
#include <string.h>

#include "context.h"
#include "kernels/cublas_batched.h"
#include "kernels/gpu_solve_io.h"
#include "kernels/gpu_state.h"
#include "kernels/lsq_kernels.h"
#include "kernels/newton_kernels.h" /* dual_newton_select_bytes */

/* Device bytes per point of a chunk (lsq_kernels.h's arrays; qr: the cuBLAS rounds' too). */
static size_t bytes_per_point(int n, int m, int np, int qr) {
  const size_t N = (size_t)n, M = (size_t)m, W = M > N ? M : N;
  size_t d = 6 + 8 * N + W + 2 * M * N + 2 * N + 2 * (size_t)np + M;
  if (qr) d += M * (N + 1) + (N + 1) + 2; /* Q, tau, Qp, Tp */
  const size_t i = 3 + N + 1;
  return 8 * d + 4 * i + 1;
}

/* Carve the chunk's arrays out of one allocation (8-byte arrays first). */
static void carve(dual_lsq_dev *d, char *base) {
  const int64_t C = d->C, n = d->n, m = d->m, np = d->np, W = m > n ? m : n;
  dual_lm_pts *P = &d->P;
  double *q = (double *)base;
  P->fnorm = q, q += C, P->par = q, q += C, P->delta = q, q += C, P->xnorm = q, q += C;
  P->gnorm = q, q += C, P->pnorm = q, q += C;
  P->diag = q, q += n * C, P->rdiag = q, q += n * C, P->acnorm = q, q += n * C, P->qtf = q, q += n * C;
  P->step = q, q += n * C, P->sdiag = q, q += n * C, P->wa1 = q, q += n * C, P->wa3 = q, q += n * C;
  P->wa2 = q, q += W * C, P->A = q, q += m * n * C;
  d->X = q, q += n * C, d->P_ = q, q += np * C, d->xa = q, q += n * C, d->pa = q, q += np * C;
  d->F = q, q += m * C, d->J = q, q += m * n * C;
  d->Q = d->tau = NULL, d->Qp = d->Tp = NULL;
  if (d->qr) {
    d->Q = q, q += m * (n + 1) * C, d->tau = q, q += (n + 1) * C;
    d->Qp = (double **)q, q += C, d->Tp = (double **)q, q += C;
  }
  int32_t *r = (int32_t *)q;
  P->state = r, r += C, P->njev = r, r += C, P->nfev = r, r += C, P->ipvt = r, r += n * C;
  d->idx = r, r += C;
  d->flags = (uint8_t *)r;
  P->C = C;
}

/* Whether the rounds use cuBLAS's QR: the knob's choice (DUAL_KNOB_SOLVE_QR), the rule's from
 * m x n = 64 x 8 on (bench/results/qr-gpu-2026-11-28-h200.txt: cuBLAS factors 3.8-4x faster than
 * the kernel there; 0.66x at 8 x 2), and m > n either way; *why says why not, where asked for and
 * cuBLAS is missing. */
static int use_cublas_qr(const dual_context *ctx, int n, int m, char *why, size_t cap) {
  const int64_t knob = ctx->knobs[DUAL_KNOB_SOLVE_QR];
  const int want = m > n && (knob == 2 || (knob == 0 && m >= 64 && n >= 8));
  if (!want) return 0;
  if (dual_cublas_available(why, cap)) return why[0] = '\0', 1;
  if (knob == 0) why[0] = '\0'; /* the rule's choice: the kernel's QR, unsaid */
  return 0;
}

typedef struct driver {
  dual_context *ctx;
  const dual_program *prog;
  struct dual_gpu *g;
  dual_lsq_dev d;
  cudaStream_t stream;
  int64_t k_host; /* the count, read back each round */
  dual_gpu_solve_io io;
} driver;

static int cuda(driver *v, cudaError_t e, const char *what) {
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(v->ctx, e, what);
}

/* The points in state `want` into d.idx, their count into d.k (read back: a sync). */
static int select_points(driver *v, int32_t want) {
  const int e = dual_lsq_select(&v->d, want, v->io.k_dev, v->io.temp, v->io.temp_bytes, v->stream);
  return dual_gpu_solve_read_count(&v->io, e, v->io.k_dev, &v->k_host, &v->d.k, "selecting points");
}

/* F (and J: with_j) at the gathered points xa, pa, in place on the device. */
static int evaluate(driver *v, int with_j) {
  const dual_lsq_dev *d = &v->d;
  dual_batch b;
  dual_batch_init(&b);
  b.count = d->k, b.memory = DUAL_MEMORY_DEVICE;
  b.x = d->xa, b.x_ps = 1, b.x_es = d->k;
  if (d->np > 0) b.p = d->pa, b.p_ps = 1, b.p_es = d->k;
  b.y = d->F, b.y_ps = 1, b.y_es = d->k;
  if (with_j) b.d = d->J, b.d_ps = 1, b.d_rs = (int64_t)d->n * d->k, b.d_cs = d->k;
  v->ctx->gpu_no_wait = 1; /* the round's kernels follow on the stream; the next select waits */
  const int st = dual_run(v->ctx, v->prog, with_j ? DUAL_MODE_JACOBIAN : DUAL_MODE_EVAL, &b);
  v->ctx->gpu_no_wait = 0;
  return st;
}

/* The selected points' Jacobians through cuBLAS's QR: the checks and [J F] into Q, the
 * factorization, then each point's R1 and Q1^T F factored by the kernel. */
static int take_by_cublas(driver *v) {
  const dual_lsq_dev *d = &v->d;
  int st = cuda(v, (cudaError_t)dual_lsq_qr_prepare(d, v->stream), "dual_lsq: a round");
  if (st == DUAL_SUCCESS)
    st = dual_cublas_qr(v->ctx, v->g, v->stream, d->m, d->n + 1, d->Qp, d->m, d->Tp, (int)d->k);
  if (st == DUAL_SUCCESS) st = cuda(v, (cudaError_t)dual_lsq_qr_take(d, v->stream), "dual_lsq: a round");
  return st;
}

static int solve_chunk(driver *v) {
  int st = cuda(v, (cudaError_t)dual_lsq_init(&v->d, v->stream), "dual_lsq: starting a chunk");
  if (st == DUAL_SUCCESS && v->d.qr)
    st = cuda(v, (cudaError_t)dual_lsq_qr_pointers(&v->d, v->stream), "dual_lsq: starting a chunk");
  for (;;) { /* a round: Jacobians where a step was accepted, then every point's trial step */
    if (st == DUAL_SUCCESS) st = select_points(v, DUAL_LM_NEED_J);
    if (st == DUAL_SUCCESS && v->d.k > 0) {
      st = cuda(v, (cudaError_t)dual_lsq_gather(&v->d, 1, v->stream), "dual_lsq: gathering points");
      if (st == DUAL_SUCCESS) st = evaluate(v, 1);
      if (st == DUAL_SUCCESS && v->d.qr) st = take_by_cublas(v);
      else if (st == DUAL_SUCCESS)
        st = cuda(v, (cudaError_t)dual_lsq_take_jacobians(&v->d, v->stream), "dual_lsq: a round");
    }
    if (st == DUAL_SUCCESS) st = select_points(v, DUAL_LM_TRIAL);
    if (st != DUAL_SUCCESS || v->d.k == 0) return st;
    st = cuda(v, (cudaError_t)dual_lsq_gather(&v->d, 0, v->stream), "dual_lsq: gathering points");
    if (st == DUAL_SUCCESS)
      st = cuda(v, (cudaError_t)dual_lsq_make_trials(&v->d, v->stream), "dual_lsq: a round");
    if (st == DUAL_SUCCESS) st = evaluate(v, 0);
    if (st == DUAL_SUCCESS)
      st = cuda(v, (cudaError_t)dual_lsq_judge_trials(&v->d, v->stream), "dual_lsq: a round");
  }
}

static int lsq_on_current(dual_context *ctx, const dual_program *prog, const dual_lm_opts *o, int64_t B,
                          double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                          double *fnorm, int device_mem, int64_t *done) {
  *done = 0;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st != DUAL_SUCCESS) return st;
  driver v;
  memset(&v, 0, sizeof v);
  v.ctx = ctx, v.prog = prog, v.g = g;
  v.stream = ctx->stream != NULL ? (cudaStream_t)ctx->stream : g->streams[0];
  if (device_mem && (st = dual_gpu_device_stream(ctx, g, NULL, &v.stream)) != DUAL_SUCCESS) return st;
  v.io.ctx = ctx, v.io.stream = v.stream, v.io.device_mem = device_mem, v.io.fn = "dual_lsq";
  v.io.threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  const int np = dual_program_num_params(prog);
  char no_blas[600] = ""; /* the knob asked for cuBLAS and it did not load: said in the note */
  v.d.qr = use_cublas_qr(ctx, n, m, no_blas, sizeof no_blas);
  v.d.mr = v.d.qr ? n + 1 : m;
  const size_t per_point = bytes_per_point(n, m, np, v.d.qr);
  const int64_t C = dual_gpu_solve_chunk(B, ctx->stage_points, per_point);
  v.d.n = n, v.d.m = m, v.d.np = np, v.d.o = *o;
  st = dual_gpu_solve_space(&v.io, g, C, per_point, n > np ? n : np);
  for (int64_t b0 = 0; st == DUAL_SUCCESS && b0 < B; b0 += C) {
    const int64_t c = B - b0 < C ? B - b0 : C;
    v.d.C = c; /* the last chunk may be shorter: its arrays keep stride c */
    carve(&v.d, v.io.arena);
    st = dual_gpu_solve_copy_in(&v.io, x + b0 * ldx, ldx, n, c, c, v.d.xa, v.d.X);
    if (st == DUAL_SUCCESS && np > 0)
      st = dual_gpu_solve_copy_in(&v.io, p + b0 * ldp, ldp, np, c, c, v.d.pa, v.d.P_);
    if (st == DUAL_SUCCESS) st = solve_chunk(&v);
    if (st == DUAL_SUCCESS)
      st = dual_gpu_solve_copy_out(&v.io, b0, c, v.d.X, n, v.d.xa, x, ldx, v.d.P.state, v.d.P.njev,
                                   v.d.P.fnorm, info, iters, fnorm, NULL);
    if (st == DUAL_SUCCESS) *done = b0 + c;
  }
  if (v.io.arena != NULL) cudaStreamSynchronize(v.stream);
  if (st == DUAL_SUCCESS && no_blas[0] != '\0') /* after the engine's calls, which clear notes */
    dual_set_note(ctx, dual_strdup_printf("dual_lsq: the in-kernel QR ran: %s", no_blas));
  return st;
}

int dual_gpu_lsq(dual_context *ctx, const dual_program *prog, const dual_lm_opts *o, int64_t B,
                 double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                 double *fnorm, int device_mem, int64_t *done) {
  *done = 0;
  DUAL_ON_CONTEXT_GPU(ctx, lsq_on_current(ctx, prog, o, B, x, ldx, p, ldp, info, iters, fnorm,
                                          device_mem, done));
}
