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
#include "stress.h"

/* Bump when the generated code changes meaning: part of every cache key. */
#define DUAL_JIT_GENERATOR_VERSION 5

/* The most tangent-lane sums (and, in second order, pair components) a generated module may
 * hold: NVRTC's time grows faster than the code (on the project's 2-core host, a module of
 * 2 400 lane sums compiled in 15 s and one of 5 500 in 60 s; kin's two passes hold 1 600), so a
 * program above it stays on the interpreter (the generators return NULL and say why). */
#define DUAL_JIT_MAX_LANE_SUMS 4000
/* The CPU target's rule: its long passes are cut into functions (DUAL_CPU_FWD_SEGMENT below), so
 * the system compiler's time grows with the lane sums, not faster (about 30,000 lane sums make
 * the 4 MiB of source that DUAL_CPU_JIT_MAX_SOURCE, below, allows: half a minute). */
#define DUAL_CPU_JIT_MAX_LANE_SUMS 32000

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
 * local (a long pass: a loop per segment, below); A's y, d and status may be NULL.  Modes and
 * NULL as dual_jit_source, with DUAL_CPU_JIT_MAX_LANE_SUMS for the rule; results bitwise the CPU
 * interpreter's. */
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
/* The largest generated source the tier compiles.  Every function of a module is bounded (a
 * forward pass is cut into segments past DUAL_CPU_FWD_STRAIGHT_MAX, below; second-order
 * passes hold at most DUAL_JIT_MAX_LANE_SUMS lane sums; reverse mode is straight-line up to
 * DUAL_CPU_REV_STRAIGHT_MAX instructions, else looped or segmented), so the compile takes time in
 * proportion to the source: gcc 12 -O1 on the 2-core development machine (2026-11-29) 7-9 s a MiB
 * (kin's Jacobian in 32 passes of width 1, 2.8 MiB: 26 s; a 4,023-instruction chain's Jacobian
 * of width 8 in 38 segments, 4.5 MiB: 32 s, where as one function it took 61 s and 1.7 GB).
 * (Before the cut a single function of 1 MiB took gcc about 30 s at -O1, a minute at -O2.)  A
 * larger source is declined: DUAL_ERR_COMPILE under DUAL_TIER_COMPILE, the interpreter under
 * AUTO. */
#define DUAL_CPU_JIT_MAX_SOURCE (4 << 20)

/* A long pass is cut into functions (jit_source.c: plan_segments, emit_segment_cpu): the
 * compiler's time on one function grows faster than its length, on many short ones with their
 * sum.  A pass whose instructions and tangent-lane sums number more than
 * DUAL_CPU_FWD_STRAIGHT_MAX is cut, in the emission order, into segments of about
 * DUAL_CPU_FWD_SEGMENT doubles of results (values and lanes), each a point loop of its own over
 * the block; the values and lanes a later segment reads go through checkpoint slots in the
 * thread's scratch (inputs, parameters and constants are loaded again).  The block shrinks
 * (down to 8 points) to keep the checkpoints within DUAL_CPU_JIT_CHECKPOINT_BYTES. */
#define DUAL_CPU_FWD_STRAIGHT_MAX DUAL_STRESS_SIZE(3000, 200)
#define DUAL_CPU_FWD_SEGMENT DUAL_STRESS_SIZE(512, 32)
#define DUAL_CPU_JIT_CHECKPOINT_BYTES (1 << 20)
/* The library's elementary functions (dual/fn_*.h) are inlined into a CPU module's point loops,
 * which then vectorize around them; but gcc 12 -O1 takes 20-130 ms for each inlined use (200
 * uses of log1p: 26 s, of sin: 13 s; of exp 4 s).  A module with more than
 * DUAL_CPU_JIT_INLINE_SITES uses (instructions of a special function other than division and
 * square root, counted once per pass) calls them instead as SIMD clones made once per module
 * (DUAL_FN_OUTLINE, dual/fn_bits.h; the same arithmetic, so the same bits): those 200 uses of
 * log1p 1.1 s, of sin 0.56 s, at 11-17 % more run time on those loops.  The benchmark functions
 * (at most 17 uses a pass) stay inlined. */
#define DUAL_CPU_JIT_INLINE_SITES 256
#define DUAL_CPU_OUTLINE_LINE "#define DUAL_FN_OUTLINE 1 /* elementary functions called (dual/fn_bits.h) */\n"
/* Whether prog's module, its instructions written `copies` times (passes, sweeps), is over
 * DUAL_CPU_JIT_INLINE_SITES. */
int dual_jit_cpu_outline(const dual_program *prog, int64_t copies);
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
