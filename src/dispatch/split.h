/*
 * split.h — a call cut in two for AUTO's hybrid dispatch (issue 20): the first points on the GPU,
 * the rest on the CPU, at the same time.  Each side's results are the bits either device gives
 * alone (the engines are bitwise equal, and a point's arithmetic never depends on the others).
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

/* The least seconds of a few hand-overs of nothing to the split threads and back (the
 * calibration's split_call_s), starting the threads if need be. */
int dual_split_handoff_seconds(dual_context *ctx, double *secs);

/* Stop and free a context's split threads (dual_context_destroy). */
struct dual_split_worker;
void dual_split_worker_free(struct dual_split_worker *w);

#endif /* DUAL_SPLIT_H */
