/* hess_ref.c — hess value, gradient and Hessian by hand (see hess_ref.h).  With
 * u_i = x_{i+1} - x_i^2, g_i = -400 x_i u_i - 2 (1 - x_i) (i < 15) + 200 u_{i-1} (i > 0) and
 * H_ii = 1200 x_i^2 - 400 x_{i+1} + 2 (i < 15) + 200 (i > 0), H_{i,i+1} = -400 x_i; the
 * log-sum-exp term adds the softmax s to g and diag(s) - s s^T to H. */
#include "hess_ref.h"

#include <math.h>
#include <stddef.h>

static void softmax(const double x[HESS_REF_N], double s[HESS_REF_N], double *sum) {
  double z = 0.0;
  for (int i = 0; i < HESS_REF_N; i++) {
    s[i] = exp(x[i]);
    z += s[i];
  }
  for (int i = 0; i < HESS_REF_N; i++)
    s[i] /= z;
  if (sum)
    *sum = z;
}

double hess_ref_value(const double x[HESS_REF_N]) {
  double f = 0.0, z, s[HESS_REF_N];
  for (int i = 0; i < HESS_REF_N - 1; i++) {
    double u = x[i + 1] - x[i] * x[i];
    f += 100.0 * u * u + (1.0 - x[i]) * (1.0 - x[i]);
  }
  softmax(x, s, &z);
  return f + log(z);
}

void hess_ref_gradient(const double x[HESS_REF_N], double g[HESS_REF_N]) {
  double s[HESS_REF_N];
  softmax(x, s, NULL);
  for (int i = 0; i < HESS_REF_N; i++) {
    g[i] = s[i];
    if (i < HESS_REF_N - 1)
      g[i] += -400.0 * x[i] * (x[i + 1] - x[i] * x[i]) - 2.0 * (1.0 - x[i]);
    if (i > 0)
      g[i] += 200.0 * (x[i] - x[i - 1] * x[i - 1]);
  }
}

void hess_ref_hessian(const double x[HESS_REF_N], double H[HESS_REF_N * HESS_REF_N]) {
  double s[HESS_REF_N];
  softmax(x, s, NULL);
  for (int i = 0; i < HESS_REF_N; i++)
    for (int j = 0; j < HESS_REF_N; j++)
      H[i * HESS_REF_N + j] = (i == j ? s[i] : 0.0) - s[i] * s[j];
  for (int i = 0; i < HESS_REF_N; i++) {
    if (i < HESS_REF_N - 1) {
      H[i * HESS_REF_N + i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
      H[i * HESS_REF_N + i + 1] += -400.0 * x[i];
      H[(i + 1) * HESS_REF_N + i] += -400.0 * x[i];
    }
    if (i > 0)
      H[i * HESS_REF_N + i] += 200.0;
  }
}
