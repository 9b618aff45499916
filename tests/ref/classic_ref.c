/* classic_ref.c — the six functions of classic_ref.h (Moré, Garbow & Hillstrom 1981), by hand.
 * Each is f = sum_i r_i^2, so g = 2 sum_i r_i grad r_i and
 * H = 2 sum_i (grad r_i grad r_i^T + r_i hess r_i); each function's derivation is written above
 * its code.  Definitions and starting points are MINPACK's (objfcn/grdfcn/initpt, as in
 * fortran-lang/minpack test/test_lmder.f90).  Differences that cancel avoidably are rewritten
 * (1 - x2^i in Beale, e^-a - e^-b in Box 3-D); what cancellation is left belongs to the quantity
 * itself (a residual near a zero, an entry like 1200 x1^2 - 400 x2 + 2 near its root), whose
 * error is then a few ulps of its largest term.  Each off-diagonal Hessian entry is computed once
 * and stored twice, so H is exactly symmetric.  Compiled into dual_test_ref. */
#include "classic_ref.h"

#include <math.h>

#define TWO_PI 6.283185307179586 /* nearest double to 2 pi (= 2 * M_PI exactly) */

static void set_sym(double *H, int n, int i, int j, double v) {
  H[i * n + j] = v;
  H[j * n + i] = v;
}

/* ---- Rosenbrock, n = 2: r = (10 u, 1 - x1), u = x2 - x1^2 ---------------------------------
 * f = 100 u^2 + (1 - x1)^2
 * g = (-400 x1 u - 2 (1 - x1),  200 u)             (du/dx1 = -2 x1, du/dx2 = 1)
 * H11 = 200 (2 x1)^2 - 400 u + 2 = 1200 x1^2 - 400 x2 + 2,  H12 = -400 x1,  H22 = 200 */
static const char rosenbrock_src[] =
    "# Rosenbrock (More, Garbow & Hillstrom 1981, problem 1), n = 2\n"
    "input x[2]\n"
    "output f = 100 * square(x[1] - square(x[0])) + square(1 - x[0])\n";
static const double rosenbrock_x0[2] = {-1.2, 1.0};

static double rosenbrock_value(const double *x) {
  double u = x[1] - x[0] * x[0];
  return 100.0 * (u * u) + (1.0 - x[0]) * (1.0 - x[0]);
}

static void rosenbrock_gradient(const double *x, double *g) {
  double u = x[1] - x[0] * x[0];
  g[0] = -400.0 * x[0] * u - 2.0 * (1.0 - x[0]);
  g[1] = 200.0 * u;
}

static void rosenbrock_hessian(const double *x, double *H) {
  H[0] = 1200.0 * x[0] * x[0] - 400.0 * x[1] + 2.0;
  set_sym(H, 2, 0, 1, -400.0 * x[0]);
  H[3] = 200.0;
}

/* ---- Powell singular, n = 4: r = (a, sqrt5 b, c^2, sqrt10 d^2) -----------------------------
 * a = x1 + 10 x2, b = x3 - x4, c = x2 - 2 x3, d = x1 - x4;  f = a^2 + 5 b^2 + c^4 + 10 d^4
 * with grad a = (1, 10, 0, 0), grad b = (0, 0, 1, -1), grad c = (0, 1, -2, 0),
 * grad d = (1, 0, 0, -1):
 * g = 2a grad a + 10 b grad b + 4 c^3 grad c + 40 d^3 grad d
 *   = (2a + 40 d^3, 20 a + 4 c^3, 10 b - 8 c^3, -10 b - 40 d^3)
 * H = 2 grad a grad a^T + 10 grad b grad b^T + 12 c^2 grad c grad c^T + 120 d^2 grad d grad d^T:
 * H11 = 2 + 120 d^2, H12 = 20, H14 = -120 d^2, H22 = 200 + 12 c^2, H23 = -24 c^2,
 * H33 = 10 + 48 c^2, H34 = -10, H44 = 10 + 120 d^2, H13 = H24 = 0 */
static const char powell_src[] =
    "# Powell singular (More, Garbow & Hillstrom 1981, problem 13), n = 4\n"
    "input x[4]\n"
    "output f = square(x[0] + 10 * x[1]) + 5 * square(x[2] - x[3]) +\n"
    "           square(square(x[1] - 2 * x[2])) + 10 * square(square(x[0] - x[3]))\n";
static const double powell_x0[4] = {3.0, -1.0, 0.0, 1.0};

static double powell_value(const double *x) {
  double a = x[0] + 10.0 * x[1], b = x[2] - x[3], c = x[1] - 2.0 * x[2], d = x[0] - x[3];
  return a * a + 5.0 * (b * b) + (c * c) * (c * c) + 10.0 * ((d * d) * (d * d));
}

static void powell_gradient(const double *x, double *g) {
  double a = x[0] + 10.0 * x[1], b = x[2] - x[3], c = x[1] - 2.0 * x[2], d = x[0] - x[3];
  double c3 = c * c * c, d3 = d * d * d;
  g[0] = 2.0 * a + 40.0 * d3;
  g[1] = 20.0 * a + 4.0 * c3;
  g[2] = 10.0 * b - 8.0 * c3;
  g[3] = -10.0 * b - 40.0 * d3;
}

static void powell_hessian(const double *x, double *H) {
  double c = x[1] - 2.0 * x[2], d = x[0] - x[3];
  double c2 = c * c, d2 = d * d;
  H[0] = 2.0 + 120.0 * d2;
  H[5] = 200.0 + 12.0 * c2;
  H[10] = 10.0 + 48.0 * c2;
  H[15] = 10.0 + 120.0 * d2;
  set_sym(H, 4, 0, 1, 20.0);
  set_sym(H, 4, 0, 2, 0.0);
  set_sym(H, 4, 0, 3, -120.0 * d2);
  set_sym(H, 4, 1, 2, -24.0 * c2);
  set_sym(H, 4, 1, 3, 0.0);
  set_sym(H, 4, 2, 3, -10.0);
}

/* ---- Wood, n = 4: r = (10 s, 1 - x1, sqrt90 t, 1 - x3, sqrt10 p, m / sqrt10) ---------------
 * s = x2 - x1^2, t = x4 - x3^2, p = x2 + x4 - 2, m = x2 - x4
 * f = 100 s^2 + (1 - x1)^2 + 90 t^2 + (1 - x3)^2 + 10 p^2 + 0.1 m^2
 * (= MINPACK's 10.1 ((x2-1)^2 + (x4-1)^2) + 19.8 (x2-1)(x4-1) for the last two terms)
 * g = (-400 x1 s - 2 (1 - x1),  200 s + 20 p + 0.2 m,
 *      -360 x3 t - 2 (1 - x3),  180 t + 20 p - 0.2 m)
 * H11 = 1200 x1^2 - 400 x2 + 2, H12 = -400 x1, H22 = 200 + 20 + 0.2 = 220.2, H24 = 20 - 0.2 = 19.8,
 * H33 = 1080 x3^2 - 360 x4 + 2, H34 = -360 x3, H44 = 180 + 20 + 0.2 = 200.2, others 0 */
static const char wood_src[] =
    "# Wood (More, Garbow & Hillstrom 1981, problem 14), n = 4\n"
    "input x[4]\n"
    "output f = 100 * square(x[1] - square(x[0])) + square(1 - x[0]) +\n"
    "           90 * square(x[3] - square(x[2])) + square(1 - x[2]) +\n"
    "           10 * square(x[1] + x[3] - 2) + 0.1 * square(x[1] - x[3])\n";
static const double wood_x0[4] = {-3.0, -1.0, -3.0, -1.0};

static double wood_value(const double *x) {
  double s = x[1] - x[0] * x[0], t = x[3] - x[2] * x[2];
  double p = x[1] + x[3] - 2.0, m = x[1] - x[3];
  return 100.0 * (s * s) + (1.0 - x[0]) * (1.0 - x[0]) + 90.0 * (t * t) +
         (1.0 - x[2]) * (1.0 - x[2]) + 10.0 * (p * p) + 0.1 * (m * m);
}

static void wood_gradient(const double *x, double *g) {
  double s = x[1] - x[0] * x[0], t = x[3] - x[2] * x[2];
  double p = x[1] + x[3] - 2.0, m = x[1] - x[3];
  g[0] = -400.0 * x[0] * s - 2.0 * (1.0 - x[0]);
  g[1] = 200.0 * s + 20.0 * p + 0.2 * m;
  g[2] = -360.0 * x[2] * t - 2.0 * (1.0 - x[2]);
  g[3] = 180.0 * t + 20.0 * p - 0.2 * m;
}

static void wood_hessian(const double *x, double *H) {
  H[0] = 1200.0 * x[0] * x[0] - 400.0 * x[1] + 2.0;
  H[5] = 220.2;
  H[10] = 1080.0 * x[2] * x[2] - 360.0 * x[3] + 2.0;
  H[15] = 200.2;
  set_sym(H, 4, 0, 1, -400.0 * x[0]);
  set_sym(H, 4, 0, 2, 0.0);
  set_sym(H, 4, 0, 3, 0.0);
  set_sym(H, 4, 1, 2, 0.0);
  set_sym(H, 4, 1, 3, 19.8);
  set_sym(H, 4, 2, 3, -360.0 * x[2]);
}

/* ---- Beale, n = 2: r_i = y_i - x1 s_i, s_i = 1 - x2^i, i = 1..3, y = (1.5, 2.25, 2.625) -----
 * s_i is formed as (1 - x2)(1 + x2 + ... + x2^(i-1)), which does not cancel near x2 = 1 (nor
 * near x2 = -1, where 1 + x2 is exact).  With p_i = x2^(i-1):
 * grad r_i = (-s_i, i x1 p_i);  hess r_i = [0, i p_i; i p_i, i (i-1) x1 x2^(i-2)]
 * g = (-2 sum s_i r_i,  2 x1 sum i p_i r_i)
 * H11 = 2 sum s_i^2
 * H12 = 2 sum (-s_i i x1 p_i + r_i i p_i) = 2 sum i p_i (y_i - 2 x1 s_i)
 * H22 = 2 sum (i^2 x1^2 p_i^2 + r_i i (i-1) x1 x2^(i-2))
 *     = 2 x1 (x1 (1 + 4 x2^2 + 9 x2^4) + 2 r_2 + 6 x2 r_3) */
static const char beale_src[] =
    "# Beale (More, Garbow & Hillstrom 1981, problem 5), n = 2\n"
    "# 1 - x2^i written as (1 - x2)(1 + ... + x2^(i-1)): no cancellation near x2 = 1\n"
    "input x[2]\n"
    "let u = 1 - x[1]\n"
    "let s2 = u * (1 + x[1])\n"
    "let s3 = u * (1 + x[1] * (1 + x[1]))\n"
    "output f = square(1.5 - x[0] * u) + square(2.25 - x[0] * s2) + square(2.625 - x[0] * s3)\n";
static const double beale_x0[2] = {1.0, 1.0};
static const double beale_y[3] = {1.5, 2.25, 2.625};

static void beale_parts(const double *x, double s[3], double p[3], double r[3]) {
  double u = 1.0 - x[1];
  s[0] = u;
  s[1] = u * (1.0 + x[1]);
  s[2] = u * (1.0 + x[1] * (1.0 + x[1]));
  p[0] = 1.0;
  p[1] = x[1];
  p[2] = x[1] * x[1];
  for (int i = 0; i < 3; i++)
    r[i] = beale_y[i] - x[0] * s[i];
}

static double beale_value(const double *x) {
  double s[3], p[3], r[3];
  beale_parts(x, s, p, r);
  return r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
}

static void beale_gradient(const double *x, double *g) {
  double s[3], p[3], r[3];
  beale_parts(x, s, p, r);
  g[0] = -2.0 * (s[0] * r[0] + s[1] * r[1] + s[2] * r[2]);
  g[1] = 2.0 * x[0] * (p[0] * r[0] + 2.0 * p[1] * r[1] + 3.0 * p[2] * r[2]);
}

static void beale_hessian(const double *x, double *H) {
  double s[3], p[3], r[3], h12 = 0.0;
  beale_parts(x, s, p, r);
  for (int i = 0; i < 3; i++)
    h12 += (i + 1) * p[i] * (beale_y[i] - 2.0 * x[0] * s[i]);
  H[0] = 2.0 * (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  set_sym(H, 2, 0, 1, 2.0 * h12);
  H[3] = 2.0 * x[0] * (x[0] * (1.0 + 4.0 * p[2] + 9.0 * (p[2] * p[2])) + 2.0 * r[1] +
                       6.0 * x[1] * r[2]);
}

/* ---- Helical valley, n = 3: r = (10 T, 10 R, x3) ---------------------------------------------
 * theta = atan(x2 / x1) / (2 pi), + 1/2 when x1 < 0 (the constant drops out of every derivative;
 * at x1 = 0 the expression gives atan(+-inf) = +-pi/2, MINPACK's sign(1/4, x2) for x1 = +0);
 * T = x3 - 10 theta, rho = hypot(x1, x2), R = rho - 1, q = x1^2 + x2^2 = rho^2.
 * f = 100 T^2 + 100 R^2 + x3^2
 * d theta = (-x2, x1, 0) / (2 pi q), so with a = 10 / (2 pi q) = 5 / (pi q):
 * grad T = (a x2, -a x1, 1),  grad rho = (x1, x2, 0) / rho
 * hess T (x1, x2 block) = (a / q) [-2 x1 x2, x1^2 - x2^2; x1^2 - x2^2, 2 x1 x2]
 * hess rho = [x2^2, -x1 x2; -x1 x2, x1^2] / rho^3
 * g = 200 T grad T + 200 R grad rho + (0, 0, 2 x3)
 *   = (200 (a x2 T + x1 R / rho),  200 (-a x1 T + x2 R / rho),  200 T + 2 x3)
 * grad rho grad rho^T + R hess rho = [1 - x2^2/rho^3, x1 x2/rho^3; x1 x2/rho^3, 1 - x1^2/rho^3]
 * (using R / rho^3 = 1/q - 1/rho^3), hence
 * H11 = 200 (a^2 x2^2 - 2 a T x1 x2 / q + 1 - x2^2 / (q rho))
 * H12 = 200 (-a^2 x1 x2 + a T (x1 - x2)(x1 + x2) / q + x1 x2 / (q rho))
 * H22 = 200 (a^2 x1^2 + 2 a T x1 x2 / q + 1 - x1^2 / (q rho))
 * H13 = 200 a x2,  H23 = -200 a x1,  H33 = 200 + 2 = 202 */
static const char helical_src[] =
    "# Helical valley (More, Garbow & Hillstrom 1981, problem 7), n = 3\n"
    "input x[3]\n"
    "const two_pi = 6.283185307179586\n"
    "let theta = atan(x[1] / x[0]) / two_pi + (x[0] < 0 ? 0.5 : 0)\n"
    "output f = 100 * square(x[2] - 10 * theta) + 100 * square(hypot(x[0], x[1]) - 1) +\n"
    "           square(x[2])\n";
static const double helical_x0[3] = {-1.0, 0.0, 0.0};

static double helical_theta(const double *x) {
  return atan(x[1] / x[0]) / TWO_PI + (x[0] < 0.0 ? 0.5 : 0.0);
}

static double helical_value(const double *x) {
  double T = x[2] - 10.0 * helical_theta(x), R = hypot(x[0], x[1]) - 1.0;
  return 100.0 * (T * T) + 100.0 * (R * R) + x[2] * x[2];
}

static void helical_gradient(const double *x, double *g) {
  double T = x[2] - 10.0 * helical_theta(x), rho = hypot(x[0], x[1]), R = rho - 1.0;
  double q = x[0] * x[0] + x[1] * x[1], a = 10.0 / (TWO_PI * q), Rr = R / rho;
  g[0] = 200.0 * (a * x[1] * T + x[0] * Rr);
  g[1] = 200.0 * (-a * x[0] * T + x[1] * Rr);
  g[2] = 200.0 * T + 2.0 * x[2];
}

static void helical_hessian(const double *x, double *H) {
  double T = x[2] - 10.0 * helical_theta(x), rho = hypot(x[0], x[1]);
  double q = x[0] * x[0] + x[1] * x[1], a = 10.0 / (TWO_PI * q);
  double qr = q * rho, aTq = a * T / q, x12 = x[0] * x[1];
  H[0] = 200.0 * (a * a * (x[1] * x[1]) - 2.0 * aTq * x12 + (1.0 - x[1] * x[1] / qr));
  H[4] = 200.0 * (a * a * (x[0] * x[0]) + 2.0 * aTq * x12 + (1.0 - x[0] * x[0] / qr));
  H[8] = 202.0;
  set_sym(H, 3, 0, 1,
          200.0 * (-a * a * x12 + aTq * ((x[0] - x[1]) * (x[0] + x[1])) + x12 / qr));
  set_sym(H, 3, 0, 2, 200.0 * a * x[1]);
  set_sym(H, 3, 1, 2, -200.0 * a * x[0]);
}

/* ---- Box three-dimensional, n = 3, m = 10: t_i = i / 10, i = 1..10 ---------------------------
 * r_i = e^(-t x1) - e^(-t x2) - x3 c_i,  c_i = e^(-t) - e^(-10 t) = e^(-t) - e^(-i)
 * e^(-t x1) - e^(-t x2) is formed as E2 expm1(t (x2 - x1)), with E1 = e^(-t x1), E2 = e^(-t x2):
 * no cancellation near x1 = x2 (the minimizers (a, a, 0) lie there).
 * grad r_i = (-t E1, t E2, -c_i);  hess r_i = diag(t^2 E1, -t^2 E2, 0)
 * g = 2 sum r_i grad r_i = (-2 sum t E1 r, 2 sum t E2 r, -2 sum c r)
 * H11 = 2 sum t^2 E1 (E1 + r),  H22 = 2 sum t^2 E2 (E2 - r),  H33 = 2 sum c^2,
 * H12 = -2 sum t^2 E1 E2,  H13 = 2 sum t E1 c,  H23 = -2 sum t E2 c */
static const char box3d_src[] =
    "# Box three-dimensional (More, Garbow & Hillstrom 1981, problem 12), n = 3, m = 10\n"
    "# e^(-t x1) - e^(-t x2) written as e^(-t x2) expm1(t (x2 - x1)): no cancellation at x1 = x2\n"
    "input x[3]\n"
    "output f = 0\n"
    "for i in 1..11 {\n"
    "  let t = i / 10\n"
    "  f += square(exp(-t * x[1]) * expm1(t * (x[1] - x[0])) - x[2] * (exp(-t) - exp(-i)))\n"
    "}\n";
static const double box3d_x0[3] = {0.0, 10.0, 20.0};

/* t, c, E1, E2 and r of residual i (1..10). */
static void box3d_residual(const double *x, int i, double *t, double *c, double *E1, double *E2,
                           double *r) {
  *t = i / 10.0;
  *c = exp(-*t) - exp(-(double)i);
  *E1 = exp(-*t * x[0]);
  *E2 = exp(-*t * x[1]);
  *r = *E2 * expm1(*t * (x[1] - x[0])) - x[2] * *c;
}

static double box3d_value(const double *x) {
  double f = 0.0, t, c, E1, E2, r;
  for (int i = 1; i <= 10; i++) {
    box3d_residual(x, i, &t, &c, &E1, &E2, &r);
    f += r * r;
  }
  return f;
}

static void box3d_gradient(const double *x, double *g) {
  double t, c, E1, E2, r;
  g[0] = g[1] = g[2] = 0.0;
  for (int i = 1; i <= 10; i++) {
    box3d_residual(x, i, &t, &c, &E1, &E2, &r);
    g[0] -= 2.0 * t * E1 * r;
    g[1] += 2.0 * t * E2 * r;
    g[2] -= 2.0 * c * r;
  }
}

static void box3d_hessian(const double *x, double *H) {
  double t, c, E1, E2, r, h11 = 0, h22 = 0, h33 = 0, h12 = 0, h13 = 0, h23 = 0;
  for (int i = 1; i <= 10; i++) {
    box3d_residual(x, i, &t, &c, &E1, &E2, &r);
    h11 += t * t * E1 * (E1 + r);
    h22 += t * t * E2 * (E2 - r);
    h33 += c * c;
    h12 -= t * t * E1 * E2;
    h13 += t * E1 * c;
    h23 -= t * E2 * c;
  }
  H[0] = 2.0 * h11;
  H[4] = 2.0 * h22;
  H[8] = 2.0 * h33;
  set_sym(H, 3, 0, 1, 2.0 * h12);
  set_sym(H, 3, 0, 2, 2.0 * h13);
  set_sym(H, 3, 1, 2, 2.0 * h23);
}

/* ---- the table ------------------------------------------------------------------------------ */
const classic_fn classic_fns[] = {
    {"rosenbrock", 2, rosenbrock_src, rosenbrock_value, rosenbrock_gradient, rosenbrock_hessian,
     rosenbrock_x0},
    {"powell_singular", 4, powell_src, powell_value, powell_gradient, powell_hessian, powell_x0},
    {"wood", 4, wood_src, wood_value, wood_gradient, wood_hessian, wood_x0},
    {"beale", 2, beale_src, beale_value, beale_gradient, beale_hessian, beale_x0},
    {"helical_valley", 3, helical_src, helical_value, helical_gradient, helical_hessian,
     helical_x0},
    {"box3d", 3, box3d_src, box3d_value, box3d_gradient, box3d_hessian, box3d_x0},
};
const int classic_fn_count = (int)(sizeof classic_fns / sizeof classic_fns[0]);
