/*
 * bench_dispatch.c — where a host-array call is fastest (issue 20, BENCHMARKS.md "Adaptive
 * dispatch"): the time per call of ba's and kin's Jacobians and hess's Hessians, host arrays, at
 * B = 1e2 ... 1e7, on a CPU context (all its threads), a GPU context and an AUTO context, the
 * same points for each, every result checked bitwise against the CPU's.  Prints one line per
 * workload, B and context (median seconds per call, points per second, where the call ran) and,
 * with --csv FILE, the same as comma-separated rows for bench/plot_dispatch.py.  The GPU and AUTO
 * contexts compile their kernels (DUAL_TIER_COMPILE) in untimed warm-up calls, so the rows are the
 * steady state of a program that has run before (the AUTO context's --auto-warmup calls at each
 * size, default 8, are its learning there: their time is printed against the better device's); the timed calls go round the contexts in turn,
 * so that the machine's drift meets them alike, each short one after an untimed call of its own
 * context.  The AUTO context takes DUAL_KNOB_DISPATCH from
 * DUALBATCH_DISPATCH (unset: the library's default).
 *
 *   dualbatch_bench_dispatch [--workload ba|kin|hess|all] [--batches 1e2,1e3,...] [--threads T]
 *                            [--contexts cpu,gpu,auto] [--min-time S] [--min-calls N] [--auto-warmup N]
 *                            [--csv FILE]
 * (timed calls: enough for --min-time seconds on each context, at least --min-calls, default 5)
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_host.h"
#include "dispatch_workloads.h"

/* Calls shorter than this get an untimed lead call of their own context before each timed one. */
#define LEAD_BELOW_S 10e-3

/* Where the last call ran: "CPU", "GPU compiled", "GPU interpreted", or "GPU+CPU split g/c". */
static const char *where(const dual_context *ctx) {
  static char buf[96];
  int64_t g = 0, c = 0;
  switch (dual_context_last_device(ctx)) {
  case DUAL_DEVICE_CPU: return "CPU";
  case DUAL_DEVICE_GPU: return dual_context_last_tier(ctx) == DUAL_TIER_COMPILE ? "GPU compiled" : "GPU interpreted";
  case DUAL_DEVICE_HYBRID:
    dual_context_last_split(ctx, &g, &c);
    snprintf(buf, sizeof buf, "GPU+CPU split %lld/%lld", (long long)g, (long long)c);
    return buf;
  default: return "?";
  }
}

/* One row: the median of a context's times at B, where its last call ran, and (checked) how far
 * its results are from the CPU context's. */
static void report(const dispatch_workload *w, int64_t B, const char *name, const dual_context *ctx, double *times, int reps,
                   const int ran[3], int checked, const dispatch_outputs *ref, const dispatch_outputs *got, FILE *csv, int *rc) {
  const double med = bench_median(times, reps);
  /* against the CPU context's: bitwise, else the largest difference relative to the entry's
   * magnitude (a GPU or AUTO context may pick another AD mode for hess: run.c) */
  char check[96] = "";
  if (checked) {
    const double *rs[3] = {ref->y, ref->J, ref->H}, *gs[3] = {got->y, got->J, got->H};
    double worst = 0.0;
    for (int a = 0; a < 3; ++a)
      for (size_t e = 0; rs[a] && e < (size_t)B * dispatch_out_doubles(w, a); ++e) {
        const double r = rs[a][e], g = gs[a][e];
        if (memcmp(&r, &g, sizeof r) == 0) continue;
        const double d = fabs(r - g) / (fabs(r) > 1.0 ? fabs(r) : 1.0);
        worst = d > worst || d != d ? d : worst;
      }
    if (worst == 0.0) snprintf(check, sizeof check, ", bitwise the CPU's");
    else snprintf(check, sizeof check, ", %.1e from the CPU's", worst);
    if (!(worst < 1e-10)) *rc = 1;
  }
  const char *note = dual_context_last_note(ctx);
  char mix[64] = ""; /* where the timed calls ran, when not all in one place */
  if ((ran[0] > 0) + (ran[1] > 0) + (ran[2] > 0) > 1)
    snprintf(mix, sizeof mix, " (calls on CPU/GPU/split: %d/%d/%d)", ran[0], ran[1], ran[2]);
  printf("%-5s %9lld %-5s %11.4e s %11.4e points/s  %d calls  ran on %s%s%s%s%s\n", w->name, (long long)B, name, med,
         (double)B / med, reps, where(ctx), mix, check, note && *note ? "; note: " : "", note && *note ? note : "");
  if (csv) fprintf(csv, "%s,%lld,%s,%.6e,%.6e,%s\n", w->name, (long long)B, name, med, (double)B / med, where(ctx));
  fflush(stdout);
}

int main(int argc, char **argv) {
  const char *which = "all", *batches = "1e2,1e3,1e4,1e5,1e6,1e7", *contexts = "cpu,gpu,auto", *csv_path = NULL;
  int threads = omp_get_max_threads();
  double min_time = 0.3;
  int auto_warmup = 8;
  int min_calls = 5; /* timed calls of each context at least (1e7's cells on 3 calls moved 10-20 % run to run) */
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--workload") && v) which = v, ++i;
    else if (!strcmp(a, "--batches") && v) batches = v, ++i;
    else if (!strcmp(a, "--threads") && v) threads = atoi(v), ++i;
    else if (!strcmp(a, "--contexts") && v) contexts = v, ++i;
    else if (!strcmp(a, "--min-time") && v) min_time = atof(v), ++i;
    else if (!strcmp(a, "--auto-warmup") && v) auto_warmup = atoi(v), ++i;
    else if (!strcmp(a, "--min-calls") && v) min_calls = atoi(v), ++i;
    else if (!strcmp(a, "--csv") && v) csv_path = v, ++i;
    else {
      fprintf(stderr, "usage: dualbatch_bench_dispatch [--workload ba|kin|hess|all] [--batches 1e2,...] "
                      "[--threads T] [--contexts cpu,gpu,auto] [--min-time S] [--min-calls N] [--auto-warmup N] [--csv FILE]\n");
      return 2;
    }
  }
  double bs[16];
  int64_t Bmax = 0;
  const int nb = bench_parse_batches(batches, bs, 16, &Bmax);
  if (nb <= 0 || threads < 1 || auto_warmup < 2 || min_calls < 1 || min_calls > BENCH_MAX_REPS) {
    fprintf(stderr, "bench_dispatch: bad --batches, --threads, --min-calls or --auto-warmup (at least 2)\n");
    return 2;
  }
  FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv_path && !csv) {
    fprintf(stderr, "bench_dispatch: cannot write %s\n", csv_path);
    return 2;
  }
  if (csv) fprintf(csv, "workload,B,context,seconds,points_per_second,ran_on\n");
  char cpu[256];
  bench_cpu_model(cpu, sizeof cpu);
  printf("# dualbatch %s, %s, %d threads; host arrays; median time per call over >= %.2f s of calls\n",
         dual_version_string(), cpu, threads, min_time);
  static const char *names[3] = {"cpu", "gpu", "auto"};
  static const int devices[3] = {DUAL_DEVICE_CPU, DUAL_DEVICE_GPU, DUAL_DEVICE_AUTO};
  int rc = 0;
  for (size_t k = 0; k < sizeof dispatch_workloads / sizeof *dispatch_workloads; ++k) {
    const dispatch_workload *w = &dispatch_workloads[k];
    if (strcmp(which, "all") && strcmp(which, w->name)) continue;
    double *x = bench_xmalloc(sizeof(double) * (size_t)Bmax * (size_t)w->n);
    double *p = w->np ? bench_xmalloc(sizeof(double) * (size_t)Bmax * (size_t)w->np) : NULL;
    dispatch_points(w, Bmax, x, p);
    /* the CPU's results are kept for the check up to B = 1e6 (kin's J at 1e7 is 82 GB) */
    const int64_t Bref = Bmax < 1000000 ? Bmax : 1000000;
    dispatch_outputs ref, got;
    double **rs[3] = {&ref.y, &ref.J, &ref.H}, **gs[3] = {&got.y, &got.J, &got.H};
    for (int a = 0; a < 3; ++a) {
      const int used = a < 2 || w->hessian;
      *rs[a] = used ? bench_xmalloc(sizeof(double) * (size_t)Bref * dispatch_out_doubles(w, a)) : NULL;
      *gs[a] = used ? bench_xmalloc(sizeof(double) * (size_t)Bmax * dispatch_out_doubles(w, a)) : NULL;
    }
    dual_context *ctxs[3] = {NULL, NULL, NULL};
    dual_program *progs[3] = {NULL, NULL, NULL};
    for (int c = 0; c < 3; ++c) {
      if (!strstr(contexts, names[c])) continue;
      dual_context *ctx = NULL;
      if (dual_context_create(&ctx, devices[c]) != DUAL_SUCCESS ||
          dual_context_set_threads(ctx, threads) != DUAL_SUCCESS ||
          (devices[c] != DUAL_DEVICE_CPU && dual_context_set_tier(ctx, DUAL_TIER_COMPILE) != DUAL_SUCCESS) ||
          dispatch_program(ctx, w, &progs[c]) != DUAL_SUCCESS) {
        printf("%-5s %s context: %s (skipped)\n", w->name, names[c], ctx ? dual_context_last_error(ctx) : "no context");
        dual_context_destroy(&ctx);
        continue;
      }
      ctxs[c] = ctx;
    }
    for (int ib = 0; ib < nb; ++ib) {
      const int64_t B = (int64_t)bs[ib];
      /* two untimed calls on each context (the first may compile a kernel; the CPU context's
       * first gives the reference results), auto_warmup on the AUTO context (its learning at
       * this size: the tries of the other device and of a split's staging threads); the last
       * one's time sets the rounds: enough for each context's calls to take min_time
       * (min_calls .. BENCH_MAX_REPS) */
      int rounds = min_calls, failed[3] = {0, 0, 0};
      double learning = 0.0, slowest = 0.0; /* the AUTO context's untimed calls, all together;
                                              the slowest context's last warm-up call */
      for (int c = 0; c < 3; ++c) {
        if (ctxs[c] == NULL) continue;
        double t = 0.0;
        for (int r = 0; r < (c == 2 ? auto_warmup : 2) && !failed[c]; ++r) {
          dispatch_outputs *o = c == 0 && r == 0 && B <= Bref ? &ref : &got;
          const double t0 = bench_now();
          failed[c] = dispatch_call(ctxs[c], progs[c], w, 0, B, x, p, o) != DUAL_SUCCESS;
          t = bench_now() - t0;
          if (c == 2) learning += t;
        }
        if (t > slowest) slowest = t;
        const int want = t > 0.0 ? (int)ceil(min_time / t) : BENCH_MAX_REPS;
        if (!failed[c] && want > rounds) rounds = want < BENCH_MAX_REPS ? want : BENCH_MAX_REPS;
      }
      /* the rounds: one timed call of each context in turn, all into the same arrays, so that a
       * drift of the machine (clocks, other tenants) and the arrays' placement meet all of them
       * alike; the order turns each round but the last, so that no context always follows the
       * same one (a call after the GPU context's finds the output's lines in the staging
       * threads' caches, one after a CPU call in its own threads': the suspected cause of AUTO's
       * 1.11x at kin B = 1e2 on 2026-11-28, where AUTO ran the CPU engines right after each GPU
       * call); each context's results are checked after its last call, against the CPU
       * context's.  Where calls are short (every context's under LEAD_BELOW_S), each timed call
       * follows an untimed one of its own context, as in a caller's loop: the call before
       * otherwise charges the next one with what it left behind (the rotation has each context
       * after the same other one two rounds in three: AUTO's CPU calls at kin 1e2 after the GPU
       * context's, which leave OpenMP's workers asleep, the CPU context's after AUTO's CPU
       * calls — AUTO measured 4-8 us over the CPU context in every run of 2026-11-28/29) */
      const int lead = slowest < LEAD_BELOW_S;
      double times[3][BENCH_MAX_REPS];
      int ran[3][3] = {{0}};
      for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < 3; ++i) {
          const int c = r == rounds - 1 ? i : (r + i) % 3;
          if (ctxs[c] == NULL || failed[c]) continue;
          if (lead && dispatch_call(ctxs[c], progs[c], w, 0, B, x, p, &got) != DUAL_SUCCESS) {
            failed[c] = 1;
            continue;
          }
          const double t0 = bench_now();
          if (dispatch_call(ctxs[c], progs[c], w, 0, B, x, p, &got) != DUAL_SUCCESS) {
            failed[c] = 1;
            continue;
          }
          times[c][r] = bench_now() - t0;
          const int d = dual_context_last_device(ctxs[c]);
          ran[c][d == DUAL_DEVICE_HYBRID ? 2 : d == DUAL_DEVICE_GPU ? 1 : 0]++;
          if (r == rounds - 1)
            report(w, B, names[c], ctxs[c], times[c], rounds, ran[c], c > 0 && B <= Bref && ctxs[0] != NULL, &ref, &got,
                   csv, &rc);
        }
      if (ctxs[2] != NULL && !failed[2] && (ctxs[0] != NULL || ctxs[1] != NULL)) {
        double best = 0.0;
        for (int c = 0; c < 2; ++c)
          if (ctxs[c] != NULL && !failed[c] && (best == 0.0 || bench_median(times[c], rounds) < best))
            best = bench_median(times[c], rounds);
        printf("%-5s %9lld auto's %d untimed calls (its learning at this size): %.4e s, %.2fx the better device's\n",
               w->name, (long long)B, auto_warmup, learning, learning / (auto_warmup * best));
      }
      for (int c = 0; c < 3; ++c)
        if (failed[c]) {
          printf("%-5s %9lld %-5s failed: %s\n", w->name, (long long)B, names[c], dual_context_last_error(ctxs[c]));
          rc = 1;
        }
    }
    for (int c = 0; c < 3; ++c) dual_program_destroy(&progs[c]), dual_context_destroy(&ctxs[c]);
    free(x), free(p);
    for (int a = 0; a < 3; ++a) free(*rs[a]), free(*gs[a]);
  }
  if (csv) fclose(csv);
  return rc;
}
