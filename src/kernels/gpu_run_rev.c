/*
 * gpu_run_rev.c — runs a checked reverse-mode job (VJP; gradient or Jacobian in reverse mode;
 * Hessian or HVP forward-over-reverse) on the GPU.  The host plans the sweeps (engine/rev_plan.h, the CPU's plan) under the memory
 * budget, uploads the bytecode, auxiliary words, constants and segments, and launches the reverse
 * kernel: in place on device-memory batches, or on host-memory batches through the staging path
 * (gpu_stage.h: chunks alternating two streams, each with its own tapes).  Memory: each resident thread holds one point's storage (values, tape,
 * adjoints, derivatives: rev_plan.h); the plan is chosen so that every multiprocessor can hold
 * its resident blocks, else at least one block each, checkpointing the tape when it must.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pass2.h" /* dual_pass2_out_len */
#include "engine/rev_plan.h"
#include "kernels/gpu_jit.h"
#include "kernels/gpu_stage.h"

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

/* Launch on `s` without waiting (the caller synchronizes). */
static int launch(dual_context *ctx, const dual_gpu_rev_args *a, int64_t max_blocks, cudaStream_t s) {
  int64_t blocks = (a->count + DUAL_GPU_REV_THREADS - 1) / DUAL_GPU_REV_THREADS;
  if (blocks > max_blocks) blocks = max_blocks;
  cudaError_t e = dual_gpu_injected_fault("launch");
  if (e == cudaSuccess) e = (cudaError_t)dual_gpu_kernel_rev_launch(a, blocks, (void *)s);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the reverse-mode kernel");
}

enum { AX, AP, AU, AV, AY, AD, AH, AST, AN }; /* the staged arrays */

typedef struct chunk_user {
  const dual_job *job;
  const dual_gpu_rev_args *a0;
  int64_t max_blocks, rows, len;
} chunk_user;

/* One chunk of a host-memory batch (gpu_stage.h): its packed arrays as launch arguments. */
static int launch_chunk(dual_context *ctx, void *user, int64_t p0, int64_t c, void *const *dev,
                        void *scratch, cudaStream_t stream) {
  const chunk_user *u = (const chunk_user *)user;
  const dual_job *job = u->job;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  dual_gpu_rev_args a = *u->a0;
  a.count = c;
  a.sg.point0 = job->point0 + p0;
  a.scratch = (double *)scratch;
  a.x = (const double *)dev[AX], a.x_ps = n, a.x_es = 1;
  a.p = (const double *)dev[AP], a.p_ps = np, a.p_es = 1;
  a.u = (const double *)dev[AU], a.u_ps = m, a.u_es = 1;
  a.v = (const double *)dev[AV], a.v_ps = n, a.v_es = 1;
  a.y = (double *)dev[AY], a.y_ps = m, a.y_es = 1;
  a.d = (double *)dev[AD], a.d_ps = u->rows * n, a.d_rs = n, a.d_cs = 1;
  a.h = (double *)dev[AH], a.h_ps = m * u->len, a.h_rs = u->len, a.h_es = 1;
  a.status = (int32_t *)dev[AST];
  return launch(ctx, &a, u->max_blocks, stream);
}

/* A host-memory batch through the staging path.  Per point: x, p, u (VJP), v (HVP) in; y, the
 * derivative rows d, the h rows (forward-over-reverse) and the status out.  `scratch`: the
 * storage (tapes) of one launch of max_blocks blocks. */
static int run_host(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                    const dual_gpu_rev_args *a0, size_t scratch, size_t room, int64_t max_blocks) {
  const dual_batch *b = job->b;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int for_ = a0->second != 0;
  const int64_t rows = for_ ? (b->d != NULL ? m : 0) : a0->sweeps; /* derivative rows per point */
  const int64_t len = for_ ? dual_pass2_out_len(job->mode, n, b->h_layout) : 0;
  dual_stage_array a[AN];
  memset(a, 0, sizeof a);
  a[AX] = (dual_stage_array){(void *)b->x, 0, 0, 0, n, n, b->x_ps, 0, b->x_es, NULL, 0};
  a[AP] = (dual_stage_array){(void *)b->p, 0, 0, 0, np, np, b->p_ps, 0, b->p_es, NULL, 0};
  if (a0->vjp) a[AU] = (dual_stage_array){(void *)b->u, 0, 0, 0, m, m, b->u_ps, 0, b->u_es, NULL, 0};
  if (a0->second == DUAL_MODE_HVP)
    a[AV] = (dual_stage_array){(void *)b->v, 0, 0, 0, n, n, b->v_ps, 0, b->v_es, NULL, 0};
  a[AY] = (dual_stage_array){b->y, 1, 0, 0, m, m, b->y_ps, 0, b->y_es, NULL, 0};
  if (rows > 0)
    a[AD] = (dual_stage_array){b->d, 1, 0, 0, rows * n, n, b->d_ps, b->d_rs, b->d_cs, NULL, 0};
  if (len > 0)
    a[AH] = (dual_stage_array){b->h, 1, 0, 0, m * len, len, b->h_ps, b->h_rs, b->h_es, NULL, 0};
  a[AST] = (dual_stage_array){b->status, 1, 1, 0, 1, 1, 1, 0, 0, NULL, 0};
  chunk_user u = {job, a0, max_blocks, rows, len};
  return dual_gpu_stage(ctx, g, b->count, job->threads, a, AN, scratch, room, launch_chunk, &u);
}

static int run_rev_on_current(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  const dual_program *prog = job->prog;
  if (b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
  const int for_ = dual_mode_is_second_order(job->mode); /* forward-over-reverse */
  /* The compiled kernels (jit/jit_source_rev.c; dual_sgrad's through gpu_run.c's launch of the
   * sample blocks and their fold), unless the tier or a knob says interpret (gpu_jit.c). */
  const dual_gpu_jit_runner run = job->samples > 0 ? dual_gpu_run_compiled : dual_gpu_run_compiled2;
  if (dual_gpu_jit_try(ctx, g, job, run, &st)) return st;
  int bps = 0;
  const int64_t extra = dual_gpu_sgrad_rows(job); /* dual_sgrad's spare rows (gpu_kernel.h) */
  cudaError_t e = (cudaError_t)dual_gpu_kernel_rev_blocks_per_sm(for_ ? 1 : extra > 0 ? 2 : 0, &bps);
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "configuring the reverse-mode kernel");
  if (bps < 1) return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU: the reverse-mode kernel fits no block");
  const int host = b->memory != DUAL_MEMORY_DEVICE;
  const size_t limit = ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
  const size_t prog_bytes = upr((size_t)prog->n_instr * 20 + (size_t)prog->n_const * 8) + 4 * ALIGNR;
  size_t room = limit > prog_bytes ? limit - prog_bytes : 0;
  if (host) room /= 4; /* two streams' tapes in half of it, the chunks of points in the rest */
  dual_rev_plan pl;
  int64_t max_blocks = 0;
  st = plan_blocks(ctx, prog, for_, room, g->sm_count, bps, extra, &pl, &max_blocks);
  if (st != DUAL_SUCCESS) return st;
  const dual_rev_layout l = dual_rev_plan_layout(&pl, prog);
  dual_gpu_rev_args a;
  memset(&a, 0, sizeof a);
  cudaStream_t stream = g->streams[0];
  if (!host) st = dual_gpu_device_stream(ctx, g, job->stream, &stream);
  if (st == DUAL_SUCCESS) st = upload(ctx, g, prog, &pl, &a, stream);
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
  const size_t tapes = (size_t)max_blocks * (size_t)a.slab * 8;
  if (host) {
    st = run_host(ctx, g, job, &a, tapes, limit > prog_bytes ? limit - prog_bytes : 0, max_blocks);
  } else {
    st = dual_gpu_reserve(ctx, &g->pool, tapes, "allocating the reverse-mode tapes");
    if (st == DUAL_SUCCESS) {
      DUAL_GPU_BATCH_ARGS(a, b);
      a.scratch = (double *)g->pool.ptr;
      a.u = b->u, a.u_ps = b->u_ps, a.u_es = b->u_es;
      a.h = b->h, a.h_ps = b->h_ps, a.h_rs = b->h_rs, a.h_es = b->h_es;
      st = launch(ctx, &a, max_blocks, stream);
      e = cudaStreamSynchronize(stream);
      if (st == DUAL_SUCCESS && e != cudaSuccess) st = dual_gpu_fail(ctx, e, "running the reverse-mode kernel");
    }
  }
  if (st == DUAL_SUCCESS && nseg > 1)
    dual_set_note(ctx, dual_strdup_printf(DUAL_REV_SEGMENTS_NOTE, nseg));
  return st;
}

int dual_gpu_run_rev(dual_context *ctx, const dual_job *job) {
  DUAL_ON_CONTEXT_GPU(ctx, run_rev_on_current(ctx, job));
}
