/*
 * dispatch.h — AUTO's dispatch of a host-array call on a GPU context (issue 20): the model's plan
 * (dispatch_model.h) from the context's calibration (calibration.h) and the times this program
 * and mode took before on each device, then the call on the CPU, on the GPU, or split between
 * them (split.h); each side's time then updates the program's measured scales.  run.c calls it
 * where DUAL_KNOB_DISPATCH is not 1 (the GPU first).
 */
#ifndef DUAL_DISPATCH_H
#define DUAL_DISPATCH_H

#include "dispatch/split.h"

typedef struct dual_dispatch_engines {
  dual_engine_fn gpu; /* the job on the GPU; where that fails, on the CPU with a note (run.c) */
  dual_engine_fn cpu; /* the job on the CPU engines at the CPU's width */
  int cpu_width;      /* that width (the model's CPU work) */
  int gpu_tier;       /* 1 when the GPU would run the compiled kernel, 0 the interpreter */
} dual_dispatch_engines;

/* Run `job` (host arrays, a GPU context) where the model says; ctx->last_device is CPU, GPU or
 * HYBRID and ctx's split records the points each took (a choice is not a note: notes report
 * fallbacks).  Where the calibration cannot be measured, the GPU first (as DUAL_KNOB_DISPATCH 1). */
int dual_dispatch_auto(dual_context *ctx, const dual_job *job, const dual_dispatch_engines *e);

/* Record a call of B points that ran on one device (ctx->last_device) as the context's split. */
void dual_dispatch_record_single(dual_context *ctx, int64_t B);

/* The context's measured scales (heap), freed with the context. */
struct dual_dispatch_memo;
void dual_dispatch_memo_free(struct dual_dispatch_memo *m);

#endif /* DUAL_DISPATCH_H */
