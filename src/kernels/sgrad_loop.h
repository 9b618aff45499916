// sgrad_loop.h — dual_sgrad's sample loop for one GPU thread, shared by the first-order and the
// reverse-mode kernels (CUDA C++ only): run each sample of the point in order, fold its sample
// row into the running means (engine/sgrad_reduce.h, the CPU's code, so the bits match), then
// store E f, the gradient means and their standard errors.  Rows are S doubles apart.
#ifndef DUAL_SGRAD_LOOP_H
#define DUAL_SGRAD_LOOP_H

#include "engine/sgrad_reduce.h"
#include "kernels/gpu_kernel.h"

// `run(s)` evaluates sample s of the point into its sample row and returns its status flags.
template <class Run>
static __device__ __forceinline__ int dual_gpu_sgrad_point(const dual_gpu_sgrad &G, double *rows,
                                                           uint32_t S, int64_t pt, Run run) {
  const size_t fs = (size_t)(1 + G.n) * S; /* accumulator fields, entries S apart */
  double *row = rows + (size_t)G.row * S;
  double *acc = row + (size_t)(G.m + (int64_t)G.m * G.n) * S;
  const double *mean = acc + DUAL_SGRAD_MEAN * fs, *m2 = acc + DUAL_SGRAD_M2 * fs;
  const int64_t units = dual_sgrad_units(G.samples, G.antithetic);
  int st = 0;
  for (int64_t s = 0; s < G.samples; ++s) {
    st |= run(s);
    dual_sgrad_fold(row, S, G.n, G.score, s, units, G.antithetic, acc, S, (int64_t)fs);
  }
  if (G.y != NULL) G.y[pt * G.y_ps] = mean[0];
  for (int32_t j = 0; j < G.n; ++j) {
    const size_t r = (size_t)(1 + j) * S;
    if (G.d != NULL) G.d[pt * G.d_ps + (int64_t)j * G.d_cs] = mean[r];
    if (G.h != NULL) G.h[pt * G.h_ps + (int64_t)j * G.h_es] = dual_sgrad_se(m2[r], units);
  }
  return st;
}

#endif // DUAL_SGRAD_LOOP_H
