/*
 * interp_rev_point.h — the GPU storage of the reverse sweep (engine/interp_rev.h) for one point:
 * every row (a register's value, a tape row, an adjoint, a derivative) is one double of the
 * thread, rows S doubles apart (the threads of a block interleaved, so a warp's accesses are
 * consecutive).  Valid C11 and CUDA; defines dual_rev_point_run (reverse mode) and
 * dual_rev_point_run_for (forward-over-reverse), which run all of a point's sweeps, store its
 * derivatives and return its status flags.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bytecode.h"
#include "dual/rules.h"
#include "dualbatch.h"
#include "kernels/gpu_kernel.h"
#include "kernels/point_loads.h" /* function qualifier, LDP, flag tests */

typedef struct dual_gpu_rev_ctx {
  const dual_gpu_rev_args *A;
  double *base; /* the thread's first row */
  uint32_t S;   /* distance between rows */
  int64_t pt;
  int unit_output; /* the output whose unit cotangent seeds the sweep; -1: u */
  int dir;         /* forward-over-reverse: the direction is input dir's unit vector; -1: v */
  int64_t sample;  /* of the draws */
  int st[1];
} dual_gpu_rev_ctx;

#define DUAL_REV_FN DUAL_POINT_FN
#define DUAL_REV_CTX dual_gpu_rev_ctx
#define DUAL_REV_LOCALS                                                                          \
  const dual_gpu_rev_args *A = R->A;                                                             \
  const int64_t pt = R->pt;                                                                      \
  const uint32_t S = R->S;                                                                       \
  double *V = R->base + (uint32_t)A->o_val * S;                                                  \
  int *st = R->st;                                                                               \
  const int32_t nact_ = A->n_active;                                                             \
  (void)pt, (void)V, (void)st, (void)nact_;
#define DUAL_POINTS(p) for (int p = 0; p < 1; ++p)
#define DUAL_POINTS_OR(p, v) DUAL_POINTS(p)
#define DUAL_DRAW_SAMPLE (R->sample)
#define DUAL_POINT_DRAWS 1
/* 32-bit index arithmetic: a block's storage spans fewer than 2^31 doubles (gpu_run_rev.c) */
#define DUAL_VAL(r) (V + (uint32_t)(r)*S)
#define DUAL_TAPE(row) (R->base + ((uint32_t)A->o_tape + (uint32_t)(row)) * S)
#define DUAL_SCRATCH(i) (R->base + ((uint32_t)A->o_scratch + (uint32_t)(i)) * S)
#define DUAL_ADJ(r) (R->base + ((uint32_t)A->o_adj + (uint32_t)(r)) * S)
#define DUAL_GRAD(i) (R->base + ((uint32_t)A->o_grad + (uint32_t)(i)) * S)
#define DUAL_TANR(r) (R->base + ((uint32_t)A->o_tan + (uint32_t)(r)) * S)
#define DUAL_ADJD(r) (R->base + ((uint32_t)A->o_adjd + (uint32_t)(r)) * S)
#define DUAL_GRADD(i) (R->base + ((uint32_t)A->o_gradd + (uint32_t)(i)) * S)
#if defined(__CUDA_ARCH__) /* one 16-byte load through the read-only cache */
#define DUAL_REV_WORDS(t)                                                                        \
  {                                                                                              \
    const uint4 q_ = __ldg((const uint4 *)A->code + (t));                                        \
    w0 = q_.x, w1 = q_.y, w2 = q_.z, w3 = q_.w;                                                  \
  }
#define DUAL_REV_AUX(t) __ldg(A->aux + (t))
#else
#define DUAL_REV_WORDS(t)                                                                        \
  {                                                                                              \
    const uint32_t *w_ = A->code + (t)*DUAL_INSTR_WORDS;                                         \
    w0 = w_[0], w1 = w_[1], w2 = w_[2], w3 = w_[3];                                              \
  }
#define DUAL_REV_AUX(t) (A->aux[t])
#endif

/* x[i] of the point, with the non-finite check; forward-over-reverse also seeds the input's
 * tangent: v[i] (checked) or the unit direction's 1 or 0. */
#define DUAL_ENGINE_LDX()                                                                        \
  {                                                                                              \
    const double v_ = A->x[pt * A->x_ps + (int64_t)ra * A->x_es];                                \
    DUAL_VAL(dst)[0] = v_;                                                                       \
    st[0] |= DUAL_PT_NONFINITE(v_) ? DUAL_PT_BAD_INPUT : 0;                                      \
    if (DUAL_REV_FOR) {                                                                          \
      double t_ = ra == R->dir ? 1.0 : 0.0;                                                      \
      if (R->dir < 0) {                                                                          \
        t_ = A->v[pt * A->v_ps + (int64_t)ra * A->v_es];                                         \
        st[0] |= DUAL_PT_NONFINITE(t_) ? DUAL_PT_BAD_INPUT : 0;                                  \
      }                                                                                          \
      DUAL_TANR(dst)[0] = t_;                                                                    \
    }                                                                                            \
  }
#undef DUAL_ENGINE_LDK
#define DUAL_ENGINE_LDK() DUAL_VAL(dst)[0] = A->consts[ra];
/* The output's value (its derivatives come from the adjoint sweep); dual_sgrad: into the
 * thread's sample row. */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double v_ = DUAL_VAL(ra)[0];                                                           \
    st[0] |= DUAL_PT_FLAGS(v_);                                                                  \
    if (A->sg.samples > 0) R->base[((uint32_t)A->sg.row + (uint32_t)rb) * S] = v_;               \
    else if (A->y != NULL) A->y[pt * A->y_ps + (int64_t)rb * A->y_es] = v_;                      \
  }
/* Output `out`'s cotangent into the adjoint row ar: 1 for the swept output's unit vector, or u
 * (checked finite). */
#define DUAL_REV_SEED(ar, out)                                                                   \
  if (R->unit_output >= 0) {                                                                     \
    if ((out) == R->unit_output) (ar)[0] += 1.0;                                                 \
  } else {                                                                                       \
    const double u_ = A->u[pt * A->u_ps + (int64_t)(out)*A->u_es];                               \
    (ar)[0] += u_;                                                                               \
    st[0] |= DUAL_PT_NONFINITE(u_) ? DUAL_PT_BAD_INPUT : 0;                                      \
  }
/* Checkpoint k: the register values (and tangents), rows [val, snap) of the layout. */
#define DUAL_REV_STATE(k, sn_, v_, n_)                                                           \
  const dual_gpu_rev_args *A_ = R->A;                                                          \
  const uint32_t n_ = (uint32_t)(A_->o_snap - A_->o_val);                                      \
  double *sn_ = R->base + ((uint32_t)A_->o_snap + (uint32_t)(k)*n_) * R->S;                    \
  double *v_ = R->base + (uint32_t)A_->o_val * R->S;
#define DUAL_REV_SNAPSHOT(k)                                                                     \
  {                                                                                              \
    DUAL_REV_STATE(k, sn_, v_, n_)                                                               \
    for (uint32_t r_ = 0; r_ < n_; ++r_) sn_[r_ * R->S] = v_[r_ * R->S];                         \
  }
#define DUAL_REV_RESTORE(k)                                                                      \
  {                                                                                              \
    DUAL_REV_STATE(k, sn_, v_, n_)                                                               \
    for (uint32_t r_ = 0; r_ < n_; ++r_) v_[r_ * R->S] = sn_[r_ * R->S];                         \
  }

/* Reverse mode, then forward-over-reverse (names ending in _for). */
#define DUAL_REV_FOR 0
#define DUAL_REV_NAME(f) f
#include "engine/interp_rev.h"
#undef DUAL_REV_FOR
#undef DUAL_REV_NAME
#define DUAL_REV_FOR 1
#define DUAL_REV_NAME(f) f##_for
#include "engine/interp_rev.h"

/* Every sweep of point pt in sample `sample` of its draws, its derivatives stored (row s of d per
 * sweep, or of the sample row for dual_sgrad), its flags returned.
 * The adjoint and derivative rows are zero on entry and left zero (interp_rev.h). */
DUAL_POINT_FN int dual_rev_point_run(const dual_gpu_rev_args *A, double *base, uint32_t S, int64_t pt,
                                     int64_t sample) {
  dual_gpu_rev_ctx R;
  R.A = A, R.base = base, R.S = S, R.pt = pt, R.dir = -1, R.sample = sample, R.st[0] = 0;
  const int sg = A->sg.samples > 0; /* dual_sgrad: row s of the sample row's derivatives */
  const int64_t dcs = sg ? (int64_t)S : A->d_cs;
  for (int32_t s = 0; s < A->sweeps; ++s) {
    R.unit_output = A->vjp ? -1 : s;
    dual_rev_sweeps(&R, A->n_active, A->seg, A->nseg, s > 0);
    double *g = base + (uint32_t)A->o_grad * S;
    double *ds = sg ? base + ((uint32_t)(A->sg.row + A->sg.m) + (uint32_t)s * (uint32_t)A->n_in) * S
                    : A->d + pt * A->d_ps + (int64_t)s * A->d_rs;
    for (int32_t j = 0; j < A->n_in; ++j) {
      const double v = g[(uint32_t)j * S];
      R.st[0] |= DUAL_PT_FLAGS(v);
      ds[(int64_t)j * dcs] = v;
      g[(uint32_t)j * S] = 0.0;
    }
  }
  return R.st[0];
}

/* Forward-over-reverse for point pt: per direction (v, or each input's unit vector for a
 * Hessian) one pair sweep per output, storing its gradient (into d, once, when d is not NULL) and
 * its derivative along the direction into h (DUAL_FOR_ENTRIES); returns the point's flags. */
DUAL_POINT_FN int dual_rev_point_run_for(const dual_gpu_rev_args *A, double *base, uint32_t S, int64_t pt) {
  dual_gpu_rev_ctx R;
  R.A = A, R.base = base, R.S = S, R.pt = pt, R.sample = 0, R.st[0] = 0;
  const int64_t n = A->n_in;
  const int32_t ndir = A->second == DUAL_MODE_HVP || n == 0 ? 1 : A->n_in;
  double *g = base + (uint32_t)A->o_grad * S, *gd = base + (uint32_t)A->o_gradd * S;
  for (int32_t k = 0; k < ndir; ++k) {
    R.dir = A->second == DUAL_MODE_HVP ? -1 : k;
    for (int32_t s = 0; s < A->n_out; ++s) {
      R.unit_output = s;
      dual_rev_sweeps_for(&R, A->n_active, A->seg, A->nseg, s > 0);
      double *ds = A->d != NULL && R.dir <= 0 ? A->d + pt * A->d_ps + (int64_t)s * A->d_rs : NULL;
      double *hs = A->h + pt * A->h_ps + (int64_t)s * A->h_rs;
      for (int64_t j = 0; j < n; ++j) {
        const double v = g[(uint32_t)j * S], w = gd[(uint32_t)j * S];
        if (ds != NULL) {
          R.st[0] |= DUAL_PT_FLAGS(v);
          ds[j * A->d_cs] = v;
        }
        int64_t e0, e1;
        DUAL_FOR_ENTRIES((int64_t)R.dir, j, n, A->h_packed, e0, e1)
        if (e0 >= 0) {
          R.st[0] |= DUAL_PT_FLAGS(w);
          hs[e0 * A->h_es] = w;
          if (e1 >= 0) hs[e1 * A->h_es] = w;
        }
        g[(uint32_t)j * S] = 0.0, gd[(uint32_t)j * S] = 0.0;
      }
    }
  }
  return R.st[0];
}
