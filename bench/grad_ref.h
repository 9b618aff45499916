/*
 * grad_ref.h — the grad workload's gradient by its hand-derived formula (BENCHMARKS.md "grad"),
 * the reference every tool's gradient is checked against in bench_cpu_grad.c, bench_gpu.c and
 * bench_crossover.c.  For f(x) = sum_i sin(x_i) x_{i+1} + log1p(S), S = sum_i x_i^2 (indices mod n):
 *   g_i = cos(x_i) x_{i+1} + sin(x_{i-1}) + 2 x_i / (1 + S).
 */
#ifndef DUAL_BENCH_GRAD_REF_H
#define DUAL_BENCH_GRAD_REF_H

#include <stdint.h>

/* g[n] at one point x[n] (n >= 2). */
void grad_ref_gradient(int32_t n, const double *x, double *g);

/* The worst difference of the gradients g (point b's at g + b * ldg) of the points
 * [first, first + count) of x ([B][n], packed) from the formula, each point's differences scaled
 * by its largest reference entry (the tools sum the same terms in different orders, so entries
 * that cancel differ by rounding relative to the row, not to themselves).  NaN becomes +inf. */
double grad_ref_worst(int32_t n, const double *x, const double *g, int64_t ldg, int64_t first,
                      int64_t count);

#endif /* DUAL_BENCH_GRAD_REF_H */
