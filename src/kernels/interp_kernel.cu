// interp_kernel.cu — the GPU bytecode interpreter: one pre-built kernel family runs every program.
//
// One thread per point.  The program arrives as a plan (engine/plan.h): per pass and
// instruction, the bytecode words, the lane masks and the packed tangent slots; every thread of a
// warp reads the same record, so the opcode stream is warp-uniform and `switch` dispatch never
// diverges.  A point's register file — n_regs values and n_slots packed tangents — lives in
// shared memory when a block of points fits there (layout [slot][thread]: a warp's accesses are
// consecutive doubles, conflict-free), otherwise in a global slab per block with the same layout
// (coalesced, L1/L2-cached).  The op cases, rules and propagation are the CPU's:
// engine/interp_ops.h and dual/rules.h, through the per-point interpreter of interp_point.h
// (which tests/test_plan.c also runs on the CPU).
//
// Instantiated for values only / with tangents, and shared / global register files.  The width
// is a runtime parameter: the tangent loops walk runs of the lane masks, whose bounds are
// runtime values in every instance, so a compile-time width would change nothing but the binary
// size.  Compiled with --fmad=false so that a*b+c rounds as on the CPU (-ffp-contract=off).
#include <stdint.h>

#define DUAL_W 0
#include "kernels/interp_point.h"
#undef DUAL_W
#define DUAL_W 1
#include "kernels/interp_point.h"
#undef DUAL_W

#define DUAL_GPU_MAX_THREADS 256

// Each thread runs its points (grid-stride) through every pass; the register file of the block's
// threads is [slot][thread] in shared memory or in this block's global slab.
template <int DERIV, int SHARED>
__global__ void __launch_bounds__(DUAL_GPU_MAX_THREADS, 2) dual_gpu_interp(const dual_gpu_args A) {
  extern __shared__ double dual_smem[];
  const int64_t S = blockDim.x;
  double *R = (SHARED ? dual_smem : A.scratch + (size_t)blockIdx.x * (size_t)A.slab) + threadIdx.x;
  double *V = R;
  double *T = R + (size_t)A.n_regs * (size_t)S;
  const int64_t stride = (int64_t)gridDim.x * S;
  for (int64_t pt = (int64_t)blockIdx.x * S + threadIdx.x; pt < A.count; pt += stride) {
    const int st = DERIV ? dual_point_run_w1(&A, V, T, S, pt) : dual_point_run_w0(&A, V, T, S, pt);
    if (A.status != NULL) { // the OR over passes; a later group of passes adds to the first
      if (!A.status_or) A.status[pt] = st;
      else A.status[pt] |= st;
    }
  }
}

typedef void (*dual_gpu_kernel_fn)(const dual_gpu_args);

static dual_gpu_kernel_fn kernel_for(int deriv, int shared) {
  if (deriv) return shared ? dual_gpu_interp<1, 1> : dual_gpu_interp<1, 0>;
  return shared ? dual_gpu_interp<0, 1> : dual_gpu_interp<0, 0>;
}

extern "C" int dual_gpu_kernel_geometry(int deriv, int64_t footprint, int sm_shared_optin,
                                        dual_gpu_geometry *geo) {
  static const int candidates[] = {256, 128, 64, 32};
  int best_resident = 0;
  geo->threads = 0, geo->blocks_per_sm = 0, geo->shared = 0;
  const size_t per_point = (size_t)(footprint > 0 ? footprint : 1) * sizeof(double);
  for (int i = 0; i < 4; ++i) {
    const int tb = candidates[i];
    const size_t smem = (size_t)tb * per_point;
    if (smem > (size_t)sm_shared_optin) continue;
    dual_gpu_kernel_fn fn = kernel_for(deriv, 1);
    cudaError_t e = cudaFuncSetAttribute((const void *)fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         sm_shared_optin);
    if (e != cudaSuccess) return (int)e;
    int blocks = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, tb, smem);
    if (e != cudaSuccess) return (int)e;
    if (blocks * tb > best_resident) {
      best_resident = blocks * tb;
      geo->threads = tb, geo->blocks_per_sm = blocks, geo->shared = smem;
    }
  }
  if (best_resident > 0) return 0;
  // The register file of 32 points does not fit in shared memory: global slabs, L1 preferred.
  dual_gpu_kernel_fn fn = kernel_for(deriv, 0);
  cudaError_t e = cudaFuncSetAttribute((const void *)fn,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, 0);
  if (e != cudaSuccess) return (int)e;
  int blocks = 0;
  e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, 128, 0);
  if (e != cudaSuccess) return (int)e;
  geo->threads = 128, geo->blocks_per_sm = blocks > 0 ? blocks : 1, geo->shared = 0;
  return 0;
}

extern "C" int dual_gpu_kernel_launch(const dual_gpu_args *args, const dual_gpu_geometry *geo,
                                      int64_t blocks, void *stream) {
  dual_gpu_kernel_fn fn = kernel_for(args->width > 0, geo->shared > 0);
  fn<<<(unsigned)blocks, geo->threads, geo->shared, (cudaStream_t)stream>>>(*args);
  return (int)cudaGetLastError();
}
