/*
 * cuda_shim.h — just enough of CUDA for a generated kernel (src/jit) to compile as host C++ and
 * run one warp as 32 threads (tests/jit_host/run_warp.c): the qualifiers, threadIdx and friends
 * for one block of one warp, __syncwarp and __any_sync on a barrier, the bit intrinsics, __ldg
 * and unsigned max.
 * Shared memory is `static` (one copy, seen by the 32 threads).  Test code only: it lets CI check
 * the generator's staging, flushes and guarded rerun bit for bit against the CPU engine without
 * a GPU.  Compiled with -include into each generated module.
 */
#ifndef DUAL_CUDA_SHIM_H
#define DUAL_CUDA_SHIM_H

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static

struct dual_shim_dim {
  unsigned x, y, z;
};
static thread_local dual_shim_dim threadIdx = {0, 0, 0};
static const dual_shim_dim blockIdx = {0, 0, 0}, blockDim = {32, 1, 1}, gridDim = {1, 1, 1};

static pthread_barrier_t dual_shim_barrier;
static int dual_shim_votes[32];

static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)mask;
  pthread_barrier_wait(&dual_shim_barrier);
}

static inline int __any_sync(unsigned mask, int pred) {
  (void)mask;
  dual_shim_votes[threadIdx.x] = pred != 0;
  pthread_barrier_wait(&dual_shim_barrier);
  int any = 0;
  for (int i = 0; i < 32; ++i) any |= dual_shim_votes[i];
  pthread_barrier_wait(&dual_shim_barrier);
  return any;
}

template <class T> static inline T __ldg(const T *p) { return *p; }

static inline int __double2hiint(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return (int)(uint32_t)(b >> 32);
}
static inline int __double2loint(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return (int)(uint32_t)b;
}
static inline double __longlong_as_double(long long v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}
static inline float __int_as_float(int v) {
  float f;
  memcpy(&f, &v, 4);
  return f;
}

static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

/* The runner's entry points: set up the barrier once, and the calling thread's lane. */
extern "C" void dual_shim_init(void) { pthread_barrier_init(&dual_shim_barrier, NULL, 32); }
extern "C" void dual_shim_set_lane(int lane) { threadIdx.x = (unsigned)lane; }

#endif /* DUAL_CUDA_SHIM_H */
