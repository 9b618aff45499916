/*
 * interp_rev_block.h — the CPU storage of the reverse sweep (engine/interp_rev.h) for a block of
 * DUAL_BLKR points; included once by cpu/engine_rev.c.  Every row (a register's values, a tape
 * row, an adjoint, a derivative) is DUAL_BLKR doubles, one per point, so each op's loop is a
 * vectorizable loop over the block; padded points of a short block repeat its first point.
 */
#include "interp_loads.h" /* x values, LDP, LDK, DUAL_FINITE_FLAGS */

/* What one block's sweeps read: the job, the block and the thread's workspace. */
typedef struct dual_cpu_rev_ctx {
  const dual_job *job;
  const dual_cpu_wsr *ws;
  const dual_rev_plan *plan;
  int64_t p0;
  int nb;
  int unit_output; /* the output whose unit cotangent seeds the sweep; -1: the caller's u */
  int dir;         /* forward-over-reverse: the direction is input dir's unit vector; -1: v */
} dual_cpu_rev_ctx;

#define DUAL_REV_FN static
#define DUAL_REV_CTX dual_cpu_rev_ctx
#define DUAL_REV_LOCALS                                                                          \
  const dual_job *job = R->job;                                                                  \
  const dual_program *prog = job->prog;                                                          \
  const dual_batch *b = R->job->b;                                                               \
  const dual_cpu_wsr *ws_ = R->ws;                                                               \
  const int64_t p0 = R->p0;                                                                      \
  const int nb = R->nb;                                                                          \
  double *V = ws_->val;                                                                          \
  int *DUAL_RESTRICT st = ws_->st;                                                               \
  const int32_t nact_ = prog->n_active;                                                          \
  (void)job, (void)prog, (void)b, (void)p0, (void)nb, (void)V, (void)st, (void)nact_;
#define DUAL_POINTS(p) _Pragma("omp simd") for (int p = 0; p < DUAL_BLKR; ++p)
#define DUAL_PRAGMA(x) _Pragma(#x)
#define DUAL_POINTS_OR(p, v) DUAL_PRAGMA(omp simd reduction(| : v)) for (int p = 0; p < DUAL_BLKR; ++p)
#define DUAL_STORED(p) for (int p = 0; p < nb; ++p)
#define DUAL_ROW(base, r) ((base) + (size_t)(r) * (size_t)DUAL_BLKR)
#define DUAL_VAL(r) DUAL_ROW(V, r)
#define DUAL_TAPE(row) DUAL_ROW(ws_->tape, row)
#define DUAL_SCRATCH(i) DUAL_ROW(ws_->scratch, i)
#define DUAL_ADJ(r) DUAL_ROW(ws_->adj, r)
#define DUAL_GRAD(i) DUAL_ROW(ws_->grad, i)
#define DUAL_TANR(r) DUAL_ROW(ws_->tan, r)
#define DUAL_ADJD(r) DUAL_ROW(ws_->adjd, r)
#define DUAL_GRADD(i) DUAL_ROW(ws_->gradd, i)
#define DUAL_REV_WORDS(t)                                                                        \
  {                                                                                              \
    const uint32_t *w_ = prog->code + (t)*DUAL_INSTR_WORDS;                                      \
    w0 = w_[0], w1 = w_[1], w2 = w_[2], w3 = w_[3];                                              \
  }
#define DUAL_REV_AUX(t) (R->plan->aux[t])

/* x[i] of every point in the block, with the non-finite check; forward-over-reverse also seeds
 * the input's tangent: v[i] (checked) or the unit direction's 1 or 0. */
#define DUAL_ENGINE_LDX()                                                                        \
  {                                                                                              \
    DUAL_LOAD_X_VALUES()                                                                         \
    if (DUAL_REV_FOR) {                                                                          \
      double *DUAL_RESTRICT tr_ = DUAL_TANR(dst);                                                \
      if (R->dir < 0) {                                                                          \
        DUAL_SEED_ROW(tr_, 1)                                                                    \
      } else {                                                                                   \
        const double s_ = ra == R->dir ? 1.0 : 0.0;                                              \
        DUAL_POINTS(p) { tr_[p] = s_; }                                                          \
      }                                                                                          \
    }                                                                                            \
  }

/* The outputs' values (the derivatives come from the adjoint sweep). */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double *vr = DUAL_VAL(ra);                                                             \
    DUAL_STORED(p) { st[p] |= DUAL_FINITE_FLAGS(vr[p]); }                                        \
    if (b->y != NULL) {                                                                          \
      double *ys = b->y + (int64_t)rb * b->y_es + p0 * b->y_ps;                                  \
      DUAL_STORED(p) { ys[p * b->y_ps] = vr[p]; }                                                \
    }                                                                                            \
  }

/* Output `out`'s cotangent into the adjoint row ar: 1 for the swept output's unit vector, or the
 * caller's u (checked finite). */
#define DUAL_REV_SEED(ar, out)                                                                   \
  if (R->unit_output >= 0) {                                                                     \
    if ((out) == R->unit_output) DUAL_POINTS(p) { (ar)[p] += 1.0; }                              \
  } else {                                                                                       \
    const double *us = b->u + (int64_t)(out)*b->u_es + p0 * b->u_ps;                            \
    const int64_t ups = b->u_ps;                                                                 \
    DUAL_POINTS(p) {                                                                             \
      const double u = us[(p < nb ? p : 0) * ups];                                               \
      (ar)[p] += u;                                                                              \
      st[p] |= (fabs(u) <= DBL_MAX) ? 0 : DUAL_PT_BAD_INPUT;                                     \
    }                                                                                            \
  }

/* Checkpoint k: the block's register values (and tangents), rows [val, snap) of the layout. */
#define DUAL_REV_REGS_BYTES ((size_t)R->ws->state_rows * DUAL_BLKR * sizeof(double))
#define DUAL_REV_SNAPSHOT(k)                                                                     \
  memcpy((char *)R->ws->snap + (size_t)(k)*DUAL_REV_REGS_BYTES, R->ws->val, DUAL_REV_REGS_BYTES)
#define DUAL_REV_RESTORE(k)                                                                      \
  memcpy(R->ws->val, (char *)R->ws->snap + (size_t)(k)*DUAL_REV_REGS_BYTES, DUAL_REV_REGS_BYTES)

/* Reverse mode, then forward-over-reverse (names ending in _for). */
#define DUAL_REV_FOR 0
#define DUAL_REV_NAME(f) f
#include "engine/interp_rev.h"
#undef DUAL_REV_FOR
#undef DUAL_REV_NAME
#define DUAL_REV_FOR 1
#define DUAL_REV_NAME(f) f##_for
#include "engine/interp_rev.h"

/* The derivatives of one sweep into row `row` of d (VJP / gradient: row 0), each point's row in
 * the caller's layout; the derivative rows are cleared for the next sweep. */
static void dual_cpu_rev_store(const dual_cpu_rev_ctx *R, int64_t row) {
  DUAL_REV_LOCALS
  for (int32_t j = 0; j < prog->n_in; ++j) {
    double *DUAL_RESTRICT gj = DUAL_GRAD(j);
    double *ds = b->d + row * b->d_rs + (int64_t)j * b->d_cs + p0 * b->d_ps;
    DUAL_STORED(p) {
      st[p] |= DUAL_FINITE_FLAGS(gj[p]);
      ds[p * b->d_ps] = gj[p];
    }
    DUAL_POINTS(p) { gj[p] = 0.0; }
  }
}

/* Forward-over-reverse results of one sweep: output `out`'s gradient (row out of d, when asked)
 * and its derivative along the direction — the H v product (HVP, row out of h), or column dir of
 * its Hessian (DUAL_FOR_ENTRIES, rev_plan.h).  Both rows are cleared for the next sweep. */
static void dual_cpu_for_store(const dual_cpu_rev_ctx *R, int64_t out) {
  DUAL_REV_LOCALS
  const int64_t n = prog->n_in;
  for (int32_t j = 0; j < n; ++j) {
    double *DUAL_RESTRICT gj = DUAL_GRAD(j), *DUAL_RESTRICT hj = DUAL_GRADD(j);
    if (b->d != NULL && R->dir <= 0) {
      double *ds = b->d + out * b->d_rs + (int64_t)j * b->d_cs + p0 * b->d_ps;
      DUAL_STORED(p) {
        st[p] |= DUAL_FINITE_FLAGS(gj[p]);
        ds[p * b->d_ps] = gj[p];
      }
    }
    int64_t e0, e1;
    DUAL_FOR_ENTRIES((int64_t)R->dir, (int64_t)j, n, b->h_layout == DUAL_HESSIAN_PACKED, e0, e1)
    if (e0 >= 0) {
      double *hs = b->h + out * b->h_rs + p0 * b->h_ps;
      DUAL_STORED(p) {
        st[p] |= DUAL_FINITE_FLAGS(hj[p]);
        hs[p * b->h_ps + e0 * b->h_es] = hj[p];
        if (e1 >= 0) hs[p * b->h_ps + e1 * b->h_es] = hj[p];
      }
    }
    DUAL_POINTS(p) { gj[p] = 0.0, hj[p] = 0.0; }
  }
}

#undef DUAL_POINTS
#undef DUAL_STORED
#undef DUAL_POINTS_OR
#undef DUAL_VAL
