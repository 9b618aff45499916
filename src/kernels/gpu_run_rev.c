/*
 * gpu_run_rev.c — runs a checked reverse-mode job (VJP; gradient or Jacobian in reverse mode;
 * Hessian or HVP forward-over-reverse) on the GPU.  The host plans the sweeps (engine/rev_plan.h, the CPU's plan) under the memory
 * budget, uploads the bytecode, auxiliary words, constants and segments, and launches the reverse
 * kernel: in place on device-memory batches, or on host-memory batches chunk by chunk through
 * pinned staging.  Memory: each resident thread holds one point's storage (values, tape,
 * adjoints, derivatives: rev_plan.h); the plan is chosen so that every multiprocessor can hold
 * its resident blocks, else at least one block each, checkpointing the tape when it must.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pass2.h" /* dual_pass2_out_len */
#include "engine/rev_plan.h"
#include "kernels/gpu_state.h"

enum { ALIGNR = 256 };

static size_t upr(size_t v) { return (v + ALIGNR - 1) / ALIGNR * ALIGNR; }

/* The program's words, auxiliary words, constants and segments on the device. */
static int upload(dual_context *ctx, struct dual_gpu *g, const dual_program *prog,
                  const dual_rev_plan *pl, dual_gpu_rev_args *a, cudaStream_t stream) {
  const size_t ni = (size_t)prog->n_instr;
  const size_t o_aux = upr(ni * DUAL_INSTR_WORDS * 4), o_k = o_aux + upr(ni * 4 + 1);
  const size_t o_seg = o_k + upr((size_t)prog->n_const * 8 + 1);
  const size_t bytes = o_seg + ((size_t)pl->nseg + 1) * 8;
  g->key_valid = 0; /* the first-order plan cache shares the buffer */
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]);
  int st = dual_gpu_reserve(ctx, &g->plan, bytes, "allocating the reverse-mode program");
  if (st != DUAL_SUCCESS) return st;
  char *base = (char *)g->plan.ptr;
  const enum cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  cudaError_t e = cudaMemcpyAsync(base, prog->code, ni * DUAL_INSTR_WORDS * 4, h2d, stream);
  if (e == cudaSuccess) e = cudaMemcpyAsync(base + o_aux, pl->aux, ni * 4, h2d, stream);
  if (e == cudaSuccess && prog->n_const > 0)
    e = cudaMemcpyAsync(base + o_k, prog->consts, (size_t)prog->n_const * 8, h2d, stream);
  if (e == cudaSuccess) e = cudaMemcpyAsync(base + o_seg, pl->seg, ((size_t)pl->nseg + 1) * 8, h2d, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* pageable sources */
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "copying the reverse-mode program");
  a->code = (const uint32_t *)base;
  a->aux = (const uint32_t *)(base + o_aux);
  a->consts = (const double *)(base + o_k);
  a->seg = (const int64_t *)(base + o_seg);
  return DUAL_SUCCESS;
}

/* The plan and how many blocks run at once, for `room` bytes of block storage: every resident
 * block of every multiprocessor with the whole tape if that fits, else one block per
 * multiprocessor (checkpointed if need be), else a single block. */
static int plan_blocks(dual_context *ctx, const dual_program *prog, int for_, size_t room, int sm,
                       int bps, int64_t extra, dual_rev_plan *pl, int64_t *blocks) {
  const int64_t T = DUAL_GPU_REV_THREADS;
  const int64_t want[3] = {(int64_t)sm * bps, sm, 1};
  int st = DUAL_ERR_LIMIT;
  for (int i = 0; i < 3 && st == DUAL_ERR_LIMIT; ++i) {
    const int64_t budget = (int64_t)(room / 8) / (want[i] * T) - extra; /* extra: dual_sgrad's rows */
    if (budget < 1) continue;
    st = dual_rev_plan_build(pl, prog, for_, i == 0 ? 0 : budget); /* first: whole tape, if it fits */
    if (st == DUAL_SUCCESS && i == 0 && pl->nseg == 1 && pl->per_point > budget) {
      /* the whole tape fits fewer blocks: keep it if every multiprocessor still gets one */
      if ((int64_t)(room / 8) / ((pl->per_point + extra) * T) >= sm) break;
      dual_rev_plan_free(pl);
      st = DUAL_ERR_LIMIT;
    }
  }
  if (st == DUAL_ERR_LIMIT)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "GPU reverse mode: a block of %d points needs at "
                     "least %lld bytes of tape and snapshots, over the memory limit of %zu bytes "
                     "(dual_context_set_memory_limit)", DUAL_GPU_REV_THREADS,
                     (long long)(pl->per_point * T * 8), room);
  if (st != DUAL_SUCCESS)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  if ((pl->per_point + extra) * T >= ((int64_t)1 << 31)) {
    dual_rev_plan_free(pl);
    return dual_fail(ctx, DUAL_ERR_LIMIT, "GPU reverse mode: a point's storage of %lld doubles "
                     "is too large", (long long)pl->per_point);
  }
  *blocks = (int64_t)(room / 8) / ((pl->per_point + extra) * T);
  if (*blocks > want[0]) *blocks = want[0];
  if (*blocks < 1) {
    dual_rev_plan_free(pl);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "GPU reverse mode: one block's storage (%lld bytes) "
                     "is over the memory limit of %zu bytes", (long long)(pl->per_point * T * 8), room);
  }
  return DUAL_SUCCESS;
}

static int launch(dual_context *ctx, const dual_gpu_rev_args *a, int64_t max_blocks, cudaStream_t s) {
  int64_t blocks = (a->count + DUAL_GPU_REV_THREADS - 1) / DUAL_GPU_REV_THREADS;
  if (blocks > max_blocks) blocks = max_blocks;
  cudaError_t e = dual_gpu_injected_fault("launch");
  if (e == cudaSuccess) e = (cudaError_t)dual_gpu_kernel_rev_launch(a, blocks, (void *)s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "running the reverse-mode kernel");
}

/* A host-memory batch: chunks of points packed into pinned staging, copied in, run, copied out
 * and unpacked into the caller's strided arrays, one after another on the context's stream.
 * Per point: x, p, u (VJP), v (HVP) in; y, the derivative rows d, the h rows (forward-over-
 * reverse) and the status out. */
static int run_host(dual_context *ctx, struct dual_gpu *g, const dual_job *job, dual_gpu_rev_args *a,
                    size_t room, int64_t max_blocks, cudaStream_t stream) {
  const dual_batch *b = job->b;
  const int64_t B = b->count, n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int for_ = a->second != 0;
  const int64_t rows = for_ ? (b->d != NULL ? m : 0) : a->sweeps; /* derivative rows per point */
  const int64_t nu = a->vjp ? m : 0, nv = a->second == DUAL_MODE_HVP ? n : 0;
  const int64_t len = for_ ? dual_pass2_out_len(job->mode, n, b->h_layout) : 0;
  const size_t per_point = (size_t)(n + np + nu + nv + m + rows * n + m * len) * 8 + 4;
  if (room <= per_point * 64)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "GPU: the memory limit holds no chunk of points");
  int64_t chunk = (int64_t)((room - 8 * ALIGNR) / per_point);
  if (chunk > ((int64_t)1 << 18)) chunk = (int64_t)1 << 18;
  if (chunk > B) chunk = B;
  const size_t pts = (size_t)chunk;
  const size_t o_p = upr(pts * n * 8), o_u = o_p + upr(pts * np * 8);
  const size_t o_v = o_u + upr(pts * nu * 8), o_y = o_v + upr(pts * nv * 8);
  const size_t o_d = o_y + upr(pts * m * 8), o_h = o_d + upr(pts * rows * n * 8);
  const size_t o_st = o_h + upr(pts * m * len * 8), end = o_st + upr(pts * 4);
  const size_t scratch = upr((size_t)max_blocks * (size_t)a->slab * 8);
  int st = dual_gpu_reserve(ctx, &g->pool, scratch + end, "allocating the device memory pool");
  if (st == DUAL_SUCCESS) st = dual_gpu_reserve_pinned(ctx, g, end);
  if (st != DUAL_SUCCESS) return st;
  char *pin = (char *)g->pinned[0], *dev = (char *)g->pool.ptr + scratch;
  a->scratch = (double *)g->pool.ptr;
  a->x = (const double *)dev, a->x_ps = n, a->x_es = 1;
  a->p = (const double *)(dev + o_p), a->p_ps = np, a->p_es = 1;
  a->u = (const double *)(dev + o_u), a->u_ps = m, a->u_es = 1;
  a->v = (const double *)(dev + o_v), a->v_ps = n, a->v_es = 1;
  a->y = (double *)(dev + o_y), a->y_ps = m, a->y_es = 1;
  a->d = rows > 0 ? (double *)(dev + o_d) : NULL, a->d_ps = rows * n, a->d_rs = n, a->d_cs = 1;
  a->h = len > 0 ? (double *)(dev + o_h) : NULL, a->h_ps = m * len, a->h_rs = len, a->h_es = 1;
  a->status = (int32_t *)(dev + o_st);
  for (int64_t p0 = 0; p0 < B && st == DUAL_SUCCESS; p0 += chunk) {
    const int64_t c = B - p0 < chunk ? B - p0 : chunk;
    dual_gpu_gather(b->x, b->x_ps, b->x_es, p0, c, n, (double *)pin, job->threads);
    dual_gpu_gather(b->p, b->p_ps, b->p_es, p0, c, np, (double *)(pin + o_p), job->threads);
    if (nu > 0) dual_gpu_gather(b->u, b->u_ps, b->u_es, p0, c, m, (double *)(pin + o_u), job->threads);
    if (nv > 0) dual_gpu_gather(b->v, b->v_ps, b->v_es, p0, c, n, (double *)(pin + o_v), job->threads);
    cudaError_t e = cudaMemcpyAsync(dev, pin, o_y, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "copying a chunk to the device");
    a->count = c;
    a->sg.point0 = job->point0 + p0;
    st = launch(ctx, a, max_blocks, stream);
    if (st != DUAL_SUCCESS) break;
    e = cudaMemcpyAsync(pin + o_y, dev + o_y, end - o_y, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "copying a chunk from the device");
    const double *y = (const double *)(pin + o_y), *d = (const double *)(pin + o_d);
    const double *h = (const double *)(pin + o_h);
    const int32_t *sp = (const int32_t *)(pin + o_st);
#pragma omp parallel for num_threads(job->threads) schedule(static) if (c * (rows * n + m * len) > 65536)
    for (int64_t i = 0; i < c; ++i) {
      const int64_t pt = p0 + i;
      if (b->y != NULL)
        for (int64_t r = 0; r < m; ++r) b->y[pt * b->y_ps + r * b->y_es] = y[i * m + r];
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j)
          b->d[pt * b->d_ps + r * b->d_rs + j * b->d_cs] = d[(i * rows + r) * n + j];
      for (int64_t r = 0; r < m && len > 0; ++r)
        for (int64_t e2 = 0; e2 < len; ++e2)
          b->h[pt * b->h_ps + r * b->h_rs + e2 * b->h_es] = h[(i * m + r) * len + e2];
      if (b->status != NULL) b->status[pt] = sp[i];
    }
  }
  return st;
}

int dual_gpu_run_rev(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  const dual_program *prog = job->prog;
  if (b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
  const int for_ = dual_mode_is_second_order(job->mode); /* forward-over-reverse */
  int bps = 0;
  const int64_t extra = dual_gpu_sgrad_rows(job); /* dual_sgrad's spare rows (gpu_kernel.h) */
  cudaError_t e = (cudaError_t)dual_gpu_kernel_rev_blocks_per_sm(for_ ? 1 : extra > 0 ? 2 : 0, &bps);
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "configuring the reverse-mode kernel");
  if (bps < 1) return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU: the reverse-mode kernel fits no block");
  const int host = b->memory != DUAL_MEMORY_DEVICE;
  const size_t limit = ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
  const size_t prog_bytes = upr((size_t)prog->n_instr * 20 + (size_t)prog->n_const * 8) + 4 * ALIGNR;
  size_t room = limit > prog_bytes ? limit - prog_bytes : 0;
  if (host) room /= 2; /* half for the chunks of points */
  dual_rev_plan pl;
  int64_t max_blocks = 0;
  st = plan_blocks(ctx, prog, for_, room, g->sm_count, bps, extra, &pl, &max_blocks);
  if (st != DUAL_SUCCESS) return st;
  const dual_rev_layout l = dual_rev_plan_layout(&pl, prog);
  dual_gpu_rev_args a;
  memset(&a, 0, sizeof a);
  cudaStream_t stream = host || ctx->stream == NULL ? g->streams[0] : (cudaStream_t)ctx->stream;
  st = upload(ctx, g, prog, &pl, &a, stream);
  const int32_t nseg = pl.nseg;
  dual_rev_plan_free(&pl);
  if (st != DUAL_SUCCESS) return st;
  a.n_instr = prog->n_instr, a.nseg = nseg, a.n_regs = prog->n_regs;
  a.n_active = prog->n_active, a.n_in = prog->n_in;
  a.sweeps = job->mode == DUAL_MODE_JACOBIAN ? prog->n_out : 1;
  a.vjp = job->mode == DUAL_MODE_VJP;
  a.second = for_ ? job->mode : 0, a.n_out = prog->n_out;
  a.h_packed = b->h_layout == DUAL_HESSIAN_PACKED;
  a.o_val = l.val, a.o_tan = l.tan, a.o_snap = l.snap, a.o_tape = l.tape, a.o_adj = l.adj;
  a.o_adjd = l.adjd, a.o_grad = l.grad, a.o_gradd = l.gradd, a.o_scratch = l.scratch;
  a.slab = (l.end + extra) * DUAL_GPU_REV_THREADS;
  dual_gpu_sgrad_args(job, 0, (int32_t)l.end, &a.sg);
  if (host && extra > 0) return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU sgrad: host batch not staged");
  if (host) {
    st = run_host(ctx, g, job, &a, limit > prog_bytes ? limit - prog_bytes - (size_t)max_blocks * (size_t)a.slab * 8 : 0,
                  max_blocks, stream);
  } else {
    st = dual_gpu_reserve(ctx, &g->pool, (size_t)max_blocks * (size_t)a.slab * 8, "allocating the reverse-mode tapes");
    if (st == DUAL_SUCCESS) {
      DUAL_GPU_BATCH_ARGS(a, b);
      a.scratch = (double *)g->pool.ptr;
      a.u = b->u, a.u_ps = b->u_ps, a.u_es = b->u_es;
      a.h = b->h, a.h_ps = b->h_ps, a.h_rs = b->h_rs, a.h_es = b->h_es;
      st = launch(ctx, &a, max_blocks, stream);
    }
  }
  if (st == DUAL_SUCCESS && nseg > 1)
    dual_set_note(ctx, dual_strdup_printf(DUAL_REV_SEGMENTS_NOTE, nseg));
  return st;
}
