/*
 * test_arrays.h — small helpers the cross-checking tests share (header-only, Criterion
 * assertions): bitwise comparison with NaN equal to NaN, random arrays, contexts with an AD mode,
 * compiling program text that must compile,
 * the skip of GPU tests on machines without a device, and copies to device memory (CUDA builds).
 */
#ifndef DUAL_TEST_ARRAYS_H
#define DUAL_TEST_ARRAYS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dualbatch.h"
#include "random_program.h"

/* Equal bits, or both NaN (IEEE 754 leaves a NaN result's sign and payload open). */
static inline int same_bits(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* `count` uniform values in [lo, hi) (one spare element, so count 0 still allocates). */
static inline double *random_array(uint64_t *rng, int64_t count, double lo, double hi) {
  double *a = (double *)malloc(sizeof(double) * (size_t)(count + 1));
  cr_assert(a);
  for (int64_t i = 0; i < count; ++i) a[i] = rp_uniform(rng, lo, hi);
  return a;
}

/* A context on `device` with an AD mode (dual_ad_mode) and a thread count (0 = all cores). */
static inline dual_context *mode_context(int device, int ad_mode, int threads) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, device), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_ad_mode(ctx, ad_mode), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx, threads), DUAL_SUCCESS);
  return ctx;
}

/* A context on `device` with the AD mode forced to reverse (the reverse-mode cross-checks). */
static inline dual_context *reverse_context(int device) {
  return mode_context(device, DUAL_AD_REVERSE, 0);
}

/* Program text that must compile (the diagnostics are the failure message). */
static inline dual_program *compile_ok(dual_context *ctx, const char *src) {
  dual_program *prog = NULL;
  cr_assert_eq(dual_program_compile(ctx, src, "test", &prog), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  return prog;
}

/* GPU tests skip (and say why) where no CUDA device is usable. */
static inline void need_gpu(void) {
  if (dual_device_count() == 0) cr_skip_test("no CUDA device (or a build without CUDA)");
}

#ifdef DUAL_HAVE_CUDA
/* A device copy of `bytes` of host memory (uninitialized when host is NULL). */
static inline void *to_device(const void *host, size_t bytes) {
  void *d = NULL;
  cr_assert_eq(cudaMalloc(&d, bytes + 8), cudaSuccess);
  if (host != NULL) cr_assert_eq(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}
#endif

#endif /* DUAL_TEST_ARRAYS_H */
