/*
 * sgrad_reduce.h — dual_sgrad's reduction over samples, shared by the CPU driver
 * (cpu/engine_sgrad.c), the GPU interpreter (kernels/sgrad_loop.h) and the compiled tier's
 * generated kernels (jit/jit_source.c) so all produce the same bits.  After each sample the
 * point's results — its sample row — are folded into running means and sums of squared
 * deviations (Welford's update, in sample order); nothing of size samples x points is kept.
 *
 * A sample row holds the program's m outputs, then its m gradient rows of n entries
 * (row[m + i*n + j] = d out_i / d x_j), consecutive entries `es` doubles apart.  Pathwise
 * (m = 1): the sample's f and gradient.  Score-function (m = 2, sgrad_score.c): f, the log
 * density L of the draws, and the per-sample gradient is grad f + f grad L.  The accumulators
 * (pend, mean, m2) hold 1 + n entries each, f first, with the same spacing.  With antithetic
 * sampling a unit is the mean of samples 2j and 2j + 1 (the first waits in pend).  Valid C11 and
 * CUDA.
 */
#ifndef DUAL_ENGINE_SGRAD_REDUCE_H
#define DUAL_ENGINE_SGRAD_REDUCE_H

#include "dual/portable.h" /* math.h, stdint.h; NVRTC: built-ins */

/* Units of the estimate: samples, or pairs of samples with antithetic sampling. */
DUAL_INLINE int64_t dual_sgrad_units(int64_t samples, int antithetic) {
  return antithetic ? samples / 2 : samples;
}

/* Entry 1 + j of a sample's unit value: the gradient entry g = d f / d x_j, plus f * gl
 * (gl = d L / d x_j) with the score function. */
DUAL_INLINE double dual_sgrad_entry(double f, double g, double gl, int score) {
  return score ? g + f * gl : g;
}

/* Fold one entry's value u of sample `sample` (0, 1, 2, ... in order) into its accumulators
 * (*pend, *mean, *m2).  Entries fold independently, so a caller may fold any subset of a sample's
 * entries (the compiled tier folds each pass's columns: jit/jit_source.c). */
DUAL_INLINE void dual_sgrad_fold_entry(double u, int64_t sample, int antithetic, double *pend,
                                       double *mean, double *m2) {
  const int64_t unit = antithetic ? sample >> 1 : sample;
  if (antithetic && !(sample & 1)) {
    *pend = u;
    return;
  }
  if (antithetic) u = 0.5 * (*pend + u);
  if (unit == 0) {
    *mean = u;
    *m2 = 0.0;
  } else {
    const double d = u - *mean;
    const double mu = *mean + d / (double)(unit + 1);
    *mean = mu;
    *m2 = *m2 + d * (u - mu);
  }
}

/* Fold sample `sample` (0, 1, 2, ... in order) of one point into its accumulators. */
DUAL_INLINE void dual_sgrad_fold(const double *row, int64_t es, int32_t n, int score,
                                 int64_t sample, int antithetic, double *pend, double *mean,
                                 double *m2) {
  const int32_t m = score ? 2 : 1;
  const double f = row[0];
  for (int32_t c = 0; c <= n; ++c) {
    const int64_t at = (int64_t)c * es;
    const double u = c == 0 ? f
                     : dual_sgrad_entry(f, row[(int64_t)(m + c - 1) * es],
                                        score ? row[(int64_t)(m + n + c - 1) * es] : 0.0, score);
    dual_sgrad_fold_entry(u, sample, antithetic, pend + at, mean + at, m2 + at);
  }
}

/* The standard error of a mean over `units` units (>= 2) from its sum of squared deviations. */
DUAL_INLINE double dual_sgrad_se(double m2, int64_t units) {
  return sqrt(m2 / ((double)(units - 1) * (double)units));
}

#endif /* DUAL_ENGINE_SGRAD_REDUCE_H */
