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

/* Store elements e0 .. e0 + 3 (those in `mask`, from slots k0 .. k3 of each point's row) of the
 * warp's 32 points, the elements `es` apart and the points `ps` apart from dst.  Points far
 * apart (ps != 1): four lanes per point, each store instruction writes the chunks of 8 points,
 * whole 32-byte sectors when the elements are adjacent; points adjacent (ps == 1, column-major
 * results): a lane per point, each store a line of 32 points. */
static __noinline__ __device__ void dual_jit2_flush(double *dst, int64_t ps, int64_t es,
                                                    int64_t count, int64_t base, int lane,
                                                    const double *sw, int sp, int64_t e0,
                                                    unsigned mask, int k0, int k1, int k2, int k3) {
  const int64_t left = count - base;
  const int n = left < 32 ? (int)left : 32; /* points of the tile that exist */
  dst += e0 * es;
  if (ps == 1) {
    if (lane < n) {
      const int k[4] = {k0, k1, k2, k3};
      for (int i = 0; i < 4; ++i)
        if ((mask >> i) & 1u) dst[base + lane + (int64_t)i * es] = sw[lane * sp + k[i]];
    }
    return;
  }
  const int i = lane & 3, k = i == 0 ? k0 : i == 1 ? k1 : i == 2 ? k2 : k3;
  if (!((mask >> i) & 1u)) return;
  for (int p = lane >> 2; p < n; p += 8) dst[(base + p) * ps + (int64_t)i * es] = sw[p * sp + k];
}
#define DUAL_JIT2_FLUSH_H(b, e0, mask, k0, k1, k2, k3)                                           \
  __syncwarp();                                                                                  \
  dual_jit2_flush(A.h + (int64_t)(b) * A.h_rs, A.h_ps, A.h_es, A.count, base_, lane_,            \
                  sw2_, sp_, (e0), (mask), (k0), (k1), (k2), (k3));                              \
  __syncwarp();
#define DUAL_JIT2_FLUSH_D(b, e0, mask, k0, k1, k2, k3)                                           \
  if (A.d != NULL) {                                                                             \
    __syncwarp();                                                                                \
    dual_jit2_flush(A.d + (int64_t)(b) * A.d_rs, A.d_ps, A.d_cs, A.count, base_, lane_,          \
                    sw2_, sp_, (e0), (mask), (k0), (k1), (k2), (k3));                            \
    __syncwarp();                                                                                \
  }

#endif /* DUAL_JIT_KERNEL2_H */
