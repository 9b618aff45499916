/*
 * test_stage_copy.c — the GPU staging path's host copies (src/stage_copy.h) against the layout's
 * definition entry by entry: contiguous arrays (one run per chunk), padded points (a run per
 * point or row), strided entries, picked columns in one run or scattered, 1 and 4 threads, chunks
 * below and above the size that goes parallel.  The bits must come through unchanged (NaN
 * payloads, -0).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stage_copy.h"

/* Distinct bit patterns, some of them NaNs with payloads and signed zeros. */
static double pattern(int64_t i) {
  uint64_t b = 0x3ff0000000000000ull + (uint64_t)i * 0x9e3779b97f4a7c15ull % 0x000fffffffffffffull;
  if (i % 97 == 3) b = 0x7ff4000000000000ull | (uint64_t)i; /* a signaling NaN with a payload */
  if (i % 89 == 5) b = 0x8000000000000000ull;                /* -0 */
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

Test(stage_copy, gather_follows_the_layout) {
  const struct { int64_t ps, es, len; } cases[] = {{5, 1, 5}, {7, 1, 5}, {10, 2, 5}, {1, 3, 1}, {3, 1, 3}};
  const int64_t cs_[] = {3, 1000, 40000};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
    for (size_t q = 0; q < 3; ++q)
      for (int threads = 1; threads <= 4; threads += 3) {
        const int64_t ps = cases[k].ps, es = cases[k].es, len = cases[k].len, c = cs_[q], p0 = 11;
        const int64_t n = (p0 + c) * ps + len * es;
        double *src = malloc(sizeof(double) * (size_t)n), *dst = malloc(sizeof(double) * (size_t)(c * len));
        for (int64_t i = 0; i < n; ++i) src[i] = pattern(i);
        memset(dst, 0xab, sizeof(double) * (size_t)(c * len));
        dual_stage_gather(src, ps, es, p0, c, len, dst, threads);
        for (int64_t i = 0; i < c; ++i)
          for (int64_t j = 0; j < len; ++j)
            cr_assert(memcmp(&dst[i * len + j], &src[(p0 + i) * ps + j * es], sizeof(double)) == 0,
                      "ps %lld es %lld len %lld c %lld threads %d: point %lld entry %lld", (long long)ps, (long long)es,
                      (long long)len, (long long)c, threads, (long long)i, (long long)j);
        free(src), free(dst);
      }
}

Test(stage_copy, scatter_follows_the_layout) {
  /* rows x cols results per point; the caller's point, row and column strides; picked columns */
  static const int32_t run[] = {2, 3, 4}, apart[] = {0, 2, 5};
  const struct { int64_t rows, cols, ps, rs, cs; const int32_t *pick; int32_t npick; } cases[] = {
      {2, 6, 12, 6, 1, NULL, 0},   /* contiguous: one run per chunk */
      {2, 6, 15, 7, 1, NULL, 0},   /* padded rows and points: a run per row */
      {2, 6, 12, 6, 1, run, 3},    /* picked columns in one run */
      {2, 6, 12, 6, 1, apart, 3},  /* picked columns apart */
      {2, 6, 12, 1, 2, NULL, 0},   /* column-major rows */
      {1, 1, 1, 1, 1, NULL, 0},    /* one value a point */
  };
  const int64_t cs_[] = {3, 1000, 20000};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
    for (size_t q = 0; q < 3; ++q)
      for (int threads = 1; threads <= 4; threads += 3) {
        const int64_t rows = cases[k].rows, cols = cases[k].cols, len = rows * cols, c = cs_[q], p0 = 7;
        const int64_t ps = cases[k].ps, rs = cases[k].rs, cs = cases[k].cs;
        const int64_t n = (p0 + c) * ps;
        double *src = malloc(sizeof(double) * (size_t)(c * len)), *dst = malloc(sizeof(double) * (size_t)n),
               *want = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < c * len; ++i) src[i] = pattern(i + 5);
        for (int64_t i = 0; i < n; ++i) dst[i] = want[i] = pattern(-i - 1); /* entries not written keep theirs */
        const int64_t nk = cases[k].pick != NULL ? cases[k].npick : cols;
        for (int64_t i = 0; i < c; ++i)
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < nk; ++j) {
              const int64_t col = cases[k].pick != NULL ? cases[k].pick[j] : j;
              want[(p0 + i) * ps + r * rs + col * cs] = src[i * len + r * cols + col];
            }
        dual_stage_scatter(src, len, cols, cases[k].pick, cases[k].npick, dst, ps, rs, cs, p0, c, threads);
        cr_assert(memcmp(dst, want, sizeof(double) * (size_t)n) == 0, "case %zu, c %lld, threads %d", k, (long long)c,
                  threads);
        free(src), free(dst), free(want);
      }
}
