/*
 * gpu_run2.c — runs a checked second-order job (Hessian, HVP) on the GPU: for each pass of
 * engine/pass2.h, the host builds its plan (engine/plan2.h, the same plan the CPU engine runs)
 * and uploads it, then the second-order kernel runs every point: in place on device-memory
 * batches, or on host-memory batches through the staging path (gpu_stage.h: chunks that
 * alternate between two streams, one chunk's copies overlapping another's compute).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pass2.h"
#include "engine/plan2.h"
#include "kernels/gpu_jit.h"
#include "kernels/gpu_stage.h"

enum { ALIGN2 = 256 };

static size_t up(size_t v) { return (v + ALIGN2 - 1) / ALIGN2 * ALIGN2; }

/* Upload one pass's plan into g->plan (which then no longer holds a first-order plan). */
/* Every copy is issued on the stream the kernel runs on: a cudaMemcpy from pageable memory may
 * return before its DMA ends, and the context's streams do not wait for the legacy stream. */
static int upload_plan(dual_context *ctx, struct dual_gpu *g, const dual_program *prog,
                       const dual_plan2 *pl, const dual_pass2 *ps, dual_gpu_args2 *a,
                       cudaStream_t stream) {
  const size_t ni = (size_t)prog->n_instr;
  const size_t o_first = up(ni * sizeof *pl->recs), o_ents = o_first + up((ni + 1) * sizeof(uint32_t));
  const size_t o_pass = o_ents + up((size_t)pl->n_ents * sizeof *pl->ents + 1);
  const size_t bytes = o_pass + sizeof *ps;
  g->key_valid = 0;
  int st = dual_gpu_reserve(ctx, &g->plan, bytes, "allocating the second-order plan");
  if (st != DUAL_SUCCESS) return st;
  char *base = (char *)g->plan.ptr;
  const enum cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  cudaError_t e = cudaMemcpyAsync(base, pl->recs, ni * sizeof *pl->recs, h2d, stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(base + o_first, pl->first, (ni + 1) * sizeof(uint32_t), h2d, stream);
  if (e == cudaSuccess && pl->n_ents > 0)
    e = cudaMemcpyAsync(base + o_ents, pl->ents, (size_t)pl->n_ents * sizeof *pl->ents, h2d, stream);
  if (e == cudaSuccess) e = cudaMemcpyAsync(base + o_pass, ps, sizeof *ps, h2d, stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream); /* the host plan is rebuilt next pass */
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "copying the second-order plan");
  a->recs = (const dual_plan_instr *)base;
  a->first = (const uint32_t *)(base + o_first);
  a->ents = (const dual_pair_entry *)(base + o_ents);
  a->pass = (const dual_pass2 *)(base + o_pass);
  a->n_slots = (int32_t)pl->n_slots;
  return DUAL_SUCCESS;
}

/* Launch on `stream` without waiting (the caller synchronizes). */
static int launch2(dual_context *ctx, const dual_gpu_args2 *a, int64_t max_blocks, void *stream) {
  int64_t blocks = (a->count + DUAL_GPU2_THREADS - 1) / DUAL_GPU2_THREADS;
  if (blocks > max_blocks) blocks = max_blocks;
  cudaError_t e = dual_gpu_injected_fault("launch");
  if (e == cudaSuccess) e = (cudaError_t)dual_gpu_kernel2_launch(a, blocks, stream);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the second-order kernel");
}

enum { AX, AP, AV, AY, AD, AH, AST, AU, AN }; /* the staged arrays (AU: compiled VJPs) */

typedef struct chunk_user {
  const dual_job *job;
  const dual_gpu_args2 *a0;
  int64_t max_blocks;
} chunk_user;

/* One chunk of a host-memory batch (gpu_stage.h): its packed arrays as launch arguments. */
static int launch_chunk(dual_context *ctx, void *user, int64_t p0, int64_t c, void *const *dev,
                        void *scratch, cudaStream_t stream) {
  const chunk_user *u = (const chunk_user *)user;
  const dual_job *job = u->job;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int64_t len = dual_pass2_out_len(job->mode, n, job->b->h_layout);
  dual_gpu_args2 a = *u->a0;
  a.count = c;
  a.sg.point0 = job->point0 + p0;
  a.scratch = (double *)scratch;
  a.x = (const double *)dev[AX], a.x_ps = n, a.x_es = 1;
  a.p = (const double *)dev[AP], a.p_ps = np, a.p_es = 1;
  a.v = (const double *)dev[AV], a.v_ps = n, a.v_es = 1;
  a.y = (double *)dev[AY], a.y_ps = m, a.y_es = 1;
  a.d = (double *)dev[AD], a.d_ps = m * n, a.d_rs = n, a.d_cs = 1;
  a.h = (double *)dev[AH], a.h_ps = m * len, a.h_rs = len, a.h_es = 1;
  a.status = (int32_t *)dev[AST];
  a.first_pass = 1; /* the chunk's own status array starts fresh; the stager ORs the passes */
  return launch2(ctx, &a, u->max_blocks, (void *)stream);
}

/* One pass over a host-memory batch through the staging path: the values and the status on the
 * first pass, the Jacobian columns and Hessian components this pass wrote.  `scratch`: bytes of
 * register files one launch needs (max_blocks blocks). */
static int run_host2(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                     const dual_pass2 *ps, const dual_gpu_args2 *a0, size_t scratch, size_t room,
                     int64_t max_blocks, int first_pass) {
  const dual_batch *b = job->b;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int64_t len = dual_pass2_out_len(job->mode, n, b->h_layout);
  int32_t dpick[DUAL_PASS2_MAX_LANES], hpick[2 * DUAL_PASS2_MAX_PAIRS];
  int32_t nd = 0, nh = 0;
  for (int k = 0; k < ps->ngrad; ++k) dpick[nd++] = ps->grad_col[k];
  for (int q = 0; q < ps->npairs; ++q) {
    hpick[nh++] = (int32_t)ps->out0[q];
    if (ps->out1[q] >= 0) hpick[nh++] = (int32_t)ps->out1[q];
  }
  dual_stage_array a[AN];
  memset(a, 0, sizeof a);
  a[AX] = (dual_stage_array){(void *)b->x, 0, 0, 0, n, n, b->x_ps, 0, b->x_es, NULL, 0};
  a[AP] = (dual_stage_array){(void *)b->p, 0, 0, 0, np, np, b->p_ps, 0, b->p_es, NULL, 0};
  if (job->mode == DUAL_MODE_HVP)
    a[AV] = (dual_stage_array){(void *)b->v, 0, 0, 0, n, n, b->v_ps, 0, b->v_es, NULL, 0};
  if (first_pass) a[AY] = (dual_stage_array){b->y, 1, 0, 0, m, m, b->y_ps, 0, b->y_es, NULL, 0};
  a[AD] = (dual_stage_array){b->d, 1, 0, 0, m * n, n, b->d_ps, b->d_rs, b->d_cs, dpick, nd};
  a[AH] = (dual_stage_array){b->h, 1, 0, 0, m * len, len, b->h_ps, b->h_rs, b->h_es, hpick, nh};
  a[AST] = (dual_stage_array){b->status, 1, 1, !first_pass, 1, 1, 1, 0, 0, NULL, 0};
  chunk_user u = {job, a0, max_blocks};
  return dual_gpu_stage(ctx, g, b->count, job->threads, a, AN, scratch, room, launch_chunk, &u);
}

/* ---- the compiled tier (jit/jit_source2.c, jit_source_rev.c): one kernel per pass, every pass
 * per launch; second order, or reverse-mode gradients, Jacobians and VJPs ---- */

/* Derivative rows a point stores: m (Jacobian, Hessian's gradients), or 1 (gradient, VJP). */
static int64_t d_rows(const dual_job *job) {
  return job->mode == DUAL_MODE_GRADIENT || job->mode == DUAL_MODE_VJP ? 1 : job->prog->n_out;
}

/* The launch arguments of the compiled kernels over a batch's arrays as `b` has them. */
static void jit_args_of(const dual_job *job, const dual_batch *b, dual_jit_args *ja) {
  memset(ja, 0, sizeof *ja);
  DUAL_GPU_BATCH_ARGS(*ja, b);
  ja->h = b->h, ja->h_ps = b->h_ps, ja->h_rs = b->h_rs, ja->h_es = b->h_es;
  ja->u = b->u, ja->u_ps = b->u_ps, ja->u_es = b->u_es;
  ja->seed = job->seed, ja->point0 = job->point0, ja->antithetic = job->antithetic;
}

typedef struct jit_user {
  struct dual_gpu *g;
  const dual_job *job;
  const dual_jit_module *m;
} jit_user;

static int launch_compiled_chunk(dual_context *ctx, void *user, int64_t p0, int64_t c,
                                 void *const *dev, void *scratch, cudaStream_t stream) {
  (void)scratch;
  const jit_user *u = (const jit_user *)user;
  const dual_job *job = u->job;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int second = dual_mode_is_second_order(job->mode);
  const int64_t len = second ? dual_pass2_out_len(job->mode, n, job->b->h_layout) : 0;
  dual_batch cb;
  dual_batch_init(&cb);
  cb.count = c;
  cb.x = (const double *)dev[AX], cb.x_ps = n, cb.x_es = 1;
  cb.p = (const double *)dev[AP], cb.p_ps = np, cb.p_es = 1;
  cb.v = (const double *)dev[AV], cb.v_ps = n, cb.v_es = 1;
  cb.u = (const double *)dev[AU], cb.u_ps = m, cb.u_es = 1;
  cb.y = (double *)dev[AY], cb.y_ps = m, cb.y_es = 1;
  cb.d = (double *)dev[AD], cb.d_ps = d_rows(job) * n, cb.d_rs = n, cb.d_cs = 1;
  cb.h = (double *)dev[AH], cb.h_ps = m * len, cb.h_rs = len, cb.h_es = 1;
  cb.status = (int32_t *)dev[AST];
  dual_jit_args ja;
  jit_args_of(job, &cb, &ja);
  ja.point0 = job->point0 + p0;
  cudaError_t e = (cudaError_t)dual_gpu_jit_launch(u->g, u->m, &ja, (void *)stream);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the compiled kernels");
}

int dual_gpu_run_compiled2(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                           const dual_jit_module *mod) {
  const dual_batch *b = job->b;
  if (b->memory != DUAL_MEMORY_DEVICE) {
    const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
    const int second = dual_mode_is_second_order(job->mode);
    const int64_t len = second ? dual_pass2_out_len(job->mode, n, b->h_layout) : 0, rows = d_rows(job);
    dual_stage_array a[AN];
    memset(a, 0, sizeof a);
    a[AX] = (dual_stage_array){(void *)b->x, 0, 0, 0, n, n, b->x_ps, 0, b->x_es, NULL, 0};
    a[AP] = (dual_stage_array){(void *)b->p, 0, 0, 0, np, np, b->p_ps, 0, b->p_es, NULL, 0};
    if (job->mode == DUAL_MODE_HVP)
      a[AV] = (dual_stage_array){(void *)b->v, 0, 0, 0, n, n, b->v_ps, 0, b->v_es, NULL, 0};
    if (job->mode == DUAL_MODE_VJP)
      a[AU] = (dual_stage_array){(void *)b->u, 0, 0, 0, m, m, b->u_ps, 0, b->u_es, NULL, 0};
    a[AY] = (dual_stage_array){b->y, 1, 0, 0, m, m, b->y_ps, 0, b->y_es, NULL, 0};
    a[AD] = (dual_stage_array){b->d, 1, 0, 0, rows * n, n, b->d_ps, rows > 1 ? b->d_rs : 0, b->d_cs, NULL, 0};
    if (second)
      a[AH] = (dual_stage_array){b->h, 1, 0, 0, m * len, len, b->h_ps, b->h_rs, b->h_es, NULL, 0};
    a[AST] = (dual_stage_array){b->status, 1, 1, 0, 1, 1, 1, 0, 0, NULL, 0};
    jit_user u = {g, job, mod};
    const size_t limit = ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
    return dual_gpu_stage(ctx, g, b->count, job->threads, a, AN, 0, limit, launch_compiled_chunk, &u);
  }
  dual_jit_args ja;
  jit_args_of(job, b, &ja);
  cudaStream_t stream = NULL;
  const int st = dual_gpu_device_stream(ctx, g, job->stream, &stream);
  if (st != DUAL_SUCCESS) return st;
  cudaError_t e = (cudaError_t)dual_gpu_jit_launch(g, mod, &ja, (void *)stream);
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "launching the compiled kernels");
  e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "running the compiled kernels");
}

static int run2_on_current(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  if (b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
  /* The compiled kernels (jit/jit_source2.c), unless the tier or a knob says interpret */
  if (dual_gpu_jit_try(ctx, g, job, dual_gpu_run_compiled2, &st)) return st;
  cudaError_t e = cudaSuccess;
  if (g->blocks2 == 0) { /* once per context: the kernel's shape never changes */
    e = (cudaError_t)dual_gpu_kernel2_blocks_per_sm(&g->blocks2);
    if (e != cudaSuccess) {
      g->blocks2 = 0;
      return dual_gpu_fail(ctx, e, "configuring the second-order kernel");
    }
    if (g->blocks2 < 1) {
      g->blocks2 = 0;
      return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU: the second-order kernel fits no block");
    }
  }
  const int bps = g->blocks2;
  const dual_program *prog = job->prog;
  dual_plan2 plan;
  dual_pass2 *ps = (dual_pass2 *)malloc(sizeof *ps);
  if (ps == NULL || dual_plan2_init(&plan, prog) != DUAL_SUCCESS) {
    free(ps);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory preparing %lld instructions",
                     (long long)prog->n_instr);
  }
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]); /* plan in use */
  const size_t limit = ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
  const int64_t passes = dual_pass2_count(job);
  for (int64_t ip = 0; ip < passes && st == DUAL_SUCCESS; ++ip) {
    dual_pass2_make(job, ip, ps);
    if (dual_plan2_build(&plan, prog, ps) != DUAL_SUCCESS) {
      st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory planning a second-order pass");
      break;
    }
    const int64_t per_point = prog->n_regs + plan.n_slots;
    if (per_point * DUAL_GPU2_THREADS >= ((int64_t)1 << 31)) {
      st = dual_fail(ctx, DUAL_ERR_LIMIT, "GPU: a point's register file of %lld doubles is too large",
                     (long long)per_point);
      break;
    }
    dual_gpu_args2 a;
    memset(&a, 0, sizeof a);
    const int host = b->memory != DUAL_MEMORY_DEVICE;
    cudaStream_t stream = g->streams[0];
    if (!host) st = dual_gpu_device_stream(ctx, g, job->stream, &stream);
    if (st == DUAL_SUCCESS) st = upload_plan(ctx, g, prog, &plan, ps, &a, stream);
    if (st != DUAL_SUCCESS) break;
    a.n_instr = prog->n_instr, a.n_regs = prog->n_regs;
    a.slab = per_point * DUAL_GPU2_THREADS;
    const size_t room = limit > g->plan.size ? limit - g->plan.size : 0;
    const size_t per_block = up((size_t)a.slab * sizeof(double));
    int64_t max_blocks = (int64_t)g->sm_count * bps;
    const int64_t cap = ctx->knobs[DUAL_KNOB_GPU2_BLOCKS]; /* benchmark knob: blocks per SM */
    if (cap > 0 && cap < bps) max_blocks = (int64_t)g->sm_count * cap;
    const int64_t fit = (int64_t)((host ? room / (2 * DUAL_GPU_STREAMS) : room) / per_block);
    if (fit < max_blocks) max_blocks = fit;
    if (max_blocks < 1) {
      st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "GPU: the register file of one block (%zu bytes) does "
                     "not fit in the %zu bytes the memory limit leaves beside the plan "
                     "(dual_context_set_memory_limit)", per_block, room);
      break;
    }
    const size_t scratch = (size_t)max_blocks * per_block;
    dual_gpu_sgrad_args(job, 0, 0, &a.sg);
    if (host) {
      st = run_host2(ctx, g, job, ps, &a, scratch, room, max_blocks, ip == 0);
      continue;
    }
    st = dual_gpu_reserve(ctx, &g->pool, scratch, "allocating the register files");
    if (st != DUAL_SUCCESS) break;
    DUAL_GPU_BATCH_ARGS(a, b);
    a.scratch = (double *)g->pool.ptr;
    a.h = b->h, a.h_ps = b->h_ps, a.h_rs = b->h_rs, a.h_es = b->h_es;
    a.first_pass = ip == 0;
    st = launch2(ctx, &a, max_blocks, (void *)stream);
    e = cudaStreamSynchronize(stream);
    if (st == DUAL_SUCCESS && e != cudaSuccess) st = dual_gpu_fail(ctx, e, "running the second-order kernel");
  }
  dual_plan2_free(&plan);
  free(ps);
  return st;
}

int dual_gpu_run2(dual_context *ctx, const dual_job *job) {
  DUAL_ON_CONTEXT_GPU(ctx, run2_on_current(ctx, job));
}
