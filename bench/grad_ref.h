/*
 * grad_ref.h — the grad workload's gradient by its hand-derived formula (BENCHMARKS.md "grad"),
 * the reference every tool's gradient is checked against in bench_cpu_grad.c, bench_gpu.c and
 * bench_crossover.c.  For f(x) = sum_i sin(x_i) x_{i+1} + log1p(S), S = sum_i x_i^2 (indices mod n):
 *   g_i = cos(x_i) x_{i+1} + sin(x_{i-1}) + 2 x_i / (1 + S),
 * and its Hessian-vector product, from the second partials d2/dx_i^2 = -sin(x_i) x_{i+1},
 * d2/dx_i dx_{i+1} = cos(x_i) (the ring), 2 delta_ij / (1 + S) - 4 x_i x_j / (1 + S)^2 (the norm):
 *   (H v)_i = -sin(x_i) x_{i+1} v_i + cos(x_i) v_{i+1} + cos(x_{i-1}) v_{i-1}
 *             + 2 v_i / (1 + S) - 4 x_i (x . v) / (1 + S)^2.
 */
#ifndef DUAL_BENCH_GRAD_REF_H
#define DUAL_BENCH_GRAD_REF_H

#include <stdint.h>

/* g[n] at one point x[n] (n >= 2). */
void grad_ref_gradient(int32_t n, const double *x, double *g);

/* (H v)[n] at one point x[n] along v[n] (n >= 2). */
void grad_ref_hvp(int32_t n, const double *x, const double *v, double *hv);

/* The worst difference of the gradients g (point b's at g + b * ldg) of the points
 * [first, first + count) of x ([B][n], packed) from the formula, each point's differences scaled
 * by its largest reference entry (the tools sum the same terms in different orders, so entries
 * that cancel differ by rounding relative to the row, not to themselves).  NaN becomes +inf. */
double grad_ref_worst(int32_t n, const double *x, const double *g, int64_t ldg, int64_t first,
                      int64_t count);

/* The same measure for Hessian-vector products hv (point b's at hv + b * ldh) along v ([B][n]). */
double grad_ref_hvp_worst(int32_t n, const double *x, const double *v, const double *hv, int64_t ldh,
                          int64_t first, int64_t count);

#endif /* DUAL_BENCH_GRAD_REF_H */
