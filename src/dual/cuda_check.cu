// cuda_check.cu — compiles the code shared with the GPU (the op rules of rules.h and the
// interpreter body of engine/interp_ops.h) as CUDA, so a change that leaves the C11 ∩ CUDA
// subset fails the build on any machine with nvcc (no GPU needed).  Not linked into anything.
#include <float.h>

#include "bytecode.h"
#include "dual/apply_rule.h"

__global__ void dual_cuda_rules_check(const double *x, double *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double d[3];
  int flags = 0;
  double acc = 0.0;
  for (int op = 0; op < DUAL_OP_COUNT; ++op) acc += dual_apply_rule(op, x[i], 0.5, 0.25, d, &flags) + d[0];
  y[i] = acc + (double)flags;
}

// One thread per point, registers laid out [register][component][point] (point fastest, so a
// warp's accesses coalesce): the interpreter body exactly as the CPU includes it.
#define DUAL_W 4
#define DUAL_POINTS(p) for (int p = tid; p == tid; ++p)
#define DUAL_POINTS_OR(p, v) DUAL_POINTS(p)
#define DUAL_VAL(r) (V + (size_t)(r) * (size_t)npts)
#define DUAL_TAN(r, k) (T + ((size_t)(r) * DUAL_W + (size_t)(k)) * (size_t)npts)
#define DUAL_ENGINE_LDX() DUAL_POINTS(p) { DUAL_VAL(dst)[p] = x[(size_t)p * nin + ra]; DUAL_TAN(dst, 0)[p] = 1.0; }
#define DUAL_ENGINE_LDP() DUAL_POINTS(p) { DUAL_VAL(dst)[p] = 0.0; }
#define DUAL_ENGINE_LDK() DUAL_POINTS(p) { DUAL_VAL(dst)[p] = consts[ra]; }
#define DUAL_ENGINE_OUT() DUAL_POINTS(p) { y[(size_t)p * nout + rb] = DUAL_VAL(ra)[p]; }

__global__ void dual_cuda_interp_check(const uint32_t *code, const uint32_t *lanes, int64_t n_instr,
                                       const double *consts, const double *x, int nin, double *y,
                                       int nout, double *V, double *T, double *P, int *st, int npts) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= npts) return;
  double *pa = P, *pb = P + npts, *pc = P + 2 * npts;
  for (int64_t t = 0; t < n_instr; ++t) {
    const uint32_t *w = code + t * DUAL_INSTR_WORDS;
    const int op = DUAL_INSTR_OP(w);
    const int32_t dst = DUAL_INSTR_DST(w), ra = DUAL_INSTR_A(w), rb = DUAL_INSTR_B(w), rc = DUAL_INSTR_C(w);
    const uint32_t ma = lanes[3 * t], mb = lanes[3 * t + 1], mc = lanes[3 * t + 2];
    int prop_ = DUAL_PROP_NONE, bad_ = 0;
    switch (op) {
#include "engine/interp_ops.h"
    default:
      break;
    }
    DUAL_PROPAGATE()
  }
}
