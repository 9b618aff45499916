/*
 * bench_lu.c — the CPU solvers' per-point linear algebra (issue 19): dual_newton's small LU
 * (src/solve/lu_small.h: factor and solve, row-major, in place) against LAPACK's dgetrf + dgetrs
 * (the library the linker finds: Debian's reference liblapack, or OpenBLAS through the
 * alternatives), one system per call as the solver needs them, on one thread.  For each n it
 * factors and solves the same B random, diagonally weighted systems both ways, prints the systems
 * per second (median of 7 timed sweeps after a warm-up) and the largest relative difference of
 * the solutions and each one's largest relative residual |A x - b|_i / |b_i|.
 *   dualbatch_bench_lu [--sizes 3,8,16,32] [--systems B]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "solve/lu_small.h"

/* LAPACK, Fortran calling convention (no header needed) */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t trans_len);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_time(const void *a, const void *b) {
  const double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

static double median7(double *t) {
  qsort(t, 7, sizeof *t, by_time);
  return t[3];
}

int main(int argc, char **argv) {
  const char *sizes = "3,8,16,32";
  int64_t B = 100000;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
    else if (!strcmp(argv[i], "--systems") && i + 1 < argc) B = (int64_t)atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--sizes 3,8,16,32] [--systems B]\n", argv[0]);
      return 2;
    }
  }
  printf("# per-point LU factor + solve, one thread, %lld systems per sweep, median of 7 sweeps\n", (long long)B);
  char list[256];
  snprintf(list, sizeof list, "%s", sizes);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    const int n = atoi(tok);
    const size_t nn = (size_t)n * (size_t)n;
    double *A0 = malloc(sizeof(double) * nn * (size_t)B), *b0 = malloc(sizeof(double) * (size_t)(n * B));
    double *A = malloc(sizeof(double) * nn * (size_t)B), *x1 = malloc(sizeof(double) * (size_t)(n * B));
    double *x2 = malloc(sizeof(double) * (size_t)(n * B));
    int32_t *piv = malloc(sizeof(int32_t) * (size_t)n);
    int *ipiv = malloc(sizeof(int) * (size_t)n);
    if (!A0 || !b0 || !A || !x1 || !x2 || !piv || !ipiv) {
      fprintf(stderr, "bench_lu: out of memory\n");
      return 1;
    }
    uint64_t z = 88172645463325252ull;
    for (size_t i = 0; i < nn * (size_t)B; ++i) {
      z ^= z << 13, z ^= z >> 7, z ^= z << 17;
      A0[i] = (double)(z >> 11) * 0x1.0p-53 - 0.5;
    }
    for (int64_t b = 0; b < B; ++b)
      for (int i = 0; i < n; ++i) A0[(size_t)b * nn + (size_t)(i * n + i)] += 0.5 * n, b0[b * n + i] = 1.0 + i;
    double t_small[7], t_lapack[7];
    for (int r = -1; r < 7; ++r) {
      memcpy(A, A0, sizeof(double) * nn * (size_t)B), memcpy(x1, b0, sizeof(double) * (size_t)(n * B));
      double t0 = now();
      for (int64_t b = 0; b < B; ++b) {
        double *Ab = A + (size_t)b * nn;
        if (dual_lu_factor(Ab, n, n, 1, piv, 1) == 0) dual_lu_solve(Ab, n, n, 1, piv, 1, x1 + b * n, 1, n - 1, n - 1);
      }
      if (r >= 0) t_small[r] = now() - t0;
      /* LAPACK is column-major: the row-major A is A^T, so solve A^T-transposed ("T") */
      memcpy(A, A0, sizeof(double) * nn * (size_t)B), memcpy(x2, b0, sizeof(double) * (size_t)(n * B));
      t0 = now();
      const int one = 1;
      int info = 0;
      for (int64_t b = 0; b < B; ++b) {
        double *Ab = A + (size_t)b * nn;
        dgetrf_(&n, &n, Ab, &n, ipiv, &info);
        if (info == 0) dgetrs_("T", &n, &one, Ab, &n, ipiv, x2 + b * n, &n, &info, 1);
      }
      if (r >= 0) t_lapack[r] = now() - t0;
    }
    double worst = 0.0, res1 = 0.0, res2 = 0.0; /* solutions apart; residuals max |A x - b| / |b| */
    for (int64_t i = 0; i < n * B; ++i) worst = fmax(worst, fabs(x1[i] - x2[i]) / fmax(fabs(x2[i]), 1e-300));
    for (int64_t b = 0; b < B; ++b)
      for (int i = 0; i < n; ++i) {
        double r1 = -b0[b * n + i], r2 = r1;
        for (int j = 0; j < n; ++j) {
          const double a = A0[(size_t)b * nn + (size_t)(i * n + j)];
          r1 += a * x1[b * n + j], r2 += a * x2[b * n + j];
        }
        res1 = fmax(res1, fabs(r1) / fabs(b0[b * n + i])), res2 = fmax(res2, fabs(r2) / fabs(b0[b * n + i]));
      }
    const double ts = median7(t_small), tl = median7(t_lapack);
    printf("n = %2d  small LU %10.4g systems/s   LAPACK dgetrf+dgetrs %10.4g systems/s   small / LAPACK %.2fx   "
           "largest relative difference %.1e, residuals %.1e and %.1e\n", n, (double)B / ts, (double)B / tl, tl / ts,
           worst, res1, res2);
    free(A0), free(b0), free(A), free(x1), free(x2), free(piv), free(ipiv);
  }
  return 0;
}
