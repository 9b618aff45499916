/*
 * multi_gpu.h — a context over several GPUs (dual_context_set_gpus; multi_gpu.c): the peer
 * contexts of its other devices, and a call cut into one share per device.
 */
#ifndef DUAL_MULTI_GPU_H
#define DUAL_MULTI_GPU_H

#include "dispatch/split.h"
#include "exec.h"

/* The cuts between devices' shares fall on multiples of this many points. */
#define DUAL_MULTI_GPU_QUANTUM 1024

/* Make ctx (a GPU context already on ordinals[0]) run on the `count` devices listed (checked by
 * the caller: distinct, in range, 2 .. DUAL_SPLIT_MAX_PARTS), creating a peer context for each
 * but the first; a DUAL_ERR_* status (on failure the context keeps its first device only). */
int dual_multi_gpu_set(dual_context *ctx, int count, const int *ordinals);

/* Free the peers: the context runs on its first device only. */
void dual_multi_gpu_free(dual_context *ctx);

/* A job on every device of the context at once (device-memory arrays, which live on the first
 * device: on those with peer access to it), each device's share run by `engine` (run.c's GPU
 * call, with its fallback) on its own context; the shares follow the devices' measured rates,
 * learned here from each call (host and device batches apart). */
int dual_multi_gpu_run(dual_context *ctx, const dual_job *job, dual_engine_fn engine);

/* A solver's host-array call over every device of the context at once: B points cut into
 * contiguous shares by the devices' measured solve rates (even at first; ctx->gpu_rate_solve), and
 * share i solved by solve(ctxs[i], first, count, arg) on the device's own context — the context
 * itself for the first, marked solve_share so that its call is not split again — each peer with a
 * 1/count part of the host threads (for its CPU fallbacks).  A peer's fallback to the CPU becomes
 * the context's (dual_solve_fell_back, its note).  DUAL_SUCCESS, or the first failing share's
 * status with its message in ctx's error. */
typedef int (*dual_share_fn)(dual_context *ctx, int64_t first, int64_t count, void *arg);
int dual_multi_gpu_solve(dual_context *ctx, int64_t B, dual_share_fn solve, void *arg);

#endif /* DUAL_MULTI_GPU_H */
