/*
 * portable.h — the few macros that let src/dual headers compile as C11, as CUDA C++ (nvcc) and
 * under NVRTC (the compiled GPU tier), and their one door to the C standard library.
 * Included by every header in src/dual and by the engines.  Keep this subset: no VLAs, no
 * _Generic, no allocation, no `restrict` keyword (use DUAL_RESTRICT).
 */
#ifndef DUAL_PORTABLE_H
#define DUAL_PORTABLE_H

/* The C standard library, for every shared header (they include it only through this file): its
 * headers on the host and under nvcc; under NVRTC, which has none, the few names the shared
 * headers use (the math functions themselves and memcpy are NVRTC built-ins).  No host-only
 * code is reachable from here. */
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT32_MAX 4294967295u
#ifndef NULL
#define NULL 0
#endif
#define DBL_MAX 1.79769313486231570815e+308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_EPSILON 2.22044604925031308085e-16
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#else
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif


#if defined(__CUDACC__)
#define DUAL_HD __host__ __device__
#else
#define DUAL_HD
#endif

/* Every op rule is `DUAL_INLINE`: inlined into the CPU interpreter and into the CUDA kernel. */
#if defined(__CUDACC__)
#define DUAL_INLINE static __forceinline__ __host__ __device__
#elif defined(DUAL_FN_JIT_CPU) && (defined(__GNUC__) || defined(__clang__))
/* the CPU compiled tier's generated code (jit/cpu_kernel.h): always, so that its point loops see
 * every helper's arithmetic and vectorize (gcc keeps a helper called from two places, such as
 * the sine kernel of sin and cos, out of line, and the loop scalar) */
#define DUAL_INLINE static inline __attribute__((always_inline, unused))
#else
#define DUAL_INLINE static inline
#endif

#if defined(__CUDACC__) || defined(__cplusplus)
#define DUAL_RESTRICT __restrict__
#else
#define DUAL_RESTRICT restrict
#endif

/* A table of n double constants for both sides: DUAL_CONST_TABLE(name, n, VALUES) defines a
 * __device__ copy for device code (when compiled by CUDA) and a host copy, and DUAL_TABLE(name)
 * names the one the code being compiled reads.  VALUES is a macro of the comma-separated list. */
#if defined(__CUDACC__)
#define DUAL_CONST_TABLE(name, n, values)                                                         \
  static __device__ const double name##_dev[n] = {values};                                       \
  static const double name##_host[n] = {values};
#else
#define DUAL_CONST_TABLE(name, n, values) static const double name##_host[n] = {values};
#endif
#if defined(__CUDA_ARCH__)
#define DUAL_TABLE(name) name##_dev
#else
#define DUAL_TABLE(name) name##_host
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
