/*
 * bench_cpu_grad.c — dualbatch_bench_cpu_grad: the CPU gradient benchmark of BENCHMARKS.md (grad,
 * n = 1024, the many-input case reverse mode is for).  dual_gradient with the reverse mode forced
 * (DUAL_AD_REVERSE) on the interpreter and on the CPU's compiled tier (a context of its own under
 * DUAL_TIER_COMPILE: its first call, the module's compile or its load from the disk cache, is
 * timed and printed), with the forward mode forced (DUAL_AD_FORWARD, for reference) and with
 * DUAL_AD_AUTO (the mode it picked is printed; interpreted), against ADOL-C's gradient driver on one tape
 * (bench/peers/adolc_grad.cc, when libadolc-dev was found), on the identical points, with all
 * cores and with 1 thread: warm-up, then interleaved timed calls, best of the repeats (the median
 * beside it).  Each tool times the first B points of the same point set, B per tool so that a call
 * takes about a second (forward mode is ~30x slower than reverse at n = 1024).  Every tool's
 * gradient is checked against the hand-derived formula (grad_ref.h) before the timing and on the
 * timed calls' first and last points; the run fails when one differs by more than 1e-12.  Run
 * through bench/run_cpu.sh.
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
#include "grad_ref.h"
#ifdef DUAL_HAVE_ADOLC
#include "adolc_grad.h"
#include "adolc_hess.h"
#endif

#ifndef DUAL_SOURCE_DIR
#define DUAL_SOURCE_DIR "."
#endif

enum { N = 1024, CHECK_POINTS = 200, MAX_TOOLS = 5 };
/* Agreement with the formula, relative to each point's largest gradient entry: every tool sums
 * the same terms in a different order (~1e-16); a wrong term is O(1). */
#define CHECK_TOL 1e-12

/* Default points per call of each tool: about one second on 1 thread of the project's 2-core
 * machine (reverse ~4.3e4 points/s, forward ~1.3e3, ADOL-C ~2.5e4). */
#define BATCH_REVERSE 40000
#define BATCH_FORWARD 1500
#define BATCH_ADOLC 25000
#define BATCH_COMPILED 80000

typedef int (*grad_fn)(int64_t B, const double *x, double *g, int threads);

static dual_context *g_ctx, *g_cctx; /* the interpreter's context, the compiled tier's */
static dual_program *g_prog;

static int dual_with_mode(int mode, int64_t B, const double *x, double *g, int threads) {
  dual_context_set_threads(g_ctx, threads);
  dual_context_set_ad_mode(g_ctx, mode);
  return dual_gradient(g_ctx, g_prog, B, x, N, NULL, 0, NULL, g, N, NULL);
}
static int dual_reverse(int64_t B, const double *x, double *g, int threads) {
  return dual_with_mode(DUAL_AD_REVERSE, B, x, g, threads);
}
static int dual_forward(int64_t B, const double *x, double *g, int threads) {
  return dual_with_mode(DUAL_AD_FORWARD, B, x, g, threads);
}
static int dual_auto(int64_t B, const double *x, double *g, int threads) {
  return dual_with_mode(DUAL_AD_AUTO, B, x, g, threads);
}
static int dual_compiled(int64_t B, const double *x, double *g, int threads) {
  dual_context_set_threads(g_cctx, threads);
  const int rc = dual_gradient(g_cctx, g_prog, B, x, N, NULL, 0, NULL, g, N, NULL);
  return rc == DUAL_SUCCESS && dual_context_last_tier(g_cctx) != DUAL_TIER_COMPILE ? DUAL_ERR_INTERNAL : rc;
}

typedef struct tool {
  char name[48];
  grad_fn run;
  int64_t batch; /* points per timed call: the first `batch` points */
  double worst;  /* worst scaled difference from the formula over every check */
  int ours;      /* a dualbatch call: its error is the context's last error (2: the compiled
                    tier's context) */
} tool;

static const char *mode_name(int mode) {
  return mode == DUAL_AD_REVERSE ? "reverse" : mode == DUAL_AD_FORWARD ? "forward" : "?";
}

/* Checks a tool's gradients of the first and last CHECK_POINTS / 2 points of a call over B points
 * (or all of them when B <= CHECK_POINTS): both ends of a split over threads or processes. */
static void check_call(tool *t, int64_t B, const double *x, const double *g) {
  const int64_t half = CHECK_POINTS / 2;
  double w = B <= CHECK_POINTS ? grad_ref_worst(N, x, g, N, 0, B)
                               : fmax(grad_ref_worst(N, x, g, N, 0, half),
                                      grad_ref_worst(N, x, g, N, B - half, half));
  t->worst = fmax(t->worst, w); /* grad_ref_worst gives +inf for NaN */
}

static void usage(void) {
  fprintf(stderr, "usage: dualbatch_bench_cpu_grad [--batch B] [--batch-reverse B] "
                  "[--batch-forward B] [--batch-adolc B] [--batch-compiled B] [--reps R] [--threads T]\n"
                  "  --batch sets every tool's points per call; the others one tool's "
                  "(defaults %d, %d, %d, %d)\n",
          BATCH_REVERSE, BATCH_FORWARD, BATCH_ADOLC, BATCH_COMPILED);
}

int main(int argc, char **argv) {
  int64_t batch_reverse = BATCH_REVERSE, batch_forward = BATCH_FORWARD, batch_adolc = BATCH_ADOLC;
  int64_t batch_compiled = BATCH_COMPILED;
  int reps = 3, nthreads = 2, threads[2] = {omp_get_num_procs(), 1};
  for (int i = 1; i < argc; ++i) {
    const int more = i + 1 < argc;
    if (strcmp(argv[i], "--batch") == 0 && more)
      batch_reverse = batch_forward = batch_adolc = batch_compiled = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--batch-reverse") == 0 && more) batch_reverse = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--batch-forward") == 0 && more) batch_forward = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--batch-adolc") == 0 && more) batch_adolc = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--batch-compiled") == 0 && more) batch_compiled = (int64_t)strtod(argv[++i], NULL);
    else if (strcmp(argv[i], "--reps") == 0 && more) reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && more) nthreads = 1, threads[0] = atoi(argv[++i]);
    else {
      usage();
      return 2;
    }
  }
  if (batch_reverse < CHECK_POINTS) batch_reverse = CHECK_POINTS;
  if (batch_forward < CHECK_POINTS) batch_forward = CHECK_POINTS;
  if (batch_adolc < CHECK_POINTS) batch_adolc = CHECK_POINTS;
  if (batch_compiled < CHECK_POINTS) batch_compiled = CHECK_POINTS;
  if (reps < 1 || reps > BENCH_MAX_REPS) reps = 3;
  if (threads[0] < 1) threads[0] = omp_get_num_procs();
  if (threads[0] == 1) nthreads = 1;
  /* the interpreter's context stays on the interpreter (AUTO would compile it once hot) */
  if (dual_context_create(&g_ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS ||
      dual_context_set_tier(g_ctx, DUAL_TIER_INTERPRET) != DUAL_SUCCESS ||
      dual_context_create(&g_cctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS ||
      dual_context_set_tier(g_cctx, DUAL_TIER_COMPILE) != DUAL_SUCCESS ||
      dual_context_set_ad_mode(g_cctx, DUAL_AD_REVERSE) != DUAL_SUCCESS ||
      dual_program_compile_file(g_ctx, DUAL_SOURCE_DIR "/bench/programs/grad.db", &g_prog) != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu_grad: %s\n", dual_context_last_error(g_ctx));
    return 2;
  }
  if (dual_program_num_inputs(g_prog) != N || dual_program_num_outputs(g_prog) != 1) {
    fprintf(stderr, "dualbatch_bench_cpu_grad: bench/programs/grad.db is not the n = %d grad "
                    "workload\n", N);
    return 2;
  }

  int64_t bmax = batch_reverse > batch_forward ? batch_reverse : batch_forward;
  if (batch_adolc > bmax) bmax = batch_adolc;
  if (batch_compiled > bmax) bmax = batch_compiled;
  double *x = bench_xmalloc(sizeof(double) * (size_t)(bmax * N));
  double *g = bench_xmalloc(sizeof(double) * (size_t)(bmax * N));
  bench_points_grad(bmax, N, 5, x);

  /* which mode AUTO takes here: one call on the check points */
  int auto_mode = 0;
  if (dual_auto(CHECK_POINTS, x, g, 0) == DUAL_SUCCESS) auto_mode = dual_context_last_ad_mode(g_ctx);
  /* the compiled tier's first call: its module compiled, or loaded from the disk cache */
  const double c0 = omp_get_wtime();
  const int compiled_rc = dual_compiled(1, x, g, 1);
  const double first_call = omp_get_wtime() - c0;
  if (compiled_rc != DUAL_SUCCESS) {
    fprintf(stderr, "dualbatch_bench_cpu_grad: the compiled tier failed: %s\n", dual_context_last_error(g_cctx));
    return 2;
  }
  tool tools[MAX_TOOLS];
  int ntools = 0;
  tools[ntools++] = (tool){"dualbatch reverse", dual_reverse, batch_reverse, 0.0, 1};
  tools[ntools++] = (tool){"dualbatch reverse, compiled", dual_compiled, batch_compiled, 0.0, 2};
  tools[ntools++] = (tool){"dualbatch forward", dual_forward, batch_forward, 0.0, 1};
  tools[ntools] = (tool){"", dual_auto, auto_mode == DUAL_AD_REVERSE ? batch_reverse : batch_forward, 0.0, 1};
  snprintf(tools[ntools++].name, sizeof tools[0].name, "dualbatch auto (%s)", mode_name(auto_mode));
#ifdef DUAL_HAVE_ADOLC
  tools[ntools++] = (tool){"ADOL-C", adolc_grad_run, batch_adolc, 0.0, 0};
#endif

  char cpu[400], load[128], commit[64], dirty[64], date[64];
  bench_cpu_model(cpu, sizeof cpu);
  bench_load_average(load, sizeof load);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' status --porcelain --untracked-files=no 2>/dev/null",
                     dirty, sizeof dirty);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
  printf("# dualbatch CPU gradient benchmark (dualbatch_bench_cpu_grad)\n");
  printf("date:      %s\nmachine:   %s, %d CPUs\nload avg:  %s (at start)\n", date, cpu,
         omp_get_num_procs(), load);
  printf("commit:    %s%s\n", commit[0] ? commit : "unknown", dirty[0] ? " + uncommitted changes" : "");
  printf("program:   bench/programs/grad.db, %lld instructions, %d registers\n",
         (long long)dual_program_num_instructions(g_prog), dual_program_num_registers(g_prog));
#ifdef DUAL_HAVE_ADOLC
  /* the check below traces the tape; its statistics are printed after it */
  printf("peers:     %s, the gradient driver\n", adolc_peer_info());
#else
  printf("peers:     ADOL-C not built (libadolc-dev missing)\n");
#endif
  printf("AUTO:      dual_gradient with DUAL_AD_AUTO ran in %s mode "
         "(dual_context_last_ad_mode)\n", auto_mode ? mode_name(auto_mode) : "no (the call failed)");
  printf("compiled:  the CPU compiled tier (DUAL_TIER_COMPILE, reverse mode); its first call, the "
         "module's compile or its load from the disk cache: %.2f s\n", first_call);
  printf("method:    grad (n = %d), FP64 gradient per point, points N(0,1); per tool the first B "
         "points; warm-up, then %d timed calls per tool, interleaved; best (median)\n\n", N, reps);

  int wrong = 0;
  for (int t = 0; t < ntools; ++t) {
    const int rc = tools[t].run(CHECK_POINTS, x, g, 0);
    tools[t].worst = rc == 0 ? grad_ref_worst(N, x, g, N, 0, CHECK_POINTS) : INFINITY;
    printf("check %s against the formula (first %d points, all threads): max row-scaled "
           "difference %.3g -> %s\n", tools[t].name, CHECK_POINTS, tools[t].worst,
           tools[t].worst <= CHECK_TOL ? "agree" : "WRONG");
  }
#ifdef DUAL_HAVE_ADOLC
  printf("ADOL-C %s\n", adolc_grad_tape_info());
#endif

  printf("\n| workload | B | threads | tool | points/s (best (median)) | dualbatch reverse / tool "
         "| compiled / tool | others' CPU |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int it = 0; it < nthreads; ++it) {
    double rate[MAX_TOOLS][BENCH_MAX_REPS];
    for (int t = 0; t < ntools; ++t) tools[t].run(tools[t].batch, x, g, threads[it]); /* warm-up */
    bench_cpu_sample before, after;
    bench_cpu_sample_take(&before);
    for (int r = 0; r < reps; ++r)
      for (int t = 0; t < ntools; ++t) {
        const double t0 = omp_get_wtime();
        if (tools[t].run(tools[t].batch, x, g, threads[it]) != 0) {
          fprintf(stderr, "dualbatch_bench_cpu_grad: %s failed%s%s\n", tools[t].name,
                  tools[t].ours ? ": " : "",
                  tools[t].ours == 2 ? dual_context_last_error(g_cctx) : tools[t].ours ? dual_context_last_error(g_ctx) : "");
          return 2;
        }
        rate[t][r] = (double)tools[t].batch / (omp_get_wtime() - t0);
        if (r == reps - 1) check_call(&tools[t], tools[t].batch, x, g);
      }
    bench_cpu_sample_take(&after);
    const double others = bench_others_share(&before, &after);
    double best[MAX_TOOLS];
    for (int t = 0; t < ntools; ++t) {
      best[t] = rate[t][0];
      for (int r = 1; r < reps; ++r) best[t] = fmax(best[t], rate[t][r]);
    }
    for (int t = 0; t < ntools; ++t)
      printf("| grad | %lld | %d | %s | %.3g (%.3g) | %.2f× | %.2f× | %.0f%%%s |\n",
             (long long)tools[t].batch, threads[it], tools[t].name, best[t],
             bench_median(rate[t], reps), best[0] / best[t], best[1] / best[t], others * 100.0,
             others > BENCH_OTHERS_WARN ? " (busy)" : "");
  }
  printf("\nagreement with the formula, worst over every check (max row-scaled difference, "
         "tolerance %.0e):", CHECK_TOL);
  for (int t = 0; t < ntools; ++t) {
    printf("%s %s %.3g%s", t ? ";" : "", tools[t].name, tools[t].worst,
           tools[t].worst <= CHECK_TOL ? "" : " WRONG");
    wrong |= !(tools[t].worst <= CHECK_TOL);
  }
  printf("\n");
  free(x), free(g);
  dual_program_destroy(&g_prog);
  dual_context_destroy(&g_ctx);
  dual_context_destroy(&g_cctx);
  return wrong ? 1 : 0;
}
