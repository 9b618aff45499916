/*
 * tangent_terms.h — the arithmetic of one tangent lane, written once for the interpreters
 * (engine/interp_ops.h, CPU and GPU) and the compiled tier's generated kernels (jit/).  A
 * result's lane is -0.0 plus the operands' terms, left to right; every engine and the generator
 * build that sum from these macros, so a lane rounds identically everywhere.  Valid C11 and CUDA.
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

#endif /* DUAL_TANGENT_TERMS_H */
