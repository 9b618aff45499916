/*
 * interp_point.h — the GPU interpreter for one point: runs every pass of a plan (engine/plan.h)
 * for point `pt` and returns its status flags.  Valid C11 and CUDA: the kernel
 * (interp_kernel.cu) calls it from each thread; tests/test_plan.c runs the very same code on the
 * CPU, one point at a time, and checks it bitwise against the CPU engine, so the packed tangent
 * layout and the loads/stores below are tested on machines without a GPU.
 *
 * Include with DUAL_W defined (0: values only, 1: with tangents); defines
 * dual_point_run_w<DUAL_W>, for programs without random draws; with DUAL_DRAWS 1
 * dual_point_run_w<DUAL_W>_dr, which evaluates them, and with DUAL_SG 1 dual_point_run_w<DUAL_W>_sg,
 * which also stores its outputs in dual_sgrad's sample row.  `sample`: the draws' sample.  A point's lanes may be split over a group of G threads (G a power
 * of two): thread `lane` of the group computes the lanes k with k mod G == lane, plus all values
 * (each thread keeps its own copy, so the threads never wait for each other).  Lanes never mix in
 * forward mode, so every tangent slot is written and read by one thread only.  Storage: the
 * thread's values at V[r * S], the point's packed tangents at T[slot * ST] (S, ST: the distances
 * between consecutive registers, i.e. how many threads / points share the storage).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bytecode.h"
#include "dual/rules.h"
#include "engine/pass.h"
#include "dualbatch.h"
#include "kernels/gpu_kernel.h"
#include "kernels/point_loads.h"

#ifndef DUAL_W
#error "define DUAL_W (0 or 1) before including interp_point.h"
#endif

#ifndef DUAL_INTERP_POINT_ONCE
#define DUAL_INTERP_POINT_ONCE
/* The interpreter body's interface (engine/interp_ops.h) for one point. */
#define DUAL_POINTS(p) for (int p = 0; p < 1; ++p)
#define DUAL_POINTS_OR(p, v) DUAL_POINTS(p)
/* 32-bit index arithmetic: a point's register file spans fewer than 2^31 doubles (gpu_run.c) */
#define DUAL_VAL(r) (V + (uint32_t)(r) * S)
#define DUAL_TANP(r, o, m, k) (T + ((uint32_t)(o) + (uint32_t)DUAL_POPC((m) & ((1u << (k)) - 1u))) * ST)
#define DUAL_TSTEP ST
/* A run's rows advance by pointer increments (indexing kept a 64-bit multiply per row). */
#define DUAL_LANE_RUN(expr)                                                                      \
  {                                                                                              \
    const int j0_ = DUAL_LANE_FIRST(k0_);                                                        \
    const size_t step_ = (size_t)(DUAL_LANE_STEP) * (size_t)ST;                                  \
    double *tr = tr0_ + (size_t)j0_ * (size_t)ST;                                                \
    const double *ta = ta0_ + (tr - tr0_), *tb = tb0_ + (tr - tr0_), *tc = tc0_ + (tr - tr0_);   \
    for (int j_ = j0_; j_ < k1_ - k0_;                                                           \
         j_ += DUAL_LANE_STEP, tr += step_, ta += step_, tb += step_, tc += step_) {             \
      DUAL_POINTS(p) { tr[p] = (expr); }                                                         \
    }                                                                                            \
  }
/* The op's partials, read once into registers: the lane loops would otherwise reload them from
 * memory on every lane (they may alias the stores) and keep the scratch rows on the stack. */
#define DUAL_PARTIALS_LOCAL()                                                                    \
  const double qa1_[1] = {qa[0]}, qb1_[1] = {qb[0]}, qc1_[1] = {qc[0]};                          \
  qa = qa1_, qb = qb1_, qc = qc1_;
#define DUAL_LANE_FIRST(k0) ((int)((lane - (uint32_t)(k0)) & (G - 1u)))
#define DUAL_LANE_STEP ((int)G)
#define DUAL_OWNS(k) (((uint32_t)(k) & (G - 1u)) == lane)
#define DUAL_INPLACE (dst == ra && od == oa)
#define DUAL_DRAW_SAMPLE sample

/* x[i] of the point, with the non-finite check, then the tangent seed of this pass (one lane). */
#define DUAL_ENGINE_LDX()                                                                        \
  {                                                                                              \
    const double v_ = A->x[pt * A->x_ps + (int64_t)ra * A->x_es];                                \
    DUAL_VAL(dst)[0] = v_;                                                                       \
    st[0] |= DUAL_PT_NONFINITE(v_) ? DUAL_PT_BAD_INPUT : 0;                                      \
    if (DUAL_W > 0 && ma != 0u && DUAL_OWNS(DUAL_CTZ(ma))) {                                    \
      double s_ = 1.0;                                                                           \
      if (A->mode == DUAL_MODE_JVP) {                                                            \
        s_ = A->v[pt * A->v_ps + (int64_t)ra * A->v_es];                                         \
        st[0] |= DUAL_PT_NONFINITE(s_) ? DUAL_PT_BAD_INPUT : 0;                                  \
      }                                                                                          \
      DUAL_TANP(dst, od, md, DUAL_CTZ(ma))[0] = s_;                                              \
    }                                                                                            \
  }


/* Output rb from register ra: the value on the first pass, then this pass's derivative columns
 * (lanes outside the mask are structural zeros); for dual_sgrad into the thread's sample row
 * (gpu_kernel.h: one thread per point there). */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double v_ = DUAL_VAL(ra)[0];                                                           \
    st[0] |= DUAL_PT_FLAGS(v_);                                                                  \
    const int sg_ = DUAL_SG_OUT; /* the sgrad instance runs only with samples (gpu_run.c) */    \
    double *ys_ = sg_ ? DUAL_VAL(A->sg.row + rb)                                                 \
                      : (A->y != NULL ? A->y + pt * A->y_ps + (int64_t)rb * A->y_es : NULL);     \
    if (ys_ != NULL && c0 == 0 && lane == 0) ys_[0] = v_;                                        \
    if (DUAL_W > 0 && kcount > 0) {                                                              \
      const int64_t dcs_ = sg_ ? (int64_t)S : A->d_cs;                                           \
      double *ds_ = sg_ ? DUAL_VAL(A->sg.row + A->sg.m + rb * A->n_in + c0)                      \
                        : A->d + pt * A->d_ps + (int64_t)rb * A->d_rs + (int64_t)c0 * A->d_cs;   \
      const double *t0_ = T + oa * ST;                                                           \
      for (int k = (int)lane; k < kcount; k += (int)G) {                                         \
        double t_ = 0.0;                                                                         \
        if ((ma >> k) & 1u) {                                                                    \
          t_ = t0_[(uint32_t)DUAL_POPC(ma & ((1u << k) - 1u)) * ST];                             \
          st[0] |= DUAL_PT_FLAGS(t_);                                                            \
        }                                                                                        \
        ds_[k * dcs_] = t_;                                                                      \
      }                                                                                          \
    }                                                                                            \
  }

#define DUAL_POINT_RUN2(w) dual_point_run_w##w
#define DUAL_POINT_RUN(w) DUAL_POINT_RUN2(w)
#define DUAL_POINT_RUN_SG2(w) dual_point_run_w##w##_sg
#define DUAL_POINT_RUN_SG(w) DUAL_POINT_RUN_SG2(w)
#define DUAL_POINT_RUN_DR2(w) dual_point_run_w##w##_dr
#define DUAL_POINT_RUN_DR(w) DUAL_POINT_RUN_DR2(w)
#endif /* DUAL_INTERP_POINT_ONCE */

#if defined(DUAL_SG) && DUAL_SG
#define DUAL_SG_OUT 1
#define DUAL_POINT_DRAWS 1
#define DUAL_POINT_NAME DUAL_POINT_RUN_SG(DUAL_W)
#elif defined(DUAL_DRAWS) && DUAL_DRAWS
#define DUAL_SG_OUT 0
#define DUAL_POINT_DRAWS 1
#define DUAL_POINT_NAME DUAL_POINT_RUN_DR(DUAL_W)
#else
#define DUAL_SG_OUT 0
#define DUAL_POINT_DRAWS 0
#define DUAL_POINT_NAME DUAL_POINT_RUN(DUAL_W)
#endif

DUAL_POINT_FN int DUAL_POINT_NAME(const dual_gpu_args *A, double *V, double *T, uint32_t S,
                                           uint32_t ST, int64_t pt, uint32_t lane, uint32_t G,
                                           int64_t sample) {
  int st[1] = {0};
  (void)T, (void)ST, (void)lane, (void)G, (void)sample;
  for (int32_t pass = 0; pass < A->passes; ++pass) {
    const int32_t c0 = (A->pass0 + pass) * A->width;
    const int kcount = dual_pass_columns(A->mode, A->n_in, c0, A->width);
    (void)kcount;
    const dual_plan_instr *q = A->plan + (int64_t)pass * A->n_instr;
    for (int64_t t = 0; t < A->n_instr; ++t, ++q) {
#if defined(__CUDA_ARCH__) /* one record, three 16-byte loads through the read-only cache */
      const uint4 *q4 = (const uint4 *)q;
      const uint4 w4 = __ldg(q4), m4 = __ldg(q4 + 1), o4 = __ldg(q4 + 2);
      const uint32_t op_dst = w4.x, ra = w4.y, rb = w4.z, rc = w4.w;
      const uint32_t ma = m4.x, mb = m4.y, mc = m4.z, md = m4.w;
      const uint32_t oa = o4.x, ob = o4.y, oc = o4.z, od = o4.w;
#else
      const uint32_t op_dst = q->op_dst, ra = q->a, rb = q->b, rc = q->c;
      const uint32_t ma = q->ma, mb = q->mb, mc = q->mc, md = q->md;
      const uint32_t oa = q->oa, ob = q->ob, oc = q->oc, od = q->od;
#endif
      const int op = (int)(op_dst >> DUAL_DST_BITS);
      const uint32_t dst = op_dst & ((1u << DUAL_DST_BITS) - 1u);
      double pa[1] = {0.0}, pb[1] = {0.0}, pc[1] = {0.0};
      int prop_ = DUAL_PROP_NONE, bad_ = 0;
      (void)rc, (void)mb, (void)mc, (void)md, (void)oc, (void)pa, (void)pb, (void)pc;
      switch (op) {
#include "engine/interp_ops.h"
      default:
        break;
      }
      DUAL_PROPAGATE()
    }
  }
  return st[0] & (DUAL_W > 0 ? ~0 : ~DUAL_PT_SINGULAR); /* eval: no derivative, no singularity */
}
#undef DUAL_POINT_NAME
#undef DUAL_SG_OUT
#undef DUAL_POINT_DRAWS
