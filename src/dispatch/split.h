/*
 * split.h — a call cut in parts run at the same time: in two for AUTO's hybrid dispatch (issue
 * 20: the first points on the GPU, the rest on the CPU), in k for a context over several devices
 * (issue 23).  Each part's results are the bits any one device gives alone (the engines are
 * bitwise equal, and a point's arithmetic never depends on the others).
 */
#ifndef DUAL_SPLIT_H
#define DUAL_SPLIT_H

#include "exec.h"

/* The points [first, first + count) of batch b as a batch of their own: every array offset by
 * `first` points (an absent array stays NULL), point0 advanced, so that the random draws see the
 * same point indices. */
void dual_batch_slice(const dual_batch *b, int64_t first, int64_t count, dual_batch *out);

/* An engine call on a job (run.c's dispatch to the GPU or the CPU engines). */
typedef int (*dual_engine_fn)(dual_context *ctx, const dual_job *job);

/* Run `job` split at g (0 < g < count): points [0, g) by `first` with first_threads threads,
 * points [g, count) by `rest` with rest_threads threads, at the same time, each on one of the
 * context's two split threads (started at the first split, kept until the context is destroyed)
 * while the caller waits; the seconds each side took in *t_first and *t_rest.  `rest` runs on a
 * copy of the context (its error comes back; it must write nothing else of the context).
 * Returns the first failure's status (the first side's in *st_first, the rest's in *st_rest), or
 * DUAL_ERR_INTERNAL where the split threads cannot be started: then nothing ran, and *t_first and
 * *t_rest are -1. */
int dual_run_split(dual_context *ctx, const dual_job *job, int64_t g, dual_engine_fn first,
                   dual_engine_fn rest, int first_threads, int rest_threads, int *st_first, int *st_rest,
                   double *t_first, double *t_rest);

/* The most parts of one call (dual_run_parts): a context's GPUs, or a GPU and the CPU. */
#define DUAL_SPLIT_MAX_PARTS 16

/* A job cut in k contiguous parts (1 <= k <= DUAL_SPLIT_MAX_PARTS): part i is counts[i] >= 0
 * points (the counts sum to the batch's), after those of the parts before it, run by fn[i] on
 * ctxs[i] with threads[i] threads (0 counts as 1), all at once on the context's kept split threads
 * while the caller waits; a part of no points is not run (status DUAL_SUCCESS, 0 s).  Each part
 * writes only its own points of the caller's arrays and its own context's error: ctxs[i] are
 * distinct contexts (or copies of one).  Each part's status goes to st[i] and its seconds to
 * secs[i].  Returns DUAL_SUCCESS, or the first failing part's status with its message in ctx's
 * error, or DUAL_ERR_INTERNAL where the threads cannot be started (nothing ran; secs all -1). */
int dual_run_parts(dual_context *ctx, const dual_job *job, int k, const int64_t *counts,
                   dual_context *const *ctxs, const dual_engine_fn *fn, const int *threads, int *st,
                   double *secs);

/* k tasks at once on the context's kept split threads (1 <= k <= DUAL_SPLIT_MAX_PARTS), the
 * caller waiting: task(args[i]) on thread i, its status into st[i] and its seconds into secs[i].
 * Each task touches only what its argument names.  DUAL_SUCCESS, or DUAL_ERR_INTERNAL in ctx's
 * error where the threads cannot be started (nothing ran; secs all -1). */
typedef int (*dual_task_fn)(void *arg);
int dual_run_tasks(dual_context *ctx, int k, dual_task_fn task, void *const *args, int *st, double *secs);

/* Points per part for B points over k parts whose measured speeds (points per second) are rate[i]:
 * proportional to the rates, the cuts between parts at multiples of `quantum` points (or at B;
 * a part too small for one quantum may get none), the counts summing to B.  A rate that is not a
 * positive finite number stands for the mean of the others (1 when none is): a part not yet
 * measured gets an even share.  The same inputs give the same counts. */
void dual_split_shares(int64_t B, int k, const double *rate, int64_t quantum, int64_t *counts);

/* The least seconds of a few hand-overs of nothing to the split threads and back (the
 * calibration's split_call_s), starting the threads if need be. */
int dual_split_handoff_seconds(dual_context *ctx, double *secs);

/* Stop and free a context's split threads (dual_context_destroy). */
struct dual_split_worker;
void dual_split_worker_free(struct dual_split_worker *w);

#endif /* DUAL_SPLIT_H */
