/*
 * gpu_sgrad.c — dual_sgrad on the GPU.  The sampling itself happens inside the first-order and
 * reverse kernels (kernels/sgrad_loop.h: one thread per point runs the point's samples and folds
 * them into its running means in spare rows of its storage; in forward mode under
 * DUAL_KNOB_JIT_SGRAD, the compiled tier's sgrad kernels, jit/jit_source.c, keep them in
 * registers), so a device-memory batch is one ordinary launch of gpu_run.c or gpu_run_rev.c
 * with the sgrad arguments set.  A host-memory
 * batch goes through the staging path (gpu_stage.h): each chunk's packed arrays are run as a
 * device batch on the chunk's stream; in x and p, out E f, the gradients, standard errors and
 * status — 1 + 2n doubles per point whatever the samples.  The chunk's launch waits for its
 * kernels (the device engines synchronize), which costs little: sampling dominates the copies.
 */
#include <string.h>

#include "kernels/gpu_stage.h"

static int run_on_device(dual_context *ctx, const dual_job *job) {
  return job->reverse ? dual_gpu_run_rev(ctx, job) : dual_gpu_run(ctx, job);
}

enum { SX, SP, SY, SD, SH, SST, SN }; /* the staged arrays */

static int launch_chunk(dual_context *ctx, void *user, int64_t p0, int64_t count, void *const *dev,
                        void *scratch, cudaStream_t stream) {
  (void)scratch;
  const dual_job *job = (const dual_job *)user;
  const int64_t n = job->prog->n_in, np = job->prog->n_par;
  dual_batch cb;
  dual_batch_init(&cb);
  cb.count = count, cb.memory = DUAL_MEMORY_DEVICE;
  cb.x = (const double *)dev[SX], cb.x_ps = n, cb.x_es = 1;
  cb.p = np > 0 ? (const double *)dev[SP] : NULL, cb.p_ps = np, cb.p_es = 1;
  cb.y = (double *)dev[SY], cb.y_ps = 1, cb.y_es = 1;
  cb.d = (double *)dev[SD], cb.d_ps = n, cb.d_cs = 1;
  cb.h = (double *)dev[SH], cb.h_ps = n, cb.h_es = 1;
  cb.status = (int32_t *)dev[SST];
  dual_job cj = *job;
  cj.b = &cb;
  cj.point0 = job->point0 + p0;
  cj.stream = (void *)stream;
  return run_on_device(ctx, &cj);
}

static int run_sgrad_on_current(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  if (b->count == 0) return DUAL_SUCCESS;
  if (b->memory == DUAL_MEMORY_DEVICE) return run_on_device(ctx, job);
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
  const int64_t n = job->prog->n_in, np = job->prog->n_par;
  dual_stage_array a[SN];
  memset(a, 0, sizeof a);
  a[SX] = (dual_stage_array){(void *)b->x, 0, 0, 0, n, n, b->x_ps, 0, b->x_es, NULL, 0};
  a[SP] = (dual_stage_array){(void *)b->p, 0, 0, 0, np, np, b->p_ps, 0, b->p_es, NULL, 0};
  a[SY] = (dual_stage_array){b->y, 1, 0, 0, 1, 1, b->y_ps, 0, 0, NULL, 0};
  a[SD] = (dual_stage_array){b->d, 1, 0, 0, n, n, b->d_ps, 0, b->d_cs, NULL, 0};
  a[SH] = (dual_stage_array){b->h, 1, 0, 0, n, n, b->h_ps, 0, b->h_es, NULL, 0};
  a[SST] = (dual_stage_array){b->status, 1, 1, 0, 1, 1, 1, 0, 0, NULL, 0};
  /* the chunks take at most a quarter of the memory: the engines' storage takes the rest */
  const size_t limit = ctx->memory_limit > 0 ? (size_t)ctx->memory_limit : g->limit;
  return dual_gpu_stage(ctx, g, b->count, job->threads, a, SN, 0, limit / 4, launch_chunk,
                        (void *)job);
}

int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job) {
  DUAL_ON_CONTEXT_GPU(ctx, run_sgrad_on_current(ctx, job));
}
