/*
 * interp2_point.h — the GPU interpreter of one second-order pass (engine/pass2.h) for one point:
 * returns the point's status flags.  Valid C11 and CUDA: the kernel (interp2_kernel.cu) calls it
 * from each thread, and a CPU test can run the very same code point by point.  The op cases and
 * first-order lanes come from engine/interp_ops.h, the pair components from
 * engine/interp2_ops.h, as in the CPU engine (cpu/interp2_block.h); only the storage differs:
 * the point's values at V[r * S], its slots (lanes, then pairs, engine/plan2.h) at T[s * S], S
 * the number of points sharing the storage.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bytecode.h"
#include "dual/rules.h"
#include "dualbatch.h"
#include "engine/interp2_ops.h"
#include "kernels/gpu_kernel.h"
#include "kernels/point_loads.h" /* LDP, LDK, flag tests */

#define DUAL_W 1
#define DUAL_ALL_PARTIALS 1
#define DUAL_POINTS(p) for (int p = 0; p < 1; ++p)
#define DUAL_POINTS_OR(p, v) DUAL_POINTS(p)
/* 32-bit index arithmetic: a point's register file spans fewer than 2^31 doubles (gpu_run2.c) */
#define DUAL_VAL(r) (V + (uint32_t)(r) * S)
#define DUAL_DRAW_SAMPLE 0 /* draws: sample 0 (no sampling in second order) */
#define DUAL_POINT_DRAWS 1
#define DUAL_SLOT(s) (T + (uint32_t)(s) * S)
#define DUAL_TANP(r, o, m, k) DUAL_SLOT((uint32_t)(o) + (uint32_t)DUAL_POPC((m) & ((1u << (k)) - 1u)))
#define DUAL_TSTEP S
#define DUAL_INPLACE (dst == ra && od == oa)
#define DUAL_PAIR_ENTRY(i) (A->ents[i])

/* x[i] of the point, then the seeds of the lanes the input owns: 1, or v[i] in the HVP lane. */
#define DUAL_ENGINE_LDX()                                                                          \
  {                                                                                                \
    const double v_ = A->x[pt * A->x_ps + (int64_t)ra * A->x_es];                                  \
    DUAL_VAL(dst)[0] = v_;                                                                         \
    st[0] |= DUAL_PT_NONFINITE(v_) ? DUAL_PT_BAD_INPUT : 0;                                        \
    for (uint32_t m_ = ma; m_ != 0u; m_ &= m_ - 1u) {                                              \
      const int k_ = DUAL_CTZ(m_);                                                                 \
      double s_ = 1.0;                                                                             \
      if (k_ == pass->vlane) {                                                                     \
        s_ = A->v[pt * A->v_ps + (int64_t)ra * A->v_es];                                           \
        st[0] |= DUAL_PT_NONFINITE(s_) ? DUAL_PT_BAD_INPUT : 0;                                    \
      }                                                                                            \
      DUAL_TANP(dst, od, md, k_)[0] = s_;                                                          \
    }                                                                                              \
  }


/* Output rb from register ra: the value (first pass), this pass's Jacobian columns and its
 * components (zeros where the plan proved them zero; mirrored for the full layout). */
#define DUAL_ENGINE_OUT()                                                                          \
  {                                                                                                \
    if (A->first_pass) {                                                                           \
      const double v_ = DUAL_VAL(ra)[0];                                                           \
      st[0] |= DUAL_PT_FLAGS(v_);                                                                  \
      if (A->y != NULL) A->y[pt * A->y_ps + (int64_t)rb * A->y_es] = v_;                           \
    }                                                                                              \
    for (int g_ = 0; g_ < pass->ngrad; ++g_) {                                                     \
      const int k_ = pass->grad_lane[g_];                                                          \
      const double t_ = ((ma >> k_) & 1u) ? DUAL_TANP(ra, oa, ma, k_)[0] : 0.0;                    \
      st[0] |= DUAL_PT_FLAGS(t_);                                                                  \
      if (A->d != NULL)                                                                            \
        A->d[pt * A->d_ps + (int64_t)rb * A->d_rs + (int64_t)pass->grad_col[g_] * A->d_cs] = t_;   \
    }                                                                                              \
    double *hs_ = pass->npairs > 0 ? A->h + pt * A->h_ps + (int64_t)rb * A->h_rs : NULL;           \
    for (int q_ = 0; q_ < pass->npairs; ++q_) {                                                    \
      double h_ = 0.0;                                                                             \
      if (e1_ > e0_) {                                                                             \
        const dual_pair_entry E_ = A->ents[e0_ + (uint32_t)q_];                                    \
        if (E_.flags & DUAL_PE_HA) h_ = DUAL_SLOT(E_.ha)[0];                                       \
      }                                                                                            \
      st[0] |= DUAL_PT_FLAGS(h_);                                                                  \
      hs_[pass->out0[q_] * A->h_es] = h_;                                                          \
      if (pass->out1[q_] >= 0) hs_[pass->out1[q_] * A->h_es] = h_;                                 \
    }                                                                                              \
  }


DUAL_POINT_FN int dual_point2_run(const dual_gpu_args2 *A, double *V, double *T, uint32_t S,
                                   int64_t pt) {
  const dual_pass2 *pass = A->pass;
  int st[1] = {0};
  for (int64_t t = 0; t < A->n_instr; ++t) {
    const dual_plan_instr *q = &A->recs[t];
    const uint32_t op_dst = q->op_dst, ra = q->a, rb = q->b, rc = q->c;
    const uint32_t ma = q->ma, mb = q->mb, mc = q->mc, md = q->md;
    const uint32_t oa = q->oa, ob = q->ob, oc = q->oc, od = q->od;
    const uint32_t e0_ = A->first[t], e1_ = A->first[t + 1];
    const int op = (int)(op_dst >> DUAL_DST_BITS);
    const uint32_t dst = op_dst & ((1u << DUAL_DST_BITS) - 1u);
    double pa[1] = {0.0}, pb[1] = {0.0}, pc[1] = {0.0}, paa[1] = {0.0}, pab[1] = {0.0}, pbb[1] = {0.0};
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    (void)rc, (void)mb, (void)mc, (void)ob, (void)oc;
    switch (op) {
#include "engine/interp_ops.h"
    default:
      break;
    }
    DUAL_PROPAGATE()
    DUAL_PAIRS_PROPAGATE()
  }
  return st[0];
}
