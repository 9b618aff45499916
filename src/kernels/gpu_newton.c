/*
 * gpu_newton.c — dual_newton on a GPU context (gpu.h: dual_gpu_newton): the iterates stay on the
 * device.  A chunk of points is copied in once; each round gathers the points not done (a stable
 * compaction on the device), evaluates F and J there with the engine in place (device-memory
 * batch, element-major, so J lands in the layout the per-point LU reads) — at a point's iterate,
 * or at its line search's trial point, so that an accepted step goes straight on to the next
 * Newton step — and runs the round's per-point code (solve/newton_point.h, the CPU's code) in a
 * kernel.  Only the count of points each engine call covers comes back to the host per round.
 * Results, iteration counts and norms are copied out once per chunk.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "kernels/cublas_batched.h"
#include "kernels/gpu_solve_io.h"
#include "kernels/gpu_state.h"
#include "kernels/newton_kernels.h"
#include "solve/solve_common.h"

/* Device bytes per point of a chunk (newton_kernels.h's arrays; blas: cuBLAS rounds' too). */
static size_t bytes_per_point(int n, int np, int blas) {
  size_t d = 4 + 3 * (size_t)n + (size_t)np + (size_t)n + (size_t)np + (size_t)n + (size_t)n * n;
  if (blas) d += (size_t)n * n + (size_t)n + 3; /* A, Bv, amax, Ap, Bp */
  const size_t i = 5 + 1 + 1 + (size_t)n + (blas ? 1 : 0);
  return 8 * d + 4 * i + 1;
}

/* Carve the chunk's arrays out of one allocation (8-byte arrays first; blas: the cuBLAS
 * rounds' arrays too). */
static void carve(dual_newton_dev *d, char *base, int blas) {
  const int64_t C = d->C, n = d->n, np = d->np;
  double *q = (double *)base;
  d->P.fn = q, q += C, d->P.fn0 = q, q += C, d->P.alpha = q, q += C, d->P.phi0 = q, q += C;
  d->X = q, q += n * C, d->XT = q, q += n * C, d->DX = q, q += n * C, d->P_ = q, q += np * C;
  d->xa = q, q += n * C, d->pa = q, q += np * C, d->F = q, q += n * C, d->J = q, q += n * n * C;
  d->A = d->Bv = d->amax = NULL, d->Ap = d->Bp = NULL, d->info = NULL;
  if (blas) {
    d->A = q, q += n * n * C, d->Bv = q, q += n * C, d->amax = q, q += C;
    d->Ap = (double **)q, q += C, d->Bp = (double **)q, q += C;
  }
  int32_t *r = (int32_t *)q;
  d->P.state = r, r += C, d->P.steps = r, r += C, d->P.reductions = r, r += C;
  d->P.damped = r, r += C, d->P.last = r, r += C, d->phase = r, r += C, d->idx = r, r += C;
  d->piv = r, r += n * C;
  if (blas) d->info = r, r += C;
  d->flags = (uint8_t *)r;
}

typedef struct driver {
  dual_context *ctx;
  const dual_program *prog;
  dual_newton_dev d;
  cudaStream_t stream;
  int64_t k_host; /* the count, read back each round */
  int lu;   /* DUAL_NEWTON_LU_*: the step's kernel (DUAL_KNOB_SOLVE_LU) */
  int blas; /* the rounds use cuBLAS's LU */
  struct dual_gpu *g;
  dual_gpu_solve_io io; /* the copies in and out */
  dual_jac_colors jc;   /* J's structure and coloring */
  int colored;          /* the engine computes J S by jc.view for the lane groups (d.nc > 0) */
} driver;

static int cuda(driver *v, cudaError_t e, const char *what) {
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(v->ctx, e, what);
}

/* The points not done into d.idx, their count into d.k (read back: the round's one sync). */
static int select_points(driver *v) {
  const int e = dual_newton_select(&v->d, v->io.k_dev, v->io.temp, v->io.temp_bytes, v->stream);
  return dual_gpu_solve_read_count(&v->io, e, v->io.k_dev, &v->k_host, &v->d.k, "selecting points");
}

/* F and J at the selected points (their iterates or trial points), in place on the device. */
static int evaluate(driver *v) {
  const dual_newton_dev *d = &v->d;
  int st = cuda(v, (cudaError_t)dual_newton_gather(d, v->stream), "dual_newton: gathering points");
  if (st != DUAL_SUCCESS) return st;
  dual_batch b;
  dual_batch_init(&b);
  b.count = d->k, b.memory = DUAL_MEMORY_DEVICE;
  b.x = d->xa, b.x_ps = 1, b.x_es = d->k;
  if (d->np > 0) b.p = d->pa, b.p_ps = 1, b.p_es = d->k;
  b.y = d->F, b.y_ps = 1, b.y_es = d->k;
  const int32_t cols = v->colored ? v->jc.ncolors : d->n;
  b.d = d->J, b.d_ps = 1, b.d_rs = (int64_t)cols * d->k, b.d_cs = d->k;
  v->ctx->gpu_no_wait = 1; /* the round's kernels follow on the stream; select_points waits */
  st = dual_run(v->ctx, v->colored ? v->jc.view : v->prog, DUAL_MODE_JACOBIAN, &b);
  v->ctx->gpu_no_wait = 0;
  return st;
}

/* The round's verdicts and steps with cuBLAS's LU: the per-point code before and after it. */
static int blas_round(driver *v) {
  const dual_newton_dev *d = &v->d;
  int st = cuda(v, (cudaError_t)dual_newton_blas_prepare(d, v->stream), "dual_newton: a round");
  if (st == DUAL_SUCCESS && d->n > 0)
    st = dual_cublas_lu_solve(v->ctx, v->g, v->stream, d->n, d->Ap, d->piv, d->info, d->Bp, (int)d->k);
  if (st == DUAL_SUCCESS) st = cuda(v, (cudaError_t)dual_newton_blas_finish(d, v->stream), "dual_newton: a round");
  return st;
}

static int solve_chunk(driver *v) {
  int st = cuda(v, (cudaError_t)dual_newton_init(&v->d, v->stream), "dual_newton: starting a chunk");
  if (st == DUAL_SUCCESS && v->blas)
    st = cuda(v, (cudaError_t)dual_newton_blas_pointers(&v->d, v->stream), "dual_newton: starting a chunk");
  for (;;) { /* a round: F and J at every point not done, then each point's verdict and step */
    if (st == DUAL_SUCCESS) st = select_points(v);
    if (st != DUAL_SUCCESS || v->d.k == 0) return st;
    st = evaluate(v);
    if (st == DUAL_SUCCESS && v->blas) st = blas_round(v);
    else if (st == DUAL_SUCCESS)
      st = cuda(v, (cudaError_t)dual_newton_steps(&v->d, v->lu, v->stream), "dual_newton: a round");
  }
}

static int newton_on_current(dual_context *ctx, const dual_program *prog, const dual_newton_opts *o, int64_t B,
                             double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                             double *fnorm, int device_mem, int32_t *host_state, int64_t *done) {
  *done = 0;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st != DUAL_SUCCESS) return st;
  driver v;
  memset(&v, 0, sizeof v);
  v.ctx = ctx, v.prog = prog, v.g = g;
  v.lu = (int)ctx->knobs[DUAL_KNOB_SOLVE_LU]; /* DUAL_NEWTON_LU_* */
  v.stream = ctx->stream != NULL ? (cudaStream_t)ctx->stream : g->streams[0];
  if (device_mem && (st = dual_gpu_device_stream(ctx, g, NULL, &v.stream)) != DUAL_SUCCESS) return st;
  const int n = dual_program_num_inputs(prog), np = dual_program_num_params(prog);
  char no_blas[600] = ""; /* the knob asked for cuBLAS and it did not load: said in the note */
  if (v.lu == DUAL_NEWTON_LU_CUBLAS) {
    v.blas = dual_cublas_available(no_blas, sizeof no_blas);
    if (v.blas) no_blas[0] = '\0';
    else v.lu = DUAL_NEWTON_LU_AUTO; /* the rule's in-kernel LU instead */
  }
  v.io.ctx = ctx, v.io.stream = v.stream, v.io.device_mem = device_mem, v.io.fn = "dual_newton";
  v.io.threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
  const int64_t C = dual_gpu_solve_chunk(B, ctx->stage_points, bytes_per_point(n, np, v.blas));
  v.d.C = C, v.d.n = n, v.d.np = np, v.d.o = *o;
  /* J S for the lane groups, which read J's structural entries from it: J's traffic (the
   * engine's stores, the groups' loads) cut to its structure, and the compiled tier's passes to
   * the colors' (kin: 9 colors, one pass of 16 lanes instead of two; H200, device arrays: bratu15
   * 5.1e7 -> 6.9e7 cells/s at 1e6 points, kin 4.3e6 -> 4.9e6).  Not for the other rounds: an
   * expansion to J before them measured slower (bratu48, thread per point: -5 %) */
  const int groups = !v.blas && dual_newton_steps_use_groups(&v.d, v.lu);
  st = dual_solve_colors(ctx, "dual_newton", prog, 0, &v.jc);
  v.colored = st == DUAL_SUCCESS && groups && v.jc.view != NULL;
  if (v.colored) {
    v.d.nc = v.jc.ncolors; /* the lane groups read J S */
    for (int j = 0; j < n; ++j) v.d.color[j] = (int8_t)v.jc.color[j];
    for (int r = 0; r < n; ++r)
      for (int e = v.jc.row_start[r]; e < v.jc.row_start[r + 1]; ++e) v.d.row_mask[r] |= 1u << v.jc.cols[e];
  }
  if (st == DUAL_SUCCESS) st = dual_gpu_solve_space(&v.io, g, C, bytes_per_point(n, np, v.blas), n > np ? n : np);
  for (int64_t b0 = 0; st == DUAL_SUCCESS && b0 < B; b0 += C) {
    const int64_t c = B - b0 < C ? B - b0 : C;
    v.d.C = c; /* the last chunk may be shorter: its arrays keep stride c */
    carve(&v.d, v.io.arena, v.blas);
    st = dual_gpu_solve_copy_in(&v.io, x + b0 * ldx, ldx, n, c, c, v.d.xa, v.d.X);
    if (st == DUAL_SUCCESS && np > 0) st = dual_gpu_solve_copy_in(&v.io, p + b0 * ldp, ldp, np, c, c, v.d.pa, v.d.P_);
    if (st == DUAL_SUCCESS) st = solve_chunk(&v);
    if (st == DUAL_SUCCESS)
      st = dual_gpu_solve_copy_out(&v.io, b0, c, v.d.X, n, v.d.xa, x, ldx, v.d.P.state, v.d.P.steps,
                                   v.d.P.fn, info, iters, fnorm, host_state);
    if (st == DUAL_SUCCESS) *done = b0 + c;
  }
  if (v.io.arena != NULL) cudaStreamSynchronize(v.stream);
  dual_jac_colors_free(&v.jc);
  if (st == DUAL_SUCCESS && no_blas[0] != '\0') /* after the engine's calls, which clear notes */
    dual_set_note(ctx, dual_strdup_printf("dual_newton: the in-kernel LU ran: %s", no_blas));
  return st;
}

int dual_gpu_newton(dual_context *ctx, const dual_program *prog, const dual_newton_opts *o, int64_t B,
                    double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                    double *fnorm, int device_mem, int32_t *host_state, int64_t *done) {
  *done = 0;
  DUAL_ON_CONTEXT_GPU(ctx, newton_on_current(ctx, prog, o, B, x, ldx, p, ldp, info, iters, fnorm,
                                             device_mem, host_state, done));
}

int dual_gpu_is_device_pointer(const void *p) {
  if (p == NULL) return 0;
  struct cudaPointerAttributes at;
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError(); /* a host pointer CUDA never saw: not an error to keep */
    return 0;
  }
  return at.type == cudaMemoryTypeDevice;
}

static int copy_on_current(dual_context *ctx, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                           size_t bytes, int64_t rows, const char *what) {
  if (bytes == 0 || rows == 0) return DUAL_SUCCESS;
  const cudaError_t e = cudaMemcpy2D(dst, dst_pitch, src, src_pitch, bytes, (size_t)rows, cudaMemcpyDefault);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, what);
}

int dual_gpu_copy(dual_context *ctx, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                  size_t bytes, int64_t rows, const char *what) {
  DUAL_ON_CONTEXT_GPU(ctx, copy_on_current(ctx, dst, dst_pitch, src, src_pitch, bytes, rows, what));
}

static int solve_buffer_on_current(dual_context *ctx, int which, size_t bytes, void **p, const char *what) {
  *p = NULL;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_reserve(ctx, &g->solve[which], bytes > 0 ? bytes : 1, what);
  if (st == DUAL_SUCCESS) *p = g->solve[which].ptr;
  return st;
}

int dual_gpu_solve_buffer(dual_context *ctx, int which, size_t bytes, void **p, const char *what) {
  *p = NULL;
  DUAL_ON_CONTEXT_GPU(ctx, solve_buffer_on_current(ctx, which, bytes, p, what));
}
