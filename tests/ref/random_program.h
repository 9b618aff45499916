/*
 * random_program.h — random dualbatch programs for the cross-checking tests (bitwise, plan, GPU):
 * every op of the table at least once, then random ops over earlier values, with a splitmix64
 * stream so a seed names a program.
 */
#ifndef DUAL_TEST_RANDOM_PROGRAM_H
#define DUAL_TEST_RANDOM_PROGRAM_H

#include <stdint.h>

#include "dualbatch.h"

uint64_t rp_next(uint64_t *state);                     /* splitmix64 */
double rp_uniform(uint64_t *state, double lo, double hi); /* [lo, hi) */
int rp_pick(uint64_t *state, int n);                   /* 0 .. n-1 */

/* The sweep's step k: a test's loop over random programs checks program i where i % k == 0 (all
 * of them by default, every k-th under DUALBATCH_TEST_SWEEP_DIV=k).  The CPU compiled tier's
 * test parameter sets it (tests/CMakeLists.txt): there each program and product is a run of the
 * C compiler.  The programs are still made in order, so those checked are the full sweep's. */
int rp_sweep_step(void);

/* A program with nin inputs, npar parameters, `len` random ops (the first pass covers every op
 * callable by name) and nout outputs, each summing a few values.  NULL on a library error (the
 * context's last error says which). */
dual_program *rp_random_program(dual_context *ctx, uint64_t *state, int len, int nin, int npar,
                                int nout);

/* Op `op` of the table alone over three inputs (as many as it takes), one output: the per-op
 * tests.  NULL when the op has no spelling or on a library error (the context's last error). */
dual_program *rp_op_program(dual_context *ctx, int op);

/* A long chain of `steps` ops over two running values and nin inputs (nin >= 2), nout outputs:
 * tapes far longer than the register file (the reverse-mode checkpointing tests).  NULL on a
 * library error. */
dual_program *rp_chain_program(dual_context *ctx, uint64_t *state, int nin, int nout, int steps);

#endif /* DUAL_TEST_RANDOM_PROGRAM_H */
