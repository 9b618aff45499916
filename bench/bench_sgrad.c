/*
 * bench_sgrad.c — the sgrad benchmark (BENCHMARKS.md "sgrad"): dual_sgrad of programs/sgrad.db
 * (n = 16, S samples per point, pathwise) at several batch sizes, on the GPU with the points
 * resident in device memory (DUAL_MODE_SGRAD through dual_run), or on the CPU.  Writes the points
 * (sgrad_x.f64, [B][16], N(0,1) as bench_points_hess) and our estimates for the first K points
 * (sgrad_ref.f64: f, gradient [16], standard errors [16]) for the JAX peer
 * (peers/jax_sgrad.py), which times its own estimator on the same points and checks agreement in
 * units of the combined standard error.
 *
 *   dualbatch_bench_sgrad --dir DIR [--device gpu|cpu] [--batches 1e3,1e4,1e5] [--samples 256]
 *                         [--reps 7] [--commit SHA] [--ad auto|forward|reverse] [--program P.db]
 * (--program: another program of 16 inputs and one output instead of sgrad.db, for studies)
 * Prints "ROW sgrad <B> dualbatch <device> <seconds per call> <points/s>" (median of the reps
 * after one warm-up call).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_host.h"
#include "bench_points.h"
#include "dualbatch.h"

enum { N = 16, K = 1024 };

static void fail(dual_context *ctx, const char *what) {
  fprintf(stderr, "bench_sgrad: %s: %s\n", what, dual_context_last_error(ctx));
  exit(2);
}

/* The batch's arrays: host, or device copies (GPU). */
static void make_batch(dual_batch *b, int64_t B, double *x, double *out, int device) {
  dual_batch_init(b);
  b->count = B;
#ifdef DUAL_HAVE_CUDA
  if (device == DUAL_DEVICE_GPU) {
    double *dx = NULL, *dout = NULL;
    if (cudaMalloc((void **)&dx, sizeof(double) * B * N) != cudaSuccess ||
        cudaMalloc((void **)&dout, sizeof(double) * B * (1 + 2 * N)) != cudaSuccess ||
        cudaMemcpy(dx, x, sizeof(double) * B * N, cudaMemcpyHostToDevice) != cudaSuccess) {
      fprintf(stderr, "bench_sgrad: device allocation failed\n");
      exit(2);
    }
    x = dx, out = dout;
    b->memory = DUAL_MEMORY_DEVICE;
  }
#else
  (void)device;
#endif
  b->x = x, b->x_ps = N, b->x_es = 1;
  b->y = out, b->y_ps = 1 + 2 * N, b->y_es = 1;
  b->d = out + 1, b->d_ps = 1 + 2 * N, b->d_cs = 1;
  b->h = out + 1 + N, b->h_ps = 1 + 2 * N, b->h_es = 1;
}

int main(int argc, char **argv) {
  bench_args o;
  bench_args_init(&o);
  const char *path = DUAL_SOURCE_DIR "/bench/programs/sgrad.db";
  int device = DUAL_DEVICE_GPU, ad = DUAL_AD_AUTO;
  int64_t S = 256;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (bench_args_take(&o, a, v)) ++i;
    else if (v && !strcmp(a, "--device")) device = strcmp(v, "cpu") ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU, ++i;
    else if (v && !strcmp(a, "--samples")) S = atoll(v), ++i;
    else if (v && !strcmp(a, "--program")) path = v, ++i;
    else if (v && !strcmp(a, "--ad"))
      ad = !strcmp(v, "forward") ? DUAL_AD_FORWARD : !strcmp(v, "reverse") ? DUAL_AD_REVERSE : DUAL_AD_AUTO, ++i;
    else {
      fprintf(stderr, "usage: %s --dir DIR [--device gpu|cpu] [--batches 1e3,1e4,1e5] [--samples S] [--reps R] [--commit SHA] [--ad auto|forward|reverse] [--program P.db]\n", argv[0]);
      return 2;
    }
  }
  double bs[16];
  int64_t Bmax = 0;
  const int nb = bench_args_batches(&o, bs, 16, &Bmax);
  const char *dir = o.dir, *commit = o.commit;
  const int reps = o.reps;
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, device) != DUAL_SUCCESS) fail(ctx, "context");
  if (dual_context_set_ad_mode(ctx, ad) != DUAL_SUCCESS) fail(ctx, "AD mode");
  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS) fail(ctx, "compile");
  if (dual_program_num_inputs(prog) != N || dual_program_num_outputs(prog) != 1) {
    fprintf(stderr, "bench_sgrad: %s: needs %d inputs and one output\n", path, N);
    return 2;
  }
  double *x = bench_xmalloc(sizeof(double) * (size_t)Bmax * N);
  double *out = bench_xmalloc(sizeof(double) * (size_t)Bmax * (1 + 2 * N));
  bench_points_hess(Bmax, 2026, x);
  if (dir) bench_write_file(dir, "sgrad_x.f64", x, sizeof(double) * (size_t)Bmax * N);
  char info[256];
  dual_build_info(info, sizeof info);
  for (char *c = info; *c; ++c)
    if (*c == '\n') *c = ';';
  printf("INFO sgrad commit=%s samples=%lld device=%s build=%s\n", commit, (long long)S,
         device == DUAL_DEVICE_GPU ? "gpu" : "cpu", info);
  for (int i = 0; i < nb; ++i) {
    const int64_t B = (int64_t)bs[i];
    dual_batch b;
    make_batch(&b, B, x, out, device);
    b.samples = S, b.seed = 1;
    double t[BENCH_MAX_REPS];
    for (int r = -1; r < reps; ++r) {
      const double t0 = bench_now();
      if (dual_run(ctx, prog, DUAL_MODE_SGRAD, &b) != DUAL_SUCCESS) fail(ctx, "dual_run(DUAL_MODE_SGRAD)");
      if (r >= 0) t[r] = bench_now() - t0;
    }
    const double sec = bench_median(t, reps);
    printf("ROW\tsgrad\t%lld\tdualbatch\t%s\t%.6e\t%.6e\t%s\n", (long long)B,
           device == DUAL_DEVICE_GPU ? "device" : "host", sec, (double)B / sec,
           dual_context_last_ad_mode(ctx) == DUAL_AD_REVERSE ? "reverse" : "forward");
    fflush(stdout);
#ifdef DUAL_HAVE_CUDA
    if (device == DUAL_DEVICE_GPU) {
      if (i == nb - 1 && cudaMemcpy(out, b.y, sizeof(double) * B * (1 + 2 * N), cudaMemcpyDeviceToHost) != cudaSuccess)
        fprintf(stderr, "bench_sgrad: copy back failed\n");
      cudaFree((void *)b.x), cudaFree(b.y);
    }
#endif
    if (i == nb - 1 && dir) bench_write_file(dir, "sgrad_ref.f64", out, sizeof(double) * (size_t)(B < K ? B : K) * (1 + 2 * N));
  }
  free(x), free(out);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return 0;
}
