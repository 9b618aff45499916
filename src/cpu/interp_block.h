/*
 * interp_block.h — the CPU interpreter for one block of points at one tangent width; included
 * by cpu/engine.c once per width with DUAL_W and DUAL_BLK (points per block, a compile-time
 * constant) defined.  Registers are stored structure-of-arrays: value row r = V[r*BLK ...],
 * tangent row (r, k) = T[(r*W + k)*BLK ...], so every op is a fixed-length loop over the block's
 * points that the compiler unrolls and vectorizes.  A last, partial block is padded with copies
 * of its first point (computed, never stored).  The op cases come from
 * engine/interp_ops.h (shared with the CUDA kernel); loads and stores are defined here.
 */

/* Point loops carry no dependence between points (each writes index p from index p only), which
 * `omp simd` asserts: GCC ignores restrict on block-scope pointers and would not vectorize. */
#define DUAL_POINTS(p) _Pragma("omp simd") for (int p = 0; p < DUAL_BLK; ++p)
#define DUAL_PRAGMA(x) _Pragma(#x)
#define DUAL_POINTS_OR(p, v) DUAL_PRAGMA(omp simd reduction(| : v)) for (int p = 0; p < DUAL_BLK; ++p)
#define DUAL_WT (DUAL_W > 0 ? DUAL_W : 1)
#define DUAL_STORED(p) for (int p = 0; p < nb; ++p)
#define DUAL_VAL(r) (V + (size_t)(r) * (size_t)DUAL_BLK)
#define DUAL_TAN(r, k) (T + ((size_t)(r) * (size_t)DUAL_WT + (size_t)(k)) * (size_t)DUAL_BLK)
#define DUAL_TSTEP DUAL_BLK

#include "interp_loads.h" /* x values, seeds, LDP, LDK, DUAL_FINITE_FLAGS */

/* x[i] of every point in the block, with the non-finite check, then the tangent seed. */
#define DUAL_ENGINE_LDX()                                                                        \
  {                                                                                              \
    DUAL_LOAD_X_VALUES()                                                                         \
    if (DUAL_W > 0 && ma != 0u) { /* seed the one lane this input owns in this pass */              \
      double *DUAL_RESTRICT tr = DUAL_TAN(dst, DUAL_CTZ(ma));                                    \
      DUAL_SEED_ROW(tr, job->mode == DUAL_MODE_JVP)                                              \
    }                                                                                               \
  }

/* Store output rb from register ra: value (first pass only) and this pass's derivative columns.
 * The NaN/Inf flags of a lane are one vector loop over the block (padded points flag too, but
 * only stored points' flags are reported); the numbers are then stored point by point, so each
 * point's Jacobian row is written contiguously. */
#define DUAL_ENGINE_OUT()                                                                        \
  {                                                                                              \
    const double *DUAL_RESTRICT vr = DUAL_VAL(ra);                                                  \
    const int flags = b->status != NULL; /* the flags go nowhere else (the solvers ask for none) */ \
    if (flags) DUAL_STORED(p) { st[p] |= DUAL_FINITE_FLAGS(vr[p]); }                                \
    if (b->y != NULL && c0 == 0) {                                                                  \
      double *ys = b->y + (int64_t)rb * b->y_es + p0 * b->y_ps;                                     \
      const int64_t yps = b->y_ps;                                                                  \
      DUAL_STORED(p) { ys[p * yps] = vr[p]; }                                                       \
    }                                                                                               \
    if (kcount > 0) {                                                                               \
      const int64_t dps = b->d_ps, dcs = b->d_cs;                                                   \
      double *ds = b->d + (int64_t)rb * b->d_rs + (int64_t)c0 * dcs + p0 * dps;                     \
      for (int k = 0; flags && k < kcount; ++k)                                                     \
        if ((ma >> k) & 1u) {                                                                       \
          const double *DUAL_RESTRICT tk = DUAL_TAN(ra, k);                                         \
          DUAL_POINTS(p) { st[p] |= DUAL_FINITE_FLAGS(tk[p]); }                                     \
        }                                                                                           \
      if (dcs == 1 && DUAL_W > 16) { /* transpose through an L1 tile, copy whole rows; the tile   \
                                     * is all zeros between uses (ws_alloc), so only the mask's    \
                                     * lanes are written, then cleared (bratu15: a whole-tile     \
                                     * memset per output row was 4.7 % of dual_newton's time).    \
                                     * Up to 16 lanes the direct stores below are faster (2 cores, \
                                     * 2 threads: dual_newton bratu15 +6 %, kin_steady +3-5 %,    \
                                     * dual_jacobian ba +5 %; kin's 32 lanes the same either way) */ \
        double *tile = ws->tile;                                                                    \
        for (int k = 0; k < kcount; ++k)                                                            \
          if ((ma >> k) & 1u) {                                                                     \
            const double *DUAL_RESTRICT tk = DUAL_TAN(ra, k);                                       \
            DUAL_POINTS(p) { tile[p * DUAL_WT + k] = tk[p]; }                                       \
          }                                                                                         \
        for (int p = 0; p < nb; ++p) { /* a loop: a call to memcpy costs more for rows this short */ \
          double *dr = ds + p * dps;                                                                \
          const double *tr = tile + p * DUAL_WT;                                                    \
          _Pragma("omp simd") for (int k = 0; k < kcount; ++k) dr[k] = tr[k];                       \
        }                                                                                           \
        for (int k = 0; k < kcount; ++k)                                                            \
          if ((ma >> k) & 1u) DUAL_POINTS(p) { tile[p * DUAL_WT + k] = 0.0; }                       \
      } else {                                                                                      \
        const double *t0 = ma != 0u ? DUAL_TAN(ra, 0) : NULL;                                       \
        for (int p = 0; p < nb; ++p) /* lanes outside the mask are structural zeros */              \
          for (int k = 0; k < kcount; ++k)                                                          \
            ds[p * dps + k * dcs] = ((ma >> k) & 1u) ? t0[k * DUAL_BLK + p] : 0.0;                  \
      }                                                                                             \
    }                                                                                               \
  }

/* Run the whole program on points [p0, p0+nb) for derivative columns [c0, c0+kcount), with the
 * pass's lane masks. */
static void DUAL_BLOCK_FN(DUAL_W, DUAL_BLK)(const dual_job *job, const dual_cpu_ws *ws,
                                               const dual_lanes *lanes, int64_t p0, int nb,
                                               int32_t c0, int kcount) {
  const dual_program *prog = job->prog;
  const dual_batch *b = job->b;
  double *V = ws->val, *T = ws->tan;
  double *DUAL_RESTRICT pa = ws->pa;
  double *DUAL_RESTRICT pb = ws->pb;
  double *DUAL_RESTRICT pc = ws->pc;
  int *DUAL_RESTRICT st = ws->st;
  (void)T, (void)kcount, (void)pa, (void)pb, (void)pc, (void)c0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const uint32_t *w = prog->code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), ra = DUAL_INSTR_A(w), rb = DUAL_INSTR_B(w),
                  rc = DUAL_INSTR_C(w);
    const uint32_t ma = lanes[t].a, mb = lanes[t].b, mc = lanes[t].c;
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    DUAL_STRESS_CHECK_INSTR(prog, op, dst, ra, rb, rc);
    (void)rc, (void)mb, (void)mc;
    switch (op) {
#include "../engine/interp_ops.h"
    default:
      break;
    }
    DUAL_PROPAGATE()
  }
}

#undef DUAL_POINTS
#undef DUAL_STORED
#undef DUAL_WT
#undef DUAL_POINTS_OR
#undef DUAL_VAL
#undef DUAL_TAN
#undef DUAL_TSTEP
