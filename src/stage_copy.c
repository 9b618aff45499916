/*
 * stage_copy.c — the staging path's host copies (stage_copy.h).
 */
#include "stage_copy.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Copies of fewer doubles than this stay on one thread. */
enum { PARALLEL_MIN = 65536 };

/* n doubles from src to dst, in `threads` contiguous pieces. */
static void copy_shared(double *dst, const double *src, int64_t n, int threads) {
  if (n < PARALLEL_MIN || threads <= 1) {
    memcpy(dst, src, (size_t)n * sizeof(double));
    return;
  }
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const int64_t t = omp_get_thread_num(), T = omp_get_num_threads();
#else
    const int64_t t = 0, T = 1;
#endif
    const int64_t per = (n + T - 1) / T, a = t * per, b = a + per < n ? a + per : n;
    if (a < b) memcpy(dst + a, src + a, (size_t)(b - a) * sizeof(double));
  }
}

void dual_stage_gather(const double *src, int64_t ps, int64_t es, int64_t p0, int64_t c, int64_t len, double *dst,
                       int threads) {
  if (src == NULL || len == 0 || c <= 0) return;
  if (es == 1 && ps == len) { /* the chunk is one run of c * len doubles */
    copy_shared(dst, src + p0 * ps, c * len, threads);
    return;
  }
  if (es == 1) { /* a run of len doubles per point */
#pragma omp parallel for num_threads(threads) schedule(static) if (c * len >= PARALLEL_MIN)
    for (int64_t i = 0; i < c; ++i) memcpy(dst + i * len, src + (p0 + i) * ps, (size_t)len * sizeof(double));
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (c * len >= PARALLEL_MIN)
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = 0; j < len; ++j) dst[i * len + j] = src[(p0 + i) * ps + j * es];
}

void dual_stage_scatter(const double *src, int64_t len, int64_t cols, const int32_t *pick, int32_t npick,
                        double *dst, int64_t ps, int64_t rs, int64_t cs, int64_t p0, int64_t c, int threads) {
  if (c <= 0 || len == 0) return;
  if (cols <= 0) cols = 1;
  const int64_t rows = len / cols, nk = pick != NULL ? npick : cols, k0 = pick != NULL && npick > 0 ? pick[0] : 0;
  int run = cs == 1; /* the columns copied are one run in the caller's rows */
  for (int32_t j = 0; run && pick != NULL && j < npick; ++j) run = pick[j] == k0 + j;
  if (run && k0 == 0 && nk == cols && rs == cols && ps == len) { /* the chunk is one run */
    copy_shared(dst + p0 * ps, src, c * len, threads);
    return;
  }
  if (run) { /* a run of nk doubles per row */
#pragma omp parallel for num_threads(threads) schedule(static) if (c * rows * nk >= PARALLEL_MIN)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t r = 0; r < rows; ++r)
        memcpy(dst + (p0 + i) * ps + r * rs + k0, src + i * len + r * cols + k0, (size_t)nk * sizeof(double));
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (c * rows * nk >= PARALLEL_MIN)
  for (int64_t i = 0; i < c; ++i) {
    const int64_t pt = p0 + i;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < nk; ++j) {
        const int64_t k = pick != NULL ? pick[j] : j;
        dst[pt * ps + r * rs + k * cs] = src[i * len + r * cols + k];
      }
  }
}
