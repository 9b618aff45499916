/*
 * rev_plan.h — a program prepared for the reverse sweep (engine/interp_rev.h), shared by the CPU
 * and GPU engines: one auxiliary word per instruction (its adjoint rule, arity and tape rows) and
 * the segments of checkpointed recomputation when the whole tape would exceed a memory budget.
 *
 * The forward sweep tapes the partials of every op whose adjoint rule (ops.def "adj") is LIN or
 * CHOOSE and whose result is active, one row per operand; ADD/SUB/NEG need none (their partials
 * are +-1).  A point then needs, in doubles: its register values, the tape, one adjoint per
 * active register (+1), one derivative per input (+1) and 3 scratch rows.  When that is over the
 * budget the instructions are cut into K segments: the forward sweep keeps a snapshot of the
 * register values at each segment's start instead of the whole tape, and the reverse sweep
 * recomputes one segment at a time from its snapshot (taping it) before sweeping it backwards —
 * K snapshots plus the largest segment's tape, for one extra forward sweep.  Host code.
 */
#ifndef DUAL_REV_PLAN_H
#define DUAL_REV_PLAN_H

#include <stdint.h>

#include "program.h"

/* The auxiliary word of instruction t: adjoint rule (enum dual_adj), arity, whether it tapes
 * (then `arity` rows from its row, counted from its segment's start). */
#define DUAL_REV_ADJ(aux) ((int)((aux)&15u))
#define DUAL_REV_ARITY(aux) ((int)(((aux) >> 4) & 3u))
#define DUAL_REV_TAPED(aux) ((int)(((aux) >> 6) & 1u))
#define DUAL_REV_ROW(aux) ((uint32_t)(aux) >> 7)
/* tape rows per segment the word can address (the stress build: 64, so that most programs run
 * in checkpointed segments) */
#define DUAL_REV_MAX_ROWS DUAL_STRESS_SIZE((int64_t)1 << 25, (int64_t)64)

typedef struct dual_rev_plan {
  int for_;           /* forward-over-reverse: tangents of one direction ride along (below) */
  uint32_t *aux;      /* [n_instr] */
  int64_t *seg;       /* [nseg + 1]: first instruction of each segment; seg[nseg] = n_instr */
  int32_t nseg;       /* 1: the whole tape at once, no recomputation */
  int64_t tape_rows;  /* rows of the largest segment's tape */
  int64_t per_point;  /* doubles a point needs (dual_rev_layout) */
} dual_rev_plan;

/* The context's note after a checkpointed call (CPU and GPU engines; printf format, nseg). */
#define DUAL_REV_SEGMENTS_NOTE                                                                   \
  "reverse mode: the tape did not fit at once (the memory limit, or the rows one segment "     \
  "can address), so the program ran in %d checkpointed segments"

/* Where each part of a point's storage starts, in rows (doubles per point) from its base.  The
 * register values, then (forward-over-reverse) the active registers' tangents, so that a
 * checkpoint copies rows [val, snap) as one block. */
typedef struct dual_rev_layout {
  int64_t val, tan, snap, tape, adj, adjd, grad, gradd, scratch, end;
} dual_rev_layout;

/* Scratch rows of the sweeps: 3 (reverse), 8 (forward-over-reverse). */
#define DUAL_REV_SCRATCH(for_) ((for_) ? 8 : 3)

/* Forward-over-reverse (for_ = 1, Hessian-vector products): the forward sweep also carries one
 * tangent direction and tapes, beside each partial d, its derivative along that direction
 * (d' = d2 . t, from the op's second-order rule); the adjoint sweep carries (g, g') pairs:
 * g'_a += d_a g' + d'_a g.  The tape then holds 2 * arity rows per LIN op, and a point also
 * needs the tangents, a second adjoint and derivative row each, and 8 scratch rows.
 *
 * Plan the reverse sweep of `prog` so that a point needs at most `budget` doubles (0: no bound),
 * with as few segments as fit.  Returns DUAL_SUCCESS, DUAL_ERR_NO_MEMORY (host allocation) or
 * DUAL_ERR_LIMIT when no segmentation fits the budget (pl->per_point then holds the least a
 * point could need).  A plan is freed with dual_rev_plan_free. */
int dual_rev_plan_build(dual_rev_plan *pl, const dual_program *prog, int for_, int64_t budget);
void dual_rev_plan_free(dual_rev_plan *pl);

/* Where a forward-over-reverse sweep's derivative g'_j goes in an output's row of h (CPU and GPU
 * stores): an HVP (dir < 0) stores entry j; a Hessian sweep along input dir gives column dir, of
 * which entry (j, dir) is stored for j <= dir only, at e0 (packed: the upper triangle row by row)
 * and mirrored at e1 (full layout, j < dir), so H is exactly symmetric.  e0 = -1: nothing
 * stored, e1 = -1: no mirror. */
#define DUAL_FOR_ENTRIES(dir, j, n, packed, e0, e1)                                              \
  {                                                                                              \
    (e0) = (j), (e1) = -1;                                                                       \
    if ((dir) >= 0) {                                                                            \
      if ((j) > (dir)) (e0) = -1;                                                                \
      else if (packed) (e0) = (j) * (n) - (int64_t)(j) * ((j) - 1) / 2 + (dir) - (j);            \
      else (e0) = (j) * (n) + (dir), (e1) = (j) == (dir) ? -1 : (dir) * (n) + (j);               \
    }                                                                                            \
  }

/* The storage layout of a plan's point. */
dual_rev_layout dual_rev_plan_layout(const dual_rev_plan *pl, const dual_program *prog);

#endif /* DUAL_REV_PLAN_H */
