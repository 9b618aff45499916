// newton_kernels.cu — dual_newton's kernels (newton_kernels.h): one thread per point runs the
// round's per-point code of solve/newton_point.h, the same source the CPU runs, on element-major
// arrays (a round: the line search's verdict on a trial point, then the Newton step where it was
// accepted, with the J evaluated there); for n <= 32 the Newton step instead runs one warp per point, its LU on the matrix's rows
// held in the lanes' registers with each entry updated by the CPU's statements in the CPU's order
// (the same bits); a stable stream compaction (CUB) picks the points of each engine call;
// transposes move a chunk between the host's point-major layout and the device's element-major
// one.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/newton_kernels.h"

namespace {

constexpr int THREADS = 256;

unsigned blocks_for(int64_t count) { return (unsigned)((count + THREADS - 1) / THREADS); }

__global__ void transpose_kernel(const double *src, double *dst, int64_t c, int64_t C, int32_t len,
                                 int64_t ld, int to_points) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= c * len) return;
  if (to_points) { // t runs over the points' entries: coalesced stores for ld = len
    const int64_t b = t / len, j = t - b * len;
    dst[b * ld + j] = src[j * C + b];
  } else { // t runs over the element-major array: coalesced stores
    const int64_t j = t / c, b = t - j * c;
    dst[j * C + b] = src[b * ld + j];
  }
}

__global__ void init_kernel(const dual_newton_dev d) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= d.C) return;
  d.P.state[b] = DUAL_NEWTON_ACTIVE, d.P.steps[b] = 0, d.P.damped[b] = 0;
  d.phase[b] = DUAL_NEWTON_NEED_J;
}

__global__ void flag_kernel(const dual_newton_dev d) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b < d.C) d.flags[b] = d.phase[b] != DUAL_NEWTON_DONE;
}

__global__ void gather_kernel(const dual_newton_dev d) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t len = (int64_t)d.n + d.np;
  if (t >= d.k * len) return;
  const int64_t j = t / d.k, i = t - j * d.k, b = d.idx[i];
  if (j < d.n) /* the iterate, or the trial point of a point in its line search */
    d.xa[t] = (d.phase[b] == DUAL_NEWTON_NEED_F ? d.XT : d.X)[j * d.C + b];
  else
    d.pa[(j - d.n) * d.k + i] = d.P_[(j - d.n) * d.C + b];
}

__device__ int32_t next_phase(const dual_newton_dev &d, int64_t b, int more) {
  return more ? DUAL_NEWTON_NEED_F
              : d.P.state[b] == DUAL_NEWTON_ACTIVE ? DUAL_NEWTON_NEED_J : DUAL_NEWTON_DONE;
}

// A round for one point, one thread: a point in its line search has F and J at its trial point:
// the verdict on it (dual_newton_judge), and where the step was accepted and the point goes on,
// its next Newton step from there (J at the new iterate is the one evaluated); a point at a new
// iterate takes its Newton step (dual_newton_step).  The per-point statements are the CPU's.
__global__ void steps_kernel(const dual_newton_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i];
  if (d.phase[b] == DUAL_NEWTON_NEED_F) {
    const int more = dual_newton_judge(&d.o, &d.P, b, d.n, d.F + i, d.k, d.X + b, d.DX + b, d.XT + b, d.C);
    if (more || d.P.state[b] != DUAL_NEWTON_ACTIVE) {
      d.phase[b] = next_phase(d, b, more);
      return;
    }
  }
  const int more = dual_newton_step(&d.o, &d.P, b, d.n, d.F + i, d.J + i, d.piv + i, d.k, d.X + b,
                                    d.DX + b, d.XT + b, d.C);
  d.phase[b] = next_phase(d, b, more);
}

constexpr unsigned FULL = 0xffffffffu;

// (key, pos) of the better pivot candidate: the larger key, on ties the lower position (the CPU's
// scan keeps the first entry of largest magnitude).
__device__ void better_pivot(double &key, int &pos, int &lane_of) {
  for (int off = 16; off > 0; off >>= 1) {
    const double k2 = __shfl_xor_sync(FULL, key, off);
    const int p2 = __shfl_xor_sync(FULL, pos, off), l2 = __shfl_xor_sync(FULL, lane_of, off);
    if (k2 > key || (k2 == key && p2 < pos)) key = k2, pos = p2, lane_of = l2;
  }
}

// dual_lu_factor and dual_lu_solve (solve/lu_small.h) for one point by one warp, n <= 32: lane r
// holds row r of J in a (zeros past n) and follows it through the row swaps by its position; F
// (n entries) and the step dx are the warp's shared arrays, and dx = -J^{-1} F.  Every entry gets
// the CPU's statements in the CPU's order: the factors and the step are the same bits.  Returns 1
// (all lanes) when J is singular to working precision.
__device__ int warp_lu_step(int n, double (&a)[32], const double *F, double *dx, int lane) {
  const bool row = lane < n;
  double amax = 0.0;
#pragma unroll
  for (int c = 0; c < 32; ++c) amax = fabs(a[c]) > amax ? fabs(a[c]) : amax;
  for (int off = 16; off > 0; off >>= 1) {
    const double o = __shfl_xor_sync(FULL, amax, off);
    amax = o > amax ? o : amax;
  }
  const double tiny = (double)n * DBL_EPSILON * amax;
  if (amax == 0.0) return 1;
  int pos = lane; // the row's position after the swaps so far
#pragma unroll
  for (int k = 0; k < 32; ++k) {
    if (k >= n) break;
    // the pivot: the first position >= k of largest |a| (a NaN never wins, except at k itself,
    // where the CPU's scan starts and no comparison beats it)
    const double v = fabs(a[k]);
    double key = !row || pos < k ? -2.0 : v != v ? (pos == k ? INFINITY : -1.0) : v;
    int best_pos = row ? pos : 1 << 30, wl = lane;
    better_pivot(key, best_pos, wl);
    const double best = __shfl_sync(FULL, v, wl);
    if (best <= tiny) return 1;
    if (best_pos != k) pos = pos == k ? best_pos : pos == best_pos ? k : pos;
    const double d = __shfl_sync(FULL, a[k], wl);
    const bool below = row && pos > k;
    double l = 0.0;
    if (below) l = a[k] / d, a[k] = l;
#pragma unroll
    for (int j = k + 1; j < 32; ++j) {
      const double pj = __shfl_sync(FULL, a[j], wl);
      if (below && l != 0.0 && j < n) a[j] -= l * pj;
    }
  }
  // b = -F moved with its row: lane r's entry sits at position pos
  double v = row ? -F[lane] : 0.0;
#pragma unroll
  for (int j = 0; j < 32; ++j) { // forward: b_i -= L_ij b_j, j ascending
    if (j >= n - 1) break;
    const int src = __ffs(__ballot_sync(FULL, row && pos == j)) - 1;
    const double bj = __shfl_sync(FULL, v, src);
    if (row && pos > j) v -= a[j] * bj;
  }
#pragma unroll
  for (int i = 31; i >= 0; --i) { // back: x_i = (b_i - sum_{j > i} U_ij x_j) / U_ii, j ascending
    if (i >= n) continue;
    if (row && pos == i) {
      double t = v;
#pragma unroll
      for (int j = i + 1; j < 32; ++j)
        if (j < n) t -= a[j] * dx[j];
      dx[i] = t / a[i];
    }
    __syncwarp();
  }
  return 0;
}

// dual_newton_step for n <= 32, one warp per point: the point's F, x, dx and xt staged in the
// warp's shared arrays (lanes load and store them together), lane 0 runs the tests and the trial
// point on them (the same functions as the CPU, stride 1), the warp the LU step.
constexpr int WARPS = THREADS / 32;

__global__ void __launch_bounds__(THREADS, 2) warp_steps_kernel(const dual_newton_dev d) {
  __shared__ double stage[WARPS][4][32]; // F, x, dx, xt
  const int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31, w = threadIdx.x / 32;
  if (i >= d.k) return; // whole warps leave together
  const int64_t b = d.idx[i], s = d.k, C = d.C;
  const int n = d.n;
  double *F = stage[w][0], *x = stage[w][1], *dx = stage[w][2], *xt = stage[w][3];
  const double *J = d.J + i;
  const int trial = d.phase[b] == DUAL_NEWTON_NEED_F;
  if (lane < n) {
    F[lane] = d.F[i + lane * s], x[lane] = d.X[b + lane * C];
    if (trial) dx[lane] = d.DX[b + lane * C], xt[lane] = d.XT[b + lane * C];
  }
  __syncwarp();
  if (trial) { // the verdict on the trial point (F and J there); accepted, the step goes on below
    int more = 0, active = 0;
    if (lane == 0) {
      more = dual_newton_judge(&d.o, &d.P, b, n, F, 1, x, dx, xt, 1);
      active = d.P.state[b] == DUAL_NEWTON_ACTIVE;
      if (more || !active) d.phase[b] = next_phase(d, b, more);
    }
    more = __shfl_sync(FULL, more, 0), active = __shfl_sync(FULL, active, 0);
    __syncwarp();
    if (lane < n) {
      if (more)
        d.XT[b + lane * C] = xt[lane];
      else
        d.X[b + lane * C] = x[lane];
    }
    if (more || !active) return;
  }
  double a[32]; // lane r: row r of J, element (r, c) at J[(r * n + c) * s]
  int jfinite = 1;
#pragma unroll
  for (int c = 0; c < 32; ++c) {
    a[c] = lane < n && c < n ? J[((int64_t)lane * n + c) * s] : 0.0;
    jfinite &= fabs(a[c]) <= DBL_MAX;
  }
  jfinite = __all_sync(FULL, jfinite);
  __syncwarp();
  int go = 0;
  if (lane == 0) go = dual_newton_tests(&d.o, &d.P, b, n, F, 1, jfinite);
  go = __shfl_sync(FULL, go, 0);
  if (!go) {
    if (lane == 0) d.phase[b] = next_phase(d, b, 0);
    return;
  }
  const int singular = warp_lu_step(n, a, F, dx, lane);
  int more = 0;
  if (lane == 0) {
    if (singular)
      d.P.state[b] = DUAL_SOLVE_SINGULAR;
    else
      more = dual_newton_trial(&d.o, &d.P, b, n, x, dx, xt, 1);
    d.phase[b] = next_phase(d, b, more);
  }
  more = __shfl_sync(FULL, more, 0);
  __syncwarp();
  if (more && lane < n) d.DX[b + lane * C] = dx[lane], d.XT[b + lane * C] = xt[lane];
}

} // namespace

extern "C" int dual_newton_transpose(const double *src, double *dst, int64_t c, int64_t C,
                                     int32_t len, int64_t ld, int to_points, void *stream) {
  if (c * len == 0) return (int)cudaSuccess;
  transpose_kernel<<<blocks_for(c * len), THREADS, 0, (cudaStream_t)stream>>>(src, dst, c, C, len,
                                                                             ld, to_points);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_init(const dual_newton_dev *d, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  init_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" size_t dual_newton_select_bytes(int64_t C) {
  size_t bytes = 0;
  thrust::counting_iterator<int32_t> first(0);
  cub::DeviceSelect::Flagged(nullptr, bytes, first, (const uint8_t *)nullptr, (int32_t *)nullptr,
                             (int64_t *)nullptr, C);
  return bytes;
}

extern "C" int dual_newton_select(const dual_newton_dev *d, int64_t *k_dev, void *temp,
                                  size_t temp_bytes, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  flag_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  thrust::counting_iterator<int32_t> first(0);
  return (int)cub::DeviceSelect::Flagged(temp, temp_bytes, first, d->flags, d->idx, k_dev, d->C,
                                         (cudaStream_t)stream);
}

extern "C" int dual_newton_gather(const dual_newton_dev *d, void *stream) {
  const int64_t total = d->k * ((int64_t)d->n + d->np);
  if (total == 0) return (int)cudaSuccess;
  gather_kernel<<<blocks_for(total), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_steps(const dual_newton_dev *d, int lu, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  const int warp = lu == DUAL_NEWTON_LU_WARP || (lu == DUAL_NEWTON_LU_AUTO && d->n > DUAL_NEWTON_WARP_MIN_N);
  if (warp && d->n <= 32) {
    warp_steps_kernel<<<blocks_for(d->k * 32), THREADS, 0, (cudaStream_t)stream>>>(*d);
    return (int)cudaGetLastError();
  }
  steps_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}
