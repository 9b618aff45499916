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
 *   DUAL_TAN(r, k)       pointer to register r's tangent k, indexed by point (r < nact)
 *   and the variables: dst, ra, rb, rc (registers), nact, pa/pb/pc (partial scratch rows),
 *   st (per-point flag words).
 * Every op runs two loops: values and partials through its rule (rules.h), then, if the result
 * carries tangents, the propagation of its ops.def "prop" class.
 */
#ifndef DUAL_W
#error "define DUAL_W before including interp_ops.h"
#endif

#define DUAL_VALUE_LOOP(name, arity, flags)                                                      \
  {                                                                                              \
    const double *DUAL_RESTRICT va_ = DUAL_VAL(ra);                                              \
    const double *DUAL_RESTRICT vb_ = DUAL_VAL((arity) > 1 ? rb : ra);                           \
    const double *DUAL_RESTRICT vc_ = DUAL_VAL((arity) > 2 ? rc : ra);                           \
    double *DUAL_RESTRICT vr_ = DUAL_VAL(dst);                                                   \
    DUAL_POINTS(p) {                                                                             \
      double d_[3];                                                                              \
      int f_ = 0;                                                                                \
      vr_[p] = dual_rule_##name(va_[p], (arity) > 1 ? vb_[p] : 0.0, (arity) > 2 ? vc_[p] : 0.0, \
                                d_, &f_);                                                        \
      if (DUAL_W > 0) {                                                                          \
        pa[p] = d_[0];                                                                           \
        pb[p] = d_[1];                                                                           \
        pc[p] = d_[2];                                                                           \
      }                                                                                          \
      if ((flags)&F_CHECK) st[p] |= f_;                                                          \
    }                                                                                            \
  }

/* Tangent propagation.  `ta`, `tb`, `tc` are the operands' tangent rows of direction k, or NULL
 * for passive operands (exact zero tangent, never read). */
#define DUAL_TAN_LOOP(expr)                                                                      \
  for (int k = 0; k < DUAL_W; ++k) {                                                             \
    double *DUAL_RESTRICT tr = DUAL_TAN(dst, k);                                                 \
    const double *DUAL_RESTRICT ta = act_a ? DUAL_TAN(ra, k) : tr;                               \
    const double *DUAL_RESTRICT tb = act_b ? DUAL_TAN(rb, k) : tr;                               \
    const double *DUAL_RESTRICT tc = act_c ? DUAL_TAN(rc, k) : tr;                               \
    (void)ta, (void)tb, (void)tc;                                                                \
    DUAL_POINTS(p) { tr[p] = (expr); }                                                           \
  }

/* One loop per combination of active operands, so no loop tests activity per point.  A term
 * whose tangent is exactly zero contributes nothing, even when its partial is infinite or NaN:
 * d/da pow(a, b) at a < 0 stays finite although d/db is NaN, and 1/x + y keeps dy = 1 at x = 0.
 * The guarded product DUAL_TM equals the plain d*t whenever d is finite, so the plain loops run
 * unless some partial of this op in the block (CPU) or at this point (GPU) is not finite; the
 * choice cannot change any point's result. */
#define DUAL_NONFINITE(d) (!(fabs(d) <= DBL_MAX))
#define DUAL_TM(d, t) (((t) == 0.0 && DUAL_NONFINITE(d)) ? 0.0 : (d) * (t))
#define DUAL_TF(d, t) ((d) * (t))
#define DUAL_LIN_CASES(M)                                                                        \
  switch (act_a | (act_b << 1) | (act_c << 2)) {                                                 \
  case 1: DUAL_TAN_LOOP(M(pa[p], ta[p])) break;                                                  \
  case 2: DUAL_TAN_LOOP(M(pb[p], tb[p])) break;                                                  \
  case 3: DUAL_TAN_LOOP(M(pa[p], ta[p]) + M(pb[p], tb[p])) break;                                \
  case 4: DUAL_TAN_LOOP(M(pc[p], tc[p])) break;                                                  \
  case 5: DUAL_TAN_LOOP(M(pa[p], ta[p]) + M(pc[p], tc[p])) break;                                \
  case 6: DUAL_TAN_LOOP(M(pb[p], tb[p]) + M(pc[p], tc[p])) break;                                \
  default: DUAL_TAN_LOOP(M(pa[p], ta[p]) + M(pb[p], tb[p]) + M(pc[p], tc[p])) break;             \
  }
#define DUAL_PROP_LIN()                                                                          \
  {                                                                                              \
    int bad_ = 0;                                                                                \
    DUAL_POINTS_OR(p, bad_) {                                                                    \
      bad_ |= DUAL_NONFINITE(pa[p]) | DUAL_NONFINITE(pb[p]) | DUAL_NONFINITE(pc[p]);             \
    }                                                                                            \
    if (bad_) {                                                                                  \
      DUAL_LIN_CASES(DUAL_TM)                                                                    \
    } else {                                                                                     \
      DUAL_LIN_CASES(DUAL_TF)                                                                    \
    }                                                                                            \
  }
/* ADD/SUB/NEG: the partials are +-1, so these are exactly the LIN formula without multiplies. */
#define DUAL_PROP_ADD()                                                                          \
  switch (act_a | (act_b << 1)) {                                                                \
  case 1: DUAL_TAN_LOOP(ta[p]) break;                                                            \
  case 2: DUAL_TAN_LOOP(tb[p]) break;                                                            \
  default: DUAL_TAN_LOOP(ta[p] + tb[p]) break;                                                   \
  }
#define DUAL_PROP_SUB()                                                                          \
  switch (act_a | (act_b << 1)) {                                                                \
  case 1: DUAL_TAN_LOOP(ta[p]) break;                                                            \
  case 2: DUAL_TAN_LOOP(-tb[p]) break;                                                           \
  default: DUAL_TAN_LOOP(ta[p] - tb[p]) break;                                                   \
  }
#define DUAL_PROP_NEG() DUAL_TAN_LOOP(-ta[p])
/* CHOOSE: copy the chosen operand's tangent; the unchosen one is never combined (NaN-safe). */
#define DUAL_PROP_CHOOSE()                                                                       \
  DUAL_TAN_LOOP(pa[p] != 0.0 ? (act_a ? ta[p] : 0.0)                                             \
                             : (pb[p] != 0.0 ? (act_b ? tb[p] : 0.0) : (act_c ? tc[p] : 0.0)))

/* One case per op of the table: loads and stores are the engine's (DUAL_ENGINE_LDX(), ...). */
#define DUAL_COMPUTE(name, arity, flags, prop)                                                   \
  DUAL_VALUE_LOOP(name, arity, flags)                                                            \
  if (DUAL_W > 0 && dst < nact) {                                                                \
    const int act_a = ra < nact, act_b = (arity) > 1 && rb < nact,                               \
              act_c = (arity) > 2 && rc < nact;                                                  \
    (void)act_a, (void)act_b, (void)act_c;                                                       \
    DUAL_PROP_##prop()                                                                           \
  }
#define DUAL_CASE_LOAD(name, arity, flags) DUAL_ENGINE_##name();
#define DUAL_CASE_OUT(name, arity, flags) DUAL_ENGINE_OUT();
#define DUAL_CASE_LIN(name, arity, flags) DUAL_COMPUTE(name, arity, flags, LIN)
#define DUAL_CASE_ADD(name, arity, flags) DUAL_COMPUTE(name, arity, flags, ADD)
#define DUAL_CASE_SUB(name, arity, flags) DUAL_COMPUTE(name, arity, flags, SUB)
#define DUAL_CASE_NEG(name, arity, flags) DUAL_COMPUTE(name, arity, flags, NEG)
#define DUAL_CASE_CHOOSE(name, arity, flags) DUAL_COMPUTE(name, arity, flags, CHOOSE)
#define DUAL_CASE_NONE(name, arity, flags) DUAL_VALUE_LOOP(name, arity, flags)

#define OP(name, spelling, arity, prop, flags, synopsis)                                         \
  case DUAL_OP_##name: {                                                                         \
    DUAL_CASE_##prop(name, arity, flags)                                                         \
  } break;
#include "../dual/ops.def"
#undef OP
