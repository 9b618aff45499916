/*
 * jit_runs.h — periodic runs in a program's bytecode (internal to src/jit; host code).  The
 * language's sum, prod and for, and any loop of a program built through the builder, reach the
 * bytecode unrolled: grad (1024 inputs) is 6145 straight-line instructions, and a kernel written
 * from them instruction by instruction is megabytes of code that NVRTC takes minutes over.  A
 * run is a stretch of `count` iterations of `period` instructions that do the same thing up to
 * shifts, so that a generator can write it as a loop again; the rest of the program stays
 * straight-line.  Finding the runs only reads the bytecode: a generator that loops over a run
 * does the same operations on the same values in the same order, so the bits do not change.
 *
 * Iteration k (0 <= k < count) is instructions t0 + k period + j, j = 0 .. period - 1.  Each
 * has the op, the result's activity and the non-register fields of position j, except that a
 * load's index (LDX's input, LDP's parameter, a draw's index) may step by a constant per
 * iteration; LDK loads the same constant value; OUT never takes part.  Each register operand i
 * of position j reads, in every iteration,
 *   SAME   a definition of the same iteration, off = def - t (< 0);
 *   CARRY  from iteration 1 on, a definition of the iteration before, off = def - t; in
 *          iteration 0 the definition init (before t0) — a running sum's start, say;
 *   FIXED  the same definition before t0 (off = def);
 *   LOAD   an LDX (anywhere before t) of input off + k step: a value the loop loads again.
 * A definition of the run that is read after the run is a load or belongs to the last iteration.
 */
#ifndef DUAL_JIT_RUNS_H
#define DUAL_JIT_RUNS_H

#include <stdint.h>

#include "program.h"

enum { DUAL_RUN_NONE = 0, DUAL_RUN_SAME, DUAL_RUN_CARRY, DUAL_RUN_FIXED, DUAL_RUN_LOAD };

typedef struct dual_jit_run {
  int64_t t0, period, count;
  /* per position j and operand i, at [3 j + i]: how the operand is read (DUAL_RUN_*), its off,
   * its step (LOAD) and its definition in iteration 0 (CARRY) */
  uint8_t *kind;
  int64_t *off, *step, *init;
  int64_t *astep; /* [period]: the step per iteration of a load's index (0 otherwise) */
} dual_jit_run;

/* The defaults of dual_jit_find_runs: the longest period tried, and the fewest iterations that
 * make a run (shorter stretches stay straight-line). */
#define DUAL_JIT_RUN_MAX_PERIOD 64
#define DUAL_JIT_RUN_MIN_COUNT 8

/* The runs of prog, in program order and disjoint: from each instruction not yet in a run, the
 * period (up to max_period) whose run covers the most instructions, if it has at least
 * min_count iterations.  *runs (heap; free with dual_jit_runs_free) and *nruns receive them.
 * DUAL_SUCCESS or DUAL_ERR_NO_MEMORY. */
int dual_jit_find_runs(const dual_program *prog, int max_period, int64_t min_count,
                       dual_jit_run **runs, int64_t *nruns);

void dual_jit_runs_free(dual_jit_run *runs, int64_t nruns);

#endif /* DUAL_JIT_RUNS_H */
