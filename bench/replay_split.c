/*
 * replay_split.c — AUTO's dispatch replayed on a machine's measured splits (issue 20): reads the
 * output of dualbatch_probe_split, then calls dual_dispatch_auto on a virtual clock with engines
 * that take the measured times (each side's at the probe's count of staging threads and GPU
 * share, linear between the tenths; each device alone, proportional to its points), each time
 * times exp(N(0, noise)) and, with probability `spikes`, times a factor drawn evenly from 2 to 8
 * (the device machine's disturbed calls: a side at 2-9x its usual time now and then); prints
 * where each call ran and what the table says it took (a split: its longer side's time, which
 * between the tenths is an interpolation of medians, not a measured wall time — ba at 1e4
 * replays at 0.87x where no tenth measured under 1.01x), and the mean and the median over the
 * calls after the first 8 against the better device alone (bench_dispatch's cells are medians
 * after 8 untimed calls).  The calibration is a
 * stand-in like the device machine's (staged copies 30/28 GB/s in/out, 8 GB/s with one thread),
 * its CPU figures scaled to the measured CPU time: a replay checks the learning rules against
 * real interference between the sides, not the model's first guess.  Links the library's
 * internals (dispatch/dispatch.h).
 *
 *   dualbatch_replay_split FILE ba|kin|hess B [--noise SD] [--spikes P] [--seed S] [--calls N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dispatch/call_shape.h"
#include "dispatch/clock.h"
#include "dispatch/dispatch.h"

enum { T = 16, MAXK = 9 };

static _Thread_local double virtual_now;
static double virtual_clock(void) { return virtual_now; }

static double cpu_alone, gpu_alone, gpu_side[MAXK][10], cpu_side[MAXK][10]; /* [k][tenths on the GPU] */
static int64_t batch;
static int last_k;
static double noise_sd, spikes;
/* one generator per engine: a split's two sides run at once on two threads, each drawing from its
 * own, so that a replay is the same run after run */
static uint64_t rng[2] = {88172645463325252ull, 88172645463325252ull ^ 0x5DEECE66Dull};

static double uniform(int e) {
  uint64_t *r = &rng[e];
  *r ^= *r << 13, *r ^= *r >> 7, *r ^= *r << 17;
  return ((double)(*r >> 11) + 1.0) / 9007199254740993.0;
}

static double noise(int e) {
  const double u1 = uniform(e), u2 = uniform(e);
  const double spike = spikes > 0.0 && uniform(e) < spikes ? 2.0 + 6.0 * uniform(e) : 1.0;
  return spike * exp(noise_sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double side(const double tab[10], double share) {
  if (share <= 0.1) return tab[1] * share / 0.1;
  if (share >= 0.9) return tab[9] * share / 0.9;
  const int i = (int)(share * 10.0);
  const double f = share * 10.0 - i;
  return tab[i] * (1.0 - f) + tab[i + 1] * f;
}

static int replay_gpu(dual_context *ctx, const dual_job *job) {
  const double share = (double)job->b->count / (double)batch;
  if (job->threads >= T) virtual_now += gpu_alone * share * noise(0);
  else last_k = job->threads, virtual_now += side(gpu_side[job->threads], share) * noise(0);
  ctx->last_device = DUAL_DEVICE_GPU, ctx->last_tier = DUAL_TIER_COMPILE;
  return DUAL_SUCCESS;
}

static int replay_cpu(dual_context *ctx, const dual_job *job) {
  (void)ctx;
  const double share = (double)job->b->count / (double)batch;
  if (job->threads >= T) virtual_now += cpu_alone * share * noise(1);
  else virtual_now += side(cpu_side[T - job->threads], 1.0 - share) * noise(1);
  return DUAL_SUCCESS;
}

/* The probe's rows of workload w at batch B; 0 when the file has the both devices' row. */
static int read_probe(const char *path, const char *w, int64_t B) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  char line[512];
  int have = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char name[16];
    long long b;
    if (sscanf(line, "%15s %lld", name, &b) != 2 || strcmp(name, w) || b != B) continue;
    double c, g, share, t, tg, tc;
    int k;
    if (sscanf(line, "%*s %*d CPU %lf s GPU %lf", &c, &g) == 2) cpu_alone = c, gpu_alone = g, have = 1;
    else if (sscanf(line, "%*s %*d k %d GPU share %lf: %lf s (GPU side %lf s, CPU side %lf", &k, &share, &t, &tg, &tc) == 5 &&
             k > 0 && k < MAXK) {
      const int i = (int)(share * 10.0 + 0.5);
      gpu_side[k][i] = tg, cpu_side[k][i] = tc;
    }
  }
  fclose(f);
  return have ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: dualbatch_replay_split FILE ba|kin|hess B [--noise SD] [--spikes P] [--seed S] [--calls N]\n");
    return 2;
  }
  const char *w = argv[2];
  batch = (int64_t)atof(argv[3]);
  int calls = 40;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--noise")) noise_sd = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--spikes")) spikes = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) rng[0] += 0x9E3779B97F4A7C15ull * (uint64_t)atoll(argv[i + 1]), rng[1] += 0x9E3779B97F4A7C15ull * (uint64_t)atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
  }
  const int hess = !strcmp(w, "hess");
  if (batch <= 0 || calls <= 8 || (strcmp(w, "ba") && strcmp(w, "kin") && !hess) || read_probe(argv[1], w, batch) != 0) {
    fprintf(stderr, "replay_split: bad arguments, or no rows of %s at B = %s in %s\n", w, argv[3], argv[1]);
    return 2;
  }
  dual_context *ctx = NULL;
  dual_program *prog = NULL;
  char path[1024];
  snprintf(path, sizeof path, "%s/bench/programs/%s.db", DUAL_SOURCE_DIR, w);
  if (dual_context_create(&ctx, DUAL_DEVICE_CPU) != DUAL_SUCCESS || dual_program_compile_file(ctx, path, &prog) != DUAL_SUCCESS) {
    fprintf(stderr, "replay_split: %s\n", ctx ? dual_context_last_error(ctx) : "no context");
    dual_context_destroy(&ctx);
    return 1;
  }
  /* the job dual_jacobian (dual_hessian for hess: forward-over-reverse, the GPU's choice) would make */
  const int64_t n = prog->n_in, m = prog->n_out;
  static double present;
  dual_batch b;
  dual_batch_init(&b);
  b.count = batch, b.x_ps = n, b.x_es = 1, b.y = &present, b.y_ps = m, b.y_es = 1;
  b.d = &present, b.d_ps = m * n, b.d_rs = n, b.d_cs = 1;
  if (hess) b.h = &present, b.h_ps = m * n * n;
  dual_job job;
  memset(&job, 0, sizeof job);
  job.prog = prog, job.b = &b, job.mode = hess ? DUAL_MODE_HESSIAN : DUAL_MODE_JACOBIAN, job.width = 16;
  job.threads = T, job.reverse = hess;
  dual_calibration c;
  memset(&c, 0, sizeof c);
  c.threads = T, c.gpu = 1;
  c.cpu_call_s = 5e-6, c.cpu_arith_s = 1e-9, c.cpu_special_s = 8e-9;
  c.gpu_call_s = 30e-6, c.split_call_s = 20e-6;
  c.gpu_in_Bps = 30e9, c.gpu_out_Bps = 28e9, c.gpu_in_Bps_1 = c.gpu_out_Bps_1 = 8e9;
  for (int t = 0; t < 2; ++t)
    c.gpu_arith_s[t] = 1e-12, c.gpu_special_s[t] = 8e-12, c.gpu_lat_arith_s[t] = 1e-9, c.gpu_lat_special_s[t] = 8e-9;
  dual_call_shape s;
  dual_call_shape_of(&job, 16, 1, &s);
  const double x = (cpu_alone - c.cpu_call_s) / (dual_model_cpu(&c, &s, batch, T) - c.cpu_call_s);
  c.cpu_arith_s *= x, c.cpu_special_s *= x;
  ctx->calib = malloc(sizeof c);
  if (ctx->calib == NULL) return 1;
  *ctx->calib = c;
  dual_dispatch_set_clock(virtual_clock);
  const dual_dispatch_engines e = {replay_gpu, replay_cpu, 16, 1};
  const double best = cpu_alone < gpu_alone ? cpu_alone : gpu_alone;
  printf("# %s B = %lld: CPU alone %.4e s, GPU alone %.4e s; noise %.2f, spikes %.2f\n", w, (long long)batch, cpu_alone,
         gpu_alone, noise_sd, spikes);
  double total = 0.0, *after = calloc((size_t)calls, sizeof *after);
  if (after == NULL) return 1;
  for (int i = 0; i < calls; ++i) {
    if (dual_dispatch_auto(ctx, &job, &e) != DUAL_SUCCESS) {
      fprintf(stderr, "replay_split: %s\n", dual_context_last_error(ctx));
      return 1;
    }
    int64_t g = 0, cp = 0;
    dual_context_last_split(ctx, &g, &cp);
    const int d = dual_context_last_device(ctx);
    const double share = (double)g / (double)batch;
    const double t = d == DUAL_DEVICE_HYBRID ? fmax(side(gpu_side[last_k], share), side(cpu_side[last_k], share))
                     : d == DUAL_DEVICE_GPU  ? gpu_alone
                                             : cpu_alone;
    printf("%3d %-5s GPU points %8lld  k %d  %.4e s  %.2fx the better device\n", i,
           d == DUAL_DEVICE_HYBRID ? "split" : d == DUAL_DEVICE_GPU ? "GPU" : "CPU", (long long)g,
           d == DUAL_DEVICE_HYBRID ? last_k : 0, t, t / best);
    if (i >= 8) total += t, after[i - 8] = t;
  }
  qsort(after, (size_t)(calls - 8), sizeof *after, by_value);
  const double med = (calls - 8) % 2 ? after[(calls - 8) / 2] : 0.5 * (after[(calls - 8) / 2 - 1] + after[(calls - 8) / 2]);
  free(after);
  printf("%s B = %lld: calls 8 .. %d: mean %.4e s = %.2fx the better device, median %.2fx\n", w, (long long)batch,
         calls - 1, total / (calls - 8), total / (calls - 8) / best, med / best);
  dual_dispatch_set_clock(NULL);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
  return 0;
}
