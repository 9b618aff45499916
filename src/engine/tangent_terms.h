/*
 * tangent_terms.h — the arithmetic of one tangent lane, written once for the interpreters
 * (engine/interp_ops.h, CPU and GPU) and the compiled tier's generated kernels (jit/).  A
 * result's lane is -0.0 plus the operands' terms, left to right; every engine and the generator
 * build that sum from these macros, so a lane rounds identically everywhere.  Valid C11 and CUDA,
 * and NVRTC (the generated kernels include it).
 */
#ifndef DUAL_TANGENT_TERMS_H
#define DUAL_TANGENT_TERMS_H

#include "dual/portable.h" /* fabs, DBL_MAX */

/* A partial or tangent that is NaN or infinite.  On the GPU the same test on the exponent bits
 * (integer instructions instead of a double-precision compare, which shares the FP64 pipe with
 * the arithmetic). */
#if defined(__CUDA_ARCH__)
#define DUAL_NONFINITE(d) ((__double2hiint(d) & 0x7ff00000) == 0x7ff00000)
#else
#define DUAL_NONFINITE(d) (!(fabs(d) <= DBL_MAX))
#endif

/* A term whose tangent is exactly zero contributes nothing, even when its partial is infinite or
 * NaN: d/da pow(a, b) at a < 0 stays finite although d/db is NaN, and 1/x + y keeps dy = 1 at
 * x = 0.  DUAL_TM is that guarded product; it equals the plain DUAL_TF whenever d is finite, so
 * an engine uses DUAL_TF unless some partial of the op at the point is not finite, and the
 * choice never changes a result. */
#define DUAL_TM(d, t) (((t) == 0.0 && DUAL_NONFINITE(d)) ? 0.0 : (d) * (t))
#define DUAL_TF(d, t) ((d) * (t))

/* CHOOSE ops (min, max, select): the tangent of the operand whose partial is nonzero (qa, then
 * qb, else c), never combined with the others (NaN-safe); an operand without the lane gives 0. */
#define DUAL_CHOOSE_T(qa, qb, ta, tb, tc) ((qa) != 0.0 ? (ta) : ((qb) != 0.0 ? (tb) : (tc)))

/* One lane of a result from its operands' lanes, per prop class of ops.def: `ua`, `ub`, `uc`
 * (literal 0 or 1) say which operands have the lane; q* are the partials, t* the operands'
 * tangents in the lane (any expression where the operand lacks it: it is not evaluated).  The
 * interpreters expand these over their rows (engine/interp_ops.h) and the compiled tier's
 * generator writes one call per lane with the operands' locals (jit/jit_source.c), so a lane's
 * arithmetic is written once.
 * LIN and MUL: -0.0 plus the present operands' terms M(q, t) left to right (M = DUAL_TF, or
 * DUAL_TM where a partial is not finite); an absent operand adds nothing (not even + 0.0, which
 * would cost an add and turn a -0 tangent into +0), and -0.0 is the exact additive identity. */
#define DUAL_TERM_0(M, q, t)
#define DUAL_TERM_1(M, q, t) +M(q, t)
#define DUAL_LANE_LIN(M, ua, ub, uc, qa, qb, qc, ta, tb, tc)                                    \
  (-0.0 DUAL_TERM_##ua(M, qa, ta) DUAL_TERM_##ub(M, qb, tb) DUAL_TERM_##uc(M, qc, tc))
/* ADD/SUB/NEG: the partials are +-1, so these are exactly the LIN formula without multiplies. */
#define DUAL_LANE_ADD(ua, ub, ta, tb) ((ua) && (ub) ? (ta) + (tb) : ((ua) ? (ta) : (tb)))
#define DUAL_LANE_SUB(ua, ub, ta, tb) ((ua) && (ub) ? (ta) - (tb) : ((ua) ? (ta) : -(tb)))
#define DUAL_LANE_NEG(ta) (-(ta))
/* CHOOSE: the chosen operand's tangent, 0 for an operand without the lane. */
#define DUAL_LANE_CHOOSE(ua, ub, uc, qa, qb, ta, tb, tc)                                         \
  DUAL_CHOOSE_T(qa, qb, (ua) ? (ta) : 0.0, (ub) ? (tb) : 0.0, (uc) ? (tc) : 0.0)

/* The product of two tangents in a second-order component's terms (engine/interp2_ops.h, the
 * second-order generated kernels): an exactly zero tangent contributes nothing, even against an
 * infinite or NaN one (the rule of the first-order sum), so a structurally absent lane and a
 * lane that is numerically 0 give the same result.  Written as a test of the product (NaN only
 * from 0 x inf or a NaN factor), one compare in the common case. */
#define DUAL_TT(s, t)                                                                            \
  ((s) * (t) == (s) * (t) ? (s) * (t) : (((s) == 0.0 || (t) == 0.0) ? 0.0 : (s) * (t)))
/* DUAL_TT without its guard: the same bits wherever the product is not NaN (the compiled
 * reverse-mode kernels' fast copy, jit/jit_source_rev.c, which reruns a warp guarded when a NaN
 * could have reached a result). */
#define DUAL_TT_PLAIN(s, t) ((s) * (t))

#endif /* DUAL_TANGENT_TERMS_H */
