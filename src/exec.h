/*
 * exec.h — one evaluation request after argument checking, as handed from the public entry
 * points (run.c) to an engine (cpu/engine.c; the CUDA engine later).
 */
#ifndef DUAL_EXEC_H
#define DUAL_EXEC_H

#include "dualbatch.h"
#include "program.h"

typedef struct dual_job {
  const dual_program *prog;
  const dual_batch *b; /* the caller's arrays and strides (checked) */
  int mode;            /* dual_mode */
  int width;           /* tangent width N: 0 (eval), 1, 2, 4, 8, 16, 32 */
  int threads;         /* host threads to use, >= 1 (run.c resolves 0 = all) */
} dual_job;

/* Number of forward passes over the program: ceil(n / width) for Jacobians and gradients. */
int64_t dual_job_passes(const dual_job *job);

/* The CPU engine (OpenMP over blocks of points). */
int dual_cpu_run(dual_context *ctx, const dual_job *job);

#endif /* DUAL_EXEC_H */
