/*
 * grad_ref.c — the grad workload's gradient by its hand-derived formula, and the agreement
 * measure of the grad benchmarks (grad_ref.h).
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

double grad_ref_worst(int32_t n, const double *x, const double *g, int64_t ldg, int64_t first,
                      int64_t count) {
  double *ref = malloc(sizeof(double) * (size_t)n);
  if (ref == NULL) return INFINITY;
  double worst = 0.0;
  for (int64_t b = first; b < first + count; ++b) {
    grad_ref_gradient(n, x + b * n, ref);
    double scale = 0.0;
    for (int32_t i = 0; i < n; ++i) scale = fmax(scale, fabs(ref[i]));
    if (!(scale > 0.0)) scale = 1.0;
    for (int32_t i = 0; i < n; ++i) {
      const double d = fabs(g[b * ldg + i] - ref[i]) / scale;
      worst = d > worst ? d : (d == d ? worst : INFINITY);
    }
  }
  free(ref);
  return worst;
}
