/*
 * gpu_solve_io.c — the batched solvers' chunk size and their copies between the caller's
 * point-major arrays and the device's element-major chunks (gpu_solve_io.h).
 */
#include "kernels/gpu_solve_io.h"

#include <stdio.h>
#include <string.h>

#include "kernels/gpu_state.h"
#include "kernels/newton_kernels.h"
#include "stage_copy.h"

static int cuda(const dual_gpu_solve_io *io, cudaError_t e, const char *what) {
  if (e == cudaSuccess) return DUAL_SUCCESS;
  char msg[160];
  snprintf(msg, sizeof msg, "%s: %s", io->fn, what);
  return dual_gpu_fail(io->ctx, e, msg);
}

int64_t dual_gpu_solve_chunk(int64_t B, int64_t basis, size_t per_point) {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) free_b = (size_t)1 << 30;
  size_t budget = free_b / 8;
  if (budget > ((size_t)2 << 30)) budget = (size_t)2 << 30;
  int64_t C = (int64_t)(budget / per_point);
  if (C < 1024) C = 1024;
  const int64_t want = basis > B ? basis : B;
  return C < want ? C : want;
}

int dual_gpu_solve_space(dual_gpu_solve_io *io, struct dual_gpu *g, int64_t C, size_t per_point,
                         int64_t wide) {
  io->arena = NULL, io->k_dev = NULL, io->temp = NULL;
  int st = DUAL_SUCCESS;
  if (!io->device_mem) {
    st = dual_gpu_reserve_pinned(io->ctx, g, sizeof(double) * (size_t)(C * (wide > 0 ? wide : 1)));
    io->staging = (double *)g->pinned[0];
  }
  if (st != DUAL_SUCCESS) return st;
  io->temp_bytes = dual_newton_select_bytes(C);
  const size_t used = (per_point * (size_t)C + 255) / 256 * 256;
  char what[96];
  snprintf(what, sizeof what, "%s: allocating the solver's device arrays", io->fn);
  st = dual_gpu_solve_buffer(io->ctx, 0, used + 256 + io->temp_bytes, (void **)&io->arena, what);
  if (st == DUAL_SUCCESS) io->k_dev = (int64_t *)(io->arena + used), io->temp = io->arena + used + 256;
  return st;
}

/* Whether c rows of len doubles from src, ld apart, are one packed run in page-locked memory
 * (dual_host_pin), which a copy moves straight between it and the device (gpu_stage.c's rule). */
static int packed_locked(const double *src, int64_t ld, int64_t len, int64_t c) {
  return ld == len && c > 0 && dual_gpu_page_locked(src) && dual_gpu_page_locked(src + c * len - 1);
}

int dual_gpu_solve_copy_in(const dual_gpu_solve_io *io, const double *src, int64_t ld, int32_t len,
                           int64_t c, int64_t C, double *scratch, double *dst) {
  if (len == 0) return DUAL_SUCCESS;
  const cudaStream_t stream = (cudaStream_t)io->stream;
  if (!io->device_mem && packed_locked(src, ld, len, c)) { /* straight from the caller's rows */
    int st = cuda(io, cudaMemcpyAsync(scratch, src, sizeof(double) * (size_t)(c * len), cudaMemcpyHostToDevice, stream),
                  "copying points to the device");
    if (st != DUAL_SUCCESS) return st;
    src = scratch;
  } else if (!io->device_mem) {
    dual_stage_gather(src, ld, 1, 0, c, len, io->staging, io->threads);
    int st = cuda(io, cudaMemcpyAsync(scratch, io->staging, sizeof(double) * (size_t)(c * len),
                                      cudaMemcpyHostToDevice, stream),
                  "copying points to the device");
    if (st == DUAL_SUCCESS) st = cuda(io, cudaStreamSynchronize(stream), "copying points to the device");
    if (st != DUAL_SUCCESS) return st;
    src = scratch, ld = len;
  }
  return cuda(io, (cudaError_t)dual_newton_transpose(src, dst, c, C, len, ld, 0, stream), "arranging points");
}

int dual_gpu_solve_copy_out(const dual_gpu_solve_io *io, int64_t b0, int64_t c, const double *X,
                            int n, double *scratch, double *x, int64_t ldx, const int32_t *state,
                            const int32_t *count, const double *norm, int32_t *info,
                            int32_t *iters, double *fnorm, int32_t *host_state) {
  const cudaStream_t stream = (cudaStream_t)io->stream;
  const enum cudaMemcpyKind kind = io->device_mem ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  double *rows = io->device_mem ? x + b0 * ldx : scratch;
  const int locked = !io->device_mem && n > 0 && packed_locked(x + b0 * ldx, ldx, n, c);
  int st = cuda(io, (cudaError_t)dual_newton_transpose(X, rows, c, c, n, io->device_mem ? ldx : n, 1, stream),
                "arranging the solutions");
  if (st == DUAL_SUCCESS && !io->device_mem && n > 0)
    st = cuda(io, cudaMemcpyAsync(locked ? x + b0 * ldx : io->staging, scratch, sizeof(double) * (size_t)(c * n),
                                  cudaMemcpyDeviceToHost, stream),
              "copying the solutions");
  const size_t i4 = sizeof(int32_t) * (size_t)c, f8 = sizeof(double) * (size_t)c;
  if (st == DUAL_SUCCESS && info != NULL)
    st = cuda(io, cudaMemcpyAsync(info + b0, state, i4, kind, stream), "copying the statuses");
  if (st == DUAL_SUCCESS && host_state != NULL)
    st = cuda(io, cudaMemcpyAsync(host_state + b0, state, i4, cudaMemcpyDeviceToHost, stream),
              "copying the statuses");
  if (st == DUAL_SUCCESS && iters != NULL)
    st = cuda(io, cudaMemcpyAsync(iters + b0, count, i4, kind, stream), "copying the step counts");
  if (st == DUAL_SUCCESS && fnorm != NULL)
    st = cuda(io, cudaMemcpyAsync(fnorm + b0, norm, f8, kind, stream), "copying the norms");
  if (st == DUAL_SUCCESS) st = cuda(io, cudaStreamSynchronize(stream), "copying the results");
  if (st == DUAL_SUCCESS && !io->device_mem && !locked) {
    const double *src = io->staging;
    double *dst = x + b0 * ldx;
#pragma omp parallel for num_threads(io->threads) schedule(static) if (c * n > 65536)
    for (int64_t b = 0; b < c; ++b) memcpy(dst + b * ldx, src + b * n, sizeof(double) * (size_t)n);
  }
  return st;
}

int dual_gpu_solve_read_count(const dual_gpu_solve_io *io, int select_status, const int64_t *k_dev,
                              int64_t *k_host, int64_t *k, const char *what) {
  const cudaStream_t stream = (cudaStream_t)io->stream;
  int st = cuda(io, (cudaError_t)select_status, what);
  if (st == DUAL_SUCCESS)
    st = cuda(io, cudaMemcpyAsync(k_host, k_dev, sizeof *k_host, cudaMemcpyDeviceToHost, stream),
              "reading the count of points");
  if (st == DUAL_SUCCESS) st = cuda(io, cudaStreamSynchronize(stream), "a round");
  *k = *k_host;
  return st;
}
