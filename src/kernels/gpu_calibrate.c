/*
 * gpu_calibrate.c — the GPU's figures of AUTO's dispatch model (gpu.h, dual_gpu_calibrate).
 * Every figure is the least time of a few calls of dual_gpu_run (the engine itself, not the
 * public calls, which would dispatch again): a one-point eval of host arrays (the call's fixed
 * cost); evals whose copies dwarf their kernels (64 inputs to 1 output, 1 to 64: bytes per
 * second each way, staged by all the calibration's threads and by one); the calibration programs
 * of dispatch/calibration.c on device arrays (no copies) at 2^20 points and at one point (their
 * kernels' time per instruction at full occupancy and alone); and a hand-over to the split
 * thread and back (a split's extra cost, dispatch/split.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "context.h"
#include "dispatch/calibration.h"
#include "dispatch/split.h"
#include "gpu.h"
#include "kernels/gpu_state.h"

enum { REPS = 9, BIG = 1 << 20, WIDE = 64, COPY_POINTS = 1 << 18 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The least seconds of REPS evals of B points of prog (x: B rows of n, y: B rows of m), on the
 * engine with `threads` host threads, after one untimed call (device arrays where `device`). */
static int time_eval(dual_context *ctx, const dual_program *prog, int64_t B, const double *x, double *y,
                     int device, int threads, double *secs) {
  dual_batch b;
  dual_batch_init(&b);
  const int n = dual_program_num_inputs(prog), m = dual_program_num_outputs(prog);
  b.count = B, b.x = x, b.x_ps = n, b.x_es = 1, b.y = y, b.y_ps = m, b.y_es = 1;
  b.memory = device ? DUAL_MEMORY_DEVICE : DUAL_MEMORY_HOST;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = DUAL_MODE_EVAL, job.threads = threads, job.seed = ctx->seed;
  double best = 0.0;
  for (int r = -1; r < REPS; ++r) {
    const double t0 = now();
    int st = dual_gpu_run(ctx, &job);
    if (st == DUAL_SUCCESS && device && cudaDeviceSynchronize() != cudaSuccess)
      st = dual_fail(ctx, DUAL_ERR_DEVICE, "calibrating the GPU: a kernel failed");
    if (st != DUAL_SUCCESS) return st;
    const double t = now() - t0;
    if (r == 0 || (r > 0 && t < best)) best = t;
  }
  *secs = best;
  return DUAL_SUCCESS;
}

/* The kernels' figures of one tier: per point per instruction at full occupancy and alone. */
static int kernel_figures(dual_context *ctx, dual_program *const prog[2], const double counts[4], double *dx,
                          double *dy, double call_dev, dual_calibration *c, int tier) {
  double tb[2], t1[2];
  for (int k = 0; k < 2; ++k) {
    int st = time_eval(ctx, prog[k], BIG, dx, dy, 1, 1, &tb[k]);
    if (st == DUAL_SUCCESS) st = time_eval(ctx, prog[k], 1, dx, dy, 1, 1, &t1[k]);
    if (st != DUAL_SUCCESS) return st;
    tb[k] = (tb[k] > call_dev ? tb[k] - call_dev : tb[k]) / BIG;
    t1[k] = t1[k] > 2.0 * call_dev ? t1[k] - call_dev : t1[k] * 0.5;
  }
  dual_calibration_solve(tb[0], tb[1], counts[0], counts[1], counts[2], counts[3], &c->gpu_arith_s[tier],
                         &c->gpu_special_s[tier]);
  dual_calibration_solve(t1[0], t1[1], counts[0], counts[1], counts[2], counts[3], &c->gpu_lat_arith_s[tier],
                         &c->gpu_lat_special_s[tier]);
  return DUAL_SUCCESS;
}

static int calibrate_on_current(dual_context *ctx, int compiled, struct dual_calibration *c) {
  dual_program *p1 = NULL, *pin = NULL, *pout = NULL, *prog[2] = {NULL, NULL};
  const size_t hx = sizeof(double) * (size_t)COPY_POINTS * WIDE;
  double *hxin = malloc(hx), *hyout = malloc(hx), *dx = NULL, *dy = NULL;
  int st = hxin != NULL && hyout != NULL ? DUAL_SUCCESS : DUAL_ERR_NO_MEMORY;
  if (st == DUAL_SUCCESS) st = dual_program_compile(ctx, "input x\noutput y = x\n", "calibration", &p1);
  if (st == DUAL_SUCCESS)
    st = dual_program_compile(ctx, "input x[64]\noutput y = sum(i in 0..64, x[i])\n", "calibration", &pin);
  if (st == DUAL_SUCCESS)
    st = dual_program_compile(ctx, "input x\noutput y[64]\nfor i in 0..64 { y[i] = x * (i + 1) }\n",
                              "calibration", &pout);
  for (int k = 0; k < 2 && st == DUAL_SUCCESS; ++k)
    st = dual_program_compile(ctx, dual_calibration_source(k), "calibration", &prog[k]);
  if (st == DUAL_SUCCESS && (cudaMalloc((void **)&dx, sizeof(double) * 4 * BIG) != cudaSuccess ||
                             cudaMalloc((void **)&dy, sizeof(double) * BIG) != cudaSuccess))
    st = dual_fail(ctx, DUAL_ERR_NO_MEMORY, "calibrating the GPU: no device memory for 2^20 points");
  const int tier = ctx->tier;
  double call = 0.0, tin = 0.0, tout = 0.0, tin1 = 0.0, tout1 = 0.0, call_dev = 0.0, counts[4];
  if (st == DUAL_SUCCESS) {
    for (size_t i = 0; i < (size_t)COPY_POINTS * WIDE; ++i) hxin[i] = 0.25 + 0.5 * (double)(i % 7) / 7.0;
    st = cudaMemcpy(dx, hxin, sizeof(double) * 4 * BIG < hx ? sizeof(double) * 4 * BIG : hx,
                    cudaMemcpyHostToDevice) == cudaSuccess
             ? DUAL_SUCCESS
             : dual_fail(ctx, DUAL_ERR_DEVICE, "calibrating the GPU: a copy failed");
    ctx->tier = DUAL_TIER_INTERPRET;
  }
  const int T = c->threads > 0 ? c->threads : 1;
  if (st == DUAL_SUCCESS) st = time_eval(ctx, p1, 1, hxin, hyout, 0, T, &call);
  if (st == DUAL_SUCCESS) st = time_eval(ctx, pin, COPY_POINTS, hxin, hyout, 0, T, &tin);
  if (st == DUAL_SUCCESS) st = time_eval(ctx, pout, COPY_POINTS, hxin, hyout, 0, T, &tout);
  if (st == DUAL_SUCCESS) st = time_eval(ctx, pin, COPY_POINTS, hxin, hyout, 0, 1, &tin1);
  if (st == DUAL_SUCCESS) st = time_eval(ctx, pout, COPY_POINTS, hxin, hyout, 0, 1, &tout1);
  if (st == DUAL_SUCCESS) st = time_eval(ctx, p1, 1, dx, dy, 1, 1, &call_dev);
  if (st == DUAL_SUCCESS) {
    dual_calibration_count(prog[0], &counts[0], &counts[1]);
    dual_calibration_count(prog[1], &counts[2], &counts[3]);
    st = kernel_figures(ctx, prog, counts, dx, dy, call_dev, c, 0);
  }
  if (st == DUAL_SUCCESS && compiled) {
    ctx->tier = DUAL_TIER_COMPILE;
    st = kernel_figures(ctx, prog, counts, dx, dy, call_dev, c, 1);
  } else if (st == DUAL_SUCCESS) { /* the interpreter's: an upper bound of the compiled tier's */
    c->gpu_arith_s[1] = c->gpu_arith_s[0], c->gpu_special_s[1] = c->gpu_special_s[0];
    c->gpu_lat_arith_s[1] = c->gpu_lat_arith_s[0], c->gpu_lat_special_s[1] = c->gpu_lat_special_s[0];
  }
  ctx->tier = tier;
  double split = 0.0;
  if (st == DUAL_SUCCESS) st = dual_split_handoff_seconds(ctx, &split);
  if (st == DUAL_SUCCESS) {
    const double in_bytes = 8.0 * WIDE * COPY_POINTS, small = 8.0 * COPY_POINTS;
    /* each wide eval's time less the call; the other direction's 8 bytes a point at the same rate */
    const double din = tin > call ? tin - call : tin, dout = tout > call ? tout - call : tout;
    const double din1 = tin1 > call ? tin1 - call : tin1, dout1 = tout1 > call ? tout1 - call : tout1;
    c->gpu_call_s = call, c->gpu_in_Bps = (in_bytes + small) / din, c->gpu_out_Bps = (in_bytes + small) / dout;
    c->gpu_in_Bps_1 = (in_bytes + small) / din1, c->gpu_out_Bps_1 = (in_bytes + small) / dout1;
    c->split_call_s = split > 0.0 ? split : 1e-6;
    c->gpu = 1;
  }
  if (dx != NULL) cudaFree(dx);
  if (dy != NULL) cudaFree(dy);
  free(hxin), free(hyout);
  dual_program_destroy(&p1), dual_program_destroy(&pin), dual_program_destroy(&pout);
  dual_program_destroy(&prog[0]), dual_program_destroy(&prog[1]);
  if (st == DUAL_ERR_NO_MEMORY && dual_context_last_error(ctx)[0] == '\0')
    return dual_fail(ctx, st, "calibrating the GPU: out of memory");
  return st;
}

int dual_gpu_calibrate(dual_context *ctx, int compiled, struct dual_calibration *c) {
  DUAL_ON_CONTEXT_GPU(ctx, calibrate_on_current(ctx, compiled, c));
}
