/*
 * gpu_run.c — runs a checked job on the GPU.  Prepares the plan (engine/plan.h; cached per
 * context, keyed by an exact copy of the program's code and constants), chooses the launch
 * geometry, then either launches on the caller's device arrays (device-memory batch) or streams a
 * host-memory batch through the pool in chunks: pack into pinned staging, copy in, run, copy out,
 * unpack, alternating two streams so one chunk's copies overlap the other's compute.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu_jit.h"
#include "kernels/gpu_state.h"

enum { PLAN_RECORD = sizeof(dual_plan_instr), ALIGN = 256 };

static size_t align_up(size_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

static size_t pool_limit(const dual_context *ctx, const struct dual_gpu *g) {
  return ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
}

/* Derivative entries per point in the packed (staged) layout. */
static int64_t deriv_count(const dual_job *job) {
  const int64_t n = job->prog->n_in, m = job->prog->n_out;
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
    if (b->memory == DUAL_MEMORY_DEVICE && on_device && at.device != g->ordinal)
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
         g->key_n_const == prog->n_const &&
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
  g->key_n_instr = prog->n_instr, g->key_n_const = prog->n_const;
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
} launch_setup;

static int launch(dual_context *ctx, struct dual_gpu *g, launch_setup *ls, double *scratch,
                  void *stream) {
  dual_gpu_args a = ls->args;
  if (ls->jit != NULL) {
    cudaError_t e = (cudaError_t)dual_gpu_jit_launch(g, ls->jit, &a, stream);
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
                     "GPU: the register file of one block (%zu bytes) does not fit in the memory "
                     "limit of %zu bytes", per_block, room);
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
  void *stream = ctx->stream != NULL ? ctx->stream : (void *)g->streams[0];
  st = launch(ctx, g, ls, (double *)g->pool.ptr, stream);
  cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
  if (st != DUAL_SUCCESS) return st;
  return e == cudaSuccess ? DUAL_SUCCESS : dual_gpu_fail(ctx, e, "running the interpreter kernel");
}

/* Byte layout of one chunk in pinned staging and in the pool: inputs, then outputs. */
typedef struct chunk_layout {
  size_t x, p, v, in_bytes; /* offsets of x, p, v; size of the input part */
  size_t y, d, st, out_bytes; /* offsets within the output part; its size */
} chunk_layout;

static chunk_layout layout_for(const dual_job *job, int64_t c) {
  const size_t n = (size_t)job->prog->n_in, np = (size_t)job->prog->n_par,
               m = (size_t)job->prog->n_out, nd = (size_t)deriv_count(job), pts = (size_t)c;
  chunk_layout l;
  l.x = 0;
  l.p = align_up(pts * n * 8);
  l.v = l.p + align_up(pts * np * 8);
  l.in_bytes = l.v + (job->mode == DUAL_MODE_JVP ? align_up(pts * n * 8) : 0);
  l.y = 0;
  l.d = align_up(pts * m * 8);
  l.st = l.d + align_up(pts * nd * 8);
  l.out_bytes = l.st + align_up(pts * 4);
  return l;
}

void dual_gpu_gather(const double *src, int64_t ps, int64_t es, int64_t p0, int64_t c, int64_t len,
                     double *dst, int threads) {
  if (src == NULL || len == 0) return;
#pragma omp parallel for num_threads(threads) schedule(static) if (c * len > 65536)
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < len; ++j) dst[i * len + j] = src[(p0 + i) * ps + j * es];
}

static void pack(const dual_job *job, const chunk_layout *l, int64_t p0, int64_t c, char *pin,
                 int threads) {
  const dual_batch *b = job->b;
  const int64_t n = job->prog->n_in, np = job->prog->n_par;
  dual_gpu_gather(b->x, b->x_ps, b->x_es, p0, c, n, (double *)(pin + l->x), threads);
  dual_gpu_gather(b->p, b->p_ps, b->p_es, p0, c, np, (double *)(pin + l->p), threads);
  if (job->mode == DUAL_MODE_JVP)
    dual_gpu_gather(b->v, b->v_ps, b->v_es, p0, c, n, (double *)(pin + l->v), threads);
}

/* Which part of a chunk's results a group of passes produced: the values and the first status
 * with pass 0, derivative columns [c_lo, c_hi) (inputs; for a JVP the one column 0..1). */
typedef struct result_part {
  int first;
  int64_t c_lo, c_hi;
} result_part;

static void unpack(const dual_job *job, const chunk_layout *l, const result_part *part, int64_t p0,
                   int64_t c, const char *pout, int threads) {
  const dual_batch *b = job->b;
  const int64_t m = job->prog->n_out, nd = deriv_count(job);
  const double *ys = (const double *)(pout + l->y), *ds = (const double *)(pout + l->d);
  const int32_t *ss = (const int32_t *)(pout + l->st);
  /* packed derivative entry (r, k) of a point -> (output r, input k) of the caller's layout */
  const int64_t rows = job->mode == DUAL_MODE_JACOBIAN || job->mode == DUAL_MODE_JVP ? m : 1;
  const int64_t cols = nd / (rows > 0 ? rows : 1);
#pragma omp parallel for num_threads(threads) schedule(static) if (c * (m + nd) > 65536)
  for (int64_t i = 0; i < c; ++i) {
    const int64_t pt = p0 + i;
    if (b->y != NULL && part->first)
      for (int64_t k = 0; k < m; ++k) b->y[pt * b->y_ps + k * b->y_es] = ys[i * m + k];
    if (nd > 0)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = part->c_lo; k < part->c_hi && k < cols; ++k)
          b->d[pt * b->d_ps + r * b->d_rs + k * b->d_cs] = ds[i * nd + r * cols + k];
    if (b->status != NULL) b->status[pt] = (part->first ? 0 : b->status[pt]) | ss[i];
  }
}

/* Host-memory batch: chunks alternate between the two streams. */
static int run_host(dual_context *ctx, struct dual_gpu *g, const dual_job *job, launch_setup *ls,
                    size_t room, const result_part *part) {
  const int64_t B = job->b->count;
  const chunk_layout unit = layout_for(job, 1);
  const size_t per_point = unit.in_bytes + unit.out_bytes; /* upper bound incl. alignment */
  const size_t fixed = DUAL_GPU_STREAMS * (ls->scratch_size + 8 * ALIGN);
  if (room <= fixed + DUAL_GPU_STREAMS * per_point)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY,
                     "GPU: the memory limit of %zu bytes holds no chunk of points", room);
  int64_t chunk = (int64_t)((room - fixed) / (DUAL_GPU_STREAMS * per_point));
  int64_t target = (B + 3) / 4; /* several chunks, so copies overlap compute */
  if (target < ((int64_t)1 << 15)) target = (int64_t)1 << 15;
  if (target > ((int64_t)1 << 20)) target = (int64_t)1 << 20;
  if (chunk > target) chunk = target;
  if (chunk > B) chunk = B;
  const chunk_layout l = layout_for(job, chunk);
  const size_t set = align_up(l.in_bytes) + align_up(l.out_bytes);
  const size_t scratch = align_up(ls->scratch_size);
  int st = dual_gpu_reserve(ctx, &g->pool, DUAL_GPU_STREAMS * (scratch + set),
                            "allocating the device memory pool");
  if (st == DUAL_SUCCESS) st = dual_gpu_reserve_pinned(ctx, g, set);
  if (st != DUAL_SUCCESS) return st;
  const int threads = job->threads;
  const int64_t nchunks = (B + chunk - 1) / chunk;
  for (int64_t i = 0; i < nchunks + DUAL_GPU_STREAMS && st == DUAL_SUCCESS; ++i) {
    const int s = (int)(i % DUAL_GPU_STREAMS);
    cudaStream_t stream = g->streams[s];
    char *pin = (char *)g->pinned[s];
    char *dev = (char *)g->pool.ptr + (size_t)s * (scratch + set);
    char *dev_in = dev + scratch, *dev_out = dev_in + align_up(l.in_bytes);
    const int64_t done = i - DUAL_GPU_STREAMS; /* the chunk this stream finished before */
    if (done >= 0) {
      cudaError_t e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) {
        st = dual_gpu_fail(ctx, e, "running a chunk");
        break;
      }
      const int64_t d0 = done * chunk, dc = B - d0 < chunk ? B - d0 : chunk;
      unpack(job, &l, part, d0, dc, pin + align_up(l.in_bytes), threads);
    }
    if (i >= nchunks) continue;
    const int64_t p0 = i * chunk, c = B - p0 < chunk ? B - p0 : chunk;
    pack(job, &l, p0, c, pin, threads);
    cudaError_t e = cudaMemcpyAsync(dev_in, pin, l.in_bytes, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "copying a chunk to the device");
      break;
    }
    dual_gpu_args *a = &ls->args;
    const int64_t n = job->prog->n_in, m = job->prog->n_out, nd = deriv_count(job);
    a->count = c;
    a->sg.point0 = job->point0 + p0;
    a->x = (const double *)(dev_in + l.x), a->x_ps = n, a->x_es = 1;
    a->p = (const double *)(dev_in + l.p), a->p_ps = job->prog->n_par, a->p_es = 1;
    a->v = (const double *)(dev_in + l.v), a->v_ps = n, a->v_es = 1;
    a->y = (double *)(dev_out + l.y), a->y_ps = m, a->y_es = 1;
    a->d = (double *)(dev_out + l.d), a->d_ps = nd;
    a->d_rs = job->mode == DUAL_MODE_JACOBIAN ? n : (job->mode == DUAL_MODE_JVP ? 1 : 0);
    a->d_cs = job->mode == DUAL_MODE_JVP ? 0 : 1;
    a->status = (int32_t *)(dev_out + l.st);
    st = launch(ctx, g, ls, (double *)dev, stream);
    if (st != DUAL_SUCCESS) break;
    e = cudaMemcpyAsync(pin + align_up(l.in_bytes), dev_out, l.out_bytes, cudaMemcpyDeviceToHost,
                        stream);
    if (e != cudaSuccess) st = dual_gpu_fail(ctx, e, "copying a chunk from the device");
  }
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]);
  cudaGetLastError();
  return st;
}

/* The compiled tier: the module's kernels cover every pass, so one launch per chunk; no plan
 * and no register files. */
static int run_compiled(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                        const dual_jit_module *m) {
  launch_setup ls;
  memset(&ls, 0, sizeof ls);
  ls.jit = m;
  ls.args.mode = job->mode, ls.args.n_in = job->prog->n_in;
  dual_gpu_sgrad_args(job, 0, 0, &ls.args.sg); /* the draws' seed and first point */
  const size_t limit = pool_limit(ctx, g);
  result_part part = {1, 0, job->mode == DUAL_MODE_JACOBIAN || job->mode == DUAL_MODE_GRADIENT
                                ? job->prog->n_in : 1};
  return job->b->memory != DUAL_MEMORY_DEVICE ? run_host(ctx, g, job, &ls, limit, &part)
                                              : run_device(ctx, g, job, &ls);
}

int dual_gpu_run(dual_context *ctx, const dual_job *job) {
  if (job->b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, job->b);
  if (st != DUAL_SUCCESS) return st;
  const dual_jit_module *jit = NULL;
  st = dual_gpu_jit_select(ctx, g, job, &jit);
  if (st != DUAL_SUCCESS) return st;
  if (jit != NULL) {
    st = run_compiled(ctx, g, job, jit);
    if (st == DUAL_SUCCESS) {
      ctx->last_tier = DUAL_TIER_COMPILE;
      return st;
    }
    if (ctx->tier == DUAL_TIER_COMPILE) return st;
    /* AUTO: the interpreter runs the whole job again, and the note says what failed */
    dual_set_note(ctx, dual_strdup_printf("interpreted: the compiled kernel failed: %s",
                                          dual_context_last_error(ctx)));
    dual_clear_error(ctx);
  }
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
    dual_gpu_args *a = &ls.args;
    a->plan = (const dual_plan_instr *)g->plan.ptr;
    a->n_instr = prog->n_instr;
    a->pass0 = (int32_t)pass0, a->passes = (int32_t)npass, a->width = job->width;
    a->kind = g->geo_kind;
    a->mode = job->mode, a->n_in = prog->n_in, a->n_regs = (int32_t)(prog->n_regs + extra);
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
