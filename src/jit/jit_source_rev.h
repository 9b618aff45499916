/*
 * jit_source_rev.h — the compiled tier's source generator for reverse mode (issue 17): from a
 * validated program and a job that runs in reverse mode (job->reverse) — a gradient, Jacobian or
 * VJP, or forward-over-reverse Hessians and HVPs — CUDA C for one kernel (Hessians: one per
 * job->groups groups of directions, by default one for all): straight-line code with a local per value, partial, adjoint and, in
 * forward-over-reverse, tangent and adjoint tangent, the same arithmetic as the reverse sweeps
 * of engine/interp_rev.h (DUAL_REV_FOR 0 or 1) in the same order, so results are bitwise those of
 * the CPU and the GPU interpreter in DUAL_AD_REVERSE.  Host code, independent of CUDA.
 */
#ifndef DUAL_JIT_SOURCE_REV_H
#define DUAL_JIT_SOURCE_REV_H

#include <stdint.h>

#include "exec.h"

/* Directions (Hessian columns) of a group unless the job's width field names another number
 * (DUAL_KNOB_JIT_WIDTH): a Hessian of n inputs takes ceil(n / directions) groups, all in one
 * kernel (or job->groups per kernel, DUAL_KNOB_JIT_GROUPS), which computes the values and
 * partials once and then each group's tangents and adjoint sweeps; an HVP takes one kernel.
 * hess on the H100 (bench/NOTES.md): 6.07e8 Hessians/s at B = 1e6 in one kernel of four groups
 * of 4 (or eight of 2), 4.06e8 in four kernels of one group, 2.2e8 with groups of 8. */
#define DUAL_JIT_REV_DIRECTIONS 4

/* The most terms (dual_jit_rev_sums) a reverse-mode module may hold.  Its terms are
 * cheaper for NVRTC than forward lane sums (DUAL_JIT_MAX_LANE_SUMS): on the project's 2-core
 * host hess's module (n = 16, 7 776 terms) compiled in 9.8 s, the same family at n = 24 (17 808)
 * in 25 s and at n = 32 (31 936) in 92 s. */
#define DUAL_JIT_MAX_REV_TERMS 12000

/* The most instructions of a reverse-mode (first-order) module written as one straight-line
 * kernel: its values and partials stay live from the forward sweep to the adjoint one, and
 * NVRTC's time grows about with the square of their number (the grad family on the 2-core host:
 * 385 instructions 3.5 s, 769 11 s, 1537 63 s, 6145 — grad itself, n = 1024 — 436 s).  A larger
 * program with one sweep (a gradient, a VJP, a one-output Jacobian) is cut into segments of
 * DUAL_JIT_REV_SEGMENT instructions, each a forward and an adjoint __noinline__ function: the
 * forward functions checkpoint the values later segments read, each adjoint function computes
 * its segment's values again from them and carries the adjoints of values and inputs that cross
 * a cut, in the sweep's order, so the bits stay the interpreters'.  A long gradient of one
 * output or VJP made mostly of periodic runs (the language's unrolled loops: jit_runs.h) instead gets a
 * looped kernel (jit_rev_loops.c), whatever its length: grad's compiles in seconds.  Larger
 * Jacobians of several outputs interpret. */
#define DUAL_JIT_MAX_REV_INSTR 1000
#define DUAL_JIT_REV_SEGMENT 256

/* The most inputs of a looped module (jit_rev_loops.c): each thread keeps an adjoint per input
 * in local memory (32 KB at this bound; a thread may have 512 KB). */
#define DUAL_JIT_LOOP_MAX_INPUTS 4096

/* The most instructions of a segmented module (a looped one has no such rule).  Segments make NVRTC's time grow with the
 * program, but each segment's values are computed twice (forward, then again before its
 * adjoint), so the code doubles: the grad family on the 2-core host compiled in 24 s at 1201
 * instructions and 71 s at 3073 (segments of 128 took as long), so grad itself (6145) would
 * take about 2.5 minutes and interprets. */
#ifndef DUAL_JIT_MAX_REV_SEGMENTED /* (a study build may raise it: bench/NOTES.md) */
#define DUAL_JIT_MAX_REV_SEGMENTED 2048
#endif

/* The number of kernels (passes) of a reverse-mode job (1 for first order). */
int dual_jit_rev_passes(const dual_job *job);

/* The terms a reverse-mode module would hold (adjoint terms of every sweep; forward-over-reverse
 * also tangents, their partials' derivatives and adjoint tangents, over every pass): what
 * DUAL_JIT_MAX_REV_TERMS bounds. */
int64_t dual_jit_rev_sums(const dual_job *job);

/* The source of every pass's kernel of `job` (mode DUAL_MODE_GRADIENT, _JACOBIAN, _VJP, _HESSIAN
 * or _HVP), named as the second-order kernels are (DUAL_JIT2_KERNEL_NAME, jit_source2.h) and
 * taking a dual_jit_args; *npass receives their number.  With job->samples > 0, dual_sgrad's
 * one kernel (pathwise: DUAL_MODE_GRADIENT of one output; job->score: DUAL_MODE_JACOBIAN of the
 * score program's two outputs): a thread per sample of each item's sample block (jit_args.h's
 * sg_* fields, jit_kernel.h's DUAL_JIT_SAMPLES_BEGIN), for programs of at most
 * DUAL_JIT_MAX_REV_INSTR instructions whose sample row (m + m n doubles) is at most 47.  One thread per point, warps tiled;
 * min_blocks > 0 asks the compiler for that many resident blocks per multiprocessor (segmented
 * modules: ignored).  Returns a heap string, or NULL with a reason in why (another mode, over
 * the size rule, out of memory). */
char *dual_jit_source_rev(const dual_job *job, int min_blocks, int *npass, char *why, int64_t why_cap);

/* The CPU compiled tier's reverse mode (issue 21): the same sweeps as C for one pass function
 * (jit/cpu_kernel.h's dual_cpu_p0) over a block of points, for a gradient, Jacobian or VJP, or
 * forward-over-reverse Hessians and HVPs (all groups of directions in the one function; not
 * dual_sgrad's kernel) within the rules above, with DUAL_CPU_REV_STRAIGHT_MAX for
 * the straight-line first-order one.  A straight-line module runs its sweeps in one `omp simd` loop over the
 * block, every value a local; a longer program of one sweep is looped when made of runs
 * (jit_rev_loops.c: each straight piece and each iteration of a loop an `omp simd` loop over the
 * block, the values crossing them in block arrays), else segmented (jit_rev_segments.c: each
 * segment's forward and adjoint function a loop over the block, the checkpoints and carried
 * adjoints block arrays); DUAL_CPU_JIT_LOOP_BYTES bounds the arrays, the block shrinking to 4.
 * Gradient entries go straight to d; products are the guarded ones throughout.  Returns a heap
 * string or NULL with a reason in why. */
char *dual_jit_source_rev_cpu(const dual_job *job, char *why, int64_t why_cap);

/* The most instructions of a straight-line CPU reverse-mode module (one sweep; a Jacobian of
 * several outputs keeps DUAL_JIT_MAX_REV_INSTR): every value and partial is live from the forward
 * sweep to the adjoint one in one loop body, and gcc's time grows faster than the program (a
 * chain of 901 instructions took over a minute and 1.5 GB at -O1); longer ones are segmented,
 * in segments of DUAL_CPU_REV_SEGMENT instructions: gcc's time per segment grows faster than
 * the segment (the product of 400 factors, 1602 instructions, gcc 12 -O1 on the 2-core
 * development machine, 2026-11-29: segments of 256 compiled in 79 s, 128 in 41, 64 in 26, 32 in
 * 23, 16 in 21, two thirds of it in the combiner). */
#define DUAL_CPU_REV_STRAIGHT_MAX DUAL_STRESS_SIZE(256, 48)
#define DUAL_CPU_REV_SEGMENT DUAL_STRESS_SIZE(64, 8)

/* A looped CPU module's block: at most DUAL_CPU_JIT_LOOP_BLOCK points, fewer (down to 4) where
 * its block arrays (gx_ and the names crossing its loops, in each thread's scratch) would pass
 * DUAL_CPU_JIT_LOOP_BYTES.  grad (1065 arrays) on the 2-core development machine: blocks of 16
 * and 32 points ran 2.0x the interpreter, 8 points 1.5x (each iteration's point loop is then a
 * single vector of AVX-512, too short for the loop's fixed costs). */
#define DUAL_CPU_JIT_LOOP_BLOCK 32
#define DUAL_CPU_JIT_LOOP_BYTES (512 * 1024)

#endif /* DUAL_JIT_SOURCE_REV_H */
