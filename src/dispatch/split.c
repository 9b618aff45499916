/*
 * split.c — dual_batch_slice and dual_run_split (split.h): the first side runs on a POSIX thread
 * of its own (the GPU's staging path is a host thread's work: gathers, copies, waits), the rest
 * on the caller's OpenMP threads.
 */
#define _POSIX_C_SOURCE 200809L

#include "dispatch/split.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "context.h"

#define SLICE(ptr, stride) ((ptr) != NULL ? (ptr) + first * (stride) : NULL)

void dual_batch_slice(const dual_batch *b, int64_t first, int64_t count, dual_batch *out) {
  *out = *b;
  out->count = count;
  out->x = SLICE(b->x, b->x_ps), out->p = SLICE(b->p, b->p_ps), out->v = SLICE(b->v, b->v_ps);
  out->y = SLICE(b->y, b->y_ps), out->d = SLICE(b->d, b->d_ps), out->h = SLICE(b->h, b->h_ps);
  out->u = SLICE(b->u, b->u_ps), out->status = SLICE(b->status, 1);
  out->point0 = b->point0 + first;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct side {
  dual_context *ctx;
  dual_job job;
  dual_batch b;
  dual_engine_fn fn;
  int st;
  double secs;
} side;

static void *run_side(void *arg) {
  side *s = arg;
  const double t0 = now();
  s->st = s->fn(s->ctx, &s->job);
  s->secs = now() - t0;
  return NULL;
}

int dual_run_split(dual_context *ctx, const dual_job *job, int64_t g, dual_engine_fn first,
                   dual_engine_fn rest, int rest_threads, int *st_first, int *st_rest, double *t_first,
                   double *t_rest) {
  side a, r;
  const int64_t B = job->b->count;
  a.ctx = r.ctx = ctx, a.fn = first, r.fn = rest, a.st = r.st = DUAL_ERR_INTERNAL, a.secs = r.secs = 0.0;
  dual_batch_slice(job->b, 0, g, &a.b);
  dual_batch_slice(job->b, g, B - g, &r.b);
  a.job = *job, r.job = *job;
  a.job.b = &a.b, r.job.b = &r.b;
  a.job.point0 = a.b.point0, r.job.point0 = r.b.point0;
  r.job.threads = rest_threads > 0 ? rest_threads : 1;
  pthread_t t;
  const int started = pthread_create(&t, NULL, run_side, &a) == 0;
  if (started) {
    run_side(&r);
    pthread_join(t, NULL);
  }
  *st_first = a.st, *st_rest = r.st, *t_first = a.secs, *t_rest = r.secs;
  if (!started) return dual_fail(ctx, DUAL_ERR_INTERNAL, "could not start the GPU's thread of a split call");
  return a.st != DUAL_SUCCESS ? a.st : r.st;
}
