/*
 * gpu_none.c — the GPU engine of a build without CUDA: no devices, and every GPU request says
 * why.  Compiled instead of src/kernels/gpu_*.c when nvcc was not found at configure time.
 */
#include <stdio.h>

#include "context.h"
#include "gpu.h"

int dual_gpu_count(char *why, size_t cap) {
  if (why != NULL && cap > 0) snprintf(why, cap, "this build of dualbatch has no CUDA support");
  return 0;
}

int dual_gpu_run(dual_context *ctx, const dual_job *job) {
  (void)job;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "this build of dualbatch has no CUDA support");
}

int dual_gpu_run2(dual_context *ctx, const dual_job *job) {
  (void)job;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "this build of dualbatch has no CUDA support");
}

int dual_gpu_run_rev(dual_context *ctx, const dual_job *job) {
  (void)job;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "this build of dualbatch has no CUDA support");
}

int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job) {
  (void)job;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "this build of dualbatch has no CUDA support");
}

void dual_gpu_release(struct dual_gpu *gpu) { (void)gpu; }

int64_t dual_gpu_describe(char *buf, int64_t cap) {
  int n = snprintf(buf, buf && cap > 0 ? (size_t)cap : 0, "CUDA: off (built without CUDA)\ndevices: cpu\n");
  return n < 0 ? 0 : n;
}
