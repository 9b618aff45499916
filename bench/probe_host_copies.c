/*
 * probe_host_copies.c — what a host-array GPU call's copies cost the host (issue 20, splits): the
 * machine's memcpy rate with T threads; the device's copies to and from pinned memory; copying
 * results out through pinned staging chunks (as the library's staging path does: the DMA into a
 * pinned chunk, then T threads copy it into the caller's array, two streams alternating); and the
 * alternative of registering the caller's array with cudaHostRegister (its cost per GiB, then DMA
 * straight into it, no host copy).  Prints one line per figure.
 *
 *   dualbatch_probe_host_copies [--mib M] (default 1024)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "probe_host_copies: %s: %s\n", #call, cudaGetErrorString(e_));             \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

enum { REPS = 5, CHUNK = 8 << 20 };

static void copy_threads(char *dst, const char *src, size_t n, int T) {
#pragma omp parallel num_threads(T)
  {
    const int i = omp_get_thread_num();
    const size_t per = (n + (size_t)T - 1) / (size_t)T, a = (size_t)i * per, b = a + per < n ? a + per : n;
    if (a < b) memcpy(dst + a, src + a, b - a);
  }
}

int main(int argc, char **argv) {
  size_t mib = 1024;
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], "--mib")) mib = (size_t)atol(argv[++i]);
  const size_t n = mib << 20;
  char *user = malloc(n), *other = malloc(n), *pin[2] = {NULL, NULL}, *dev = NULL;
  if (user == NULL || other == NULL) return 1;
  memset(user, 1, n), memset(other, 2, n);
  CHECK(cudaMalloc((void **)&dev, n));
  CHECK(cudaMemset(dev, 3, n));
  CHECK(cudaHostAlloc((void **)&pin[0], CHUNK, cudaHostAllocDefault));
  CHECK(cudaHostAlloc((void **)&pin[1], CHUNK, cudaHostAllocDefault));
  cudaStream_t st[2];
  CHECK(cudaStreamCreate(&st[0]));
  CHECK(cudaStreamCreate(&st[1]));
  cudaEvent_t done[2];
  CHECK(cudaEventCreateWithFlags(&done[0], cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&done[1], cudaEventDisableTiming));
  printf("# %zu MiB arrays, %d OpenMP threads available\n", mib, omp_get_max_threads());
  const int Ts[] = {1, 2, 4, 8, 16};
  for (size_t k = 0; k < sizeof Ts / sizeof *Ts; ++k) {
    double best = 1e30;
    for (int r = 0; r < REPS; ++r) {
      const double t0 = omp_get_wtime();
      copy_threads(other, user, n, Ts[k]);
      const double t = omp_get_wtime() - t0;
      best = t < best ? t : best;
    }
    printf("host memcpy, %2d threads: %6.1f GB/s\n", Ts[k], (double)n / best / 1e9);
  }
  /* the device to one pinned chunk and back, over and over */
  double best_d2h = 1e30, best_h2d = 1e30;
  for (int r = 0; r < REPS; ++r) {
    double t0 = omp_get_wtime();
    for (size_t off = 0; off < n; off += CHUNK) CHECK(cudaMemcpyAsync(pin[0], dev + off, CHUNK, cudaMemcpyDeviceToHost, st[0]));
    CHECK(cudaStreamSynchronize(st[0]));
    double t = omp_get_wtime() - t0;
    best_d2h = t < best_d2h ? t : best_d2h;
    t0 = omp_get_wtime();
    for (size_t off = 0; off < n; off += CHUNK) CHECK(cudaMemcpyAsync(dev + off, pin[0], CHUNK, cudaMemcpyHostToDevice, st[0]));
    CHECK(cudaStreamSynchronize(st[0]));
    t = omp_get_wtime() - t0;
    best_h2d = t < best_h2d ? t : best_h2d;
  }
  printf("DMA device -> pinned: %6.1f GB/s; pinned -> device: %6.1f GB/s\n", (double)n / best_d2h / 1e9,
         (double)n / best_h2d / 1e9);
  /* results out through pinned staging: chunk c's DMA overlaps the threads' copy of chunk c - 1 */
  for (size_t k = 0; k < sizeof Ts / sizeof *Ts; ++k) {
    double best = 1e30;
    for (int r = 0; r < REPS; ++r) {
      const double t0 = omp_get_wtime();
      const size_t chunks = n / CHUNK;
      for (size_t c = 0; c <= chunks; ++c) {
        if (c < chunks) {
          const int s = (int)(c % 2);
          CHECK(cudaMemcpyAsync(pin[s], dev + c * CHUNK, CHUNK, cudaMemcpyDeviceToHost, st[s]));
          CHECK(cudaEventRecord(done[s], st[s]));
        }
        if (c > 0) {
          const int s = (int)((c - 1) % 2);
          CHECK(cudaEventSynchronize(done[s]));
          copy_threads(user + (c - 1) * CHUNK, pin[s], CHUNK, Ts[k]);
        }
      }
      const double t = omp_get_wtime() - t0;
      best = t < best ? t : best;
    }
    printf("device -> caller's array through pinned staging, %2d threads: %6.1f GB/s\n", Ts[k], (double)n / best / 1e9);
  }
  /* the caller's array registered: its cost, then DMA straight into it */
  double reg = 1e30, unreg = 1e30, direct = 1e30;
  for (int r = 0; r < REPS; ++r) {
    double t0 = omp_get_wtime();
    CHECK(cudaHostRegister(user, n, cudaHostRegisterDefault));
    double t = omp_get_wtime() - t0;
    reg = t < reg ? t : reg;
    t0 = omp_get_wtime();
    CHECK(cudaMemcpyAsync(user, dev, n, cudaMemcpyDeviceToHost, st[0]));
    CHECK(cudaStreamSynchronize(st[0]));
    t = omp_get_wtime() - t0;
    direct = t < direct ? t : direct;
    t0 = omp_get_wtime();
    CHECK(cudaHostUnregister(user));
    t = omp_get_wtime() - t0;
    unreg = t < unreg ? t : unreg;
  }
  printf("cudaHostRegister: %.3f ms per GiB, unregister %.3f ms per GiB; DMA device -> registered array: %6.1f GB/s\n",
         reg * 1e3 / ((double)n / (1 << 30)), unreg * 1e3 / ((double)n / (1 << 30)), (double)n / direct / 1e9);
  /* the driver's own staging of a pageable copy */
  double pageable = 1e30;
  for (int r = 0; r < REPS; ++r) {
    const double t0 = omp_get_wtime();
    CHECK(cudaMemcpy(user, dev, n, cudaMemcpyDeviceToHost));
    const double t = omp_get_wtime() - t0;
    pageable = t < pageable ? t : pageable;
  }
  printf("cudaMemcpy device -> pageable (the driver stages): %6.1f GB/s\n", (double)n / pageable / 1e9);
  cudaFree(dev), cudaFreeHost(pin[0]), cudaFreeHost(pin[1]);
  free(user), free(other);
  return 0;
}
