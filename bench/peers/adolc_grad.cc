// adolc_grad.cc — the ADOL-C peer of the grad workload (adolc_grad.h): the function is written
// once with adoubles and taped once (trace_on / trace_off); every point is then one call of
// ADOL-C's gradient driver on that tape (zos_forward with keep = 1, then fos_reverse), as an
// ADOL-C user computes many gradients of one function.  With threads > 1 the points are split
// over forked processes (peer_fork.h; ADOL-C's Debian build has no OpenMP support).
#include "adolc_grad.h"

#include <omp.h>

#include <cstdio>

#include <adolc/adolc.h>

#include "peer_fork.h"

namespace {

constexpr int kN = ADOLC_GRAD_N;
constexpr short kTag = 1;  // adolc_hess.cc uses tag 0 in the same process

// BENCHMARKS.md's grad function, for double and adouble alike (log(1 + q) for log1p(q): ADOL-C
// has no log1p).
template <typename T>
T GradFunction(const T* x) {
  T ring = sin(x[0]) * x[1];
  for (int i = 1; i < kN; ++i) ring += sin(x[i]) * x[(i + 1) % kN];
  T q = x[0] * x[0];
  for (int i = 1; i < kN; ++i) q += x[i] * x[i];
  return ring + log(1.0 + q);
}

bool g_traced = false;
bool g_in_memory = false;
char g_info[256] = "not traced yet";

// Tapes the function once per process (at x0: no branches, so the tape holds for every point),
// and notes whether ADOL-C kept it in memory.
void TraceOnce(const double* x0) {
  if (g_traced) return;
  trace_on(kTag);
  adouble ax[kN];
  for (int i = 0; i < kN; ++i) ax[i] <<= x0[i];
  adouble ay = GradFunction(ax);
  double y;
  ay >>= y;
  trace_off();
  size_t stats[STAT_SIZE];
  tapestats(kTag, stats);
  g_in_memory = !stats[OP_FILE_ACCESS] && !stats[LOC_FILE_ACCESS] && !stats[VAL_FILE_ACCESS] &&
                stats[TAY_STACK_SIZE] <= stats[TAY_BUFFER_SIZE];
  std::snprintf(g_info, sizeof g_info,
                "tape %d: %zu operations, %zu locations, %zu values, Taylor stack %zu; %s", kTag,
                stats[NUM_OPERATIONS], stats[NUM_LOCATIONS], stats[NUM_VALUES],
                stats[TAY_STACK_SIZE], g_in_memory ? "in memory" : "WRITTEN TO FILES");
  g_traced = true;
}

// peer_fork_run's part: the gradients of points [begin, begin + count) of x into outs[0].
int RunPart(int64_t begin, int64_t count, double* const* outs, void* arg) {
  const double* x = static_cast<const double*>(arg) + begin * kN;
  for (int64_t b = 0; b < count; ++b)
    if (gradient(kTag, kN, x + b * kN, outs[0] + b * kN) < 0) return -1;
  return 0;
}

}  // namespace

extern "C" int adolc_grad_run(int64_t B, const double* x, double* g, int threads) {
  if (B < 0) return -1;
  if (B == 0) return 0;
  if (threads <= 0) threads = omp_get_max_threads();
  TraceOnce(x);
  if (!g_in_memory && threads > 1) return -1;  // forked processes would share the tape files
  const peer_fork_output out = {g, kN};
  return peer_fork_run(B, threads, &out, 1, RunPart, const_cast<double*>(x));
}

extern "C" const char* adolc_grad_tape_info(void) { return g_info; }
