// adolc_hess.cc — the ADOL-C peer of the hess workload (adolc_hess.h): the function is written
// once with adoubles and taped once (trace_on / trace_off); every point is then one evaluation of
// that tape by ADOL-C's sweeps, as an ADOL-C user computes many Hessians of one function.  The
// default per-point driver is the pair of sweeps of ADOL-C's hessian2 driver (hov_wk_forward
// with 16 unit directions, keep = 2, then hos_ov_reverse), called directly so that the value,
// the gradient and the full Hessian all come out of that one forward and one reverse sweep; the
// driver calls (hessian, hessian2 with the gradient driver's two sweeps before) are kept as
// alternatives and measured by dual_peer_adolc_check.  With threads > 1 the work is split over
// forked processes (ADOL-C's Debian build has no OpenMP support: see adolc_hess.h; the split is
// peer_fork.h's, shared with adolc_grad.cc).
#include "adolc_hess.h"

#include <omp.h>

#include <adolc/adolc.h>

#include "peer_fork.h"

namespace {

constexpr int kN = 16, kNN = kN * kN;
constexpr short kTag = 0;  // the tape; forked children use the copy they inherit

// BENCHMARKS.md's hess function, for double and adouble alike.
template <typename T>
T HessFunction(const T* x) {
  T f = 0.0;
  for (int i = 0; i < kN - 1; ++i) {
    const T u = x[i + 1] - x[i] * x[i];
    const T v = 1.0 - x[i];
    f += 100.0 * (u * u) + v * v;
  }
  T s = exp(x[0]);
  for (int i = 1; i < kN; ++i) s += exp(x[i]);
  return f + log(s);
}

bool g_traced = false;

// Tapes the function once per process (at x0: the function has no branches, so one tape holds
// for every point).
void TraceOnce(const double* x0) {
  if (g_traced) return;
  trace_on(kTag);
  adouble ax[kN];
  for (int i = 0; i < kN; ++i) ax[i] <<= x0[i];
  adouble ay = HessFunction(ax);
  double y;
  ay >>= y;
  trace_off();
  g_traced = true;
}

// Per-process work arrays, allocated once per call (not per point), with ADOL-C's allocators.
struct Work {
  double*** X;  // [16][16][1]: unit directions for hov_wk_forward
  double*** Y;  // [1][16][1]
  double*** Z;  // [16][16][2]: Z[i][j][0] = g_j, Z[i][j][1] = H_ij
  double** U;   // [1][2] = {1, 0}
  double** Hl;  // [16][16]: the hessian drivers' lower triangle
  Work() {
    X = myalloc3(kN, kN, 1);
    Y = myalloc3(1, kN, 1);
    Z = myalloc3(kN, kN, 2);
    U = myalloc2(1, 2);
    Hl = myalloc2(kN, kN);
    for (int i = 0; i < kN; ++i)
      for (int j = 0; j < kN; ++j) X[i][j][0] = i == j ? 1.0 : 0.0;
    U[0][0] = 1.0;
    U[0][1] = 0.0;
  }
  ~Work() {
    myfree3(X);
    myfree3(Y);
    myfree3(Z);
    myfree2(U);
    myfree2(Hl);
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
};

// Points [0, n) of x into f, g, H; 0 on success.
int RunRange(int64_t n, const double* x, double* f, double* g, double* H, int driver) {
  Work w;
  double one = 1.0;
  for (int64_t b = 0; b < n; ++b) {
    const double* xb = x + b * kN;
    double* gb = g + b * kN;
    double* Hb = H + b * kNN;
    if (driver == ADOLC_HESS_WK_OV) {
      // hessian2's sweeps (d = 1, keep = 2, p = 16 directions), everything kept
      if (hov_wk_forward(kTag, 1, kN, 1, 2, kN, xb, w.X, f + b, w.Y) < 0) return -1;
      if (hos_ov_reverse(kTag, 1, kN, 1, kN, w.U, w.Z) < 0) return -1;
      for (int j = 0; j < kN; ++j) gb[j] = w.Z[0][j][0];
      for (int i = 0; i < kN; ++i)
        for (int j = 0; j < kN; ++j) Hb[i * kN + j] = w.Z[i][j][1];
    } else {
      // the gradient driver's two sweeps, the value of the forward one kept
      if (zos_forward(kTag, 1, kN, 1, xb, f + b) < 0) return -1;
      if (fos_reverse(kTag, 1, kN, &one, gb) < 0) return -1;
      const int rc = driver == ADOLC_HESS_HESSIAN2
                         ? hessian2(kTag, kN, const_cast<double*>(xb), w.Hl)
                         : hessian(kTag, kN, const_cast<double*>(xb), w.Hl);
      if (rc < 0) return -1;
      for (int i = 0; i < kN; ++i)  // lower triangle -> full matrix
        for (int j = 0; j <= i; ++j) Hb[i * kN + j] = Hb[j * kN + i] = w.Hl[i][j];
    }
  }
  return 0;
}

// peer_fork_run's part: points [begin, begin + count) into outs = {f, g, H} of the part.
struct PartArgs {
  const double* x;
  int driver;
};
int RunPart(int64_t begin, int64_t count, double* const* outs, void* arg) {
  const PartArgs* a = static_cast<const PartArgs*>(arg);
  return RunRange(count, a->x + begin * kN, outs[0], outs[1], outs[2], a->driver);
}

}  // namespace

extern "C" int adolc_hess_run_driver(int64_t B, const double* x, double* f, double* g, double* H,
                                     int threads, int driver) {
  if (B < 0 || driver < 0 || driver >= ADOLC_HESS_DRIVERS) return -1;
  if (B == 0) return 0;
  if (threads <= 0) threads = omp_get_max_threads();
  TraceOnce(x);
  // threads > 1: parts 1.. in forked processes (peer_fork.h), ADOL-C's state being process-wide
  PartArgs args = {x, driver};
  const peer_fork_output outs[3] = {{f, 1}, {g, kN}, {H, kNN}};
  return peer_fork_run(B, threads, outs, 3, RunPart, &args);
}

extern "C" int adolc_hess_run(int64_t B, const double* x, double* f, double* g, double* H,
                              int threads) {
  return adolc_hess_run_driver(B, x, f, g, H, threads, ADOLC_HESS_WK_OV);
}

extern "C" const char* adolc_hess_driver_name(int driver) {
  switch (driver) {
    case ADOLC_HESS_WK_OV:
      return "hov_wk_forward + hos_ov_reverse (hessian2's sweeps; f, g, full H kept)";
    case ADOLC_HESS_HESSIAN2:
      return "zos_forward + fos_reverse, hessian2 (lower triangle mirrored)";
    case ADOLC_HESS_HESSIAN:
      return "zos_forward + fos_reverse, hessian (lower triangle mirrored)";
    default:
      return nullptr;
  }
}

#ifndef DUAL_ADOLC_VERSION
#define DUAL_ADOLC_VERSION "(version unknown)"
#endif
extern "C" const char* adolc_peer_info(void) {
  return "ADOL-C " DUAL_ADOLC_VERSION " (one tape, per-point forward + reverse sweeps; processes "
         "for threads > 1)"
#if defined(__clang__)
         ", clang++ " __clang_version__;
#elif defined(__GNUC__)
         ", g++ " __VERSION__;
#else
         "";
#endif
}
