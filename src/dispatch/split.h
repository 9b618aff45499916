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

/* Run `job` split at g (0 < g < count): points [0, g) by `first` on a thread of its own, points
 * [g, count) by `rest` on the calling thread with rest_threads threads, at the same time; the
 * seconds each side took in *t_first and *t_rest.  Returns the first failure's status (the first
 * side's in *st_first, the rest's in *st_rest, so that the caller may redo a failed first side
 * elsewhere), or DUAL_ERR_NO_MEMORY-like statuses where the thread cannot be started (then
 * nothing ran: *st_first and *st_rest are DUAL_ERR_INTERNAL). */
int dual_run_split(dual_context *ctx, const dual_job *job, int64_t g, dual_engine_fn first,
                   dual_engine_fn rest, int rest_threads, int *st_first, int *st_rest, double *t_first,
                   double *t_rest);

#endif /* DUAL_SPLIT_H */
