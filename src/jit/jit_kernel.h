/*
 * jit_kernel.h — what every generated first-order kernel (jit/jit_source.c) includes: the shared
 * rules (dual/rules.h), tangent arithmetic (engine/tangent_terms.h), random draws
 * (engine/draws.h), the argument block (jit/jit_args.h), and the loads, stores and tile loop the
 * generator's code calls.  Compiled by NVRTC only (embedded in the library as text).
 *
 * Layout of a kernel: blocks of DUAL_JIT_THREADS threads; each warp takes tiles of 32
 * consecutive points (grid-stride), one point per thread, every lane of a warp running the tile
 * (a lane past the end recomputes the last point and stores nothing), so the warp can stage the
 * derivative rows it produces in shared memory and store them as contiguous lines.
 */
#ifndef DUAL_JIT_KERNEL_H
#define DUAL_JIT_KERNEL_H

#include "dual/portable.h"
#include "dual/rules.h"
#include "dualbatch.h"
#include "engine/draws.h"
#include "engine/tangent_terms.h"
#include "jit/jit_args.h"

#define DUAL_JIT_THREADS 128
#define DUAL_JIT_WARPS (DUAL_JIT_THREADS / 32)

#define DUAL_PT_NONFINITE(v) DUAL_NONFINITE(v)
/* DUAL_PT_NAN or DUAL_PT_INF for a NaN or infinite value, else 0 (on the exponent and mantissa
 * bits, as DUAL_NONFINITE). */
static __forceinline__ __device__ int dual_jit_flags(double v) {
  const int hi = __double2hiint(v);
  if ((hi & 0x7ff00000) != 0x7ff00000) return 0;
  return ((hi & 0x000fffff) | __double2loint(v)) != 0 ? DUAL_PT_NAN : DUAL_PT_INF;
}
#define DUAL_PT_FLAGS(v) dual_jit_flags(v)

/* Input i (x), parameter i (p) or JVP direction entry i (v) of point pt, flagging non-finite ones. */
static __forceinline__ __device__ double dual_jit_load(const double *a, int64_t ps, int64_t es,
                                                       int64_t pt, int64_t i, int *st) {
  const double v = a[pt * ps + i * es];
  *st |= DUAL_PT_NONFINITE(v) ? DUAL_PT_BAD_INPUT : 0;
  return v;
}
#define DUAL_JIT_LDX(i) dual_jit_load(A.x, A.x_ps, A.x_es, pt, (i), &st)
#define DUAL_JIT_LDP(i) dual_jit_load(A.p, A.p_ps, A.p_es, pt, (i), &st)
#define DUAL_JIT_LDV(i) dual_jit_load(A.v, A.v_ps, A.v_es, pt, (i), &st)
#define DUAL_JIT_DRAW(normal, k) dual_draw_value((normal), A.seed, A.point0 + pt, 0, A.antithetic, (k))

/* The tile loop: `pt` the thread's point (clamped), `live_` whether it exists.  Blocks have 32,
 * 64 or 128 threads (small batches use smaller blocks, spread over more multiprocessors); the
 * staging arrays are sized for DUAL_JIT_WARPS. */
#define DUAL_JIT_TILE_BEGIN                                                                      \
  const int lane_ = (int)(threadIdx.x & 31u), warp_ = (int)(threadIdx.x >> 5);                  \
  const int64_t warps_ = (int64_t)(blockDim.x >> 5);                                             \
  (void)warp_;                                                                                   \
  for (int64_t base_ = ((int64_t)blockIdx.x * warps_ + warp_) * 32; base_ < A.count;              \
       base_ += (int64_t)gridDim.x * warps_ * 32) {                                              \
    const int live_ = base_ + lane_ < A.count;                                                   \
    const int64_t pt = live_ ? base_ + lane_ : A.count - 1;                                      \
    int st = 0;
/* first: whether this is the job's first pass (it stores the status; later ones OR into it);
 * mask: flags to keep (evaluation drops DUAL_PT_SINGULAR: no derivative, no singularity). */
#define DUAL_JIT_TILE_END(first, mask)                                                           \
    if (live_ && A.status != NULL) {                                                             \
      if (first) A.status[pt] = st & (mask);                                                     \
      else A.status[pt] |= st & (mask);                                                          \
    }                                                                                            \
  }

/* Output value b of the point (the first pass stores it), directly or into the thread's row of
 * the warp's value staging area (ystage_, MP doubles per point; flushed by DUAL_JIT_FLUSH_Y). */
#define DUAL_JIT_OUT_VALUE(b, v, store)                                                          \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  if ((store) && live_ && A.y != NULL) A.y[pt * A.y_ps + (int64_t)(b) * A.y_es] = (v);
#define DUAL_JIT_STAGE_VALUE(b, v, MP)                                                           \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  ystage_[warp_][lane_ * (MP) + (b)] = (v);

/* Store the warp's staged values (M per point, MP apart) for its 32 points. */
#define DUAL_JIT_FLUSH_Y(M, MP)                                                                  \
  __syncwarp();                                                                                  \
  if (A.y != NULL) {                                                                             \
    const double *sw_ = ystage_[warp_];                                                          \
    for (int j_ = lane_; j_ < 32 * (M); j_ += 32) {                                              \
      const int p_ = A.y_ps != 1 ? j_ / (M) : (j_ & 31);                                         \
      const int r_ = A.y_ps != 1 ? j_ - p_ * (M) : (j_ >> 5);                                    \
      if (base_ + p_ < A.count) A.y[(base_ + p_) * A.y_ps + (int64_t)r_ * A.y_es] = sw_[p_ * (MP) + r_]; \
    }                                                                                            \
  }                                                                                              \
  __syncwarp();

/* Derivative lane k of output row b goes to stage row s_ (the thread's row of the warp's staging
 * area, KP doubles apart: KP odd, so a warp's rows fall in distinct banks); a present lane's
 * flags are ORed in. */
#define DUAL_JIT_STAGE(k, t)                                                                     \
  {                                                                                              \
    const double t_ = (t);                                                                       \
    st |= DUAL_PT_FLAGS(t_);                                                                     \
    s_[(k)] = t_;                                                                                \
  }
#define DUAL_JIT_STAGE_ZERO(k) s_[(k)] = 0.0;

/* Store the warp's staged row b (KC columns from c0) for its 32 points: along the rows when
 * points are far apart (row-major results: contiguous lines), along the points when they are
 * adjacent (d_ps == 1, column-major results). */
#define DUAL_JIT_FLUSH(b, KC, KP, c0)                                                            \
  __syncwarp();                                                                                  \
  {                                                                                              \
    double *dr_ = A.d + (int64_t)(b) * A.d_rs + (int64_t)(c0) * A.d_cs;                          \
    const double *sw_ = stage_[warp_];                                                           \
    if (A.d_ps != 1) {                                                                           \
      for (int j_ = lane_; j_ < 32 * (KC); j_ += 32) {                                           \
        const int p_ = j_ / (KC), k_ = j_ - p_ * (KC);                                           \
        if (base_ + p_ < A.count) dr_[(base_ + p_) * A.d_ps + (int64_t)k_ * A.d_cs] = sw_[p_ * (KP) + k_]; \
      }                                                                                          \
    } else {                                                                                     \
      for (int j_ = lane_; j_ < 32 * (KC); j_ += 32) {                                           \
        const int k_ = j_ >> 5, p_ = j_ & 31;                                                    \
        if (base_ + p_ < A.count) dr_[(base_ + p_) + (int64_t)k_ * A.d_cs] = sw_[p_ * (KP) + k_]; \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  __syncwarp();

/* Store the warp's staged derivative rows of every output at once: output b's KC columns from
 * c0 at [b * KC + k] of the thread's row (KP apart), M outputs.  Row-major results come out as
 * whole contiguous lines. */
#define DUAL_JIT_FLUSH_ALL(M, KC, KP, c0)                                                        \
  __syncwarp();                                                                                  \
  {                                                                                              \
    double *dr_ = A.d + (int64_t)(c0) * A.d_cs;                                                  \
    const double *sw_ = stage_[warp_];                                                           \
    for (int j_ = lane_; j_ < 32 * (M) * (KC); j_ += 32) {                                       \
      const int p_ = A.d_ps != 1 ? j_ / ((M) * (KC)) : (j_ & 31);                                \
      const int q_ = A.d_ps != 1 ? j_ - p_ * ((M) * (KC)) : (j_ >> 5);                           \
      const int r_ = q_ / (KC), k_ = q_ - r_ * (KC);                                             \
      if (base_ + p_ < A.count)                                                                  \
        dr_[(base_ + p_) * A.d_ps + (int64_t)r_ * A.d_rs + (int64_t)k_ * A.d_cs] = sw_[p_ * (KP) + q_]; \
    }                                                                                            \
  }                                                                                              \
  __syncwarp();

#endif /* DUAL_JIT_KERNEL_H */
