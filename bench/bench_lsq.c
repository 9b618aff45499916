/*
 * bench_lsq.c — batched least squares: dual_lsq on the CPU (all cores) against MINPACK's lmder1
 * per cell (cminpack, the same threads, hand-written residuals and Jacobian), and dual_lsq on a
 * GPU context (host arrays, the copies included, and device arrays), on the same cells and
 * starts: expfit (c exp(-k t) through 8 noisy points, n = 2, m = 8), osborne1 (MGH problem 17,
 * two exponentials and a constant through 33 points, n = 5, m = 33) and osborne2 (MGH 18 of
 * MINPACK's set, n = 11, m = 65), each cell's data made from a perturbed reference solution.  Prints per system, B and solver the wall time of the
 * call (the median of --repeat timed calls after one untimed warm-up), cells per second, how
 * many converged, and how the others' solutions compare with the CPU's (GPU: bitwise, or with
 * cuBLAS's QR the largest relative difference of ||F|| and the statuses that differ; lmder1: the
 * largest relative difference over the cells both solved).
 * --dump DIR writes the CPU's solutions (lsq_<system>_<B>_x.f64, raw float64 point-major).
 *   dualbatch_bench_lsq [--system expfit|osborne1|osborne2|all] [--points 1e4,1e5] [--threads T]
 *                       [--repeat R] [--device cpu|gpu] [--dump DIR]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#ifdef DUAL_HAVE_CMINPACK
#include <cminpack-1/cminpack.h>
#endif

#include "dualbatch.h"

typedef struct lsq_system {
  const char *name, *source;
  int n, m;
  /* residuals r (m) and, when J is not NULL, the Jacobian column-major (ldj) at x with data y */
  void (*residuals)(const double *x, const double *y, double *r, double *J, int ldj);
  /* cell b's data y (m values) and start x0 (n) */
  void (*cell)(int64_t b, double *y, double *x0);
} lsq_system;

static double unit(int64_t b, int k) { /* a number in [0, 1) from (b, k) */
  uint64_t z = (uint64_t)b * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static void expfit_residuals(const double *x, const double *y, double *r, double *J, int ldj) {
  for (int i = 0; i < 8; ++i) {
    const double t = i / 4.0, e = exp(-x[1] * t);
    r[i] = x[0] * e - y[i];
    if (J != NULL) J[i] = e, J[ldj + i] = -x[0] * t * e;
  }
}

static void expfit_cell(int64_t b, double *y, double *x0) {
  const double c = 0.5 + 2.0 * unit(b, 0), k = 0.1 + unit(b, 1);
  for (int i = 0; i < 8; ++i) y[i] = c * exp(-k * i / 4.0) + 0.01 * (unit(b, 2 + i) - 0.5);
  x0[0] = c * (0.5 + unit(b, 20)), x0[1] = k * (0.5 + unit(b, 21));
}

static void osborne1_residuals(const double *x, const double *y, double *r, double *J, int ldj) {
  for (int i = 0; i < 33; ++i) {
    const double t = 10.0 * i, e4 = exp(-t * x[3]), e5 = exp(-t * x[4]);
    r[i] = x[0] + x[1] * e4 + x[2] * e5 - y[i];
    if (J != NULL)
      J[i] = 1.0, J[ldj + i] = e4, J[2 * ldj + i] = e5, J[3 * ldj + i] = -t * x[1] * e4,
      J[4 * ldj + i] = -t * x[2] * e5;
  }
}

static void osborne1_cell(int64_t b, double *y, double *x0) {
  static const double ref[5] = {0.3754, 1.9358, -1.4647, 0.01287, 0.02212};
  static const double start[5] = {0.5, 1.5, -1.0, 0.01, 0.02};
  double xs[5];
  for (int j = 0; j < 5; ++j) xs[j] = ref[j] * (1.0 + 0.1 * (unit(b, j) - 0.5));
  for (int i = 0; i < 33; ++i) {
    const double t = 10.0 * i;
    y[i] = xs[0] + xs[1] * exp(-t * xs[3]) + xs[2] * exp(-t * xs[4]) + 1e-3 * (unit(b, 10 + i) - 0.5);
  }
  for (int j = 0; j < 5; ++j) x0[j] = start[j] * (1.0 + 0.2 * (unit(b, 50 + j) - 0.5));
}

/* Osborne 2 (MGH 19 in their paper's numbering, 18 in MINPACK's test set): four exponential and
 * Gaussian terms through 65 points, n = 11, m = 65 (the GPU's cuBLAS rounds by the rule). */
static void osborne2_residuals(const double *x, const double *y, double *r, double *J, int ldj) {
  for (int i = 0; i < 65; ++i) {
    const double t = i / 10.0, d9 = t - x[8], d10 = t - x[9], d11 = t - x[10];
    const double e1 = exp(-t * x[4]), e2 = exp(-d9 * d9 * x[5]), e3 = exp(-d10 * d10 * x[6]),
                 e4 = exp(-d11 * d11 * x[7]);
    r[i] = x[0] * e1 + x[1] * e2 + x[2] * e3 + x[3] * e4 - y[i];
    if (J != NULL) {
      J[i] = e1, J[ldj + i] = e2, J[2 * ldj + i] = e3, J[3 * ldj + i] = e4;
      J[4 * ldj + i] = -t * x[0] * e1, J[5 * ldj + i] = -d9 * d9 * x[1] * e2;
      J[6 * ldj + i] = -d10 * d10 * x[2] * e3, J[7 * ldj + i] = -d11 * d11 * x[3] * e4;
      J[8 * ldj + i] = 2.0 * d9 * x[5] * x[1] * e2, J[9 * ldj + i] = 2.0 * d10 * x[6] * x[2] * e3;
      J[10 * ldj + i] = 2.0 * d11 * x[7] * x[3] * e4;
    }
  }
}

static void osborne2_cell(int64_t b, double *y, double *x0) {
  static const double ref[11] = {1.3100, 0.4316, 0.6337, 0.5994, 0.7542, 0.9043, 1.3658, 4.8237, 2.3987, 4.5689, 5.6753};
  static const double start[11] = {1.3, 0.65, 0.65, 0.7, 0.6, 3, 5, 7, 2, 4.5, 5.5};
  double xs[11];
  for (int j = 0; j < 11; ++j) xs[j] = ref[j] * (1.0 + 0.1 * (unit(b, j) - 0.5));
  double r[65];
  const double zero[65] = {0};
  osborne2_residuals(xs, zero, r, NULL, 0);
  for (int i = 0; i < 65; ++i) y[i] = r[i] + 1e-3 * (unit(b, 20 + i) - 0.5);
  for (int j = 0; j < 11; ++j) x0[j] = start[j] * (1.0 + 0.1 * (unit(b, 100 + j) - 0.5));
}

static const lsq_system systems[] = {
    {"expfit", "input c; input k; param y[8]\noutput r[8]\nfor i in 0..8 { r[i] = c * exp(-k * i / 4) - y[i] }\n",
     2, 8, expfit_residuals, expfit_cell},
    {"osborne1",
     "input x1; input x2; input x3; input x4; input x5; param y[33]\noutput r[33]\n"
     "for i in 0..33 { r[i] = x1 + x2 * exp(-(10 * i) * x4) + x3 * exp(-(10 * i) * x5) - y[i] }\n",
     5, 33, osborne1_residuals, osborne1_cell},
    {"osborne2",
     "input x[11]; param y[65]\noutput r[65]\n"
     "for i in 0..65 { r[i] = x[0] * exp(-(i / 10) * x[4]) + x[1] * exp(-(i / 10 - x[8])^2 * x[5])"
     " + x[2] * exp(-(i / 10 - x[9])^2 * x[6]) + x[3] * exp(-(i / 10 - x[10])^2 * x[7]) - y[i] }\n",
     11, 65, osborne2_residuals, osborne2_cell},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int by_time(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, by_time);
  return t[n / 2];
}

#ifdef DUAL_HAVE_CMINPACK
typedef struct peer_data {
  const lsq_system *s;
  const double *y;
} peer_data;

static int lm_fcn(void *data, int m, int n, const double *x, double *fvec, double *fjac, int ldfjac, int iflag) {
  (void)m, (void)n;
  const peer_data *d = data;
  if (iflag == 1) d->s->residuals(x, d->y, fvec, NULL, 0);
  if (iflag == 2) { /* the residuals are recomputed alongside (the hand code writes both) */
    double r[128];
    d->s->residuals(x, d->y, r, fjac, ldfjac);
  }
  return 0;
}

/* lmder1 per cell, `threads` threads: x (start in, solution out), converged[b] (info 1-4). */
static void peer_lmder(const lsq_system *s, int64_t B, const double *y, double *x, int32_t *converged, int threads) {
  const int n = s->n, m = s->m, lwa = 5 * n + m;
#pragma omp parallel num_threads(threads)
  {
    double *fvec = malloc(sizeof(double) * (size_t)m), *fjac = malloc(sizeof(double) * (size_t)(m * n));
    double *wa = malloc(sizeof(double) * (size_t)lwa);
    int *ipvt = malloc(sizeof(int) * (size_t)n);
#pragma omp for schedule(dynamic, 64)
    for (int64_t b = 0; b < B; ++b) {
      peer_data d = {s, y + b * m};
      const int info = lmder1(lm_fcn, &d, m, n, x + b * n, fvec, fjac, m, sqrt(2.220446049250313e-16), ipvt, wa, lwa);
      converged[b] = info >= 1 && info <= 4;
    }
    free(fvec), free(fjac), free(wa), free(ipvt);
  }
}
#endif

static void report(const char *sys, int64_t B, const char *who, double t, int64_t conv, double iters, const char *cmp) {
  printf("%-9s %8lld %-22s %9.4f s %11.4g cells/s  converged %lld (%.2f Jacobians)  %s\n", sys, (long long)B, who, t,
         (double)B / t, (long long)conv, iters, cmp);
  fflush(stdout);
}

static int run(const lsq_system *s, int64_t B, int threads, int repeat, int gpu, const char *dump) {
  const int n = s->n, m = s->m;
  double *y = malloc(sizeof(double) * (size_t)(B * m)), *x0 = malloc(sizeof(double) * (size_t)(B * n));
  double *xc = malloc(sizeof(double) * (size_t)(B * n)), *xo = malloc(sizeof(double) * (size_t)(B * n));
  double *fc = malloc(sizeof(double) * (size_t)B), *fo = malloc(sizeof(double) * (size_t)B);
  int32_t *ic = malloc(sizeof(int32_t) * (size_t)B), *io = malloc(sizeof(int32_t) * (size_t)B);
  int32_t *tc = malloc(sizeof(int32_t) * (size_t)B), *to = malloc(sizeof(int32_t) * (size_t)B);
  double times[64];
  if (repeat > 64) repeat = 64;
  for (int64_t b = 0; b < B; ++b) s->cell(b, y + b * m, x0 + b * n);
  dual_context *cpu = NULL;
  dual_program *prog = NULL;
  if (dual_context_create(&cpu, DUAL_DEVICE_CPU) != DUAL_SUCCESS) return 1;
  dual_context_set_threads(cpu, threads);
  if (dual_program_compile(cpu, s->source, s->name, &prog) != DUAL_SUCCESS) {
    fprintf(stderr, "%s: %s\n", s->name, dual_context_last_error(cpu));
    return 1;
  }
  /* dual_lsq on the CPU: the reference for the others */
  for (int r = 0; r <= repeat; ++r) {
    memcpy(xc, x0, sizeof(double) * (size_t)(B * n));
    const double t0 = now();
    if (dual_lsq(cpu, prog, NULL, B, xc, n, y, m, ic, tc, fc) != DUAL_SUCCESS) {
      fprintf(stderr, "%s: %s\n", s->name, dual_context_last_error(cpu));
      return 1;
    }
    if (r > 0) times[r - 1] = now() - t0;
  }
  int64_t conv = 0;
  double its = 0;
  for (int64_t b = 0; b < B; ++b) conv += ic[b] == DUAL_SOLVE_CONVERGED, its += tc[b];
  if (dump != NULL) {
    char path[1024];
    snprintf(path, sizeof path, "%s/lsq_%s_%lld_x.f64", dump, s->name, (long long)B);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(xc, sizeof(double), (size_t)(B * n), f) != (size_t)(B * n)) {
      fprintf(stderr, "cannot write %s\n", path);
      if (f != NULL) fclose(f);
      return 1;
    }
    fclose(f);
  }
  char who[64];
  snprintf(who, sizeof who, "dual_lsq CPU (%d thr)", threads);
  report(s->name, B, who, median(times, repeat), conv, its / (double)B, "");
#ifdef DUAL_HAVE_CMINPACK
  if (!gpu) {
    int32_t *pc = malloc(sizeof(int32_t) * (size_t)B);
    for (int r = 0; r <= repeat; ++r) {
      memcpy(xo, x0, sizeof(double) * (size_t)(B * n));
      const double t0 = now();
      peer_lmder(s, B, y, xo, pc, threads);
      if (r > 0) times[r - 1] = now() - t0;
    }
    int64_t pconv = 0;
    double worst = 0;
    for (int64_t b = 0; b < B; ++b) {
      pconv += pc[b];
      if (pc[b] && ic[b] == DUAL_SOLVE_CONVERGED)
        for (int j = 0; j < n; ++j)
          worst = fmax(worst, fabs(xo[b * n + j] - xc[b * n + j]) / fmax(fabs(xc[b * n + j]), 1e-3));
    }
    char cmp[96];
    snprintf(cmp, sizeof cmp, "max rel. diff. from dual_lsq %.1e", worst);
    snprintf(who, sizeof who, "cminpack lmder1 (%d thr)", threads);
    report(s->name, B, who, median(times, repeat), pconv, NAN, cmp);
    free(pc);
  }
#endif
  if (gpu) {
    dual_context *g = NULL;
    if (dual_context_create(&g, DUAL_DEVICE_GPU) != DUAL_SUCCESS) {
      fprintf(stderr, "no GPU: %s\n", dual_context_last_error(g));
      return 1;
    }
    for (int dev = 0; dev < 2; ++dev) {
      double *xd = xo, *yd = y, *fd = fo;
      int32_t *id = io, *td = to;
#ifdef DUAL_HAVE_CUDA
      if (dev) {
        if (cudaMalloc((void **)&xd, sizeof(double) * (size_t)(B * n)) != cudaSuccess ||
            cudaMalloc((void **)&yd, sizeof(double) * (size_t)(B * m)) != cudaSuccess ||
            cudaMalloc((void **)&fd, sizeof(double) * (size_t)B) != cudaSuccess ||
            cudaMalloc((void **)&id, sizeof(int32_t) * (size_t)B) != cudaSuccess ||
            cudaMalloc((void **)&td, sizeof(int32_t) * (size_t)B) != cudaSuccess)
          return 1;
        cudaMemcpy(yd, y, sizeof(double) * (size_t)(B * m), cudaMemcpyHostToDevice);
      }
#else
      if (dev) break;
#endif
      for (int r = 0; r <= repeat; ++r) {
#ifdef DUAL_HAVE_CUDA
        if (dev) cudaMemcpy(xd, x0, sizeof(double) * (size_t)(B * n), cudaMemcpyHostToDevice);
#endif
        if (!dev) memcpy(xd, x0, sizeof(double) * (size_t)(B * n));
        const double t0 = now();
        if (dual_lsq(g, prog, NULL, B, xd, n, yd, m, id, td, fd) != DUAL_SUCCESS) {
          fprintf(stderr, "%s: %s\n", s->name, dual_context_last_error(g));
          return 1;
        }
        if (r > 0) times[r - 1] = now() - t0;
      }
#ifdef DUAL_HAVE_CUDA
      if (dev) {
        cudaMemcpy(xo, xd, sizeof(double) * (size_t)(B * n), cudaMemcpyDeviceToHost);
        cudaMemcpy(fo, fd, sizeof(double) * (size_t)B, cudaMemcpyDeviceToHost);
        cudaMemcpy(io, id, sizeof(int32_t) * (size_t)B, cudaMemcpyDeviceToHost);
        cudaMemcpy(to, td, sizeof(int32_t) * (size_t)B, cudaMemcpyDeviceToHost);
        cudaFree(xd), cudaFree(yd), cudaFree(fd), cudaFree(id), cudaFree(td);
      }
#endif
      const int same = !memcmp(xo, xc, sizeof(double) * (size_t)(B * n)) && !memcmp(fo, fc, sizeof(double) * (size_t)B) &&
                       !memcmp(io, ic, sizeof(int32_t) * (size_t)B) && !memcmp(to, tc, sizeof(int32_t) * (size_t)B);
      /* where not bitwise (cuBLAS's QR: DUALBATCH_SOLVE_QR, the rule from 64 x 8 on), how close */
      int64_t gconv = 0, statuses = 0;
      double worst = 0.0, gits = 0.0;
      for (int64_t b = 0; b < B; ++b) {
        gconv += io[b] == DUAL_SOLVE_CONVERGED, statuses += io[b] != ic[b], gits += to[b];
        if (io[b] == DUAL_SOLVE_CONVERGED && ic[b] == DUAL_SOLVE_CONVERGED)
          worst = fmax(worst, fabs(fo[b] - fc[b]) / fmax(fc[b], 1e-300));
      }
      char cmp[128];
      if (same) snprintf(cmp, sizeof cmp, "bitwise equal to the CPU's");
      else
        snprintf(cmp, sizeof cmp, "||F|| within %.1e of the CPU's where both converged, %lld statuses differ", worst,
                 (long long)statuses);
      report(s->name, B, dev ? "dual_lsq GPU dev. arrays" : "dual_lsq GPU host arrays", median(times, repeat), gconv,
             gits / (double)B, cmp);
      if (!same && (worst > 1e-8 || statuses > B / 1000)) return 1;
    }
    dual_context_destroy(&g);
  }
  dual_program_destroy(&prog);
  dual_context_destroy(&cpu);
  free(y), free(x0), free(xc), free(xo), free(fc), free(fo), free(ic), free(io), free(tc), free(to);
  return 0;
}

int main(int argc, char **argv) {
  const char *system = "all", *points = "1e4,1e5";
  const char *dump = NULL;
  int threads = omp_get_max_threads(), repeat = 3, gpu = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) system = argv[++i];
    else if (!strcmp(argv[i], "--points") && i + 1 < argc) points = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) gpu = !strcmp(argv[++i], "gpu");
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--system expfit|osborne1|osborne2|all] [--points 1e4,1e5] [--threads T] [--repeat R] [--device cpu|gpu] [--dump DIR]\n",
              argv[0]);
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  for (size_t k = 0; k < sizeof systems / sizeof systems[0]; ++k) {
    if (strcmp(system, "all") && strcmp(system, systems[k].name)) continue;
    char list[256];
    snprintf(list, sizeof list, "%s", points);
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ","))
      if (run(&systems[k], (int64_t)atof(tok), threads, repeat, gpu, dump)) return 1;
  }
  return 0;
}
