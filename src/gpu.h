/*
 * gpu.h — the GPU engine as the rest of the library sees it.  Implemented by src/kernels/ in
 * builds with CUDA and by gpu_none.c (stubs that report "built without CUDA") otherwise, so no
 * other file needs an #ifdef.
 */
#ifndef DUAL_GPU_H
#define DUAL_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"

struct dual_gpu; /* a context's GPU state: streams, memory pool, pinned staging, plan cache */

/* Number of usable CUDA devices (0 when none, the driver is missing or too old, or the build has
 * no CUDA; then `why` receives the reason).  Initializes the CUDA runtime. */
int dual_gpu_count(char *why, size_t cap);

/* Run a checked job on the context's GPU (creating its GPU state on first use).  Host-memory
 * batches are staged through pinned buffers in chunks over two streams; device-memory batches are
 * used in place.  Returns when the results are in the caller's arrays. */
int dual_gpu_run(dual_context *ctx, const dual_job *job);

/* The same for a second-order job (Hessian, HVP: kernels/gpu_run2.c). */
int dual_gpu_run2(dual_context *ctx, const dual_job *job);

/* The same for a reverse-mode job (VJP; gradient or Jacobian in reverse mode:
 * kernels/gpu_run_rev.c). */
int dual_gpu_run_rev(dual_context *ctx, const dual_job *job);

/* The same for dual_sgrad (kernels/gpu_sgrad.c): the sample loop runs in the first-order or the
 * reverse kernel; host-memory batches are staged in chunks. */
int dual_gpu_run_sgrad(dual_context *ctx, const dual_job *job);

/* Free a context's GPU state (NULL is fine). */
void dual_gpu_release(struct dual_gpu *gpu);

/* Append a description of the CUDA runtime and devices to buf (snprintf-like, returns the length
 * it needed). */
int64_t dual_gpu_describe(char *buf, int64_t cap);

#endif /* DUAL_GPU_H */
