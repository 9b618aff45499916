/*
 * bench_hvp.c — Hessian-vector products at n = 1024 (issue 17): dual_hvp of programs/grad.db
 * (the grad workload's function) along a random direction per point, on the GPU with the points
 * resident in device memory, in the AD mode AUTO picks (forward-over-reverse: one taping sweep and
 * one adjoint pair sweep per point), checked against the hand-derived H v (grad_ref.h).  Writes
 * the points (hvp_x.f64, [B][1024] as bench_points_grad; hvp_v.f64, [B][1024]) and our H v of the
 * first K points (hvp_ref.f64) for the JAX peer (peers/jax_hvp.py: jvp of grad).
 *
 *   dualbatch_bench_hvp --dir DIR [--batches 1e3,1e4,1e5] [--reps 7] [--commit SHA]
 * Prints "ROW hvp <B> dualbatch device <seconds per call> <points/s> <ad mode> <tier>" (median
 * of the reps after one warm-up call) and "META hvp check ..." (the worst row-scaled difference
 * from the formula over the first K points).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_host.h"
#include "bench_points.h"
#include "dualbatch.h"
#include "grad_ref.h"

enum { N = 1024, K = 256 };

static void fail(dual_context *ctx, const char *what) {
  fprintf(stderr, "bench_hvp: %s: %s\n", what, dual_context_last_error(ctx));
  exit(2);
}

static double *device_copy(const double *h, size_t count) {
  double *d = NULL;
  if (cudaMalloc((void **)&d, sizeof(double) * count) != cudaSuccess ||
      (h != NULL && cudaMemcpy(d, h, sizeof(double) * count, cudaMemcpyHostToDevice) != cudaSuccess)) {
    fprintf(stderr, "bench_hvp: device allocation failed\n");
    exit(2);
  }
  return d;
}

int main(int argc, char **argv) {
  bench_args o;
  bench_args_init(&o);
  for (int i = 1; i < argc; ++i) {
    if (bench_args_take(&o, argv[i], i + 1 < argc ? argv[i + 1] : NULL)) {
      ++i;
      continue;
    }
    fprintf(stderr, "usage: %s --dir DIR [--batches 1e3,1e4,1e5] [--reps R] [--commit SHA]\n", argv[0]);
    return 2;
  }
  double bs[16];
  int64_t Bmax = 0;
  const int nb = bench_args_batches(&o, bs, 16, &Bmax);
  const char *dir = o.dir, *commit = o.commit;
  const int reps = o.reps;
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, DUAL_DEVICE_GPU) != DUAL_SUCCESS) fail(ctx, "context");
  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, DUAL_SOURCE_DIR "/bench/programs/grad.db", &prog) != DUAL_SUCCESS)
    fail(ctx, "compile");
  const size_t cells = (size_t)Bmax * N;
  double *x = bench_xmalloc(sizeof(double) * cells), *v = bench_xmalloc(sizeof(double) * cells);
  bench_points_grad(Bmax, N, 5, x);
  bench_points_grad(Bmax, N, 6, v); /* the directions: N(0, 1) too, another stream */
  if (dir) bench_write_file(dir, "hvp_x.f64", x, sizeof(double) * cells), bench_write_file(dir, "hvp_v.f64", v, sizeof(double) * cells);
  char info[256];
  dual_build_info(info, sizeof info);
  for (char *c = info; *c; ++c)
    if (*c == '\n') *c = ';';
  printf("INFO hvp commit=%s n=%d build=%s\n", commit, N, info);
  dual_batch b;
  dual_batch_init(&b);
  b.memory = DUAL_MEMORY_DEVICE;
  b.x = device_copy(x, cells), b.x_ps = N, b.x_es = 1;
  b.v = device_copy(v, cells), b.v_ps = N, b.v_es = 1;
  b.y = device_copy(NULL, (size_t)Bmax), b.y_ps = 1, b.y_es = 1;
  b.h = device_copy(NULL, cells), b.h_ps = N, b.h_rs = N, b.h_es = 1; /* d NULL: no gradient asked */
  /* the check: the first K points' H v against the formula */
  const int64_t k = Bmax < K ? Bmax : K;
  b.count = k;
  if (dual_run(ctx, prog, DUAL_MODE_HVP, &b) != DUAL_SUCCESS) fail(ctx, "dual_run(DUAL_MODE_HVP)");
  double *hv = bench_xmalloc(sizeof(double) * (size_t)k * N);
  if (cudaMemcpy(hv, b.h, sizeof(double) * (size_t)k * N, cudaMemcpyDeviceToHost) != cudaSuccess) {
    fprintf(stderr, "bench_hvp: copy back failed\n");
    return 2;
  }
  const double worst = grad_ref_hvp_worst(N, x, v, hv, N, 0, k);
  printf("META\thvp check\tdualbatch H v of the first %lld points against the hand-derived formula: "
         "max row-scaled difference %.3g (%s)\n", (long long)k, worst, worst <= 1e-12 ? "agree" : "WRONG");
  if (dir) bench_write_file(dir, "hvp_ref.f64", hv, sizeof(double) * (size_t)k * N);
  for (int i = 0; i < nb; ++i) {
    b.count = (int64_t)bs[i];
    double t[BENCH_MAX_REPS];
    for (int r = -1; r < reps; ++r) {
      const double t0 = bench_now();
      if (dual_run(ctx, prog, DUAL_MODE_HVP, &b) != DUAL_SUCCESS) fail(ctx, "dual_run(DUAL_MODE_HVP)");
      if (cudaDeviceSynchronize() != cudaSuccess) fail(ctx, "synchronize");
      if (r >= 0) t[r] = bench_now() - t0;
    }
    const double sec = bench_median(t, reps);
    printf("ROW\thvp\t%lld\tdualbatch\tdevice\t%.6e\t%.6e\t%s\t%s\n", (long long)b.count, sec,
           (double)b.count / sec, dual_context_last_ad_mode(ctx) == DUAL_AD_REVERSE ? "reverse" : "forward",
           dual_context_last_tier(ctx) == DUAL_TIER_COMPILE ? "compiled" : "interpreter");
    fflush(stdout);
  }
  cudaFree((void *)b.x), cudaFree((void *)b.v), cudaFree(b.y), cudaFree(b.h);
  free(x), free(v), free(hv);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return worst <= 1e-12 ? 0 : 1;
}
