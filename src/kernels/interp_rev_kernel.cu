// interp_rev_kernel.cu — the GPU reverse-mode interpreter: two pre-built kernels (reverse mode,
// forward-over-reverse) run every program's reverse sweeps (engine/interp_rev.h, the CPU's code)
// one thread per point, through the per-point storage of interp_rev_point.h.  A block's storage
// is a global slab laid out [row][thread]; each thread clears its adjoint and derivative rows
// once (the sweeps leave them zero) and then takes points grid-stride.  Compiled with
// --fmad=false so that a*b+c rounds as on the CPU: results equal the CPU engine's bit for bit.
#include <stdint.h>

#include "kernels/interp_rev_point.h"

#define DUAL_GPU_REV_MIN_BLOCKS 8
#define DUAL_GPU_FOR_MIN_BLOCKS 5 /* 102 registers: the pair sweeps run without spills */

// The first-order kernel (FOR 0) and the forward-over-reverse one (FOR 1) are compiled apart,
// so each gets its own register allocation.
template <int FOR>
__global__ void __launch_bounds__(DUAL_GPU_REV_THREADS, FOR ? DUAL_GPU_FOR_MIN_BLOCKS : DUAL_GPU_REV_MIN_BLOCKS)
    dual_gpu_interp_rev(const dual_gpu_rev_args A) {
  const uint32_t S = blockDim.x;
  double *base = A.scratch + (size_t)blockIdx.x * (size_t)A.slab + threadIdx.x;
  for (uint32_t r = (uint32_t)A.o_adj; r < (uint32_t)A.o_scratch; ++r) base[r * S] = 0.0;
  const int64_t stride = (int64_t)gridDim.x * S;
  for (int64_t pt = (int64_t)blockIdx.x * S + threadIdx.x; pt < A.count; pt += stride) {
    const int st = FOR ? dual_rev_point_run_for(&A, base, S, pt) : dual_rev_point_run(&A, base, S, pt);
    if (A.status != NULL) A.status[pt] = st;
  }
}

template <int FOR> static cudaError_t blocks_per_sm(int *blocks) {
  cudaError_t e = cudaFuncSetAttribute((const void *)dual_gpu_interp_rev<FOR>,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, 0);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, dual_gpu_interp_rev<FOR>, DUAL_GPU_REV_THREADS, 0);
  return e;
}

extern "C" int dual_gpu_kernel_rev_blocks_per_sm(int second, int *blocks) {
  return (int)(second ? blocks_per_sm<1>(blocks) : blocks_per_sm<0>(blocks));
}

extern "C" int dual_gpu_kernel_rev_launch(const dual_gpu_rev_args *args, int64_t blocks, void *stream) {
  if (args->second)
    dual_gpu_interp_rev<1><<<(unsigned)blocks, DUAL_GPU_REV_THREADS, 0, (cudaStream_t)stream>>>(*args);
  else
    dual_gpu_interp_rev<0><<<(unsigned)blocks, DUAL_GPU_REV_THREADS, 0, (cudaStream_t)stream>>>(*args);
  return (int)cudaGetLastError();
}
