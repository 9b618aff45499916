/*
 * mgh_lsq.c — the MGH least-squares problems 1–18 as program text (mgh_lsq.h): MINPACK's ssqfcn
 * residuals term by term, the data sets (Bard, Kowalik–Osborne, Meyer, Osborne 1 and 2) as
 * constants.
 */
#include "mgh_lsq.h"
#include "program_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const double bard_y[15] = {0.14, 0.18, 0.22, 0.25, 0.29, 0.32, 0.35, 0.39,
                                  0.37, 0.58, 0.73, 0.96, 1.34, 2.10, 4.39};
static const double kow_v[11] = {4, 2, 1, 0.5, 0.25, 0.167, 0.125, 0.1, 0.0833, 0.0714, 0.0625};
static const double kow_y[11] = {0.1957, 0.1947, 0.1735, 0.16, 0.0844, 0.0627,
                                 0.0456, 0.0342, 0.0323, 0.0235, 0.0246};
static const double meyer_y[16] = {34780, 28610, 23650, 19630, 16370, 13720, 11540, 9744,
                                   8261,  7030,  6005,  5147,  4427,  3820,  3307,  2872};
static const double osb1_y[33] = {0.844, 0.908, 0.932, 0.936, 0.925, 0.908, 0.881, 0.850, 0.818,
                                  0.784, 0.751, 0.718, 0.685, 0.658, 0.628, 0.603, 0.580, 0.558,
                                  0.538, 0.522, 0.506, 0.490, 0.478, 0.467, 0.457, 0.448, 0.438,
                                  0.431, 0.424, 0.420, 0.414, 0.411, 0.406};
static const double osb2_y[65] = {
    1.366, 1.191, 1.112, 1.013, 0.991, 0.885, 0.831, 0.847, 0.786, 0.725, 0.746, 0.679, 0.608,
    0.655, 0.616, 0.606, 0.602, 0.626, 0.651, 0.724, 0.649, 0.649, 0.694, 0.644, 0.624, 0.661,
    0.612, 0.558, 0.533, 0.495, 0.500, 0.423, 0.395, 0.375, 0.372, 0.391, 0.396, 0.405, 0.428,
    0.429, 0.523, 0.562, 0.607, 0.653, 0.672, 0.708, 0.633, 0.668, 0.645, 0.632, 0.591, 0.559,
    0.597, 0.625, 0.739, 0.710, 0.729, 0.720, 0.636, 0.581, 0.428, 0.292, 0.162, 0.098, 0.054};

static void linear_full_rank(program_text *t, int n, int m) {
  pt_put(t, "let tm = 2 * sum(j in 0..%d, x[j]) / %d + 1\n", n, m);
  for (int i = 0; i < m; ++i) {
    if (i < n) pt_put(t, "f[%d] = x[%d] - tm\n", i, i);
    else pt_put(t, "f[%d] = -tm\n", i);
  }
}

static void linear_rank1(program_text *t, int n, int m) {
  pt_put(t, "let s = sum(j in 0..%d, (j + 1) * x[j])\n", n);
  for (int i = 0; i < m; ++i) pt_put(t, "f[%d] = %d * s - 1\n", i, i + 1);
}

static void linear_rank1_zeros(program_text *t, int n, int m) {
  pt_put(t, "let s = sum(j in 1..%d, (j + 1) * x[j])\n", n - 1);
  for (int i = 0; i < m - 1; ++i) pt_put(t, "f[%d] = %d * s - 1\n", i, i);
  pt_put(t, "f[%d] = -1 + 0 * x[0]\n", m - 1);
}

static void watson(program_text *t, int n) {
  for (int i = 1; i <= 29; ++i) {
    const double d = i / 29.0;
    pt_put(t, "let a%d = 0\nlet b%d = 0\n", i, i);
    double dx = 1.0;
    for (int j = 1; j < n; ++j, dx *= d) pt_put(t, "a%d += %.17g * x[%d]\n", i, j * dx, j);
    dx = 1.0;
    for (int j = 0; j < n; ++j, dx *= d) pt_put(t, "b%d += %.17g * x[%d]\n", i, dx, j);
    pt_put(t, "f[%d] = a%d - b%d^2 - 1\n", i - 1, i, i);
  }
  pt_put(t, "f[29] = x[0]\nf[30] = x[1] - x[0]^2 - 1\n");
}


char *mgh_lsq_source(int nprob, int n, int m) {
  program_text t = {NULL, 0, 0};
  pt_put(&t, "# MGH least squares, problem %d, n = %d, m = %d\ninput x[%d]\noutput f[%d]\n", nprob, n, m, n, m);
  switch (nprob) {
  case 1: linear_full_rank(&t, n, m); break;
  case 2: linear_rank1(&t, n, m); break;
  case 3: linear_rank1_zeros(&t, n, m); break;
  case 4: pt_put(&t, "f[0] = 10 * (x[1] - x[0]^2)\nf[1] = 1 - x[0]\n"); break;
  case 5: pt_helical_valley(&t); break;
  case 6: pt_powell_singular(&t); break;
  case 7:
    pt_put(&t, "f[0] = -13 + x[0] + ((5 - x[1]) * x[1] - 2) * x[1]\n"
            "f[1] = -29 + x[0] + ((1 + x[1]) * x[1] - 14) * x[1]\n");
    break;
  case 8:
    for (int i = 1; i <= 15; ++i) {
      const int t2 = 16 - i, t3 = i > 8 ? t2 : i;
      pt_put(&t, "f[%d] = %.17g - (x[0] + %d / (x[1] * %d + x[2] * %d))\n", i - 1, bard_y[i - 1], i, t2, t3);
    }
    break;
  case 9:
    for (int i = 0; i < 11; ++i) {
      const double v = kow_v[i];
      pt_put(&t, "f[%d] = %.17g - x[0] * (%.17g * (%.17g + x[1])) / (%.17g * (%.17g + x[2]) + x[3])\n", i,
          kow_y[i], v, v, v, v);
    }
    break;
  case 10:
    for (int i = 1; i <= 16; ++i)
      pt_put(&t, "f[%d] = x[0] * exp(x[1] / (%d + x[2])) - %.17g\n", i - 1, 5 * i + 45, meyer_y[i - 1]);
    break;
  case 11: watson(&t, n); break;
  case 12:
    for (int i = 1; i <= 10; ++i) {
      const double ti = i / 10.0;
      pt_put(&t, "f[%d] = exp(-%.17g * x[0]) - exp(-%.17g * x[1]) + %.17g * x[2]\n", i - 1, ti, ti,
          exp(-(double)i) - exp(-ti));
    }
    break;
  case 13:
    for (int i = 1; i <= 10; ++i)
      pt_put(&t, "f[%d] = %d - exp(%d * x[0]) - exp(%d * x[1])\n", i - 1, 2 + 2 * i, i, i);
    break;
  case 14:
    for (int i = 1; i <= 20; ++i) {
      const double ti = i / 5.0;
      pt_put(&t, "f[%d] = (x[0] + %.17g * x[1] - %.17g)^2 + (x[2] + %.17g * x[3] - %.17g)^2\n", i - 1,
          ti, exp(ti), sin(ti), cos(ti));
    }
    break;
  case 15: pt_chebyquad(&t, n, m); break;
  case 16: pt_brown_almost_linear(&t, n); break;
  case 17:
    for (int i = 0; i < 33; ++i)
      pt_put(&t, "f[%d] = %.17g - (x[0] + x[1] * exp(-x[3] * %d) + x[2] * exp(-x[4] * %d))\n", i, osb1_y[i],
          10 * i, 10 * i);
    break;
  case 18:
    for (int i = 0; i < 65; ++i) {
      const double ti = i / 10.0;
      pt_put(&t, "f[%d] = %.17g - (x[0] * exp(-x[4] * %.17g) + x[1] * exp(-x[5] * (%.17g - x[8])^2) + "
              "x[2] * exp(-x[6] * (%.17g - x[9])^2) + x[3] * exp(-x[7] * (%.17g - x[10])^2))\n",
          i, osb2_y[i], ti, ti, ti, ti);
    }
    break;
  default: free(t.s); return NULL;
  }
  return t.s;
}

void mgh_lsq_start(int nprob, int n, double factor, double *x) {
  static const double s8[3] = {1, 1, 1}, s9[4] = {0.25, 0.39, 0.415, 0.39}, s10[3] = {0.02, 4000, 250};
  static const double s12[3] = {0, 10, 20}, s14[4] = {25, 5, -5, -1};
  static const double s17[5] = {0.5, 1.5, -1, 0.01, 0.02};
  static const double s18[11] = {1.3, 0.65, 0.65, 0.7, 0.6, 3, 5, 7, 2, 4.5, 5.5};
  for (int j = 0; j < n; ++j) {
    switch (nprob) {
    case 1: case 2: case 3: x[j] = 1.0; break;
    case 4: x[j] = j == 0 ? -1.2 : 1.0; break;
    case 5: x[j] = j == 0 ? -1.0 : 0.0; break;
    case 6: x[j] = (double[]){3, -1, 0, 1}[j]; break;
    case 7: x[j] = j == 0 ? 0.5 : -2.0; break;
    case 8: x[j] = s8[j]; break;
    case 9: x[j] = s9[j]; break;
    case 10: x[j] = s10[j]; break;
    case 11: x[j] = 0.0; break;
    case 12: x[j] = s12[j]; break;
    case 13: x[j] = j == 0 ? 0.3 : 0.4; break;
    case 14: x[j] = s14[j]; break;
    case 15: x[j] = (j + 1.0) / (n + 1); break;
    case 16: x[j] = 0.5; break;
    case 17: x[j] = s17[j]; break;
    case 18: x[j] = s18[j]; break;
    default: x[j] = 0.0;
    }
  }
  if (factor == 1.0) return;
  for (int j = 0; j < n; ++j) x[j] = nprob == 11 ? factor : factor * x[j];
}
