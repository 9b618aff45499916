/* hess_ref.h — independent reference for the hess workload of BENCHMARKS.md (n = 16): value,
 * analytic gradient and analytic Hessian (row-major 16 x 16) of
 * f = sum_{i<15} [100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2] + log sum_{i<16} exp(x_i). */
#ifndef DUAL_TEST_HESS_REF_H
#define DUAL_TEST_HESS_REF_H

#define HESS_REF_N 16

double hess_ref_value(const double x[HESS_REF_N]);
void hess_ref_gradient(const double x[HESS_REF_N], double g[HESS_REF_N]);
void hess_ref_hessian(const double x[HESS_REF_N], double H[HESS_REF_N * HESS_REF_N]);

#endif
