/*
 * point_loads.h — what the GPU's per-point interpreters of first order (interp_point.h) and
 * second order (interp2_point.h) share: the function qualifier, a constant from the two words of
 * its bits, the NaN/Inf flag tests, the load of a parameter and the random draws.  Valid C11 and CUDA.  The
 * includer has A (its launch arguments, with p, p_ps, p_es, sg), pt, ra, dst, st[1] and DUAL_VAL in
 * scope where the macros expand, and defines DUAL_DRAW_SAMPLE and DUAL_POINT_DRAWS (0 or 1).
 */
#ifndef DUAL_POINT_LOADS_H
#define DUAL_POINT_LOADS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dualbatch.h"
#include "engine/draws.h"

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

/* Random draw ra of the point in sample DUAL_DRAW_SAMPLE (the includer defines it). */
#define DUAL_ENGINE_DRAW(normal)                                                                 \
  DUAL_VAL(dst)[0] = dual_draw_value(normal, A->sg.seed, A->sg.point0 + pt, DUAL_DRAW_SAMPLE,     \
                                     A->sg.antithetic, (int32_t)ra);
/* An instance compiled without draws (DUAL_POINT_DRAWS 0, never given a program that makes
 * them: gpu_run.c) stores NaN instead of carrying the generator's code. */
#define DUAL_ENGINE_RNORM()                                                                      \
  if (DUAL_POINT_DRAWS) {                                                                        \
    DUAL_ENGINE_DRAW(1)                                                                          \
  } else {                                                                                       \
    DUAL_VAL(dst)[0] = (double)NAN;                                                              \
  }
#define DUAL_ENGINE_RUNIF()                                                                      \
  if (DUAL_POINT_DRAWS) {                                                                        \
    DUAL_ENGINE_DRAW(0)                                                                          \
  } else {                                                                                       \
    DUAL_VAL(dst)[0] = (double)NAN;                                                              \
  }

/* A constant, its bits in the record's (oa, ob). */
#define DUAL_ENGINE_LDK() DUAL_VAL(dst)[0] = DUAL_FROM_BITS(oa, ob);

#endif /* DUAL_POINT_LOADS_H */
