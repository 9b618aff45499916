// nested_dual_hess.cc — the compiled C++ forward-mode Hessian peer (nested_dual_hess.h).  The hess
// function is one template; two hand-written number types carry second derivatives through it:
//
//  * Taylor2<N>: the truncated second-order Taylor polynomial in N variables, stored as the value,
//    the gradient and the upper triangle of the Hessian (N (N + 1) / 2 entries: the symmetry is
//    used, each mixed partial computed once).  a * b adds grad a grad b^T + grad b grad a^T to
//    the triangle; a unary phi adds phi'' grad a grad a^T.  One pass per point gives f, g, H.
//  * Dual<Dual<double, N>, N>: the textbook nested dual number (forward over forward), seeded
//    with x_i = ((x_i, e_i), (e_i, 0)); all N x N second-order directions in one pass.
//
// Everything has compile-time sizes so that the compiler unrolls and vectorizes the tangent
// loops; built with the Ceres peer's flags (-O3, -march=native, GCC's default FMA contraction).
#include "nested_dual_hess.h"

#include <omp.h>

#include <cmath>

namespace {

constexpr int kN = 16, kNN = kN * kN;

// BENCHMARKS.md's hess function, for any number type with +, -, *, exp, log and doubles.
template <typename T>
T HessFunction(const T* x) {
  T f(0.0);
  for (int i = 0; i < kN - 1; ++i) {
    const T u = x[i + 1] - x[i] * x[i];
    const T v = 1.0 - x[i];
    f += 100.0 * (u * u) + v * v;
  }
  T s = exp(x[0]);
  for (int i = 1; i < kN; ++i) s += exp(x[i]);
  return f + log(s);
}

// ---- Taylor2<N>: value, gradient, upper triangle of the Hessian -----------------------------

template <int N>
struct Taylor2 {
  static constexpr int kTri = N * (N + 1) / 2;
  double a;        // value
  double g[N];     // gradient
  double h[kTri];  // Hessian, upper triangle by rows: (0,0) (0,1) .. (0,N-1) (1,1) ..

  Taylor2() = default;
  Taylor2(double c) : a(c) {  // NOLINT: constants convert implicitly, as for any scalar type
    for (int i = 0; i < N; ++i) g[i] = 0.0;
    for (int k = 0; k < kTri; ++k) h[k] = 0.0;
  }
  static Taylor2 Variable(double x, int i) {
    Taylor2 t(x);
    t.g[i] = 1.0;
    return t;
  }
  Taylor2& operator+=(const Taylor2& y) {
    a += y.a;
    for (int i = 0; i < N; ++i) g[i] += y.g[i];
    for (int k = 0; k < kTri; ++k) h[k] += y.h[k];
    return *this;
  }
};

template <int N>
inline Taylor2<N> operator+(const Taylor2<N>& x, const Taylor2<N>& y) {
  Taylor2<N> r = x;
  r += y;
  return r;
}

template <int N>
inline Taylor2<N> operator-(const Taylor2<N>& x, const Taylor2<N>& y) {
  Taylor2<N> r;
  r.a = x.a - y.a;
  for (int i = 0; i < N; ++i) r.g[i] = x.g[i] - y.g[i];
  for (int k = 0; k < Taylor2<N>::kTri; ++k) r.h[k] = x.h[k] - y.h[k];
  return r;
}

template <int N>
inline Taylor2<N> operator-(double c, const Taylor2<N>& y) {
  Taylor2<N> r;
  r.a = c - y.a;
  for (int i = 0; i < N; ++i) r.g[i] = -y.g[i];
  for (int k = 0; k < Taylor2<N>::kTri; ++k) r.h[k] = -y.h[k];
  return r;
}

template <int N>
inline Taylor2<N> operator*(double c, const Taylor2<N>& y) {
  Taylor2<N> r;
  r.a = c * y.a;
  for (int i = 0; i < N; ++i) r.g[i] = c * y.g[i];
  for (int k = 0; k < Taylor2<N>::kTri; ++k) r.h[k] = c * y.h[k];
  return r;
}

template <int N>
inline Taylor2<N> operator*(const Taylor2<N>& x, const Taylor2<N>& y) {
  Taylor2<N> r;
  r.a = x.a * y.a;
  for (int i = 0; i < N; ++i) r.g[i] = x.a * y.g[i] + y.a * x.g[i];
  int k = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j, ++k)
      r.h[k] = x.a * y.h[k] + y.a * x.h[k] + (x.g[i] * y.g[j] + y.g[i] * x.g[j]);
  return r;
}

// phi(x) for a scalar function with phi(x.a) = d0, phi'(x.a) = d1, phi''(x.a) = d2.
template <int N>
inline Taylor2<N> Chain(const Taylor2<N>& x, double d0, double d1, double d2) {
  Taylor2<N> r;
  r.a = d0;
  for (int i = 0; i < N; ++i) r.g[i] = d1 * x.g[i];
  int k = 0;
  for (int i = 0; i < N; ++i)
    for (int j = i; j < N; ++j, ++k) r.h[k] = d1 * x.h[k] + d2 * (x.g[i] * x.g[j]);
  return r;
}

template <int N>
inline Taylor2<N> exp(const Taylor2<N>& x) {
  const double e = std::exp(x.a);
  return Chain(x, e, e, e);
}

template <int N>
inline Taylor2<N> log(const Taylor2<N>& x) {
  const double inv = 1.0 / x.a;
  return Chain(x, std::log(x.a), inv, -inv * inv);
}

// ---- Dual<T, N>: a dual number with N tangents of type T (nested for second order) ----------

template <typename T, int N>
struct Dual {
  T a;     // value
  T v[N];  // tangents

  Dual() = default;
  Dual(double c) : a(c) {  // NOLINT: constants convert implicitly
    for (int i = 0; i < N; ++i) v[i] = T(0.0);
  }
  Dual& operator+=(const Dual& y) {
    a += y.a;
    for (int i = 0; i < N; ++i) v[i] += y.v[i];
    return *this;
  }
};

template <typename T, int N>
inline Dual<T, N> operator+(const Dual<T, N>& x, const Dual<T, N>& y) {
  Dual<T, N> r = x;
  r += y;
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator-(const Dual<T, N>& x, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.a = x.a - y.a;
  for (int i = 0; i < N; ++i) r.v[i] = x.v[i] - y.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator-(double c, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.a = c - y.a;
  for (int i = 0; i < N; ++i) r.v[i] = 0.0 - y.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator*(double c, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.a = c * y.a;
  for (int i = 0; i < N; ++i) r.v[i] = c * y.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator*(const Dual<T, N>& x, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.a = x.a * y.a;
  for (int i = 0; i < N; ++i) r.v[i] = x.a * y.v[i] + y.a * x.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator/(double c, const Dual<T, N>& y) {
  Dual<T, N> r;
  r.a = c / y.a;
  const T s = (0.0 - r.a) / y.a;  // d(c / y) = -c / y^2 dy
  for (int i = 0; i < N; ++i) r.v[i] = s * y.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> operator/(const Dual<T, N>& x, const Dual<T, N>& y) {
  return x * (1.0 / y);
}

template <typename T, int N>
inline Dual<T, N> exp(const Dual<T, N>& x) {
  using std::exp;
  Dual<T, N> r;
  r.a = exp(x.a);
  for (int i = 0; i < N; ++i) r.v[i] = r.a * x.v[i];
  return r;
}

template <typename T, int N>
inline Dual<T, N> log(const Dual<T, N>& x) {
  using std::log;
  Dual<T, N> r;
  r.a = log(x.a);
  const T inv = 1.0 / x.a;
  for (int i = 0; i < N; ++i) r.v[i] = inv * x.v[i];
  return r;
}

// ---- per point ------------------------------------------------------------------------------

void PointTaylor2(const double* x, double* f, double* g, double* H) {
  using T = Taylor2<kN>;
  T in[kN];
  for (int i = 0; i < kN; ++i) in[i] = T::Variable(x[i], i);
  const T y = HessFunction(in);
  *f = y.a;
  for (int i = 0; i < kN; ++i) g[i] = y.g[i];
  int k = 0;
  for (int i = 0; i < kN; ++i)  // upper triangle -> full matrix
    for (int j = i; j < kN; ++j, ++k) H[i * kN + j] = H[j * kN + i] = y.h[k];
}

void PointDualDual(const double* x, double* f, double* g, double* H) {
  using D1 = Dual<double, kN>;
  using D2 = Dual<D1, kN>;
  D2 in[kN];
  for (int i = 0; i < kN; ++i) {
    in[i] = D2(0.0);
    in[i].a = D1(x[i]);
    in[i].a.v[i] = 1.0;     // inner direction e_i
    in[i].v[i].a = 1.0;     // outer direction e_i
  }
  const D2 y = HessFunction(in);
  *f = y.a.a;
  for (int i = 0; i < kN; ++i) g[i] = y.a.v[i];
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) H[i * kN + j] = y.v[i].v[j];
}

template <void (*Point)(const double*, double*, double*, double*)>
void RunAll(int64_t B, const double* x, double* f, double* g, double* H, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t b = 0; b < B; ++b) Point(x + b * kN, f + b, g + b * kN, H + b * kNN);
}

}  // namespace

extern "C" int nested_hess_run_variant(int64_t B, const double* x, double* f, double* g,
                                       double* H, int threads, int variant) {
  if (B < 0) return -1;
  if (threads <= 0) threads = omp_get_max_threads();
  switch (variant) {
    case NESTED_HESS_TAYLOR2:
      RunAll<PointTaylor2>(B, x, f, g, H, threads);
      return 0;
    case NESTED_HESS_DUAL_DUAL:
      RunAll<PointDualDual>(B, x, f, g, H, threads);
      return 0;
    default:
      return -1;
  }
}

extern "C" int nested_hess_run(int64_t B, const double* x, double* f, double* g, double* H,
                               int threads) {
  return nested_hess_run_variant(B, x, f, g, H, threads, NESTED_HESS_TAYLOR2);
}

extern "C" const char* nested_hess_variant_name(int variant) {
  switch (variant) {
    case NESTED_HESS_TAYLOR2:
      return "taylor2<16> (value, gradient, Hessian upper triangle; one pass)";
    case NESTED_HESS_DUAL_DUAL:
      return "dual<dual<double,16>,16> (forward over forward; one pass)";
    default:
      return nullptr;
  }
}

extern "C" const char* nested_peer_info(void) {
  return "hand-written second-order forward mode (bench/peers/nested_dual_hess.cc)"
#if defined(__clang__)
         ", clang++ " __clang_version__;
#elif defined(__GNUC__)
         ", g++ " __VERSION__;
#else
         "";
#endif
}
