/*
 * bench_gpu.c — dualbatch_bench_gpu: the GPU half of BENCHMARKS.md.  For ba and kin (Jacobians),
 * hess (Hessians) and grad (n = 1024 gradients by reverse mode, DUAL_AD_REVERSE) it generates the
 * points (bench_points.c), writes them and this library's results for the first points into a
 * directory for the Python peers (bench/peers/jax_peer.py, torch_peer.py), and times calls at each
 * batch size: device-resident (arrays from cudaMalloc, DUAL_MEMORY_DEVICE) and with host arrays
 * (the library stages them).  It also prints each workload's roofline from the bytecode: FLOPs per
 * point counted over the lane masks the engine actually runs (grad: over the forward and adjoint
 * sweeps of reverse mode), bytes per point of the device-resident I/O.  grad runs at its own batch
 * sizes (--grad-batches, default 1e3,1e4,1e5: 16 KiB of I/O per point), its gradients are checked
 * against the hand-derived formula (grad_ref.h), and when the GPU refuses or fails its reverse
 * mode the rows say so, the reference results for the peers come from the CPU engine, and the
 * run goes on.  Output: tab-separated ROW / ROOF / META lines that bench/gpu_table.py turns into
 * the tables.  Run through bench/run_gpu.sh.
 */
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_points.h"
#include "dualbatch.h"
#include "grad_ref.h"
#include "engine/pass2.h"
#include "engine/plan.h"
#include "engine/plan2.h"
#include "exec.h"
#include "program.h"

#ifndef DUAL_SOURCE_DIR
#define DUAL_SOURCE_DIR "."
#endif

enum { REF_POINTS = 1024, MAX_BATCHES = 8, MAX_WIDTHS = 8 };

/* H200 ceilings measured for BENCHMARKS.md: FP64 FMA rate and device copy bandwidth. */
#define PEAK_FP64 33.3e12
#define PEAK_BYTES 4.14e12

typedef struct workload {
  const char *name;
  int32_t n, p, m;
  int mode;    /* DUAL_MODE_JACOBIAN, DUAL_MODE_HESSIAN or DUAL_MODE_GRADIENT */
  int ad_mode; /* the context's dual_ad_mode while it runs */
} workload;

static const workload WORKLOADS[] = {{"ba", 15, 2, 2, DUAL_MODE_JACOBIAN, DUAL_AD_AUTO},
                                     {"kin", 32, 0, 32, DUAL_MODE_JACOBIAN, DUAL_AD_AUTO},
                                     {"hess", 16, 0, 1, DUAL_MODE_HESSIAN, DUAL_AD_AUTO},
                                     {"grad", 1024, 0, 1, DUAL_MODE_GRADIENT, DUAL_AD_REVERSE}};
#define NUM_WORKLOADS ((int)(sizeof WORKLOADS / sizeof WORKLOADS[0]))

typedef struct options {
  int run[NUM_WORKLOADS];
  double batches[MAX_BATCHES];
  int num_batches;
  double grad_batches[MAX_BATCHES]; /* grad's own sizes (16 KiB of I/O per point) */
  int num_grad_batches;
  int widths[MAX_WIDTHS]; /* forced widths measured at the width-study batch */
  int num_widths;
  int groups[MAX_WIDTHS]; /* threads per point measured at the study batch */
  int num_groups;
  double width_batch;
  int reps;
  const char *dir;
  int host;                 /* also time host-array calls */
  int compiled;             /* also time the compiled tier (first-order workloads) */
  double link_h2d, link_d2h; /* measured pinned copy bandwidth, bytes/s */
} options;

static int g_disagree; /* a workload's results disagreed with its formula: exit status 1 */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CUDA_OK(call)                                                                            \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "bench_gpu: %s failed: %s\n", #call, cudaGetErrorString(e_));            \
      exit(2);                                                                                   \
    }                                                                                            \
  } while (0)

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (p == NULL) {
    fprintf(stderr, "bench_gpu: out of host memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static void write_file(const char *dir, const char *name, const void *data, size_t bytes) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
    fprintf(stderr, "bench_gpu: cannot write %s\n", path);
    exit(2);
  }
}

/* FLOPs per point of a Jacobian over the plan's lane masks: one per value op (a transcendental
 * counts one, so this is a lower bound), one per partial of a LIN op, and per lane of the result
 * the multiply-adds of its propagation class. */
static double flops_per_point(const dual_program *prog, int width) {
  const int64_t passes = (prog->n_in + width - 1) / width;
  dual_plan_instr *recs = xmalloc(sizeof *recs * (size_t)(passes * prog->n_instr));
  int64_t slots = 0;
  if (dual_plan_build(prog, DUAL_MODE_JACOBIAN, width, 0, passes, recs, &slots) != 0) exit(2);
  double flops = 0.0;
  for (int64_t i = 0; i < passes * prog->n_instr; ++i) {
    const dual_plan_instr *q = &recs[i];
    const dual_op_info *info = &dual_op_table[q->op_dst >> DUAL_DST_BITS];
    if (info->prop == DUAL_PROP_LOAD || info->prop == DUAL_PROP_OUT) continue;
    flops += 1.0;
    const uint32_t masks[3] = {q->ma, q->mb, q->mc};
    for (int k = 0; k < 32; ++k) {
      if (!((q->md >> k) & 1u)) continue;
      int terms = 0;
      for (int j = 0; j < 3; ++j) terms += (masks[j] >> k) & 1u;
      if (info->prop == DUAL_PROP_LIN || info->prop == DUAL_PROP_MUL) flops += 2.0 * terms - 1.0;
      else if (info->prop == DUAL_PROP_ADD || info->prop == DUAL_PROP_SUB) flops += terms - 1.0;
    }
    if (info->prop == DUAL_PROP_LIN) flops += info->arity;
  }
  free(recs);
  return flops;
}

/* FLOPs per point of a Hessian (one pass of up to 32 lanes: n <= 32): the Jacobian's first-order
 * count over the second-order plan's lanes, plus per component one multiply-add per term (two
 * for the product terms) and the second partials of the LIN ops. */
static double flops_per_point2(const dual_program *prog) {
  dual_batch b;
  dual_batch_init(&b);
  dual_job job = {.prog = prog, .b = &b, .mode = DUAL_MODE_HESSIAN, .width = 32, .threads = 1};
  dual_pass2 *ps = xmalloc(sizeof *ps);
  dual_plan2 pl;
  dual_pass2_make(&job, 0, ps);
  if (dual_plan2_init(&pl, prog) != 0 || dual_plan2_build(&pl, prog, ps) != 0) exit(2);
  double flops = 0.0;
  for (int64_t t = 0; t < prog->n_instr; ++t) {
    const dual_plan_instr *q = &pl.recs[t];
    const dual_op_info *info = &dual_op_table[q->op_dst >> DUAL_DST_BITS];
    if (info->prop == DUAL_PROP_LOAD || info->prop == DUAL_PROP_OUT) continue;
    flops += 1.0 + (info->prop == DUAL_PROP_LIN ? 2.0 * info->arity : 0.0);
    const uint32_t masks[3] = {q->ma, q->mb, q->mc};
    for (int k = 0; k < 32; ++k) {
      if (!((q->md >> k) & 1u)) continue;
      int terms = 0;
      for (int j = 0; j < 3; ++j) terms += (masks[j] >> k) & 1u;
      flops += 2.0 * terms - 1.0;
    }
    for (uint32_t e = pl.first[t]; e < pl.first[t + 1]; ++e) {
      const uint32_t f = pl.ents[e].flags;
      flops += 2.0 * (double)((f & DUAL_PE_HA) != 0) + 2.0 * ((f & DUAL_PE_HB) != 0) +
               2.0 * ((f & DUAL_PE_HC) != 0) + 3.0 * ((f & DUAL_PE_AA) != 0) +
               3.0 * ((f & DUAL_PE_BB) != 0) + 2.0 * ((f & DUAL_PE_ABKL) != 0) +
               2.0 * ((f & DUAL_PE_ABLK) != 0) + 2.0 * ((f & (DUAL_PE_ABKL | DUAL_PE_ABLK)) != 0);
    }
  }
  dual_plan2_free(&pl);
  free(ps);
  return flops;
}

/* FLOPs per point of a gradient by reverse mode, from the bytecode (every instruction active, a
 * lower bound like the counts above): the forward sweep's value (one per op) and, for LIN ops, one
 * per partial; the adjoint sweep's multiply-add per operand of a LIN or MUL op, add per operand
 * of an ADD or SUB, one for NEG and CHOOSE.  The tape the sweeps share is not I/O: the roofline's
 * bytes stay the inputs and outputs. */
static double flops_per_point_reverse(const dual_program *prog) {
  double flops = 0.0;
  for (int64_t i = 0; i < prog->n_instr; ++i) {
    const dual_op_info *info = &dual_op_table[DUAL_INSTR_OP(prog->code + i * DUAL_INSTR_WORDS)];
    switch (info->prop) {
    case DUAL_PROP_LIN: flops += 1.0 + info->arity + 2.0 * info->arity; break;
    case DUAL_PROP_MUL: flops += 1.0 + 4.0; break;
    case DUAL_PROP_ADD:
    case DUAL_PROP_SUB: flops += 1.0 + 2.0; break;
    case DUAL_PROP_NEG:
    case DUAL_PROP_CHOOSE: flops += 1.0 + 1.0; break;
    default: break; /* loads, stores, passive ops */
    }
  }
  return flops;
}

/* Median seconds per call of dual_run over `reps` calls after two warm-up calls. */
static double time_calls(dual_context *ctx, const dual_program *prog, int mode, const dual_batch *b,
                         int reps) {
  double t[101];
  if (reps > 101) reps = 101;
  for (int i = -2; i < reps; ++i) {
    double t0 = now();
    int st = dual_run(ctx, prog, mode, b);
    double t1 = now();
    if (st != DUAL_SUCCESS) {
      fprintf(stderr, "bench_gpu: dual_run failed: %s\n", dual_context_last_error(ctx));
      return -1.0;
    }
    if (i >= 0) t[i] = t1 - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  return t[reps / 2];
}

/* A row for calls that were not timed because the tool cannot make them ("unsupported"). */
static void row_not_run(const char *wl, int64_t B, const char *tool, const char *access, const char *why) {
  printf("ROW\t%s\t%lld\t%s\t%s\t-\t%s\t-\n", wl, (long long)B, tool, access, why);
  fflush(stdout);
}

static void row(const char *wl, int64_t B, const char *tool, const char *access, double sec) {
  if (sec < 0) printf("ROW\t%s\t%lld\t%s\t%s\t-\terror\t-\n", wl, (long long)B, tool, access);
  else
    printf("ROW\t%s\t%lld\t%s\t%s\t%.6g\t%.6g\t-\n", wl, (long long)B, tool, access, sec,
           (double)B / sec);
  fflush(stdout);
}

/* Pinned host <-> device copy bandwidth (bytes/s, best of 3 copies of 256 MiB each way): the
 * ceiling of host-array calls, which move every input and output over this link. */
static void measure_link(double *h2d, double *d2h) {
  const size_t bytes = (size_t)256 << 20;
  void *host = NULL, *dev = NULL;
  CUDA_OK(cudaMallocHost(&host, bytes));
  CUDA_OK(cudaMalloc(&dev, bytes));
  memset(host, 1, bytes);
  *h2d = *d2h = 0.0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    double t1 = now();
    CUDA_OK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
    double t2 = now();
    if ((double)bytes / (t1 - t0) > *h2d) *h2d = (double)bytes / (t1 - t0);
    if ((double)bytes / (t2 - t1) > *d2h) *d2h = (double)bytes / (t2 - t1);
  }
  CUDA_OK(cudaFree(dev));
  CUDA_OK(cudaFreeHost(host));
}

/* The first `count` points' results of a workload whose GPU reference call failed, from a CPU
 * context in the same AD mode (the peers' agreement check still has this library's results). */
static int reference_on_cpu(const workload *w, const dual_program *prog, int64_t count,
                            const double *x, const double *p, double *y, double *J, double *H) {
  dual_context *cpu = NULL;
  int st = dual_context_create(&cpu, DUAL_DEVICE_CPU);
  if (st == DUAL_SUCCESS) st = dual_context_set_ad_mode(cpu, w->ad_mode);
  const int64_t n = w->n, np = w->p, m = w->m;
  dual_batch h;
  dual_batch_init(&h);
  h.count = count;
  h.x = x, h.x_ps = n, h.x_es = 1;
  h.p = np ? p : NULL, h.p_ps = np, h.p_es = 1;
  h.y = y, h.y_ps = m, h.y_es = 1;
  h.d = J, h.d_ps = m * n, h.d_rs = n, h.d_cs = 1;
  if (w->mode == DUAL_MODE_HESSIAN)
    h.h = H, h.h_ps = m * n * n, h.h_rs = n * n, h.h_es = 1, h.h_layout = DUAL_HESSIAN_FULL;
  if (st == DUAL_SUCCESS) st = dual_run(cpu, prog, w->mode, &h);
  if (st != DUAL_SUCCESS) fprintf(stderr, "bench_gpu: %s on the CPU: %s\n", w->name, dual_context_last_error(cpu));
  dual_context_destroy(&cpu);
  return st;
}

/* The compiled tier's results for the first kref points against the interpreter's (y0, J0, and
 * for second order the nh entries per point of H0), bit for bit: a META line, and exit status 1
 * when any entry differs or the call fails.  Returns 0 when the compiled tier declined the
 * program by a documented compile-time rule (DUAL_ERR_COMPILE: its rows are not timed), else 1. */
static int compare_compiled(dual_context *ctx, const dual_program *prog, const workload *w,
                            const dual_batch *b, const double *y0, const double *J0,
                            const double *H0, int64_t nh, int64_t kref, const char *label) {
  dual_context_set_tier(ctx, DUAL_TIER_COMPILE);
  const double t0 = now();
  int st = dual_run(ctx, prog, w->mode, b);
  const double t1 = now();
  dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
  if (st == DUAL_ERR_COMPILE && strstr(dual_context_last_error(ctx), "rule") != NULL) {
    printf("META\t%s %s\tthe compiled tier declined it: %s\n", w->name, label, dual_context_last_error(ctx));
    return 0;
  }
  if (st != DUAL_SUCCESS) {
    printf("META\t%s %s\tthe compiled tier failed: %s\n", w->name, label, dual_context_last_error(ctx));
    g_disagree = 1;
    return 1;
  }
  const int64_t ny = kref * w->m, nj = kref * w->m * w->n;
  double *y = xmalloc(sizeof(double) * (size_t)ny), *J = xmalloc(sizeof(double) * (size_t)nj);
  CUDA_OK(cudaMemcpy(y, b->y, sizeof(double) * (size_t)ny, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(J, b->d, sizeof(double) * (size_t)nj, cudaMemcpyDeviceToHost));
  int64_t differ = 0;
  for (int64_t i = 0; i < ny; ++i) differ += memcmp(&y[i], &y0[i], sizeof(double)) != 0;
  for (int64_t i = 0; i < nj; ++i) differ += memcmp(&J[i], &J0[i], sizeof(double)) != 0;
  if (nh > 0) {
    double *H = xmalloc(sizeof(double) * (size_t)(kref * nh));
    CUDA_OK(cudaMemcpy(H, b->h, sizeof(double) * (size_t)(kref * nh), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < kref * nh; ++i) differ += memcmp(&H[i], &H0[i], sizeof(double)) != 0;
    free(H);
  }
  printf("META\t%s %s\tcompiled tier vs interpreter, first %lld points: %lld of %lld "
         "entries not bitwise equal (first call, compile included: %.3f s)\n", w->name, label,
         (long long)kref, (long long)differ, (long long)(ny + nj + kref * nh), t1 - t0);
  if (differ) g_disagree = 1;
  free(y), free(J);
  return 1;
}

/* Forward-over-reverse Hessians (DUAL_AD_REVERSE): the interpreter's on the first kref points,
 * then the compiled tier's against them (compare_compiled). */
static void compare_for(dual_context *ctx, const dual_program *prog, const workload *w,
                        const dual_batch *b, int64_t nh, int64_t kref) {
  dual_batch r = *b;
  r.count = kref;
  dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE);
  dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
  if (dual_run(ctx, prog, w->mode, &r) != DUAL_SUCCESS) {
    printf("META\t%s compiled-for\tthe interpreter failed: %s\n", w->name, dual_context_last_error(ctx));
    g_disagree = 1;
  } else {
    const int64_t ny = kref * w->m, nj = kref * w->m * w->n;
    double *y = xmalloc(sizeof(double) * (size_t)ny), *J = xmalloc(sizeof(double) * (size_t)nj);
    double *H = xmalloc(sizeof(double) * (size_t)(kref * nh));
    CUDA_OK(cudaMemcpy(y, r.y, sizeof(double) * (size_t)ny, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(J, r.d, sizeof(double) * (size_t)nj, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(H, r.h, sizeof(double) * (size_t)(kref * nh), cudaMemcpyDeviceToHost));
    compare_compiled(ctx, prog, w, &r, y, J, H, nh, kref, "compiled-for");
    free(y), free(J), free(H);
  }
  dual_context_set_ad_mode(ctx, w->ad_mode);
}

/* --jit-time: the first and second call of one workload's first-order product (Jacobian; the
 * gradient for hess and grad; forward mode, except grad's reverse-mode gradient, the kernel its
 * benchmark runs) under DUAL_TIER_COMPILE with the cache directory `cache`: with an
 * empty directory the first call includes the cold compile, with a filled one the disk load.
 * Line: JIT <workload> <first s> <second s> <tier of the first call> <note>. */
static int jit_time(const char *name, const char *cache) {
  int k = 0;
  while (k < NUM_WORKLOADS && strcmp(WORKLOADS[k].name, name) != 0) ++k;
  if (k == NUM_WORKLOADS) return 2;
  const workload *w = &WORKLOADS[k];
  const int mode = w->m == 1 ? DUAL_MODE_GRADIENT : DUAL_MODE_JACOBIAN;
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, DUAL_DEVICE_GPU) != DUAL_SUCCESS) return 2;
  dual_context_set_tier(ctx, DUAL_TIER_COMPILE);
  dual_context_set_cache_dir(ctx, cache);
  dual_context_set_ad_mode(ctx, w->ad_mode == DUAL_AD_REVERSE ? DUAL_AD_REVERSE : DUAL_AD_FORWARD);
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, w->name);
  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, path, &prog) != 0) return 2;
  const int64_t B = 1024, n = w->n, m = w->m;
  double *x = xmalloc(sizeof(double) * (size_t)(B * n)), *p = xmalloc(sizeof(double) * (size_t)(B * 2));
  for (int64_t i = 0; i < B * n; ++i) x[i] = 0.5 + 0.001 * (double)(i % 997);
  for (int64_t i = 0; i < B * 2; ++i) p[i] = 0.25;
  double *dx, *dp, *dy, *dJ;
  CUDA_OK(cudaMalloc((void **)&dx, sizeof(double) * (size_t)(B * n)));
  CUDA_OK(cudaMalloc((void **)&dp, sizeof(double) * (size_t)(B * 2)));
  CUDA_OK(cudaMalloc((void **)&dy, sizeof(double) * (size_t)(B * m)));
  CUDA_OK(cudaMalloc((void **)&dJ, sizeof(double) * (size_t)(B * m * n)));
  CUDA_OK(cudaMemcpy(dx, x, sizeof(double) * (size_t)(B * n), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dp, p, sizeof(double) * (size_t)(B * 2), cudaMemcpyHostToDevice));
  dual_batch b;
  dual_batch_init(&b);
  b.memory = DUAL_MEMORY_DEVICE, b.count = B;
  b.x = dx, b.x_ps = n, b.x_es = 1, b.p = w->p ? dp : NULL, b.p_ps = w->p, b.p_es = 1;
  b.y = dy, b.y_ps = m, b.y_es = 1, b.d = dJ, b.d_ps = m * n, b.d_rs = mode == DUAL_MODE_GRADIENT ? 0 : n;
  b.d_cs = 1;
  double t[2];
  int tier = 0;
  const char *note = "";
  char err[512] = "";
  for (int i = 0; i < 2; ++i) {
    const double t0 = now();
    int st = dual_run(ctx, prog, mode, &b);
    t[i] = now() - t0;
    if (i == 0) tier = dual_context_last_tier(ctx);
    if (st != DUAL_SUCCESS) {
      snprintf(err, sizeof err, "%s", dual_context_last_error(ctx));
      for (char *c = err; *c; ++c) if (*c == '\n' || *c == '\t') *c = ' ';
      note = err;
      break;
    }
  }
  printf("JIT\t%s\t%.6g\t%.6g\t%s\t%s\n", w->name, t[0], t[1],
         tier == DUAL_TIER_COMPILE ? "compiled" : "interpreted", note);
  cudaFree(dx), cudaFree(dp), cudaFree(dy), cudaFree(dJ);
  free(x), free(p);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return 0;
}

static void run_workload(const options *o, const workload *w, dual_context *ctx) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, w->name);
  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, path, &prog) != 0) {
    fprintf(stderr, "bench_gpu: %s\n", dual_context_last_error(ctx));
    exit(2);
  }
  const int64_t n = w->n, np = w->p, m = w->m;
  const int second = w->mode == DUAL_MODE_HESSIAN;
  const int reverse = w->ad_mode == DUAL_AD_REVERSE; /* grad: no width study, its own batches */
  const int64_t nh = second ? m * n * n : 0; /* Hessian entries per point */
  const double *batches = reverse ? o->grad_batches : o->batches;
  const int num_batches = reverse ? o->num_grad_batches : o->num_batches;
  dual_context_set_ad_mode(ctx, w->ad_mode);
  int64_t bmax = 0;
  for (int i = 0; i < num_batches; ++i)
    if ((int64_t)batches[i] > bmax) bmax = (int64_t)batches[i];
  const int study = (o->num_widths > 0 || o->num_groups > 0) && !reverse;
  if (study && (int64_t)o->width_batch > bmax) bmax = (int64_t)o->width_batch;
  if (reverse && (o->num_widths > 0 || o->num_groups > 0))
    fprintf(stderr, "bench_gpu: %s: the width and group study is for forward mode; skipped\n", w->name);
  /* the largest batch that fits on the device with the library's own needs beside it */
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  const size_t per_point = sizeof(double) * (size_t)(n + np + m + m * n + nh) + 4;
  int64_t fit = (int64_t)((double)free_b * 0.8 / (double)per_point);
  if (bmax > fit) {
    fprintf(stderr, "bench_gpu: %s: batches above %lld points do not fit on the device; skipped\n",
            w->name, (long long)fit);
    bmax = fit;
  }
  double *x = xmalloc(sizeof(double) * (size_t)(bmax * n));
  double *p = xmalloc(sizeof(double) * (size_t)(bmax * (np ? np : 1)));
  if (strcmp(w->name, "ba") == 0) bench_points_ba(bmax, 1, x, p);
  else if (strcmp(w->name, "kin") == 0) bench_points_kin(bmax, 2, x);
  else if (strcmp(w->name, "grad") == 0) bench_points_grad(bmax, w->n, 5, x); /* as the CPU's */
  else bench_points_hess(bmax, 3, x);
  if (o->dir != NULL) {
    char name[64];
    snprintf(name, sizeof name, "%s_x.f64", w->name);
    write_file(o->dir, name, x, sizeof(double) * (size_t)(bmax * n));
    if (np > 0) {
      snprintf(name, sizeof name, "%s_feat.f64", w->name);
      write_file(o->dir, name, p, sizeof(double) * (size_t)(bmax * np));
    }
  }
  double *dx, *dp = NULL, *dy, *dJ, *dH = NULL;
  int32_t *ds;
  if (second) CUDA_OK(cudaMalloc((void **)&dH, sizeof(double) * (size_t)(bmax * nh)));
  CUDA_OK(cudaMalloc((void **)&dx, sizeof(double) * (size_t)(bmax * n)));
  if (np > 0) CUDA_OK(cudaMalloc((void **)&dp, sizeof(double) * (size_t)(bmax * np)));
  CUDA_OK(cudaMalloc((void **)&dy, sizeof(double) * (size_t)(bmax * m)));
  CUDA_OK(cudaMalloc((void **)&dJ, sizeof(double) * (size_t)(bmax * m * n)));
  CUDA_OK(cudaMalloc((void **)&ds, sizeof(int32_t) * (size_t)bmax));
  CUDA_OK(cudaMemcpy(dx, x, sizeof(double) * (size_t)(bmax * n), cudaMemcpyHostToDevice));
  if (np > 0) CUDA_OK(cudaMemcpy(dp, p, sizeof(double) * (size_t)(bmax * np), cudaMemcpyHostToDevice));
  dual_batch b;
  dual_batch_init(&b);
  b.memory = DUAL_MEMORY_DEVICE;
  b.x = dx, b.x_ps = n, b.x_es = 1;
  b.p = dp, b.p_ps = np, b.p_es = 1;
  b.y = dy, b.y_ps = m, b.y_es = 1;
  b.d = dJ, b.d_ps = m * n, b.d_rs = n, b.d_cs = 1;
  b.h = dH, b.h_ps = nh, b.h_rs = n * n, b.h_es = 1, b.h_layout = DUAL_HESSIAN_FULL;
  b.status = ds;
  /* reference results of the first points for the peers' agreement check; a reverse-mode
   * workload whose GPU call fails (the GPU reverse mode is young) takes them from the CPU and
   * reports its rows as not run */
  const int64_t kref = bmax < REF_POINTS ? bmax : REF_POINTS;
  b.count = kref;
  dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
  const int gpu_status = dual_run(ctx, prog, w->mode, &b);
  const char *not_run = NULL; /* why dualbatch's rows were not timed */
  if (gpu_status != DUAL_SUCCESS) {
    if (!reverse) {
      fprintf(stderr, "bench_gpu: %s\n", dual_context_last_error(ctx));
      exit(2);
    }
    not_run = gpu_status == DUAL_ERR_UNSUPPORTED ? "unsupported" : "error";
    printf("META\t%s\tdualbatch's GPU reverse mode failed (%s: %s); its rows are not timed, the "
           "peers' reference results come from the CPU engine\n", w->name,
           dual_status_string(gpu_status), dual_context_last_error(ctx));
    fprintf(stderr, "bench_gpu: %s: the GPU call failed: %s\n", w->name, dual_context_last_error(ctx));
  }
  double *yy = xmalloc(sizeof(double) * (size_t)(kref * m)), *jj = xmalloc(sizeof(double) * (size_t)(kref * m * n));
  double *hh = xmalloc(sizeof(double) * (size_t)(kref * nh));
  int have_ref = 1;
  /* both tiers timed: forward products, and reverse mode where the interpreter ran */
  const int both_tiers = o->compiled && gpu_status == DUAL_SUCCESS;
  int compiled = both_tiers; /* the compiled tier takes the workload (not declined by a rule) */
  if (gpu_status == DUAL_SUCCESS) {
    CUDA_OK(cudaMemcpy(yy, dy, sizeof(double) * (size_t)(kref * m), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(jj, dJ, sizeof(double) * (size_t)(kref * m * n), cudaMemcpyDeviceToHost));
    if (second) CUDA_OK(cudaMemcpy(hh, dH, sizeof(double) * (size_t)(kref * nh), cudaMemcpyDeviceToHost));
    if (both_tiers) compiled = compare_compiled(ctx, prog, w, &b, yy, jj, hh, second ? nh : 0, kref, "compiled");
    if (both_tiers && second) compare_for(ctx, prog, w, &b, nh, kref);
  } else {
    have_ref = reference_on_cpu(w, prog, kref, x, p, yy, jj, hh) == DUAL_SUCCESS;
  }
  if (strcmp(w->name, "grad") == 0 && have_ref) { /* the gradient against its formula */
    const double worst = grad_ref_worst((int32_t)n, x, jj, n, 0, kref);
    printf("META\t%s check\tdualbatch %s gradients of the first %lld points against the "
           "hand-derived formula: max row-scaled difference %.3g (%s)\n", w->name,
           gpu_status == DUAL_SUCCESS ? "GPU" : "CPU", (long long)kref, worst,
           worst <= 1e-12 ? "agree" : "WRONG");
    if (!(worst <= 1e-12)) {
      fprintf(stderr, "bench_gpu: %s: gradients differ from the formula by %.3g\n", w->name, worst);
      g_disagree = 1;
    }
  }
  if (o->dir != NULL && have_ref) { /* per point: the m values, J [m][n], then (hess) H [m][n][n] */
    const int64_t cols = m + m * n + nh;
    double *ref = xmalloc(sizeof(double) * (size_t)(kref * cols));
    for (int64_t i = 0; i < kref; ++i) {
      memcpy(ref + i * cols, yy + i * m, sizeof(double) * (size_t)m);
      memcpy(ref + i * cols + m, jj + i * m * n, sizeof(double) * (size_t)(m * n));
      if (second) memcpy(ref + i * cols + m + m * n, hh + i * nh, sizeof(double) * (size_t)nh);
    }
    char name[64];
    snprintf(name, sizeof name, "%s_ref.f64", w->name);
    write_file(o->dir, name, ref, sizeof(double) * (size_t)(kref * cols));
    free(ref);
  }
  free(yy), free(jj), free(hh);
  /* roofline */
  const int width = n <= 16 ? 16 : 32;
  const double flops = second    ? flops_per_point2(prog)
                       : reverse ? flops_per_point_reverse(prog)
                                 : flops_per_point(prog, width);
  const double bytes = (double)per_point;
  const double r_compute = PEAK_FP64 / flops, r_memory = PEAK_BYTES / bytes;
  printf("ROOF\t%s\t%.0f\t%.0f\t%.6g\t%s\n", w->name, flops, bytes,
         r_compute < r_memory ? r_compute : r_memory, r_compute < r_memory ? "compute" : "memory");
  /* host-array bound: inputs over the link to the device, outputs back (both directions run at
   * once on the two copy engines, so the slower direction bounds the rate) */
  const double in_b = sizeof(double) * (double)(n + np), out_b = sizeof(double) * (double)(m + m * n + nh) + 4;
  const double t_in = in_b / o->link_h2d, t_out = out_b / o->link_d2h;
  printf("LINK\t%s\t%.0f\t%.0f\t%.3g\t%.3g\t%.6g\n", w->name, in_b, out_b, o->link_h2d, o->link_d2h,
         1.0 / (t_in > t_out ? t_in : t_out));
  for (int i = 0; i < num_batches; ++i) {
    const int64_t B = (int64_t)batches[i];
    if (B > bmax) continue;
    b.count = B;
    if (not_run) row_not_run(w->name, B, "dualbatch", "device", not_run);
    else row(w->name, B, "dualbatch", "device", time_calls(ctx, prog, w->mode, &b, o->reps));
    if (both_tiers && !compiled) row_not_run(w->name, B, "dualbatch-compiled", "device", "declined");
    if (compiled) {
      dual_context_set_tier(ctx, DUAL_TIER_COMPILE);
      row(w->name, B, "dualbatch-compiled", "device", time_calls(ctx, prog, w->mode, &b, o->reps));
      dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
    }
    if (both_tiers && second) { /* forward-over-reverse, both tiers */
      dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE);
      row(w->name, B, "dualbatch-for", "device", time_calls(ctx, prog, w->mode, &b, o->reps));
      dual_context_set_tier(ctx, DUAL_TIER_COMPILE);
      row(w->name, B, "dualbatch-compiled-for", "device", time_calls(ctx, prog, w->mode, &b, o->reps));
      dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
      dual_context_set_ad_mode(ctx, w->ad_mode);
    }
  }
  /* study at one batch size: each forced width, then each number of threads per point, with
   * register files in global memory (the default) and in shared memory (when a block fits) */
  if (study && (int64_t)o->width_batch <= bmax) {
    b.count = (int64_t)o->width_batch;
    for (int rf = 0; rf < 2; ++rf) {
      const char *suffix = rf ? "-sharedrf" : "";
      dual_context_set_knob(ctx, DUAL_KNOB_GPU_REGFILE, rf);
      char tool[48];
      for (int i = 0; i < o->num_widths; ++i) {
        snprintf(tool, sizeof tool, "dualbatch-w%d%s", o->widths[i], suffix);
        dual_context_set_width(ctx, o->widths[i]);
        row(w->name, b.count, tool, "device", time_calls(ctx, prog, w->mode, &b, o->reps));
      }
      dual_context_set_width(ctx, 0);
      for (int i = 0; i < o->num_groups; ++i) {
        snprintf(tool, sizeof tool, "dualbatch-g%d%s", o->groups[i], suffix);
        dual_context_set_knob(ctx, DUAL_KNOB_GPU_GROUP, o->groups[i]);
        row(w->name, b.count, tool, "device", time_calls(ctx, prog, w->mode, &b, o->reps));
      }
      dual_context_set_knob(ctx, DUAL_KNOB_GPU_GROUP, 0);
    }
    dual_context_set_knob(ctx, DUAL_KNOB_GPU_REGFILE, 0);
  }
  cudaFree(dx), cudaFree(dp), cudaFree(dy), cudaFree(dJ), cudaFree(dH), cudaFree(ds);
  if (o->host) { /* host arrays: the library copies in and out through its pinned staging */
    for (int i = 0; i < num_batches; ++i) {
      const int64_t B = (int64_t)batches[i];
      if (B > bmax || (double)B * (double)per_point > 40e9) continue; /* host RAM */
      if (not_run) {
        row_not_run(w->name, B, "dualbatch", "host", not_run);
        continue;
      }
      double *y = xmalloc(sizeof(double) * (size_t)(B * m)), *J = xmalloc(sizeof(double) * (size_t)(B * m * n));
      double *H = second ? xmalloc(sizeof(double) * (size_t)(B * nh)) : NULL;
      int32_t *st = xmalloc(sizeof(int32_t) * (size_t)B);
      dual_batch h = b;
      h.memory = DUAL_MEMORY_HOST, h.count = B;
      h.x = x, h.p = np ? p : NULL, h.y = y, h.d = J, h.h = H, h.status = st;
      row(w->name, B, "dualbatch", "host", time_calls(ctx, prog, w->mode, &h, o->reps < 5 ? o->reps : 5));
      if (both_tiers && !compiled) row_not_run(w->name, B, "dualbatch-compiled", "host", "declined");
      if (compiled) {
        dual_context_set_tier(ctx, DUAL_TIER_COMPILE);
        row(w->name, B, "dualbatch-compiled", "host",
            time_calls(ctx, prog, w->mode, &h, o->reps < 5 ? o->reps : 5));
        dual_context_set_tier(ctx, DUAL_TIER_INTERPRET);
      }
      free(y), free(J), free(H), free(st);
    }
  }
  free(x), free(p);
  dual_program_destroy(&prog);
  dual_context_set_ad_mode(ctx, DUAL_AD_AUTO);
}

static int parse_list(const char *s, double *out, int cap) {
  int k = 0;
  char *copy = strdup(s), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t && k < cap; t = strtok_r(NULL, ",", &save))
    out[k++] = strtod(t, NULL);
  free(copy);
  return k;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  for (int k = 0; k < NUM_WORKLOADS; ++k) o.run[k] = 1;
  o.num_batches = parse_list("1e4,1e5,1e6,1e7", o.batches, MAX_BATCHES);
  o.num_grad_batches = parse_list("1e3,1e4,1e5", o.grad_batches, MAX_BATCHES);
  o.reps = 20;
  o.host = 1;
  o.compiled = 1;
  o.width_batch = 1e6;
  const char *commit = "unknown";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--workload") == 0 && v) {
      for (int k = 0; k < NUM_WORKLOADS; ++k) o.run[k] = strcmp(v, WORKLOADS[k].name) == 0;
      ++i;
    } else if (strcmp(a, "--batches") == 0 && v) {
      o.num_batches = parse_list(v, o.batches, MAX_BATCHES), ++i;
    } else if (strcmp(a, "--grad-batches") == 0 && v) {
      o.num_grad_batches = parse_list(v, o.grad_batches, MAX_BATCHES), ++i;
    } else if (strcmp(a, "--widths") == 0 && v) {
      double ws[MAX_WIDTHS];
      o.num_widths = parse_list(v, ws, MAX_WIDTHS), ++i;
      for (int k = 0; k < o.num_widths; ++k) o.widths[k] = (int)ws[k];
    } else if (strcmp(a, "--groups") == 0 && v) {
      double gs[MAX_WIDTHS];
      o.num_groups = parse_list(v, gs, MAX_WIDTHS), ++i;
      for (int k = 0; k < o.num_groups; ++k) o.groups[k] = (int)gs[k];
    } else if (strcmp(a, "--width-batch") == 0 && v) {
      o.width_batch = strtod(v, NULL), ++i;
    } else if (strcmp(a, "--reps") == 0 && v) {
      o.reps = atoi(v), ++i;
    } else if (strcmp(a, "--dir") == 0 && v) {
      o.dir = v, ++i;
    } else if (strcmp(a, "--commit") == 0 && v) {
      commit = v, ++i;
    } else if (strcmp(a, "--no-host") == 0) {
      o.host = 0;
    } else if (strcmp(a, "--no-compiled") == 0) {
      o.compiled = 0;
    } else if (strcmp(a, "--jit-time") == 0 && v && i + 2 < argc) {
      return jit_time(v, argv[i + 2]);
    } else {
      fprintf(stderr, "usage: dualbatch_bench_gpu [--workload ba|kin|hess|grad] [--batches 1e4,...] "
              "[--grad-batches 1e3,...] [--widths 8,16,32] [--groups 1,4] [--width-batch B] [--reps N] "
              "[--dir DIR] [--commit SHA] [--no-host] [--no-compiled]\n"
              "       dualbatch_bench_gpu --jit-time WORKLOAD CACHE_DIR\n");
      return 2;
    }
  }
  if (o.reps < 1) o.reps = 1;
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, DUAL_DEVICE_GPU) != DUAL_SUCCESS) {
    fprintf(stderr, "bench_gpu: %s\n", dual_context_last_error(ctx));
    return 2;
  }
  struct cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  char date[64];
  time_t t = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&t));
  printf("META\tmachine\t%s (%d SMs, %.0f GiB), %s\n", prop.name, prop.multiProcessorCount,
         (double)prop.totalGlobalMem / (1u << 30), "FP64, median of timed calls after warm-up");
  printf("META\tdate\t%s\n", date);
  printf("META\tcommit\t%s\n", commit);
  measure_link(&o.link_h2d, &o.link_d2h);
  printf("META\tlink\tpinned copies: host to device %.1f GB/s, device to host %.1f GB/s\n",
         o.link_h2d / 1e9, o.link_d2h / 1e9);
  for (int k = 0; k < NUM_WORKLOADS; ++k)
    if (o.run[k]) run_workload(&o, &WORKLOADS[k], ctx);
  dual_context_destroy(&ctx);
  return g_disagree ? 1 : 0;
}
