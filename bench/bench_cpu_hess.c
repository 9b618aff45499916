/*
 * bench_cpu_hess.c — dualbatch_bench_cpu_hess: the CPU Hessian benchmark of BENCHMARKS.md (hess,
 * n = 16: value, gradient and full 16 x 16 Hessian per point).  dual_hessian against ADOL-C's
 * drivers (bench/peers/adolc_hess.cc, when libadolc-dev was found) and a hand-written compiled
 * second-order forward-mode C++ peer (bench/peers/nested_dual_hess.cc), on the identical points,
 * with 1 thread and all cores: warm-up, then interleaved timed calls, median.  Every tool is first
 * checked against the analytic Hessian (tests/ref/hess_ref.c).  Run through bench/run_cpu.sh.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_host.h"
#include "bench_points.h"
#include "dualbatch.h"
#include "hess_ref.h"
#include "nested_dual_hess.h"
#ifdef DUAL_HAVE_ADOLC
#include "adolc_hess.h"
#endif

#ifndef DUAL_SOURCE_DIR
#define DUAL_SOURCE_DIR "."
#endif

enum { N = HESS_REF_N, NH = N * N, CHECK_POINTS = 1000 };
/* Agreement with the analytic Hessian, relative to each row's largest entry: every tool
 * evaluates the same formulas in a different order (~1e-15); a wrong term is O(1). */
#define CHECK_TOL 1e-10

typedef int (*hess_fn)(int64_t B, const double *x, double *f, double *g, double *H, int threads);

static dual_context *g_ctx;
static dual_program *g_prog;

static int dual_tool(int64_t B, const double *x, double *f, double *g, double *H, int threads) {
  dual_context_set_threads(g_ctx, threads);
  return dual_hessian(g_ctx, g_prog, B, x, N, NULL, 0, f, 1, g, N, H, NH, DUAL_HESSIAN_FULL, NULL);
}

typedef struct tool {
  const char *name;
  hess_fn run;
} tool;

/* Largest row-scaled difference from the analytic value, gradient and Hessian. */
static double check(const tool *t, int64_t B, const double *x, double *f, double *g, double *H) {
  if (t->run(B, x, f, g, H, 0) != 0) return INFINITY;
  double worst = 0.0;
  for (int64_t b = 0; b < B; ++b) {
    double gr[N], Hr[NH];
    const double fr = hess_ref_value(x + b * N);
    hess_ref_gradient(x + b * N, gr);
    hess_ref_hessian(x + b * N, Hr);
    worst = fmax(worst, fabs(f[b] - fr) / fmax(fabs(fr), 1e-300));
    double gs = 0.0;
    for (int j = 0; j < N; ++j) gs = fmax(gs, fabs(gr[j]));
    for (int j = 0; j < N; ++j) worst = fmax(worst, fabs(g[b * N + j] - gr[j]) / gs);
    for (int i = 0; i < N; ++i) {
      double s = 0.0;
      for (int j = 0; j < N; ++j) s = fmax(s, fabs(Hr[i * N + j]));
      for (int j = 0; j < N; ++j) worst = fmax(worst, fabs(H[b * NH + i * N + j] - Hr[i * N + j]) / s);
    }
  }
  return worst;
}

int main(int argc, char **argv) {
  int64_t B = 100000;
  int reps = 7, nthreads = 2, threads[2] = {omp_get_num_procs(), 1};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) B = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) nthreads = 1, threads[0] = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: dualbatch_bench_cpu_hess [--batch B] [--reps R] [--threads T]\n");
      return 2;
    }
  }
  if (B < CHECK_POINTS) B = CHECK_POINTS;
  if (reps < 1 || reps > BENCH_MAX_REPS) reps = 7;
  if (threads[0] == 1) nthreads = 1;
  if (dual_context_create(&g_ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS ||
      dual_program_compile_file(g_ctx, DUAL_SOURCE_DIR "/bench/programs/hess.db", &g_prog) != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu_hess: %s\n", dual_context_last_error(g_ctx));
    return 2;
  }
  tool tools[4];
  int ntools = 0;
  tools[ntools++] = (tool){"dualbatch", dual_tool};
#ifdef DUAL_HAVE_ADOLC
  tools[ntools++] = (tool){"ADOL-C", adolc_hess_run};
#endif
  tools[ntools++] = (tool){"nested dual C++", nested_hess_run};

  double *x = bench_xmalloc(sizeof(double) * (size_t)(B * N));
  double *f = bench_xmalloc(sizeof(double) * (size_t)B), *g = bench_xmalloc(sizeof(double) * (size_t)(B * N));
  double *H = bench_xmalloc(sizeof(double) * (size_t)(B * NH));
  bench_points_hess(B, 3, x);

  char cpu[400], load[128], commit[64], dirty[64], date[64];
  bench_cpu_model(cpu, sizeof cpu);
  bench_load_average(load, sizeof load);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' status --porcelain --untracked-files=no 2>/dev/null",
                     dirty, sizeof dirty);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
  printf("# dualbatch CPU Hessian benchmark (dualbatch_bench_cpu_hess)\n");
  printf("date:      %s\nmachine:   %s, %d CPUs\nload avg:  %s (at start)\n", date, cpu,
         omp_get_num_procs(), load);
  printf("commit:    %s%s\n", commit[0] ? commit : "unknown", dirty[0] ? " + uncommitted changes" : "");
#ifdef DUAL_HAVE_ADOLC
  printf("peers:     %s; %s\n", adolc_peer_info(), nested_peer_info());
#else
  printf("peers:     ADOL-C not built (libadolc-dev missing); %s\n", nested_peer_info());
#endif
  printf("method:    hess (n = 16), FP64 value + gradient + full Hessian per point, B = %lld; "
         "warm-up, then %d timed calls per tool, interleaved; median [min, max]\n\n",
         (long long)B, reps);
  int wrong = 0;
  for (int t = 0; t < ntools; ++t) {
    const double err = check(&tools[t], CHECK_POINTS, x, f, g, H);
    printf("check %s against the analytic Hessian (first %d points): max row-scaled difference "
           "%.3g -> %s\n", tools[t].name, CHECK_POINTS, err, err <= CHECK_TOL ? "agree" : "WRONG");
    wrong |= !(err <= CHECK_TOL);
  }
  printf("\n| threads | tool | points/s (median [min, max]) | dualbatch / tool | others' CPU |\n");
  printf("|---|---|---|---|---|\n");
  for (int it = 0; it < nthreads; ++it) {
    double rate[4][BENCH_MAX_REPS];
    for (int t = 0; t < ntools; ++t) tools[t].run(B, x, f, g, H, threads[it]); /* warm-up */
    bench_cpu_sample before, after;
    bench_cpu_sample_take(&before);
    for (int r = 0; r < reps; ++r)
      for (int t = 0; t < ntools; ++t) {
        const double t0 = omp_get_wtime();
        if (tools[t].run(B, x, f, g, H, threads[it]) != 0) {
          fprintf(stderr, "dualbatch_bench_cpu_hess: %s failed\n", tools[t].name);
          return 2;
        }
        rate[t][r] = (double)B / (omp_get_wtime() - t0);
      }
    bench_cpu_sample_take(&after);
    const double others = bench_others_share(&before, &after);
    const double ours = bench_median(rate[0], reps);
    for (int t = 0; t < ntools; ++t) {
      double lo = rate[t][0], hi = rate[t][0];
      for (int r = 1; r < reps; ++r) lo = fmin(lo, rate[t][r]), hi = fmax(hi, rate[t][r]);
      const double med = bench_median(rate[t], reps);
      printf("| %d | %s | %.3g [%.3g, %.3g] | %s%.2f%s | %.0f%%%s |\n", threads[it], tools[t].name,
             med, lo, hi, t == 0 ? "" : "", t == 0 ? 1.0 : ours / med, "×", others * 100.0,
             others > BENCH_OTHERS_WARN ? " (busy)" : "");
    }
  }
  free(x), free(f), free(g), free(H);
  dual_program_destroy(&g_prog);
  dual_context_destroy(&g_ctx);
  return wrong ? 1 : 0;
}
