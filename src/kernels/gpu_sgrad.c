/*
 * gpu_sgrad.c — dual_sgrad on the GPU.  The sampling itself happens inside the first-order and
 * reverse kernels (kernels/sgrad_loop.h: one thread per point runs the point's samples and folds
 * them into its running means in spare rows of its storage), so a device-memory batch is one
 * ordinary launch of gpu_run.c or gpu_run_rev.c with the sgrad arguments set.  A host-memory
 * batch is staged here in chunks: inputs in, the launch on the chunk as a device batch, E f, the
 * gradients, standard errors and status out — 1 + 2n doubles per point whatever the samples.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/gpu_state.h"

enum { SG_ALIGN = 256 };

static size_t sg_up(size_t v) { return (v + SG_ALIGN - 1) / SG_ALIGN * SG_ALIGN; }

void dual_gpu_sgrad_args(const dual_job *job, int64_t p0, int32_t row, dual_gpu_sgrad *sg) {
  const dual_batch *b = job->b;
  memset(sg, 0, sizeof *sg);
  sg->seed = job->seed;
  sg->point0 = job->point0 + p0;
  sg->antithetic = job->antithetic;
  if (job->samples <= 0) return;
  sg->samples = job->samples;
  sg->score = job->score;
  sg->n = job->prog->n_in, sg->m = job->prog->n_out, sg->row = row;
  sg->y = b->y, sg->y_ps = b->y_ps;
  sg->d = b->d, sg->d_ps = b->d_ps, sg->d_cs = b->d_cs;
  sg->h = b->h, sg->h_ps = b->h_ps, sg->h_es = b->h_es;
}

int64_t dual_gpu_sgrad_rows(const dual_job *job) {
  return job->samples > 0 ? DUAL_GPU_SGRAD_ROWS(job->prog->n_in, job->prog->n_out) : 0;
}

static int run_on_device(dual_context *ctx, const dual_job *job) {
  return job->reverse ? dual_gpu_run_rev(ctx, job) : dual_gpu_run(ctx, job);
}

int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job) {
  const dual_batch *b = job->b;
  if (b->count == 0) return DUAL_SUCCESS;
  if (b->memory == DUAL_MEMORY_DEVICE) return run_on_device(ctx, job);
  struct dual_gpu *g = NULL;
  int st = dual_gpu_state(ctx, &g);
  if (st == DUAL_SUCCESS) st = dual_gpu_check_memory(ctx, g, b);
  if (st != DUAL_SUCCESS) return st;
  const int64_t B = b->count, n = job->prog->n_in, np = job->prog->n_par;
  const int64_t chunk = B < ((int64_t)1 << 18) ? B : (int64_t)1 << 18;
  const size_t pts = (size_t)chunk;
  const size_t o_p = sg_up(pts * (size_t)n * 8), o_y = o_p + sg_up(pts * (size_t)np * 8);
  const size_t o_d = o_y + sg_up(pts * 8), o_h = o_d + sg_up(pts * (size_t)n * 8);
  const size_t o_st = o_h + sg_up(pts * (size_t)n * 8), end = o_st + sg_up(pts * 4);
  st = dual_gpu_reserve_pinned(ctx, g, end);
  if (st != DUAL_SUCCESS) return st;
  char *dev = NULL;
  cudaError_t e = dual_gpu_injected_fault("alloc");
  if (e == cudaSuccess) e = cudaMalloc((void **)&dev, end);
  if (e != cudaSuccess) return dual_gpu_fail(ctx, e, "allocating the sgrad staging buffer");
  char *pin = (char *)g->pinned[0];
  cudaStream_t stream = g->streams[0];
  for (int64_t p0 = 0; p0 < B && st == DUAL_SUCCESS; p0 += chunk) {
    const int64_t c = B - p0 < chunk ? B - p0 : chunk;
    dual_gpu_gather(b->x, b->x_ps, b->x_es, p0, c, n, (double *)pin, job->threads);
    dual_gpu_gather(b->p, b->p_ps, b->p_es, p0, c, np, (double *)(pin + o_p), job->threads);
    e = cudaMemcpyAsync(dev, pin, o_y, cudaMemcpyHostToDevice, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "copying a chunk to the device");
      break;
    }
    dual_batch cb;
    memset(&cb, 0, sizeof cb);
    cb.count = c, cb.memory = DUAL_MEMORY_DEVICE;
    cb.x = (const double *)dev, cb.x_ps = n, cb.x_es = 1;
    cb.p = np > 0 ? (const double *)(dev + o_p) : NULL, cb.p_ps = np, cb.p_es = 1;
    cb.y = (double *)(dev + o_y), cb.y_ps = 1, cb.y_es = 1;
    cb.d = (double *)(dev + o_d), cb.d_ps = n, cb.d_cs = 1;
    cb.h = (double *)(dev + o_h), cb.h_ps = n, cb.h_es = 1;
    cb.status = (int32_t *)(dev + o_st);
    dual_job cj = *job;
    cj.b = &cb;
    cj.point0 = job->point0 + p0;
    st = run_on_device(ctx, &cj);
    if (st != DUAL_SUCCESS) break;
    e = cudaMemcpyAsync(pin + o_y, dev + o_y, end - o_y, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
      st = dual_gpu_fail(ctx, e, "copying a chunk from the device");
      break;
    }
    const double *y = (const double *)(pin + o_y), *d = (const double *)(pin + o_d);
    const double *h = (const double *)(pin + o_h);
    const int32_t *sp = (const int32_t *)(pin + o_st);
    for (int64_t i = 0; i < c; ++i) {
      const int64_t pt = p0 + i;
      if (b->y != NULL) b->y[pt * b->y_ps] = y[i];
      for (int64_t j = 0; j < n; ++j) {
        if (b->d != NULL) b->d[pt * b->d_ps + j * b->d_cs] = d[i * n + j];
        if (b->h != NULL) b->h[pt * b->h_ps + j * b->h_es] = h[i * n + j];
      }
      if (b->status != NULL) b->status[pt] = sp[i];
    }
  }
  cudaFree(dev);
  return st;
}
