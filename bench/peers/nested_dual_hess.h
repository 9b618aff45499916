/*
 * nested_dual_hess.h — the compiled C++ forward-mode peer of the hess workload (BENCHMARKS.md):
 * value, gradient and full 16 x 16 Hessian per point from the hess function written once as a
 * C++ template and evaluated on a hand-written second-order number type (nested_dual_hess.cc),
 * OpenMP over points — what a C++ user without an AD library would write to get Hessians of a
 * 16-input function.  Layouts (packed, point-major): x [B][16], f [B], g [B][16],
 * H [B][16][16] row-major, the full matrix.
 */
#ifndef DUAL_BENCH_NESTED_DUAL_HESS_H
#define DUAL_BENCH_NESTED_DUAL_HESS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The number types (nested_dual_hess.cc):
 * NESTED_HESS_TAYLOR2   second-order forward mode exploiting symmetry: value, gradient[16] and
 *                       the upper triangle of the Hessian (136 entries) per number, one pass per
 *                       point; the triangle is mirrored into H (default: fastest);
 * NESTED_HESS_DUAL_DUAL dual<dual<double, 16>, 16>: a dual number with 16 tangents whose
 *                       entries are themselves duals with 16 tangents, all 16 x 16 second-order
 *                       directions in one pass (17 x 17 doubles per number; H comes out full,
 *                       the gradient twice). */
enum { NESTED_HESS_TAYLOR2 = 0, NESTED_HESS_DUAL_DUAL = 1, NESTED_HESS_VARIANTS };

/* The hess workload with the default type (NESTED_HESS_TAYLOR2).  threads <= 0: all (OpenMP's
 * maximum).  Returns 0 (-1 for B < 0). */
int nested_hess_run(int64_t B, const double *x, double *f, double *g, double *H, int threads);

/* The same with a chosen number type (NESTED_HESS_*); -1 for an unknown one. */
int nested_hess_run_variant(int64_t B, const double *x, double *f, double *g, double *H,
                            int threads, int variant);

/* "taylor2<16> (value, gradient, upper triangle)", ...: a static string; NULL if unknown. */
const char *nested_hess_variant_name(int variant);

/* "hand-written nested forward-mode duals, g++ 12.2.0": a static string. */
const char *nested_peer_info(void);

#ifdef __cplusplus
}
#endif
#endif /* DUAL_BENCH_NESTED_DUAL_HESS_H */
