/*
 * engine_sgrad.c — dual_sgrad on the CPU.  The batch is taken in chunks of points; for each
 * sample in order, the chunk runs through the ordinary engine (forward or reverse, OpenMP over
 * blocks; or the compiled CPU tier's module of the per-sample product, bitwise the same) with the
 * job's draws keyed to that sample, into a chunk-sized sample row per point,
 * which is folded at once into the point's running means (engine/sgrad_reduce.h: a pairwise
 * tree within blocks of DUAL_SGRAD_BLOCK units, Chan's formula across them).  Memory is a
 * few rows per point of the chunk, whatever the number of samples; each point's arithmetic is
 * independent of the chunk and the threads, so the estimate is bitwise reproducible and equal to
 * the GPU's.
 */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "engine/sgrad_reduce.h"
#include "exec.h"

enum { SGRAD_CHUNK = 4096 }; /* points per chunk: the sample rows stay in cache */

typedef struct sgrad_scratch {
  int64_t rows, acc; /* doubles per point: sample row (m + m n), accumulators (1 + n entries) */
  double *row, *acc_; /* accumulators: entry c's field f at acc_ + point * acc + f * (1 + n) + c */
  int32_t *st, *st_all;
  void *mem;
} sgrad_scratch;

static int scratch_alloc(sgrad_scratch *s, int64_t chunk, int32_t n, int32_t m) {
  s->rows = m + (int64_t)m * n;
  s->acc = DUAL_SGRAD_FIELDS * (1 + (int64_t)n);
  const size_t doubles = (size_t)chunk * (size_t)(s->rows + s->acc);
  s->mem = malloc(doubles * sizeof(double) + 2 * (size_t)chunk * sizeof(int32_t));
  if (s->mem == NULL) return 0;
  s->row = (double *)s->mem;
  s->acc_ = s->row + (size_t)chunk * (size_t)s->rows;
  s->st = (int32_t *)(s->acc_ + (size_t)chunk * (size_t)s->acc);
  s->st_all = s->st + chunk;
  return 1;
}

/* The chunk's inner batch: the caller's inputs, outputs into the sample rows. */
static void chunk_batch(const dual_job *job, const sgrad_scratch *s, int64_t p0, int64_t c,
                        dual_batch *ib) {
  const dual_batch *b = job->b;
  const int64_t m = job->prog->n_out, n = job->prog->n_in;
  dual_batch_init(ib);
  ib->count = c;
  ib->x = b->x ? b->x + p0 * b->x_ps : NULL, ib->x_ps = b->x_ps, ib->x_es = b->x_es;
  ib->p = b->p ? b->p + p0 * b->p_ps : NULL, ib->p_ps = b->p_ps, ib->p_es = b->p_es;
  ib->y = s->row, ib->y_ps = s->rows, ib->y_es = 1;
  ib->d = s->row + m, ib->d_ps = s->rows, ib->d_rs = n, ib->d_cs = 1;
  ib->status = s->st;
}

/* Means and standard errors of a chunk into the caller's f, g, se. */
static void chunk_store(const dual_job *job, const sgrad_scratch *s, int64_t p0, int64_t c) {
  const dual_batch *b = job->b;
  const int32_t n = job->prog->n_in;
  const int64_t units = dual_sgrad_units(job->samples, job->antithetic);
  for (int64_t i = 0; i < c; ++i) {
    const int64_t pt = p0 + i;
    const double *mean = s->acc_ + i * s->acc + DUAL_SGRAD_MEAN * (1 + n);
    const double *m2 = s->acc_ + i * s->acc + DUAL_SGRAD_M2 * (1 + n);
    if (b->y != NULL) b->y[pt * b->y_ps] = mean[0];
    for (int32_t j = 0; j < n; ++j) {
      if (b->d != NULL) b->d[pt * b->d_ps + j * b->d_cs] = mean[1 + j];
      if (b->h != NULL) b->h[pt * b->h_ps + j * b->h_es] = dual_sgrad_se(m2[1 + j], units);
    }
    if (b->status != NULL) b->status[pt] = s->st_all[i];
  }
}

int dual_cpu_run_sgrad(dual_context *ctx, const dual_job *job, dual_cpu_runner run) {
  const int64_t B = job->b->count;
  if (B == 0) return DUAL_SUCCESS;
  const int64_t chunk = B < SGRAD_CHUNK ? B : SGRAD_CHUNK;
  sgrad_scratch s;
  if (!scratch_alloc(&s, chunk, job->prog->n_in, job->prog->n_out))
    return dual_fail(ctx, DUAL_ERR_NO_MEMORY, "sgrad: out of memory for the sample rows of %lld points",
                     (long long)chunk);
  int st = DUAL_SUCCESS;
  for (int64_t p0 = 0; p0 < B && st == DUAL_SUCCESS; p0 += chunk) {
    const int64_t c = B - p0 < chunk ? B - p0 : chunk;
    dual_batch ib;
    chunk_batch(job, &s, p0, c, &ib);
    dual_job ij = *job;
    ij.b = &ib;
    ij.samples = 0;
    ij.point0 = job->point0 + p0;
    memset(s.st_all, 0, (size_t)c * sizeof(int32_t));
    const int64_t units = dual_sgrad_units(job->samples, job->antithetic);
    for (int64_t smp = 0; smp < job->samples && st == DUAL_SUCCESS; ++smp) {
      ij.sample = smp;
      st = run(ctx, &ij);
      if (st != DUAL_SUCCESS) break;
#pragma omp parallel for num_threads(job->threads) schedule(static) if (c >= 1024)
      for (int64_t i = 0; i < c; ++i) {
        dual_sgrad_fold(s.row + i * s.rows, 1, job->prog->n_in, job->score, smp, units,
                        job->antithetic, s.acc_ + i * s.acc, 1, 1 + (int64_t)job->prog->n_in);
        s.st_all[i] |= s.st[i];
      }
    }
    if (st == DUAL_SUCCESS) chunk_store(job, &s, p0, c);
  }
  free(s.mem);
  return st;
}
