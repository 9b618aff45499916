/*
 * cpu_jit.h — the CPU compiled tier's modules (issue 21): a program's first-order passes as C
 * from the one generator (jit/jit_source.h, dual_jit_source_cpu; second order: jit_source2.h;
 * reverse mode: jit_source_rev.h), compiled by the system compiler
 * (jit/cc_compile.h), loaded, and run over a batch with OpenMP, each thread taking blocks of the
 * module's points through every pass's function (a block's points stay in cache from pass to pass).  Results are bitwise the CPU
 * interpreter's (cpu/engine.c) at the same width.
 */
#ifndef DUAL_CPU_JIT_H
#define DUAL_CPU_JIT_H

#include "exec.h"
#include "jit/cc_compile.h"
#include "jit/jit_source.h"

/* A call's derivative results of at least this many bytes are written with non-temporal stores
 * (jit/cpu_kernel.h: DUAL_CPU_ROWS): they would not stay in the cache anyway. */
#define DUAL_CPU_JIT_STREAM_BYTES (32 << 20)

/* (DUAL_CPU_JIT_MAX_SOURCE, the largest source the tier compiles: jit/jit_source.h) */

typedef struct dual_cpu_jit_module {
  void *handle;            /* the loaded object */
  int fd;                  /* its memory file (jit/cc_compile.h: dual_cc_load), or -1 */
  int mode, width, npass;  /* what it computes: passes 0 .. npass - 1 of width `width` */
  int block;               /* points per call of a pass function (the module's own figure) */
  int64_t scratch;         /* bytes of scratch each thread hands its pass functions (0: none) */
  dual_cpu_jit_pass *pass; /* [npass] */
} dual_cpu_jit_module;

/* The module of `mode` at `width` (npass passes: dual_job_passes of such a job) for prog:
 * generated, compiled with cc and loaded; 0 with *out, or -1 with *why (heap: the generator's
 * refusal, the compiler's log, or what failed to load). */
int dual_cpu_jit_build(const dual_cc *cc, const dual_program *prog, int mode, int width, int npass,
                       dual_cpu_jit_module **out, char **why);

/* The module from the bytes of its shared object (a cache entry): 0, or -1 with *why. */
int dual_cpu_jit_load(const void *image, size_t size, int mode, int width, int npass,
                      dual_cpu_jit_module **out, char **why);

void dual_cpu_jit_free(dual_cpu_jit_module *m);

/* Run the job (a first-order mode and width the module was built for) with job->threads threads:
 * DUAL_SUCCESS, or an error on ctx (out of memory; a job the module does not fit). */
int dual_cpu_jit_run(dual_context *ctx, const dual_job *job, const dual_cpu_jit_module *m);

/* The compiled tier on a CPU context (issue 21): where the context's CPU tier (DUALBATCH_CPU_TIER,
 * or dual_context_set_tier) is DUAL_TIER_COMPILE
 * and the job is forward mode (eval, JVP, Jacobian, gradient; nested second order: Hessian, HVP)
 * or reverse mode (gradient, Jacobian, VJP; forward-over-reverse Hessian, HVP), run it
 * through its module — loaded before in this process, else from the disk cache, else generated and
 * compiled now (blocking) — and set *ran; DUAL_ERR_COMPILE when there is no compiler or the
 * module cannot be built (the message says why); under DUAL_TIER_AUTO, run it through its module
 * when the background compile has loaded it (dual_cpu_jit_interpreted), or, with
 * DUAL_KNOB_CPU_JIT_AFTER_MS 0, build it now as COMPILE does (a module it cannot build: the
 * reason in the note, and the product interprets from then on).  Elsewhere (*ran 0) the caller
 * interprets. */
int dual_cpu_jit_try(dual_context *ctx, const dual_job *job, int *ran);

/* Under DUAL_TIER_AUTO (a CPU context's default) the tier's products interpret until the
 * interpreter has spent DUAL_KNOB_CPU_JIT_AFTER_MS on a (program, product) in this process; the
 * caller reports each interpreted call's seconds here, and past that time the module is queued
 * for a background thread (the disk cache first, else the compiler), whose result the next
 * dual_cpu_jit_try of the product runs.  A product the generator declines, or without a
 * compiler, keeps interpreting.  (At 0 ms nothing is counted: dual_cpu_jit_try compiles.) */
void dual_cpu_jit_interpreted(dual_context *ctx, const dual_job *job, double seconds);

#endif /* DUAL_CPU_JIT_H */
