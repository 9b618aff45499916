/*
 * split.c — dual_batch_slice and dual_run_split (split.h).  Each side runs on a thread of its
 * own, both started at the context's first split and kept, the caller waiting: the first (the
 * GPU's: gathers, copies, waits, all host work) on one, the rest (on a copy of the context whose
 * error, if any, comes back) on the other.  So each side's OpenMP team stays the same size from
 * split to split, and the caller's team, which single-device calls use, never shrinks: libgomp
 * ends the threads a smaller team leaves out and starts new ones when it grows again (team.c),
 * and on the device machine (16 threads, an H200) a split between two calls on all threads,
 * its CPU side on the caller's team of 12, took 8.4 ms where the same split alone took 2.4 ms
 * (kin at 1e4, GPU share 0.3, 4 staging threads; bench_dispatch with DUALBATCH_SPLIT_SHARE).
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/split.h"

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
  int st;
  double secs;
} side;

static void run_side(side *s) {
  const double t0 = dual_dispatch_now();
  s->st = s->fn != NULL ? s->fn(s->ctx, &s->job) : DUAL_SUCCESS;
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
  pid_t pid;   /* the process that started them (a fork's child has no such threads) */
  worker w[2]; /* [0] the GPU's side, [1] the CPU's */
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
  if (w->pid == getpid()) worker_stop(&w->w[0]), worker_stop(&w->w[1]);
  /* else a fork's child: the threads are not there, their locks may be held; the memory is freed */
  free(w);
}

/* The context's split threads, started if need be; NULL when they cannot be. */
static struct dual_split_worker *workers_of(dual_context *ctx) {
  struct dual_split_worker *w = ctx->split_worker;
  if (w != NULL && w->pid == getpid()) return w;
  if (w != NULL) free(w), ctx->split_worker = NULL; /* started before a fork: not in this process */
  if ((w = calloc(1, sizeof *w)) == NULL) return NULL;
  w->pid = getpid();
  if (worker_start(&w->w[0]) != 0 || worker_start(&w->w[1]) != 0) {
    dual_split_worker_free(w);
    return NULL;
  }
  return ctx->split_worker = w;
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

/* Side a on the first split thread and side r on the second, the caller waiting for both; 0, or
 * -1 (nothing ran) without the threads. */
static int run_both(dual_context *ctx, side *a, side *r) {
  struct dual_split_worker *w = workers_of(ctx);
  if (w == NULL) return -1;
  hand_over(&w->w[0], a), hand_over(&w->w[1], r);
  wait_for(&w->w[0]), wait_for(&w->w[1]);
  return 0;
}

int dual_split_handoff_seconds(dual_context *ctx, double *secs) {
  double best = 0.0;
  for (int k = 0; k < 9; ++k) {
    side a, r;
    memset(&a, 0, sizeof a), memset(&r, 0, sizeof r);
    const double t0 = dual_dispatch_now();
    if (run_both(ctx, &a, &r) != 0)
      return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the threads of split calls");
    const double t = dual_dispatch_now() - t0;
    if (k == 0 || t < best) best = t;
  }
  *secs = best;
  return DUAL_SUCCESS;
}

int dual_run_split(dual_context *ctx, const dual_job *job, int64_t g, dual_engine_fn first,
                   dual_engine_fn rest, int first_threads, int rest_threads, int *st_first, int *st_rest,
                   double *t_first, double *t_rest) {
  side a, r;
  const int64_t B = job->b->count;
  /* the rest's own context: its engines' errors do not meet the first side's (which may clear
   * its own on a fallback); nothing else of the context is written by an engine */
  dual_context rctx = *ctx;
  rctx.error = NULL, rctx.note = NULL, rctx.split_worker = NULL;
  a.ctx = ctx, r.ctx = &rctx, a.fn = first, r.fn = rest, a.st = r.st = DUAL_ERR_INTERNAL, a.secs = r.secs = 0.0;
  dual_batch_slice(job->b, 0, g, &a.b);
  dual_batch_slice(job->b, g, B - g, &r.b);
  a.job = *job, r.job = *job;
  a.job.b = &a.b, r.job.b = &r.b;
  a.job.point0 = a.b.point0, r.job.point0 = r.b.point0;
  a.job.threads = first_threads > 0 ? first_threads : 1;
  r.job.threads = rest_threads > 0 ? rest_threads : 1;
  const int started = run_both(ctx, &a, &r) == 0;
  *st_first = a.st, *st_rest = r.st, *t_first = a.secs, *t_rest = r.secs;
  free(rctx.note);
  if (!started) {
    *t_first = *t_rest = -1.0;
    free(rctx.error);
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the threads of split calls");
  }
  if (a.st != DUAL_SUCCESS) {
    free(rctx.error);
    return a.st;
  }
  if (r.st != DUAL_SUCCESS)
    return rctx.error != NULL ? dual_fail_owned(ctx, r.st, rctx.error) : dual_fail(ctx, r.st, "the CPU side failed");
  free(rctx.error);
  return DUAL_SUCCESS;
}
