/*
 * gpu_stage.h — the one host staging path of the GPU engines (first order, second order,
 * reverse mode, sgrad).  A host-memory batch streams through the device in chunks of points:
 * its input arrays are gathered into pinned staging and copied in, the engine's launch runs on
 * the chunk's packed device arrays, and the results are copied back and scattered into the
 * caller's strided arrays.  Chunks alternate between the context's two streams, each with its
 * own pinned buffer, device arrays and scratch, so one chunk's copies and host work overlap the
 * other's kernel.  The device buffers are the context's (kept between calls, grown when a call
 * needs more): nothing is allocated per call.  Host C over the CUDA runtime; kernels/ only.
 */
#ifndef DUAL_GPU_STAGE_H
#define DUAL_GPU_STAGE_H

#include "kernels/gpu_state.h"

/* One array of a staged batch.  Per point it holds `len` packed entries (rows of `cols`; an
 * input is one row).  The caller's entry (r, k) of point pt is at host[pt * ps + r * rs + k * cs].
 * Inputs are gathered whole.  Results are scattered: every column of every row, or only the
 * columns listed in `pick` (npick of them) when pick is not NULL.  A status array (int32 words,
 * `status`) is stored, or ORed into the caller's when `or_into` (a later pass of a job). */
typedef struct dual_stage_array {
  void *host; /* NULL: the array is absent (no device room, nothing copied) */
  int out, status, or_into;
  int64_t len, cols;
  int64_t ps, rs, cs;
  const int32_t *pick;
  int32_t npick;
} dual_stage_array;

enum { DUAL_STAGE_MAX_ARRAYS = 8 };

/* The launch of one chunk: points [p0, p0 + count) of the batch, their packed device arrays
 * dev[i] (entry j of point q at dev[i][q * len + j]; NULL for an absent array), `scratch` bytes
 * of device memory of its own, on `stream`.  It must not wait for the stream; returns a
 * DUAL_ERR_* status (the context's error set). */
typedef int (*dual_stage_launch)(dual_context *ctx, void *user, int64_t p0, int64_t count,
                                 void *const *dev, void *scratch, cudaStream_t stream);

/* Run a host-memory batch of B points through `launch`.  `scratch`: device bytes each launch
 * needs beside its arrays; `room`: the device bytes the staging may use (arrays and scratch of
 * both streams).  threads: host threads for gathering and scattering. */
int dual_gpu_stage(dual_context *ctx, struct dual_gpu *g, int64_t B, int threads,
                   const dual_stage_array *arrays, int narrays, size_t scratch, size_t room,
                   dual_stage_launch launch, void *user);

#endif /* DUAL_GPU_STAGE_H */
