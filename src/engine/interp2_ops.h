/*
 * interp2_ops.h — the second-order propagation of one instruction, written once for the CPU
 * block interpreter (cpu/interp2_block.h) and the GPU per-point interpreter: after the value
 * loop (engine/interp_ops.h, which in a second-order engine also stores the first partials of
 * every op in pa/pb/pc and its second partials in paa/pab/pbb) and the first-order lanes
 * (DUAL_PROPAGATE), each pair entry of the plan (engine/plan2.h) computes one component:
 *
 *   h = d_a h_a + d_b h_b + d_c h_c + d_aa (ta_k ta_l) + d_bb (tb_k tb_l) + d_ab (ta_k tb_l + tb_k ta_l)
 *
 * summed left to right from -0.0 with the absent terms omitted (as the first-order sum), every
 * product through DUAL_TM when a partial is not finite and every product of two tangents through
 * DUAL_TT (a zero tangent contributes nothing).
 * CHOOSE ops copy the chosen operand's component.  A component reads only its own pair's
 * operand components and its two lanes' tangents, so results do not depend on the chunking.
 * The result's storage never overlaps an operand's, except for in-place ADD/SUB, whose
 * components read only the same pair of the same slot.
 *
 * The includer defines DUAL_POINTS(p), DUAL_SLOT(s) (pointer to slot s's row, indexed by
 * point), DUAL_PAIR_ENTRY(i) (the plan's entry i, a dual_pair_entry value), and has in scope:
 * pa, pb, pc, paa, pab, pbb (partial rows), prop_, bad_ (a first or second partial is not
 * finite: the hook below ORs the second partials in) and e0_, e1_ (the instruction's entries).
 */
#ifndef DUAL_INTERP2_OPS_H
#define DUAL_INTERP2_OPS_H

/* DUAL_TT, the product of two tangents in a component's second-derivative terms, is
 * engine/tangent_terms.h's (shared with the compiled tier's second-order kernels). */
#include "engine/tangent_terms.h"

#define DUAL_PAIR_ROWS(E)                                                                        \
  double *hd_ = DUAL_SLOT((E).hd);                                                               \
  const double *ha_ = DUAL_SLOT((E).ha), *hb_ = DUAL_SLOT((E).hb), *hc_ = DUAL_SLOT((E).hc);     \
  const double *tak_ = DUAL_SLOT((E).ak), *tal_ = DUAL_SLOT((E).al);                             \
  const double *tbk_ = DUAL_SLOT((E).bk), *tbl_ = DUAL_SLOT((E).bl);                             \
  (void)ha_, (void)hb_, (void)hc_, (void)tak_, (void)tal_, (void)tbk_, (void)tbl_;

/* One component per entry, M = DUAL_TF (all partials finite) or DUAL_TM. */
#define DUAL_PAIRS_LIN(M)                                                                        \
  for (uint32_t e_ = e0_; e_ < e1_; ++e_) {                                                      \
    const dual_pair_entry E_ = DUAL_PAIR_ENTRY(e_);                                              \
    const uint32_t f_ = E_.flags;                                                                \
    DUAL_PAIR_ROWS(E_)                                                                           \
    DUAL_POINTS(p) {                                                                             \
      double acc_ = -0.0;                                                                        \
      if (f_ & DUAL_PE_HA) acc_ += M(pa[p], ha_[p]);                                             \
      if (f_ & DUAL_PE_HB) acc_ += M(pb[p], hb_[p]);                                             \
      if (f_ & DUAL_PE_HC) acc_ += M(pc[p], hc_[p]);                                             \
      if (f_ & DUAL_PE_AA) acc_ += M(paa[p], DUAL_TT(tak_[p], tal_[p]));                         \
      if (f_ & DUAL_PE_BB) acc_ += M(pbb[p], DUAL_TT(tbk_[p], tbl_[p]));                         \
      if (f_ & (DUAL_PE_ABKL | DUAL_PE_ABLK)) {                                                  \
        double x_ = -0.0;                                                                        \
        if (f_ & DUAL_PE_ABKL) x_ += DUAL_TT(tak_[p], tbl_[p]);                                  \
        if (f_ & DUAL_PE_ABLK) x_ += DUAL_TT(tbk_[p], tal_[p]);                                  \
        acc_ += M(pab[p], x_);                                                                   \
      }                                                                                          \
      hd_[p] = acc_;                                                                             \
    }                                                                                            \
  }

/* CHOOSE: the chosen operand's component (partial 1), never combined with the others. */
#define DUAL_PAIRS_CHOOSE()                                                                      \
  for (uint32_t e_ = e0_; e_ < e1_; ++e_) {                                                      \
    const dual_pair_entry E_ = DUAL_PAIR_ENTRY(e_);                                              \
    const uint32_t f_ = E_.flags;                                                                \
    DUAL_PAIR_ROWS(E_)                                                                           \
    DUAL_POINTS(p) {                                                                             \
      const double h_a = (f_ & DUAL_PE_HA) ? ha_[p] : 0.0;                                       \
      const double h_b = (f_ & DUAL_PE_HB) ? hb_[p] : 0.0;                                       \
      const double h_c = (f_ & DUAL_PE_HC) ? hc_[p] : 0.0;                                       \
      hd_[p] = pa[p] != 0.0 ? h_a : (pb[p] != 0.0 ? h_b : h_c);                                  \
    }                                                                                            \
  }

/* Only ops that compute (prop_ set by their case); an OUT's entries are the engine's to store. */
#define DUAL_PAIRS_PROPAGATE()                                                                   \
  if (prop_ != DUAL_PROP_NONE && e1_ > e0_) {                                                    \
    if (prop_ == DUAL_PROP_CHOOSE) {                                                             \
      DUAL_PAIRS_CHOOSE()                                                                        \
    } else if (bad_) {                                                                   \
      DUAL_PAIRS_LIN(DUAL_TM)                                                                    \
    } else {                                                                                     \
      DUAL_PAIRS_LIN(DUAL_TF)                                                                    \
    }                                                                                            \
  }

/* The second-order hook of interp_ops.h's value loop: the second partials of every op that
 * carries tangents, into the rows paa/pab/pbb; a non-finite one sets bad_ (the loop's reduction
 * variable), which only selects the guarded products and never changes a result. */
#define DUAL_SECOND_PARTIALS(name, partials, p, a, b, c, r, d)                                   \
  if ((partials) >= 0) {                                                                         \
    double dd_[3];                                                                               \
    dual_rule2_##name(a, b, c, r, d, dd_);                                                       \
    paa[p] = dd_[0];                                                                             \
    pab[p] = dd_[1];                                                                             \
    pbb[p] = dd_[2];                                                                             \
    bad_ |= DUAL_NONFINITE(dd_[0]) | DUAL_NONFINITE(dd_[1]) | DUAL_NONFINITE(dd_[2]);           \
  }

#endif /* DUAL_INTERP2_OPS_H */
