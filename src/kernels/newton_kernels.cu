// newton_kernels.cu — dual_newton's kernels (newton_kernels.h): one thread per point runs the
// round's per-point code of solve/newton_point.h, the same source the CPU runs, on element-major
// arrays (a round: the line search's verdict on a trial point, then the Newton step where it was
// accepted, with the J evaluated there), for n <= 8 on copies in registers; for 8 < n <= 32 the
// Newton step instead runs on a group of 16 or 32 lanes per point, its LU on the matrix's rows held
// in the lanes' registers with each entry updated by the CPU's statements in the CPU's order (the
// same bits); for n > 32 cuBLAS's batched LU may take the step (its kernels around it here); a
// stable stream compaction (CUB) picks the points of each engine call; transposes move a chunk
// between the host's point-major layout and the device's element-major one.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/newton_kernels.h"

namespace {

constexpr int THREADS = 256;

unsigned blocks_for(int64_t count) { return (unsigned)((count + THREADS - 1) / THREADS); }

__global__ void transpose_kernel(const double *src, double *dst, int64_t c, int64_t C, int32_t len,
                                 int64_t ld, int to_points) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= c * len) return;
  if (to_points) { // t runs over the points' entries: coalesced stores for ld = len
    const int64_t b = t / len, j = t - b * len;
    dst[b * ld + j] = src[j * C + b];
  } else { // t runs over the element-major array: coalesced stores
    const int64_t j = t / c, b = t - j * c;
    dst[j * C + b] = src[b * ld + j];
  }
}

__global__ void init_kernel(const dual_newton_dev d) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= d.C) return;
  d.P.state[b] = DUAL_NEWTON_ACTIVE, d.P.steps[b] = 0, d.P.damped[b] = 0;
  d.phase[b] = DUAL_NEWTON_NEED_J;
}

__global__ void flag_kernel(const dual_newton_dev d) {
  const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (b < d.C) d.flags[b] = d.phase[b] != DUAL_NEWTON_DONE;
}

__global__ void gather_kernel(const dual_newton_dev d) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t len = (int64_t)d.n + d.np;
  if (t >= d.k * len) return;
  const int64_t j = t / d.k, i = t - j * d.k, b = d.idx[i];
  if (j < d.n) /* the iterate, or the trial point of a point in its line search */
    d.xa[t] = (d.phase[b] == DUAL_NEWTON_NEED_F ? d.XT : d.X)[j * d.C + b];
  else
    d.pa[(j - d.n) * d.k + i] = d.P_[(j - d.n) * d.C + b];
}

__device__ int32_t next_phase(const dual_newton_dev &d, int64_t b, int more) {
  return dual_newton_next_phase(&d.P, b, more);
}

// steps_kernel's round for a point of N <= 8 unknowns, its vectors and matrix staged in the
// thread's registers (local arrays, stride 1): each entry is read from and written to device
// memory once instead of at every pass of the tests and the LU, which had bounded the kernel by
// memory traffic (n = 3: 200 us a round at 1e6 points on the H200).
template <int N>
__device__ void small_round(const dual_newton_dev &d, int64_t i, int64_t b) {
  const int64_t s = d.k, C = d.C;
  double F[N], x[N], dx[N], xt[N], J[N * N];
  int32_t piv[N];
#pragma unroll
  for (int j = 0; j < N; ++j) F[j] = d.F[i + j * s], x[j] = d.X[b + j * C];
  if (d.phase[b] == DUAL_NEWTON_NEED_F) {
#pragma unroll
    for (int j = 0; j < N; ++j) dx[j] = d.DX[b + j * C], xt[j] = d.XT[b + j * C];
    const int more = dual_newton_judge(&d.o, &d.P, b, N, F, 1, x, dx, xt, 1);
    if (more || d.P.state[b] != DUAL_NEWTON_ACTIVE) {
      d.phase[b] = next_phase(d, b, more);
#pragma unroll
      for (int j = 0; j < N; ++j) {
        if (more)
          d.XT[b + j * C] = xt[j];
        else
          d.X[b + j * C] = x[j];
      }
      return;
    }
#pragma unroll
    for (int j = 0; j < N; ++j) d.X[b + j * C] = x[j];
  }
#pragma unroll
  for (int e = 0; e < N * N; ++e) J[e] = d.J[i + e * s];
  const int more = dual_newton_step(&d.o, &d.P, b, N, F, J, piv, 1, x, dx, xt, 1);
  d.phase[b] = next_phase(d, b, more);
  if (more) {
#pragma unroll
    for (int j = 0; j < N; ++j) d.DX[b + j * C] = dx[j], d.XT[b + j * C] = xt[j];
  }
}

// A round for one point, one thread: a point in its line search has F and J at its trial point:
// the verdict on it (dual_newton_judge), and where the step was accepted and the point goes on,
// its next Newton step from there (J at the new iterate is the one evaluated); a point at a new
// iterate takes its Newton step (dual_newton_step).  The per-point statements are the CPU's.
__global__ void steps_kernel(const dual_newton_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int64_t b = d.idx[i];
  switch (d.n) {
  case 1: small_round<1>(d, i, b); return;
  case 2: small_round<2>(d, i, b); return;
  case 3: small_round<3>(d, i, b); return;
  case 4: small_round<4>(d, i, b); return;
  case 5: small_round<5>(d, i, b); return;
  case 6: small_round<6>(d, i, b); return;
  case 7: small_round<7>(d, i, b); return;
  case 8: small_round<8>(d, i, b); return;
  default: break;
  }
  if (d.phase[b] == DUAL_NEWTON_NEED_F) {
    const int more = dual_newton_judge(&d.o, &d.P, b, d.n, d.F + i, d.k, d.X + b, d.DX + b, d.XT + b, d.C);
    if (more || d.P.state[b] != DUAL_NEWTON_ACTIVE) {
      d.phase[b] = next_phase(d, b, more);
      return;
    }
  }
  const int more = dual_newton_step(&d.o, &d.P, b, d.n, d.F + i, d.J + i, d.piv + i, d.k, d.X + b,
                                    d.DX + b, d.XT + b, d.C);
  d.phase[b] = next_phase(d, b, more);
}

constexpr unsigned FULL = 0xffffffffu;

// One point per group of G lanes (G = 16: two points per warp, for n <= 16; G = 32: a warp):
// lane l of the group holds row l of J.  The warp stays converged: every shuffle and vote names
// the whole warp (a constant full mask; width G keeps the groups apart), so the compiler emits no
// convergence checks around them, and a group that has finished (or has no point) goes on with
// the other's loops without writing anything (its `live` flag).
template <int G>
struct group {
  int l;             // the lane in the group
  int base;          // the group's first lane in the warp
  unsigned bits;     // the group's lanes in a ballot
  __device__ group() {
    const int lane = threadIdx.x & 31;
    l = lane % G, base = lane - l;
    bits = G == 32 ? FULL : ((1u << G) - 1u) << base;
  }
  __device__ double shfl(double v, int src) const { return __shfl_sync(FULL, v, src, G); }
  __device__ int shfl(int v, int src) const { return __shfl_sync(FULL, v, src, G); }
  __device__ int first(bool pred) const { // the first lane of the group where pred holds, or -1
    return __ffs((__ballot_sync(FULL, pred) & bits) >> base) - 1;
  }
  __device__ bool all(bool pred) const { return (__ballot_sync(FULL, pred) & bits) == bits; }
  __device__ void sync() const { __syncwarp(FULL); }
};

// The better pivot candidate of the group: the larger key, on ties the lower position (the CPU's
// scan keeps the first entry of largest magnitude); at = position * 32 + lane (positions < 64).
template <int G>
__device__ void better_pivot(const group<G> &gr, double &key, int &at) {
  for (int off = G / 2; off > 0; off >>= 1) {
    const double k2 = __shfl_xor_sync(FULL, key, off, G);
    const int a2 = __shfl_xor_sync(FULL, at, off, G);
    if (k2 > key || (k2 == key && a2 < at)) key = k2, at = a2;
  }
}

// The group's largest value of v (exact in any order).
template <int G>
__device__ double group_max(double v) {
  for (int off = G / 2; off > 0; off >>= 1) {
    const double o = __shfl_xor_sync(FULL, v, off, G);
    v = o > v ? o : v;
  }
  return v;
}

// dual_sv_sumsq of the group's entries, lane l holding entry l (0 past n): the partials of
// DUAL_SV_LANES lanes (for G = 32, entry l + 16 added to entry l's square), then the butterfly
// p_l + p_(l xor h), h = 8, 4, 2, 1, which is dual_sv_sumsq's tree on every lane.
template <int G>
__device__ double group_sumsq(double v) {
  static_assert(G == DUAL_SV_LANES || G == 2 * DUAL_SV_LANES, "a group of 16 or 32 lanes");
  double p = v * v;
  if (G == 2 * DUAL_SV_LANES) p = p + __shfl_xor_sync(FULL, p, DUAL_SV_LANES, G);
  for (int h = DUAL_SV_LANES / 2; h > 0; h >>= 1) p = p + __shfl_xor_sync(FULL, p, h, G);
  return p;
}

// dual_sv_norm_lanes of the group's n entries (lane l: entry l, 0 past n; the same entries staged
// in v_sh for the scaled sums, which lane 0 takes where the plain sum may not be used).
template <int G>
__device__ double group_norm(const group<G> &gr, double v, int n, const double *v_sh) {
  const double amax = group_max<G>(fabs(v));
  const double plain = sqrt(group_sumsq<G>(v));
  double r = 0.0;
  if (!dual_sv_plain_range(amax, n) && gr.l == 0) r = dual_sv_norm(v_sh, n, 1);
  r = gr.shfl(r, 0);
  return dual_sv_plain_range(amax, n) ? plain : r;
}

// dual_lu_eliminate and dual_lu_solve (solve/lu_small.h) for one point by one group, n <= G, J's
// band p, q: lane r holds row r of J in a (zeros past n) and F_r in f, and follows its row through
// the swaps by its position; lane j gets entry j of the step dx = -J^{-1} F.  Every entry gets the
// CPU's statements in the CPU's order: the factors and the step are the same bits.  The loops keep
// to the band as the CPU's do (for a dense J, p = q = n - 1, they cover the whole matrix): the
// pivot among the rows at positions k .. k + p, multipliers there only (`mult` records the steps
// where the row got one: its terms of the forward solve), the pivot row's columns to k + p + q,
// U's rows to p + q columns past the diagonal.  Returns 1 (all lanes) when J is singular to
// working precision; the loops then run to their end on meaningless values (the other group of
// the warp may need them) and dx is not to be used.
template <int G>
__device__ int group_lu_step(const group<G> &gr, int n, int p, int q, double (&a)[G], double f, double &dx) {
  const int lane = gr.l;
  const bool row = lane < n;
  double amax = 0.0;
#pragma unroll
  for (int c = 0; c < G; ++c) amax = fabs(a[c]) > amax ? fabs(a[c]) : amax;
  amax = group_max<G>(amax);
  const double tiny = (double)n * DBL_EPSILON * amax;
  int singular = amax == 0.0;
  int pos = lane;     // the row's position after the swaps so far
  uint32_t mult = 0u; // bit k: the row got a multiplier at step k
#pragma unroll
  for (int k = 0; k < G; ++k) {
    if (k >= n) break;
    // the pivot: the first position in k .. k + p of largest |a| (a NaN never wins, except at k
    // itself, where the CPU's scan starts and no comparison beats it)
    const double v = fabs(a[k]);
    double key = !row || pos < k || pos > k + p ? -2.0 : v != v ? (pos == k ? INFINITY : -1.0) : v;
    int at = (row ? pos : 63) * 32 + lane;
    better_pivot(gr, key, at);
    const int best_pos = at >> 5, wl = at & 31;
    const double d = gr.shfl(a[k], wl), best = fabs(d);
    singular |= best <= tiny;
    if (best_pos != k) pos = pos == k ? best_pos : pos == best_pos ? k : pos;
    const bool below = row && pos > k && pos <= k + p;
    double l = 0.0;
    if (below) l = a[k] / d, a[k] = l, mult |= 1u << k;
#pragma unroll
    for (int j = k + 1; j < G; ++j) {
      if (j >= n || j > k + p + q) break;
      const double pj = gr.shfl(a[j], wl);
      if (below && l != 0.0) a[j] -= l * pj;
    }
  }
  // b = -F moved with its row: lane r's entry sits at position pos
  double v = row ? -f : 0.0;
#pragma unroll
  for (int j = 0; j < G; ++j) { // forward: b_i -= L_ij b_j, j ascending
    if (j >= n - 1) break;
    const int src = gr.first(row && pos == j);
    const double bj = gr.shfl(v, src);
    if (row && (mult >> j & 1u)) v -= a[j] * bj;
  }
  dx = 0.0;
#pragma unroll
  for (int i = G - 1; i >= 0; --i) { // back: x_i = (b_i - sum_{j > i} U_ij x_j) (1 / U_ii), j descending:
    if (i >= n) continue;            // x_i goes to every row above as soon as it is known
    const bool own = row && pos == i;
    const int src = gr.first(own);
    // only the owner's product is used; the other lanes take 1 / 1, not 1 / 0, which would take
    // the division's slow path for the whole warp
    const double ri = 1.0 / (own ? a[i] : 1.0);
    double xi = own ? v * ri : 1.0;
    xi = gr.shfl(xi, src);
    if (row && pos < i && i <= pos + p + q) v -= a[i] * xi;
    if (lane == i) dx = xi;
  }
  return singular;
}

// A round of dual_newton for n <= G, one group of G lanes per point, lane l holding entry l of the
// point's F, x, dx and xt in registers (0 past n) and row l of J: the reductions of the round's
// tests (finiteness, the norms, the step's sums of squares) by the group, in the order of
// dual_sv_sumsq, the decisions on them by lane 0 with newton_point.h's functions (the CPU's), the
// LU step by the group.  A group is `live` while its point takes part in the round; the warp
// leaves when neither of its groups is.  Resident blocks of 256: four for G = 16 (64 registers, a
// few spilled to L1: 32 warps a multiprocessor instead of 24 hide more of the loads' and shuffles'
// latency, which bounds this kernel; bratu15 at 1e6 points 4.29e7 -> 4.46e7 to 4.70e7 cells/s on
// the H200, BENCHMARKS.md), two for G = 32 (kin's 104 registers).
template <int G>
__global__ void __launch_bounds__(THREADS, G == 16 ? 4 : 2) group_steps_kernel(const dual_newton_dev d) {
  __shared__ double stage[THREADS / G][G]; // F, for the scaled norm
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, i = t / G;
  if ((t & ~(int64_t)31) / G >= d.k) return; // the warp's first group has no point: all leave
  const group<G> gr;
  const int lane = gr.l, n = d.n;
  const bool mine = lane < n;
  bool live = i < d.k;
  const int64_t b = d.idx[live ? i : (t & ~(int64_t)31) / G], s = d.k, C = d.C;
  const bool trial = live && d.phase[b] == DUAL_NEWTON_NEED_F;
  const double f = live && mine ? d.F[i + lane * s] : 0.0;
  double x = live && mine ? d.X[b + lane * C] : 0.0;
  double *F_sh = stage[threadIdx.x / G];
  F_sh[lane] = f;
  gr.sync();
  const bool ffinite = gr.all(fabs(f) <= DBL_MAX);
  const double fn = group_norm(gr, f, n, F_sh);
  if (__any_sync(FULL, trial)) { // the verdict on a trial point (F and J there)
    const double dx = trial && mine ? d.DX[b + lane * C] : 0.0;
    double xt = trial && mine ? d.XT[b + lane * C] : 0.0;
    int v = DUAL_NEWTON_ACCEPTED, active = 1;
    double alpha = 0.0;
    if (trial && lane == 0) {
      v = dual_newton_verdict(&d.o, &d.P, b, ffinite, ffinite ? fn : INFINITY);
      active = d.P.state[b] == DUAL_NEWTON_ACTIVE, alpha = d.P.alpha[b];
      if (v != DUAL_NEWTON_ACCEPTED || !active) d.phase[b] = next_phase(d, b, v == DUAL_NEWTON_RETRY);
    }
    v = gr.shfl(v, 0), active = gr.shfl(active, 0), alpha = gr.shfl(alpha, 0);
    if (trial && v == DUAL_NEWTON_ACCEPTED) {
      x = xt;
      if (mine) d.X[b + lane * C] = x;
    }
    if (trial && v == DUAL_NEWTON_RETRY) {
      xt = x + alpha * dx;
      if (mine) d.XT[b + lane * C] = xt;
    }
    live = live && !(trial && (v != DUAL_NEWTON_ACCEPTED || !active)); // accepted: the step goes on
  }
  if (!__any_sync(FULL, live)) return;
  double a[G]; // lane r: row r of J, element (r, c) at J[(r * n + c) * s], or of J S
  const int colored = d.nc > 0; // entry (r, c) at J S's (r, color[c]) where the row may have it
  const double *J = d.J + i + (int64_t)lane * (colored ? d.nc : n) * s;
  const uint32_t rm = colored && mine ? d.row_mask[lane] : ~0u;
  int jfinite = 1;
#pragma unroll
  for (int c = 0; c < G; ++c) {
    a[c] = live && mine && c < n && (rm >> c & 1u) ? J[(colored ? d.color[c] : c) * s] : 0.0;
    jfinite &= fabs(a[c]) <= DBL_MAX;
  }
  jfinite = gr.all(jfinite);
  int go = 0;
  if (live && lane == 0) {
    go = dual_newton_tests_of(&d.o, &d.P, b, ffinite, ffinite ? fn : NAN, jfinite);
    if (!go) d.phase[b] = next_phase(d, b, 0);
  }
  live = gr.shfl(go, 0);
  if (!__any_sync(FULL, live)) return;
  double dx;
  const int p = dual_newton_band(d.o.band_lo, n), q = dual_newton_band(d.o.band_hi, n);
  const int singular = group_lu_step(gr, n, p, q, a, f, dx);
  const bool dxfinite = gr.all(fabs(dx) <= DBL_MAX);
  const double x2 = group_sumsq<G>(x), dx2 = group_sumsq<G>(dx);
  int more = 0;
  if (live && lane == 0) {
    if (singular)
      d.P.state[b] = DUAL_SOLVE_SINGULAR;
    else
      more = dual_newton_start(&d.o, &d.P, b, dxfinite, x2, dx2);
    d.phase[b] = next_phase(d, b, more);
  }
  more = gr.shfl(more, 0);
  if (live && more && mine) d.DX[b + lane * C] = dx, d.XT[b + lane * C] = x + dx;
}

// ---- rounds with cuBLAS's LU ----

__global__ void blas_pointers_kernel(const dual_newton_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.C) return;
  d.Ap[i] = d.A + i * (int64_t)d.n * d.n, d.Bp[i] = d.Bv + i * (int64_t)d.n;
}

// The round's per-point code before the LU: the verdict on a trial point, then for a point at a
// new iterate the tests; a point that takes a step gets flags[i] = 1, its -F in Bv.  The others'
// rows of Bv are zeroed: the batched solve runs over all k (their results unused), and it must
// not read memory nobody wrote (compute-sanitizer's initcheck).
__device__ static int blas_prepare_point(const dual_newton_dev &d, int64_t i) {
  const int64_t b = d.idx[i], s = d.k;
  const int n = d.n;
  if (d.phase[b] == DUAL_NEWTON_NEED_F) {
    const int more = dual_newton_judge(&d.o, &d.P, b, n, d.F + i, s, d.X + b, d.DX + b, d.XT + b, d.C);
    if (more || d.P.state[b] != DUAL_NEWTON_ACTIVE) {
      d.phase[b] = next_phase(d, b, more);
      return 0;
    }
  }
  double amax = 0.0;
  int jfinite = 1;
  for (int64_t e = 0; e < (int64_t)n * n; ++e) {
    const double a = fabs(d.J[i + e * s]);
    jfinite &= a <= DBL_MAX;
    amax = a > amax ? a : amax;
  }
  if (dual_newton_tests(&d.o, &d.P, b, n, d.F + i, s, jfinite) && amax == 0.0)
    d.P.state[b] = DUAL_SOLVE_SINGULAR;
  if (d.P.state[b] != DUAL_NEWTON_ACTIVE) {
    d.phase[b] = DUAL_NEWTON_DONE;
    return 0;
  }
  d.amax[i] = amax;
  return 1;
}

__global__ void blas_prepare_kernel(const dual_newton_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k) return;
  const int step = blas_prepare_point(d, i);
  d.flags[i] = (uint8_t)step;
  for (int j = 0; j < d.n; ++j) d.Bv[i * d.n + j] = step ? -d.F[i + j * d.k] : 0.0;
}

// J (element-major [n * n][k]) into A ([k][n * n]): A's column-major matrix i is J^T of point
// i.  32 x 32 tiles through shared memory, so that reads and writes are both coalesced.
__global__ void blas_pack_kernel(const dual_newton_dev d) {
  __shared__ double tile[32][33];
  const int64_t nn = (int64_t)d.n * d.n;
  const int64_t i0 = (int64_t)blockIdx.x * 32, e0 = (int64_t)blockIdx.y * 32;
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const int64_t e = e0 + r, i = i0 + threadIdx.x;
    if (e < nn && i < d.k) tile[r][threadIdx.x] = d.J[e * d.k + i];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) {
    const int64_t i = i0 + r, e = e0 + threadIdx.x;
    if (e < nn && i < d.k) d.A[i * nn + e] = tile[threadIdx.x][r];
  }
}

// After cuBLAS: the pivots' test, then the step and the first trial point (dual_newton_trial).
__global__ void blas_finish_kernel(const dual_newton_dev d) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= d.k || !d.flags[i]) return;
  const int64_t b = d.idx[i], C = d.C;
  const int n = d.n;
  const double tiny = (double)n * DBL_EPSILON * d.amax[i], *U = d.A + i * (int64_t)n * n;
  int singular = d.info[i] != 0;
  for (int q = 0; q < n && !singular; ++q) singular = !(fabs(U[q * n + q]) > tiny);
  if (singular) {
    d.P.state[b] = DUAL_SOLVE_SINGULAR;
    d.phase[b] = DUAL_NEWTON_DONE;
    return;
  }
  for (int j = 0; j < n; ++j) d.DX[b + j * C] = d.Bv[i * n + j];
  const int more = dual_newton_trial(&d.o, &d.P, b, n, d.X + b, d.DX + b, d.XT + b, C);
  d.phase[b] = next_phase(d, b, more);
}

} // namespace

extern "C" int dual_newton_blas_pointers(const dual_newton_dev *d, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  blas_pointers_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_blas_prepare(const dual_newton_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  blas_prepare_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || d->n == 0) return (int)e;
  const dim3 grid((unsigned)((d->k + 31) / 32), (unsigned)(((int64_t)d->n * d->n + 31) / 32)), block(32, 8);
  blas_pack_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_blas_finish(const dual_newton_dev *d, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  blas_finish_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_transpose(const double *src, double *dst, int64_t c, int64_t C,
                                     int32_t len, int64_t ld, int to_points, void *stream) {
  if (c * len == 0) return (int)cudaSuccess;
  transpose_kernel<<<blocks_for(c * len), THREADS, 0, (cudaStream_t)stream>>>(src, dst, c, C, len,
                                                                             ld, to_points);
  return (int)cudaGetLastError();
}

extern "C" int dual_newton_init(const dual_newton_dev *d, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  init_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

extern "C" size_t dual_newton_select_bytes(int64_t C) {
  size_t bytes = 0;
  thrust::counting_iterator<int32_t> first(0);
  cub::DeviceSelect::Flagged(nullptr, bytes, first, (const uint8_t *)nullptr, (int32_t *)nullptr,
                             (int64_t *)nullptr, C);
  return bytes;
}

extern "C" int dual_newton_select(const dual_newton_dev *d, int64_t *k_dev, void *temp,
                                  size_t temp_bytes, void *stream) {
  if (d->C == 0) return (int)cudaSuccess;
  flag_kernel<<<blocks_for(d->C), THREADS, 0, (cudaStream_t)stream>>>(*d);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return (int)e;
  thrust::counting_iterator<int32_t> first(0);
  return (int)cub::DeviceSelect::Flagged(temp, temp_bytes, first, d->flags, d->idx, k_dev, d->C,
                                         (cudaStream_t)stream);
}

extern "C" int dual_newton_gather(const dual_newton_dev *d, void *stream) {
  const int64_t total = d->k * ((int64_t)d->n + d->np);
  if (total == 0) return (int)cudaSuccess;
  gather_kernel<<<blocks_for(total), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}

static int use_groups(const dual_newton_dev *d, int lu) {
  const int warp = lu == DUAL_NEWTON_LU_WARP || (lu == DUAL_NEWTON_LU_AUTO && d->n > DUAL_NEWTON_WARP_MIN_N);
  return warp && d->n <= 32;
}

extern "C" int dual_newton_steps_use_groups(const dual_newton_dev *d, int lu) { return use_groups(d, lu); }

extern "C" int dual_newton_steps(const dual_newton_dev *d, int lu, void *stream) {
  if (d->k == 0) return (int)cudaSuccess;
  const int warp = use_groups(d, lu);
  if (warp && d->n <= 16) {
    group_steps_kernel<16><<<blocks_for(d->k * 16), THREADS, 0, (cudaStream_t)stream>>>(*d);
    return (int)cudaGetLastError();
  }
  if (warp && d->n <= 32) {
    group_steps_kernel<32><<<blocks_for(d->k * 32), THREADS, 0, (cudaStream_t)stream>>>(*d);
    return (int)cudaGetLastError();
  }
  steps_kernel<<<blocks_for(d->k), THREADS, 0, (cudaStream_t)stream>>>(*d);
  return (int)cudaGetLastError();
}
