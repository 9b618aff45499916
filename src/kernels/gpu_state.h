/*
 * gpu_state.h — a context's GPU state (struct dual_gpu) and the helpers the GPU engine's host
 * files share: CUDA error reporting, the device memory pool, pinned staging buffers.
 * Host C code over the CUDA runtime API; only the kernels/ files include it.
 */
#ifndef DUAL_GPU_STATE_H
#define DUAL_GPU_STATE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "gpu.h"
#include "kernels/gpu_kernel.h"

enum { DUAL_GPU_STREAMS = 2 };

/* A device allocation kept between calls and grown (never per call) when a call needs more. */
typedef struct dual_gpu_buffer {
  void *ptr;
  size_t size;
} dual_gpu_buffer;

struct dual_gpu {
  int ordinal;                            /* CUDA device */
  int sm_count, smem_optin;               /* multiprocessors, shared bytes per block (opt-in) */
  int cc;                                 /* compute capability, major * 10 + minor */
  size_t limit;                           /* pool limit in bytes (resolved) */
  cudaStream_t streams[DUAL_GPU_STREAMS]; /* the context's own streams */
  dual_gpu_buffer pool;                   /* device arena: register files, tapes */
  dual_gpu_buffer stage;                  /* chunks of host-memory batches (gpu_stage.h) */
  dual_gpu_buffer solve[2];               /* dual_newton's work arrays and kept starts */
  void *cublas;                           /* the solvers' cuBLAS handle (cublas_batched.h), or NULL */
  dual_gpu_buffer plan;                   /* device copy of the cached plan */
  void *pinned[DUAL_GPU_STREAMS];         /* pinned host staging, one per stream */
  cudaEvent_t caller_done;                /* dual_gpu_device_stream's mark on the legacy stream */
  cudaEvent_t caller_mark;                /* dual_gpu_mark_caller's, for other devices to wait for */
  size_t pinned_size;
  uint64_t allocations; /* buffers (re)allocated so far (dual_gpu_allocations) */
  /* The cached plan: the program it was built for (a copy of its code and constants, compared
   * exactly), the job shape and the pass range it covers. */
  uint32_t *key_code;
  double *key_consts;
  int64_t key_n_instr;
  int32_t key_n_const, key_mode, key_width;
  uint64_t key_seed; /* a colored view's seed_key (program.h), 0 for a program */
  int64_t key_pass0, key_passes, key_slots;
  int key_valid;
  /* Launch geometry for the last program shape. */
  int64_t geo_regs, geo_slots;
  int geo_kind, geo_smem;
  dual_gpu_geometry geo;
  int blocks2; /* resident blocks per SM of the second-order kernel (0: not asked yet) */
  /* The compiled tier's last module and what it was for (the program's uid and the job's key
   * fields), so that the next call of the same shape skips the key's SHA-256 (gpu_jit.c; a
   * loaded module stays loaded for the process) */
  uint64_t memo_uid;
  int memo_mode, memo_width, memo_npass, memo_min_blocks;
  const struct dual_jit_module *memo_module;
};

/* Record a failed CUDA call `what` as the context's error; returns the status it maps to
 * (DUAL_ERR_NO_MEMORY, DUAL_ERR_NO_DEVICE or DUAL_ERR_DEVICE). */
int dual_gpu_fail(dual_context *ctx, cudaError_t e, const char *what);

/* Whether a host address lies in page-locked memory (dual_host_pin, cudaHostRegister,
 * cudaMallocHost), which the copy engines reach without a staging copy. */
int dual_gpu_page_locked(const void *p);

/* Make the context's device (ctx->gpu_ordinal) current for a call's GPU work: *prev receives the
 * device current before, for dual_gpu_leave (-1: nothing to restore).  A DUAL_ERR_* status. */
int dual_gpu_enter(dual_context *ctx, int *prev);
void dual_gpu_leave(int prev);

/* The body of a gpu.h entry point: the int status expression `call` run with the context's
 * device current, the caller's current device restored after it. */
#define DUAL_ON_CONTEXT_GPU(ctx, call)                                                           \
  do {                                                                                           \
    int prev_ = -1, st_ = dual_gpu_enter((ctx), &prev_);                                         \
    if (st_ == DUAL_SUCCESS) st_ = (call);                                                       \
    dual_gpu_leave(prev_);                                                                       \
    return st_;                                                                                  \
  } while (0)

/* The context's GPU state, created on first use (device, streams, pool limit), on the current
 * device (the context's, inside dual_gpu_enter). */
int dual_gpu_state(dual_context *ctx, struct dual_gpu **out);

/* The stream a call on device-memory arrays runs on: the job's (`job_stream`, may be NULL), the
 * context's (dual_context_set_stream: ordering is then the caller's), or else the context's own
 * streams[0], made to wait first for the work the caller queued on the legacy default stream (and
 * so on every blocking stream): the own streams are non-blocking, and a cudaMemcpy from pageable
 * memory returns before its DMA ends, so without the wait a kernel could read the caller's arrays
 * half copied.  The solvers' internal rounds (ctx->gpu_no_wait) follow their own start.  A peer
 * in a device-memory split call (ctx->gpu_after) also waits for the caller's work on the first
 * device. */
int dual_gpu_device_stream(dual_context *ctx, struct dual_gpu *g, void *job_stream, cudaStream_t *out);

/* Make buf hold at least `bytes` of device memory (keeping it when large enough). */
int dual_gpu_reserve(dual_context *ctx, dual_gpu_buffer *buf, size_t bytes, const char *what);

/* Make both pinned staging buffers hold at least `bytes`. */
int dual_gpu_reserve_pinned(dual_context *ctx, struct dual_gpu *g, size_t bytes);

/* Every array of the batch must live where the batch says (device or host memory). */
int dual_gpu_check_memory(dual_context *ctx, const struct dual_gpu *g, const dual_batch *b);

/* A device-memory batch's arrays, in place, into launch arguments `a` (any of the three argument
 * structs, or the compiled tier's dual_jit_args: they name these fields alike): count, x, p, v,
 * y, d with their strides, status.  `b` may also be another argument struct. */
#define DUAL_GPU_BATCH_ARGS(a, b)                                                                \
  ((a).count = (b)->count, (a).x = (b)->x, (a).x_ps = (b)->x_ps, (a).x_es = (b)->x_es,           \
   (a).p = (b)->p, (a).p_ps = (b)->p_ps, (a).p_es = (b)->p_es, (a).v = (b)->v,                   \
   (a).v_ps = (b)->v_ps, (a).v_es = (b)->v_es, (a).y = (b)->y, (a).y_ps = (b)->y_ps,              \
   (a).y_es = (b)->y_es, (a).d = (b)->d, (a).d_ps = (b)->d_ps, (a).d_rs = (b)->d_rs,              \
   (a).d_cs = (b)->d_cs, (a).status = (b)->status)

/* The draws' key and dual_sgrad's sampling for a launch of `job` (gpu_sgrad_args.c): seed, the
 * global index of the launch's first point (job->point0 + p0 for a chunk from p0), and with
 * samples the spare rows from `row` and the destinations y, d, h of the job's batch. */
void dual_gpu_sgrad_args(const dual_job *job, int64_t p0, int32_t row, dual_gpu_sgrad *sg);

/* Spare storage rows per thread a job needs for dual_sgrad (0 for other jobs). */
int64_t dual_gpu_sgrad_rows(const dual_job *job);

/* Test hook: the fault named by DUALBATCH_GPU_FAULT ("alloc", "launch", or the compiled tier's
 * "jit-compile", "jit-load"), else cudaSuccess. */
cudaError_t dual_gpu_injected_fault(const char *where);

#endif /* DUAL_GPU_STATE_H */
