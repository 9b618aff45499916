/*
 * gpu_run.c — runs a checked job on the GPU.  Prepares the plan (engine/plan.h; cached per
 * context, keyed by an exact copy of the program's code and constants), chooses the launch
 * geometry, then either launches on the caller's device arrays (device-memory batch, on the
 * job's or the context's stream) or runs a host-memory batch through the staging path
 * (gpu_stage.h: chunks alternating two streams, one chunk's copies overlapping the other's
 * compute).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sgrad_reduce.h"
#include "kernels/gpu_jit.h"
#include "kernels/gpu_stage.h"

enum { PLAN_RECORD = sizeof(dual_plan_instr), ALIGN = 256 };

static size_t align_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static size_t pool_limit(const dual_context *ctx, const struct dual_gpu *g) {
  return ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
}

/* Derivative entries per point in the packed (staged) layout. */
static int64_t deriv_count(const dual_job *job) {
  const int64_t n = dual_program_jacobian_columns(job->prog), m = job->prog->n_out;
  switch (job->mode) {
  case DUAL_MODE_JACOBIAN: return m * n;
  case DUAL_MODE_JVP: return m;
  case DUAL_MODE_GRADIENT: return n;
  default: return 0;
  }
}

/* ---- pointers ---------------------------------------------------------------------------- */

int dual_gpu_check_memory(dual_context *ctx, const struct dual_gpu *g, const dual_batch *b) {
  const void *ptrs[8] = {b->x, b->p, b->v, b->u, b->y, b->d, b->h, b->status};
  static const char *names[8] = {"x", "p", "v", "u", "y", "d", "h", "status"};
  for (int i = 0; i < 8; ++i) {
    if (ptrs[i] == NULL) continue;
    struct cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, ptrs[i]);
    if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "inspecting an array pointer");
    const int on_device = at.type == cudaMemoryTypeDevice;
    const int usable = on_device || at.type == cudaMemoryTypeManaged;
    if (b->memory == DUAL_MEMORY_DEVICE && !usable)
      return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                       "the batch says device memory but array %s is a host pointer", names[i]);
    if (b->memory == DUAL_MEMORY_DEVICE && on_device && at.device != g->ordinal && at.device + 1 != ctx->gpu_reach)
      return dual_fail(ctx, DUAL_ERR_ARGUMENT, "array %s is on device %d, the context uses device %d",
                       names[i], at.device, g->ordinal);
    if (b->memory != DUAL_MEMORY_DEVICE && on_device)
      return dual_fail(ctx, DUAL_ERR_ARGUMENT,
                       "array %s is device memory: set the batch's memory to DUAL_MEMORY_DEVICE",
                       names[i]);
  }
  return DUAL_SUCCESS;
}

/* ---- plan and geometry ------------------------------------------------------------------- */

static int plan_cached(const struct dual_gpu *g, const dual_job *job, int64_t pass0, int64_t npass) {
  const dual_program *prog = job->prog;
  return g->key_valid && g->key_mode == job->mode && g->key_width == job->width &&
         g->key_pass0 == pass0 && g->key_passes == npass && g->key_n_instr == prog->n_instr &&
         g->key_n_const == prog->n_const && g->key_seed == prog->seed_key &&
         memcmp(g->key_code, prog->code, (size_t)prog->n_instr * DUAL_INSTR_WORDS * 4) == 0 &&
         memcmp(g->key_consts, prog->consts, (size_t)prog->n_const * sizeof(double)) == 0;
}

/* The plan of passes [pass0, pass0 + npass) on the device; *slots: tangent slots per point. */
static int prepare_plan(dual_context *ctx, struct dual_gpu *g, const dual_job *job, int64_t pass0,
                        int64_t npass, int64_t *slots) {
  const dual_program *prog = job->prog;
  if (plan_cached(g, job, pass0, npass)) {
    *slots = g->key_slots;
    return DUAL_SUCCESS;
  }
  g->key_valid = 0;
  const size_t nrec = (size_t)npass * (size_t)prog->n_instr;
  const size_t code_bytes = (size_t)prog->n_instr * DUAL_INSTR_WORDS * 4;
  const size_t const_bytes = (size_t)prog->n_const * sizeof(double);
  dual_plan_instr *recs = (dual_plan_instr *)malloc(nrec * PLAN_RECORD + 1);
  uint32_t *code = (uint32_t *)realloc(g->key_code, code_bytes + 1);
  if (code != NULL) g->key_code = code;
  double *consts = (double *)realloc(g->key_consts, const_bytes + 1);
  if (consts != NULL) g->key_consts = consts;
  int st = recs && code && consts ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
  if (st == DUAL_SUCCESS) st = dual_plan_build(prog, job->mode, job->width, pass0, npass, recs, slots);
  if (st != DUAL_SUCCESS) {
    free(recs);
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory planning %lld instructions x %lld passes",
                     (long long)prog->n_instr, (long long)npass);
  }
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]); /* plan in use */
  st = dual_gpu_reserve(ctx, &g->plan, nrec * PLAN_RECORD, "allocating the program plan");
  if (st == DUAL_SUCCESS) {
    /* On a stream, then waited for: a cudaMemcpy from pageable memory may return before its
     * DMA ends, and the kernels' streams do not wait for the legacy stream. */
    cudaError_t e = cudaMemcpyAsync(g->plan.ptr, recs, nrec * PLAN_RECORD, cudaMemcpyHostToDevice,
                                    g->streams[0]);
    if (e == cudaSuccess) e = cudaStreamSynchronize(g->streams[0]);
    if (e != cudaSuccess) st = dual_gpu_fail(ctx, e, "copying the program plan");
  }
  free(recs);
  if (st != DUAL_SUCCESS) return st;
  memcpy(g->key_code, prog->code, code_bytes);
  memcpy(g->key_consts, prog->consts, const_bytes);
  g->key_n_instr = prog->n_instr, g->key_n_const = prog->n_const, g->key_seed = prog->seed_key;
  g->key_mode = job->mode, g->key_width = job->width;
  g->key_pass0 = pass0, g->key_passes = npass, g->key_slots = *slots;
  g->key_valid = 1;
  return DUAL_SUCCESS;
}

/* Threads per point (lanes split over a group; at most the width).  Measured on the H200
 * (bench/NOTES.md, B = 1e4 ... 1e6): each thread of a group repeats the interpretation, so one
 * thread per point is fastest for ba (W = 16) at every batch size; kin (W = 32, sparse lanes)
 * runs 1.1-1.7x faster with two.  Rule: two threads per point at W >= 32.
 * Benchmark knob: DUAL_KNOB_GPU_GROUP forces it. */
static int group_for(const dual_context *ctx, int width) {
  int g = width >= 32 ? 2 : 1;
  if (ctx->knobs[DUAL_KNOB_GPU_GROUP] > 0) g = (int)ctx->knobs[DUAL_KNOB_GPU_GROUP];
  while (g > 1 && g > width) g /= 2;
  return g;
}

/* Register files live in global memory (L1/L2-cached slabs): more resident threads than shared
 * memory allows, which measured 1.5-3x faster for ba and kin (bench/NOTES.md).  Benchmark knob:
 * DUAL_KNOB_GPU_REGFILE puts them in shared memory when a block fits. */
static int prepare_geometry(dual_context *ctx, struct dual_gpu *g, int width, int64_t n_regs,
                            int64_t slots, int sgrad, int draws) {
  const int smem = ctx->knobs[DUAL_KNOB_GPU_REGFILE] ? g->smem_optin : 0;
  const int kind = sgrad                 ? DUAL_GPU_SGRAD /* enum dual_gpu_kind */
                    : width > 0 && draws ? DUAL_GPU_TANGENTS_DRAWS
                    : width > 0          ? DUAL_GPU_TANGENTS
                    : draws              ? DUAL_GPU_VALUES_DRAWS
                                         : DUAL_GPU_VALUES;
  const int group = width > 0 && !sgrad ? group_for(ctx, width) : 1;
  if (g->geo.threads > 0 && g->geo_regs == n_regs && g->geo_slots == slots &&
      g->geo_kind == kind && g->geo_smem == smem && g->geo.group == group)
    return DUAL_SUCCESS;
  cudaError_t e =
      (cudaError_t)dual_gpu_kernel_geometry(kind, n_regs, slots, group, smem, &g->geo);
  if (e != cudaSuccess || g->geo.threads == 0) {
    g->geo.threads = 0;
    if (e == cudaSuccess) return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU: no launch geometry");
    return dual_gpu_fail(ctx, e, "configuring the interpreter kernel");
  }
  g->geo_regs = n_regs, g->geo_slots = slots, g->geo_kind = kind, g->geo_smem = smem;
  return DUAL_SUCCESS;
}

/* ---- launches ---------------------------------------------------------------------------- */

/* One launch's fixed part: plan, program shape, register file. */
typedef struct launch_setup {
  dual_gpu_args args;  /* arrays and count filled per launch */
  const dual_jit_module *jit; /* the compiled tier's kernels, or NULL: the interpreter */
  int64_t max_blocks;  /* resident blocks the scratch was sized for */
  size_t scratch_size; /* bytes of global register file per stream (0: shared memory) */
  int64_t sg_parts;    /* compiled dual_sgrad: sample blocks per point (the scratch holds the
                          blocks' partial results and flags of sg_chunk points) */
  int64_t sg_chunk;
  int32_t sg_lanes;    /* compiled dual_sgrad: threads per item (reverse mode: one per sample) */
  int no_wait;         /* device batch: return without waiting (ctx->gpu_no_wait; one plan) */
} launch_setup;

/* Compiled dual_sgrad (device arrays): by chunks of sg_chunk points, the items (point, sample
 * block) leave their blocks' partials in scratch, then kernels/sgrad_combine.cu folds them in
 * order into E f, the gradient, its errors and the flags. */
static int launch_sgrad(dual_context *ctx, struct dual_gpu *g, const launch_setup *ls,
                        const dual_jit_args *base, double *scratch, void *stream) {
  const dual_gpu_sgrad *sg = &ls->args.sg;
  const int64_t B = base->count, P = ls->sg_parts, E = 1 + (int64_t)sg->n;
  cudaError_t e = cudaSuccess;
  for (int64_t p0 = 0; p0 < B && e == cudaSuccess; p0 += ls->sg_chunk) {
    const int64_t c = B - p0 < ls->sg_chunk ? B - p0 : ls->sg_chunk;
    dual_jit_args ja = *base;
    ja.count = c * P, ja.point0 = base->point0 + p0;
    ja.x = base->x ? base->x + p0 * base->x_ps : NULL;
    ja.p = base->p ? base->p + p0 * base->p_ps : NULL;
    ja.sg_parts = P, ja.sg_entries = E, ja.sg_part = scratch, ja.sg_lanes = ls->sg_lanes;
    ja.status = (int32_t *)(scratch + c * P * E * 2);
    dual_gpu_sgrad_split sp;
    memset(&sp, 0, sizeof sp);
    sp.count = c, sp.parts = P, sp.entries = E, sp.units = dual_sgrad_units(sg->samples, sg->antithetic);
    sp.part = scratch, sp.pstatus = ja.status;
    sp.y = sg->y ? sg->y + p0 * sg->y_ps : NULL, sp.y_ps = sg->y_ps;
    sp.d = sg->d ? sg->d + p0 * sg->d_ps : NULL, sp.d_ps = sg->d_ps, sp.d_cs = sg->d_cs;
    sp.h = sg->h ? sg->h + p0 * sg->h_ps : NULL, sp.h_ps = sg->h_ps, sp.h_es = sg->h_es;
    sp.status = base->status ? base->status + p0 : NULL;
    e = (cudaError_t)dual_gpu_jit_launch(g, ls->jit, &ja, stream);
    if (e == cudaSuccess) e = (cudaError_t)dual_gpu_sgrad_combine(&sp, stream);
  }
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the compiled kernel");
}

static int launch(dual_context *ctx, struct dual_gpu *g, launch_setup *ls, double *scratch,
                  void *stream) {
  dual_gpu_args a = ls->args;
  if (ls->jit != NULL) {
    dual_jit_args ja;
    memset(&ja, 0, sizeof ja);
    DUAL_GPU_BATCH_ARGS(ja, &a); /* the arrays and strides: the same field names */
    ja.seed = a.sg.seed, ja.point0 = a.sg.point0, ja.antithetic = a.sg.antithetic;
    if (a.sg.samples > 0) { /* dual_sgrad's kernels: the blocks' partials, then their fold */
      ja.samples = a.sg.samples;
      return launch_sgrad(ctx, g, ls, &ja, scratch, stream);
    }
    cudaError_t e = (cudaError_t)dual_gpu_jit_launch(g, ls->jit, &ja, stream);
    return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the compiled kernel");
  }
  a.scratch = g->geo.shared > 0 ? NULL : scratch;
  const int64_t per_block = g->geo.threads / g->geo.group;
  int64_t blocks = (a.count + per_block - 1) / per_block;
  if (blocks > ls->max_blocks) blocks = ls->max_blocks;
  cudaError_t e = dual_gpu_injected_fault("launch");
  if (e == cudaSuccess) e = (cudaError_t)dual_gpu_kernel_launch(&a, &g->geo, blocks, stream);
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "launching the interpreter kernel");
}

/* Resident blocks and the per-stream global register file for the geometry, within `room` bytes. */
static int size_scratch(dual_context *ctx, struct dual_gpu *g, size_t room, int streams,
                        launch_setup *ls) {
  ls->max_blocks = (int64_t)g->sm_count * g->geo.blocks_per_sm;
  ls->scratch_size = 0;
  ls->args.slab = g->geo.slab;
  ls->args.group = g->geo.group;
  ls->args.tstride = g->geo.tstride;
  if (g->geo.shared > 0) return DUAL_SUCCESS;
  const size_t per_block = align_up((size_t)ls->args.slab * sizeof(double));
  int64_t fit = (int64_t)(room / 2 / ((size_t)streams * per_block)); /* half the room at most */
  if (fit < ls->max_blocks) ls->max_blocks = fit;
  if (ls->max_blocks < 1)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "GPU: the register file of one block (%zu bytes) does not fit in the %zu "
                     "bytes the memory limit leaves beside the plan "
                     "(dual_context_set_memory_limit)", per_block, room);
  ls->scratch_size = (size_t)ls->max_blocks * per_block;
  return DUAL_SUCCESS;
}

/* Device-memory batch: the caller's arrays, in place, on the caller's stream or the context's. */
static int run_device(dual_context *ctx, struct dual_gpu *g, const dual_job *job, launch_setup *ls) {
  const dual_batch *b = job->b;
  int st = dual_gpu_reserve(ctx, &g->pool, ls->scratch_size ? ls->scratch_size : 1,
                            "allocating the register files");
  if (st != DUAL_SUCCESS) return st;
  dual_gpu_args *a = &ls->args;
  DUAL_GPU_BATCH_ARGS(*a, b);
  cudaStream_t stream = NULL;
  st = dual_gpu_device_stream(ctx, g, job->stream, &stream);
  if (st != DUAL_SUCCESS) return st;
  st = launch(ctx, g, ls, (double *)g->pool.ptr, stream);
  if (st == DUAL_SUCCESS && ls->no_wait) return DUAL_SUCCESS; /* the caller waits on the stream */
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  if (st != DUAL_SUCCESS) return st;
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "running the interpreter kernel");
}

/* Which part of a chunk's results a group of passes produced: the values and the first status
 * with pass 0, derivative columns [c_lo, c_hi) (inputs; for a JVP the one column 0..1). */
typedef struct result_part {
  int first;
  int64_t c_lo, c_hi;
} result_part;

enum { AX, AP, AV, AY, AD, AST, AN }; /* the staged arrays */

typedef struct chunk_user {
  struct dual_gpu *g;
  const dual_job *job;
  launch_setup *ls;
} chunk_user;

/* One chunk of a host-memory batch (gpu_stage.h): its packed arrays as launch arguments. */
static int launch_chunk(dual_context *ctx, void *user, int64_t p0, int64_t c, void *const *dev,
                        void *scratch, cudaStream_t stream) {
  const chunk_user *u = (const chunk_user *)user;
  const dual_job *job = u->job;
  dual_gpu_args *a = &u->ls->args;
  const int64_t n = job->prog->n_in, m = job->prog->n_out, nd = deriv_count(job);
  a->count = c;
  a->sg.point0 = job->point0 + p0;
  a->x = (const double *)dev[AX], a->x_ps = n, a->x_es = 1;
  a->p = (const double *)dev[AP], a->p_ps = job->prog->n_par, a->p_es = 1;
  a->v = (const double *)dev[AV], a->v_ps = n, a->v_es = 1;
  a->y = (double *)dev[AY], a->y_ps = m, a->y_es = 1;
  a->d = (double *)dev[AD], a->d_ps = nd;
  a->d_rs = job->mode == DUAL_MODE_JACOBIAN ? dual_program_jacobian_columns(job->prog) : (job->mode == DUAL_MODE_JVP ? 1 : 0);
  a->d_cs = job->mode == DUAL_MODE_JVP ? 0 : 1;
  a->status = (int32_t *)dev[AST];
  return launch(ctx, u->g, u->ls, (double *)scratch, stream);
}

/* Host-memory batch: through the staging path, the results of `part` scattered back. */
static int run_host(dual_context *ctx, struct dual_gpu *g, const dual_job *job, launch_setup *ls,
                    size_t room, const result_part *part) {
  const dual_batch *b = job->b;
  const int64_t n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int64_t nd = deriv_count(job);
  const int64_t rows = job->mode == DUAL_MODE_JACOBIAN || job->mode == DUAL_MODE_JVP ? m : 1;
  const int64_t cols = nd / (rows > 0 ? rows : 1);
  const int64_t hi = part->c_hi < cols ? part->c_hi : cols;
  int32_t *pick = (int32_t *)malloc(sizeof(int32_t) * (size_t)(cols > 0 ? cols : 1));
  if (pick == NULL) return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "out of memory staging a batch");
  int32_t npick = 0;
  for (int64_t k = part->c_lo; k < hi; ++k) pick[npick++] = (int32_t)k;
  dual_stage_array a[AN];
  memset(a, 0, sizeof a);
  a[AX] = (dual_stage_array){(void *)b->x, 0, 0, 0, n, n, b->x_ps, 0, b->x_es, NULL, 0};
  a[AP] = (dual_stage_array){(void *)b->p, 0, 0, 0, np, np, b->p_ps, 0, b->p_es, NULL, 0};
  if (job->mode == DUAL_MODE_JVP)
    a[AV] = (dual_stage_array){(void *)b->v, 0, 0, 0, n, n, b->v_ps, 0, b->v_es, NULL, 0};
  if (part->first) a[AY] = (dual_stage_array){b->y, 1, 0, 0, m, m, b->y_ps, 0, b->y_es, NULL, 0};
  if (nd > 0)
    a[AD] = (dual_stage_array){b->d, 1, 0, 0, nd, cols, b->d_ps, b->d_rs, b->d_cs, pick, npick};
  a[AST] = (dual_stage_array){b->status, 1, 1, !part->first, 1, 1, 1, 0, 0, NULL, 0};
  chunk_user u = {g, job, ls};
  const int st = dual_gpu_stage(ctx, g, b->count, job->threads, a, AN, ls->scratch_size, room,
                                launch_chunk, &u);
  free(pick);
  return st;
}

/* Bytes of the compiled dual_sgrad's partials per chunk of points (launch_sgrad). */
#define SGRAD_SCRATCH ((size_t)256 << 20)

/* The compiled tier: the module's kernels cover every pass, so one launch per chunk; no plan
 * and no register files.  dual_sgrad's kernels run a sample block of a point per thread and the
 * blocks are combined after them (launch_sgrad; gpu_sgrad.c hands over device batches only). */
int dual_gpu_run_compiled(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                          const dual_jit_module *m) {
  if (job->samples > 0 && job->b->memory != DUAL_MEMORY_DEVICE)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU sgrad: a host batch reached the compiled launch "
                     "unstaged (kernels/gpu_sgrad.c stages it)");
  launch_setup ls;
  memset(&ls, 0, sizeof ls);
  ls.jit = m;
  ls.no_wait = ctx->gpu_no_wait && job->samples == 0;
  ls.args.mode = job->mode, ls.args.n_in = dual_program_jacobian_columns(job->prog);
  dual_gpu_sgrad_args(job, 0, 0, &ls.args.sg); /* the draws' seed and first point */
  if (job->samples > 0) { /* the blocks' partials of a chunk of points (launch_sgrad) */
    const int64_t units = dual_sgrad_units(job->samples, job->antithetic);
    ls.sg_parts = units > 0 ? dual_sgrad_blocks(units) : 1;
    ls.sg_lanes = job->reverse ? DUAL_SGRAD_BLOCK * (job->antithetic ? 2 : 1) : 1;
    const size_t per_point = (size_t)ls.sg_parts * ((size_t)(1 + job->prog->n_in) * 2 * sizeof(double) + sizeof(int32_t));
    ls.sg_chunk = (int64_t)(SGRAD_SCRATCH / per_point);
    if (ls.sg_chunk < 1) ls.sg_chunk = 1;
    if (ls.sg_chunk > job->b->count) ls.sg_chunk = job->b->count;
    ls.scratch_size = (size_t)ls.sg_chunk * per_point;
  }
  const size_t limit = pool_limit(ctx, g);
  result_part part = {1, 0, job->mode == DUAL_MODE_JACOBIAN || job->mode == DUAL_MODE_GRADIENT
                                ? dual_program_jacobian_columns(job->prog) : 1};
  return job->b->memory != DUAL_MEMORY_DEVICE ? run_host(ctx, g, job, &ls, limit, &part)
                                              : run_device(ctx, g, job, &ls);
}

static int run_on_current(dual_context *ctx, const dual_job *job) {
  if (job->b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS && !ctx->gpu_no_wait) st = dual_gpu_check_memory(ctx, g, job->b);
  if (st != DUAL_SUCCESS) return st;
  if (dual_gpu_jit_try(ctx, g, job, dual_gpu_run_compiled, &st)) return st;
  const dual_program *prog = job->prog;
  const size_t limit = pool_limit(ctx, g);
  const int64_t passes = dual_job_passes(job);
  const size_t per_pass = (size_t)prog->n_instr * PLAN_RECORD;
  int64_t group = passes; /* passes per plan upload: all, unless the plan is a large part of memory */
  if ((size_t)passes * per_pass > limit / 4) group = (int64_t)(limit / 4 / (per_pass ? per_pass : 1));
  if (group < 1) group = 1;
  const int64_t extra = dual_gpu_sgrad_rows(job); /* dual_sgrad's spare rows (gpu_kernel.h) */
  if (extra > 0 && (group < passes || job->b->memory != DUAL_MEMORY_DEVICE))
    return group < passes
               ? dual_fail(ctx, DUAL_ERR_LIMIT, "GPU sgrad: the plan of %lld passes does not fit "
                           "the memory limit at once", (long long)passes)
               : dual_fail(ctx, DUAL_ERR_INTERNAL, "GPU sgrad: a host batch reached the launch "
                           "unstaged (kernels/gpu_sgrad.c stages it)");
  for (int64_t pass0 = 0; pass0 < passes && st == DUAL_SUCCESS; pass0 += group) {
    const int64_t npass = passes - pass0 < group ? passes - pass0 : group;
    int64_t slots = 0;
    st = prepare_plan(ctx, g, job, pass0, npass, &slots);
    const int64_t footprint = prog->n_regs + extra + slots; /* doubles per point and thread, at most */
    if (st == DUAL_SUCCESS && footprint * 256 * 17 / 16 >= ((int64_t)1 << 31))
      st = dual_fail(ctx, DUAL_ERR_LIMIT,
                     "GPU: a point's register file of %lld doubles exceeds the GPU engine's %d",
                     (long long)footprint, (1 << 23) - 1);
    if (st == DUAL_SUCCESS)
      st = prepare_geometry(ctx, g, job->width, prog->n_regs + extra, slots, extra > 0,
                            dual_program_num_draws(prog) > 0);
    if (st != DUAL_SUCCESS) break;
    launch_setup ls;
    memset(&ls, 0, sizeof ls);
    ls.no_wait = ctx->gpu_no_wait && group >= passes && extra == 0; /* no plan upload to wait for */
    dual_gpu_args *a = &ls.args;
    a->plan = (const dual_plan_instr *)g->plan.ptr;
    a->n_instr = prog->n_instr;
    a->pass0 = (int32_t)pass0, a->passes = (int32_t)npass, a->width = job->width;
    a->kind = g->geo_kind;
    a->mode = job->mode, a->n_in = dual_program_jacobian_columns(prog), a->n_regs = (int32_t)(prog->n_regs + extra);
    a->n_slots = (int32_t)slots;
    dual_gpu_sgrad_args(job, 0, prog->n_regs, &a->sg);
    const size_t room = limit > g->plan.size ? limit - g->plan.size : 0;
    const int host = job->b->memory != DUAL_MEMORY_DEVICE;
    a->status_or = !host && pass0 > 0;
    result_part part = {pass0 == 0, pass0 * job->width, (pass0 + npass) * job->width};
    if (job->mode != DUAL_MODE_JACOBIAN && job->mode != DUAL_MODE_GRADIENT) part.c_lo = 0, part.c_hi = 1;
    st = size_scratch(ctx, g, room, host ? DUAL_GPU_STREAMS : 1, &ls);
    if (st != DUAL_SUCCESS) break;
    st = host ? run_host(ctx, g, job, &ls, room, &part) : run_device(ctx, g, job, &ls);
  }
  return st;
}

int dual_gpu_run(dual_context *ctx, const dual_job *job) {
  DUAL_ON_CONTEXT_GPU(ctx, run_on_current(ctx, job));
}
