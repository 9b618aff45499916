/*
 * jit_kernel2.h — what every generated second-order and reverse-mode kernel (jit/jit_source2.c,
 * jit_source_rev.c) includes beyond the first-order kernels' header: the stores of Jacobian
 * (gradient) entries and Hessian components, staged per warp and flushed by chunks of adjacent
 * elements (in the tile loop of jit_kernel.h; the generator's side is jit/jit_stage2.h).
 * Compiled by NVRTC only (embedded in the library as text), or as host C++ by the tests.
 */
#ifndef DUAL_JIT_KERNEL2_H
#define DUAL_JIT_KERNEL2_H

#include "jit/jit_kernel.h"

/* The products of the second-order and reverse-mode kernels (jit_source2.c, jit_source_rev.c)
 * and the note a staged entry leaves: by default the guarded products (tangent_terms.h) and the
 * entry's exact flags.  A kernel's fast copy redefines the three around its body
 * (dual_jit_stager_kernel_fast): plain products, and instead of the flags one FMA that turns nf_
 * NaN when the entry is NaN or infinite (its warp then reruns the tile through the guarded copy,
 * which flags exactly). */
#define DUAL_RTM DUAL_TM
#define DUAL_RTT DUAL_TT
#define DUAL_JIT2_NOTE(x) st |= DUAL_PT_FLAGS(x);

/* Staged stores (jit/jit_stage2.h).  A kernel declares its warps' staging rows of sp_ doubles
 * per thread (stage2_), points sw2_ at its warp's rows and s2_ at its thread's row; slot k of the
 * row takes a value, noted (d's only when the caller passed a d). */
#define DUAL_JIT2_STAGE_H(k, value)                                                              \
  {                                                                                              \
    const double h_ = (value);                                                                   \
    DUAL_JIT2_NOTE(h_)                                                                           \
    s2_[(k)] = h_;                                                                               \
  }
#define DUAL_JIT2_STAGE_D(k, value)                                                              \
  if (A.d != NULL) {                                                                             \
    const double g_ = (value);                                                                   \
    DUAL_JIT2_NOTE(g_)                                                                           \
    s2_[(k)] = g_;                                                                               \
  }
/* d's entry flagging the point even when no d was passed (the nested kernels) */
#define DUAL_JIT2_STAGE_DF(k, value)                                                             \
  {                                                                                              \
    const double g_ = (value);                                                                   \
    DUAL_JIT2_NOTE(g_)                                                                           \
    if (A.d != NULL) s2_[(k)] = g_;                                                              \
  }

/* A looped reverse-mode kernel's gradient entry j of output b, stored directly (jit_rev_loops.c:
 * its indices are the loops'), noted as a staged one. */
#define DUAL_JIT2_PUT_D(b, j, value)                                                             \
  if (A.d != NULL) {                                                                             \
    const double g_ = (value);                                                                   \
    DUAL_JIT2_NOTE(g_)                                                                           \
    if (live_) A.d[(int64_t)(b) * A.d_rs + pt * A.d_ps + (int64_t)(j) * A.d_cs] = g_;            \
  }

/* dual_sgrad's reverse-mode kernels (jit_source_rev.c): a sample's output value b and its
 * gradient entries go to slots of the thread's row s2_ (the fold reads them back after the
 * sample), the value flagged exactly, each entry noted. */
#define DUAL_JIT2_SGRAD_VALUE(b, v)                                                              \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  s2_[(b)] = (v);
#define DUAL_JIT2_SGRAD_PUT(k, value)                                                            \
  {                                                                                              \
    const double g_ = (value);                                                                   \
    DUAL_JIT2_NOTE(g_)                                                                           \
    s2_[(k)] = g_;                                                                               \
  }

/* The flushes' lane map, set once per tile (after sw2_): lane 4 p + i writes element i of a
 * chunk for the tile's points p, p + 8, p + 16 and p + 24 (fl_n_ of them exist).  Each store
 * instruction then writes 4 elements of 8 points: whole 32-byte sectors both when a point's
 * elements are adjacent (row-major results) and when the points are (column-major). */
#define DUAL_JIT2_FLUSH_BEGIN                                                                    \
  const int fl_i_ = lane_ & 3, fl_p_ = lane_ >> 2;                                               \
  const int64_t fl_left_ = A.count - base_;                                                      \
  const int fl_n_ = fl_left_ > fl_p_ ? (int)(((fl_left_ < 32 ? fl_left_ : 32) - fl_p_ + 7) >> 3) : 0; \
  const double *const fl_s_ = sw2_ + fl_p_ * sp_;                                                \
  const int64_t fl_pt_ = base_ + fl_p_;                                                          \
  const unsigned fl_sh_ = 8u * (unsigned)fl_i_;                                                  \
  (void)fl_n_, (void)fl_s_, (void)fl_pt_, (void)fl_sh_;

/* Store elements e0 .. e0 + 3 (those in `mask`, from slots k0 .. k3 of each point's row) of
 * output block `blk` (elements `es` apart, points `ps` apart) for the warp's points, inline: the
 * slots and elements are the generator's constants, a lane picks its slot from the four packed
 * in one word, and stores at most four values. */
#define DUAL_JIT2_FLUSH_ROWS(blk, ps, es, e0, mask, k0, k1, k2, k3)                              \
  if (((mask) >> fl_i_) & 1u) {                                                                  \
    const unsigned ks_ = (unsigned)(k0) | (unsigned)(k1) << 8 | (unsigned)(k2) << 16 | (unsigned)(k3) << 24; \
    const double *const s_ = fl_s_ + ((ks_ >> fl_sh_) & 0xffu);                                  \
    double *const d_ = (blk) + ((int64_t)(e0) + fl_i_) * (es) + fl_pt_ * (ps);                   \
    const int64_t r_ = 8 * (ps);                                                                 \
    if (fl_n_ > 0) d_[0] = s_[0];                                                                \
    if (fl_n_ > 1) d_[r_] = s_[8 * sp_];                                                         \
    if (fl_n_ > 2) d_[2 * r_] = s_[16 * sp_];                                                    \
    if (fl_n_ > 3) d_[3 * r_] = s_[24 * sp_];                                                    \
  }
#define DUAL_JIT2_FLUSH_H(b, e0, mask, k0, k1, k2, k3)                                           \
  __syncwarp();                                                                                  \
  DUAL_JIT2_FLUSH_ROWS(A.h + (int64_t)(b) * A.h_rs, A.h_ps, A.h_es, (e0), (mask), k0, k1, k2, k3) \
  __syncwarp();
#define DUAL_JIT2_FLUSH_D(b, e0, mask, k0, k1, k2, k3)                                           \
  if (A.d != NULL) {                                                                             \
    __syncwarp();                                                                                \
    DUAL_JIT2_FLUSH_ROWS(A.d + (int64_t)(b) * A.d_rs, A.d_ps, A.d_cs, (e0), (mask), k0, k1, k2, k3) \
    __syncwarp();                                                                                \
  }

#endif /* DUAL_JIT_KERNEL2_H */
