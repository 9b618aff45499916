/*
 * adolc_hess.h — the ADOL-C peer of the CPU benchmark for the hess workload (BENCHMARKS.md):
 * value, gradient and full 16 x 16 Hessian per point from one ADOL-C tape of
 * f(x) = sum_{i<15} [100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2] + log sum_{i<16} exp(x_i), traced once
 * and evaluated at every point by ADOL-C's forward/reverse sweeps.  C interface, implemented in
 * adolc_hess.cc.  Layouts (packed, point-major): x [B][16], f [B], g [B][16], H [B][16][16]
 * row-major, the full matrix.
 *
 * Threads: the Debian build of ADOL-C (libadolc-dev 2.7.2) is configured without OpenMP support,
 * so its tape state (the current tape, its buffers) is one set of process-wide globals; two
 * threads sweeping even two different tapes at once corrupt each other's results.  With
 * threads > 1 the points are therefore split into `threads` contiguous parts, each evaluated by a
 * forked process on the tape traced before the fork (the calling process takes the first part);
 * the children write into a shared mapping (kept from call to call) that the caller copies into
 * f, g, H (peer_fork.h, shared with the grad peer adolc_grad.h).  The forks, the waits and the
 * copy are inside the call, so they are timed.  Not reentrant (one call at a time per process,
 * as ADOL-C itself).
 */
#ifndef DUAL_BENCH_ADOLC_HESS_H
#define DUAL_BENCH_ADOLC_HESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How each point's f, g, H are obtained from the tape (the per-point driver):
 * ADOLC_HESS_WK_OV     one hov_wk_forward (16 directions, keep = 2) + one hos_ov_reverse: the two
 *                      sweeps of ADOL-C's hessian2 driver, called directly so that their value
 *                      (y), gradient (first-order adjoints) and the full H (second-order
 *                      adjoints, 16 columns) are kept, with preallocated arrays (default: fastest);
 * ADOLC_HESS_HESSIAN2  zos_forward (keep = 1) + fos_reverse (the gradient driver, value kept),
 *                      then the hessian2 driver (Hessian-matrix product), lower triangle mirrored;
 * ADOLC_HESS_HESSIAN   the same with the hessian driver (16 hess_vec calls: 16 fos_forward +
 *                      hos_reverse), lower triangle mirrored. */
enum { ADOLC_HESS_WK_OV = 0, ADOLC_HESS_HESSIAN2 = 1, ADOLC_HESS_HESSIAN = 2, ADOLC_HESS_DRIVERS };

/* The hess workload with the default driver (ADOLC_HESS_WK_OV).  threads <= 0: all CPUs (OpenMP's
 * maximum).  Returns 0 on success, -1 when ADOL-C reported an error or a fork/mmap failed. */
int adolc_hess_run(int64_t B, const double *x, double *f, double *g, double *H, int threads);

/* The same with a chosen driver (ADOLC_HESS_*). */
int adolc_hess_run_driver(int64_t B, const double *x, double *f, double *g, double *H,
                          int threads, int driver);

/* "hov_wk_forward + hos_ov_reverse", ...: a static string; NULL for an unknown driver. */
const char *adolc_hess_driver_name(int driver);

/* "ADOL-C 2.7.2 (tape, ...), g++ 12.2.0": a static string. */
const char *adolc_peer_info(void);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_BENCH_ADOLC_HESS_H */
