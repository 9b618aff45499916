/*
 * peer_fork.h — splits a batch of points over forked processes, for CPU peers whose library keeps
 * its state in process-wide globals and so cannot run on several threads at once (the Debian
 * build of ADOL-C: see adolc_hess.h).  Used by adolc_hess.cc and adolc_grad.cc.
 *
 * The points [0, B) are cut into `parts` contiguous parts.  The calling process evaluates part 0
 * straight into the caller's output arrays; parts 1.. are evaluated by forked children (which
 * inherit everything traced before the fork, e.g. an ADOL-C tape) writing into one shared
 * anonymous mapping, kept from call to call (its pages are touched once) and grown as needed;
 * after the children have exited, the caller copies their results into place.  The forks, the
 * waits and the copy are inside the call, so a caller that times it times them too.  Not
 * reentrant (one call at a time per process).
 */
#ifndef DUAL_BENCH_PEER_FORK_H
#define DUAL_BENCH_PEER_FORK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { PEER_FORK_MAX_PARTS = 256, PEER_FORK_MAX_OUTPUTS = 4 };

/* One point-major output array of the caller: `per_point` doubles per point. */
typedef struct peer_fork_output {
  double *data;
  int64_t per_point;
} peer_fork_output;

/* Evaluates points [begin, begin + count) of the caller's inputs into outs[k] (already pointing
 * at the part's first point, per_point[k] doubles per point); returns 0 on success. */
typedef int (*peer_fork_part)(int64_t begin, int64_t count, double *const *outs, void *arg);

/* Runs `part` over [0, B) in `parts` parts as described above (parts <= 1: one call here;
 * parts is capped at B and at PEER_FORK_MAX_PARTS).  Returns 0 when every part succeeded, -1
 * when one failed, a fork or the mapping failed, or nouts > PEER_FORK_MAX_OUTPUTS. */
int peer_fork_run(int64_t B, int parts, const peer_fork_output *outs, int nouts,
                  peer_fork_part part, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_BENCH_PEER_FORK_H */
