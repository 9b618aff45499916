/*
 * point_loads.h — what the GPU's per-point interpreters of first order (interp_point.h) and
 * second order (interp2_point.h) share: the function qualifier, a constant from the two words of
 * its bits, the NaN/Inf flag tests and the load of a parameter.  Valid C11 and CUDA.  The
 * includer has A (its launch arguments, with p, p_ps, p_es), pt, ra, dst, st[1] and DUAL_VAL in
 * scope where the macros expand.
 */
#ifndef DUAL_POINT_LOADS_H
#define DUAL_POINT_LOADS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dualbatch.h"

#if defined(__CUDA_ARCH__)
#define DUAL_POINT_FN static __forceinline__ __device__
#define DUAL_FROM_BITS(lo, hi) __hiloint2double((int)(hi), (int)(lo))
#else
#define DUAL_POINT_FN static inline
static inline double dual_from_words(uint32_t lo, uint32_t hi) {
  const uint64_t bits = ((uint64_t)hi << 32) | lo;
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}
#define DUAL_FROM_BITS(lo, hi) dual_from_words(lo, hi)
#endif

#define DUAL_PT_NONFINITE(v) (!(fabs(v) <= DBL_MAX))
#define DUAL_PT_FLAGS(v) (((v) != (v)) * DUAL_PT_NAN | (fabs(v) == (double)INFINITY) * DUAL_PT_INF)

/* p[i] of the point, with the non-finite check. */
#define DUAL_ENGINE_LDP()                                                                        \
  {                                                                                              \
    const double v_ = A->p[pt * A->p_ps + (int64_t)ra * A->p_es];                                \
    DUAL_VAL(dst)[0] = v_;                                                                       \
    st[0] |= DUAL_PT_NONFINITE(v_) ? DUAL_PT_BAD_INPUT : 0;                                      \
  }

/* Random draws run on the CPU only so far (run.c refuses such programs on the GPU before any
 * launch); NaN, should one ever get here. */
#define DUAL_ENGINE_RNORM() DUAL_VAL(dst)[0] = (double)NAN;
#define DUAL_ENGINE_RUNIF() DUAL_VAL(dst)[0] = (double)NAN;

/* A constant, its bits in the record's (oa, ob). */
#define DUAL_ENGINE_LDK() DUAL_VAL(dst)[0] = DUAL_FROM_BITS(oa, ob);

#endif /* DUAL_POINT_LOADS_H */
