/*
 * split.c — dual_batch_slice and dual_run_split (split.h).  The first side (the GPU's: gathers,
 * copies, waits, all host work) runs on the context's split thread, started at the first split
 * and kept, so that a split costs a hand-over rather than a thread's start (and the OpenMP team
 * its staging starts stays with it); the rest runs on the caller's thread and its OpenMP team,
 * on a copy of the context whose error, if any, comes back.
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

/* ---- the split thread ------------------------------------------------------------------- */

struct dual_split_worker {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pid_t pid;  /* the process that started it (a fork's child has no such thread) */
  side *work; /* handed over, not yet taken */
  int busy, quit;
};

static void *worker_main(void *arg) {
  struct dual_split_worker *w = arg;
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

void dual_split_worker_free(struct dual_split_worker *w) {
  if (w == NULL) return;
  if (w->pid == getpid()) {
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
  } /* else a fork's child: the thread is not there, its lock may be held; the memory is freed */
  free(w);
}

/* The context's split thread, started if need be; NULL when it cannot be. */
static struct dual_split_worker *worker_of(dual_context *ctx) {
  struct dual_split_worker *w = ctx->split_worker;
  if (w != NULL && w->pid == getpid()) return w;
  if (w != NULL) free(w), ctx->split_worker = NULL; /* started before a fork: not in this process */
  if ((w = calloc(1, sizeof *w)) == NULL) return NULL;
  w->pid = getpid();
  if (pthread_mutex_init(&w->mu, NULL) != 0) {
    free(w);
    return NULL;
  }
  if (pthread_cond_init(&w->cv, NULL) != 0) {
    pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
  }
  if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->cv), pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
  }
  return ctx->split_worker = w;
}

/* Side a on the split thread while side r runs here; 0, or -1 (nothing ran) with no thread. */
static int run_both(dual_context *ctx, side *a, side *r) {
  struct dual_split_worker *w = worker_of(ctx);
  if (w == NULL) return -1;
  pthread_mutex_lock(&w->mu);
  w->work = a, w->busy = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  run_side(r);
  pthread_mutex_lock(&w->mu);
  while (w->busy) pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  return 0;
}

int dual_split_handoff_seconds(dual_context *ctx, double *secs) {
  double best = 0.0;
  for (int k = 0; k < 9; ++k) {
    side a, r;
    memset(&a, 0, sizeof a), memset(&r, 0, sizeof r);
    const double t0 = dual_dispatch_now();
    if (run_both(ctx, &a, &r) != 0)
      return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the thread of split calls");
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
    return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the thread of split calls");
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
