/*
 * mgh_equations.c — the MGH nonlinear-equation problems 1–14 as program text
 * (mgh_equations.h).  Each function is the residual vector of MINPACK's vecfcn, written out
 * term by term (C loops unroll what MINPACK loops over).
 */
#include "mgh_equations.h"
#include "program_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void head(program_text *t, int n) { pt_put(t, "input x[%d]\noutput f[%d]\n", n, n); }

static void rosenbrock(program_text *t) {
  head(t, 2);
  pt_put(t, "f[0] = 1 - x[0]\nf[1] = 10 * (x[1] - x[0]^2)\n");
}


static void powell_badly_scaled(program_text *t) {
  head(t, 2);
  pt_put(t, "f[0] = 10000 * x[0] * x[1] - 1\nf[1] = exp(-x[0]) + exp(-x[1]) - 1.0001\n");
}

static void wood(program_text *t) {
  head(t, 4);
  pt_put(t, "let t1 = x[1] - x[0]^2\nlet t2 = x[3] - x[2]^2\n"
         "f[0] = -200 * x[0] * t1 - (1 - x[0])\n"
         "f[1] = 200 * t1 + 20.2 * (x[1] - 1) + 19.8 * (x[3] - 1)\n"
         "f[2] = -180 * x[2] * t2 - (1 - x[2])\n"
         "f[3] = 180 * t2 + 20.2 * (x[3] - 1) + 19.8 * (x[1] - 1)\n");
}


static void watson(program_text *t, int n) {
  head(t, n);
  /* the gradient of Watson's sum of squares (29 residuals, then x0 and x1 - x0^2 - 1) */
  pt_put(t, "let g[%d]\n", n);
  for (int k = 0; k < n; ++k) pt_put(t, "g[%d] = 0\n", k);
  for (int i = 1; i <= 29; ++i) {
    const double ti = i / 29.0;
    pt_put(t, "let a%d = 0\nlet b%d = 0\n", i, i);
    double tp = 1.0;
    for (int j = 1; j < n; ++j, tp *= ti) pt_put(t, "a%d += %.17g * x[%d]\n", i, j * tp, j);
    tp = 1.0;
    for (int j = 0; j < n; ++j, tp *= ti) pt_put(t, "b%d += %.17g * x[%d]\n", i, tp, j);
    pt_put(t, "let r%d = a%d - b%d^2 - 1\n", i, i, i);
    tp = 1.0 / ti;
    for (int k = 0; k < n; ++k, tp *= ti)
      pt_put(t, "g[%d] += %.17g * (%d - %.17g * b%d) * r%d\n", k, tp, k, 2 * ti, i, i);
  }
  pt_put(t, "let t = x[1] - x[0]^2 - 1\n");
  for (int k = 0; k < n; ++k)
    pt_put(t, k == 0 ? "f[0] = g[0] + x[0] * (1 - 2 * t)\n" : k == 1 ? "f[1] = g[1] + t\n" : "f[%d] = g[%d]\n", k, k);
}



static void discrete_boundary(program_text *t, int n) {
  head(t, n);
  const double h = 1.0 / (n + 1);
  for (int k = 0; k < n; ++k) {
    pt_put(t, "f[%d] = 2 * x[%d]", k, k);
    if (k > 0) pt_put(t, " - x[%d]", k - 1);
    if (k < n - 1) pt_put(t, " - x[%d]", k + 1);
    pt_put(t, " + (x[%d] + %.17g + 1)^3 * %.17g\n", k, (k + 1) * h, h * h / 2);
  }
}

static void discrete_integral(program_text *t, int n) {
  head(t, n);
  const double h = 1.0 / (n + 1);
  pt_put(t, "let c[%d]\n", n);
  for (int j = 0; j < n; ++j) pt_put(t, "c[%d] = (x[%d] + %.17g + 1)^3\n", j, j, (j + 1) * h);
  for (int k = 0; k < n; ++k) {
    const double tk = (k + 1) * h;
    pt_put(t, "let a%d = 0\nlet b%d = 0\n", k, k);
    for (int j = 0; j <= k; ++j) pt_put(t, "a%d += %.17g * c[%d]\n", k, (j + 1) * h, j);
    for (int j = k + 1; j < n; ++j) pt_put(t, "b%d += %.17g * c[%d]\n", k, 1 - (j + 1) * h, j);
    pt_put(t, "f[%d] = x[%d] + %.17g * (%.17g * a%d + %.17g * b%d) / 2\n", k, k, h, 1 - tk, k, tk, k);
  }
}

static void trigonometric(program_text *t, int n) {
  head(t, n);
  pt_put(t, "let s = sum(j in 0..%d, cos(x[j]))\n", n);
  for (int k = 0; k < n; ++k)
    pt_put(t, "f[%d] = %d - sin(x[%d]) - s - %d * cos(x[%d])\n", k, n + k + 1, k, k + 1, k);
}

static void variably_dimensioned(program_text *t, int n) {
  head(t, n);
  pt_put(t, "let s = sum(j in 0..%d, (j + 1) * (x[j] - 1))\nlet tm = s * (1 + 2 * s^2)\n", n);
  for (int k = 0; k < n; ++k) pt_put(t, "f[%d] = x[%d] - 1 + %d * tm\n", k, k, k + 1);
}

static void broyden_tridiagonal(program_text *t, int n) {
  head(t, n);
  for (int k = 0; k < n; ++k) {
    pt_put(t, "f[%d] = (3 - 2 * x[%d]) * x[%d]", k, k, k);
    if (k > 0) pt_put(t, " - x[%d]", k - 1);
    if (k < n - 1) pt_put(t, " - 2 * x[%d]", k + 1);
    pt_put(t, " + 1\n");
  }
}

static void broyden_banded(program_text *t, int n) {
  head(t, n);
  for (int k = 0; k < n; ++k) {
    pt_put(t, "f[%d] = x[%d] * (2 + 5 * x[%d]^2) + 1", k, k, k);
    const int k1 = k - 5 > 0 ? k - 5 : 0, k2 = k + 1 < n - 1 ? k + 1 : n - 1;
    for (int j = k1; j <= k2; ++j)
      if (j != k) pt_put(t, " - x[%d] * (1 + x[%d])", j, j);
    pt_put(t, "\n");
  }
}

char *mgh_equations_source(int nprob, int n) {
  program_text t = {NULL, 0, 0};
  pt_put(&t, "# MGH nonlinear equations, problem %d, n = %d\n", nprob, n);
  switch (nprob) {
  case 1: rosenbrock(&t); break;
  case 2: head(&t, 4), pt_powell_singular(&t); break;
  case 3: powell_badly_scaled(&t); break;
  case 4: wood(&t); break;
  case 5: head(&t, 3), pt_helical_valley(&t); break;
  case 6: watson(&t, n); break;
  case 7: head(&t, n), pt_chebyquad(&t, n, n); break;
  case 8: head(&t, n), pt_brown_almost_linear(&t, n); break;
  case 9: discrete_boundary(&t, n); break;
  case 10: discrete_integral(&t, n); break;
  case 11: trigonometric(&t, n); break;
  case 12: variably_dimensioned(&t, n); break;
  case 13: broyden_tridiagonal(&t, n); break;
  case 14: broyden_banded(&t, n); break;
  default: free(t.s); return NULL;
  }
  return t.s;
}

void mgh_equations_start(int nprob, int n, double factor, double *x) {
  const double h = 1.0 / (n + 1);
  for (int j = 0; j < n; ++j) {
    const double tj = (j + 1) * h;
    switch (nprob) {
    case 1: x[j] = j == 0 ? -1.2 : 1.0; break;
    case 2: x[j] = (double[]){3, -1, 0, 1}[j]; break;
    case 3: x[j] = j == 0 ? 0.0 : 1.0; break;
    case 4: x[j] = (double[]){-3, -1, -3, -1}[j]; break;
    case 5: x[j] = j == 0 ? -1.0 : 0.0; break;
    case 6: x[j] = 0.0; break;
    case 7: x[j] = tj; break;
    case 8: x[j] = 0.5; break;
    case 9: case 10: x[j] = tj * (tj - 1); break;
    case 11: x[j] = 1.0 / n; break;
    case 12: x[j] = 1.0 - (double)(j + 1) * (1.0 / n); break; /* MINPACK: h = 1/n, 1 - j h */
    case 13: case 14: x[j] = -1.0; break;
    default: x[j] = 0.0;
    }
  }
  if (factor == 1.0) return;
  for (int j = 0; j < n; ++j) x[j] = nprob == 6 ? factor : factor * x[j];
}
