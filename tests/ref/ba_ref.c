/* ba_ref.c — complex-step reference for the BA residual (see ba_ref.h).  The residual is written
 * once over C99 double complex; column j of the Jacobian is Im(r(x + i h e_j)) / h with h = 1e-30,
 * which has no subtractive cancellation, so it is exact to rounding.  The rotation branch is
 * chosen on the real part of theta^2 (theta^2 > 0: Rodrigues formula; else X + r x X). */
#include "ba_ref.h"

#include <complex.h>

static void cross3(const double complex a[3], const double complex b[3], double complex out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

static void residual_c(const double complex x[BA_REF_N], const double feat[2],
                       double complex r[2]) {
  const double complex *rot = &x[0], *C = &x[3], *X = &x[11];
  const double complex f = x[6], u0 = x[7], v0 = x[8], k1 = x[9], k2 = x[10], w = x[14];
  double complex Xd[3], Xc[3], rxX[3];
  for (int i = 0; i < 3; i++)
    Xd[i] = X[i] - C[i];
  double complex theta2 = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
  if (creal(theta2) > 0.0) {
    double complex theta = csqrt(theta2);
    double complex om[3], oxX[3];
    for (int i = 0; i < 3; i++)
      om[i] = rot[i] / theta;
    cross3(om, Xd, oxX);
    double complex c = ccos(theta), s = csin(theta);
    double complex odX = om[0] * Xd[0] + om[1] * Xd[1] + om[2] * Xd[2];
    for (int i = 0; i < 3; i++)
      Xc[i] = Xd[i] * c + oxX[i] * s + om[i] * odX * (1.0 - c);
  } else {
    cross3(rot, Xd, rxX);
    for (int i = 0; i < 3; i++)
      Xc[i] = Xd[i] + rxX[i];
  }
  double complex p0 = Xc[0] / Xc[2], p1 = Xc[1] / Xc[2];
  double complex s2 = p0 * p0 + p1 * p1;
  double complex L = 1.0 + k1 * s2 + k2 * s2 * s2;
  r[0] = w * (f * L * p0 + u0 - feat[0]);
  r[1] = w * (f * L * p1 + v0 - feat[1]);
}

void ba_ref_residual(const double x[BA_REF_N], const double feat[2], double r[BA_REF_M]) {
  double complex xc[BA_REF_N], rc[2];
  for (int j = 0; j < BA_REF_N; j++)
    xc[j] = x[j];
  residual_c(xc, feat, rc);
  r[0] = creal(rc[0]);
  r[1] = creal(rc[1]);
}

void ba_ref_jacobian(const double x[BA_REF_N], const double feat[2], double r[BA_REF_M],
                     double J[BA_REF_M * BA_REF_N]) {
  const double h = 1e-30;
  double complex xc[BA_REF_N], rc[2];
  for (int j = 0; j < BA_REF_N; j++)
    xc[j] = x[j];
  for (int j = 0; j < BA_REF_N; j++) {
    xc[j] = x[j] + I * h;
    residual_c(xc, feat, rc);
    xc[j] = x[j];
    for (int i = 0; i < BA_REF_M; i++)
      J[i * BA_REF_N + j] = cimag(rc[i]) / h;
  }
  if (r)
    ba_ref_residual(x, feat, r);
}
