/*
 * interp_rev.h — the reverse sweep over the bytecode, written once for the CPU block engine
 * (cpu/interp_rev_block.h, DUAL_BLKR points at a time) and the GPU kernel
 * (kernels/interp_rev_point.h, one point per thread).  Defines dual_rev_forward, dual_rev_adjoint
 * and dual_rev_sweeps (checkpointed or not) with the includer's storage.
 *
 * Forward: the values-only interpreter of interp_ops.h with DUAL_ALL_PARTIALS, over instructions
 * [t0, t1): each op whose adjoint rule reads partials stores its rule's d[] (the numbers forward
 * mode multiplies tangents by) in its tape rows (engine/rev_plan.h).  Adjoint: instructions
 * t1 - 1 down to t0, each applying its ops.def "adj" rule: the result's adjoint g is taken (and
 * its register's adjoint cleared: the definition ends there) and handed to the active operands —
 * LIN  += d*g through the guarded product DUAL_TM (a zero g adds nothing, even against an
 * infinite partial), CHOOSE += g to the operand whose taped partial is nonzero, ADD/SUB/NEG
 * +-g; GRAD adds g to the input's derivative, SEED starts an output's adjoint at its cotangent.
 * Every register's adjoint is zero again after a full sweep, so the storage is cleared once.
 *
 * Forward-over-reverse (DUAL_REV_FOR 1, rev_plan.h): the forward sweep is the one-lane tangent
 * interpreter of interp_ops.h (the active registers' tangents along one direction, seeded by the
 * engine's LDX), and each LIN op also tapes d' = d2 . t (its second partials from rules.h times
 * the operands' tangents, before the result's tangent is written: it may share a's row; only
 * the second partials ops.def says the op may have, each term the symmetric guarded product
 * DUAL_TT, so a second partial that is always 0 adds nothing even against an infinite tangent); the
 * adjoint sweep carries (g, g') pairs: LIN g'_a += d_a g' + d'_a g, the others as for g.  At an
 * input, g is the gradient and g' the Hessian-vector product along the direction.  The term
 * d'_a g is the symmetric guarded product DUAL_TT: an exactly zero d' adds nothing even against
 * an infinite or NaN g.  With that, a term whose tangent, d' or g' is structurally zero (the
 * value does not depend on the direction) is always a signed zero, and every g' sum starts at
 * +0.0, which no zero term changes — so such terms add nothing to any result bit, and the
 * compiled tier's generated sweeps leave them out (jit/jit_source_rev.c).  A structurally zero
 * Hessian entry is exactly +0.0.
 *
 * The includer defines: DUAL_REV_FOR (0 or 1), DUAL_REV_NAME(f) (the functions' names, so both
 * variants can live in one file), DUAL_REV_FN (function qualifier), DUAL_REV_CTX (its state type, passed
 * as R), DUAL_REV_LOCALS (declarations from R: st, V and what its load/store macros use),
 * DUAL_POINTS / DUAL_POINTS_OR / DUAL_VAL, DUAL_TAPE(row), DUAL_SCRATCH(i), DUAL_ADJ(r),
 * DUAL_GRAD(i) (row pointers), DUAL_REV_WORDS(t) (instruction t's four words into w0..w3),
 * DUAL_REV_AUX(t), DUAL_ENGINE_LDX/LDP/LDK/OUT (forward), DUAL_REV_SEED(ar, out) (add output
 * `out`'s cotangent to the adjoint row ar, with its checks), and DUAL_REV_SNAPSHOT(k) /
 * DUAL_REV_RESTORE(k) (copy the register values, and tangents, to / from checkpoint k); with
 * DUAL_REV_FOR also DUAL_TANR(r), DUAL_ADJD(r), DUAL_GRADD(i) (tangent, adjoint' and
 * derivative' rows).
 */
#include "dual/ops.h"
#include "engine/rev_plan.h"

#define DUAL_W 1
#define DUAL_ALL_PARTIALS 1
#define DUAL_TSTEP 1
#if DUAL_REV_FOR
#define DUAL_TAN(r, k) DUAL_TANR(r) /* one lane */
/* The value loop's hook: the op's second partials into the scratch rows paa, pab, pbb. */
#undef DUAL_SECOND_PARTIALS
#define DUAL_SECOND_PARTIALS(name, partials, p, a, b, c, r, d)                                   \
  if ((partials) >= 0) {                                                                         \
    double dd_[3];                                                                               \
    dual_rule2_##name(a, b, c, r, d, dd_);                                                       \
    paa[p] = dd_[0], pab[p] = dd_[1], pbb[p] = dd_[2];                                           \
  }
#else
#define DUAL_TAN(r, k) ((double *)NULL) /* no tangents: the lane masks are empty */
#endif

#if DUAL_REV_FOR
/* The second partials op may have (ops.def F_D2AA, F_D2AB, F_D2BB; rules.h stores exactly 0.0
 * for the others, so their terms of d' are left out). */
DUAL_REV_FN int DUAL_REV_NAME(dual_rev_d2)(int op) {
  switch (op) {
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  case DUAL_OP_##name: return (flags) & (F_D2AA | F_D2AB | F_D2BB);
#include "../dual/ops.def"
#undef OP
  default: return 0;
  }
}
#endif

/* The forward sweep over instructions [t0, t1): values, flags and the tape of partials. */
DUAL_REV_FN void DUAL_REV_NAME(dual_rev_forward)(DUAL_REV_CTX *R, int64_t t0, int64_t t1) {
  DUAL_REV_LOCALS
  for (int64_t t = t0; t < t1; ++t) {
    uint32_t w0, w1, w2, w3;
    DUAL_REV_WORDS(t);
    const uint32_t aux = DUAL_REV_AUX(t);
    const int op = (int)(w0 >> DUAL_DST_BITS);
    const int32_t dst = (int32_t)(w0 & ((1u << DUAL_DST_BITS) - 1u));
    const int32_t ra = (int32_t)w1, rb = (int32_t)w2, rc = (int32_t)w3;
    const int taped = DUAL_REV_TAPED(aux), arity = DUAL_REV_ARITY(aux);
    const uint32_t row = DUAL_REV_ROW(aux);
#if DUAL_REV_FOR /* the one lane: active operands carry it (an OUT's is not needed) */
    const int computes = DUAL_REV_ADJ(aux) != DUAL_ADJ_SEED;
    const uint32_t ma = computes && arity > 0 && ra < nact_ ? 1u : 0u;
    const uint32_t mb = arity > 1 && rb < nact_ ? 1u : 0u, mc = arity > 2 && rc < nact_ ? 1u : 0u;
    const uint32_t md = op == DUAL_OP_LDX ? 1u : 0u; /* LDX seeds its lane */
    double *DUAL_RESTRICT paa = DUAL_SCRATCH(3), *DUAL_RESTRICT pab = DUAL_SCRATCH(4);
    double *DUAL_RESTRICT pbb = DUAL_SCRATCH(5);
    (void)paa, (void)pab, (void)pbb;
#else
    const uint32_t ma = 0u, mb = 0u, mc = 0u, md = 0u; /* no tangents */
#endif
    double *DUAL_RESTRICT pa = taped ? DUAL_TAPE(row) : DUAL_SCRATCH(0);
    double *DUAL_RESTRICT pb = taped && arity > 1 ? DUAL_TAPE(row + 1u) : DUAL_SCRATCH(1);
    double *DUAL_RESTRICT pc = taped && arity > 2 ? DUAL_TAPE(row + 2u) : DUAL_SCRATCH(2);
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    (void)rc, (void)ma, (void)mb, (void)mc, (void)md, (void)pa, (void)pb, (void)pc, (void)bad_;
    (void)prop_;
    switch (op) {
#include "engine/interp_ops.h"
    default:
      break;
    }
#if DUAL_REV_FOR
    /* d' = d2 . t of a LIN op, before its result's tangent (which may share a's row) is written:
     * the terms of the second partials the op may have (ops.def F_D2*; the others are exactly
     * 0), each the symmetric guarded product (an exactly zero tangent or second partial adds
     * nothing, even against an infinite or NaN other factor) */
    if (taped && DUAL_REV_ADJ(aux) == DUAL_ADJ_LIN) {
      const double *ta_ = ma ? DUAL_TANR(ra) : NULL, *tb_ = mb ? DUAL_TANR(rb) : NULL;
      const int d2_ = DUAL_REV_NAME(dual_rev_d2)(op);
      for (int i = 0; i < arity && i < 2; ++i) {
        double *DUAL_RESTRICT dd = DUAL_TAPE(row + (uint32_t)(arity + i));
        const double *q1 = i == 0 ? paa : pab, *q2 = i == 0 ? pab : pbb;
        const int on1 = ta_ != NULL && (d2_ & (i == 0 ? F_D2AA : F_D2AB));
        const int on2 = tb_ != NULL && (d2_ & (i == 0 ? F_D2AB : F_D2BB));
        DUAL_POINTS(p) {
          double s_ = -0.0;
          if (on1) s_ += DUAL_TT(q1[p], ta_[p]);
          if (on2) s_ += DUAL_TT(q2[p], tb_[p]);
          dd[p] = s_;
        }
      }
      for (int i = 2; i < arity; ++i) { /* no op has a second partial involving c */
        double *DUAL_RESTRICT dd = DUAL_TAPE(row + (uint32_t)(arity + i));
        DUAL_POINTS(p) { dd[p] = -0.0; }
      }
    }
    if (md == 0u && prop_ != DUAL_PROP_NONE && dst < nact_) {
      if ((ma | mb | mc) != 0u) {
        DUAL_PROPAGATE()
      } else { /* active result of passive operands cannot occur: tangent 0 for safety */
        double *DUAL_RESTRICT tr_ = DUAL_TANR(dst);
        DUAL_POINTS(p) { tr_[p] = 0.0; }
      }
    }
#endif
  }
}

/* The adjoint sweep over instructions t1 - 1 down to t0 (the cotangents enter at the outputs
 * through DUAL_REV_SEED). */
DUAL_REV_FN void DUAL_REV_NAME(dual_rev_adjoint)(DUAL_REV_CTX *R, int32_t nact, int64_t t0, int64_t t1) {
  DUAL_REV_LOCALS
  for (int64_t t = t1 - 1; t >= t0; --t) {
    uint32_t w0, w1, w2, w3;
    DUAL_REV_WORDS(t);
    const uint32_t aux = DUAL_REV_AUX(t);
    const int adj = DUAL_REV_ADJ(aux);
    const int32_t dst = (int32_t)(w0 & ((1u << DUAL_DST_BITS) - 1u));
    const int32_t r[3] = {(int32_t)w1, (int32_t)w2, (int32_t)w3};
    if (adj == DUAL_ADJ_NONE) continue;
    if (adj == DUAL_ADJ_SEED) {
      if (r[0] < nact) {
        double *DUAL_RESTRICT ar = DUAL_ADJ(r[0]);
        DUAL_REV_SEED(ar, r[1]);
      }
      continue;
    }
    if (dst >= nact) continue; /* a passive result has no adjoint */
    double *DUAL_RESTRICT ad = DUAL_ADJ(dst);
#if DUAL_REV_FOR
    double *DUAL_RESTRICT add = DUAL_ADJD(dst);
#endif
    if (adj == DUAL_ADJ_GRAD) {
      double *DUAL_RESTRICT gi = DUAL_GRAD(r[0]);
      DUAL_POINTS(p) { gi[p] += ad[p]; ad[p] = 0.0; }
#if DUAL_REV_FOR
      double *DUAL_RESTRICT gid = DUAL_GRADD(r[0]);
      DUAL_POINTS(p) { gid[p] += add[p]; add[p] = 0.0; }
#endif
      continue;
    }
    double *DUAL_RESTRICT gr = DUAL_SCRATCH(0);
    DUAL_POINTS(p) { gr[p] = ad[p]; ad[p] = 0.0; } /* the definition ends here (dst may be a) */
#if DUAL_REV_FOR
    double *DUAL_RESTRICT grd = DUAL_SCRATCH(6);
    DUAL_POINTS(p) { grd[p] = add[p]; add[p] = 0.0; }
#endif
    const int arity = DUAL_REV_ARITY(aux);
    const uint32_t row = DUAL_REV_ROW(aux);
    const int first = (int)(w0 >> DUAL_DST_BITS) == DUAL_OP_SELECT; /* the condition: no adjoint */
    for (int i = first; i < arity; ++i) {
      if (r[i] >= nact) continue;
      double *ai = DUAL_ADJ(r[i]); /* may be the same row for two operands: no restrict */
      if (adj == DUAL_ADJ_LIN) {
        const double *DUAL_RESTRICT di = DUAL_TAPE(row + (uint32_t)i);
        DUAL_POINTS(p) { ai[p] += DUAL_TM(di[p], gr[p]); }
      } else if (adj == DUAL_ADJ_CHOOSE) {
        const double *DUAL_RESTRICT di = DUAL_TAPE(row + (uint32_t)i);
        DUAL_POINTS(p) { ai[p] += di[p] != 0.0 ? gr[p] : 0.0; }
      } else if (adj == DUAL_ADJ_ADD || (adj == DUAL_ADJ_SUB && i == 0)) {
        DUAL_POINTS(p) { ai[p] += gr[p]; }
      } else { /* SUB's b, NEG */
        DUAL_POINTS(p) { ai[p] -= gr[p]; }
      }
#if DUAL_REV_FOR /* the same rule on g', plus d' g for LIN */
      double *aid = DUAL_ADJD(r[i]);
      if (adj == DUAL_ADJ_LIN) {
        const double *DUAL_RESTRICT di = DUAL_TAPE(row + (uint32_t)i);
        const double *DUAL_RESTRICT ddi = DUAL_TAPE(row + (uint32_t)(arity + i));
        DUAL_POINTS(p) { aid[p] += DUAL_TM(di[p], grd[p]) + DUAL_TT(ddi[p], gr[p]); }
      } else if (adj == DUAL_ADJ_CHOOSE) {
        const double *DUAL_RESTRICT di = DUAL_TAPE(row + (uint32_t)i);
        DUAL_POINTS(p) { aid[p] += di[p] != 0.0 ? grd[p] : 0.0; }
      } else if (adj == DUAL_ADJ_ADD || (adj == DUAL_ADJ_SUB && i == 0)) {
        DUAL_POINTS(p) { aid[p] += grd[p]; }
      } else {
        DUAL_POINTS(p) { aid[p] -= grd[p]; }
      }
#endif
    }
  }
}

/* One cotangent's sweeps over the whole program (segments seg[0..nseg], engine/rev_plan.h).
 * One segment: a forward sweep that tapes everything (skipped when `taped`: a previous
 * cotangent's tape is still there), then the adjoint sweep.  Several: a forward sweep that
 * snapshots the values at every segment's start (DUAL_REV_SNAPSHOT(k)), then each segment, the
 * last first, is recomputed from its snapshot (DUAL_REV_RESTORE(k)), taping it, and swept
 * backwards.  Either way each op computes the same numbers, so the results are the same bits. */
DUAL_REV_FN void DUAL_REV_NAME(dual_rev_sweeps)(DUAL_REV_CTX *R, int32_t nact, const int64_t *seg,
                                                int32_t nseg, int taped) {
  if (nseg == 1) {
    if (!taped) DUAL_REV_NAME(dual_rev_forward)(R, seg[0], seg[1]);
    DUAL_REV_NAME(dual_rev_adjoint)(R, nact, seg[0], seg[1]);
    return;
  }
  for (int32_t k = 0; k < nseg; ++k) {
    DUAL_REV_SNAPSHOT(k);
    DUAL_REV_NAME(dual_rev_forward)(R, seg[k], seg[k + 1]);
  }
  for (int32_t k = nseg - 1; k >= 0; --k) {
    if (k < nseg - 1) {
      DUAL_REV_RESTORE(k);
      DUAL_REV_NAME(dual_rev_forward)(R, seg[k], seg[k + 1]);
    }
    DUAL_REV_NAME(dual_rev_adjoint)(R, nact, seg[k], seg[k + 1]);
  }
}

#undef DUAL_W
#undef DUAL_ALL_PARTIALS
#undef DUAL_TAN
#undef DUAL_TSTEP
#undef DUAL_SECOND_PARTIALS
