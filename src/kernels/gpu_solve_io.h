/*
 * gpu_solve_io.h — what the GPU drivers of the batched solvers (gpu_newton.c, gpu_lsq.c) share:
 * the chunk size for their device arrays, and moving a chunk's points between the caller's
 * point-major arrays (host or device memory) and the device's element-major ones.
 */
#ifndef DUAL_GPU_SOLVE_IO_H
#define DUAL_GPU_SOLVE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"

/* One solver call's device side: its context, stream, where the caller's arrays live, the host
 * threads that pack host rows, pinned staging (host memory: the chunk's widest row set), the
 * solver's name for error messages, and its device space (dual_gpu_solve_space). */
typedef struct dual_gpu_solve_io {
  dual_context *ctx;
  void *stream; /* cudaStream_t */
  int device_mem, threads;
  double *staging;
  const char *fn;
  char *arena;       /* the chunk's arrays, carved by the driver */
  int64_t *k_dev;    /* the count a selection writes */
  void *temp;        /* CUB's scratch for the selections, temp_bytes */
  size_t temp_bytes;
} dual_gpu_solve_io;

struct dual_gpu;

/* The call's space for chunks of C points of `per_point` device bytes each: for host arrays the
 * pinned staging (C * wide doubles), then in the context's solver buffer the arena (per_point * C
 * bytes), the count and the selections' scratch. */
int dual_gpu_solve_space(dual_gpu_solve_io *io, struct dual_gpu *g, int64_t C, size_t per_point,
                         int64_t wide);

/* Points per chunk for `per_point` device bytes a point: within an eighth of the free device
 * memory and 2 GiB, at least 1024, at most B, or at most `basis` where that is larger (a device's
 * share of a split call, ctx->stage_points: the buffers then fit the shares of the calls after,
 * which move with the measured rates, instead of being allocated again). */
int64_t dual_gpu_solve_chunk(int64_t B, int64_t basis, size_t per_point);

/* The caller's point-major rows src (entry j of point b at src[b * ld + j], points 0..c) into the
 * element-major dst ([len][C]): device rows directly, host rows packed into the staging (or, packed
 * and page-locked, copied straight), copied and rearranged on the device through `scratch`
 * (c * len doubles). */
int dual_gpu_solve_copy_in(const dual_gpu_solve_io *io, const double *src, int64_t ld, int32_t len,
                           int64_t c, int64_t C, double *scratch, double *dst);

/* A finished chunk (points b0 .. b0 + c of the call) out: the element-major X ([n][c]) to x's
 * rows (through `scratch`, c * n doubles, for host memory, then the staging unless x's rows are
 * packed and page-locked), the device arrays state, count and
 * norm ([c]) to info, iters and fnorm (each may be NULL), the states also to host_state (host
 * memory, may be NULL).  Returns after the copies are done. */
int dual_gpu_solve_copy_out(const dual_gpu_solve_io *io, int64_t b0, int64_t c, const double *X,
                            int n, double *scratch, double *x, int64_t ldx, const int32_t *state,
                            const int32_t *count, const double *norm, int32_t *info,
                            int32_t *iters, double *fnorm, int32_t *host_state);

/* The count a selection wrote to k_dev, read back into *k after the stream's work (a round's
 * sync); `what` names the step in an error. */
int dual_gpu_solve_read_count(const dual_gpu_solve_io *io, int select_status, const int64_t *k_dev,
                              int64_t *k_host, int64_t *k, const char *what);

#endif /* DUAL_GPU_SOLVE_IO_H */
