/*
 * gpu_jit.h — the compiled GPU tier as the GPU engine sees it: which tier runs a job, forward or
 * reverse, first or second order or dual_sgrad's (the context's dual_tier and knobs, the size
 * rule, the cache and the background compile), and the launch of a compiled module's kernels.
 * Host C over the CUDA runtime (kernels/ files only).
 */
#ifndef DUAL_GPU_JIT_H
#define DUAL_GPU_JIT_H

#include "jit/jit_args.h"
#include "kernels/gpu_state.h"

typedef struct dual_jit_module dual_jit_module; /* loaded kernels of one program and job shape */

/* The compiled module to run `job` with, or *out = NULL to interpret.  AUTO never fails here
 * (it interprets and notes why); COMPILE waits for the compile and returns DUAL_ERR_COMPILE when
 * the kernel cannot be had. */
int dual_gpu_jit_select(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                        const dual_jit_module **out);

/* The compiled tier's part of a GPU run: selects the module (above) and runs the job with
 * `run` (dual_gpu_run_compiled or dual_gpu_run_compiled2).  Returns 1 when the call is over, with
 * *st its status (the compiled kernels ran, or COMPILE failed), 0 when the interpreter must run
 * the job: AUTO interprets where the compiled tier cannot serve and also, noting what failed,
 * after a failed compiled run. */
typedef int (*dual_gpu_jit_runner)(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                                   const dual_jit_module *m);
int dual_gpu_jit_try(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                     dual_gpu_jit_runner run, int *st);

/* Launch every pass of the module, in order, on `stream` over the arrays and count of `a`.
 * Returns the cudaError_t of the launches (0 = success). */
int dual_gpu_jit_launch(const struct dual_gpu *g, const dual_jit_module *m, const dual_jit_args *a,
                        void *stream);

/* Run a first-order job or dual_sgrad's (forward or reverse mode) with its compiled module:
 * one launch per chunk; dual_sgrad's items leave their sample blocks' partials, folded after
 * each launch by kernels/sgrad_combine.cu (device-memory batches only: gpu_sgrad.c stages host
 * ones) (gpu_run.c). */
int dual_gpu_run_compiled(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                          const dual_jit_module *m);

/* Run a second-order job (nested forward or forward-over-reverse) with its compiled module:
 * device-memory batches in place, host-memory ones through the staging path (gpu_run2.c). */
int dual_gpu_run_compiled2(dual_context *ctx, struct dual_gpu *g, const dual_job *job,
                           const dual_jit_module *mod);

#endif /* DUAL_GPU_JIT_H */
