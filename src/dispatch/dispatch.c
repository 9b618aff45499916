/*
 * dispatch.c — dual_dispatch_auto (dispatch.h).  What a program's calls measured is kept per
 * context for its last DUAL_MEMO_SLOTS (program, product) pairs: on each device alone, its calls
 * against the model (history.h: from two batch sizes, the program's own fixed cost and per-point
 * rate; a lone slow call held back), a device's first run not counted (it may have compiled the
 * GPU's kernel, or faulted in the CPU's workspaces), nor a run that allocated the GPU's buffers,
 * ran while a kernel compiled in the background or ran another GPU tier than the one modelled
 * (the GPU's figures are of one tier, forgotten when it changes: gpu_tier_is); and per count of
 * staging threads its splits' sides, each a history in its points, with the splits' times over
 * what the sides predicted (learn_split), which stand for the model's split from then on: the
 * two sides slow each other (host memory, the staging threads the GPU's side takes from the
 * CPU's), by an amount the calibration does not see.  A device the plan passed over and
 * never measured near this batch size is tried where the model puts it near (explore), a
 * measured split near the best its neighbouring counts of staging threads (explore_k), and what
 * the plan passes over but not by far, measured before, is run again now and then (retry).
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/dispatch.h"

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
  double arith, special; /* the program's instructions by kind (dual_call_shape_count) */
  dual_device_history seen[2]; /* [0] CPU, [1] GPU: calls alone */
  double vlo[2], vhi[2]; /* the least and most varying part of the calls kept on each */
  int runs[2];      /* runs on each device (a split's GPU side counts) */
  int tries[2];     /* runs on d the plan did not choose since d last kept a call (explore) */
  dual_split_seen split[DUAL_SPLIT_KS]; /* [log2 k]: the last split measured with k staging threads */
  int64_t split_tries_B[DUAL_SPLIT_KS]; /* [log2 k]: the batch of the last tried k (explore_k) */
  int split_tries[DUAL_SPLIT_KS];       /* and the tries near that batch */
  int64_t calls;                          /* AUTO's calls of the pair */
  int64_t stamp[2 + DUAL_SPLIT_KS];       /* the call that last ran each choice (choice_of) */
  int last_choice;                        /* the plan's choice at the last call */
  int gpu_tier;                           /* the GPU tier its GPU figures are of (-1: none yet) */
  int retry_every, retry_wait;            /* retry's spacing and the calls left until the next */
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
  e->gpu_tier = -1;
  dual_call_shape_count(job->prog, &e->arith, &e->special);
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

/* The GPU's figures of a program are of one tier: when the GPU would run the other (the compiled
 * kernel came out of the background compile, or the tier was set), those of the tier before are
 * forgotten (its calls alone and its splits; the new tier's first call is not learned from: it
 * may load the kernel). */
static void gpu_tier_is(memo_entry *e, int tier) {
  if (e == NULL || e->gpu_tier == tier) return;
  if (e->gpu_tier >= 0) {
    memset(&e->seen[1], 0, sizeof e->seen[1]);
    e->vlo[1] = e->vhi[1] = 0.0, e->runs[1] = e->tries[1] = 0;
    memset(e->split, 0, sizeof e->split);
    memset(e->split_tries_B, 0, sizeof e->split_tries_B), memset(e->split_tries, 0, sizeof e->split_tries);
  }
  e->gpu_tier = tier;
}

/* 1 when the GPU's run was of the tier its figures are of (a call that began before the
 * background compile ended runs the interpreter). */
static int tier_ran(const dual_context *ctx, const dual_call_shape *s) {
  return ctx->last_tier == (s->gpu_tier ? DUAL_TIER_COMPILE : DUAL_TIER_INTERPRET);
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
/* 1 when device d (0 the CPU, 1 the GPU) is to be tried at this size: no call kept near it and
 * fewer than DUAL_EXPLORE_RUNS tries since its last kept call. */
static int unmeasured(const memo_entry *e, const dual_calibration *c, const dual_call_shape *s, int threads, int d) {
  if (e == NULL || e->tries[d] >= DUAL_EXPLORE_RUNS) return 0;
  const double v = varying(c, s, d, s->B, threads);
  return !(e->seen[d].n > 0 && v <= DUAL_EXPLORE_REACH * e->vhi[d] && DUAL_EXPLORE_REACH * v >= e->vlo[d]);
}

static int explore(const memo_entry *e, const dual_calibration *c, const dual_call_shape *s, int threads, int chosen) {
  const int other = chosen == DUAL_DEVICE_GPU ? 0 : 1;
  if (!unmeasured(e, c, s, threads, other)) return 0;
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
enum { DUAL_SPLIT_EXPLORE_PCT = 60, DUAL_SPLIT_TRIES = 2 /* a k's first split is not kept */ };
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

/* A choice of where to run: 0 the CPU alone, 1 the GPU alone, 2 + log2 k a split with k staging
 * threads. */
static int choice_of(int device, int k) {
  return device == DUAL_DEVICE_HYBRID ? 2 + log2_k(k) : device == DUAL_DEVICE_GPU ? 1 : 0;
}

/* What the plan passed over, run again now and then: one call measures noisily on a busy machine
 * (on the H200 a split's side took 2-9x its usual time now and then: the staging threads' team
 * starting, host memory shared with other work; a device alone less often), and a choice never
 * made is never measured again, so one disturbed measurement could keep a device or a split out
 * of use for good (on the device machine one CPU call of kin at 1e4 took 9.2 ms where its
 * median was 5.2 ms, and kept the CPU out).  Among the choices measured before (a device alone,
 * a split per k near this batch) and predicted within DUAL_RETRY_PCT percent over the plan's
 * (2x, where a split can pay), the one run longest ago runs after DUAL_RETRY_FIRST calls,
 * then after twice as many each time up to DUAL_RETRY_MAX (a choice that stays slower costs at
 * most one call's time in that many); the spacing starts afresh when the plan's choice changes.
 * Returns the choice (choice_of), or -1; a split's GPU points in *g. */
enum { DUAL_RETRY_PCT = 100, DUAL_RETRY_FIRST = 4, DUAL_RETRY_MAX = 64 };
static int retry(memo_entry *e, const dual_calibration *c, const dual_call_shape *s, const dual_dispatch_plan *p,
                 int T, int splits, int64_t *g) {
  if (e == NULL) return -1;
  const int chosen = choice_of(p->device, p->gpu_threads);
  if (chosen != e->last_choice) e->last_choice = chosen, e->retry_every = 0;
  if (p->device == DUAL_DEVICE_HYBRID && !p->split_measured) return -1; /* the model's: measured now */
  const double t_chosen = p->device == DUAL_DEVICE_HYBRID ? p->t_split
                          : p->device == DUAL_DEVICE_GPU  ? p->t_gpu
                                                          : p->t_cpu;
  const double reach = t_chosen * (100.0 + DUAL_RETRY_PCT) / 100.0;
  int best = -1;
  for (int d = 0; d < 2; ++d) { /* a device alone, measured before (else explore's) */
    const double t = d ? p->t_gpu : p->t_cpu;
    if (d != chosen && e->seen[d].n > 0 && t <= reach && (best < 0 || e->stamp[d] < e->stamp[best])) best = d;
  }
  for (int j = 0; splits && j < DUAL_SPLIT_KS; ++j) {
    const dual_split_seen *m = &e->split[j];
    int64_t gj;
    if (2 + j == chosen || m->k >= T || !dual_split_seen_near(m, s->B)) continue;
    if (dual_split_seen_time(c, s, m, &gj) <= reach && (best < 0 || e->stamp[2 + j] < e->stamp[best]))
      best = 2 + j, *g = gj;
  }
  if (best < 0) return -1;
  if (e->retry_every == 0) e->retry_every = e->retry_wait = DUAL_RETRY_FIRST;
  if (--e->retry_wait > 0) return -1;
  e->retry_every = 2 * e->retry_every < DUAL_RETRY_MAX ? 2 * e->retry_every : DUAL_RETRY_MAX;
  e->retry_wait = e->retry_every;
  return best;
}

/* Keep a split's measured sides, each in its side's history, and the split's time over what the
 * sides predicted for it (not while a kernel compiles in the background; not a k's first split:
 * its staging threads' team starts, and the GPU's first run may have compiled). */
static void learn_split(memo_entry *e, const dual_calibration *c, int64_t B, int64_t g, int k, double tg,
                        double tc) {
  if (e == NULL || g <= 0 || g >= B) return;
  e->runs[1]++;
  dual_split_seen *m = &e->split[log2_k(k)];
  if (dual_gpu_compiling()) return;
  if (m->k != k) {
    memset(m, 0, sizeof *m);
    m->k = k;
    return;
  }
  if (m->gpu.n > 0 && m->cpu.n > 0) { /* the split's time over what its sides predicted */
    if (!(B < 2 * m->B && m->B < 2 * B)) m->over.n = m->over.next = 0;
    dual_ratios_add(&m->over, (tg > tc ? tg : tc) + c->split_call_s, dual_split_seen_sides(c, m, B, g));
  }
  const int kept_g = dual_history_add(&m->gpu, c->gpu_call_s, (double)g, tg);
  const int kept_c = dual_history_add(&m->cpu, c->cpu_call_s, (double)(B - g), tc);
  if (kept_g || kept_c) m->B = B;
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

/* The caller's fixed split (DUAL_KNOB_SPLIT_SHARE, _THREADS) in the plan: 1 when it applies. */
static int fixed_split(const dual_context *ctx, const dual_call_shape *s, int T, dual_dispatch_plan *p) {
  const int64_t share = ctx->knobs[DUAL_KNOB_SPLIT_SHARE], k = ctx->knobs[DUAL_KNOB_SPLIT_THREADS];
  const int64_t q = s->cpu_block > 0 ? s->cpu_block : 1;
  if (share <= 0 || T < 2 || s->B < 2 * q) return 0;
  int64_t j = (s->B * share / 1000 + q / 2) / q;
  const int64_t jmax = (s->B - q) / q;
  j = j < 1 ? 1 : j > jmax ? jmax : j;
  p->device = DUAL_DEVICE_HYBRID;
  p->gpu_points = j * q;
  p->gpu_threads = k > 0 ? (int)(k < T - 1 ? k : T - 1) : p->split_threads > 0 ? p->split_threads : 1;
  return 1;
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
  memo_entry *m = memo_find(ctx, job);
  dual_call_shape s;
  if (m != NULL) dual_call_shape_from(job, e->cpu_width, e->gpu_tier, m->arith, m->special, &s);
  else dual_call_shape_of(job, e->cpu_width, e->gpu_tier, &s);
  if (m != NULL) m->calls++;
  gpu_tier_is(m, s.gpu_tier);
  scales_from_history(m, &c, &s, threads);
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, threads, m != NULL ? m->split : NULL, m != NULL ? DUAL_SPLIT_KS : 0, &p);
  const int splits = ctx->knobs[DUAL_KNOB_DISPATCH] != 2;
  const int fixed = splits && fixed_split(ctx, &s, threads, &p);
  const int k_next = splits && !fixed ? explore_k(m, &p, B, threads) : 0;
  if (k_next > 0) {
    p.device = DUAL_DEVICE_HYBRID;
    p.gpu_points = p.split_points, p.gpu_threads = k_next;
  }
  if (p.device == DUAL_DEVICE_HYBRID && !splits) p.device = p.t_gpu < p.t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  int64_t g_retry = 0;
  const int again = k_next > 0 || fixed ? -1 : retry(m, &c, &s, &p, threads, splits, &g_retry);
  if (again >= 2) {
    p.device = DUAL_DEVICE_HYBRID;
    p.gpu_points = g_retry, p.gpu_threads = m->split[again - 2].k;
  } else if (again >= 0) {
    p.device = again ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  }
  if (p.device != DUAL_DEVICE_HYBRID && !fixed && explore(m, &c, &s, threads, p.device)) {
    p.device = p.device == DUAL_DEVICE_GPU ? DUAL_DEVICE_CPU : DUAL_DEVICE_GPU;
    m->tries[p.device == DUAL_DEVICE_GPU ? 1 : 0]++;
  } else if (p.device == DUAL_DEVICE_HYBRID && !fixed && k_next == 0 && again < 0 && m != NULL) {
    /* a split must beat the better device alone, so a device measured at other sizes only, its
     * time here an extrapolation, is measured here first: the one modelled faster, then the other
     * where modelled within 2x of it (on the H200 kin's GPU at 1e7, scaled from its calls at 1e5
     * and 1e6, was modelled at 3.1 s where it took 2.0 s, and splits of 2.0-2.2 s were preferred
     * to it) */
    const int first = p.t_gpu < p.t_cpu;
    const double t_first = first ? p.t_gpu : p.t_cpu, t_second = first ? p.t_cpu : p.t_gpu;
    for (int i = 0; i < 2 && (i == 0 || t_second < 2.0 * t_first); ++i) {
      const int d = i ? !first : first;
      if (m->seen[d].n > 0 && unmeasured(m, &c, &s, threads, d)) {
        p.device = d ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
        m->tries[d]++;
        break;
      }
    }
  }
  if (m != NULL) m->stamp[choice_of(p.device, p.gpu_threads)] = m->calls;
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
      if (gpu_ran && dual_gpu_allocations(ctx) == allocs && tier_ran(ctx, &s)) learn_split(m, &c, B, p.gpu_points, k, tg, tc);
      trace(&p, &s, B, tg, tc);
      ctx->last_device = gpu_ran ? DUAL_DEVICE_HYBRID : DUAL_DEVICE_CPU;
      ctx->last_split[0] = gpu_ran ? p.gpu_points : 0, ctx->last_split[1] = B - ctx->last_split[0];
      return st;
    }
    if (tg >= 0.0) return st; /* a side ran and failed */
    /* no split threads: the faster device alone */
    dual_clear_error(ctx);
    p.device = p.t_gpu < p.t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  }
  const double t0 = dual_dispatch_now();
  double t = 0.0;
  if (p.device == DUAL_DEVICE_GPU) {
    st = e->gpu(ctx, job);
    t = dual_dispatch_now() - t0;
    if (st == DUAL_SUCCESS && ctx->last_device == DUAL_DEVICE_GPU && dual_gpu_allocations(ctx) == allocs &&
        tier_ran(ctx, &s))
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
