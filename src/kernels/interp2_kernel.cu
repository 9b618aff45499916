// interp2_kernel.cu — the GPU interpreter of second-order passes (Hessians, HVPs): one pre-built
// kernel runs every program, one thread per point, over the plan of engine/plan2.h.  The op
// cases, rules and both propagation steps are the CPU's (engine/interp_ops.h,
// engine/interp2_ops.h, dual/rules.h) through the per-point interpreter of interp2_point.h.
// A block's register file is a global slab laid out [row][thread], so a warp's accesses are
// consecutive doubles.  Compiled with --fmad=false so that a*b+c rounds as on the CPU.
#include <stdint.h>

#include "kernels/interp2_point.h"

#define DUAL_GPU2_MIN_BLOCKS 4

__global__ void __launch_bounds__(DUAL_GPU2_THREADS, DUAL_GPU2_MIN_BLOCKS)
    dual_gpu_interp2(const dual_gpu_args2 A) {
  const uint32_t S = blockDim.x;
  double *R = A.scratch + (size_t)blockIdx.x * (size_t)A.slab;
  double *V = R + threadIdx.x;
  double *T = R + (size_t)A.n_regs * S + threadIdx.x;
  const int64_t stride = (int64_t)gridDim.x * S;
  for (int64_t pt = (int64_t)blockIdx.x * S + threadIdx.x; pt < A.count; pt += stride) {
    const int st = dual_point2_run(&A, V, T, S, pt);
    if (A.status != NULL) A.status[pt] = A.first_pass ? st : (A.status[pt] | st);
  }
}

extern "C" int dual_gpu_kernel2_blocks_per_sm(int *blocks) {
  cudaError_t e = cudaFuncSetAttribute((const void *)dual_gpu_interp2,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, 0);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, dual_gpu_interp2, DUAL_GPU2_THREADS, 0);
  return (int)e;
}

extern "C" int dual_gpu_kernel2_launch(const dual_gpu_args2 *args, int64_t blocks, void *stream) {
  dual_gpu_interp2<<<(unsigned)blocks, DUAL_GPU2_THREADS, 0, (cudaStream_t)stream>>>(*args);
  return (int)cudaGetLastError();
}
