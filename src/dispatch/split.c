/*
 * split.c — dual_batch_slice, dual_run_parts and dual_run_split, its two-part case for AUTO's
 * hybrid dispatch, dual_run_tasks (the same threads for other work: the solvers' shares over
 * several GPUs), and dual_split_shares (split.h).  Each part runs on a thread of its own,
 * started at the context's first split and kept, the caller waiting: in a hybrid split the first
 * (the GPU's: gathers, copies, waits, all host work) on one, the rest (on a copy of the context
 * whose error, if any, comes back) on the other; a call over k devices on k of them.  So each side's OpenMP team stays the same size from
 * split to split, and the caller's team, which single-device calls use, never shrinks: libgomp
 * ends the threads a smaller team leaves out and starts new ones when it grows again (team.c),
 * and on the device machine (16 threads, an H200) a split between two calls on all threads,
 * its CPU side on the caller's team of 12, took 8.4 ms where the same split alone took 2.4 ms
 * (kin at 1e4, GPU share 0.3, 4 staging threads; bench_dispatch with DUALBATCH_SPLIT_SHARE).
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/split.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context.h"
#include "dispatch/clock.h"

#define SLICE(ptr, stride) ((ptr) != NULL ? (ptr) + first * (stride) : NULL)

void dual_batch_slice(const dual_batch *b, int64_t first, int64_t count, dual_batch *out) {
  *out = *b;
  out->count = count;
  out->x = SLICE(b->x, b->x_ps), out->p = SLICE(b->p, b->p_ps), out->v = SLICE(b->v, b->v_ps);
  out->y = SLICE(b->y, b->y_ps), out->d = SLICE(b->d, b->d_ps), out->h = SLICE(b->h, b->h_ps);
  out->u = SLICE(b->u, b->u_ps), out->status = SLICE(b->status, 1);
  out->point0 = b->point0 + first;
}

typedef struct side {
  dual_context *ctx;
  dual_job job;
  dual_batch b;
  dual_engine_fn fn; /* NULL: nothing (a hand-over timed by dual_split_handoff_seconds) */
  dual_task_fn task; /* or this, on arg (dual_run_tasks) */
  void *arg;
  int st;
  double secs;
} side;

static void run_side(side *s) {
  const double t0 = dual_dispatch_now();
  s->st = s->task != NULL ? s->task(s->arg) : s->fn != NULL ? s->fn(s->ctx, &s->job) : DUAL_SUCCESS;
  s->secs = dual_dispatch_now() - t0;
}

/* ---- the split threads ------------------------------------------------------------------ */

/* One kept thread: takes a side, runs it, says so. */
typedef struct worker {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  side *work; /* handed over, not yet taken */
  int busy, quit, started;
} worker;

struct dual_split_worker {
  pid_t pid; /* the process that started them (a fork's child has no such threads) */
  int started;                      /* w[0 .. started) run */
  worker w[DUAL_SPLIT_MAX_PARTS]; /* a hybrid split: [0] the GPU's side, [1] the CPU's */
};

static void *worker_main(void *arg) {
  worker *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->work == NULL && !w->quit) pthread_cond_wait(&w->cv, &w->mu);
    if (w->work == NULL) break;
    side *s = w->work;
    w->work = NULL;
    pthread_mutex_unlock(&w->mu);
    run_side(s);
    pthread_mutex_lock(&w->mu);
    w->busy = 0;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static void worker_stop(worker *w) {
  if (!w->started) return;
  pthread_mutex_lock(&w->mu);
  w->quit = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
  w->started = 0;
}

static int worker_start(worker *w) {
  if (pthread_mutex_init(&w->mu, NULL) != 0) return -1;
  if (pthread_cond_init(&w->cv, NULL) != 0) {
    pthread_mutex_destroy(&w->mu);
    return -1;
  }
  if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->cv), pthread_mutex_destroy(&w->mu);
    return -1;
  }
  w->started = 1;
  return 0;
}

void dual_split_worker_free(struct dual_split_worker *w) {
  if (w == NULL) return;
  if (w->pid == getpid())
    for (int i = 0; i < w->started; ++i) worker_stop(&w->w[i]);
  /* else a fork's child: the threads are not there, their locks may be held; the memory is freed */
  free(w);
}

/* The context's first k split threads, started if need be; NULL when they cannot be. */
static struct dual_split_worker *workers_of(dual_context *ctx, int k) {
  struct dual_split_worker *w = ctx->split_worker;
  if (w != NULL && w->pid != getpid()) free(w), w = ctx->split_worker = NULL; /* before a fork */
  if (w == NULL) {
    if ((w = calloc(1, sizeof *w)) == NULL) return NULL;
    w->pid = getpid();
    ctx->split_worker = w;
  }
  while (w->started < k)
    if (worker_start(&w->w[w->started]) == 0)
      ++w->started;
    else
      return NULL; /* those started stay, for the next call */
  return w;
}

static void hand_over(worker *w, side *s) {
  pthread_mutex_lock(&w->mu);
  w->work = s, w->busy = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

static void wait_for(worker *w) {
  pthread_mutex_lock(&w->mu);
  while (w->busy) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
}

/* Side i on split thread i, the caller waiting for all k; 0, or -1 (nothing ran) without the
 * threads. */
static int run_sides(dual_context *ctx, side *s, int k) {
  struct dual_split_worker *w = workers_of(ctx, k);
  if (w == NULL) return -1;
  for (int i = 0; i < k; ++i) hand_over(&w->w[i], &s[i]);
  for (int i = 0; i < k; ++i) wait_for(&w->w[i]);
  return 0;
}

int dual_split_handoff_seconds(dual_context *ctx, double *secs) {
  double best = 0.0;
  for (int k = 0; k < 9; ++k) {
    side s[2];
    memset(s, 0, sizeof s);
    const double t0 = dual_dispatch_now();
    if (run_sides(ctx, s, 2) != 0)
      return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the threads of split calls");
    const double t = dual_dispatch_now() - t0;
    if (k == 0 || t < best) best = t;
  }
  *secs = best;
  return DUAL_SUCCESS;
}

int dual_run_parts(dual_context *ctx, const dual_job *job, int k, const int64_t *counts,
                   dual_context *const *ctxs, const dual_engine_fn *fn, const int *threads, int *st,
                   double *secs) {
  if (k < 1 || k > DUAL_SPLIT_MAX_PARTS)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "a call cut in %d parts (1 .. %d)", k, DUAL_SPLIT_MAX_PARTS);
  for (int i = 0; i < k; ++i) st[i] = DUAL_ERR_INTERNAL, secs[i] = -1.0; /* nothing ran yet */
  side s[DUAL_SPLIT_MAX_PARTS];
  memset(s, 0, sizeof s);
  int64_t first = 0;
  for (int i = 0; i < k; ++i) {
    if (counts[i] < 0 || counts[i] > job->b->count - first)
      return dual_fail(ctx, DUAL_ERR_INTERNAL, "split call: part %d of %lld points past the batch's %lld", i,
                       (long long)counts[i], (long long)job->b->count);
    s[i].ctx = ctxs[i];
    s[i].fn = counts[i] > 0 ? fn[i] : NULL; /* NULL: nothing to run */
    s[i].st = DUAL_ERR_INTERNAL;
    dual_batch_slice(job->b, first, counts[i], &s[i].b);
    s[i].job = *job;
    s[i].job.b = &s[i].b;
    s[i].job.point0 = s[i].b.point0;
    s[i].job.threads = threads[i] > 0 ? threads[i] : 1;
    first += counts[i];
  }
  if (first != job->b->count)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "split call: the parts hold %lld of %lld points", (long long)first,
                     (long long)job->b->count);
  const int started = run_sides(ctx, s, k) == 0;
  for (int i = 0; i < k; ++i) st[i] = started ? s[i].st : DUAL_ERR_INTERNAL, secs[i] = started ? s[i].secs : -1.0;
  if (!started) return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the threads of split calls");
  for (int i = 0; i < k; ++i) {
    if (st[i] == DUAL_SUCCESS) continue;
    if (ctxs[i] != ctx) /* the part's own context holds its message */
      dual_fail(ctx, st[i], "%s", ctxs[i]->error != NULL ? ctxs[i]->error : "a part of a split call failed");
    return st[i];
  }
  return DUAL_SUCCESS;
}

int dual_run_tasks(dual_context *ctx, int k, dual_task_fn task, void *const *args, int *st, double *secs) {
  if (k < 1 || k > DUAL_SPLIT_MAX_PARTS)
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "%d tasks at once (1 .. %d)", k, DUAL_SPLIT_MAX_PARTS);
  side s[DUAL_SPLIT_MAX_PARTS];
  memset(s, 0, sizeof s);
  for (int i = 0; i < k; ++i) s[i].task = task, s[i].arg = args[i], s[i].st = DUAL_ERR_INTERNAL, secs[i] = -1.0;
  if (run_sides(ctx, s, k) != 0) {
    for (int i = 0; i < k; ++i) st[i] = DUAL_ERR_INTERNAL;
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the threads of split calls");
  }
  for (int i = 0; i < k; ++i) st[i] = s[i].st, secs[i] = s[i].secs;
  return DUAL_SUCCESS;
}

void dual_split_shares(int64_t B, int k, const double *rate, int64_t quantum, int64_t *counts) {
  if (k < 1) return;
  if (quantum < 1) quantum = 1;
  double sum = 0.0, r[DUAL_SPLIT_MAX_PARTS];
  int known = 0;
  for (int i = 0; i < k && i < DUAL_SPLIT_MAX_PARTS; ++i)
    if (isfinite(rate[i]) && rate[i] > 0.0) sum += rate[i], ++known;
  const double mean = known > 0 ? sum / known : 1.0;
  double total = 0.0;
  for (int i = 0; i < k && i < DUAL_SPLIT_MAX_PARTS; ++i)
    r[i] = isfinite(rate[i]) && rate[i] > 0.0 ? rate[i] : mean, total += r[i];
  /* cut i at the multiple of quantum nearest to its proportional place: rounding never drifts */
  int64_t start = 0;
  double before = 0.0;
  for (int i = 0; i + 1 < k && i < DUAL_SPLIT_MAX_PARTS; ++i) {
    before += r[i];
    const double place = (double)B * (before / total) / (double)quantum;
    int64_t cut = (int64_t)llround(place) * quantum;
    if (cut > B) cut = B;
    if (cut < start) cut = start;
    counts[i] = cut - start;
    start = cut;
  }
  counts[k - 1] = B - start;
}

int dual_run_split(dual_context *ctx, const dual_job *job, int64_t g, dual_engine_fn first,
                   dual_engine_fn rest, int first_threads, int rest_threads, int *st_first, int *st_rest,
                   double *t_first, double *t_rest) {
  /* the rest's own context: its engines' errors do not meet the first side's (which may clear
   * its own on a fallback); nothing else of the context is written by an engine */
  dual_context rctx = *ctx;
  rctx.error = NULL, rctx.note = NULL, rctx.split_worker = NULL;
  dual_context *ctxs[2] = {ctx, &rctx};
  const int64_t counts[2] = {g, job->b->count - g};
  const dual_engine_fn fn[2] = {first, rest};
  const int threads[2] = {first_threads, rest_threads};
  int st[2] = {DUAL_ERR_INTERNAL, DUAL_ERR_INTERNAL};
  double secs[2] = {-1.0, -1.0};
  const int ret = dual_run_parts(ctx, job, 2, counts, ctxs, fn, threads, st, secs);
  *st_first = st[0], *st_rest = st[1], *t_first = secs[0], *t_rest = secs[1];
  free(rctx.note), free(rctx.error);
  return ret;
}
