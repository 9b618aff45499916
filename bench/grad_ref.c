/*
 * grad_ref.c — the grad workload's gradient and Hessian-vector product by their hand-derived
 * formulas, and the agreement measure of the grad benchmarks (grad_ref.h).
 */
#include "grad_ref.h"

#include <math.h>
#include <stdlib.h>

void grad_ref_gradient(int32_t n, const double *x, double *g) {
  double s = 0.0;
  for (int32_t i = 0; i < n; ++i) s += x[i] * x[i];
  for (int32_t i = 0; i < n; ++i)
    g[i] = cos(x[i]) * x[(i + 1) % n] + sin(x[(i + n - 1) % n]) + 2.0 * x[i] / (1.0 + s);
}

void grad_ref_hvp(int32_t n, const double *x, const double *v, double *hv) {
  double s = 0.0, xv = 0.0;
  for (int32_t i = 0; i < n; ++i) s += x[i] * x[i], xv += x[i] * v[i];
  const double q = 1.0 + s;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t up = (i + 1) % n, dn = (i + n - 1) % n;
    hv[i] = -sin(x[i]) * x[up] * v[i] + cos(x[i]) * v[up] + cos(x[dn]) * v[dn] + 2.0 * v[i] / q -
            4.0 * x[i] * xv / (q * q);
  }
}

/* The worst of one product (v == NULL: gradients, else HVPs along v) against the formula. */
static double worst_of(int32_t n, const double *x, const double *v, const double *got, int64_t ld,
                       int64_t first, int64_t count) {
  double *ref = malloc(sizeof(double) * (size_t)n);
  if (ref == NULL) return INFINITY;
  double worst = 0.0;
  for (int64_t b = first; b < first + count; ++b) {
    if (v != NULL) grad_ref_hvp(n, x + b * n, v + b * n, ref);
    else grad_ref_gradient(n, x + b * n, ref);
    double scale = 0.0;
    for (int32_t i = 0; i < n; ++i) scale = fmax(scale, fabs(ref[i]));
    if (!(scale > 0.0)) scale = 1.0;
    for (int32_t i = 0; i < n; ++i) {
      const double d = fabs(got[b * ld + i] - ref[i]) / scale;
      worst = d > worst ? d : (d == d ? worst : INFINITY);
    }
  }
  free(ref);
  return worst;
}

double grad_ref_worst(int32_t n, const double *x, const double *g, int64_t ldg, int64_t first,
                      int64_t count) {
  return worst_of(n, x, NULL, g, ldg, first, count);
}

double grad_ref_hvp_worst(int32_t n, const double *x, const double *v, const double *hv, int64_t ldh,
                          int64_t first, int64_t count) {
  return worst_of(n, x, v, hv, ldh, first, count);
}
