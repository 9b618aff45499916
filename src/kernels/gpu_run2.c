/*
 * gpu_run2.c — runs a checked second-order job (Hessian, HVP) on the GPU: for each pass of
 * engine/pass2.h, the host builds its plan (engine/plan2.h, the same plan the CPU engine runs)
 * and uploads it, then the second-order kernel runs every point: in place on device-memory
 * batches, or on host-memory batches staged through pinned buffers in chunks that alternate
 * between two streams (one chunk's copies overlap another's compute).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/pass2.h"
#include "engine/plan2.h"
#include "kernels/gpu_state.h"

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

/* Byte offsets of one chunk's arrays in the pool, after the register files. */
typedef struct chunk2 {
  size_t x, p, v, y, d, h, st, end;
} chunk2;

static chunk2 chunk_layout2(const dual_job *job, int64_t c, size_t at) {
  const size_t n = (size_t)job->prog->n_in, np = (size_t)job->prog->n_par, m = (size_t)job->prog->n_out;
  const size_t len = (size_t)dual_pass2_out_len(job->mode, (int64_t)n, job->b->h_layout);
  const size_t pts = (size_t)c;
  chunk2 l;
  l.x = at;
  l.p = l.x + up(pts * n * 8);
  l.v = l.p + up(pts * np * 8);
  l.y = l.v + (job->mode == DUAL_MODE_HVP ? up(pts * n * 8) : 0);
  l.d = l.y + up(pts * m * 8);
  l.h = l.d + (job->b->d != NULL ? up(pts * m * n * 8) : 0);
  l.st = l.h + up(pts * m * len * 8);
  l.end = l.st + up(pts * 4);
  return l;
}

/* The results of one pass for a chunk, back into the caller's strided arrays: the values and the
 * status on the first pass, the Jacobian columns and components this pass wrote. */
static void scatter(const dual_job *job, const dual_pass2 *ps, int first_pass, int64_t p0,
                    int64_t c, const double *y, const double *d, const double *h,
                    const int32_t *st) {
  const dual_batch *b = job->b;
  const int64_t n = job->prog->n_in, m = job->prog->n_out;
  const int64_t len = dual_pass2_out_len(job->mode, n, b->h_layout);
#pragma omp parallel for num_threads(job->threads) schedule(static) if (c * len > 65536)
  for (int64_t i = 0; i < c; ++i) {
    const int64_t pt = p0 + i;
    for (int64_t r = 0; r < m; ++r) {
      if (first_pass && b->y != NULL) b->y[pt * b->y_ps + r * b->y_es] = y[i * m + r];
      if (b->d != NULL)
        for (int g = 0; g < ps->ngrad; ++g) {
          const int64_t col = ps->grad_col[g];
          b->d[pt * b->d_ps + r * b->d_rs + col * b->d_cs] = d[(i * m + r) * n + col];
        }
      const double *hr = h + (i * m + r) * len;
      double *hd = b->h + pt * b->h_ps + r * b->h_rs;
      for (int q = 0; q < ps->npairs; ++q) {
        hd[ps->out0[q] * b->h_es] = hr[ps->out0[q]];
        if (ps->out1[q] >= 0) hd[ps->out1[q] * b->h_es] = hr[ps->out1[q]];
      }
    }
    if (b->status != NULL) b->status[pt] = (first_pass ? 0 : b->status[pt]) | st[i];
  }
}

/* One pass over a host-memory batch: chunks alternate between the context's streams, each with
 * its own register files, pool region and pinned staging, so one chunk's copies overlap another's
 * compute.  `scratch`: bytes of register files one launch needs (max_blocks blocks). */
static int run_host2(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                     const dual_pass2 *ps, const dual_gpu_args2 *a0, size_t scratch, size_t room,
                     int64_t max_blocks, int first_pass) {
  const dual_batch *b = job->b;
  const int64_t B = b->count, n = job->prog->n_in, np = job->prog->n_par, m = job->prog->n_out;
  const int64_t len = dual_pass2_out_len(job->mode, n, b->h_layout);
  const size_t per_point = (chunk_layout2(job, 1024, 0).end + 1023) / 1024; /* + alignment: */
  const size_t fixed = DUAL_GPU_STREAMS * (up(scratch) + 8 * ALIGN2);
  if (room <= fixed + DUAL_GPU_STREAMS * per_point)
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "GPU: the memory limit of %zu bytes holds no chunk of points", room);
  int64_t chunk = (int64_t)((room - fixed) / (DUAL_GPU_STREAMS * per_point));
  int64_t target = (B + 3) / 4; /* several chunks, so copies overlap compute */
  if (target < ((int64_t)1 << 14)) target = (int64_t)1 << 14;
  if (chunk > target) chunk = target;
  if (chunk > ((int64_t)1 << 20)) chunk = (int64_t)1 << 20;
  if (chunk > B) chunk = B;
  const chunk2 l = chunk_layout2(job, chunk, 0); /* offsets within a stream's set (and its pinned copy) */
  const size_t region = up(scratch) + l.end;
  int st = dual_gpu_reserve(ctx, &g->pool, DUAL_GPU_STREAMS * region, "allocating the device memory pool");
  if (st == DUAL_SUCCESS) st = dual_gpu_reserve_pinned(ctx, g, l.end);
  if (st != DUAL_SUCCESS) return st;
  const int threads = job->threads;
  const int64_t nchunks = (B + chunk - 1) / chunk;
  for (int64_t i = 0; i < nchunks + DUAL_GPU_STREAMS && st == DUAL_SUCCESS; ++i) {
    const int s = (int)(i % DUAL_GPU_STREAMS);
    cudaStream_t stream = g->streams[s];
    char *pin = (char *)g->pinned[s];
    char *dev = (char *)g->pool.ptr + (size_t)s * region, *set = dev + up(scratch);
    const int64_t done = i - DUAL_GPU_STREAMS; /* the chunk this stream finished before */
    if (done >= 0) {
      cudaError_t e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) {
        st = dual_gpu_fail(ctx, e, "running the second-order kernel");
        break;
      }
      const int64_t d0 = done * chunk, dc = B - d0 < chunk ? B - d0 : chunk;
      scatter(job, ps, first_pass, d0, dc, (const double *)(pin + l.y), (const double *)(pin + l.d),
              (const double *)(pin + l.h), (const int32_t *)(pin + l.st));
    }
    if (i >= nchunks) continue;
    const int64_t p0 = i * chunk, c = B - p0 < chunk ? B - p0 : chunk;
    dual_gpu_gather(b->x, b->x_ps, b->x_es, p0, c, n, (double *)(pin + l.x), threads);
    dual_gpu_gather(b->p, b->p_ps, b->p_es, p0, c, np, (double *)(pin + l.p), threads);
    if (job->mode == DUAL_MODE_HVP)
      dual_gpu_gather(b->v, b->v_ps, b->v_es, p0, c, n, (double *)(pin + l.v), threads);
    cudaError_t e = cudaMemcpyAsync(set, pin, l.y, cudaMemcpyHostToDevice, stream);
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "copying a chunk to the device");
      break;
    }
    dual_gpu_args2 a = *a0;
    a.count = c;
    a.sg.point0 = job->point0 + p0;
    a.scratch = (double *)dev;
    a.x = (const double *)(set + l.x), a.x_ps = n, a.x_es = 1;
    a.p = (const double *)(set + l.p), a.p_ps = np, a.p_es = 1;
    a.v = (const double *)(set + l.v), a.v_ps = n, a.v_es = 1;
    a.y = (double *)(set + l.y), a.y_ps = m, a.y_es = 1;
    a.d = b->d != NULL ? (double *)(set + l.d) : NULL, a.d_ps = m * n, a.d_rs = n, a.d_cs = 1;
    a.h = (double *)(set + l.h), a.h_ps = m * len, a.h_rs = len, a.h_es = 1;
    a.status = (int32_t *)(set + l.st);
    a.first_pass = 1; /* the chunk's own status array starts fresh; scatter ORs the passes */
    st = launch2(ctx, &a, max_blocks, stream);
    if (st != DUAL_SUCCESS) break;
    e = cudaMemcpyAsync(pin + l.y, set + l.y, l.end - l.y, cudaMemcpyDeviceToHost, stream);
    if (e != cudaSuccess) st = dual_gpu_fail(ctx, e, "copying a chunk from the device");
  }
  for (int s = 0; s < DUAL_GPU_STREAMS; ++s) cudaStreamSynchronize(g->streams[s]);
  cudaGetLastError();
  return st;
}

int dual_gpu_run2(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  if (b->count == 0) return DUAL_SUCCESS;
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
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
    cudaStream_t stream = host || ctx->stream == NULL ? g->streams[0] : (cudaStream_t)ctx->stream;
    st = upload_plan(ctx, g, prog, &plan, ps, &a, stream);
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
                     "not fit in the memory limit of %zu bytes", per_block, room);
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
