/*
 * probe_split.c — what a split of a host-array call between the GPU and the CPU can reach on
 * this machine (issue 20, hybrid split), apart from the library's model: the call's first g
 * points on a GPU context of k threads (its staging threads) in one thread while a CPU context
 * of T - k threads takes the rest in another, for k in 1, 2, 4, ... T / 2 and g a tenth, two
 * tenths ... of the batch; against the GPU and the CPU alone with T threads.  Each figure is
 * the median of --reps calls (each call's wall time, both sides and the thread's hand-over);
 * each side's own time shows how much the two slow each other.  The library's split
 * (dispatch/split.c) runs each side on a thread of its own, both kept; with --library, each row
 * also gives the same split with its GPU side on a thread kept across calls (each side's time in
 * brackets) and made by the library (an AUTO context with DUAL_KNOB_SPLIT_SHARE and _THREADS: one
 * context, its split threads kept), so that a fresh thread, a kept one and the library's path can
 * be told apart.
 *
 *   dualbatch_probe_split [--workload ba|kin|hess|all] [--batches 1e4,...] [--threads T] [--reps R]
 *                         [--library]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench_host.h"
#include "dispatch_workloads.h"

typedef struct side {
  dual_context *ctx;
  const dual_program *prog;
  const dispatch_workload *w;
  int64_t first, count;
  const double *x, *p;
  const dispatch_outputs *o;
  int st;
  double secs;
} side;

static void *run_side(void *arg) {
  side *s = arg;
  const double t0 = bench_now();
  s->st = s->count > 0 ? dispatch_call(s->ctx, s->prog, s->w, s->first, s->count, s->x, s->p, s->o) : DUAL_SUCCESS;
  s->secs = bench_now() - t0;
  return NULL;
}

/* A thread kept across split calls (as the library's split threads are), its OpenMP team with it. */
static struct kept {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  side *work;
  int busy, started;
} kept = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *kept_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&kept.mu);
  for (;;) {
    while (kept.work == NULL) pthread_cond_wait(&kept.cv, &kept.mu);
    side *s = kept.work;
    kept.work = NULL;
    pthread_mutex_unlock(&kept.mu);
    run_side(s);
    pthread_mutex_lock(&kept.mu);
    kept.busy = 0;
    pthread_cond_broadcast(&kept.cv);
  }
  return NULL;
}

/* One split call: the GPU side on its own thread (a new one, or with `keep` the kept one), the
 * CPU side on this one.  Wall seconds, each side's in *tg, *tc; negative when a side failed. */
static double split_call(side *g, side *c, int keep, double *tg, double *tc) {
  const double t0 = bench_now();
  pthread_t th;
  if (keep) {
    if (!kept.started && pthread_create(&kept.th, NULL, kept_main, NULL) != 0) return -1.0;
    kept.started = 1;
    pthread_mutex_lock(&kept.mu);
    kept.work = g, kept.busy = 1;
    pthread_cond_broadcast(&kept.cv);
    pthread_mutex_unlock(&kept.mu);
  } else if (pthread_create(&th, NULL, run_side, g) != 0) {
    return -1.0;
  }
  run_side(c);
  if (keep) {
    pthread_mutex_lock(&kept.mu);
    while (kept.busy) pthread_cond_wait(&kept.cv, &kept.mu);
    pthread_mutex_unlock(&kept.mu);
  } else {
    pthread_join(th, NULL);
  }
  const double t = bench_now() - t0;
  *tg = g->secs, *tc = c->secs;
  return g->st == DUAL_SUCCESS && c->st == DUAL_SUCCESS ? t : -1.0;
}

static dual_context *context(int device, int threads, const dispatch_workload *w, dual_program **prog) {
  dual_context *ctx = NULL;
  if (dual_context_create(&ctx, device) != DUAL_SUCCESS || dual_context_set_threads(ctx, threads) != DUAL_SUCCESS ||
      (device != DUAL_DEVICE_CPU && dual_context_set_tier(ctx, DUAL_TIER_COMPILE) != DUAL_SUCCESS) ||
      dispatch_program(ctx, w, prog) != DUAL_SUCCESS) {
    fprintf(stderr, "probe_split: %s\n", ctx ? dual_context_last_error(ctx) : "no context");
    dual_context_destroy(&ctx);
    return NULL;
  }
  return ctx;
}

int main(int argc, char **argv) {
  const char *which = "all", *batches = "1e4,1e5,1e6";
  int T = omp_get_max_threads(), reps = 7, library = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--workload") && v) which = v, ++i;
    else if (!strcmp(a, "--batches") && v) batches = v, ++i;
    else if (!strcmp(a, "--threads") && v) T = atoi(v), ++i;
    else if (!strcmp(a, "--reps") && v) reps = atoi(v), ++i;
    else if (!strcmp(a, "--library")) library = 1;
    else {
      fprintf(stderr, "usage: dualbatch_probe_split [--workload ba|kin|hess|all] [--batches 1e4,...] "
                      "[--threads T] [--reps R] [--library]\n");
      return 2;
    }
  }
  double bs[16];
  int64_t Bmax = 0;
  const int nb = bench_parse_batches(batches, bs, 16, &Bmax);
  if (nb <= 0 || T < 2 || reps < 1 || reps > BENCH_MAX_REPS) {
    fprintf(stderr, "probe_split: bad --batches, --threads (at least 2) or --reps\n");
    return 2;
  }
  printf("# probe_split: %d threads, median of %d calls; split: GPU side k threads, CPU side %d - k\n", T, reps, T);
  int rc = 0;
  for (int iw = 0; iw < 3; ++iw) {
    const dispatch_workload *w = &dispatch_workloads[iw];
    if (strcmp(which, "all") && strcmp(which, w->name)) continue;
    double *x = bench_xmalloc(sizeof(double) * (size_t)Bmax * (size_t)w->n);
    double *p = w->np ? bench_xmalloc(sizeof(double) * (size_t)Bmax * (size_t)w->np) : NULL;
    dispatch_points(w, Bmax, x, p);
    dispatch_outputs o = {NULL, NULL, NULL};
    o.y = bench_xmalloc(sizeof(double) * (size_t)Bmax * dispatch_out_doubles(w, 0));
    o.J = bench_xmalloc(sizeof(double) * (size_t)Bmax * dispatch_out_doubles(w, 1));
    if (w->hessian) o.H = bench_xmalloc(sizeof(double) * (size_t)Bmax * dispatch_out_doubles(w, 2));
    /* contexts: [0] the CPU with T threads, [1] the GPU with T, then per k the GPU with k and the
     * CPU with T - k */
    enum { MAXK = 8 };
    dual_context *ctx[3 + 2 * MAXK] = {NULL}; /* [2 + 2 MAXK]: the AUTO context (--library) */
    dual_program *prog[3 + 2 * MAXK] = {NULL};
    const int lib = 2 + 2 * MAXK;
    int ks[MAXK], nk = 0;
    for (int k = 1; k <= T / 2 && nk < MAXK; k *= 2) ks[nk++] = k;
    int ok = (ctx[0] = context(DUAL_DEVICE_CPU, T, w, &prog[0])) && (ctx[1] = context(DUAL_DEVICE_GPU, T, w, &prog[1]));
    for (int j = 0; j < nk && ok; ++j)
      ok = (ctx[2 + 2 * j] = context(DUAL_DEVICE_GPU, ks[j], w, &prog[2 + 2 * j])) &&
           (ctx[3 + 2 * j] = context(DUAL_DEVICE_CPU, T - ks[j], w, &prog[3 + 2 * j]));
    if (ok && library) ok = (ctx[lib] = context(DUAL_DEVICE_AUTO, T, w, &prog[lib])) != NULL;
    for (int ib = 0; ib < nb && ok; ++ib) {
      const int64_t B = (int64_t)bs[ib];
      /* warm-ups: every context once over the whole batch (kernels, buffers, workspaces) */
      for (int c = 0; c < 2 + 2 * nk && ok; ++c)
        ok = dispatch_call(ctx[c], prog[c], w, 0, B, x, p, &o) == DUAL_SUCCESS;
      for (int r = 0; r < 2 && ok && library; ++r) /* AUTO's: its calibration, a split's thread */
        ok = dual_context_set_knob(ctx[lib], DUAL_KNOB_SPLIT_SHARE, 500) == DUAL_SUCCESS &&
             dispatch_call(ctx[lib], prog[lib], w, 0, B, x, p, &o) == DUAL_SUCCESS;
      if (!ok) break;
      double t[BENCH_MAX_REPS], single[2];
      for (int c = 0; c < 2; ++c) {
        for (int r = 0; r < reps; ++r) {
          const double t0 = bench_now();
          ok = ok && dispatch_call(ctx[c], prog[c], w, 0, B, x, p, &o) == DUAL_SUCCESS;
          t[r] = bench_now() - t0;
        }
        single[c] = bench_median(t, reps);
      }
      const double best1 = single[0] < single[1] ? single[0] : single[1];
      printf("%-5s %9lld  CPU %.4e s  GPU %.4e s\n", w->name, (long long)B, single[0], single[1]);
      double best = 0.0;
      int best_k = 0, best_f = 0;
      for (int j = 0; j < nk && ok; ++j)
        for (int f = 1; f <= 9 && ok; ++f) {
          const int64_t g = B * f / 10;
          side gs = {ctx[2 + 2 * j], prog[2 + 2 * j], w, 0, g, x, p, &o, 0, 0.0};
          side cs = {ctx[3 + 2 * j], prog[3 + 2 * j], w, g, B - g, x, p, &o, 0, 0.0};
          double tw[BENCH_MAX_REPS], tgs[BENCH_MAX_REPS], tcs[BENCH_MAX_REPS];
          for (int r = 0; r < reps && ok; ++r) ok = (tw[r] = split_call(&gs, &cs, 0, &tgs[r], &tcs[r])) > 0.0;
          if (!ok) break;
          const double m = bench_median(tw, reps);
          char libs[192] = "";
          if (library) {
            /* the same contexts with a kept thread, then the library's path */
            double kw[BENCH_MAX_REPS], kg[BENCH_MAX_REPS], kc[BENCH_MAX_REPS];
            for (int r = 0; r < reps && ok; ++r) ok = (kw[r] = split_call(&gs, &cs, 1, &kg[r], &kc[r])) > 0.0;
            ok = ok && dual_context_set_knob(ctx[lib], DUAL_KNOB_SPLIT_SHARE, 100 * f) == DUAL_SUCCESS &&
                 dual_context_set_knob(ctx[lib], DUAL_KNOB_SPLIT_THREADS, ks[j]) == DUAL_SUCCESS;
            for (int r = 0; r < reps && ok; ++r) {
              const double t0 = bench_now();
              ok = dispatch_call(ctx[lib], prog[lib], w, 0, B, x, p, &o) == DUAL_SUCCESS &&
                   dual_context_last_device(ctx[lib]) == DUAL_DEVICE_HYBRID;
              tw[r] = bench_now() - t0;
            }
            if (!ok) break;
            snprintf(libs, sizeof libs, "; kept thread %.4e s (%.4e, %.4e); the library's %.4e s", bench_median(kw, reps),
                     bench_median(kg, reps), bench_median(kc, reps), bench_median(tw, reps));
          }
          printf("%-5s %9lld  k %2d  GPU share %.1f: %.4e s (GPU side %.4e s, CPU side %.4e s)  %.2fx the better alone%s\n",
                 w->name, (long long)B, ks[j], f / 10.0, m, bench_median(tgs, reps), bench_median(tcs, reps), m / best1,
                 libs);
          if (best_k == 0 || m < best) best = m, best_k = ks[j], best_f = f;
        }
      if (ok)
        printf("%-5s %9lld  best split: k %d, GPU share %.1f, %.4e s = %.2fx the better device alone (%s)\n\n", w->name,
               (long long)B, best_k, best_f / 10.0, best, best / best1, single[0] < single[1] ? "CPU" : "GPU");
      fflush(stdout);
    }
    if (!ok) {
      printf("%-5s failed: %s\n", w->name, "a call failed (see stderr)");
      for (int c = 0; c <= lib; ++c)
        if (ctx[c]) fprintf(stderr, "  context %d: %s\n", c, dual_context_last_error(ctx[c]));
      rc = 1;
    }
    for (int c = 0; c <= lib; ++c) dual_program_destroy(&prog[c]), dual_context_destroy(&ctx[c]);
    free(x), free(p), free(o.y), free(o.J), free(o.H);
  }
  return rc;
}
