/*
 * solve_systems.c — kin_steady and rob3 by hand (solve_systems.h): the same arithmetic as the
 * programs, the Jacobians derived term by term.
 */
#include "solve_systems.h"

#include <math.h>
#include <string.h>

/* a uniform number in [0, 1) from (b, k): splitmix64 */
static double unit(int64_t b, int k) {
  uint64_t z = (uint64_t)b * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

static void kin_residual(const double *x, const double *s, double *f, double *J) {
  enum { N = 32 };
  for (int i = 0; i < N; ++i) f[i] = s[i] - 0.1 * x[i];
  if (J != NULL) {
    memset(J, 0, sizeof(double) * N * N);
    for (int i = 0; i < N; ++i) J[i * N + i] = -0.1;
  }
  for (int r = 0; r < 64; ++r) {
    const int a = r % 32, b = (7 * r + 3) % 32, c = (13 * r + 5) % 32;
    const double E = 0.1 * (r % 5), k = (1 + 0.01 * r) * exp(-E * x[31]);
    const double rate = k * x[a] * x[b];
    f[a] -= rate, f[b] -= rate, f[c] += 2 * rate;
    if (J == NULL) continue;
    double d[N] = {0}; /* d rate / d x */
    d[a] += k * x[b], d[b] += k * x[a], d[31] += -E * rate;
    for (int j = 0; j < N; ++j) {
      if (d[j] == 0.0) continue;
      J[a * N + j] -= d[j], J[b * N + j] -= d[j], J[c * N + j] += 2 * d[j];
    }
  }
}

static void kin_cell(int64_t b, double *s, double *x0) {
  for (int i = 0; i < 32; ++i) {
    s[i] = 0.05 + 0.1 * unit(b, i);
    x0[i] = 0.3 * (0.7 + 0.6 * unit(b, 100 + i)); /* the steady states lie near 0.2 - 0.4 */
  }
}

static void rob_residual(const double *y, const double *p, double *f, double *J) {
  const double k1 = p[0], k2 = p[1], k3 = p[2], s = p[3];
  f[0] = s - k1 * y[0] + k3 * y[1] * y[2] - 0.1 * y[0];
  f[1] = k1 * y[0] - k2 * y[1] * y[1] - k3 * y[1] * y[2] - 0.1 * y[1];
  f[2] = k2 * y[1] * y[1] - 0.1 * y[2];
  if (J == NULL) return;
  const double j[9] = {-k1 - 0.1, k3 * y[2], k3 * y[1],
                       k1, -2 * k2 * y[1] - k3 * y[2] - 0.1, -k3 * y[1],
                       0, 2 * k2 * y[1], -0.1};
  memcpy(J, j, sizeof j);
}

static void rob_cell(int64_t b, double *p, double *y0) {
  p[0] = 0.04 * (0.5 + 1.5 * unit(b, 0)), p[1] = 3e7 * (0.5 + 1.5 * unit(b, 1));
  p[2] = 1e4 * (0.5 + 1.5 * unit(b, 2)), p[3] = 0.5 + unit(b, 3);
  /* near the steady state: y0 ~ s / (k1 + 0.1) mostly, y1 small, y2 the rest */
  const double m = p[3] / 0.1;
  y0[0] = 0.8 * m * (0.8 + 0.4 * unit(b, 4)), y0[1] = 1e-5 * (0.5 + unit(b, 5)), y0[2] = 0.2 * m * (0.8 + 0.4 * unit(b, 6));
}

/* Bratu on N interior points: F_i = (x_{i-1} - 2 x_i + x_{i+1}) (N + 1)^2 + lam exp(x_i), x_0 =
 * x_{N+1} = 0; J tridiagonal. */
static void bratu_residual(int N, const double *x, const double *p, double *f, double *J) {
  const double h2 = (double)((N + 1) * (N + 1)), lam = p[0];
  for (int i = 0; i < N; ++i) {
    const double l = i > 0 ? x[i - 1] : 0.0, r = i < N - 1 ? x[i + 1] : 0.0;
    f[i] = (l - 2 * x[i] + r) * h2 + lam * exp(x[i]);
  }
  if (J == NULL) return;
  memset(J, 0, sizeof(double) * (size_t)(N * N));
  for (int i = 0; i < N; ++i) {
    J[i * N + i] = -2 * h2 + lam * exp(x[i]);
    if (i > 0) J[i * N + i - 1] = h2;
    if (i < N - 1) J[i * N + i + 1] = h2;
  }
}

/* lam in [0.5, 3] (the lower branch; the fold is at 3.51); the start lam t (1 - t) / 2 (the
 * small-lam solution) moved by up to +-30 % per component. */
static void bratu_cell(int N, int64_t b, double *p, double *x0) {
  p[0] = 0.5 + 2.5 * unit(b, 0);
  for (int i = 0; i < N; ++i) {
    const double t = (double)(i + 1) / (N + 1);
    x0[i] = 0.5 * p[0] * t * (1 - t) * (0.7 + 0.6 * unit(b, 1 + i));
  }
}

static void bratu15_residual(const double *x, const double *p, double *f, double *J) { bratu_residual(15, x, p, f, J); }
static void bratu15_cell(int64_t b, double *p, double *x0) { bratu_cell(15, b, p, x0); }
static void bratu48_residual(const double *x, const double *p, double *f, double *J) { bratu_residual(48, x, p, f, J); }
static void bratu48_cell(int64_t b, double *p, double *x0) { bratu_cell(48, b, p, x0); }

static void bratu64_residual(const double *x, const double *p, double *f, double *J) { bratu_residual(64, x, p, f, J); }
static void bratu64_cell(int64_t b, double *p, double *x0) { bratu_cell(64, b, p, x0); }

const solve_system solve_bratu15 = {"bratu15", "bratu15.db", 15, 1, bratu15_residual, bratu15_cell};
const solve_system solve_bratu48 = {"bratu48", "bratu48.db", 48, 1, bratu48_residual, bratu48_cell};
const solve_system solve_bratu64 = {"bratu64", "bratu64.db", 64, 1, bratu64_residual, bratu64_cell};
const solve_system solve_kin_steady = {"kin_steady", "kin_steady.db", 32, 32, kin_residual, kin_cell};
const solve_system solve_rob3 = {"rob3", "rob3.db", 3, 4, rob_residual, rob_cell};
