/*
 * adolc_hess_check.c — dual_peer_adolc_check: checks and times the two CPU peers of the hess
 * workload, ADOL-C (adolc_hess.h, every per-point driver) and the hand-written second-order
 * forward mode (nested_dual_hess.h, both number types), outside the benchmark harness.
 *
 *   dual_peer_adolc_check [--batch B] [--reps R] [--check K] [--seed S] [--tools LIST]
 *
 * LIST: comma-separated tool names as printed (adolc/0,nested/0, ...); default all.
 * 1. Agreement: K points (default 1000), N(0,1) from bench_points' RNG, against the analytic
 *    value, gradient and Hessian of tests/ref/hess_ref.c.  Per tool: the max relative difference
 *    of f, of g and of H, each entry divided by max(|ref entry|, 1e-6 x the point's largest
 *    |ref| entry of that array) (the floor of bench_cpu.c), and whether the 2-thread results are
 *    bitwise those of 1 thread.
 * 2. Speed: points/s at B (default 1e5) with 1 and 2 threads: one warm-up call, then R (default 5)
 *    timed calls; median [min, max].
 * Exit status 0 when every tool agrees within 1e-8 (as bench_cpu.c's CHECK_TOL), 1 otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adolc_hess.h"
#include "bench_points.h"
#include "hess_ref.h"
#include "nested_dual_hess.h"

enum { N = 16, NN = N * N, MAX_REPS = 101 };
#define TOL 1e-8
#define FLOOR 1e-6

typedef int (*run_fn)(int64_t B, const double *x, double *f, double *g, double *H, int threads,
                      int variant);

typedef struct tool {
  const char *family;
  run_fn run;
  int variant;
  const char *name;
} tool;

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "dual_peer_adolc_check: out of memory (%zu bytes)\n", bytes);
    exit(2);
  }
  return p;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* max over entries of |a - r| / max(|r|, FLOOR * max|r|) */
static double rel_diff(const double *a, const double *r, int count) {
  double big = 0.0, worst = 0.0;
  for (int i = 0; i < count; i++)
    big = fmax(big, fabs(r[i]));
  for (int i = 0; i < count; i++) {
    double d = fabs(a[i] - r[i]) / fmax(fmax(fabs(r[i]), FLOOR * big), 1e-300);
    worst = isnan(d) ? INFINITY : fmax(worst, d);
  }
  return worst;
}

static int run_adolc(int64_t B, const double *x, double *f, double *g, double *H, int threads,
                     int variant) {
  return adolc_hess_run_driver(B, x, f, g, H, threads, variant);
}

static int run_nested(int64_t B, const double *x, double *f, double *g, double *H, int threads,
                      int variant) {
  return nested_hess_run_variant(B, x, f, g, H, threads, variant);
}

/* whether "family/variant" is in the comma-separated list (every tool without a list) */
static int selected(const char *list, const char *family, int variant) {
  char name[32];
  if (!list)
    return 1;
  snprintf(name, sizeof name, "%s/%d", family, variant);
  size_t len = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
      return 1;
  return 0;
}

int main(int argc, char **argv) {
  int64_t batch = 100000, check = 1000;
  int reps = 5;
  uint64_t seed = 20261122;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--batch"))
      batch = (int64_t)strtod(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--reps"))
      reps = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--check"))
      check = (int64_t)strtod(argv[++i], NULL);
    else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
      seed = strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--tools"))
      only = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--batch B] [--reps R] [--check K] [--seed S] [--tools LIST]\n",
              argv[0]);
      return 2;
    }
  }
  if (batch < 1 || check < 1 || reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "dual_peer_adolc_check: need batch, check >= 1 and 1 <= reps <= %d\n",
            MAX_REPS);
    return 2;
  }

  tool tools[ADOLC_HESS_DRIVERS + NESTED_HESS_VARIANTS];
  int ntools = 0;
  for (int v = 0; v < ADOLC_HESS_DRIVERS; v++)
    if (selected(only, "adolc", v))
      tools[ntools++] = (tool){"adolc", run_adolc, v, adolc_hess_driver_name(v)};
  for (int v = 0; v < NESTED_HESS_VARIANTS; v++)
    if (selected(only, "nested", v))
      tools[ntools++] = (tool){"nested", run_nested, v, nested_hess_variant_name(v)};
  printf("peers: %s\n       %s\n", adolc_peer_info(), nested_peer_info());
  printf("defaults: adolc_hess_run = adolc/%d, nested_hess_run = nested/%d\n", ADOLC_HESS_WK_OV,
         NESTED_HESS_TAYLOR2);

  /* 1. agreement */
  int64_t bmax = batch > check ? batch : check;
  double *x = xmalloc(sizeof(double) * (size_t)(bmax * N));
  double *f = xmalloc(sizeof(double) * (size_t)bmax), *f2 = xmalloc(sizeof(double) * (size_t)check);
  double *g = xmalloc(sizeof(double) * (size_t)(bmax * N));
  double *g2 = xmalloc(sizeof(double) * (size_t)(check * N));
  double *H = xmalloc(sizeof(double) * (size_t)(bmax * NN));
  double *H2 = xmalloc(sizeof(double) * (size_t)(check * NN));
  bench_rng rng;
  bench_rng_seed(&rng, seed);
  for (int64_t i = 0; i < bmax * N; i++)
    x[i] = bench_rng_normal(&rng);
  double *rf = xmalloc(sizeof(double) * (size_t)check);
  double *rg = xmalloc(sizeof(double) * (size_t)(check * N));
  double *rH = xmalloc(sizeof(double) * (size_t)(check * NN));
  for (int64_t b = 0; b < check; b++) {
    rf[b] = hess_ref_value(x + b * N);
    hess_ref_gradient(x + b * N, rg + b * N);
    hess_ref_hessian(x + b * N, rH + b * NN);
  }
  int bad = 0;
  printf("\nagreement with tests/ref/hess_ref.c on %lld N(0,1) points (seed %llu); max relative "
         "difference per entry (floor %g x the point's max):\n",
         (long long)check, (unsigned long long)seed, FLOOR);
  printf("| tool | driver / number type | f | g | H | 2 threads = 1 thread |\n"
         "|---|---|---|---|---|---|\n");
  for (int t = 0; t < ntools; t++) {
    const tool *tl = &tools[t];
    if (tl->run(check, x, f, g, H, 1, tl->variant) ||
        tl->run(check, x, f2, g2, H2, 2, tl->variant)) {
      printf("| %s/%d | %s | call failed | | | |\n", tl->family, tl->variant, tl->name);
      bad = 1;
      continue;
    }
    double df = 0.0, dg = 0.0, dH = 0.0;
    for (int64_t b = 0; b < check; b++) {
      df = fmax(df, rel_diff(f + b, rf + b, 1));
      dg = fmax(dg, rel_diff(g + b * N, rg + b * N, N));
      dH = fmax(dH, rel_diff(H + b * NN, rH + b * NN, NN));
    }
    int same = !memcmp(f, f2, sizeof(double) * (size_t)check) &&
               !memcmp(g, g2, sizeof(double) * (size_t)(check * N)) &&
               !memcmp(H, H2, sizeof(double) * (size_t)(check * NN));
    printf("| %s/%d | %s | %.2g | %.2g | %.2g | %s |\n", tl->family, tl->variant, tl->name, df, dg,
           dH, same ? "bitwise" : "NO");
    if (!(df <= TOL && dg <= TOL && dH <= TOL) || !same)
      bad = 1;
  }

  /* 2. speed */
  double load[3] = {0, 0, 0};
  FILE *fp = fopen("/proc/loadavg", "r");
  if (fp) {
    if (fscanf(fp, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
      load[0] = -1.0;
    fclose(fp);
  }
  printf("\npoints/s at B = %lld (load average %.2f at start): warm-up call, then %d timed calls, "
         "median [min, max]\n",
         (long long)batch, load[0], reps);
  printf("| tool | driver / number type | threads | points/s | [min, max] |\n"
         "|---|---|---|---|---|\n");
  for (int t = 0; t < ntools; t++) {
    const tool *tl = &tools[t];
    for (int threads = 1; threads <= 2; threads++) {
      double rate[MAX_REPS];
      if (tl->run(batch, x, f, g, H, threads, tl->variant)) {
        printf("| %s/%d | %s | %d | call failed | |\n", tl->family, tl->variant, tl->name, threads);
        bad = 1;
        continue;
      }
      for (int r = 0; r < reps; r++) {
        double t0 = now();
        tl->run(batch, x, f, g, H, threads, tl->variant);
        rate[r] = (double)batch / (now() - t0);
      }
      qsort(rate, (size_t)reps, sizeof rate[0], cmp_double);
      printf("| %s/%d | %s | %d | %.3g | [%.3g, %.3g] |\n", tl->family, tl->variant, tl->name,
             threads, rate[reps / 2], rate[0], rate[reps - 1]);
      fflush(stdout);
    }
  }
  free(x), free(f), free(f2), free(g), free(g2), free(H), free(H2), free(rf), free(rg), free(rH);
  return bad;
}
