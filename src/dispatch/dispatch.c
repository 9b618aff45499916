/*
 * dispatch.c — dual_dispatch_auto (dispatch.h).  A program's measured scales are kept per
 * context for its last DUAL_MEMO_SLOTS (program, product) pairs: the measured over the modelled
 * time of its varying part (the per-point work; the calibration's fixed costs and copies are
 * taken as measured), fitted after every run on each device but the first (learn).  A split
 * measures both devices at once, so a program whose two times are close gets both scales from
 * its first calls.
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/dispatch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "dispatch/calibration.h"
#include "dispatch/call_shape.h"
#include "program.h"

enum { DUAL_MEMO_SLOTS = 32 };

typedef struct memo_entry {
  uint64_t uid;   /* the program's (0: free) */
  int mode, reverse, sgrad;
  double scale[2]; /* [0] CPU, [1] GPU; 1 until measured */
  int runs[2];
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
  e->scale[0] = e->scale[1] = 1.0;
  return e;
}

double dual_dispatch_fit_scale(double (*model)(const void *arg, double x), const void *arg, double t) {
  double lo = log(1e-3), hi = log(1e3);
  if (model(arg, exp(lo)) >= t) return exp(lo);
  if (model(arg, exp(hi)) <= t) return exp(hi);
  for (int k = 0; k < 40; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (model(arg, exp(mid)) < t) lo = mid;
    else hi = mid;
  }
  return exp(0.5 * (lo + hi));
}

typedef struct fit_arg {
  const dual_calibration *c;
  dual_call_shape s;
  int64_t B;
  int threads;
} fit_arg;

static double cpu_at(const void *arg, double x) {
  fit_arg a = *(const fit_arg *)arg;
  a.s.cpu_scale = x;
  return dual_model_cpu(a.c, &a.s, a.B, a.threads);
}

static double gpu_at(const void *arg, double x) {
  fit_arg a = *(const fit_arg *)arg;
  a.s.gpu_scale = x;
  return dual_model_gpu(a.c, &a.s, a.B);
}

/* Fold a run of B points on device d (0 CPU, 1 GPU) that took t seconds into e.  A device's first
 * run of the pair is not learned from: it may have compiled the GPU's kernel (seconds, under
 * DUAL_TIER_COMPILE) or faulted in the CPU's workspaces.  After that each run moves the scale
 * halfway to its own in log space, by at most a factor DUAL_MEMO_STEP, so that one disturbed
 * call cannot drive a device out of use (a device not chosen is not measured again). */
enum { DUAL_MEMO_STEP = 4 };
static void learn(memo_entry *e, const dual_calibration *c, const dual_call_shape *s, int d, int64_t B,
                  int threads, double t) {
  if (e == NULL || B <= 0 || !(t > 0.0)) return;
  if (e->runs[d]++ == 0) return;
  fit_arg a = {c, *s, B, threads};
  const double x = dual_dispatch_fit_scale(d ? gpu_at : cpu_at, &a, t);
  double step = 0.5 * (log(x) - log(e->scale[d]));
  const double lim = log((double)DUAL_MEMO_STEP);
  step = step > lim ? lim : step < -lim ? -lim : step;
  e->scale[d] *= exp(step);
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int dual_dispatch_auto(dual_context *ctx, const dual_job *job, const dual_dispatch_engines *e) {
  const int64_t B = job->b->count;
  const int threads = job->threads > 0 ? job->threads : 1;
  dual_calibration c;
  if (dual_calibration_get(ctx, threads, 0, &c) != DUAL_SUCCESS || !c.gpu) {
    /* no figures: the GPU first, as before the model */
    dual_clear_error(ctx);
    const int st = e->gpu(ctx, job);
    ctx->last_split[0] = ctx->last_device == DUAL_DEVICE_GPU ? B : 0;
    ctx->last_split[1] = B - ctx->last_split[0];
    return st;
  }
  dual_call_shape s;
  dual_call_shape_of(job, e->cpu_width, e->gpu_tier, &s);
  memo_entry *m = memo_find(ctx, job);
  if (m != NULL) s.cpu_scale = m->scale[0], s.gpu_scale = m->scale[1];
  dual_dispatch_plan p;
  dual_dispatch_plan_call(&c, &s, threads, &p);
  if (p.device == DUAL_DEVICE_HYBRID && ctx->knobs[DUAL_KNOB_DISPATCH] == 2)
    p.device = p.t_gpu < p.t_cpu ? DUAL_DEVICE_GPU : DUAL_DEVICE_CPU;
  int st;
  if (p.device == DUAL_DEVICE_HYBRID) {
    int sg, sc;
    double tg, tc;
    st = dual_run_split(ctx, job, p.gpu_points, e->gpu, e->cpu, threads - 1, &sg, &sc, &tg, &tc);
    if (st != DUAL_SUCCESS) return st;
    const int gpu_ran = ctx->last_device == DUAL_DEVICE_GPU;
    if (gpu_ran) learn(m, &c, &s, 1, p.gpu_points, threads, tg);
    learn(m, &c, &s, 0, B - p.gpu_points, threads - 1, tc);
    ctx->last_device = gpu_ran ? DUAL_DEVICE_HYBRID : DUAL_DEVICE_CPU;
    ctx->last_split[0] = gpu_ran ? p.gpu_points : 0, ctx->last_split[1] = B - ctx->last_split[0];
    return st;
  }
  const double t0 = seconds();
  if (p.device == DUAL_DEVICE_GPU) {
    st = e->gpu(ctx, job);
    if (st == DUAL_SUCCESS && ctx->last_device == DUAL_DEVICE_GPU) learn(m, &c, &s, 1, B, threads, seconds() - t0);
  } else {
    st = e->cpu(ctx, job);
    if (st == DUAL_SUCCESS) {
      learn(m, &c, &s, 0, B, threads, seconds() - t0);
      ctx->last_device = DUAL_DEVICE_CPU, ctx->last_tier = DUAL_TIER_INTERPRET;
    }
  }
  if (st == DUAL_SUCCESS) {
    ctx->last_split[0] = ctx->last_device == DUAL_DEVICE_GPU ? B : 0;
    ctx->last_split[1] = B - ctx->last_split[0];
  }
  return st;
}
