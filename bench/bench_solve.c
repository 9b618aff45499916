/*
 * bench_solve.c — batched Newton on the CPU (dual_newton, all cores) against SUNDIALS KINSOL
 * and MINPACK's hybrj per cell (bench/peers/solve_peers.c, the same threads), on the same cells
 * and starts: kin_steady (n = 32), rob3 (n = 3, stiff), and the Bratu problem on 15 and 48 points
 * (bratu15, the size of a BA point, and bratu48), B cells per call.  Prints per system,
 * B and solver the wall time of the call (the median of --repeat timed calls after one untimed
 * warm-up call, as the other benchmarks), cells per second, how many
 * converged, and the largest relative difference of the peers' solutions from dualbatch's.  The
 * starts are each cell's steady state moved by up to +-P relative per component (--perturb,
 * default 0.1).  With --device gpu, dual_newton runs on a GPU context, timed on host arrays (the
 * copies in and out included) and on device arrays (cudaMalloc: the iterates stay on the device,
 * as the JAX peer's), and the CPU peers are not run; --dump DIR writes each system's parameters,
 * starts and dualbatch's solutions for the largest B (solve_<system>_p.f64, _x0.f64, _ref.f64,
 * raw float64 point-major) for the JAX peer, bench/peers/jax_solve.py.  --peers picks the CPU peers
 * (all, none, or a list of kinsol and hybrj).
 *   dualbatch_bench_solve [--system kin_steady|rob3|bratu15|bratu48|bratu64|all] [--points 1e4,1e5,...] [--threads T]
 *                         [--repeat R] [--perturb P] [--device cpu|gpu] [--dump DIR] [--peers LIST]
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

#include "dualbatch.h"
#include "solve_peers.h"
#include "solve_systems.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef int (*peer_fn)(const solve_system *, int64_t, const double *, double *, int32_t *, int32_t *, int);

static double rel_diff(const double *a, const double *b, int64_t len) {
  double worst = 0;
  for (int64_t i = 0; i < len; ++i) {
    const double d = fabs(a[i] - b[i]) / fmax(fabs(b[i]), 1e-300);
    if (d > worst) worst = d;
  }
  return worst;
}

static int by_time(const void *a, const void *b) {
  const double u = *(const double *)a, v = *(const double *)b;
  return (u > v) - (u < v);
}

/* The median of t[0..n) (sorts t). */
static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, by_time);
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Write len doubles to DIR/solve_<name>_<what>.f64. */
static int dump(const char *dir, const char *name, const char *what, const double *v, int64_t len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/solve_%s_%s.f64", dir, name, what);
  FILE *f = fopen(path, "wb");
  const int ok = f != NULL && fwrite(v, sizeof *v, (size_t)len, f) == (size_t)len;
  if (f != NULL && fclose(f) != 0) return 1;
  if (!ok) fprintf(stderr, "bench_solve: cannot write %s\n", path);
  return !ok;
}

/* The CPU peers to run: --peers all (default), none, or a list of kinsol, hybrj. */
static const char *peer_list = "all";

static int peer_wanted(const char *key) {
  return !strcmp(peer_list, "all") || strstr(peer_list, key) != NULL;
}

static int run_system(const solve_system *s, int64_t B, int threads, int repeat, double perturb, int gpu,
                      const char *dump_dir) {
  const int n = s->n, np = s->np;
  double *p = malloc(sizeof(double) * (size_t)(B * np)), *x0 = malloc(sizeof(double) * (size_t)(B * n));
  double *x = malloc(sizeof(double) * (size_t)(B * n)), *xd = malloc(sizeof(double) * (size_t)(B * n));
  double *fn = malloc(sizeof(double) * (size_t)B);
  int32_t *info = malloc(sizeof(int32_t) * (size_t)B), *it = malloc(sizeof(int32_t) * (size_t)B);
  if (!p || !x0 || !x || !xd || !fn || !info || !it) {
    fprintf(stderr, "bench_solve: out of memory for %lld cells\n", (long long)B);
    return 1;
  }
  for (int64_t b = 0; b < B; ++b) s->cell(b, p + b * np, x0 + b * n);
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s", DUAL_SOURCE_DIR, s->program);
  if (dual_context_create(&ctx, gpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU) != DUAL_SUCCESS ||
      dual_context_set_threads(ctx, threads) != DUAL_SUCCESS ||
      dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS) {
    fprintf(stderr, "bench_solve: %s\n", ctx ? dual_context_last_error(ctx) : "no context");
    return 1;
  }
  /* the starts: each cell's steady state (solved here from the rough guess, untimed) moved by up to
   * +-perturb relative in every component, as a time step would move it */
  if (dual_newton(ctx, prog, NULL, B, x0, n, p, np, info, it, fn) != DUAL_SUCCESS) {
    fprintf(stderr, "bench_solve: %s\n", dual_context_last_error(ctx));
    return 1;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int j = 0; j < n; ++j) {
      uint64_t z = (uint64_t)(b * n + j) * 0x9E3779B97F4A7C15ull;
      z = (z ^ (z >> 29)) * 0xBF58476D1CE4E5B9ull, z ^= z >> 32;
      x0[b * n + j] *= 1.0 + perturb * (2.0 * (double)(z >> 11) * 0x1.0p-53 - 1.0);
    }
  /* dualbatch */
  double times[64], best;
  for (int r = -1; r < repeat; ++r) { /* r = -1: the warm-up */
    memcpy(xd, x0, sizeof(double) * (size_t)(B * n));
    const double t0 = now();
    if (dual_newton(ctx, prog, NULL, B, xd, n, p, np, info, it, fn) != DUAL_SUCCESS) {
      fprintf(stderr, "bench_solve: %s\n", dual_context_last_error(ctx));
      return 1;
    }
    if (r >= 0) times[r] = now() - t0;
  }
  best = median(times, repeat);
  int64_t conv = 0, steps = 0, counts[8] = {0};
  for (int64_t b = 0; b < B; ++b) {
    conv += info[b] == DUAL_SOLVE_CONVERGED, steps += it[b];
    counts[info[b] >= 0 && info[b] < 8 ? info[b] : 7]++;
  }
  printf("%-10s %8lld  %-22s %10.4f s %12.4g cells/s  converged %lld (%.2f steps)", s->name, (long long)B,
         gpu ? "dualbatch dual_newton GPU" : "dualbatch dual_newton", best, (double)B / best, (long long)conv,
         (double)steps / (double)B);
  for (int k = 1; k < 8; ++k)
    if (counts[k]) printf(", %s %lld", dual_solve_status_string(k), (long long)counts[k]);
  if (gpu) printf(" [%s]", dual_context_last_device(ctx) == DUAL_DEVICE_GPU ? "ran on the GPU" : "ran on the CPU");
  printf("\n");
  if (dump_dir != NULL && (dump(dump_dir, s->name, "p", p, B * np) || dump(dump_dir, s->name, "x0", x0, B * n) ||
                           dump(dump_dir, s->name, "ref", xd, B * n)))
    return 1;
#ifdef DUAL_HAVE_CUDA
  if (gpu) { /* the same on device-memory arrays: the iterates start and end on the device */
    double *dx = NULL, *dp = NULL, *dfn = NULL;
    int32_t *dinfo = NULL, *dit = NULL;
    const size_t xb = sizeof(double) * (size_t)(B * n), pb = sizeof(double) * (size_t)(B * np);
    if (cudaMalloc((void **)&dx, xb) != cudaSuccess || cudaMalloc((void **)&dp, pb) != cudaSuccess ||
        cudaMalloc((void **)&dfn, sizeof(double) * (size_t)B) != cudaSuccess ||
        cudaMalloc((void **)&dinfo, sizeof(int32_t) * (size_t)B) != cudaSuccess ||
        cudaMalloc((void **)&dit, sizeof(int32_t) * (size_t)B) != cudaSuccess) {
      fprintf(stderr, "bench_solve: no device memory for %lld cells\n", (long long)B);
      return 1;
    }
    cudaMemcpy(dp, p, pb, cudaMemcpyHostToDevice);
    for (int r = -1; r < repeat; ++r) {
      cudaMemcpy(dx, x0, xb, cudaMemcpyHostToDevice);
      const double t0 = now();
      if (dual_newton(ctx, prog, NULL, B, dx, n, dp, np, dinfo, dit, dfn) != DUAL_SUCCESS) {
        fprintf(stderr, "bench_solve: %s\n", dual_context_last_error(ctx));
        return 1;
      }
      if (r >= 0) times[r] = now() - t0;
    }
    best = median(times, repeat);
    cudaMemcpy(x, dx, xb, cudaMemcpyDeviceToHost);
    printf("%-10s %8lld  %-22s %10.4f s %12.4g cells/s  %s\n", s->name, (long long)B, "dualbatch GPU dev. arrays", best,
           (double)B / best, memcmp(x, xd, xb) == 0 ? "solutions bitwise equal to the host arrays'" : "SOLUTIONS DIFFER");
    cudaFree(dx), cudaFree(dp), cudaFree(dfn), cudaFree(dinfo), cudaFree(dit);
  }
#endif
  if (gpu) { /* the CPU peers are the CPU run's */
    dual_program_destroy(&prog);
    dual_context_destroy(&ctx);
    free(p), free(x0), free(x), free(xd), free(fn), free(info), free(it);
    fflush(stdout);
    return 0;
  }
  /* peers */
  const struct {
    const char *name, *key;
    peer_fn fn;
    const char *(*version)(void);
  } peers[] = {{"KINSOL (dense, exact J)", "kinsol", peer_kinsol, peer_kinsol_version},
               {"MINPACK hybrj1", "hybrj", peer_hybrj, peer_hybrj_version}};
  for (int k = 0; k < 2; ++k) {
    if (!peer_wanted(peers[k].key)) continue;
    int ok = 1;
    for (int r = -1; r < repeat && ok; ++r) {
      memcpy(x, x0, sizeof(double) * (size_t)(B * n));
      const double t0 = now();
      ok = peers[k].fn(s, B, p, x, info, it, threads) == 0;
      if (r >= 0) times[r] = now() - t0;
    }
    if (ok) best = median(times, repeat);
    if (!ok) {
      printf("%-10s %8lld  %-22s %s\n", s->name, (long long)B, peers[k].name, peers[k].version());
      continue;
    }
    conv = 0, steps = 0;
    double agree = 0;
    for (int64_t b = 0; b < B; ++b) {
      steps += it[b];
      if (info[b]) {
        ++conv;
        agree = fmax(agree, rel_diff(x + b * n, xd + b * n, n));
      }
    }
    printf("%-10s %8lld  %-22s %10.4f s %12.4g cells/s  converged %lld (%s %.2f), largest relative difference from dualbatch %.1e\n",
           s->name, (long long)B, peers[k].name, best, (double)B / best, (long long)conv,
           k == 0 ? "steps" : "exit parameter", (double)steps / (double)B, agree);
  }
  fflush(stdout);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  free(p), free(x0), free(x), free(xd), free(fn), free(info), free(it);
  return 0;
}

int main(int argc, char **argv) {
  const char *system = "all", *points = "1e3,1e4,1e5";
  int threads = omp_get_max_threads(), repeat = 7;
  double perturb = 0.1;
  int gpu = 0;
  const char *dump_dir = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--system") && i + 1 < argc) system = argv[++i];
    else if (!strcmp(argv[i], "--points") && i + 1 < argc) points = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--perturb") && i + 1 < argc) perturb = atof(argv[++i]);
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) gpu = !strcmp(argv[++i], "gpu");
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump_dir = argv[++i];
    else if (!strcmp(argv[i], "--peers") && i + 1 < argc) peer_list = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--system kin_steady|rob3|bratu15|bratu48|bratu64|all] [--points 1e3,1e4] [--threads T] [--repeat R] [--perturb P] "
                      "[--device cpu|gpu] [--dump DIR] [--peers all|none|kinsol,hybrj]\n", argv[0]);
      return 2;
    }
  }
  if (repeat < 1 || repeat > 64) {
    fprintf(stderr, "bench_solve: --repeat %d: 1 to 64 timed calls\n", repeat);
    return 2;
  }
  printf("# dualbatch %s, %d threads; peers: %s, %s; starts: the steady states moved by up to +-%g relative\n",
         dual_version_string(), threads, peer_kinsol_version(), peer_hybrj_version(), perturb);
  /* "all": the first four (bratu64, for the LU study past n = 32, only by name) */
  const solve_system *systems[] = {&solve_kin_steady, &solve_rob3, &solve_bratu15, &solve_bratu48, &solve_bratu64};
  for (size_t k = 0; k < sizeof systems / sizeof *systems; ++k) {
    if (strcmp(system, "all") ? strcmp(system, systems[k]->name) != 0 : k >= 4) continue;
    char list[256];
    snprintf(list, sizeof list, "%s", points);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
      if (run_system(systems[k], (int64_t)atof(tok), threads, repeat, perturb, gpu, dump_dir)) return 1;
  }
  return 0;
}
