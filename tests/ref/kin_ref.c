/* kin_ref.c — kin residual and analytic Jacobian (see kin_ref.h).  For reaction r,
 * rate = k exp(-E x31) x_a x_b, so d rate/d x_a = k e x_b, d rate/d x_b = k e x_a and
 * d rate/d x31 gains -E rate (all three accumulate when indices coincide); the rate's
 * partials enter rows a and b with -1 and row c with +2, on top of the diagonal -0.1. */
#include "kin_ref.h"

#include <math.h>
#include <string.h>

typedef struct {
  int a, b, c;
  double k, E;
} kin_reaction;

static kin_reaction reaction(int r) {
  kin_reaction q;
  q.a = r % 32;
  q.b = (7 * r + 3) % 32;
  q.c = (13 * r + 5) % 32;
  q.k = 1.0 + 0.01 * r;
  q.E = 0.1 * (r % 5);
  return q;
}

void kin_ref_residual(const double x[KIN_REF_N], double f[KIN_REF_N]) {
  for (int i = 0; i < KIN_REF_N; i++)
    f[i] = -0.1 * x[i];
  for (int r = 0; r < 64; r++) {
    kin_reaction q = reaction(r);
    double rate = q.k * exp(-q.E * x[31]) * x[q.a] * x[q.b];
    f[q.a] -= rate;
    f[q.b] -= rate;
    f[q.c] += 2.0 * rate;
  }
}

void kin_ref_jacobian(const double x[KIN_REF_N], double J[KIN_REF_N * KIN_REF_N]) {
  memset(J, 0, sizeof(double) * KIN_REF_N * KIN_REF_N);
  for (int i = 0; i < KIN_REF_N; i++)
    J[i * KIN_REF_N + i] = -0.1;
  for (int r = 0; r < 64; r++) {
    kin_reaction q = reaction(r);
    double e = exp(-q.E * x[31]);
    double rate = q.k * e * x[q.a] * x[q.b];
    double drate[KIN_REF_N] = {0};
    drate[q.a] += q.k * e * x[q.b];
    drate[q.b] += q.k * e * x[q.a];
    drate[31] += -q.E * rate;
    for (int j = 0; j < KIN_REF_N; j++) {
      if (drate[j] == 0.0)
        continue;
      J[q.a * KIN_REF_N + j] -= drate[j];
      J[q.b * KIN_REF_N + j] -= drate[j];
      J[q.c * KIN_REF_N + j] += 2.0 * drate[j];
    }
  }
}
