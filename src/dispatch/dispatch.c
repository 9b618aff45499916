/*
 * dispatch.c — dual_dispatch_auto (dispatch.h).  What a program's calls measured is kept per
 * context for its last DUAL_MEMO_SLOTS (program, product) pairs: on each device alone, its calls
 * against the model (history.h: from two batch sizes, the program's own fixed cost and per-point
 * rate; a lone slow call held back), a device's first run not counted (it may have compiled the
 * GPU's kernel, or faulted in the CPU's workspaces), nor a run that allocated the GPU's buffers
 * or ran while a kernel compiled in the background; and per count of staging threads its last
 * split's seconds per point on each side (learn_split), which stand for the model's split from
 * then on: the two sides slow each other (host memory, the staging threads the GPU's side takes
 * from the CPU's), by an amount the calibration does not see.  A device the plan passed over and
 * never measured near this batch size is tried where the model puts it near (explore), and a
 * measured split near the best its neighbouring counts of staging threads (explore_k).
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/dispatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "dispatch/clock.h"
#include "dispatch/calibration.h"
#include "dispatch/call_shape.h"
#include "dispatch/history.h"
#include "gpu.h"
#include "program.h"

enum { DUAL_MEMO_SLOTS = 32, DUAL_SPLIT_KS = 8 /* k = 1, 2, 4, ... 128 */ };

typedef struct memo_entry {
  uint64_t uid;   /* the program's (0: free) */
  int mode, reverse, sgrad;
  dual_device_history seen[2]; /* [0] CPU, [1] GPU: calls alone */
  double vlo[2], vhi[2]; /* the least and most varying part of the calls kept on each */
  int runs[2];      /* runs on each device (a split's GPU side counts) */
  int tries[2];     /* runs on d the plan did not choose since d last kept a call (explore) */
  dual_split_seen split[DUAL_SPLIT_KS]; /* [log2 k]: the last split measured with k staging threads */
  int64_t split_tries_B[DUAL_SPLIT_KS]; /* [log2 k]: the batch of the last tried k (explore_k) */
  int split_tries[DUAL_SPLIT_KS];       /* and the tries near that batch */
} memo_entry;

struct dual_dispatch_memo {
  memo_entry e[DUAL_MEMO_SLOTS];
  int next; /* the slot the next new pair takes (round robin) */
};

void dual_dispatch_memo_free(struct dual_dispatch_memo *m) { free(m); }

static memo_entry *memo_find(dual_context *ctx, const dual_job *job) {
  if (ctx->memo == NULL && (ctx->memo = calloc(1, sizeof *ctx->memo)) == NULL) return NULL;
  struct dual_dispatch_memo *m = ctx->memo;
  const int sgrad = job->samples > 0;
  for (int i = 0; i < DUAL_MEMO_SLOTS; ++i) {
    memo_entry *e = &m->e[i];
    if (e->uid == job->prog->uid && e->mode == job->mode && e->reverse == job->reverse && e->sgrad == sgrad)
      return e;
  }
  memo_entry *e = &m->e[m->next];
  m->next = (m->next + 1) % DUAL_MEMO_SLOTS;
  memset(e, 0, sizeof *e);
  e->uid = job->prog->uid, e->mode = job->mode, e->reverse = job->reverse, e->sgrad = sgrad;
  return e;
}

static int log2_k(int k) {
  int i = 0;
  while (k > 1 && i < DUAL_SPLIT_KS - 1) k /= 2, ++i;
  return i;
}

/* The model's varying part of the shape's B points at unit scale on device d (the CPU with
 * `threads` threads, the GPU staged by them). */
static double varying(const dual_calibration *c, const dual_call_shape *s, int d, int64_t B, int threads) {
  dual_call_shape u = *s;
  u.cpu_scale = u.gpu_scale = 1.0;
  return d ? dual_model_gpu(c, &u, B, threads) - c->gpu_call_s : dual_model_cpu(c, &u, B, threads) - c->cpu_call_s;
}

/* Keep a run of B points on device d that took t seconds: not a device's first, nor one while a
 * kernel compiles in the background (it takes CPU time from the call). */
static void learn(memo_entry *e, const dual_calibration *c, const dual_call_shape *s, int d, int64_t B,
                  int threads, double t) {
  if (e == NULL || B <= 0 || !(t > 0.0)) return;
  if (e->runs[d]++ == 0 || dual_gpu_compiling()) return;
  const double v = varying(c, s, d, B, threads);
  if (!dual_history_add(&e->seen[d], d ? c->gpu_call_s : c->cpu_call_s, v, t)) return;
  if (e->vhi[d] == 0.0 || v < e->vlo[d]) e->vlo[d] = v;
  if (v > e->vhi[d]) e->vhi[d] = v;
  e->tries[d] = 0;
}

/* The shape's scales from the program's history: its predicted time at B over the model's. */
static void scales_from_history(const memo_entry *e, const dual_calibration *c, dual_call_shape *s, int threads) {
  for (int d = 0; d < 2 && e != NULL; ++d) {
    if (e->seen[d].n == 0) continue;
    const double fixed = d ? c->gpu_call_s : c->cpu_call_s, v = varying(c, s, d, s->B, threads);
    const double x = v > 0.0 ? (dual_history_predict(&e->seen[d], fixed, v) - fixed) / v : 1.0;
    *(d ? &s->gpu_scale : &s->cpu_scale) = x > 1e-6 ? x : 1e-6;
  }
}

/* The device the plan passed over is tried where it kept no call of a size near this one (its
 * kept calls' varying parts all over DUAL_EXPLORE_REACH x away) and the model, before any
 * measurement, has it within DUAL_EXPLORE_FACTOR of the chosen one: a program's time scales
 * with the model's only roughly (a kernel's latency at small batches, the copies at large ones),
 * and a device never run at a size is never measured there.  At most DUAL_EXPLORE_RUNS tries
 * until it keeps a call (a try that allocated the GPU's buffers, or was held back as slow, is
 * not kept). */
enum { DUAL_EXPLORE_FACTOR = 4, DUAL_EXPLORE_REACH = 8, DUAL_EXPLORE_RUNS = 3 };
static int explore(const memo_entry *e, const dual_calibration *c, const dual_call_shape *s, int threads, int chosen) {
  const int other = chosen == DUAL_DEVICE_GPU ? 0 : 1;
  if (e == NULL || e->tries[other] >= DUAL_EXPLORE_RUNS) return 0;
  const double v = varying(c, s, other, s->B, threads);
  if (e->seen[other].n > 0 && v <= DUAL_EXPLORE_REACH * e->vhi[other] && DUAL_EXPLORE_REACH * v >= e->vlo[other])
    return 0;
  dual_call_shape u = *s;
  u.cpu_scale = u.gpu_scale = 1.0;
  const double tc = dual_model_cpu(c, &u, u.B, threads), tg = dual_model_gpu(c, &u, u.B, threads);
  return other == 1 ? tg < DUAL_EXPLORE_FACTOR * tc : tc < DUAL_EXPLORE_FACTOR * tg;
}

/* Staging threads to try next: where the best split is a measured one within
 * DUAL_SPLIT_EXPLORE_PCT percent of the better device alone, its k's neighbour (twice, then
 * half) not measured near this batch and not yet tried DUAL_SPLIT_TRIES times near it; else 0.
 * The model's k is a guess (the staging threads' rate, the two sides slowing each other): on the
 * device machine (16 threads, an H200) hand-made splits were fastest with k = 4 for ba, kin and
 * hess, where k = 1 was up to 1.5x the better device alone (bench/probe_split.c). */
enum { DUAL_SPLIT_EXPLORE_PCT = 60, DUAL_SPLIT_TRIES = 1 };
static int explore_k(memo_entry *e, const dual_dispatch_plan *p, int64_t B, int T) {
  if (e == NULL || !p->split_measured) return 0;
  const double single = p->t_gpu < p->t_cpu ? p->t_gpu : p->t_cpu;
  if (p->t_split * 100.0 > single * (100.0 + DUAL_SPLIT_EXPLORE_PCT)) return 0;
  const int ks[2] = {2 * p->split_threads, p->split_threads / 2};
  for (int i = 0; i < 2; ++i) {
    const int k = ks[i], j = log2_k(k);
    if (k < 1 || k > T / 2 || k >= T || (1 << j) != k || dual_split_seen_near(&e->split[j], B)) continue;
    const int64_t tb = e->split_tries_B[j];
    if (!(B <= 4 * tb && 4 * B >= tb)) e->split_tries_B[j] = B, e->split_tries[j] = 0;
    if (e->split_tries[j] >= DUAL_SPLIT_TRIES) continue;
    e->split_tries[j]++;
    return k;
  }
  return 0;
}

/* Keep a split's measured sides (after the GPU's first run: it may have compiled; not while a
 * kernel compiles in the background), moved halfway in log space from the last one of the same
 * k. */
static void learn_split(memo_entry *e, const dual_calibration *c, int64_t B, int64_t g, int k, double tg,
                        double tc) {
  if (e == NULL || g <= 0 || g >= B) return;
  if (e->runs[1]++ == 0 || dual_gpu_compiling()) return;
  const double pg = dual_history_over(c->gpu_call_s, tg) / (double)g;
  const double pc = dual_history_over(c->cpu_call_s, tc) / (double)(B - g);
  if (!(pg > 0.0) || !(pc > 0.0)) return;
  dual_split_seen *m = &e->split[log2_k(k)];
  if (m->k == k) m->gpu_s = sqrt(m->gpu_s * pg), m->cpu_s = sqrt(m->cpu_s * pc);
  else m->k = k, m->gpu_s = pg, m->cpu_s = pc;
  m->B = B;
}

/* Built with -DDUAL_DISPATCH_TRACE: each plan and what it measured, on stderr (for tuning the
 * model on a new machine; never in a release build). */
static void trace(const dual_dispatch_plan *p, const dual_call_shape *s, int64_t B, double tg, double tc) {
#ifdef DUAL_DISPATCH_TRACE
  fprintf(stderr, "dispatch B %lld: model cpu %.3e gpu %.3e split %.3e (g %lld k %d) scales %.3g %.3g -> %s: gpu %.3e s cpu %.3e s\n",
          (long long)B, p->t_cpu, p->t_gpu, p->t_split, (long long)p->gpu_points, p->gpu_threads, s->cpu_scale,
          s->gpu_scale, p->device == DUAL_DEVICE_HYBRID ? "split" : p->device == DUAL_DEVICE_GPU ? "gpu" : "cpu", tg, tc);
#else
  (void)p, (void)s, (void)B, (void)tg, (void)tc;
#endif
}

void dual_dispatch_record_single(dual_context *ctx, int64_t B) {
  ctx->last_split[0] = ctx->last_device == DUAL_DEVICE_GPU ? B : 0;
  ctx->last_split[1] = B - ctx->last_split[0];
}

int dual_dispatch_auto(dual_context *ctx, const dual_job *job, const dual_dispatch_engines *e) {
  const int64_t B = job->b->count;
  const int threads = job->threads > 0 ? job->threads : 1;
  dual_calibration c;
  if (dual_calibration_get(ctx, threads, 0, &c) != DUAL_SUCCESS || !c.gpu) {
    /* no figures: the GPU first, as before the model */
    dual_clear_error(ctx);
    const int st = e->gpu(ctx, job);
    dual_dispatch_record_single(ctx, B);
    return st;
  }
  dual_call_shape s;
  dual_call_shape_of(job, e->cpu_width, e->gpu_tier, &s);
  memo_entry *m = memo_find(ctx, job);
  scales_from_history(m, &c, &s, threads);
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, threads, m != NULL ? m->split : NULL, m != NULL ? DUAL_SPLIT_KS : 0, &p);
  const int splits = ctx->knobs[DUAL_KNOB_DISPATCH] != 2;
  const int k_next = splits ? explore_k(m, &p, B, threads) : 0;
  if (k_next > 0) {
    p.device = DUAL_DEVICE_HYBRID;
    p.gpu_points = p.split_points, p.gpu_threads = k_next;
  }
  if (p.device == DUAL_DEVICE_HYBRID && !splits) p.device = p.t_gpu < p.t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  if (p.device != DUAL_DEVICE_HYBRID && explore(m, &c, &s, threads, p.device)) {
    p.device = p.device == DUAL_DEVICE_GPU ? DUAL_DEVICE_CPU : DUAL_DEVICE_GPU;
    m->tries[p.device == DUAL_DEVICE_GPU ? 1 : 0]++;
  }
  int st;
  /* a run that allocated the GPU's buffers (a larger batch than before) is not learned from */
  const uint64_t allocs = dual_gpu_allocations(ctx);
  if (p.device == DUAL_DEVICE_HYBRID) {
    int sg, sc;
    double tg, tc;
    const int k = p.gpu_threads;
    st = dual_run_split(ctx, job, p.gpu_points, e->gpu, e->cpu, k, threads - k, &sg, &sc, &tg, &tc);
    if (st == DUAL_SUCCESS) {
      const int gpu_ran = ctx->last_device == DUAL_DEVICE_GPU;
      if (gpu_ran && dual_gpu_allocations(ctx) == allocs) learn_split(m, &c, B, p.gpu_points, k, tg, tc);
      trace(&p, &s, B, tg, tc);
      ctx->last_device = gpu_ran ? DUAL_DEVICE_HYBRID : DUAL_DEVICE_CPU;
      ctx->last_split[0] = gpu_ran ? p.gpu_points : 0, ctx->last_split[1] = B - ctx->last_split[0];
      return st;
    }
    if (tg >= 0.0) return st; /* a side ran and failed */
    /* no split thread: the faster device alone */
    dual_clear_error(ctx);
    p.device = p.t_gpu < p.t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  }
  const double t0 = dual_dispatch_now();
  double t = 0.0;
  if (p.device == DUAL_DEVICE_GPU) {
    st = e->gpu(ctx, job);
    t = dual_dispatch_now() - t0;
    if (st == DUAL_SUCCESS && ctx->last_device == DUAL_DEVICE_GPU && dual_gpu_allocations(ctx) == allocs)
      learn(m, &c, &s, 1, B, threads, t);
  } else {
    st = e->cpu(ctx, job);
    t = dual_dispatch_now() - t0;
    if (st == DUAL_SUCCESS) {
      learn(m, &c, &s, 0, B, threads, t);
      ctx->last_device = DUAL_DEVICE_CPU, ctx->last_tier = DUAL_TIER_INTERPRET;
    }
  }
  trace(&p, &s, B, p.device == DUAL_DEVICE_GPU ? t : 0.0, p.device == DUAL_DEVICE_CPU ? t : 0.0);
  if (st == DUAL_SUCCESS) dual_dispatch_record_single(ctx, B);
  return st;
}
