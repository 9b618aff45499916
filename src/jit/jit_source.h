/*
 * jit_source.h — the compiled tiers' first-order source generator: from a validated program and
 * a first-order job shape, straight-line code with one local per live value and tangent lane —
 * CUDA C for one kernel per forward pass (the GPU tier), or C11 for one function per pass over a
 * block of points (the CPU tier, dual_jit_source_cpu).  Host code, independent of CUDA (tests run
 * it on the CPU and compile its output with NVRTC without a GPU, or with the system C compiler).
 */
#ifndef DUAL_JIT_SOURCE_H
#define DUAL_JIT_SOURCE_H

#include <stdint.h>

#include "engine/plan.h"
#include "program.h"

/* Bump when the generated code changes meaning: part of every cache key. */
#define DUAL_JIT_GENERATOR_VERSION 5

/* The most tangent-lane sums (and, in second order, pair components) a generated module may
 * hold: NVRTC's time grows faster than the code (on the project's 2-core host, a module of
 * 2 400 lane sums compiled in 15 s and one of 5 500 in 60 s; kin's two passes hold 1 600), so a
 * program above it stays on the interpreter (the generators return NULL and say why). */
#define DUAL_JIT_MAX_LANE_SUMS 4000

/* The tangent-lane sums the plan records recs[0 .. n) make a generator write (the lanes of every
 * instruction that computes; loads and stores write none): what DUAL_JIT_MAX_LANE_SUMS bounds. */
int64_t dual_jit_lane_sums(const dual_plan_instr *recs, int64_t n);

/* Append the right-hand side of one tangent lane of a result of prop class `prop`
 * (engine/tangent_terms.h's formula for the class, with the partials named qa, qb, qc): `mul`
 * (DUAL_TF or DUAL_TM) multiplies in LIN and MUL, u[i] says whether operand i has the lane and
 * tn[i] names it ("0.0" where it does not).  All three generators write lanes through it. */
struct dual_strbuf;
void dual_jit_emit_lane(struct dual_strbuf *out, int prop, const char *mul, const int u[3],
                        const char *const tn[3]);

/* Kernel `pass` of a module is named "dual_jit_p<pass>". */
#define DUAL_JIT_KERNEL_NAME "dual_jit_p%d"

/* The source of `npass` kernels (NULL, with why, when they would hold more than
 * DUAL_JIT_MAX_LANE_SUMS lane sums) (passes 0 .. npass - 1 of width `width`; width 0 and one pass
 * for DUAL_MODE_EVAL) for mode DUAL_MODE_EVAL, _JVP, _JACOBIAN or _GRADIENT.  Every op calls the
 * rule of dual/rules.h the interpreters call, every tangent lane is the sum of
 * engine/tangent_terms.h, lanes that are structurally zero in a pass are never emitted, and
 * constants are exact (hex floats), so results are bitwise those of the interpreters.
 * min_blocks > 0 asks the compiler for that many resident blocks per multiprocessor
 * (__launch_bounds__: fewer registers per thread, spilling if it must).  Returns a
 * heap string, or NULL with a reason in why (out of memory, or a shape it does not handle). */
char *dual_jit_source(const dual_program *prog, int mode, int width, int npass, int min_blocks,
                      char *why, int64_t why_cap);

/* The CPU target (issue 21): C11 for the system compiler (jit/cc_compile.h) with the same body,
 * one function per pass, DUAL_CPU_JIT_PASS_NAME, of type dual_cpu_jit_pass: points p0 .. p0 +
 * nb - 1 (nb at most the module's block, below) in one `omp simd` loop, each value and lane a
 * local; A's y, d and status may be NULL.  Modes and NULL as dual_jit_source; results bitwise the
 * CPU interpreter's. */
#define DUAL_CPU_JIT_PASS_NAME "dual_cpu_p%d"
/* The most points a call of a pass function takes; the module's own figure, its symbol
 * DUAL_CPU_JIT_BLOCK_NAME (const int), may be less: a pass's stage (each output's value and
 * present lanes for each point of the block) stays within DUAL_CPU_JIT_STAGE_BYTES, so in the
 * first levels of cache. */
#define DUAL_CPU_JIT_BLOCK 64
#define DUAL_CPU_JIT_STAGE_BYTES (96 * 1024)
#define DUAL_CPU_JIT_BLOCK_NAME "dual_cpu_block"
/* A pass whose outputs' derivative rows hold at most this many entries builds each point's rows
 * on the stack and copies them whole (jit/cpu_kernel.h: DUAL_CPU_ROWS); a larger one copies entry
 * by entry. */
#define DUAL_CPU_ROWS_MAX 8192
struct dual_jit_args;
/* stream: 1 to write a pass's derivative blocks with non-temporal stores where they are
 * contiguous (a large batch's results, which would only evict the cache: jit/cpu_kernel.h);
 * scratch: the calling thread's DUAL_CPU_JIT_SCRATCH_NAME bytes (a const int64_t of the module,
 * 0 where absent), or NULL where that is 0 (a looped reverse-mode module keeps
 * its block arrays there: jit_source_rev.h). */
typedef void (*dual_cpu_jit_pass)(const struct dual_jit_args *A, int64_t p0, int64_t nb, int stream, double *scratch);
#define DUAL_CPU_JIT_PASS_PARAMS "(const dual_jit_args *A, int64_t p0, int64_t nb, int stream, double *scratch)"
#define DUAL_CPU_JIT_SCRATCH_NAME "dual_cpu_scratch"
char *dual_jit_source_cpu(const dual_program *prog, int mode, int width, int npass, char *why,
                          int64_t why_cap);

/* dual_sgrad's kernels, forward mode (as dual_jit_source's, one per pass of `width` lanes over
 * the inputs; the draws' seed, point0, antithetic pairing and the sample count are arguments,
 * jit/jit_args.h): each thread runs one sample block of a point in order — the pass's body with
 * the draws keyed by the sample (engine/draws.h), NaN and infinite partials rerun guarded as in
 * dual_jit_source — and folds each sample into the block's mean and m2 (engine/sgrad_reduce.h,
 * the CPU's and the interpreter's code): the first pass E f, every pass its columns' gradient
 * entries; then it stores them in A.sg_part for kernels/sgrad_combine.cu, which folds the blocks
 * in order into E f, the means and the standard errors.  The first pass stores the item's status
 * (the flags of its samples), later ones OR theirs in.  `score` = 0: pathwise, prog is the program (one
 * output, mode DUAL_MODE_GRADIENT); 1: prog is the score-function program (sgrad_score.h: outputs
 * f and L, mode DUAL_MODE_JACOBIAN; per-sample gradient grad f + f grad L).  NULL with why as
 * dual_jit_source, or when a sample's row does not fit the stage. */
char *dual_jit_source_sgrad(const dual_program *prog, int score, int width, int npass,
                            int min_blocks, char *why, int64_t why_cap);

#endif /* DUAL_JIT_SOURCE_H */
