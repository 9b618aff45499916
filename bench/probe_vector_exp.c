/*
 * probe_vector_exp.c — can the CPU compiled tier (issue 21) run the library's own elementary
 * functions as SIMD loops over points with the interpreter's bits?  The library's dual_exp
 * (src/dual/fn_exp.h) is inlined into a `#pragma omp simd` point loop in this file, which
 * bench/CMakeLists.txt compiles with the flags under test (-fno-trapping-math, gcc's
 * -mtune-ctrl=use_gather; no contraction, no fast math), and compared bit for bit and in time
 * with the library's out-of-line dual_exp over 2^20 inputs (-745 ... 710 and the specials).
 * Prints whether the loop's results are the library's, and the nanoseconds per exp of each.
 *
 *   dualbatch_probe_vector_exp
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dual/fn.h" /* the library's out-of-line dual_exp */

#undef DUAL_FN_H /* (nothing below redefines fn.h's names: the inline copy has its own) */
#include "dual/fn_bits.h"
#undef DUAL_FN
#define DUAL_FN static inline __attribute__((always_inline))
#define dual_exp inline_exp /* the inline copy under another name */
#define dual_exp2 inline_exp2
#define dual_expm1 inline_expm1
#include "dual/fn_exp.h"
#undef dual_exp

static void simd_exp(const double *restrict x, double *restrict y, int n) {
#pragma omp simd
  for (int i = 0; i < n; ++i) y[i] = inline_exp(x[i]);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
  enum { N = 1 << 20, REPS = 7 };
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
  if (x == NULL || y == NULL || z == NULL) return 1;
  for (int i = 0; i < N; ++i) x[i] = -745.0 + 1455.0 * ((double)i / N) + 1e-7 * (i % 13);
  const double special[] = {NAN, INFINITY, -INFINITY, 1e-310, -0.0, 0.0, 708.0, 709.79, -745.5, 710.0};
  memcpy(x, special, sizeof special);
  double best_simd = 1e30, best_call = 1e30;
  for (int r = 0; r < REPS; ++r) {
    const double t0 = now();
    simd_exp(x, y, N);
    const double t1 = now();
    for (int i = 0; i < N; ++i) z[i] = dual_exp(x[i]);
    const double t2 = now();
    best_simd = t1 - t0 < best_simd ? t1 - t0 : best_simd;
    best_call = t2 - t1 < best_call ? t2 - t1 : best_call;
  }
  long differ = 0;
  for (int i = 0; i < N; ++i) differ += memcmp(&y[i], &z[i], sizeof y[i]) != 0;
  printf("dual_exp over %d inputs: %ld differ from the library's; SIMD loop %.2f ns, library call %.2f ns "
         "per exp (%.2fx)\n", N, differ, best_simd / N * 1e9, best_call / N * 1e9, best_call / best_simd);
  free(x), free(y), free(z);
  return differ != 0;
}
