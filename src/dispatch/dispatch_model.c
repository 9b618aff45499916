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
 *          its two sides' measured seconds per point (each side slows the other: memory, the
 *          staging threads)
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

static double split_time(const dual_calibration *c, const dual_call_shape *s, int64_t g, int T, int k) {
  const double tg = dual_model_gpu(c, s, g, k), tc = dual_model_cpu(c, s, s->B - g, T - k);
  return (tg > tc ? tg : tc) + c->split_call_s;
}

/* The best split with k of the T threads on the GPU's side: its GPU points in *g, its time. */
static double best_split(const dual_calibration *c, const dual_call_shape *s, int T, int k, int64_t *g) {
  const int64_t q = s->cpu_block > 0 ? s->cpu_block : 1;
  /* the smallest g (whole blocks, each side at least one) where the GPU's side takes at least as
   * long as the CPU's; the best split is there or one block before */
  int64_t lo = 1, hi = (s->B - q) / q; /* g = j * q, j in [lo, hi] */
  while (lo < hi) {
    const int64_t j = lo + (hi - lo) / 2;
    if (dual_model_gpu(c, s, j * q, k) >= dual_model_cpu(c, s, s->B - j * q, T - k)) hi = j;
    else lo = j + 1;
  }
  *g = lo * q;
  double t = split_time(c, s, *g, T, k);
  if (lo > 1) {
    const double t2 = split_time(c, s, (lo - 1) * q, T, k);
    if (t2 < t) t = t2, *g = (lo - 1) * q;
  }
  return t;
}

/* The split of a measured one's sides: g where gpu_call + g pg = cpu_call + (B - g) pc, in whole
 * blocks, each side at least one. */
static double seen_split(const dual_calibration *c, const dual_call_shape *s, const dual_split_seen *m, int64_t *g) {
  const int64_t q = s->cpu_block > 0 ? s->cpu_block : 1, B = s->B;
  const double pg = m->gpu_s, pc = m->cpu_s;
  double x = (c->cpu_call_s - c->gpu_call_s + (double)B * pc) / (pg + pc);
  int64_t j = (int64_t)(x / (double)q + 0.5);
  const int64_t jmax = (B - q) / q;
  j = j < 1 ? 1 : j > jmax ? jmax : j;
  *g = j * q;
  const double tg = c->gpu_call_s + (double)*g * pg, tc = c->cpu_call_s + (double)(B - *g) * pc;
  return (tg > tc ? tg : tc) + c->split_call_s;
}

int dual_split_seen_near(const dual_split_seen *seen, int64_t B) {
  return seen->k > 0 && seen->gpu_s > 0.0 && seen->cpu_s > 0.0 && B <= 4 * seen->B && 4 * B >= seen->B;
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
    const double t = seen_split(c, s, &seen[i], &g);
    if (best_k == 0 || t < tb) tb = t, best = g, best_k = seen[i].k;
  }
  p->split_measured = best_k > 0;
  if (best_k == 0)
    for (int k = 1; k <= (T > 2 ? T / 2 : 1); k *= 2) {
      int64_t g;
      const double t = best_split(c, s, T, k, &g);
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
