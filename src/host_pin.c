/*
 * host_pin.c — dual_host_pin and dual_host_unpin (dualbatch.h): page-locking a caller's host
 * arrays so that the GPU staging path (kernels/gpu_stage.c) copies them straight to and from the
 * devices.  The arguments are checked here; the CUDA calls are gpu.h's.
 */
#include "context.h"
#include "gpu.h"

int dual_host_pin(dual_context *ctx, void *ptr, int64_t bytes) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (ptr == NULL || bytes < 1)
    return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_host_pin: %s", ptr == NULL ? "a NULL pointer" : "a size below 1 byte");
  if (ctx->device == DUAL_DEVICE_CPU) return DUAL_SUCCESS; /* no copies to speed up */
  return dual_gpu_host_pin(ctx, ptr, (size_t)bytes);
}

int dual_host_unpin(dual_context *ctx, void *ptr) {
  if (ctx == NULL) return DUAL_ERR_ARGUMENT;
  if (ptr == NULL) return dual_fail(ctx, DUAL_ERR_ARGUMENT, "dual_host_unpin: a NULL pointer");
  if (ctx->device == DUAL_DEVICE_CPU) return DUAL_SUCCESS;
  return dual_gpu_host_unpin(ctx, ptr);
}
