// bench_qr_gpu.cu — the least-squares solver's factorization on the GPU, measured both ways (issue
// 19, "measure both"): dual_lsq's in-kernel QR (solve/qr_small.h's dual_qr_factor, MINPACK's qrfac:
// Householder with column pivoting, a thread per point on the element-major batch, as
// kernels/lsq_kernels.cu runs it) against cuBLAS's cublasDgeqrfBatched (Householder without
// pivoting, one column-major matrix per point).  For each m x n it factors the same B random
// matrices both ways, prints matrices per second (median of 7 timed calls after a warm-up, CUDA
// events), and checks the two factorizations against each other by the product of |R_jj| (|det R|,
// which the column permutation does not change), largest relative difference over the batch.
//   dualbatch_bench_qr_gpu [--sizes 8x2,33x5,64x8,100x16,200x32] [--points B]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "solve/qr_small.h"

namespace {

constexpr int THREADS = 128;

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "bench_qr_gpu: %s: %s\n", #call, cudaGetErrorString(e_));             \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)
#define CHECK_BLAS(call)                                                                          \
  do {                                                                                            \
    cublasStatus_t s_ = (call);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      std::fprintf(stderr, "bench_qr_gpu: %s: cublasStatus_t %d\n", #call, (int)s_);             \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

// dual_qr_factor for each point, element-major: element (r, c) of point i at A[(c m + r) B + i]
__global__ void qr_kernel(int m, int n, int64_t B, double *A, int32_t *ipvt, double *rdiag,
                          double *acnorm, double *wa) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B) return;
  dual_qr_factor(m, n, A + i, m, ipvt + i, rdiag + i, acnorm + i, wa + i, B);
}

__global__ void pointers_kernel(double *A, double **Ap, double *tau, double **Tp, int m, int n,
                                int64_t B) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B) return;
  Ap[i] = A + i * (int64_t)m * n, Tp[i] = tau + i * (int64_t)n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// one m x n size: returns 0, or 1 when the two factorizations disagree
int run_size(cublasHandle_t h, int m, int n, int64_t B) {
  const int64_t mn = (int64_t)m * n;
  std::vector<double> host((size_t)(B * mn));
  uint64_t state = 0x9e3779b97f4a7c15ull ^ (uint64_t)(m * 131 + n);
  for (auto &a : host) { // uniform in [-1, 1], column-major per point (point-major batch)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    a = (double)(state >> 11) * 0x1p-52 - 1.0;
  }
  std::vector<double> em((size_t)(B * mn)); // element-major copy for the in-kernel QR
  for (int64_t i = 0; i < B; ++i)
    for (int64_t e = 0; e < mn; ++e) em[(size_t)(e * B + i)] = host[(size_t)(i * mn + e)];
  double *dA0, *dA, *dE0, *dE, *tau, **Ap, **Tp, *rdiag, *acnorm, *wa;
  int32_t *ipvt;
  const size_t bytes = sizeof(double) * (size_t)(B * mn);
  CHECK_CUDA(cudaMalloc(&dA0, bytes));
  CHECK_CUDA(cudaMalloc(&dA, bytes));
  CHECK_CUDA(cudaMalloc(&dE0, bytes));
  CHECK_CUDA(cudaMalloc(&dE, bytes));
  CHECK_CUDA(cudaMalloc(&tau, sizeof(double) * (size_t)(B * n)));
  CHECK_CUDA(cudaMalloc(&Ap, sizeof(double *) * (size_t)B));
  CHECK_CUDA(cudaMalloc(&Tp, sizeof(double *) * (size_t)B));
  CHECK_CUDA(cudaMalloc(&rdiag, sizeof(double) * (size_t)(B * n)));
  CHECK_CUDA(cudaMalloc(&acnorm, sizeof(double) * (size_t)(B * n)));
  CHECK_CUDA(cudaMalloc(&wa, sizeof(double) * (size_t)(B * n)));
  CHECK_CUDA(cudaMalloc(&ipvt, sizeof(int32_t) * (size_t)(B * n)));
  CHECK_CUDA(cudaMemcpy(dA0, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dE0, em.data(), bytes, cudaMemcpyHostToDevice));
  const unsigned blocks = (unsigned)((B + THREADS - 1) / THREADS);
  pointers_kernel<<<blocks, THREADS>>>(dA, Ap, tau, Tp, m, n, B);
  CHECK_CUDA(cudaGetLastError());
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  std::vector<double> t_kernel, t_blas;
  int info = 0;
  for (int r = -1; r < 7; ++r) { // r = -1: the warm-up; each call factors a fresh copy
    CHECK_CUDA(cudaMemcpy(dE, dE0, bytes, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaMemcpy(dA, dA0, bytes, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaEventRecord(t0));
    qr_kernel<<<blocks, THREADS>>>(m, n, B, dE, ipvt, rdiag, acnorm, wa);
    CHECK_CUDA(cudaEventRecord(t1));
    CHECK_CUDA(cudaEventSynchronize(t1));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
    if (r >= 0) t_kernel.push_back(1e-3 * ms);
    CHECK_CUDA(cudaEventRecord(t0));
    CHECK_BLAS(cublasDgeqrfBatched(h, m, n, Ap, m, Tp, &info, (int)B));
    CHECK_CUDA(cudaEventRecord(t1));
    CHECK_CUDA(cudaEventSynchronize(t1));
    CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
    if (r >= 0) t_blas.push_back(1e-3 * ms);
  }
  if (info != 0) {
    std::fprintf(stderr, "bench_qr_gpu: cublasDgeqrfBatched: argument %d is invalid\n", -info);
    return 1;
  }
  // |det R| both ways: the in-kernel R's diagonal is rdiag (MINPACK keeps -||a_j|| there), cuBLAS's
  // is on A's diagonal
  std::vector<double> rd((size_t)(B * n)), ab((size_t)(B * mn));
  CHECK_CUDA(cudaMemcpy(rd.data(), rdiag, sizeof(double) * rd.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(ab.data(), dA, bytes, cudaMemcpyDeviceToHost));
  double worst = 0.0;
  for (int64_t i = 0; i < B; ++i) {
    double l1 = 0.0, l2 = 0.0; // log |det R|
    for (int j = 0; j < n; ++j) {
      l1 += std::log(std::fabs(rd[(size_t)(j * B + i)]));
      l2 += std::log(std::fabs(ab[(size_t)(i * mn + (int64_t)j * m + j)]));
    }
    worst = std::max(worst, std::fabs(std::expm1(l1 - l2)));
  }
  const double tk = median(t_kernel), tb = median(t_blas);
  std::printf("%4d x %-3d %9lld  in-kernel (qrfac, pivoting) %10.4f ms %11.4g matrices/s   cuBLAS "
              "geqrfBatched %10.4f ms %11.4g matrices/s   cuBLAS / in-kernel %6.2fx   |det R| max rel "
              "diff %.2e\n",
              m, n, (long long)B, 1e3 * tk, (double)B / tk, 1e3 * tb, (double)B / tb, tk / tb, worst);
  cudaFree(dA0), cudaFree(dA), cudaFree(dE0), cudaFree(dE), cudaFree(tau), cudaFree(Ap), cudaFree(Tp);
  cudaFree(rdiag), cudaFree(acnorm), cudaFree(wa), cudaFree(ipvt);
  cudaEventDestroy(t0), cudaEventDestroy(t1);
  return worst > 1e-9;
}

} // namespace

int main(int argc, char **argv) {
  const char *sizes = "8x2,33x5,64x8,100x16,200x32";
  int64_t B = 100000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else if (!std::strcmp(argv[i], "--points") && i + 1 < argc)
      B = (int64_t)std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--sizes 8x2,33x5,...] [--points B]\n", argv[0]);
      return 2;
    }
  }
  if (B < 1 || B > 100000000) {
    std::fprintf(stderr, "bench_qr_gpu: --points %lld: 1 to 1e8\n", (long long)B);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "bench_qr_gpu: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("# dualbatch_bench_qr_gpu, %s, B = %lld, FP64, median of 7 calls after a warm-up\n",
              prop.name, (long long)B);
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  int bad = 0;
  std::vector<char> list(sizes, sizes + std::strlen(sizes) + 1);
  for (char *tok = std::strtok(list.data(), ","); tok != nullptr; tok = std::strtok(nullptr, ",")) {
    int m = 0, n = 0;
    if (std::sscanf(tok, "%dx%d", &m, &n) != 2 || n < 1 || m < n || m > 4096) {
      std::fprintf(stderr, "bench_qr_gpu: size '%s': m x n with m >= n >= 1\n", tok);
      return 2;
    }
    // the batch's matrices must fit: keep the four copies under half the free memory
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const int64_t fit = (int64_t)(free_b / 2 / (4 * sizeof(double) * (size_t)m * n + 64));
    bad |= run_size(h, m, n, std::min(B, fit));
  }
  cublasDestroy(h);
  return bad;
}
