/*
 * adolc_grad.h — the ADOL-C peer of the CPU benchmark for the grad workload (BENCHMARKS.md,
 * reverse mode): the gradient of f(x) = sum_{i<1024} sin(x_i) x_{(i+1) mod 1024} + log1p(sum x_i^2)
 * per point, from one ADOL-C tape traced once (trace_on / trace_off over adoubles) and evaluated
 * at every point by ADOL-C's `gradient` driver (one zos_forward with keep = 1, one fos_reverse).
 * ADOL-C has no log1p for adoubles: the tape computes log(1 + q), whose derivative 1 / (1 + q) is
 * the same.  C interface, implemented in adolc_grad.cc.  Layouts (packed, point-major):
 * x [B][1024], g [B][1024].
 *
 * Threads: as adolc_hess.h (ADOL-C's Debian build has no OpenMP support): threads > 1 splits the
 * points over forked processes (peer_fork.h), the forks, waits and copy inside the call.  Not
 * reentrant.
 */
#ifndef DUAL_BENCH_ADOLC_GRAD_H
#define DUAL_BENCH_ADOLC_GRAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ADOLC_GRAD_N = 1024 };

/* The gradients of the first B points of x into g.  threads <= 0: all CPUs (OpenMP's maximum).
 * Returns 0 on success, -1 when ADOL-C reported an error, its tape does not fit in memory (a tape
 * written to files cannot be shared by forked processes), or a fork/mmap failed. */
int adolc_grad_run(int64_t B, const double *x, double *g, int threads);

/* "tape 1: 6144 operations, 12289 locations, 3 values, Taylor stack 5121; in memory" after the
 * first run ("not traced yet" before): a static buffer. */
const char *adolc_grad_tape_info(void);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_BENCH_ADOLC_GRAD_H */
