// interp_kernel.cu — the GPU bytecode interpreter: one pre-built kernel family runs every program.
//
// One thread per point.  The program arrives as a plan (engine/plan.h): per pass and
// instruction, the bytecode words, the lane masks and the packed tangent slots; every thread of a
// warp reads the same record, so the opcode stream is warp-uniform and `switch` dispatch never
// diverges.  A point's register file — n_regs values and n_slots packed tangents — lives in a
// global slab per block (layout [slot][thread]: a warp's accesses are consecutive doubles,
// coalesced, L1/L2-cached), or in shared memory with the same layout (DUAL_KNOB_GPU_REGFILE;
// fewer resident threads, measured slower: bench/NOTES.md).  The op cases, rules and
// propagation are the CPU's: engine/interp_ops.h and dual/rules.h, through the per-point
// interpreter of interp_point.h (which tests/test_plan.c also runs on the CPU).
//
// Instantiated for values only / with tangents, and shared / global register files.  The width
// is a runtime parameter: the tangent loops walk runs of the lane masks, whose bounds are
// runtime values in every instance, so a compile-time width would change nothing but the binary
// size.  Compiled with --fmad=false so that a*b+c rounds as on the CPU (-ffp-contract=off).
#include <stdint.h>
#include <string.h>

#define DUAL_W 0
#include "kernels/interp_point.h"
#define DUAL_DRAWS 1
#include "kernels/interp_point.h"
#undef DUAL_DRAWS
#undef DUAL_W
#define DUAL_W 1
#include "kernels/interp_point.h"
#define DUAL_DRAWS 1
#include "kernels/interp_point.h"
#undef DUAL_DRAWS
#define DUAL_SG 1
#include "kernels/interp_point.h"
#undef DUAL_SG
#undef DUAL_W
#include "kernels/sgrad_loop.h"

// Blocks of at most 128 threads, at least 7 resident per SM: the compiler keeps the kernel at 72
// registers (was 91 with 256 x 2: 5 blocks of 128), 28 warps per SM.  Measured on the H200 at
// B = 1e6 (bench/NOTES.md): 5 / 6 / 7 / 8 / 10 blocks gave ba 3.21 / 3.40 / 3.43 / 3.24 / 2.85e8
// and kin 3.87 / 4.29 / 4.61 / 4.69 / 3.96e7 points/s.
#define DUAL_GPU_MAX_THREADS 128
#define DUAL_GPU_MIN_BLOCKS 7

// Each group of A.group threads runs one point (grid-stride over points) through every pass; the
// group ORs its status words together (each thread saw its own lanes' flags).  dual_sgrad runs
// every sample of the point in the thread (kernels/sgrad_loop.h).  Each KIND (gpu_kernel.h) is
// its own instance, so that programs without draws keep their register allocation.
template <int KIND, int SHARED>
__global__ void __launch_bounds__(DUAL_GPU_MAX_THREADS, DUAL_GPU_MIN_BLOCKS) dual_gpu_interp(const dual_gpu_args A) {
  constexpr int DERIV = KIND == DUAL_GPU_TANGENTS || KIND == DUAL_GPU_SGRAD || KIND == DUAL_GPU_TANGENTS_DRAWS;
  extern __shared__ double dual_smem[];
  const uint32_t G = DERIV ? (uint32_t)A.group : 1u, S = blockDim.x, ST = (uint32_t)A.tstride;
  const uint32_t lane = threadIdx.x & (G - 1u), col = threadIdx.x / G, per_block = S / G;
  double *R = SHARED ? dual_smem : A.scratch + (size_t)blockIdx.x * (size_t)A.slab;
  double *V = R + threadIdx.x;
  double *T = R + (size_t)A.n_regs * S + col;
  const uint32_t warp_lane = threadIdx.x & 31u;
  const unsigned group_mask = G >= 32u ? 0xffffffffu : ((1u << G) - 1u) << (warp_lane & ~(G - 1u));
  const int64_t stride = (int64_t)gridDim.x * per_block;
  for (int64_t pt = (int64_t)blockIdx.x * per_block + col; pt < A.count; pt += stride) {
    int st;
    if (KIND == DUAL_GPU_SGRAD) // one thread per point (gpu_run.c)
      st = dual_gpu_sgrad_point(A.sg, V, S, pt, [&](int64_t s) {
        return dual_point_run_w1_sg(&A, V, T, S, ST, pt, lane, G, s);
      });
    else if (KIND == DUAL_GPU_TANGENTS_DRAWS)
      st = dual_point_run_w1_dr(&A, V, T, S, ST, pt, lane, G, 0);
    else if (KIND == DUAL_GPU_VALUES_DRAWS)
      st = dual_point_run_w0_dr(&A, V, T, S, ST, pt, 0u, 1u, 0);
    else
      st = DERIV ? dual_point_run_w1(&A, V, T, S, ST, pt, lane, G, 0)
                 : dual_point_run_w0(&A, V, T, S, ST, pt, 0u, 1u, 0);
    for (uint32_t off = 1; off < G; off <<= 1) st |= __shfl_xor_sync(group_mask, st, off);
    if (A.status != NULL && lane == 0) { // the OR over passes; a later group of passes adds to the first
      if (!A.status_or) A.status[pt] = st;
      else A.status[pt] |= st;
    }
  }
}

typedef void (*dual_gpu_kernel_fn)(const dual_gpu_args);

#define DUAL_GPU_INSTANCE(k) (shared ? dual_gpu_interp<k, 1> : dual_gpu_interp<k, 0>)
static dual_gpu_kernel_fn kernel_for(int kind, int shared) {
  switch (kind) {
  case DUAL_GPU_TANGENTS: return DUAL_GPU_INSTANCE(DUAL_GPU_TANGENTS);
  case DUAL_GPU_SGRAD: return DUAL_GPU_INSTANCE(DUAL_GPU_SGRAD);
  case DUAL_GPU_VALUES_DRAWS: return DUAL_GPU_INSTANCE(DUAL_GPU_VALUES_DRAWS);
  case DUAL_GPU_TANGENTS_DRAWS: return DUAL_GPU_INSTANCE(DUAL_GPU_TANGENTS_DRAWS);
  default: return DUAL_GPU_INSTANCE(DUAL_GPU_VALUES);
  }
}
#undef DUAL_GPU_INSTANCE

// Tangent rows of a block: points per block, padded so that the G threads of a point (reading
// consecutive slots, i.e. rows) and the points of a warp fall in distinct shared-memory banks.
static int padded_tstride(int per_block, int group) {
  const int want = group >= 4 ? (32 / group) % 16 : 0; // row shift that spreads a warp's accesses
  return per_block + ((want - per_block % 16) % 16 + 16) % 16;
}

extern "C" int dual_gpu_kernel_geometry(int kind, int64_t n_regs, int64_t n_slots, int group,
                                        int sm_shared_optin, dual_gpu_geometry *geo) {
  static const int candidates[] = {DUAL_GPU_MAX_THREADS, 64, 32};
  int best_resident = 0;
  memset(geo, 0, sizeof *geo);
  if (kind == DUAL_GPU_VALUES || kind == DUAL_GPU_VALUES_DRAWS) group = 1;
  for (int pass = 0; pass < 2 && best_resident == 0; ++pass) {
    const int shared = pass == 0; // shared memory if some block fits, else global slabs
    if (shared && sm_shared_optin <= 0) continue;
    dual_gpu_kernel_fn fn = kernel_for(kind, shared);
    cudaError_t e = shared ? cudaFuncSetAttribute((const void *)fn,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  sm_shared_optin)
                           : cudaFuncSetAttribute((const void *)fn,
                                                  cudaFuncAttributePreferredSharedMemoryCarveout, 0);
    if (e != cudaSuccess) return (int)e;
    for (int i = 0; i < 3; ++i) {
      const int tb = candidates[i];
      if (tb < group || (!shared && tb != DUAL_GPU_MAX_THREADS)) continue; // global slabs: 128 threads per block
      const int ts = padded_tstride(tb / group, group);
      const int64_t slab = n_regs * tb + n_slots * ts;
      const size_t bytes = (size_t)slab * sizeof(double);
      if (shared && bytes > (size_t)sm_shared_optin) continue;
      int blocks = 0;
      e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, tb, shared ? bytes : 0);
      if (e != cudaSuccess) return (int)e;
      if (blocks * tb > best_resident) {
        best_resident = blocks * tb;
        geo->threads = tb, geo->group = group, geo->tstride = ts, geo->slab = slab;
        geo->blocks_per_sm = blocks > 0 ? blocks : 1, geo->shared = shared ? bytes : 0;
      }
    }
  }
  return 0;
}

extern "C" int dual_gpu_kernel_launch(const dual_gpu_args *args, const dual_gpu_geometry *geo,
                                      int64_t blocks, void *stream) {
  dual_gpu_kernel_fn fn = kernel_for(args->kind, geo->shared > 0);
  fn<<<(unsigned)blocks, geo->threads, geo->shared, (cudaStream_t)stream>>>(*args);
  return (int)cudaGetLastError();
}
