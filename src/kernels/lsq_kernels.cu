// lsq_kernels.cu — dual_lsq's kernels (lsq_kernels.h): one thread per point runs the round's
// per-point code of solve/lm_point.h, the same source the CPU runs, on element-major arrays
// (coalesced: neighbouring threads read neighbouring entries); a stable stream compaction (CUB)
// picks the points of each engine call.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/lsq_kernels.h"

namespace {

constexpr int THREADS = 128;

unsigned blocks_for(int64_t count) { return (unsigned)((count + THREADS - 1) / THREADS); }

__global__ void init_kernel(const dual_lsq_dev d) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= d.C) return;
  d.P.state[b] = DUAL_LM_NEED_J, d.P.njev[b] = 0, d.P.nfev[b] = 0;
}

__global__ void flag_kernel(const dual_lsq_dev d, int32_t want) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b < d.C) d.flags[b] = d.P.state[b] == want;
}

__global__ void gather_kernel(const dual_lsq_dev d, int with_x) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t len = (int64_t)d.n + d.np;
  if (t >= d.k * len) return;
  const int64_t j = t / d.k, i = t - j * d.k, b = d.idx[i];
  if (j < d.n) {
    if (with_x) d.xa[t] = d.X[j * d.C + b];
  } else {
    d.pa[(j - d.n) * d.k + i] = d.P_[(j - d.n) * d.C + b];
  }
}

__global__ void take_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i];
  dual_lm_take_jacobian(&d.o, &d.P, b, d.n, d.m, d.F + i, d.J + i, d.k, d.X + b, d.C);
}

__global__ void trial_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i];
  dual_lm_make_trial(&d.P, b, d.n, d.m, d.mr, d.X + b, d.C, d.xa + i, d.k);
}

__global__ void judge_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i];
  dual_lm_judge_trial(&d.o, &d.P, b, d.n, d.m, d.mr, d.F + i, d.k, d.xa + i, d.k, d.X + b, d.C);
}

// ---- rounds with cuBLAS's QR ----

__global__ void qr_pointers_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.C) return;
  const int64_t L = (int64_t)d.m * (d.n + 1);
  d.Qp[i] = d.Q + i * L, d.Tp[i] = d.tau + i * (int64_t)(d.n + 1);
}

__global__ void qr_checks_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  dual_lm_jacobian_checks(&d.P, d.idx[i], d.n, d.m, d.F + i, d.J + i, d.k);
}

// [J F] (element-major) into Q: point i's column-major m x (n + 1) matrix at Q + i L, entry
// e = c m + r from J's (r, c) (c < n) or F's r (c = n).  32 x 32 tiles through shared memory, so
// that reads (along the points) and writes (along a matrix) are both coalesced.
__global__ void qr_pack_kernel(const dual_lsq_dev d) {
  __shared__ double tile[32][33];
  const int64_t m = d.m, n = d.n, L = m * (n + 1), k = d.k;
  const int64_t i0 = (int64_t)blockIdx.x * 32, e0 = (int64_t)blockIdx.y * 32;
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int64_t e = e0 + y, i = i0 + threadIdx.x;
    if (e < L && i < k) {
      const int64_t c = e / m, r = e - c * m;
      tile[y][threadIdx.x] = c < n ? d.J[(r * n + c) * k + i] : d.F[r * k + i];
    }
  }
  __syncthreads();
  for (int y = threadIdx.y; y < 32; y += blockDim.y) {
    const int64_t i = i0 + y, e = e0 + threadIdx.x;
    if (e < L && i < k) d.Q[i * L + e] = tile[threadIdx.x][y];
  }
}

__global__ void qr_take_kernel(const dual_lsq_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i], k = d.k;
  if (d.P.state[b] != DUAL_LM_NEED_J) return; // the checks found F or J not finite
  const int n = d.n, m = d.m;
  const double *R = d.Q + i * (int64_t)m * (n + 1);
  for (int r = 0; r <= n; ++r) {
    for (int c = 0; c < n; ++c) d.J[((int64_t)r * n + c) * k + i] = r <= c ? R[(int64_t)c * m + r] : 0.0;
    d.F[(int64_t)r * k + i] = R[(int64_t)n * m + r];
  }
  dual_lm_factor_jacobian(&d.o, &d.P, b, n, m, n + 1, d.F + i, d.J + i, k, d.X + b, d.C);
}

} // namespace

extern "C" int dual_lsq_qr_pointers(const dual_lsq_dev *d, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  qr_pointers_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_qr_prepare(const dual_lsq_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  qr_checks_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  const int64_t L = (int64_t)d->m * (d->n + 1);
  const dim3 grid((unsigned)((d->k + 31) / 32), (unsigned)((L + 31) / 32)), block(32, 8);
  qr_pack_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_qr_take(const dual_lsq_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  qr_take_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_init(const dual_lsq_dev *d, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  init_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_select(const dual_lsq_dev *d, int32_t want, int64_t *k_dev, void *temp,
                               size_t temp_bytes, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  flag_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d, want);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  thrust::counting_iterator<int32_t> first(0);
  return (int)cub::DeviceSelect::Flagged(temp, temp_bytes, first, d->flags, d->idx, k_dev, d->C,
                                         (cudaStream_t)stream);
}

extern "C" int dual_lsq_gather(const dual_lsq_dev *d, int with_x, void *stream) {
  const int64_t total = d->k * ((int64_t)d->n + d->np);
  if (total == 0 || (!with_x && d->np == 0)) return (int)cudaSuccess;
  gather_kernel<<<blocks_for(total), THREADS, 0, (cudaStream_t)stream>>>(*d, with_x);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_take_jacobians(const dual_lsq_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  take_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_make_trials(const dual_lsq_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  trial_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_lsq_judge_trials(const dual_lsq_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  judge_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}
