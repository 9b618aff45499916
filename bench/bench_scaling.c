/*
 * bench_scaling.c — throughput over several GPUs of one machine (issue 23): the ba and kin
 * Jacobians on 1 .. G GPUs.
 *   device: each GPU its own context, driven by its own thread, its arrays on its device (the
 *     model of one MPI rank per GPU): B points in all per GPU count, in calls of C points per
 *     device (ba 1e7, kin 1e6), all devices started together after one warm-up call each.
 *   host: one context over the first G GPUs (dual_context_set_gpus), host arrays of BH points, the
 *     median of 3 calls after three warm-up calls (its shares settle over the first calls).
 *   host, page-locked: the same, the arrays locked with dual_host_pin first (copied straight
 *     between them and the devices, no staging copy).
 *   host, a context per GPU: the same host arrays cut in G contiguous shares, each GPU's driven by
 *     its own thread and context (what one context over the list does inside, without it).
 *   GPU 0's device arrays, one context: arrays of C points on GPU 0, one context over the first G
 *     GPUs, about B points in calls of C after three warm-up calls; the other devices' shares use
 *     GPU 0's memory over the link (peer access).  The last call's Jacobians checked against one
 *     GPU's bit for bit.
 * Efficiency = rate(G) / (G rate(1)).  Prints a Markdown table; results are checked against one
 * GPU bit for bit in the host cases (the first BH points).  The host cases' per-call times go to
 * stderr.  --host-threads T gives the host cases' contexts T host threads (default: the library's).
 *   dualbatch_bench_scaling [--points B] [--host-points BH] [--gpus G] [--host-threads T]
 *                                                            (default 1e8, 2e6, all, 0)
 * Built with DUAL_BENCH_MPI (dualbatch_bench_scaling_mpi, where CMake finds MPI): the device-array
 * case over MPI ranks instead of threads, rank r driving GPU r (one machine), the first G ranks
 * for G = 1 .. the ranks, started together by a barrier; time from the first start to the last end.
 *   mpirun -np G dualbatch_bench_scaling_mpi [--points B]
 */
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_points.h"
#include "dualbatch.h"
#ifdef DUAL_BENCH_MPI
#include <mpi.h>
#endif

typedef struct workload {
  const char *name;
  int32_t n, p, m;
  int64_t chunk; /* points per device call */
} workload;

static const workload WORKLOADS[] = {{"ba", 15, 2, 2, 10000000}, {"kin", 32, 0, 32, 1000000}};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static dual_program *load(dual_context *ctx, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, name);
  dual_program *prog = NULL;
  if (dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS)
    fprintf(stderr, "bench_scaling: %s: %s\n", path, dual_context_last_error(ctx));
  return prog;
}

static void points(const workload *w, int64_t B, double *x, double *p) {
  if (strcmp(w->name, "ba") == 0)
    bench_points_ba(B, 1, x, p);
  else
    bench_points_kin(B, 2, x);
}

/* C points' arrays on GPU `device` (x and p copied from hx and hp, y and J as they are) and the
 * device batch over them, a Jacobian's; 0 on a CUDA failure (free what was made either way). */
typedef struct device_arrays {
  void *x, *p, *y, *J;
} device_arrays;

static int device_arrays_make(const workload *w, int64_t C, int device, const double *hx, const double *hp,
                              device_arrays *a, dual_batch *b) {
  memset(a, 0, sizeof *a);
  cudaSetDevice(device);
  const int ok = cudaMalloc(&a->x, sizeof(double) * (size_t)(C * w->n)) == cudaSuccess &&
                 cudaMalloc(&a->p, sizeof(double) * (size_t)(C * (w->p + 1))) == cudaSuccess &&
                 cudaMalloc(&a->y, sizeof(double) * (size_t)(C * w->m)) == cudaSuccess &&
                 cudaMalloc(&a->J, sizeof(double) * (size_t)(C * w->m * w->n)) == cudaSuccess &&
                 cudaMemcpy(a->x, hx, sizeof(double) * (size_t)(C * w->n), cudaMemcpyHostToDevice) == cudaSuccess &&
                 (w->p == 0 || cudaMemcpy(a->p, hp, sizeof(double) * (size_t)(C * w->p), cudaMemcpyHostToDevice) == cudaSuccess);
  dual_batch_init(b);
  b->memory = DUAL_MEMORY_DEVICE, b->count = C;
  b->x = a->x, b->x_ps = w->n, b->x_es = 1;
  if (w->p > 0) b->p = a->p, b->p_ps = w->p, b->p_es = 1;
  b->y = a->y, b->y_ps = w->m, b->y_es = 1, b->d = a->J, b->d_ps = w->m * w->n, b->d_rs = w->n, b->d_cs = 1;
  return ok;
}

static void device_arrays_free(device_arrays *a) {
  cudaFree(a->x), cudaFree(a->p), cudaFree(a->y), cudaFree(a->J);
  memset(a, 0, sizeof *a);
}

/* ---- device arrays, a context and a thread per GPU ---------------------------------------- */

typedef struct driver {
  const workload *w;
  int device, calls;
  pthread_barrier_t *start; /* the threads' start; NULL: the ranks' (mpi_start) */
  double t0, t1;
  int ok;
} driver;

static void *drive(void *arg) {
  driver *d = (driver *)arg;
  const workload *w = d->w;
  const int64_t C = w->chunk;
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  double *hx = malloc(sizeof(double) * (size_t)(C * w->n)), *hp = malloc(sizeof(double) * (size_t)(C * (w->p + 1)));
  device_arrays a = {0};
  dual_batch b;
  dual_batch_init(&b);
  /* the compiled tier, compiled at the warm-up call (AUTO would interpret while it compiles) */
  d->ok = hx != NULL && hp != NULL && dual_context_create(&ctx, DUAL_DEVICE_GPU) == DUAL_SUCCESS &&
          dual_context_set_gpu(ctx, d->device) == DUAL_SUCCESS &&
          dual_context_set_tier(ctx, DUAL_TIER_COMPILE) == DUAL_SUCCESS && (prog = load(ctx, w->name)) != NULL;
  if (d->ok) {
    points(w, C, hx, hp);
    d->ok = device_arrays_make(w, C, d->device, hx, hp, &a, &b);
  }
  if (d->ok && dual_run(ctx, prog, DUAL_MODE_JACOBIAN, &b) != DUAL_SUCCESS) { /* warm-up (and compile) */
    fprintf(stderr, "bench_scaling: GPU %d: %s\n", d->device, dual_context_last_error(ctx));
    d->ok = 0;
  }
#ifdef DUAL_BENCH_MPI
  if (d->start == NULL) MPI_Barrier(MPI_COMM_WORLD);
#endif
  if (d->start != NULL) pthread_barrier_wait(d->start);
  d->t0 = now();
  for (int i = 0; i < d->calls && d->ok; ++i) d->ok = dual_run(ctx, prog, DUAL_MODE_JACOBIAN, &b) == DUAL_SUCCESS;
  d->t1 = now();
  device_arrays_free(&a);
  free(hx), free(hp);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return NULL;
}

#ifndef DUAL_BENCH_MPI /* the one-process cases (the MPI build's main is below) */
/* Points per second of B points over GPUs 0 .. G-1, device arrays; -1 on failure. */
static double device_rate(const workload *w, int G, double B) {
  driver d[16];
  pthread_t t[16];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)G);
  const int calls = (int)ceil(B / G / (double)w->chunk);
  for (int g = 0; g < G; ++g) {
    memset(&d[g], 0, sizeof d[g]);
    d[g].w = w, d[g].device = g, d[g].calls = calls, d[g].start = &start;
    pthread_create(&t[g], NULL, drive, &d[g]);
  }
  double t0 = INFINITY, t1 = 0.0;
  int ok = 1;
  for (int g = 0; g < G; ++g) {
    pthread_join(t[g], NULL);
    ok = ok && d[g].ok, t0 = fmin(t0, d[g].t0), t1 = fmax(t1, d[g].t1);
  }
  pthread_barrier_destroy(&start);
  return ok ? (double)calls * (double)w->chunk * G / (t1 - t0) : -1.0;
}

/* ---- host arrays, one context over the first G GPUs --------------------------------------- */

static int host_threads; /* --host-threads: the host cases' contexts' threads (0: the library's) */

static double median3(const double t[3]) {
  return t[0] < t[1] ? (t[1] < t[2] ? t[1] : (t[0] < t[2] ? t[2] : t[0]))
                     : (t[0] < t[2] ? t[0] : (t[1] < t[2] ? t[2] : t[1]));
}

/* pin: the four arrays page-locked (dual_host_pin) for the calls, so each share copies straight
 * between them and its device without staging. */
static double host_rate(const workload *w, int G, int64_t BH, const double *x, const double *p, double *y,
                        double *J, const double *y1, const double *J1, int *same, int pin) {
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  int list[16];
  for (int g = 0; g < G; ++g) list[g] = g;
  if (dual_context_create(&ctx, DUAL_DEVICE_GPU) != DUAL_SUCCESS || dual_context_set_gpus(ctx, G, list) != DUAL_SUCCESS ||
      (host_threads > 0 && dual_context_set_threads(ctx, host_threads) != DUAL_SUCCESS) ||
      dual_context_set_tier(ctx, DUAL_TIER_COMPILE) != DUAL_SUCCESS || (prog = load(ctx, w->name)) == NULL) {
    fprintf(stderr, "bench_scaling: %d GPUs: %s\n", G, dual_context_last_error(ctx));
    dual_context_destroy(&ctx);
    return -1.0;
  }
  double all[6] = {0}, *t = all + 3; /* three warm-up calls (the shares settle), three timed */
  void *locked[4] = {(void *)x, (void *)p, y, J};
  const int64_t bytes[4] = {BH * w->n * 8, BH * w->p * 8, BH * w->m * 8, BH * w->m * w->n * 8};
  int ok = 1, pinned = 0;
  const double tp = now();
  for (; pin && pinned < 4 && ok; ++pinned)
    ok = bytes[pinned] == 0 || dual_host_pin(ctx, locked[pinned], bytes[pinned]) == DUAL_SUCCESS;
  if (pin && ok) fprintf(stderr, "%s, page-locking the host arrays: %.4f s\n", w->name, now() - tp);
  for (int i = 0; i < 6 && ok; ++i) {
    const double t0 = now();
    ok = dual_jacobian(ctx, prog, BH, x, w->n, p, w->p, y, w->m, J, w->m * w->n, NULL) == DUAL_SUCCESS;
    all[i] = now() - t0;
  }
  if (ok) {
    int64_t on_gpus = 0, on_cpu = 0;
    dual_context_last_split(ctx, &on_gpus, &on_cpu);
    fprintf(stderr, "%s, one context over %d GPUs%s: calls %.4f %.4f %.4f | %.4f %.4f %.4f s; last: device %d, tier %d, "
            "%lld points on GPUs, %lld on the CPU; note: %s\n", w->name, G, pin ? ", page-locked arrays" : "", all[0],
            all[1], all[2], t[0], t[1], t[2],
            dual_context_last_device(ctx),
            dual_context_last_tier(ctx), (long long)on_gpus, (long long)on_cpu, dual_context_last_note(ctx));
  }
  for (int i = 0; i < pinned; ++i)
    if (bytes[i] > 0 && dual_host_unpin(ctx, locked[i]) != DUAL_SUCCESS) ok = 0;
  *same = y1 == NULL || (memcmp(y, y1, sizeof(double) * (size_t)(BH * w->m)) == 0 &&
                         memcmp(J, J1, sizeof(double) * (size_t)(BH * w->m * w->n)) == 0);
  if (!ok) fprintf(stderr, "bench_scaling: %d GPUs: %s\n", G, dual_context_last_error(ctx));
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return ok ? (double)BH / median3(t) : -1.0;
}

/* ---- host arrays, a context and a thread per GPU ------------------------------------------- */

typedef struct host_part {
  const workload *w;
  int device, ok;
  int64_t first, count; /* the share of the host arrays */
  const double *x, *p;
  double *y, *J;
  pthread_barrier_t *go;
  double secs[4]; /* the warm-up call's and the 3 timed calls' */
} host_part;

static void *host_drive(void *arg) {
  host_part *h = (host_part *)arg;
  const workload *w = h->w;
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  h->ok = dual_context_create(&ctx, DUAL_DEVICE_GPU) == DUAL_SUCCESS && dual_context_set_gpu(ctx, h->device) == DUAL_SUCCESS &&
          (host_threads <= 0 || dual_context_set_threads(ctx, host_threads) == DUAL_SUCCESS) &&
          dual_context_set_tier(ctx, DUAL_TIER_COMPILE) == DUAL_SUCCESS && (prog = load(ctx, w->name)) != NULL;
  for (int i = 0; i < 4; ++i) { /* every part meets the barrier before each call, failed or not */
    pthread_barrier_wait(h->go);
    const double t0 = now();
    if (h->ok)
      h->ok = dual_jacobian(ctx, prog, h->count, h->x + h->first * w->n, w->n, w->p > 0 ? h->p + h->first * w->p : NULL,
                            w->p, h->y + h->first * w->m, w->m, h->J + h->first * w->m * w->n, w->m * w->n,
                            NULL) == DUAL_SUCCESS;
    h->secs[i] = now() - t0;
  }
  if (!h->ok) fprintf(stderr, "bench_scaling: host part on GPU %d: %s\n", h->device, dual_context_last_error(ctx));
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return NULL;
}

/* Points per second of BH host points cut in G shares over GPUs 0 .. G-1, each call timed from
 * the common start to the last part's end (median of 3 after a warm-up); -1 on failure. */
static double host_split_rate(const workload *w, int G, int64_t BH, const double *x, const double *p, double *y,
                              double *J, const double *y1, const double *J1, int *same) {
  host_part h[16];
  pthread_t t[16];
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, (unsigned)G);
  for (int g = 0; g < G; ++g) {
    memset(&h[g], 0, sizeof h[g]);
    h[g].w = w, h[g].device = g, h[g].go = &go, h[g].x = x, h[g].p = p, h[g].y = y, h[g].J = J;
    h[g].first = BH * g / G, h[g].count = BH * (g + 1) / G - h[g].first;
    pthread_create(&t[g], NULL, host_drive, &h[g]);
  }
  int ok = 1;
  double calls[3] = {0.0, 0.0, 0.0};
  for (int g = 0; g < G; ++g) {
    pthread_join(t[g], NULL);
    ok = ok && h[g].ok;
    for (int i = 0; i < 3; ++i) calls[i] = fmax(calls[i], h[g].secs[i + 1]);
  }
  pthread_barrier_destroy(&go);
  if (ok) fprintf(stderr, "%s, a context per GPU on %d GPUs: calls %.4f %.4f %.4f s\n", w->name, G, calls[0], calls[1], calls[2]);
  *same = y1 == NULL || (memcmp(y, y1, sizeof(double) * (size_t)(BH * w->m)) == 0 &&
                         memcmp(J, J1, sizeof(double) * (size_t)(BH * w->m * w->n)) == 0);
  return ok ? (double)BH / median3(calls) : -1.0;
}

/* ---- device arrays on the first GPU, one context over the first G GPUs --------------------- */

/* Points per second of about B points in calls of the workload's chunk C, on arrays of GPU 0,
 * one context over GPUs 0 .. G-1 (the other devices' shares read and write GPU 0's memory over
 * the link), timed after three warm-up calls (the shares settle); the last call's J (C points)
 * copied into Jout for the bitwise check; -1 on failure. */
static double peer_rate(const workload *w, int G, double B, double *Jout) {
  const int64_t C = w->chunk;
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  int list[16];
  for (int g = 0; g < G; ++g) list[g] = g;
  double *hx = malloc(sizeof(double) * (size_t)(C * w->n)), *hp = malloc(sizeof(double) * (size_t)(C * (w->p + 1)));
  device_arrays a = {0};
  dual_batch b;
  dual_batch_init(&b);
  int ok = hx != NULL && hp != NULL && dual_context_create(&ctx, DUAL_DEVICE_GPU) == DUAL_SUCCESS &&
           dual_context_set_gpus(ctx, G, list) == DUAL_SUCCESS &&
           dual_context_set_tier(ctx, DUAL_TIER_COMPILE) == DUAL_SUCCESS && (prog = load(ctx, w->name)) != NULL;
  if (ok) {
    points(w, C, hx, hp);
    ok = device_arrays_make(w, C, 0, hx, hp, &a, &b);
  }
  const int calls = (int)ceil(B / (double)C);
  for (int i = 0; i < 3 && ok; ++i) ok = dual_run(ctx, prog, DUAL_MODE_JACOBIAN, &b) == DUAL_SUCCESS;
  const double t0 = now();
  for (int i = 0; i < calls && ok; ++i) ok = dual_run(ctx, prog, DUAL_MODE_JACOBIAN, &b) == DUAL_SUCCESS;
  const double secs = now() - t0;
  if (!ok) {
    fprintf(stderr, "bench_scaling: device arrays, one context over %d GPUs: %s\n", G, dual_context_last_error(ctx));
  } else {
    int64_t on_gpus = 0, on_cpu = 0;
    dual_context_last_split(ctx, &on_gpus, &on_cpu);
    fprintf(stderr, "%s, device arrays on GPU 0, one context over %d GPUs: %d calls in %.4f s; last: device %d, tier %d, "
            "%lld points on GPUs; note: %s\n", w->name, G, calls, secs, dual_context_last_device(ctx),
            dual_context_last_tier(ctx), (long long)on_gpus, dual_context_last_note(ctx));
    ok = cudaMemcpy(Jout, a.J, sizeof(double) * (size_t)(C * w->m * w->n), cudaMemcpyDeviceToHost) == cudaSuccess;
  }
  device_arrays_free(&a);
  free(hx), free(hp);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return ok ? (double)calls * (double)C / secs : -1.0;
}

#endif

#ifdef DUAL_BENCH_MPI
/* Device arrays over the ranks: for G = 1 .. size, the first G ranks each drive their GPU (the
 * others wait at the barriers); the rate from the earliest start to the latest end. */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double B = 1e8;
  for (int i = 1; i + 1 < argc; i += 2)
    if (strcmp(argv[i], "--points") == 0) B = atof(argv[i + 1]);
  const int devices = dual_device_count();
  int fail = devices < size;
  if (fail && rank == 0) fprintf(stderr, "bench_scaling_mpi: %d ranks but %d GPUs\n", size, devices);
  if (rank == 0 && !fail) {
    printf("| function | ranks (a GPU each) | device arrays (pts/s) | efficiency |\n|---|---|---|---|\n");
    fflush(stdout);
  }
  for (size_t k = 0; k < sizeof WORKLOADS / sizeof *WORKLOADS && !fail; ++k) {
    const workload *w = &WORKLOADS[k];
    double r1 = 0.0;
    for (int G = 1; G <= size; ++G) {
      driver d;
      memset(&d, 0, sizeof d);
      d.w = w, d.device = rank, d.calls = (int)ceil(B / G / (double)w->chunk), d.ok = 1;
      d.t0 = INFINITY, d.t1 = 0.0;
      if (rank < G) {
        drive(&d); /* its warm-up, then the barrier every rank meets */
      } else {
        MPI_Barrier(MPI_COMM_WORLD);
      }
      double t0 = 0.0, t1 = 0.0;
      int ok = 0;
      MPI_Reduce(&d.t0, &t0, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
      MPI_Reduce(&d.t1, &t1, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      MPI_Allreduce(&d.ok, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      fail |= !ok;
      if (rank == 0) {
        const double r = ok ? (double)d.calls * (double)w->chunk * G / (t1 - t0) : -1.0;
        if (G == 1) r1 = r;
        printf("| %s | %d | %.3g | %.1f%% |\n", w->name, G, r, 100.0 * r / (G * r1));
        fflush(stdout);
      }
    }
  }
  if (rank == 0)
    printf("\n%.3g points per rank count in calls of (ba %d, kin %d) points per rank\n", B, (int)WORKLOADS[0].chunk,
           (int)WORKLOADS[1].chunk);
  MPI_Finalize();
  return fail;
}
#else
int main(int argc, char **argv) {
  double B = 1e8, BH = 2e6;
  int G = dual_device_count();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--points") == 0) B = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--host-points") == 0) BH = atof(argv[i + 1]);
    else if (strcmp(argv[i], "--gpus") == 0) G = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--host-threads") == 0) host_threads = atoi(argv[i + 1]);
  }
  if (G > dual_device_count()) G = dual_device_count();
  if (G > 16) G = 16;
  if (G < 1) {
    fprintf(stderr, "bench_scaling: no GPU\n");
    return 1;
  }
  printf("| function | GPUs | device arrays (pts/s) | efficiency | host arrays, one context (pts/s) | efficiency | "
         "host arrays, a context per GPU (pts/s) | efficiency | GPU 0's device arrays, one context (pts/s) | "
         "efficiency | host arrays page-locked, one context (pts/s) | efficiency | bitwise vs 1 GPU |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int fail = 0;
  for (size_t k = 0; k < sizeof WORKLOADS / sizeof *WORKLOADS; ++k) {
    const workload *w = &WORKLOADS[k];
    const int64_t bh = (int64_t)(strcmp(w->name, "kin") == 0 ? BH / 4 : BH);
    double *x = malloc(sizeof(double) * (size_t)(bh * w->n)), *p = malloc(sizeof(double) * (size_t)(bh * (w->p + 1)));
    double *y[2] = {malloc(sizeof(double) * (size_t)(bh * w->m)), malloc(sizeof(double) * (size_t)(bh * w->m))};
    double *J[2] = {malloc(sizeof(double) * (size_t)(bh * w->m * w->n)), malloc(sizeof(double) * (size_t)(bh * w->m * w->n))};
    const size_t jc = (size_t)(w->chunk * w->m * w->n); /* the device-array case's J, one call */
    double *JD[2] = {malloc(sizeof(double) * jc), malloc(sizeof(double) * jc)};
    if (!x || !p || !y[0] || !y[1] || !J[0] || !J[1] || !JD[0] || !JD[1]) {
      fprintf(stderr, "bench_scaling: out of memory for %lld host points\n", (long long)bh);
      return 1;
    }
    points(w, bh, x, p);
    double d1 = 0.0, h1 = 0.0, s1 = 0.0, p1 = 0.0, l1 = 0.0;
    for (int g = 1; g <= G; ++g) {
      const double d = device_rate(w, g, B);
      int same = 1, same_split = 1, same_locked = 1;
      const double h = host_rate(w, g, bh, x, p, y[g > 1], J[g > 1], g > 1 ? y[0] : NULL, g > 1 ? J[0] : NULL, &same, 0);
      const double hs = host_split_rate(w, g, bh, x, p, y[1], J[1], y[0], J[0], &same_split);
      const double pr = peer_rate(w, g, B, JD[g > 1]);
      const int same_peer = g == 1 || memcmp(JD[0], JD[1], sizeof(double) * jc) == 0;
      const double hl = host_rate(w, g, bh, x, p, y[1], J[1], y[0], J[0], &same_locked, 1);
      if (g == 1) d1 = d, h1 = h, s1 = hs, p1 = pr, l1 = hl;
      fail |= d < 0 || h < 0 || hs < 0 || pr < 0 || hl < 0 || !same || !same_split || !same_peer || !same_locked;
      printf("| %s | %d | %.3g | %.1f%% | %.3g | %.1f%% | %.3g | %.1f%% | %.3g | %.1f%% | %.3g | %.1f%% | %s |\n", w->name,
             g, d, 100.0 * d / (g * d1), h, 100.0 * h / (g * h1), hs, 100.0 * hs / (g * s1), pr, 100.0 * pr / (g * p1),
             hl, 100.0 * hl / (g * l1),
             same && same_split && same_peer && same_locked ? (g == 1 ? "yes (split, locked)" : "yes") : "NO");
      fflush(stdout);
    }
    free(x), free(p), free(y[0]), free(y[1]), free(J[0]), free(J[1]), free(JD[0]), free(JD[1]);
  }
  printf("\ndevice arrays: %.3g points per GPU count in calls of (ba %d, kin %d) points per GPU; host arrays: "
         "ba %.3g, kin %.3g points per call; GPU 0's device arrays: %.3g points in calls of (ba %d, kin %d) points\n",
         B, (int)WORKLOADS[0].chunk, (int)WORKLOADS[1].chunk, BH, BH / 4, B, (int)WORKLOADS[0].chunk,
         (int)WORKLOADS[1].chunk);
  return fail;
}
#endif
