// ceres_jet.cc — the Ceres Solver peer: ba and kin Jacobians written as a Ceres user writes them,
// templated functors (like Ceres' own bundle-adjustment example) evaluated on
// ceres::Jet<double, n> with one tangent per active input, seeded by hand exactly as
// AutoDiffCostFunction does with one Jet type for all parameter blocks.  Header-only use of
// ceres/jet.h (no libceres, no glog).  The functions are BENCHMARKS.md's ba and kin.
#include "ceres_jet.h"

#include <omp.h>

#include <ceres/jet.h>
#include <ceres/version.h>

namespace {

// ADBench's rodrigues_rotate_point: exact formula for theta != 0, first order at theta == 0.
template <typename T>
void RodriguesRotatePoint(const T* rot, const T* X, T* out) {
  const T sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2];
  if (sqtheta != T(0.0)) {
    const T theta = sqrt(sqtheta);
    const T costheta = cos(theta);
    const T sintheta = sin(theta);
    const T theta_inverse = 1.0 / theta;
    const T w[3] = {rot[0] * theta_inverse, rot[1] * theta_inverse, rot[2] * theta_inverse};
    const T w_cross_X[3] = {w[1] * X[2] - w[2] * X[1], w[2] * X[0] - w[0] * X[2],
                            w[0] * X[1] - w[1] * X[0]};
    const T tmp = (w[0] * X[0] + w[1] * X[1] + w[2] * X[2]) * (1.0 - costheta);
    for (int i = 0; i < 3; ++i) out[i] = X[i] * costheta + w_cross_X[i] * sintheta + w[i] * tmp;
  } else {
    const T rot_cross_X[3] = {rot[1] * X[2] - rot[2] * X[1], rot[2] * X[0] - rot[0] * X[2],
                              rot[0] * X[1] - rot[1] * X[0]};
    for (int i = 0; i < 3; ++i) out[i] = X[i] + rot_cross_X[i];
  }
}

// ADBench's BA reprojection error for one observation.  cam = (r[3], C[3], f, u0, v0, k1, k2).
struct BaReprojectionError {
  explicit BaReprojectionError(const double* feat) : feat_(feat) {}

  template <typename T>
  bool operator()(const T* cam, const T* X, const T* w, T* residual) const {
    const T Xo[3] = {X[0] - cam[3], X[1] - cam[4], X[2] - cam[5]};
    T Xcam[3];
    RodriguesRotatePoint(cam, Xo, Xcam);
    const T p[2] = {Xcam[0] / Xcam[2], Xcam[1] / Xcam[2]};
    const T rsq = p[0] * p[0] + p[1] * p[1];
    const T L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq;
    residual[0] = w[0] * (cam[6] * (L * p[0]) + cam[7] - feat_[0]);
    residual[1] = w[0] * (cam[6] * (L * p[1]) + cam[8] - feat_[1]);
    return true;
  }

  const double* feat_;
};

// Synthetic mass-action kinetics, n = m = 32, 64 reactions.
struct KineticsRhs {
  template <typename T>
  bool operator()(const T* x, T* f) const {
    for (int i = 0; i < 32; ++i) f[i] = -0.1 * x[i];
    for (int r = 0; r < 64; ++r) {
      const int a = r % 32, b = (7 * r + 3) % 32, c = (13 * r + 5) % 32;
      const double k = 1.0 + 0.01 * r;
      const double E = 0.1 * (r % 5);
      const T rate = k * exp(-E * x[31]) * x[a] * x[b];
      f[a] -= rate;
      f[b] -= rate;
      f[c] += 2.0 * rate;
    }
    return true;
  }
};

constexpr int kBaN = 15, kBaM = 2, kKinN = 32;

}  // namespace

extern "C" void ceres_ba_jacobian(int64_t B, const double* x, const double* feat, double* y,
                                  double* J, int threads) {
  using Jet = ceres::Jet<double, kBaN>;
  if (threads <= 0) threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < B; ++b) {
    const double* xb = x + b * kBaN;
    Jet in[kBaN];
    for (int j = 0; j < kBaN; ++j) in[j] = Jet(xb[j], j);
    Jet res[kBaM];
    const BaReprojectionError functor(feat + b * 2);
    functor(in, in + 11, in + 14, res);
    for (int i = 0; i < kBaM; ++i) {
      y[b * kBaM + i] = res[i].a;
      for (int j = 0; j < kBaN; ++j) J[(b * kBaM + i) * kBaN + j] = res[i].v[j];
    }
  }
}

extern "C" void ceres_kin_jacobian(int64_t B, const double* x, double* y, double* J,
                                   int threads) {
  using Jet = ceres::Jet<double, kKinN>;
  if (threads <= 0) threads = omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < B; ++b) {
    const double* xb = x + b * kKinN;
    Jet in[kKinN];
    for (int j = 0; j < kKinN; ++j) in[j] = Jet(xb[j], j);
    Jet f[kKinN];
    const KineticsRhs functor;
    functor(in, f);
    for (int i = 0; i < kKinN; ++i) {
      y[b * kKinN + i] = f[i].a;
      for (int j = 0; j < kKinN; ++j) J[(b * kKinN + i) * kKinN + j] = f[i].v[j];
    }
  }
}

extern "C" void ceres_ba_value(const double* x, const double* feat, double* y) {
  const BaReprojectionError functor(feat);
  functor(x, x + 11, x + 14, y);
}

extern "C" void ceres_kin_value(const double* x, double* y) {
  const KineticsRhs functor;
  functor(x, y);
}

#define DUAL_STR2(s) #s
#define DUAL_STR(s) DUAL_STR2(s)
extern "C" const char* ceres_peer_info(void) {
  return "Ceres " CERES_VERSION_STRING " (header-only Jet), Eigen " DUAL_STR(
      EIGEN_WORLD_VERSION) "." DUAL_STR(EIGEN_MAJOR_VERSION) "." DUAL_STR(EIGEN_MINOR_VERSION)
#if defined(__clang__)
      ", clang++ " __clang_version__;
#elif defined(__GNUC__)
      ", g++ " __VERSION__;
#else
      "";
#endif
}
