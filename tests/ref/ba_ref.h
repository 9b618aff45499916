/* ba_ref.h — independent reference for the BA reprojection residual of BENCHMARKS.md ("ba"):
 * residual in plain doubles and the 2 x 15 Jacobian by the complex-step method (h = 1e-30),
 * written from the formula, not from bench/programs/ba.db.  Inputs x = (cam[11], X[3], w),
 * feat[2]; J row-major, J[i*15 + j] = d r_i / d x_j. */
#ifndef DUAL_TEST_BA_REF_H
#define DUAL_TEST_BA_REF_H

#define BA_REF_N 15
#define BA_REF_M 2

void ba_ref_residual(const double x[BA_REF_N], const double feat[2], double r[BA_REF_M]);
void ba_ref_jacobian(const double x[BA_REF_N], const double feat[2], double r[BA_REF_M],
                     double J[BA_REF_M * BA_REF_N]);

#endif
