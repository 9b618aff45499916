/*
 * gpu_sgrad_args.c — the arguments every GPU engine's launch passes for random draws and for
 * dual_sgrad's in-kernel sampling (gpu_kernel.h's dual_gpu_sgrad): the draws' key, and with
 * samples the spare storage rows and the destinations of E f, the gradient and its errors.
 * Kept apart from gpu_sgrad.c (which calls the engines) so that no engine calls back into it.
 */
#include <string.h>

#include "kernels/gpu_state.h"

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
