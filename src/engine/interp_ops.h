/*
 * interp_ops.h — the body of the bytecode interpreter for every computing op (not loads/stores),
 * written once and included by the CPU block interpreter (src/cpu/interp_block.h) and the CUDA
 * kernel.  Expanded inside `switch (op) { ... }` from ops.def, so every op of the table gets a
 * case and no list is kept by hand.
 *
 * The including file defines:
 *   DUAL_W               tangent width (0 = values only)
 *   DUAL_POINTS(p)       loop header over the points this instance handles (CPU: the block;
 *                        GPU: the thread's own point)
 *   DUAL_POINTS_OR(p, v) the same loop, OR-reducing the int v over the points
 *   DUAL_VAL(r)          pointer to register r's values, indexed by point
 *   DUAL_TAN(r, k)       pointer to register r's tangent k, indexed by point (r < nact), or
 *   DUAL_TANP(r, o, m, k) the same for an operand whose lanes (mask m) are stored packed from
 *                        slot o (the GPU's layout; defaults to DUAL_TAN(r, k))
 *   DUAL_TSTEP           distance between consecutive lanes' rows of one operand
 *   DUAL_INPLACE         (optional) whether dst shares a's tangent storage; default dst == ra
 *   DUAL_LANE_FIRST(k0), DUAL_LANE_STEP (optional) the lanes of a run this instance computes
 *   DUAL_LANE_RUN(expr)  (optional) the loop over those lanes' rows
 *   and the variables: dst, ra, rb, rc (registers), ma, mb, mc (the operands' lane masks of
 *   this pass, lanes.h), pa/pb/pc (partial scratch rows), st (per-point flag words), and for
 *   DUAL_TANP the slot offsets od, oa, ob, oc.
 * Every op runs two loops: values and partials through its rule (rules.h), then, if the result
 * carries tangents, the propagation of its ops.def "prop" class (DUAL_PROPAGATE()).  The
 * includer declares `int prop_ = DUAL_PROP_NONE, bad_ = 0;` before the switch and runs
 * DUAL_PROPAGATE() after it.
 */
#ifndef DUAL_W
#error "define DUAL_W before including interp_ops.h"
#endif

#include "engine/tangent_terms.h" /* DUAL_NONFINITE, DUAL_TM, DUAL_TF, the lane formulas */
#include "engine/value_step.h"    /* DUAL_VALUE_STEP */
/* The second-order engines (engine/interp2_ops.h) and the reverse sweep (cpu/engine_rev.c) set
 * DUAL_ALL_PARTIALS to 1: every op that carries tangents then stores its first partials in the
 * rows pa/pb/pc, and a second-order engine its second ones through DUAL_SECOND_PARTIALS. */
#ifndef DUAL_ALL_PARTIALS
#define DUAL_ALL_PARTIALS 0
#endif
#ifndef DUAL_SECOND_PARTIALS
#define DUAL_SECOND_PARTIALS(name, partials, p, a, b, c, r, d)
#endif
/* The value loop also ORs into bad_ whether any partial is not finite (DUAL_PROP_LIN) when
 * `partials` >= 1, and stores the partial rows when `partials` == 2 (ops whose propagation reads
 * them: LIN, CHOOSE); `partials` is 0 for ADD/SUB/NEG and -1 for ops without tangents. */
#define DUAL_VALUE_LOOP(name, arity, flags, partials)                                            \
  {                                                                                              \
    const double *va_ = DUAL_VAL(ra); /* vr_ == va_ for in-place ADD/SUB: no restrict */         \
    const double *vb_ = DUAL_VAL((arity) > 1 ? rb : ra);                                         \
    const double *vc_ = DUAL_VAL((arity) > 2 ? rc : ra);                                         \
    double *vr_ = DUAL_VAL(dst);                                                                 \
    DUAL_POINTS_OR(p, bad_) {                                                                    \
      double d_[3], r_;                                                                          \
      const double a_ = va_[p], b_ = (arity) > 1 ? vb_[p] : 0.0, c_ = (arity) > 2 ? vc_[p] : 0.0; \
      DUAL_VALUE_STEP(name, flags, a_, b_, c_, r_, d_, st[p])                                    \
      vr_[p] = r_;                                                                               \
      DUAL_SECOND_PARTIALS(name, partials, p, a_, b_, c_, r_, d_)                                \
      if (DUAL_W > 0 && ((partials) == 2 || (DUAL_ALL_PARTIALS && (partials) >= 0))) {           \
        pa[p] = d_[0];                                                                           \
        pb[p] = d_[1];                                                                           \
        pc[p] = d_[2];                                                                           \
      }                                                                                          \
      if (DUAL_W > 0 && ((partials) >= 1 || (DUAL_ALL_PARTIALS && (partials) >= 0)))             \
        bad_ |= DUAL_NONFINITE(d_[0]) | DUAL_NONFINITE(d_[1]) | DUAL_NONFINITE(d_[2]);           \
    }                                                                                            \
  }

/* Tangent propagation over the lanes of lanes.h: ma, mb, mc are the lane masks of the operands
 * (0 for passive or unused ones).  The lanes of a mask are walked in runs of consecutive bits, so
 * a dense mask is one counted loop.  `ua`, `ub`, `uc` (literal 0/1) say which operands have the
 * lanes of the run; `ta`, `tb`, `tc` are their tangent rows, only formed when used.  Row pointers
 * come from DUAL_TANP(register, slot offset, lane mask, lane) at the start of a run and advance
 * by DUAL_TSTEP per lane: the CPU keeps every lane of a register (offset and mask unused), the
 * GPU keeps only the lanes of the mask, packed from the offset (engine/plan.h). */
#ifndef DUAL_TANP
#define DUAL_TANP(r, o, m, k) DUAL_TAN(r, k)
#endif
/* An engine that splits a pass's lanes over several threads walks only its own lanes of a run:
 * the first one (relative to the run's start k0) and the step.  Default: every lane. */
#ifndef DUAL_LANE_FIRST
#define DUAL_LANE_FIRST(k0) 0
#define DUAL_LANE_STEP 1
#endif
#define DUAL_LANE_LOOP(mask, ua, ub, uc, expr)                                                   \
  for (uint32_t m_ = (mask); m_ != 0u;) {                                                        \
    const int k0_ = DUAL_CTZ(m_);                                                                \
    const uint32_t run_ = ~(m_ >> k0_);                                                          \
    const int k1_ = run_ == 0u ? 32 : k0_ + DUAL_CTZ(run_);                                      \
    m_ = k1_ >= 32 ? 0u : (m_ & (0xffffffffu << k1_));                                           \
    double *tr0_ = DUAL_TANP(dst, od, md_, k0_); /* == ta0_ in place: no restrict */             \
    const double *ta0_ = (ua) ? DUAL_TANP(ra, oa, ma, k0_) : tr0_;                               \
    const double *tb0_ = (ub) ? DUAL_TANP(rb, ob, mb, k0_) : tr0_;                               \
    const double *tc0_ = (uc) ? DUAL_TANP(rc, oc, mc, k0_) : tr0_;                               \
    DUAL_LANE_RUN(expr)                                                                          \
  }
/* The rows of one run, lanes j = first, first + step, ... below k1_ - k0_: tr = expr.  The GPU
 * advances the row pointers by increments (its compiler kept a 64-bit multiply per row); the
 * CPU indexes them (gcc vectorizes the point loop better that way: kin 7% faster). */
#ifndef DUAL_LANE_RUN
#define DUAL_LANE_RUN(expr)                                                                      \
  for (int j_ = DUAL_LANE_FIRST(k0_); j_ < k1_ - k0_; j_ += DUAL_LANE_STEP) {                    \
    double *tr = tr0_ + (size_t)j_ * (size_t)(DUAL_TSTEP);                                       \
    const double *ta = ta0_ + (size_t)j_ * (size_t)(DUAL_TSTEP);                                 \
    const double *tb = tb0_ + (size_t)j_ * (size_t)(DUAL_TSTEP);                                 \
    const double *tc = tc0_ + (size_t)j_ * (size_t)(DUAL_TSTEP);                                 \
    (void)ta, (void)tb, (void)tc;                                                                \
    DUAL_POINTS(p) { tr[p] = (expr); }                                                           \
  }
#endif

/* Every combination of operands present on a lane; E(ua, ub, uc) is the tangent expression.
 * keep_ masks out the lanes only `a` has when dst shares a's tangent storage (in-place ADD/SUB,
 * DUAL_INPLACE: they stay as they are, exactly what E(1, 0, 0) = ta would write). */
#ifndef DUAL_INPLACE
#define DUAL_INPLACE (dst == ra)
#endif
#define DUAL_LANE_COMBOS(E)                                                                      \
  DUAL_LANE_LOOP(ma & ~mb & ~mc & keep_, 1, 0, 0, E(1, 0, 0))                                    \
  DUAL_LANE_LOOP(~ma & mb & ~mc, 0, 1, 0, E(0, 1, 0))                                            \
  DUAL_LANE_LOOP(ma & mb & ~mc, 1, 1, 0, E(1, 1, 0))                                             \
  DUAL_LANE_LOOP(~ma & ~mb & mc, 0, 0, 1, E(0, 0, 1))                                            \
  DUAL_LANE_LOOP(ma & ~mb & mc, 1, 0, 1, E(1, 0, 1))                                             \
  DUAL_LANE_LOOP(~ma & mb & mc, 0, 1, 1, E(0, 1, 1))                                             \
  DUAL_LANE_LOOP(ma & mb & mc, 1, 1, 1, E(1, 1, 1))

/* Structurally zero lanes are skipped above; numerically zero tangents are caught by the guarded
 * product DUAL_TM (tangent_terms.h): the plain loops run unless some partial of this op in the
 * block (CPU) or at this point (GPU) is not finite. */
/* The lane formulas are tangent_terms.h's, over the rows of the run at point p. */
#define DUAL_LIN_TM(ua, ub, uc) DUAL_LANE_LIN(DUAL_TM, ua, ub, uc, qa[p], qb[p], qc[p], ta[p], tb[p], tc[p])
#define DUAL_LIN_TF(ua, ub, uc) DUAL_LANE_LIN(DUAL_TF, ua, ub, uc, qa[p], qb[p], qc[p], ta[p], tb[p], tc[p])
#define DUAL_PROP_LIN()                                                                          \
  {                                                                                              \
    if (bad_) {                                                                                  \
      DUAL_LANE_COMBOS(DUAL_LIN_TM)                                                              \
    } else {                                                                                     \
      DUAL_LANE_COMBOS(DUAL_LIN_TF)                                                              \
    }                                                                                            \
  }
#define DUAL_ADD_E(ua, ub, uc) DUAL_LANE_ADD(ua, ub, ta[p], tb[p])
#define DUAL_SUB_E(ua, ub, uc) DUAL_LANE_SUB(ua, ub, ta[p], tb[p])
#define DUAL_PROP_ADD() DUAL_LANE_COMBOS(DUAL_ADD_E)
#define DUAL_PROP_SUB() DUAL_LANE_COMBOS(DUAL_SUB_E)
#define DUAL_NEG_E(ua, ub, uc) DUAL_LANE_NEG(ta[p])
#define DUAL_PROP_NEG() DUAL_LANE_COMBOS(DUAL_NEG_E)
/* CHOOSE: copy the chosen operand's tangent; the unchosen one is never combined (NaN-safe). */
#define DUAL_CHOOSE_E(ua, ub, uc) DUAL_LANE_CHOOSE(ua, ub, uc, qa[p], qb[p], ta[p], tb[p], tc[p])
#define DUAL_PROP_CHOOSE() DUAL_LANE_COMBOS(DUAL_CHOOSE_E)

/* One case per op of the table: the value loop of its rule, and its prop class in `prop_` for
 * DUAL_PROPAGATE, which the includer runs after the switch — the tangent loops exist once per
 * prop class, not once per op (smaller code, and a compile time of seconds instead of minutes).
 * Loads and stores are the engine's (DUAL_ENGINE_LDX(), ...). */
/* An engine may copy the partial rows into locals here (the GPU: one point, registers). */
#ifndef DUAL_PARTIALS_LOCAL
#define DUAL_PARTIALS_LOCAL()
#endif
#define DUAL_PROPAGATE()                                                                         \
  if (DUAL_W > 0 && (ma | mb | mc) != 0u) {                                                      \
    const double *qa = pa, *qb = pb, *qc = pc; /* partial rows: scratch, or operand values */    \
    const uint32_t keep_ = (DUAL_INPLACE) ? 0u : 0xffffffffu;                                    \
    const uint32_t md_ = ma | mb | mc; /* the result's lanes */                                  \
    (void)md_;                                                                                   \
    if (prop_ == DUAL_PROP_MUL) qa = DUAL_VAL(rb), qb = DUAL_VAL(ra);                            \
    DUAL_PARTIALS_LOCAL()                                                                        \
    switch (prop_) {                                                                             \
    case DUAL_PROP_LIN:                                                                          \
    case DUAL_PROP_MUL: DUAL_PROP_LIN() break;                                                   \
    case DUAL_PROP_ADD: DUAL_PROP_ADD() break;                                                   \
    case DUAL_PROP_SUB: DUAL_PROP_SUB() break;                                                   \
    case DUAL_PROP_NEG: DUAL_PROP_NEG() break;                                                   \
    case DUAL_PROP_CHOOSE: DUAL_PROP_CHOOSE() break;                                             \
    default: break;                                                                              \
    }                                                                                            \
  }
#define DUAL_COMPUTE(name, arity, flags, prop)                                                   \
  DUAL_VALUE_LOOP(name, arity, flags,                                                            \
                  (DUAL_PROP_##prop == DUAL_PROP_LIN || DUAL_PROP_##prop == DUAL_PROP_CHOOSE)    \
                      ? 2 : (DUAL_PROP_##prop == DUAL_PROP_MUL))                                 \
  prop_ = DUAL_PROP_##prop;
#define DUAL_CASE_LOAD(name, arity, flags) DUAL_ENGINE_##name();
#define DUAL_CASE_OUT(name, arity, flags) DUAL_ENGINE_OUT();
#define DUAL_CASE_LIN(name, arity, flags) DUAL_COMPUTE(name, arity, flags, LIN)
#define DUAL_CASE_MUL(name, arity, flags) DUAL_COMPUTE(name, arity, flags, MUL)
#define DUAL_CASE_ADD(name, arity, flags) DUAL_COMPUTE(name, arity, flags, ADD)
#define DUAL_CASE_SUB(name, arity, flags) DUAL_COMPUTE(name, arity, flags, SUB)
#define DUAL_CASE_NEG(name, arity, flags) DUAL_COMPUTE(name, arity, flags, NEG)
#define DUAL_CASE_CHOOSE(name, arity, flags) DUAL_COMPUTE(name, arity, flags, CHOOSE)
#define DUAL_CASE_NONE(name, arity, flags) DUAL_VALUE_LOOP(name, arity, flags, -1)

#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  case DUAL_OP_##name: {                                                                         \
    DUAL_CASE_##prop(name, arity, flags)                                                         \
  } break;
#include "../dual/ops.def"
#undef OP
