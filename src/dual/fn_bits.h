/*
 * fn_bits.h — bit access and exact scaling for the library's own elementary functions (fn_*.h).
 * The fn_*.h headers implement every transcendental op with +, -, *, /, sqrt, fma, floor and bit
 * manipulation only, all correctly rounded or exact in IEEE 754 on the CPU (-ffp-contract=off)
 * and on the GPU (--fmad=false), so the two engines return bitwise-identical values and partials.
 * Valid C11 and CUDA; included by the fn_*.h headers only.
 */
#ifndef DUAL_FN_BITS_H
#define DUAL_FN_BITS_H

#include "portable.h" /* math.h, stdint.h, string.h */

/* The public functions (dual_exp, dual_sin, ...): inlined into the GPU kernel; on the CPU, one
 * out-of-line definition in src/dual/fn.c (DUAL_FN_EXTERN), which the engines call like libm.
 * Inlined into the CPU engine's vectorized block loops, or even only defined in its translation
 * unit, they cost kin 5-8% (bench/NOTES.md).  A file that includes the fn_*.h headers directly
 * (the accuracy tests) gets its own static copy.  The arithmetic is the same in every case. */
#if defined(__CUDACC__) && defined(DUAL_FN_OUTLINE)
/* a generated kernel of many elementary functions (jit/jit_rev_segments.c): called, not inlined
 * at every use, so NVRTC compiles each once */
#define DUAL_FN static __noinline__ __device__
#elif defined(__CUDACC__)
#define DUAL_FN DUAL_INLINE
#elif defined(DUAL_FN_EXTERN)
#define DUAL_FN
#elif defined(DUAL_FN_JIT_CPU) && defined(DUAL_FN_OUTLINE) && (defined(__GNUC__) || defined(__clang__))
/* a CPU module of many elementary functions (jit/jit_source.c: outline_functions): each a SIMD
 * clone (OpenMP `declare simd`), which the compiler makes once per module, instead of a copy
 * inlined at every use (gcc 12 -O1 took 20-130 ms a use: 200 uses of log1p, 27 s).  dual_sincos,
 * which returns through pointers, is dual_sin and dual_cos then (fn_trig.h) */
#define DUAL_FN _Pragma("omp declare simd notinbranch") static __attribute__((noinline, unused))
#elif defined(DUAL_FN_JIT_CPU) && (defined(__GNUC__) || defined(__clang__))
/* the CPU compiled tier's generated code (jit/cpu_kernel.h): inlined into its point loops, which
 * then vectorize across points (always: gcc would otherwise keep a function called from many
 * places out of line, and the loop scalar) */
#define DUAL_FN static inline __attribute__((always_inline, unused))
#elif defined(DUAL_FN_JIT_CPU)
#define DUAL_FN static inline
#elif defined(__GNUC__) || defined(__clang__)
#define DUAL_FN static __attribute__((noinline, unused))
#else
#define DUAL_FN static
#endif

/* A public function whose control flow keeps a point loop it is inlined into scalar (gcc 12: pow,
 * atan, atan2, erf, erfc; bench/probe_vector_fn.sh, bench/results/probe-vector-fn-2026-11-29.txt;
 * sin, cos and tan vectorize around clones of their rare path instead, fn_trig.h): in the CPU
 * compiled tier's code a SIMD clone (OpenMP `declare simd`) instead, so the loop vectorizes
 * around a call that runs the function lane by lane.  Elsewhere the same as DUAL_FN. */
#if defined(DUAL_FN_JIT_CPU) && !defined(__CUDACC__) && (defined(__GNUC__) || defined(__clang__))
#define DUAL_FN_CLONE _Pragma("omp declare simd notinbranch") static __attribute__((noinline, unused))
#else
#define DUAL_FN_CLONE DUAL_FN
#endif

DUAL_INLINE uint64_t dual_bits(double x) {
#if defined(__CUDA_ARCH__)
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
#endif
}

DUAL_INLINE double dual_from_bits(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/* The high 32 bits (sign, exponent, top 20 mantissa bits), as fdlibm-style range tests use. */
DUAL_INLINE uint32_t dual_high_word(double x) { return (uint32_t)(dual_bits(x) >> 32); }

/* 2^k for k in [-1022, 1023] (a normal number), exactly. */
DUAL_INLINE double dual_pow2i(int k) { return dual_from_bits((uint64_t)(k + 1023) << 52); }

/* x * 2^k, exactly when the result is normal, rounded once when it is subnormal, +-inf on
 * overflow; for k in [-2100, 2100].  Up to three exact steps keep every partial product normal
 * except the last. */
DUAL_INLINE double dual_scale2(double x, int k) {
  if (k > 1023) {
    x *= 0x1p1023;
    k -= 1023;
    if (k > 1023) {
      x *= 0x1p1023;
      k -= 1023;
      if (k > 1023) k = 1023;
    }
  } else if (k < -1022) {
    /* scale by 2^-1022 * 2^53 so the intermediate stays normal, finish with one rounding */
    x *= 0x1p-969;
    k += 969;
    if (k < -1022) {
      x *= 0x1p-969;
      k += 969;
      if (k < -1022) k = -1022;
    }
  }
  return x * dual_pow2i(k);
}

#endif /* DUAL_FN_BITS_H */
