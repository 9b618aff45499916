/* kin_ref.h — independent reference for the kin workload of BENCHMARKS.md: the 32 residuals and
 * the hand-derived analytic 32 x 32 Jacobian (row-major, J[i*32 + j] = d f_i / d x_j). */
#ifndef DUAL_TEST_KIN_REF_H
#define DUAL_TEST_KIN_REF_H

#define KIN_REF_N 32

void kin_ref_residual(const double x[KIN_REF_N], double f[KIN_REF_N]);
void kin_ref_jacobian(const double x[KIN_REF_N], double J[KIN_REF_N * KIN_REF_N]);

#endif
