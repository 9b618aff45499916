/*
 * bench_crossover.c — dualbatch_bench_crossover: where reverse mode starts to beat forward mode
 * for one output (issue 5).  For the grad family of BENCHMARKS.md,
 * f(x) = sum_{i<n} sin(x_i) x_{(i+1) mod n} + log1p(sum x_i^2) at n = 2 .. 1024 (compiled from
 * program text at run time; n = 1024 is bench/programs/grad.db), it times dual_gradient (or with
 * --product hvp dual_hvp along N(0,1) directions, with --product hessian dual_hessian, up to
 * n = 256: nested forward against forward-over-reverse) with DUAL_AD_FORWARD and with DUAL_AD_REVERSE on the same N(0,1) points, and records the mode
 * DUAL_AD_AUTO runs (dual_context_last_ad_mode after a call).  On the CPU with all threads, and, in
 * CUDA builds when a GPU context can be created, on the GPU with device-resident arrays (dual_run,
 * DUAL_MEMORY_DEVICE); a mode the GPU refuses (DUAL_ERR_UNSUPPORTED: a build whose GPU engine has
 * no reverse mode) is reported as such and the study goes on.  Per (n, mode) the batch B is chosen so that one CPU call takes about
 * --target seconds (default 0.2); on the GPU, where a small batch times the per-call latency,
 * B grows until the rate stops rising (calls up to --gpu-max-seconds, B capped by memory and
 * --gpu-max-batch).  Each rate is the best of --reps timed calls after a warm-up; rates within
 * 5% of each other are called a tie (the shared CPU machine moves that much between runs).
 * Every result is checked against the formula (grad_ref.h; a Hessian through H v) on the first
 * points; the run fails
 * (exit 1) when one differs by more than 1e-12, or (exit 2) when a CPU call fails.  Prints
 * Markdown tables.  Run by bench/run_cpu.sh (CPU rows) and bench/run_gpu.sh (GPU rows,
 * --device gpu).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef DUAL_BENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_host.h"
#include "bench_points.h"
#include "dualbatch.h"
#include "grad_ref.h"

#ifndef DUAL_SOURCE_DIR
#define DUAL_SOURCE_DIR "."
#endif

enum { MAX_SIZES = 32, CHECK_POINTS = 64, SEED = 5 };
enum { PRODUCT_GRAD, PRODUCT_HVP, PRODUCT_HESSIAN };
#define HESSIAN_MAX_N 256 /* a full Hessian per point: n^2 doubles */
#define CHECK_TOL 1e-12
/* Rates closer than this are called a tie (the machine is shared; repeated runs move ~3%). */
#define TIE 0.05

static const int DEFAULT_SIZES[] = {2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024};

typedef struct options {
  int sizes[MAX_SIZES];
  int num_sizes;
  double target;          /* seconds per timed call (CPU) */
  double gpu_max_seconds; /* the longest GPU call while growing B */
  int reps;
  int threads; /* CPU threads, 0 = all */
  int cpu, gpu;
  int product; /* PRODUCT_*: --product grad|hvp|hessian */
  double gpu_max_batch;
} options;

/* One measured mode at one size: points per call, best rate (0: not run), the error (status and
 * message) when the call failed, the worst difference from the formula. */
typedef struct measured {
  int64_t batch;
  double rate;
  int status;
  char error[200];
  double worst;
} measured;

static const char *mode_name(int mode) {
  return mode == DUAL_AD_REVERSE ? "reverse" : mode == DUAL_AD_FORWARD ? "forward" : "—";
}

/* The grad function at size n in the language (grad.db's text for n = 1024). */
static void grad_source(int n, char *buf, size_t cap) {
  snprintf(buf, cap,
           "# the grad family (BENCHMARKS.md) at n = %d\n"
           "input  x[%d]\n"
           "let ring = sum(i in 0..%d, sin(x[i]) * x[i + 1]) + sin(x[%d]) * x[0]\n"
           "let norm = log1p(sum(i in 0..%d, square(x[i])))\n"
           "output f = ring + norm\n",
           n, n, n - 1, n - 1, n);
}

/* The points (and HVP directions) of one size, grown on demand: the generator's stream is
 * prefix-stable, so the first B points are the same whatever the pool's size. */
typedef struct point_pool {
  int n;
  int64_t count;
  double *x, *v;
} point_pool;

static const double *pool_points(point_pool *pool, int64_t B) {
  if (B > pool->count) {
    free(pool->x), free(pool->v);
    pool->x = bench_xmalloc(sizeof(double) * (size_t)(B * pool->n));
    pool->v = bench_xmalloc(sizeof(double) * (size_t)(B * pool->n));
    bench_points_grad(B, pool->n, SEED, pool->x);
    bench_points_grad(B, pool->n, SEED + 1, pool->v);
    pool->count = B;
  }
  return pool->x;
}

/* ---- one device's calls ---------------------------------------------------------------------
 * A runner evaluates the gradients (HVPs) of the first B points of the pool in the context's
 * current AD mode and copies the first `keep` of them into g_host (packed [keep][n]). */
typedef struct runner runner;
struct runner {
  dual_context *ctx;
  const dual_program *prog;
  point_pool *pool;
  int product;
  int64_t out_len; /* doubles of one point's result: n, or n^2 for a Hessian */
  int64_t max_batch;
  int (*run)(runner *r, int64_t B, double *g_host, int64_t keep);
  /* CPU: the gradient array; GPU: the device arrays and how many points they hold */
  double *g;
  int64_t g_count;
  double *dx, *dv, *dg;
  int32_t *dstatus;
  int64_t d_count;
  const double *dx_of; /* the host points dx holds a copy of */
};

static int cpu_run(runner *r, int64_t B, double *g_host, int64_t keep) {
  const double *x = pool_points(r->pool, B);
  const int n = r->pool->n;
  const int64_t len = r->out_len;
  if (B > r->g_count) {
    free(r->g);
    r->g = bench_xmalloc(sizeof(double) * (size_t)(B * len));
    r->g_count = B;
  }
  int st;
  if (r->product == PRODUCT_HVP)
    st = dual_hvp(r->ctx, r->prog, B, x, n, NULL, 0, r->pool->v, n, NULL, 0, NULL, 0, r->g, n, NULL);
  else if (r->product == PRODUCT_HESSIAN)
    st = dual_hessian(r->ctx, r->prog, B, x, n, NULL, 0, NULL, 0, NULL, 0, r->g, len,
                      DUAL_HESSIAN_FULL, NULL);
  else
    st = dual_gradient(r->ctx, r->prog, B, x, n, NULL, 0, NULL, r->g, n, NULL);
  if (st == DUAL_SUCCESS && keep > 0) memcpy(g_host, r->g, sizeof(double) * (size_t)(keep * len));
  return st;
}

#ifdef DUAL_BENCH_WITH_CUDA
static int gpu_run(runner *r, int64_t B, double *g_host, int64_t keep) {
  const int n = r->pool->n;
  const double *x = pool_points(r->pool, B);
  if (B > r->d_count || x != r->dx_of) {
    cudaFree(r->dx), cudaFree(r->dv), cudaFree(r->dg), cudaFree(r->dstatus);
    r->dx = r->dv = r->dg = NULL, r->dstatus = NULL, r->d_count = 0;
    const size_t bytes = sizeof(double) * (size_t)(B * n);
    if (cudaMalloc((void **)&r->dx, bytes) != cudaSuccess || cudaMalloc((void **)&r->dv, bytes) != cudaSuccess ||
        cudaMalloc((void **)&r->dg, sizeof(double) * (size_t)(B * r->out_len)) != cudaSuccess ||
        cudaMalloc((void **)&r->dstatus, sizeof(int32_t) * (size_t)B) != cudaSuccess ||
        cudaMemcpy(r->dx, x, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(r->dv, r->pool->v, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      fprintf(stderr, "dualbatch_bench_crossover: device arrays of %lld points (n = %d) failed\n",
              (long long)B, n);
      return DUAL_ERR_NO_MEMORY;
    }
    r->d_count = B, r->dx_of = x;
  }
  dual_batch b;
  dual_batch_init(&b);
  b.count = B;
  b.memory = DUAL_MEMORY_DEVICE;
  b.x = r->dx, b.x_ps = n, b.x_es = 1;
  int mode = DUAL_MODE_GRADIENT;
  if (r->product == PRODUCT_GRAD) {
    b.d = r->dg, b.d_ps = n, b.d_rs = 0, b.d_cs = 1;
  } else {
    mode = r->product == PRODUCT_HVP ? DUAL_MODE_HVP : DUAL_MODE_HESSIAN;
    b.v = r->dv, b.v_ps = n, b.v_es = 1;
    b.h = r->dg, b.h_ps = r->out_len, b.h_rs = r->out_len, b.h_es = 1;
    b.h_layout = DUAL_HESSIAN_FULL;
  }
  b.status = r->dstatus;
  const int st = dual_run(r->ctx, r->prog, mode, &b);
  if (st == DUAL_SUCCESS && keep > 0 &&
      cudaMemcpy(g_host, r->dg, sizeof(double) * (size_t)(keep * r->out_len), cudaMemcpyDeviceToHost) != cudaSuccess)
    return DUAL_ERR_DEVICE;
  return st;
}
#endif

/* Seconds of one call at B points, after one untimed call at that size (the first call at a new
 * size pays the arrays' page faults and the library's allocations); negative on failure. */
static double warm_call(runner *r, int64_t B, measured *out) {
  for (int i = 0; i < 2; ++i) {
    const double t0 = omp_get_wtime();
    out->status = r->run(r, B, NULL, 0);
    const double t = omp_get_wtime() - t0;
    if (out->status != DUAL_SUCCESS) {
      snprintf(out->error, sizeof out->error, "%s", dual_context_last_error(r->ctx));
      return -1.0;
    }
    if (i == 1) return t;
  }
  return -1.0;
}

/* The batch to time one mode at.  CPU (throughput does not depend on B once the threads have a
 * few blocks each): B grows 4x from a small batch until a call takes half the target, then
 * is sized for the target.  GPU (a small batch leaves the device idle and times the per-call
 * latency): B grows 4x while the rate still rises by more than 10%, a call takes less than
 * --gpu-max-seconds and the memory allows; the best rate's B.  0 on failure. */
static int64_t choose_batch(runner *r, int gpu, const options *o, measured *out) {
  int64_t B = CHECK_POINTS, best_b = 0;
  double best_rate = 0.0;
  for (;;) {
    const double sec = warm_call(r, B, out);
    if (sec < 0.0) return 0;
    const double rate = (double)B / fmax(sec, 1e-9);
    if (!gpu && (sec >= 0.5 * o->target || B >= r->max_batch)) {
      const double want = (double)B * o->target / fmax(sec, 1e-9);
      return want < (double)CHECK_POINTS ? CHECK_POINTS
             : want > (double)r->max_batch ? r->max_batch
                                           : (int64_t)want;
    }
    if (gpu) {
      const int rising = rate > 1.1 * best_rate;
      if (rate > best_rate) best_rate = rate, best_b = B;
      if (!rising || sec >= o->gpu_max_seconds || B >= r->max_batch) return best_b;
    }
    B = B * 4 < r->max_batch ? B * 4 : r->max_batch;
  }
}

/* Times one mode: its gradients of the first points against the formula, the batch size
 * (choose_batch), then warm-up and reps timed calls (best). */
static void measure_mode(runner *r, int mode, int gpu, const options *o, measured *out) {
  const int n = r->pool->n;
  memset(out, 0, sizeof *out);
  double *g_check = bench_xmalloc(sizeof(double) * (size_t)(CHECK_POINTS * r->out_len));
  dual_context_set_ad_mode(r->ctx, mode);
  out->status = r->run(r, CHECK_POINTS, g_check, CHECK_POINTS);
  if (out->status != DUAL_SUCCESS) {
    snprintf(out->error, sizeof out->error, "%s", dual_context_last_error(r->ctx));
    free(g_check);
    return;
  }
  const double *x = pool_points(r->pool, CHECK_POINTS);
  const double *v = r->pool->v;
  if (r->product == PRODUCT_HESSIAN) { /* checked through H v: the Hessian rows times v */
    double *hv = bench_xmalloc(sizeof(double) * (size_t)(CHECK_POINTS * n));
    for (int64_t b = 0; b < CHECK_POINTS; ++b)
      for (int i = 0; i < n; ++i) {
        double acc = 0.0;
        for (int j = 0; j < n; ++j) acc += g_check[b * r->out_len + (int64_t)i * n + j] * v[b * n + j];
        hv[b * n + i] = acc;
      }
    out->worst = grad_ref_hvp_worst(n, x, v, hv, n, 0, CHECK_POINTS);
    free(hv);
  } else {
    out->worst = r->product == PRODUCT_HVP ? grad_ref_hvp_worst(n, x, v, g_check, n, 0, CHECK_POINTS)
                                           : grad_ref_worst(n, x, g_check, n, 0, CHECK_POINTS);
  }
  free(g_check);
  const int64_t B = choose_batch(r, gpu, o, out);
  if (B == 0) return;
  out->batch = B;
  for (int i = -1; i < o->reps; ++i) { /* i = -1: warm-up at the final size */
    const double t0 = omp_get_wtime();
    out->status = r->run(r, B, NULL, 0);
    const double t = omp_get_wtime() - t0;
    if (out->status != DUAL_SUCCESS) {
      snprintf(out->error, sizeof out->error, "%s", dual_context_last_error(r->ctx));
      out->rate = 0.0;
      break;
    }
    if (i >= 0) out->rate = fmax(out->rate, (double)B / t);
  }
}

/* The mode AUTO runs at this size (0 when the call failed). */
static int auto_mode(runner *r) {
  dual_context_set_ad_mode(r->ctx, DUAL_AD_AUTO);
  if (r->run(r, CHECK_POINTS, NULL, 0) != DUAL_SUCCESS) return 0;
  return dual_context_last_ad_mode(r->ctx);
}

static void rate_cell(const measured *m, char *buf, size_t cap) {
  if (m->status == DUAL_ERR_UNSUPPORTED) snprintf(buf, cap, "unsupported");
  else if (m->status != DUAL_SUCCESS) snprintf(buf, cap, "failed (%s)", dual_status_string(m->status));
  else snprintf(buf, cap, "%.3g", m->rate);
}

/* The table of one device; returns 0, 1 when a gradient disagreed with the formula, 2 when a
 * call failed (on the GPU an unsupported mode is not a failure). */
static int study(const char *device_name, dual_context *ctx, int gpu, const options *o) {
  int result = 0, reverse_from = 0;
  char first_error[2][256] = {"", ""};
  printf("## %s\n\n", device_name);
  printf("| n | instructions | forward pts/s | reverse pts/s | reverse / forward | faster (measured) "
         "| AUTO runs | B (forward, reverse) | max diff vs formula (fwd, rev) | others' CPU |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < o->num_sizes; ++s) {
    const int n = o->sizes[s];
    if (o->product == PRODUCT_HESSIAN && n > HESSIAN_MAX_N) continue;
    char src[512];
    grad_source(n, src, sizeof src);
    dual_program *prog = NULL;
    if (dual_program_compile(ctx, src, "grad-n", &prog) != DUAL_SUCCESS) {
      fprintf(stderr, "dualbatch_bench_crossover: n = %d: %s\n", n, dual_context_last_error(ctx));
      return 2;
    }
    if (n == 1024) { /* the text above must be the benchmark's program */
      dual_program *file = NULL;
      if (dual_program_compile_file(ctx, DUAL_SOURCE_DIR "/bench/programs/grad.db", &file) == DUAL_SUCCESS &&
          dual_program_num_instructions(file) != dual_program_num_instructions(prog))
        printf("(note: grad.db compiles to %lld instructions, the text here to %lld)\n",
               (long long)dual_program_num_instructions(file),
               (long long)dual_program_num_instructions(prog));
      dual_program_destroy(&file);
    }
    point_pool pool = {n, 0, NULL, NULL};
    runner r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx, r.prog = prog, r.pool = &pool, r.run = cpu_run, r.product = o->product;
    r.out_len = o->product == PRODUCT_HESSIAN ? (int64_t)n * n : n;
    /* the CPU's largest batch: 256 MiB of results */
    r.max_batch = (int64_t)((256 << 20) / (8 * r.out_len));
#ifdef DUAL_BENCH_WITH_CUDA
    if (gpu) {
      size_t free_b = 0, total_b = 0;
      cudaMemGetInfo(&free_b, &total_b);
      const double fit = 0.25 * (double)free_b / (16.0 * n + 8.0 * (double)r.out_len + 4.0); /* the library needs room too */
      r.max_batch = (int64_t)fmin(fit, o->gpu_max_batch);
      r.run = gpu_run;
    }
#else
    (void)gpu;
#endif
    measured m[2]; /* forward, reverse */
    bench_cpu_sample before, after; /* what other processes took meanwhile */
    bench_cpu_sample_take(&before);
    measure_mode(&r, DUAL_AD_FORWARD, gpu, o, &m[0]);
    measure_mode(&r, DUAL_AD_REVERSE, gpu, o, &m[1]);
    const int picked = auto_mode(&r);
    bench_cpu_sample_take(&after);
    const double others = bench_others_share(&before, &after);
    char cell[2][64], ratio[32] = "—", faster[32] = "—", diff[2][32];
    for (int k = 0; k < 2; ++k) {
      rate_cell(&m[k], cell[k], sizeof cell[k]);
      if (m[k].status == DUAL_SUCCESS) {
        snprintf(diff[k], sizeof diff[k], "%.2g", m[k].worst);
        if (!(m[k].worst <= CHECK_TOL)) result = result ? result : 1;
      } else {
        snprintf(diff[k], sizeof diff[k], "—");
        if (!first_error[k][0])
          snprintf(first_error[k], sizeof first_error[k], "%s: %s", mode_name(k ? DUAL_AD_REVERSE : DUAL_AD_FORWARD),
                   m[k].error);
        if (!gpu || m[k].status != DUAL_ERR_UNSUPPORTED) result = 2;
      }
    }
    int winner = 0; /* the mode measured faster by more than TIE, 0 for a tie or no measurement */
    if (m[0].rate > 0 && m[1].rate > 0) {
      const double q = m[1].rate / m[0].rate;
      winner = q > 1.0 + TIE ? DUAL_AD_REVERSE : q < 1.0 - TIE ? DUAL_AD_FORWARD : 0;
      snprintf(ratio, sizeof ratio, "%.2f", q);
      snprintf(faster, sizeof faster, "%s", winner ? mode_name(winner) : "tie (within 5%)");
      if (winner == DUAL_AD_REVERSE) {
        if (!reverse_from) reverse_from = n;
      } else {
        reverse_from = 0;
      }
    }
    printf("| %d | %lld | %s | %s | %s | %s | %s%s | %lld, %lld | %s, %s | %.0f%%%s |\n", n,
           (long long)dual_program_num_instructions(prog), cell[0], cell[1], ratio, faster,
           mode_name(picked), picked && winner && picked != winner ? " (the slower)" : "",
           (long long)m[0].batch, (long long)m[1].batch, diff[0], diff[1], others * 100.0,
           others > BENCH_OTHERS_WARN ? " (busy)" : "");
    fflush(stdout);
#ifdef DUAL_BENCH_WITH_CUDA
    cudaFree(r.dx), cudaFree(r.dv), cudaFree(r.dg), cudaFree(r.dstatus);
#endif
    free(r.g), free(pool.x), free(pool.v);
    dual_program_destroy(&prog);
  }
  printf("\n");
  for (int k = 0; k < 2; ++k)
    if (first_error[k][0]) printf("first failure: %s\n", first_error[k]);
  if (reverse_from)
    printf("measured: reverse is faster (by more than 5%%) from n = %d on, at every larger size "
           "measured.\n", reverse_from);
  else
    printf("measured: reverse is not faster (by more than 5%%) at the largest size measured, or "
           "was not measured.\n");
  printf("\n");
  return result;
}

static int parse_sizes(const char *s, int *out) {
  int k = 0;
  char *copy = strdup(s), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t && k < MAX_SIZES; t = strtok_r(NULL, ",", &save)) {
    const int n = atoi(t);
    if (n >= 2) out[k++] = n;
  }
  free(copy);
  return k;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  const char *commit_arg = NULL; /* names the commit where the tree has no .git (the GPU machine) */
  o.num_sizes = (int)(sizeof DEFAULT_SIZES / sizeof DEFAULT_SIZES[0]);
  memcpy(o.sizes, DEFAULT_SIZES, sizeof DEFAULT_SIZES);
  o.target = 0.2, o.reps = 3, o.cpu = 1, o.gpu = 1, o.gpu_max_batch = 1e7, o.gpu_max_seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--sizes") == 0 && v) o.num_sizes = parse_sizes(v, o.sizes), ++i;
    else if (strcmp(a, "--target") == 0 && v) o.target = strtod(v, NULL), ++i;
    else if (strcmp(a, "--reps") == 0 && v) o.reps = atoi(v), ++i;
    else if (strcmp(a, "--threads") == 0 && v) o.threads = atoi(v), ++i;
    else if (strcmp(a, "--gpu-max-batch") == 0 && v) o.gpu_max_batch = strtod(v, NULL), ++i;
    else if (strcmp(a, "--gpu-max-seconds") == 0 && v) o.gpu_max_seconds = strtod(v, NULL), ++i;
    else if (strcmp(a, "--commit") == 0 && v) commit_arg = v, ++i;
    else if (strcmp(a, "--product") == 0 && v && strcmp(v, "hvp") == 0) o.product = PRODUCT_HVP, ++i;
    else if (strcmp(a, "--product") == 0 && v && strcmp(v, "hessian") == 0) o.product = PRODUCT_HESSIAN, ++i;
    else if (strcmp(a, "--product") == 0 && v && strcmp(v, "grad") == 0) ++i;
    else if (strcmp(a, "--device") == 0 && v && strcmp(v, "cpu") == 0) o.gpu = 0, ++i;
    else if (strcmp(a, "--device") == 0 && v && strcmp(v, "gpu") == 0) o.cpu = 0, ++i;
    else if (strcmp(a, "--device") == 0 && v && strcmp(v, "all") == 0) ++i;
    else {
      fprintf(stderr, "usage: dualbatch_bench_crossover [--device cpu|gpu|all] [--sizes 2,4,...] "
                      "[--target SECONDS] [--reps R] [--threads T] [--gpu-max-batch B] "
                      "[--gpu-max-seconds S] [--commit SHA] [--product grad|hvp|hessian]\n");
      return 2;
    }
  }
  if (o.num_sizes < 1 || !(o.target > 0.0)) return 2;
  if (o.reps < 1 || o.reps > BENCH_MAX_REPS) o.reps = 3;

  char cpu[400], commit[64], dirty[64], date[64], info[256];
  bench_cpu_model(cpu, sizeof cpu);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", commit, sizeof commit);
  bench_command_line("git -C '" DUAL_SOURCE_DIR "' status --porcelain --untracked-files=no 2>/dev/null",
                     dirty, sizeof dirty);
  if (commit_arg) snprintf(commit, sizeof commit, "%s", commit_arg), dirty[0] = '\0';
  dual_build_info(info, sizeof info);
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
  printf("# dualbatch forward/reverse crossover (dualbatch_bench_crossover, %s)\n\n", o.product == PRODUCT_HVP ? "HVPs" : o.product == PRODUCT_HESSIAN ? "Hessians" : "gradients");
  char build[300]; /* the build description on one line */
  size_t k = 0;
  for (const char *c = info; *c && k + 3 < sizeof build; ++c)
    if (*c != '\n') build[k++] = *c;
    else if (c[1]) build[k++] = ';', build[k++] = ' ';
  build[k] = '\0';
  printf("date: %s; commit %s%s\nbuild: %s\n", date, commit[0] ? commit : "unknown",
         dirty[0] ? " + uncommitted changes" : "", build);
  /* under AUTO a GPU mode's first calls interpret while its kernel compiles, so the rows may
   * mix tiers: run_gpu.sh sets DUALBATCH_TIER=compile (the tier AUTO's GPU model is fitted to) */
  const char *tier = getenv("DUALBATCH_TIER");
  printf("GPU tier: %s (DUALBATCH_TIER)\n", tier && *tier ? tier : "auto, the default: rows may mix tiers");
  printf("grad family f = sum sin(x_i) x_(i+1 mod n) + log1p(sum x_i^2), %s, FP64, "
         "points N(0,1); B per (n, mode): CPU ~%.2g s per call, GPU where the rate stops rising "
         "(calls up to %.2g s, at most %.3g points); best of %d calls after a warm-up\n\n",
         o.product == PRODUCT_HVP ? "dual_hvp (forward: nested passes, reverse: forward-over-reverse; directions N(0,1))"
         : o.product == PRODUCT_HESSIAN ? "dual_hessian (forward: nested passes, reverse: forward-over-reverse)"
                                        : "dual_gradient",
         o.target, o.gpu_max_seconds, o.gpu_max_batch, o.reps);

  int result = 0;
  if (o.cpu) {
    dual_context *ctx = NULL;
    if (dual_context_create(&ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS) {
      fprintf(stderr, "dualbatch_bench_crossover: %s\n", dual_context_last_error(ctx));
      return 2;
    }
    dual_context_set_threads(ctx, o.threads);
    char name[600];
    snprintf(name, sizeof name, "CPU: %s, %d threads", cpu, o.threads > 0 ? o.threads : omp_get_max_threads());
    const int r = study(name, ctx, 0, &o);
    result = r > result ? r : result;
    dual_context_destroy(&ctx);
  }
  if (o.gpu) {
#ifdef DUAL_BENCH_WITH_CUDA
    dual_context *ctx = NULL;
    const int st = dual_context_create(&ctx, DUAL_DEVICE_GPU);
    if (st != DUAL_SUCCESS) {
      printf("## GPU\n\nno GPU context (%s: %s): GPU rows skipped.\n",
             dual_status_string(st), ctx ? dual_context_last_error(ctx) : "");
      if (!o.cpu) result = 2;
    } else {
      struct cudaDeviceProp prop;
      char name[600] = "GPU";
      if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        snprintf(name, sizeof name, "GPU: %s, device-resident arrays", prop.name);
      const int r = study(name, ctx, 1, &o);
      result = r > result ? r : result;
    }
    dual_context_destroy(&ctx);
#else
    printf("## GPU\n\nthis build has no CUDA: GPU rows skipped.\n");
    if (!o.cpu) result = 2;
#endif
  }
  return result;
}
