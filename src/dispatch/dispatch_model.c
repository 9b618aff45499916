/*
 * dispatch_model.c — the time model and the choice of dispatch_model.h.
 *
 *   CPU    call + ceil(ceil(B / block) / T) * block * per_point * cpu_scale
 *          (threads take whole blocks, so a small batch keeps some of them idle; a batch short of
 *          a large block per thread takes 16-point blocks, as cpu/engine.c does)
 *   GPU    call + (max(copies, kernel) + min(copies, kernel) / chunks) * gpu_scale
 *          copies = B * (in / in_rate + out / out_rate), each rate the calibration's at all
 *          threads or, with k staging threads, k times its one-thread rate where that is less;
 *          kernel = max(one point's latency, B * per_point) (the staging path
 *          overlaps one chunk's copies with another's kernel, so only one chunk's worth of the
 *          smaller part shows)
 *   split  GPU on points [0, g) with k staging threads, CPU on the rest with T - k threads, at
 *          the same time: max(GPU(g), CPU(B - g)) + split_call, g the balance point (both sides
 *          are monotone), k in 1, 2, 4, ... T / 2 the fastest; or, where splits of this call
 *          were measured at a batch within 4x of B, the fastest of them: its k and the balance of
 *          its two sides' measured times, each a line in its points (history.h; each side slows
 *          the other: memory, the staging threads), times the median of what such splits took
 *          over what their sides predicted (a split waits for the longer of two varying sides)
 */
#include "dispatch/dispatch_model.h"

#include <stddef.h>

#include "dualbatch.h"

static double cpu_point(const dual_calibration *c, const dual_call_shape *s) {
  return (s->arith * c->cpu_arith_s + s->special * c->cpu_special_s) * s->cpu_factor;
}

double dual_model_cpu(const dual_calibration *c, const dual_call_shape *s, int64_t B, int threads) {
  if (B <= 0) return 0.0;
  const int64_t T = threads > 0 ? threads : 1;
  int64_t blk = s->cpu_block > 0 ? s->cpu_block : 1;
  if (blk > 16 && B < T * blk) blk = 16;
  const int64_t blocks = (B + blk - 1) / blk, turns = (blocks + T - 1) / T;
  /* the last block may be partial: a thread's share is at most B points */
  const double pts = (double)(turns * blk < B ? turns * blk : B);
  return c->cpu_call_s + pts * cpu_point(c, s) * s->cpu_scale;
}

/* A copy rate with k staging threads: all threads' rate, or k times one thread's if less. */
static double rate(double all, double one, int k, int threads) {
  if (k <= 0 || k >= threads || !(one > 0.0)) return all;
  return k * one < all ? k * one : all;
}

double dual_model_gpu(const dual_calibration *c, const dual_call_shape *s, int64_t B, int staging) {
  if (B <= 0) return 0.0;
  const int t = s->gpu_tier ? 1 : 0;
  const double per = (s->arith * c->gpu_arith_s[t] + s->special * c->gpu_special_s[t]) * s->gpu_factor;
  const double lat = (s->arith * c->gpu_lat_arith_s[t] + s->special * c->gpu_lat_special_s[t]) * s->gpu_factor;
  const double kernel = (double)B * per > lat ? (double)B * per : lat;
  const double in_rate = rate(c->gpu_in_Bps, c->gpu_in_Bps_1, staging, c->threads),
               out_rate = rate(c->gpu_out_Bps, c->gpu_out_Bps_1, staging, c->threads);
  const double copies = (double)B * (s->in_bytes / in_rate + s->out_bytes / out_rate);
  const double chunks = s->gpu_chunk > 0 && B > s->gpu_chunk ? (double)((B + s->gpu_chunk - 1) / s->gpu_chunk) : 1.0;
  const double hi = copies > kernel ? copies : kernel, lo = copies > kernel ? kernel : copies;
  return c->gpu_call_s + (hi + lo / chunks) * s->gpu_scale;
}

/* A split's two sides: the model's with k staging threads (seen NULL), or a measured one's. */
typedef struct split_sides {
  const dual_calibration *c;
  const dual_call_shape *s;
  const dual_split_seen *seen;
  int T, k;
} split_sides;

static void side_times(const split_sides *x, int64_t g, double *tg, double *tc) {
  const dual_calibration *c = x->c;
  if (x->seen != NULL) {
    *tg = dual_history_predict(&x->seen->gpu, c->gpu_call_s, (double)g);
    *tc = dual_history_predict(&x->seen->cpu, c->cpu_call_s, (double)(x->s->B - g));
  } else {
    *tg = dual_model_gpu(c, x->s, g, x->k);
    *tc = dual_model_cpu(c, x->s, x->s->B - g, x->T - x->k);
  }
}

static double split_time(const split_sides *x, int64_t g) {
  double tg, tc;
  side_times(x, g, &tg, &tc);
  return (tg > tc ? tg : tc) + x->c->split_call_s;
}

/* The balanced split: its GPU points in *g, its time.  The GPU's side grows with g and the CPU's
 * falls, so the best g (whole blocks, each side at least one) is the smallest where the GPU's
 * side takes at least as long as the CPU's, or one block before. */
static double balanced(const split_sides *x, int64_t *g) {
  const int64_t q = x->s->cpu_block > 0 ? x->s->cpu_block : 1;
  int64_t lo = 1, hi = (x->s->B - q) / q; /* g = j * q, j in [lo, hi] */
  while (lo < hi) {
    const int64_t j = lo + (hi - lo) / 2;
    double tg, tc;
    side_times(x, j * q, &tg, &tc);
    if (tg >= tc) hi = j;
    else lo = j + 1;
  }
  *g = lo * q;
  double t = split_time(x, *g);
  if (lo > 1) {
    const double t2 = split_time(x, (lo - 1) * q);
    if (t2 < t) t = t2, *g = (lo - 1) * q;
  }
  return t;
}

double dual_split_seen_sides(const dual_calibration *c, const dual_split_seen *seen, int64_t B, int64_t g) {
  dual_call_shape s = {0}; /* side_times reads only its B with `seen` */
  s.B = B;
  const split_sides x = {c, &s, seen, 0, seen->k};
  return split_time(&x, g);
}

double dual_split_seen_time(const dual_calibration *c, const dual_call_shape *s, const dual_split_seen *seen,
                            int64_t *g) {
  const split_sides x = {c, s, seen, 0, seen->k};
  return balanced(&x, g) * dual_ratios_median(&seen->over);
}

int dual_split_seen_near(const dual_split_seen *seen, int64_t B) {
  return seen->k > 0 && seen->gpu.n > 0 && seen->cpu.n > 0 && B <= 4 * seen->B && 4 * B >= seen->B;
}

void dual_dispatch_plan_call(const dual_calibration *c, const dual_call_shape *s, int threads,
                             const dual_split_seen *seen, int nseen, dual_dispatch_plan *p) {
  const int T = threads > 0 ? threads : 1;
  p->t_cpu = dual_model_cpu(c, s, s->B, T);
  p->t_gpu = c->gpu ? dual_model_gpu(c, s, s->B, T) : 0.0;
  p->t_split = 0.0;
  p->gpu_points = 0, p->gpu_threads = 0;
  p->split_points = 0, p->split_threads = 0, p->split_measured = 0;
  if (!c->gpu) {
    p->device = DUAL_DEVICE_CPU;
    return;
  }
  p->device = p->t_gpu < p->t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  const int64_t q = s->cpu_block > 0 ? s->cpu_block : 1;
  if (T < 2 || s->B < 2 * q) return;
  int64_t best = 0;
  int best_k = 0;
  double tb = 0.0;
  for (int i = 0; seen != NULL && i < nseen; ++i) {
    if (seen[i].k >= T || !dual_split_seen_near(&seen[i], s->B)) continue;
    int64_t g;
    const double t = dual_split_seen_time(c, s, &seen[i], &g);
    if (best_k == 0 || t < tb) tb = t, best = g, best_k = seen[i].k;
  }
  p->split_measured = best_k > 0;
  if (best_k == 0)
    for (int k = 1; k <= (T > 2 ? T / 2 : 1); k *= 2) {
      int64_t g;
      const split_sides x = {c, s, NULL, T, k};
      const double t = balanced(&x, &g);
      if (best_k == 0 || t < tb) tb = t, best = g, best_k = k;
    }
  p->t_split = tb;
  p->split_points = best, p->split_threads = best_k;
  const double single = p->t_gpu < p->t_cpu ? p->t_gpu : p->t_cpu;
  const double gain = p->split_measured ? DUAL_PLAN_MIN_MEASURED_SPLIT_GAIN_PCT : DUAL_PLAN_MIN_SPLIT_GAIN_PCT;
  if (tb * (100.0 + gain) < single * 100.0) {
    p->device = DUAL_DEVICE_HYBRID;
    p->gpu_points = best, p->gpu_threads = best_k;
  }
}
