/*
 * interp2_block.h — the CPU interpreter of one second-order pass (engine/pass2.h) over a block of
 * DUAL_BLK2 points; included once by cpu/engine2.c.  Storage is structure-of-arrays like the
 * first-order block interpreter, but packed as in the GPU plan: value row r = V[r*BLK ...], slot
 * row s = T[s*BLK ...], where a register's block of slots holds its lanes, then its pairs
 * (engine/plan2.h).  The op cases and the first-order lanes come from engine/interp_ops.h, the
 * pair components from engine/interp2_ops.h (both shared with the GPU); loads and stores are
 * defined here.
 */
#include "engine/interp2_ops.h"
#include "interp_loads.h" /* x values, seeds, LDP, LDK, DUAL_FINITE_FLAGS */

#define DUAL_W 1
#define DUAL_ALL_PARTIALS 1
#define DUAL_POINTS(p) _Pragma("omp simd") for (int p = 0; p < DUAL_BLK2; ++p)
#define DUAL_PRAGMA(x) _Pragma(#x)
#define DUAL_POINTS_OR(p, v) DUAL_PRAGMA(omp simd reduction(| : v)) for (int p = 0; p < DUAL_BLK2; ++p)
#define DUAL_STORED(p) for (int p = 0; p < nb; ++p)
#define DUAL_VAL(r) (V + (size_t)(r) * (size_t)DUAL_BLK2)
#define DUAL_SLOT(s) (T + (size_t)(s) * (size_t)DUAL_BLK2)
#define DUAL_TANP(r, o, m, k) DUAL_SLOT((uint32_t)(o) + (uint32_t)DUAL_POPC((m) & ((1u << (k)) - 1u)))
#define DUAL_TSTEP DUAL_BLK2
#define DUAL_INPLACE (dst == ra && od == oa)
#define DUAL_PAIR_ENTRY(i) (plan->ents[i])

/* x[i] of every point in the block, with the non-finite check, then the seed of every lane the
 * input owns in this pass: 1, or v[i] in the direction lane of an HVP. */
#define DUAL_ENGINE_LDX()                                                                        \
  {                                                                                              \
    DUAL_LOAD_X_VALUES()                                                                         \
    for (uint32_t m_ = ma; m_ != 0u; m_ &= m_ - 1u) {                                            \
      const int k_ = DUAL_CTZ(m_);                                                               \
      double *DUAL_RESTRICT tr = DUAL_TANP(dst, od, md, k_);                                     \
      DUAL_SEED_ROW(tr, k_ == pass->vlane)                                                       \
    }                                                                                            \
  }

/* Store output rb from register ra: its value (first pass), the Jacobian columns of this pass's
 * gradient lanes, and its components (zeros where the plan proved them zero), mirrored into the
 * lower triangle for the full layout. */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double *vr = DUAL_VAL(ra);                                                             \
    if (first_pass) {                                                                            \
      DUAL_STORED(p) { st[p] |= DUAL_FINITE_FLAGS(vr[p]); }                                      \
      if (b->y != NULL) {                                                                        \
        double *ys = b->y + (int64_t)rb * b->y_es + p0 * b->y_ps;                                \
        DUAL_STORED(p) { ys[p * b->y_ps] = vr[p]; }                                              \
      }                                                                                          \
    }                                                                                            \
    for (int g_ = 0; g_ < pass->ngrad; ++g_) {                                                   \
      const int k_ = pass->grad_lane[g_];                                                        \
      const double *tk = ((ma >> k_) & 1u) ? DUAL_TANP(ra, oa, ma, k_) : NULL;                   \
      double *ds = b->d == NULL ? NULL                                                           \
                                : b->d + (int64_t)rb * b->d_rs +                                 \
                                      (int64_t)pass->grad_col[g_] * b->d_cs + p0 * b->d_ps;      \
      DUAL_STORED(p) {                                                                           \
        const double t_ = tk != NULL ? tk[p] : 0.0;                                              \
        st[p] |= DUAL_FINITE_FLAGS(t_);                                                          \
        if (ds != NULL) ds[p * b->d_ps] = t_;                                                    \
      }                                                                                          \
    }                                                                                            \
    double *hs = pass->npairs > 0 ? b->h + (int64_t)rb * b->h_rs + p0 * b->h_ps : NULL;         \
    for (int q_ = 0; q_ < pass->npairs; ++q_) {                                                  \
      const uint32_t f_ = e1_ > e0_ ? plan->ents[e0_ + (uint32_t)q_].flags : 0u;                 \
      const double *hq = (f_ & DUAL_PE_HA) ? DUAL_SLOT(plan->ents[e0_ + (uint32_t)q_].ha) : NULL; \
      const int64_t o0 = pass->out0[q_] * b->h_es;                                               \
      const int64_t o1 = pass->out1[q_] >= 0 ? pass->out1[q_] * b->h_es : -1;                    \
      DUAL_STORED(p) {                                                                           \
        const double h_ = hq != NULL ? hq[p] : 0.0;                                              \
        st[p] |= DUAL_FINITE_FLAGS(h_);                                                          \
        hs[p * b->h_ps + o0] = h_;                                                               \
        if (o1 >= 0) hs[p * b->h_ps + o1] = h_;                                                  \
      }                                                                                          \
    }                                                                                            \
  }

/* Run the program on points [p0, p0+nb) for one second-order pass. */
static void dual_cpu_block2(const dual_job *job, const dual_cpu_ws2 *ws, const dual_pass2 *pass,
                            const dual_plan2 *plan, int64_t p0, int nb, int first_pass) {
  const dual_program *prog = job->prog;
  const dual_batch *b = job->b;
  double *V = ws->val, *T = ws->slots;
  double *DUAL_RESTRICT pa = ws->part;
  double *DUAL_RESTRICT pb = pa + DUAL_BLK2;
  double *DUAL_RESTRICT pc = pb + DUAL_BLK2;
  double *DUAL_RESTRICT paa = pc + DUAL_BLK2;
  double *DUAL_RESTRICT pab = paa + DUAL_BLK2;
  double *DUAL_RESTRICT pbb = pab + DUAL_BLK2;
  int *DUAL_RESTRICT st = ws->st;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const dual_plan_instr *q = &plan->recs[t];
    const int op = (int)(q->op_dst >> DUAL_DST_BITS);
    const int32_t dst = (int32_t)(q->op_dst & ((1u << DUAL_DST_BITS) - 1u));
    const int32_t ra = (int32_t)q->a, rb = (int32_t)q->b, rc = (int32_t)q->c;
    const uint32_t ma = q->ma, mb = q->mb, mc = q->mc, md = q->md;
    const uint32_t oa = q->oa, ob = q->ob, oc = q->oc, od = q->od;
    const uint32_t e0_ = plan->first[t], e1_ = plan->first[t + 1];
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    DUAL_STRESS_CHECK_INSTR(prog, op, dst, ra, rb, rc);
    (void)rc, (void)mb, (void)mc, (void)md, (void)ob, (void)oc;
    switch (op) {
#include "../engine/interp_ops.h"
    default:
      break;
    }
    DUAL_PROPAGATE()
    DUAL_PAIRS_PROPAGATE()
  }
}

#undef DUAL_POINTS
#undef DUAL_STORED
#undef DUAL_POINTS_OR
#undef DUAL_VAL
#undef DUAL_TSTEP
