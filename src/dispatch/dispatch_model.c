/*
 * dispatch_model.c — the time model and the choice of dispatch_model.h.
 *
 *   CPU    call + ceil(ceil(B / block) / T) * block * per_point * cpu_scale
 *          (threads take whole blocks, so a small batch keeps some of them idle)
 *   GPU    call + max(copies, kernel) + min(copies, kernel) / chunks
 *          copies = B * (in / in_Bps + out / out_Bps); kernel = max(one point's latency,
 *          B * per_point) * gpu_scale (the staging path overlaps one chunk's copies with
 *          another's kernel, so only one chunk's worth of the smaller part shows)
 *   split  GPU on points [0, g), CPU on the rest with T - 1 threads, at the same time:
 *          max(GPU(g), CPU(B - g)) + split_call, g the balance point (both sides are monotone)
 */
#include "dispatch/dispatch_model.h"

#include "dualbatch.h"

static double cpu_point(const dual_calibration *c, const dual_call_shape *s) {
  return (s->arith * c->cpu_arith_s + s->special * c->cpu_special_s) * s->cpu_factor;
}

double dual_model_cpu(const dual_calibration *c, const dual_call_shape *s, int64_t B, int threads) {
  if (B <= 0) return 0.0;
  const int64_t T = threads > 0 ? threads : 1, blk = s->cpu_block > 0 ? s->cpu_block : 1;
  const int64_t blocks = (B + blk - 1) / blk, turns = (blocks + T - 1) / T;
  /* the last block may be partial: a thread's share is at most B points */
  const double pts = (double)(turns * blk < B ? turns * blk : B);
  return c->cpu_call_s + pts * cpu_point(c, s) * s->cpu_scale;
}

double dual_model_gpu(const dual_calibration *c, const dual_call_shape *s, int64_t B) {
  if (B <= 0) return 0.0;
  const int t = s->gpu_tier ? 1 : 0;
  const double per = (s->arith * c->gpu_arith_s[t] + s->special * c->gpu_special_s[t]) * s->gpu_factor;
  const double lat = (s->arith * c->gpu_lat_arith_s[t] + s->special * c->gpu_lat_special_s[t]) * s->gpu_factor;
  const double kernel = ((double)B * per > lat ? (double)B * per : lat) * s->gpu_scale;
  const double copies = (double)B * (s->in_bytes / c->gpu_in_Bps + s->out_bytes / c->gpu_out_Bps);
  const double chunks = s->gpu_chunk > 0 && B > s->gpu_chunk ? (double)((B + s->gpu_chunk - 1) / s->gpu_chunk) : 1.0;
  const double hi = copies > kernel ? copies : kernel, lo = copies > kernel ? kernel : copies;
  return c->gpu_call_s + hi + lo / chunks;
}

static double split_time(const dual_calibration *c, const dual_call_shape *s, int64_t g, int cpu_threads) {
  const double tg = dual_model_gpu(c, s, g), tc = dual_model_cpu(c, s, s->B - g, cpu_threads);
  return (tg > tc ? tg : tc) + c->split_call_s;
}

void dual_dispatch_plan_call(const dual_calibration *c, const dual_call_shape *s, int threads,
                             dual_dispatch_plan *p) {
  const int T = threads > 0 ? threads : 1;
  p->t_cpu = dual_model_cpu(c, s, s->B, T);
  p->t_gpu = c->gpu ? dual_model_gpu(c, s, s->B) : 0.0;
  p->t_split = 0.0;
  p->gpu_points = 0;
  if (!c->gpu) {
    p->device = DUAL_DEVICE_CPU;
    return;
  }
  p->device = p->t_gpu < p->t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  const int64_t q = s->cpu_block > 0 ? s->cpu_block : 1;
  if (T < 2 || s->B < 2 * q) return;
  /* the smallest g (whole blocks, each side at least one) where the GPU's side takes at least as
   * long as the CPU's; the best split is there or one block before */
  int64_t lo = 1, hi = (s->B - q) / q; /* g = k * q, k in [lo, hi] */
  while (lo < hi) {
    const int64_t k = lo + (hi - lo) / 2;
    if (dual_model_gpu(c, s, k * q) >= dual_model_cpu(c, s, s->B - k * q, T - 1)) hi = k;
    else lo = k + 1;
  }
  int64_t best = lo * q;
  double tb = split_time(c, s, best, T - 1);
  if (lo > 1) {
    const double t2 = split_time(c, s, (lo - 1) * q, T - 1);
    if (t2 < tb) tb = t2, best = (lo - 1) * q;
  }
  p->t_split = tb;
  const double single = p->t_gpu < p->t_cpu ? p->t_gpu : p->t_cpu;
  if (tb * (100.0 + DUAL_PLAN_MIN_SPLIT_GAIN_PCT) < single * 100.0) {
    p->device = DUAL_DEVICE_HYBRID;
    p->gpu_points = best;
  }
}
