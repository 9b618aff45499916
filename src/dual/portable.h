/*
 * portable.h — the few macros that let src/dual headers compile as C11 and as CUDA C++.
 * Included by every header in src/dual and by the engines.  Keep this subset: no VLAs, no
 * _Generic, no allocation, no `restrict` keyword (use DUAL_RESTRICT).
 */
#ifndef DUAL_PORTABLE_H
#define DUAL_PORTABLE_H

#if defined(__CUDACC__)
#define DUAL_HD __host__ __device__
#else
#define DUAL_HD
#endif

/* Every op rule is `DUAL_INLINE`: inlined into the CPU interpreter and into the CUDA kernel. */
#if defined(__CUDACC__)
#define DUAL_INLINE static __forceinline__ __host__ __device__
#else
#define DUAL_INLINE static inline
#endif

#if defined(__CUDACC__) || defined(__cplusplus)
#define DUAL_RESTRICT __restrict__
#else
#define DUAL_RESTRICT restrict
#endif

/* Count trailing zeros of a nonzero 32-bit word. */
#if defined(__CUDA_ARCH__)
#define DUAL_CTZ(x) (__ffs((int)(x)) - 1)
#elif defined(__GNUC__) || defined(__clang__)
#define DUAL_CTZ(x) __builtin_ctz(x)
#else
DUAL_INLINE int dual_ctz_portable(unsigned x) {
  int n = 0;
  while (!(x & 1u)) x >>= 1, ++n;
  return n;
}
#define DUAL_CTZ(x) dual_ctz_portable(x)
#endif

/* Number of set bits of a 32-bit word. */
#if defined(__CUDA_ARCH__)
#define DUAL_POPC(x) __popc(x)
#elif defined(__GNUC__) || defined(__clang__)
#define DUAL_POPC(x) __builtin_popcount(x)
#else
DUAL_INLINE int dual_popc_portable(unsigned x) {
  int n = 0;
  for (; x; x &= x - 1u) ++n;
  return n;
}
#define DUAL_POPC(x) dual_popc_portable(x)
#endif

#endif /* DUAL_PORTABLE_H */
