// interp_rev_kernel.cu — the GPU reverse-mode interpreter: two pre-built kernels (reverse mode,
// forward-over-reverse) run every program's reverse sweeps (engine/interp_rev.h, the CPU's code)
// one thread per point, through the per-point storage of interp_rev_point.h.  A block's storage
// is a global slab laid out [row][thread]; each thread clears its adjoint and derivative rows
// once (the sweeps leave them zero), and its register rows when checkpoints copy them, and then
// takes points grid-stride.  Compiled with
// --fmad=false so that a*b+c rounds as on the CPU: results equal the CPU engine's bit for bit.
#include <stdint.h>

#include "kernels/interp_rev_point.h"
#include "kernels/sgrad_loop.h"

#define DUAL_GPU_REV_MIN_BLOCKS 8
#define DUAL_GPU_FOR_MIN_BLOCKS 5 /* 102 registers: the pair sweeps run without spills */

// The first-order kernel (KIND 0), the forward-over-reverse one (KIND 1) and dual_sgrad's
// reverse-mode sample loop (KIND 2) are compiled apart, so each gets its own register
// allocation.
template <int KIND>
__global__ void __launch_bounds__(DUAL_GPU_REV_THREADS, KIND == 1 ? DUAL_GPU_FOR_MIN_BLOCKS : DUAL_GPU_REV_MIN_BLOCKS)
    dual_gpu_interp_rev(const dual_gpu_rev_args A) {
  const uint32_t S = blockDim.x;
  double *base = A.scratch + (size_t)blockIdx.x * (size_t)A.slab + threadIdx.x;
  for (uint32_t r = (uint32_t)A.o_adj; r < (uint32_t)A.o_scratch; ++r) base[r * S] = 0.0;
  // A checkpoint copies every register row, those the program has not reached yet included:
  // clear them once, so no snapshot reads memory nothing wrote (compute-sanitizer's initcheck).
  if (A.nseg > 1)
    for (uint32_t r = (uint32_t)A.o_val; r < (uint32_t)A.o_snap; ++r) base[r * S] = 0.0;
  const int64_t stride = (int64_t)gridDim.x * S;
  for (int64_t pt = (int64_t)blockIdx.x * S + threadIdx.x; pt < A.count; pt += stride) {
    int st;
    if (KIND == 1)
      st = dual_rev_point_run_for(&A, base, S, pt);
    else if (KIND == 2) // dual_sgrad: every sample of the point (kernels/sgrad_loop.h)
      st = dual_gpu_sgrad_point(A.sg, base, S, pt, [&](int64_t s) { return dual_rev_point_run(&A, base, S, pt, s); });
    else
      st = dual_rev_point_run(&A, base, S, pt, 0);
    if (A.status != NULL) A.status[pt] = st;
  }
}

typedef void (*dual_gpu_rev_fn)(const dual_gpu_rev_args);

static dual_gpu_rev_fn rev_kernel(int kind) {
  return kind == 1 ? dual_gpu_interp_rev<1> : kind == 2 ? dual_gpu_interp_rev<2> : dual_gpu_interp_rev<0>;
}

extern "C" int dual_gpu_kernel_rev_blocks_per_sm(int kind, int *blocks) {
  const dual_gpu_rev_fn fn = rev_kernel(kind);
  cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
  if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, fn, DUAL_GPU_REV_THREADS, 0);
  return (int)e;
}

extern "C" int dual_gpu_kernel_rev_launch(const dual_gpu_rev_args *args, int64_t blocks, void *stream) {
  const dual_gpu_rev_fn fn = rev_kernel(args->second ? 1 : args->sg.samples > 0 ? 2 : 0);
  fn<<<(unsigned)blocks, DUAL_GPU_REV_THREADS, 0, (cudaStream_t)stream>>>(*args);
  return (int)cudaGetLastError();
}
