/*
 * ceres_jet.h — the Ceres Solver peer of the CPU benchmark: ba and kin Jacobians per point with
 * ceres::Jet (forward-mode dual numbers), OpenMP over points.  C interface, implemented in
 * ceres_jet.cc; included by bench/bench_cpu.c.  Array layouts are those of dual_jacobian with
 * packed leading dimensions: x [B][n], y [B][m], J [B][m][n] row-major per point.
 */
#ifndef DUAL_BENCH_CERES_JET_H
#define DUAL_BENCH_CERES_JET_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ba (BENCHMARKS.md): n = 15 active inputs x = (cam[11], X[3], w), p = 2 parameters feat[2],
 * m = 2 outputs.  x: [B][15], feat: [B][2], y: [B][2], J: [B][2][15].  threads <= 0: all. */
void ceres_ba_jacobian(int64_t B, const double *x, const double *feat, double *y, double *J,
                       int threads);

/* kin (BENCHMARKS.md): n = m = 32, no parameters.  x: [B][32], y: [B][32], J: [B][32][32]. */
void ceres_kin_jacobian(int64_t B, const double *x, double *y, double *J, int threads);

/* The values alone, in plain double (the same templated functors with T = double): used by the
 * harness to check the Ceres Jacobians against central differences.  Shapes as above. */
void ceres_ba_value(const double *x, const double *feat, double *y);
void ceres_kin_value(const double *x, double *y);

/* "Ceres 2.1.0 (header-only Jet), Eigen 3.4.0, g++ 12.2.0": a static string. */
const char *ceres_peer_info(void);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_BENCH_CERES_JET_H */
