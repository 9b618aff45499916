// sgrad_combine.cu — the last step of dual_sgrad split over sample blocks (the compiled tier's
// small batches, kernels/gpu_run.c): one thread per point and entry folds the point's blocks in
// order with Chan's formula (engine/sgrad_reduce.h, the CPU's code: the same bits as one thread
// running every sample) and stores E f, a gradient entry and its standard error.
#include <stdint.h>

#include "engine/sgrad_reduce.h"
#include "kernels/gpu_kernel.h"

__global__ void dual_gpu_sgrad_combine_kernel(const dual_gpu_sgrad_split A) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= A.count * A.entries) return;
  const int64_t pt = i / A.entries, e = i - pt * A.entries;
  double mean, m2;
  dual_sgrad_combine_blocks(A.part, A.parts, A.entries, A.units, pt, e, &mean, &m2);
  int st = 0;
  for (int64_t k = 0; e == 0 && k < A.parts; ++k) st |= A.pstatus[pt * A.parts + k];
  if (e == 0) {
    if (A.y != NULL) A.y[pt * A.y_ps] = mean;
    if (A.status != NULL) A.status[pt] = st;
    return;
  }
  if (A.d != NULL) A.d[pt * A.d_ps + (e - 1) * A.d_cs] = mean;
  if (A.h != NULL) A.h[pt * A.h_ps + (e - 1) * A.h_es] = dual_sgrad_se(m2, A.units);
}

extern "C" int dual_gpu_sgrad_combine(const dual_gpu_sgrad_split *a, void *stream) {
  const int64_t n = a->count * a->entries;
  if (n == 0) return (int)cudaSuccess;
  const int threads = 256;
  dual_gpu_sgrad_combine_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0,
                                  (cudaStream_t)stream>>>(*a);
  return (int)cudaGetLastError();
}
