/*
 * test_gpu_devices.c — choosing a context's CUDA device (label `gpu`; every test skips without a
 * device): dual_context_set_gpu and DUALBATCH_DEVICE=gpu:N with their range checks; on every
 * device, first-order, reverse-mode and second-order results equal to the CPU's bitwise (the CPU
 * engine is the reference, checked elsewhere against independent derivatives) for host and
 * device arrays, with the caller's current device the same after each call; a device batch on
 * another device refused; contexts on every device driven by one thread each at once; a context
 * moved to another device; one context over every device, for host arrays, for a device batch
 * on its first device, and for dual_newton and dual_lsq.  With one GPU the "other" device is the same one, and the cases that need
 * two say so and are not run.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DUAL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "dualbatch.h"
#include "random_program.h" /* rp_sweep_step */
#include "test_arrays.h"

#ifndef DUAL_HAVE_CUDA
Test(gpu_devices, ordinals_and_their_errors) { need_gpu(); }
#else

enum { N = 4, NP = 2, M = 3, B = 3001 };

static const char *source = "input x[4]; param c[2]\n"
                            "output f = sin(x[0]) * x[1] + c[0] * exp(0.3 * x[2])\n"
                            "output g = x[3] / (1 + x[0]^2) - c[1] * log1p(x[1]^2)\n"
                            "output h = x[0] * x[1] * x[2] * x[3] + tanh(x[2] - x[3])\n";

static dual_context *context_on(int device, int ordinal) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, device), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  if (ordinal >= 0) cr_assert_eq(dual_context_set_gpu(ctx, ordinal), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  return ctx;
}

static int current_device(void) {
  int d = -1;
  cr_assert_eq(cudaGetDevice(&d), cudaSuccess);
  return d;
}

/* Every product family a context's device serves, on host arrays, into one buffer per family. */
typedef struct results {
  double y[B * M], J[B * M * N], hf[B], hg[B * N], H[B * N * N], f[B], g[B * N];
  int32_t st[B];
} results;

static void run_all(dual_context *ctx, const dual_program *jac, const dual_program *scalar,
                    const double *x, const double *c, results *r) {
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD), DUAL_SUCCESS);
  cr_assert_eq(dual_jacobian(ctx, jac, B, x, N, c, NP, r->y, M, r->J, M * N, r->st), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
  cr_assert_eq(dual_hessian(ctx, scalar, B, x, N, c, NP, r->hf, 1, r->hg, N, r->H, N * N, DUAL_HESSIAN_FULL,
                            r->st),
               DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE), DUAL_SUCCESS);
  cr_assert_eq(dual_gradient(ctx, scalar, B, x, N, c, NP, r->f, r->g, N, r->st), DUAL_SUCCESS, "%s",
               dual_context_last_error(ctx));
}

static void assert_same(const results *a, const results *b, const char *what) {
  cr_assert(memcmp(a->y, b->y, sizeof a->y) == 0, "%s: values differ", what);
  cr_assert(memcmp(a->J, b->J, sizeof a->J) == 0, "%s: Jacobians differ", what);
  cr_assert(memcmp(a->hf, b->hf, sizeof a->hf) == 0 && memcmp(a->hg, b->hg, sizeof a->hg) == 0,
            "%s: the Hessians' values or gradients differ", what);
  cr_assert(memcmp(a->H, b->H, sizeof a->H) == 0, "%s: Hessians differ", what);
  cr_assert(memcmp(a->f, b->f, sizeof a->f) == 0 && memcmp(a->g, b->g, sizeof a->g) == 0,
            "%s: reverse gradients differ", what);
  cr_assert(memcmp(a->st, b->st, sizeof a->st) == 0, "%s: statuses differ", what);
}

typedef struct fixture {
  dual_context *cpu;
  dual_program *jac, *scalar;
  double *x, *c;
  results ref;
} fixture;

static void fixture_init(fixture *fx) {
  fx->cpu = context_on(DUAL_DEVICE_CPU, -1);
  fx->jac = compile_ok(fx->cpu, source);
  fx->scalar = compile_ok(fx->cpu, "input x[4]; param c[2]\n"
                                   "output f = sin(x[0]) * x[1] * c[0] + exp(0.3 * x[2]) * x[3] - c[1] * log1p(x[1]^2 + x[3]^2)\n");
  uint64_t rng = 23;
  fx->x = random_array(&rng, B * N, -1.5, 1.5), fx->c = random_array(&rng, B * NP, -1.0, 1.0);
  run_all(fx->cpu, fx->jac, fx->scalar, fx->x, fx->c, &fx->ref);
}

static void fixture_free(fixture *fx) {
  dual_program_destroy(&fx->jac), dual_program_destroy(&fx->scalar);
  dual_context_destroy(&fx->cpu);
  free(fx->x), free(fx->c);
}

Test(gpu_devices, ordinals_and_their_errors) {
  need_gpu();
  const int count = dual_device_count();
  dual_context *ctx = context_on(DUAL_DEVICE_GPU, -1);
  cr_assert_eq(dual_context_gpu(ctx), 0, "the device current on the creating thread");
  cr_assert_eq(dual_context_set_gpu(ctx, -1), DUAL_ERR_ARGUMENT);
  cr_assert_eq(dual_context_set_gpu(ctx, count), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "CUDA device"), "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_gpu(ctx), 0, "a refused choice changes nothing");
  cr_assert_eq(dual_context_set_gpu(ctx, count - 1), DUAL_SUCCESS);
  cr_assert_eq(dual_context_gpu(ctx), count - 1);
  dual_context_destroy(&ctx);

  char env[32];
  snprintf(env, sizeof env, "gpu:%d", count);
  setenv("DUALBATCH_DEVICE", env, 1);
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_AUTO), DUAL_ERR_NO_DEVICE);
  cr_assert_eq(dual_context_device(ctx), DUAL_DEVICE_CPU);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "this machine has"), "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_gpu(ctx), -1);
  dual_context_destroy(&ctx);
  snprintf(env, sizeof env, "gpu:%d", count - 1);
  setenv("DUALBATCH_DEVICE", env, 1);
  ctx = context_on(DUAL_DEVICE_CPU, -1); /* the variable overrides the argument */
  cr_assert_eq(dual_context_device(ctx), DUAL_DEVICE_GPU);
  cr_assert_eq(dual_context_gpu(ctx), count - 1);
  dual_context_destroy(&ctx);
  unsetenv("DUALBATCH_DEVICE");

  cr_assert_eq(cudaSetDevice(count - 1), cudaSuccess);
  ctx = context_on(DUAL_DEVICE_AUTO, -1);
  cr_assert_eq(dual_context_gpu(ctx), count - 1, "the device current on the creating thread");
  dual_context_destroy(&ctx);
  cr_assert_eq(cudaSetDevice(0), cudaSuccess);
}

/* On each device d, called from a thread whose current device is another one (d + 1 mod count):
 * host arrays, then device arrays on d; each call leaves the thread's current device as it was. */
Test(gpu_devices, every_device_equals_the_cpu_and_leaves_the_callers_device) {
  need_gpu();
  const int count = dual_device_count();
  fixture fx;
  fixture_init(&fx);
  results *r = malloc(sizeof *r);
  cr_assert_not_null(r);
  for (int d = 0; d < count; ++d) {
    const int other = (d + 1) % count;
    dual_context *ctx = context_on(DUAL_DEVICE_GPU, d);
    cr_assert_eq(cudaSetDevice(other), cudaSuccess);
    memset(r, 0, sizeof *r);
    run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
    cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
    cr_assert_eq(current_device(), other, "device %d: the caller's current device changed", d);
    assert_same(&fx.ref, r, "host arrays");

    cr_assert_eq(cudaSetDevice(d), cudaSuccess);
    double *dx = to_device(fx.x, sizeof(double) * B * N), *dc = to_device(fx.c, sizeof(double) * B * NP);
    double *dy = to_device(NULL, sizeof(double) * B * M), *dJ = to_device(NULL, sizeof(double) * B * M * N);
    int32_t *ds = to_device(NULL, sizeof(int32_t) * B);
    cr_assert_eq(cudaSetDevice(other), cudaSuccess);
    dual_batch b;
    dual_batch_init(&b);
    b.memory = DUAL_MEMORY_DEVICE, b.count = B;
    b.x = dx, b.x_ps = N, b.x_es = 1, b.p = dc, b.p_ps = NP, b.p_es = 1;
    b.y = dy, b.y_ps = M, b.y_es = 1, b.d = dJ, b.d_ps = M * N, b.d_rs = N, b.d_cs = 1, b.status = ds;
    cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD), DUAL_SUCCESS);
    cr_assert_eq(dual_run(ctx, fx.jac, DUAL_MODE_JACOBIAN, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    cr_assert_eq(current_device(), other, "device %d: the caller's current device changed", d);
    memset(r, 0, sizeof *r);
    cr_assert_eq(cudaMemcpy(r->y, dy, sizeof r->y, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(cudaMemcpy(r->J, dJ, sizeof r->J, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(cudaMemcpy(r->st, ds, sizeof r->st, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert(memcmp(r->y, fx.ref.y, sizeof r->y) == 0 && memcmp(r->J, fx.ref.J, sizeof r->J) == 0,
              "device %d, device arrays: the Jacobians differ from the CPU's", d);
    if (count > 1) { /* arrays on the caller's current device, not the context's: refused */
      double *wrong = to_device(fx.x, sizeof(double) * B * N);
      b.x = wrong;
      cr_assert_eq(dual_run(ctx, fx.jac, DUAL_MODE_JACOBIAN, &b), DUAL_ERR_ARGUMENT);
      cr_assert_not_null(strstr(dual_context_last_error(ctx), "is on device"), "%s", dual_context_last_error(ctx));
      cudaFree(wrong);
    }
    cudaFree(dx), cudaFree(dc), cudaFree(dy), cudaFree(dJ), cudaFree(ds);
    dual_context_destroy(&ctx);
    cr_assert_eq(current_device(), other, "destroying the context changed the caller's device");
  }
  if (count == 1) cr_log_info("one GPU: the foreign-device batch case needs two and did not run");
  free(r);
  fixture_free(&fx);
}

typedef struct worker {
  const fixture *fx;
  int ordinal;
  results r;
  int status;
  char error[256];
} worker;

static void *drive(void *arg) {
  worker *w = (worker *)arg;
  dual_context *ctx = NULL;
  w->status = dual_context_create(&ctx, DUAL_DEVICE_GPU);
  if (w->status == DUAL_SUCCESS) w->status = dual_context_set_gpu(ctx, w->ordinal);
  if (w->status == DUAL_SUCCESS) w->status = dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD);
  for (int rep = 0; rep < 3 && w->status == DUAL_SUCCESS; ++rep)
    w->status = dual_jacobian(ctx, w->fx->jac, B, w->fx->x, N, w->fx->c, NP, w->r.y, M, w->r.J, M * N, w->r.st);
  snprintf(w->error, sizeof w->error, "%s", dual_context_last_error(ctx));
  dual_context_destroy(&ctx);
  return NULL;
}

/* One thread per device (two on one device where there is one), each with its own context. */
Test(gpu_devices, one_thread_per_device_at_once) {
  need_gpu();
  const int count = dual_device_count(), threads = count > 1 ? count : 2;
  fixture fx;
  fixture_init(&fx);
  worker *w = calloc((size_t)threads, sizeof *w);
  pthread_t *t = calloc((size_t)threads, sizeof *t);
  cr_assert(w != NULL && t != NULL);
  for (int i = 0; i < threads; ++i) {
    w[i].fx = &fx, w[i].ordinal = i % count;
    cr_assert_eq(pthread_create(&t[i], NULL, drive, &w[i]), 0);
  }
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < threads; ++i) {
    cr_assert_eq(w[i].status, DUAL_SUCCESS, "thread %d on device %d: %s", i, w[i].ordinal, w[i].error);
    cr_assert(memcmp(w[i].r.J, fx.ref.J, sizeof fx.ref.J) == 0 && memcmp(w[i].r.y, fx.ref.y, sizeof fx.ref.y) == 0,
              "thread %d on device %d: the Jacobians differ from the CPU's", i, w[i].ordinal);
  }
  free(w), free(t);
  fixture_free(&fx);
}

/* A context that has run on one device, moved to the last one, runs there and agrees. */
Test(gpu_devices, a_context_moved_to_another_device) {
  need_gpu();
  const int count = dual_device_count();
  fixture fx;
  fixture_init(&fx);
  results *r = malloc(sizeof *r);
  cr_assert_not_null(r);
  dual_context *ctx = context_on(DUAL_DEVICE_GPU, 0);
  run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
  assert_same(&fx.ref, r, "device 0");
  cr_assert_eq(dual_context_set_gpu(ctx, count - 1), DUAL_SUCCESS);
  memset(r, 0, sizeof *r);
  run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
  cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
  assert_same(&fx.ref, r, "after the move");
  cr_assert_eq(current_device(), 0);
  dual_context_destroy(&ctx);
  free(r);
  fixture_free(&fx);
}

/* A context over every device (where there are two or more): each call's points shared among
 * them, the CPU's bits on every call while the shares follow the measured rates; the list read
 * back; DUALBATCH_DEVICE=gpu:0,1 makes the same context.  With one GPU: a list of it alone is
 * that GPU, a list past it refused. */
Test(gpu_devices, a_context_over_every_device) {
  need_gpu();
  const int count = dual_device_count();
  int all[16], got[16];
  for (int i = 0; i < count && i < 16; ++i) all[i] = count - 1 - i; /* the last device first */
  dual_context *ctx = context_on(DUAL_DEVICE_GPU, -1);
  if (count == 1) {
    const int past[2] = {0, 1};
    cr_assert_eq(dual_context_set_gpus(ctx, 2, past), DUAL_ERR_ARGUMENT);
    cr_assert_eq(dual_context_set_gpus(ctx, 1, all), DUAL_SUCCESS);
    cr_assert_eq(dual_context_gpus(ctx, got, 16), 1);
    cr_log_info("one GPU: the split over several devices needs two and did not run");
    dual_context_destroy(&ctx);
    return;
  }
  const int n = count < 16 ? count : 16;
  fixture fx;
  fixture_init(&fx);
  results *r = malloc(sizeof *r);
  cr_assert_not_null(r);
  cr_assert_eq(dual_context_set_gpus(ctx, n, all), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_gpus(ctx, got, 16), n);
  cr_assert(memcmp(got, all, sizeof(int) * (size_t)n) == 0, "the list read back");
  cr_assert_eq(dual_context_gpu(ctx), all[0]);
  for (int call = 0; call < 4; ++call) { /* even shares, then shares from the measured rates */
    memset(r, 0, sizeof *r);
    run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
    cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
    int64_t on_gpu = -1, on_cpu = -1;
    cr_assert_eq(dual_context_last_split(ctx, &on_gpu, &on_cpu), DUAL_SUCCESS);
    cr_assert(on_gpu == B && on_cpu == 0, "call %d: %lld points on the GPUs, %lld on the CPU", call,
              (long long)on_gpu, (long long)on_cpu);
    assert_same(&fx.ref, r, "several GPUs");
  }
  /* the same arrays page-locked (dual_host_pin): each device's share copies straight between them
   * and the device, without staging */
  void *locked[3] = {fx.x, fx.c, r};
  const int64_t sizes[3] = {(int64_t)sizeof(double) * B * N, (int64_t)sizeof(double) * B * NP, (int64_t)sizeof *r};
  for (int i = 0; i < 3; ++i)
    cr_assert_eq(dual_host_pin(ctx, locked[i], sizes[i]), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  for (int call = 0; call < 2; ++call) {
    memset(r, 0, sizeof *r);
    run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
    assert_same(&fx.ref, r, "several GPUs, page-locked arrays");
  }
  for (int i = 0; i < 3; ++i)
    cr_assert_eq(dual_host_unpin(ctx, locked[i]), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(current_device(), 0, "the caller's current device");
  dual_context_destroy(&ctx);
  setenv("DUALBATCH_DEVICE", "gpu:1,0", 1);
  ctx = context_on(DUAL_DEVICE_AUTO, -1);
  cr_assert(dual_context_gpus(ctx, got, 16) == 2 && got[0] == 1 && got[1] == 0);
  memset(r, 0, sizeof *r);
  run_all(ctx, fx.jac, fx.scalar, fx.x, fx.c, r);
  assert_same(&fx.ref, r, "gpu:1,0");
  dual_context_destroy(&ctx);
  setenv("DUALBATCH_DEVICE", "gpu:0,0", 1);
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_AUTO), DUAL_ERR_ARGUMENT);
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "listed twice"), "%s", dual_context_last_error(ctx));
  dual_context_destroy(&ctx);
  unsetenv("DUALBATCH_DEVICE");
  free(r);
  fixture_free(&fx);
}

/* The ordinals 0 .. n-1 of every device (at most 16) into all; 0, after saying that `what` needs
 * two and did not run, where there is one GPU. */
static int every_device(int all[16], const char *what) {
  const int count = dual_device_count();
  if (count < 2) {
    cr_log_info("one GPU: %s needs two and did not run", what);
    return 0;
  }
  const int n = count < 16 ? count : 16;
  for (int i = 0; i < n; ++i) all[i] = i;
  return n;
}

/* A device-memory batch on the first device of a context over every device (two or more): it is
 * shared with the devices that have peer access to the first's memory, their kernels using its
 * arrays in place; on each of 4 calls (the shares moving with the measured rates) the arrays are
 * zeroed, then refilled by a plain cudaMemcpy just before the call, which every device's kernels
 * must wait for; the Jacobians are the CPU's bits and every point ran on a GPU.  The batch is the
 * fixture's points 8 times over (24008 points): shares are whole multiples of 1024 points, so
 * every device takes one unless its measured rate is a small fraction of the others' (with the
 * fixture's 3001 points and a busy first device, the second took them all).  A batch on another
 * device than the first is refused, whatever shares the rates would give. */
Test(gpu_devices, a_device_batch_over_every_device) {
  need_gpu();
  enum { TILES = 8, BD = TILES * B };
  int all[16], reach = 0;
  const int n = every_device(all, "the split of a device batch");
  if (n == 0) return;
  for (int i = 1; i < n; ++i) {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, i, 0) == cudaSuccess && can) ++reach;
  }
  fixture fx;
  fixture_init(&fx);
  double *x = malloc(sizeof(double) * BD * N), *c = malloc(sizeof(double) * BD * NP);
  double *y = malloc(sizeof(double) * BD * M), *J = malloc(sizeof(double) * BD * M * N);
  cr_assert(x != NULL && c != NULL && y != NULL && J != NULL);
  for (int t = 0; t < TILES; ++t) {
    memcpy(x + (size_t)t * B * N, fx.x, sizeof(double) * B * N);
    memcpy(c + (size_t)t * B * NP, fx.c, sizeof(double) * B * NP);
  }
  dual_context *ctx = context_on(DUAL_DEVICE_GPU, 0);
  cr_assert_eq(dual_context_set_gpus(ctx, n, all), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_FORWARD), DUAL_SUCCESS);
  cr_assert_eq(cudaSetDevice(0), cudaSuccess);
  double *dx = to_device(NULL, sizeof(double) * BD * N), *dc = to_device(c, sizeof(double) * BD * NP);
  double *dy = to_device(NULL, sizeof(double) * BD * M), *dJ = to_device(NULL, sizeof(double) * BD * M * N);
  dual_batch b;
  dual_batch_init(&b);
  b.memory = DUAL_MEMORY_DEVICE, b.count = BD;
  b.x = dx, b.x_ps = N, b.x_es = 1, b.p = dc, b.p_ps = NP, b.p_es = 1;
  b.y = dy, b.y_ps = M, b.y_es = 1, b.d = dJ, b.d_ps = M * N, b.d_rs = N, b.d_cs = 1;
  for (int call = 0; call < 4; ++call) {
    cr_assert_eq(cudaMemset(dx, 0, sizeof(double) * BD * N), cudaSuccess);
    cr_assert_eq(cudaMemset(dy, 0, sizeof(double) * BD * M), cudaSuccess);
    cr_assert_eq(cudaMemset(dJ, 0, sizeof(double) * BD * M * N), cudaSuccess);
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    cr_assert_eq(cudaMemcpy(dx, x, sizeof(double) * BD * N, cudaMemcpyHostToDevice), cudaSuccess);
    cr_assert_eq(dual_run(ctx, fx.jac, DUAL_MODE_JACOBIAN, &b), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    cr_assert_eq(dual_context_last_device(ctx), DUAL_DEVICE_GPU);
    int64_t on_gpu = -1, on_cpu = -1;
    cr_assert_eq(dual_context_last_split(ctx, &on_gpu, &on_cpu), DUAL_SUCCESS);
    cr_assert(on_gpu == BD && on_cpu == 0, "call %d: %lld points on the GPUs, %lld on the CPU", call,
              (long long)on_gpu, (long long)on_cpu);
    cr_assert_eq(cudaMemcpy(y, dy, sizeof(double) * BD * M, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_assert_eq(cudaMemcpy(J, dJ, sizeof(double) * BD * M * N, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int t = 0; t < TILES; ++t)
      cr_assert(memcmp(y + (size_t)t * B * M, fx.ref.y, sizeof fx.ref.y) == 0 &&
                    memcmp(J + (size_t)t * B * M * N, fx.ref.J, sizeof fx.ref.J) == 0,
                "call %d: the device batch's Jacobians differ from the CPU's in points %d .. %d", call, t * B,
                (t + 1) * B - 1);
  }
  cr_assert_eq(current_device(), 0, "the caller's current device");
  cr_log_info("a device batch over %d GPUs (%d with peer access to the first): the CPU's bits on 4 calls", n, reach);
  cr_assert_eq(cudaSetDevice(1), cudaSuccess);
  double *elsewhere = to_device(x, sizeof(double) * BD * N);
  cr_assert_eq(cudaSetDevice(0), cudaSuccess);
  b.x = elsewhere;
  const int refused = dual_run(ctx, fx.jac, DUAL_MODE_JACOBIAN, &b);
  cr_assert_eq(refused, DUAL_ERR_ARGUMENT, "a batch on device 1: status %d, %s", refused, dual_context_last_error(ctx));
  cr_assert_not_null(strstr(dual_context_last_error(ctx), "is on device 1"), "%s", dual_context_last_error(ctx));
  cudaFree(elsewhere), cudaFree(dx), cudaFree(dc), cudaFree(dy), cudaFree(dJ);
  dual_context_destroy(&ctx);
  free(x), free(c), free(y), free(J);
  fixture_free(&fx);
}

/* dual_newton and dual_lsq on host arrays over every device (two or more): each device solves a
 * share of the points; on each of 3 calls (the shares moving with the measured rates) the
 * solutions, norms, statuses and step counts are the CPU's bits (the GPU solvers' promise, checked
 * against independent references in test_gpu_solve), and the call ended on the GPUs. */
Test(gpu_devices, solvers_over_every_device) {
  need_gpu();
  const int S = 20000 / rp_sweep_step(); /* fewer points under DUALBATCH_TEST_SWEEP_DIV (the sanitizers) */
  int all[16];
  const int n = every_device(all, "the solvers' split");
  if (n == 0) return;
  dual_context *cpu = context_on(DUAL_DEVICE_CPU, -1), *gpus = context_on(DUAL_DEVICE_GPU, 0);
  cr_assert_eq(dual_context_set_gpus(gpus, n, all), DUAL_SUCCESS, "%s", dual_context_last_error(gpus));
  dual_program *sq = compile_ok(cpu, "input x; input y; param a; param b\noutput f = x^2 + y - a; output g = x * y - b\n");
  dual_program *ls = compile_ok(cpu, "input x; input y; param a; param b\n"
                                     "output f = x^2 + y - a; output g = x * y - b; output h = 0.1 * (x - y)\n");
  double *x0 = malloc(sizeof(double) * 2 * S), *p = malloc(sizeof(double) * 2 * S);
  double *x[2] = {malloc(sizeof(double) * 2 * S), malloc(sizeof(double) * 2 * S)};
  double *fn[2] = {malloc(sizeof(double) * S), malloc(sizeof(double) * S)};
  int32_t *info[2] = {malloc(sizeof(int32_t) * S), malloc(sizeof(int32_t) * S)};
  int32_t *it[2] = {malloc(sizeof(int32_t) * S), malloc(sizeof(int32_t) * S)};
  for (int b = 0; b < S; ++b) {
    p[2 * b] = -2.0 + 0.0004 * b, p[2 * b + 1] = 0.5 * sin(0.1 * b);
    x0[2 * b] = 0.3 + 0.0001 * b, x0[2 * b + 1] = -1.0 + 0.00015 * b;
  }
  dual_context *ctxs[2] = {cpu, gpus};
  for (int lsq = 0; lsq < 2; ++lsq) {
    for (int call = 0; call < 3; ++call) {
      for (int d = 0; d < 2; ++d) {
        if (d == 0 && call > 0) continue; /* the CPU's answer once */
        memcpy(x[d], x0, sizeof(double) * 2 * S);
        const int st = lsq ? dual_lsq(ctxs[d], ls, NULL, S, x[d], 2, p, 2, info[d], it[d], fn[d])
                           : dual_newton(ctxs[d], sq, NULL, S, x[d], 2, p, 2, info[d], it[d], fn[d]);
        cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctxs[d]));
      }
      const char *what = lsq ? "dual_lsq" : "dual_newton";
      cr_assert_eq(dual_context_last_device(gpus), DUAL_DEVICE_GPU, "%s, call %d: %s", what, call,
                   dual_context_last_note(gpus));
      cr_assert(memcmp(x[0], x[1], sizeof(double) * 2 * S) == 0, "%s, call %d: solutions differ", what, call);
      cr_assert(memcmp(fn[0], fn[1], sizeof(double) * S) == 0, "%s, call %d: norms differ", what, call);
      cr_assert(memcmp(info[0], info[1], sizeof(int32_t) * S) == 0, "%s, call %d: statuses differ", what, call);
      cr_assert(memcmp(it[0], it[1], sizeof(int32_t) * S) == 0, "%s, call %d: step counts differ", what, call);
    }
    int64_t converged = 0;
    for (int b = 0; b < S; ++b) converged += info[1][b] == DUAL_SOLVE_CONVERGED;
    cr_assert(converged > S / 2, "%s: %lld of %d converged", lsq ? "dual_lsq" : "dual_newton", (long long)converged, S);
    cr_log_info("%s over %d GPUs: %lld of %d converged, the CPU's bits on 3 calls", lsq ? "dual_lsq" : "dual_newton", n,
                (long long)converged, S);
  }
  for (int d = 0; d < 2; ++d) free(x[d]), free(fn[d]), free(info[d]), free(it[d]);
  free(x0), free(p);
  dual_program_destroy(&sq), dual_program_destroy(&ls);
  dual_context_destroy(&cpu), dual_context_destroy(&gpus);
}

#endif /* DUAL_HAVE_CUDA */
