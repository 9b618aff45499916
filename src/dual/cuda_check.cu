// cuda_check.cu — compiles the shared rule headers as CUDA so a change that leaves the
// C11 ∩ CUDA subset fails the build on any machine with nvcc (no GPU needed).
#include "dual/apply_rule.h"

__global__ void dual_cuda_header_check_kernel(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double d[3];
  int flags = 0;
  double acc = 0.0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) acc += dual_apply_rule(op, x[i], 0.5, 0.25, d, &flags) + d[0];
  y[i] = acc + (double)flags;
}
