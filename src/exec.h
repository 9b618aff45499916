/*
 * exec.h — one evaluation request after argument checking, as handed from the public entry
 * points (run.c) to an engine (cpu/engine.c; the CUDA engine later).
 */
#ifndef DUAL_EXEC_H
#define DUAL_EXEC_H

#include "dualbatch.h"
#include "program.h"
#include "stress.h"

typedef struct dual_job {
  const dual_program *prog;
  const dual_batch *b; /* the caller's arrays and strides (checked) */
  int mode;            /* dual_mode */
  int width;           /* tangent width N: 0 (eval), 1, 2, 4, 8, 16, 32 (second order: the
                          directions per block, engine/pass2.h) */
  int threads;         /* host threads to use, >= 1 (run.c resolves 0 = all) */
  int reverse;         /* first derivatives by reverse mode (VJP; or the context asked for it) */
  /* random draws (engine/draws.h): draw k of point b is keyed (seed, point0 + b, sample, k) */
  uint64_t seed;
  int64_t point0; /* global index of the batch's first point (a chunk of a larger batch) */
  int64_t sample; /* with antithetic: the pair sample / 2, its second member negated */
  int antithetic;
  /* dual_sgrad (DUAL_MODE_SGRAD): samples > 0; `mode` is then the per-sample product
   * (DUAL_MODE_GRADIENT, or DUAL_MODE_JACOBIAN of the score program when `score`), and b's y, d,
   * h receive E f, the gradient estimate and its standard errors (engine/sgrad_reduce.h). */
  int64_t samples;
  int score;
  int nested_hessian; /* DUAL_KNOB_HESSIAN_NESTED: diagonal blocks carry every pair (pass2.c) */
  int groups;         /* compiled forward-over-reverse Hessians: groups of `width` directions per
                         kernel (0: all, one kernel; DUAL_KNOB_JIT_GROUPS) */
  int loads_ahead;    /* compiled reverse mode's loops: 1 = each iteration loads the next
                         one's inputs (DUAL_KNOB_JIT_LOADS_AHEAD) */
  void *stream;       /* GPU, device-memory batch: the stream it runs on (NULL: the context's) */
} dual_job;

/* Number of forward passes over the program: ceil(n / width) for Jacobians and gradients. */
int64_t dual_job_passes(const dual_job *job);

/* The CPU engines (OpenMP over blocks of points): first order (eval, JVP, Jacobian, gradient)
 * and second order (Hessian, HVP: cpu/engine2.c). */
int dual_cpu_run(dual_context *ctx, const dual_job *job);
int dual_cpu_run2(dual_context *ctx, const dual_job *job);
/* The CPU reverse-mode engine (VJP, reverse gradients and Jacobians: cpu/engine_rev.c). */
int dual_cpu_run_rev(dual_context *ctx, const dual_job *job);

/* dual_sgrad on the CPU (cpu/engine_sgrad.c): the job's samples, each a job without samples
 * (its draws keyed by the sample) through `run` — the engines above, or the compiled CPU tier's
 * module of that product when it serves (run.c). */
typedef int (*dual_cpu_runner)(dual_context *ctx, const dual_job *job);
int dual_cpu_run_sgrad(dual_context *ctx, const dual_job *job, dual_cpu_runner run);

/* dual_run of an eval or a Jacobian on a CPU context with `threads` threads, touching no state of
 * the context but its error on failure, so that threads may run it at once (run.c); then the
 * record of a successful run (last device, tier, AD mode; no note), once. */
int dual_run_cpu_quiet(dual_context *ctx, const dual_program *prog, int mode, const dual_batch *b,
                       int threads);
void dual_run_cpu_record(dual_context *ctx, const dual_program *prog, int mode);

/* Whether dual_run would take reverse mode for `mode` on `prog` (the context's AD mode, else the
 * cost model: run.c); a colored view (program.h) always runs forward. */
int dual_run_chooses_reverse(const dual_context *ctx, const dual_program *prog, int mode);

/* The forward passes of dual_run's Jacobian of prog on the context's device by the interpreter
 * (its width rule; a colored view counts its directions). */
int64_t dual_run_jacobian_passes(const dual_context *ctx, const dual_program *prog);

/* The blocks an engine's threads take at a time (OpenMP's dynamic schedule): four while every
 * thread gets many, else one, so a small batch still spreads over all the threads (100 points of
 * hess in blocks of 16 at four a time kept two of sixteen threads busy). */
static inline int dual_blocks_per_take(int64_t nblocks, int threads) {
  return nblocks >= 16 * (int64_t)threads ? DUAL_STRESS_SIZE(4, 1) : 1;
}

/* Whether a mode needs second-order passes. */
static inline int dual_mode_is_second_order(int mode) {
  return mode == DUAL_MODE_HESSIAN || mode == DUAL_MODE_HVP;
}

#endif /* DUAL_EXEC_H */
