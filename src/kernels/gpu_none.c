/*
 * gpu_none.c — the GPU engine of a build without CUDA: no devices, and every GPU request says
 * why.  Compiled instead of src/kernels/gpu_*.c when nvcc was not found at configure time.
 */
#include <stdio.h>

#include "context.h"
#include "gpu.h"

#define NO_CUDA "this build of dualbatch has no CUDA support"

/* Every GPU request's answer: DUAL_ERR_NO_DEVICE, saying why. */
static int no_cuda(dual_context *ctx) { return dual_fail(ctx, DUAL_ERR_NO_DEVICE, NO_CUDA); }

int dual_gpu_count(char *why, size_t cap) {
  if (why != NULL && cap > 0) snprintf(why, cap, NO_CUDA);
  return 0;
}

int dual_gpu_current_device(void) { return 0; }

int dual_gpu_run(dual_context *ctx, const dual_job *job) {
  (void)job;
  return no_cuda(ctx);
}

int dual_gpu_run2(dual_context *ctx, const dual_job *job) {
  (void)job;
  return no_cuda(ctx);
}

int dual_gpu_run_rev(dual_context *ctx, const dual_job *job) {
  (void)job;
  return no_cuda(ctx);
}

int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job) {
  (void)job;
  return no_cuda(ctx);
}

int dual_gpu_newton(dual_context *ctx, const dual_program *prog, const struct dual_newton_opts *o,
                    int64_t B, double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info,
                    int32_t *iters, double *fnorm, int device_mem, int32_t *host_state,
                    int64_t *done) {
  (void)prog, (void)o, (void)B, (void)x, (void)ldx, (void)p, (void)ldp, (void)info, (void)iters, (void)fnorm;
  (void)device_mem, (void)host_state;
  *done = 0;
  return no_cuda(ctx);
}

int dual_gpu_is_device_pointer(const void *p) {
  (void)p;
  return 0;
}

int dual_gpu_copy(dual_context *ctx, void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                  size_t bytes, int64_t rows, const char *what) {
  (void)dst, (void)dst_pitch, (void)src, (void)src_pitch, (void)bytes, (void)rows;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "%s: " NO_CUDA, what);
}

int dual_gpu_solve_buffer(dual_context *ctx, int which, size_t bytes, void **p, const char *what) {
  (void)which, (void)bytes;
  *p = NULL;
  return dual_fail(ctx, DUAL_ERR_NO_DEVICE, "%s: " NO_CUDA, what);
}

void dual_gpu_release(struct dual_gpu *gpu) { (void)gpu; }

int64_t dual_gpu_describe(char *buf, int64_t cap) {
  int n = snprintf(buf, buf && cap > 0 ? (size_t)cap : 0, "CUDA: off (built without CUDA)\ndevices: cpu\n");
  return n < 0 ? 0 : n;
}

int dual_gpu_lsq(dual_context *ctx, const dual_program *prog, const struct dual_lm_opts *o, int64_t B,
                 double *x, int64_t ldx, const double *p, int64_t ldp, int32_t *info, int32_t *iters,
                 double *fnorm, int device_mem, int64_t *done) {
  (void)prog, (void)o, (void)B, (void)x, (void)ldx, (void)p, (void)ldp, (void)info, (void)iters, (void)fnorm;
  (void)device_mem;
  *done = 0;
  return no_cuda(ctx);
}

int dual_gpu_would_compile(dual_context *ctx, const dual_job *job) {
  (void)ctx, (void)job;
  return 0;
}

int dual_gpu_compiling(void) { return 0; }

int dual_gpu_enable_peer(int from, int to) {
  (void)from, (void)to;
  return 0;
}

int dual_gpu_host_pin(dual_context *ctx, void *ptr, size_t bytes) { /* nothing copies to a GPU */
  (void)ctx, (void)ptr, (void)bytes;
  return DUAL_SUCCESS;
}

int dual_gpu_host_unpin(dual_context *ctx, void *ptr) {
  (void)ctx, (void)ptr;
  return DUAL_SUCCESS;
}

int dual_gpu_check_batch(dual_context *ctx, const dual_batch *b) {
  (void)b;
  return no_cuda(ctx);
}

int dual_gpu_mark_caller(dual_context *ctx, void **event) {
  *event = NULL;
  return no_cuda(ctx);
}

uint64_t dual_gpu_allocations(const dual_context *ctx) {
  (void)ctx;
  return 0;
}

int dual_gpu_calibrate(dual_context *ctx, int compiled, struct dual_calibration *c) {
  (void)compiled, (void)c;
  return no_cuda(ctx);
}
