/*
 * pass2.h — the passes of a second-order job (Hessian or Hessian-vector product): which
 * directions each pass seeds in its first-order lanes, which pairs of lanes it carries to second
 * order, and where each pair and lane lands in the caller's arrays.
 *
 * A second-order pass carries, per register, a value, one tangent per lane and one second-order
 * component per pair (k, l) of lanes: d2 r / d(dir_k) d(dir_l).  The component of a pair is
 * computed from the two lanes' tangents and the operands' components of the same pair only
 * (engine/interp2_ops.h), so it does not depend on which other lanes or pairs share the pass:
 * every chunking of the directions gives bitwise identical results.
 *
 *   Hessian, n inputs, block size N: inputs split into blocks I_0, I_1, ...; one pass per block
 *   pair (I_a, I_b), a <= b.  Diagonal passes seed the N inputs of I_a and carry the pairs k <= l
 *   (the upper triangle of the block: N(N+1)/2 components, the "truncated" second-order
 *   multi-dual); off-diagonal passes seed I_a and I_b (2N lanes) and carry all N x N pairs (the
 *   nested dual-of-dual block).  Diagonal passes also write the Jacobian columns of their block.
 *   HVP, chunk C: lane 0 seeds the direction v (every input, with v's component), lanes 1..C the
 *   inputs of the chunk; pairs (0, k): d2 f / dv dx_j = (H v)_j.
 * Host code, independent of the engine.
 */
#ifndef DUAL_PASS2_H
#define DUAL_PASS2_H

#include <stdint.h>

#include "exec.h"

#define DUAL_PASS2_MAX_LANES 32
#define DUAL_PASS2_MAX_PAIRS (DUAL_PASS2_MAX_LANES * (DUAL_PASS2_MAX_LANES + 1) / 2)

typedef struct dual_pass2 {
  int nlanes;                                  /* first-order lanes, <= 32 */
  int32_t lane_input[DUAL_PASS2_MAX_LANES];    /* input seeded with 1 in lane k; -1: direction v */
  int vlane;                                   /* the lane seeded with v (HVP), or -1 */
  int ngrad;                                   /* lanes written to the Jacobian by this pass */
  uint8_t grad_lane[DUAL_PASS2_MAX_LANES];     /* ... which lanes, */
  int32_t grad_col[DUAL_PASS2_MAX_LANES];      /* ... into which input column */
  int npairs;                                  /* second-order components */
  uint8_t pk[DUAL_PASS2_MAX_PAIRS], pl[DUAL_PASS2_MAX_PAIRS]; /* the lanes of pair q */
  int64_t out0[DUAL_PASS2_MAX_PAIRS];          /* element of pair q in an output's block of h */
  int64_t out1[DUAL_PASS2_MAX_PAIRS];          /* its mirror (j, k) -> (k, j), or -1 */
} dual_pass2;

/* Directions per block (Hessian) or per chunk (HVP) for a job of width N. */
int dual_pass2_block(const dual_job *job);

/* Number of passes of a second-order job. */
int64_t dual_pass2_count(const dual_job *job);

/* Describe pass `index` (0 <= index < dual_pass2_count). */
void dual_pass2_make(const dual_job *job, int64_t index, dual_pass2 *pass);

/* Number of elements of one output's block of h: n*n, n(n+1)/2 (packed) or n (HVP). */
int64_t dual_pass2_out_len(int mode, int64_t n, int layout);

#endif /* DUAL_PASS2_H */
