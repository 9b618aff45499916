/*
 * jit_kernel.h — what every generated first-order kernel (jit/jit_source.c) includes: the shared
 * rules (dual/rules.h), tangent arithmetic (engine/tangent_terms.h), random draws
 * (engine/draws.h), dual_sgrad's reduction (engine/sgrad_reduce.h), the argument block
 * (jit/jit_args.h), and the loads, stores, tile loop and sample loop the generator's code
 * calls.  Compiled by NVRTC only (embedded in the library as text).
 *
 * Layout of a kernel: blocks of DUAL_JIT_THREADS threads; each warp takes tiles of 32
 * consecutive points (grid-stride), one point per thread, every lane of a warp running the tile
 * (a lane past the end recomputes the last point and stores nothing), so the warp can stage the
 * derivative rows it produces in shared memory and store them as contiguous lines.
 */
#ifndef DUAL_JIT_KERNEL_H
#define DUAL_JIT_KERNEL_H

#include "dual/portable.h"
#include "dual/rules.h"
#include "dualbatch.h"
#include "engine/draws.h"
#include "engine/sgrad_reduce.h"
#include "engine/tangent_terms.h"
#include "engine/value_step.h"
#include "jit/jit_args.h"

#define DUAL_JIT_THREADS 128
#define DUAL_JIT_WARPS (DUAL_JIT_THREADS / 32)

#define DUAL_PT_NONFINITE(v) DUAL_NONFINITE(v)
/* DUAL_PT_NAN or DUAL_PT_INF for a NaN or infinite value, else 0 (on the exponent and mantissa
 * bits, as DUAL_NONFINITE). */
static __forceinline__ __device__ int dual_jit_flags(double v) {
  const int hi = __double2hiint(v);
  if ((hi & 0x7ff00000) != 0x7ff00000) return 0;
  return ((hi & 0x000fffff) | __double2loint(v)) != 0 ? DUAL_PT_NAN : DUAL_PT_INF;
}
#define DUAL_PT_FLAGS(v) dual_jit_flags(v)

/* Value v of an input, flagged when non-finite. */
static __forceinline__ __device__ double dual_jit_take(double v, int *st) {
  *st |= DUAL_PT_NONFINITE(v) ? DUAL_PT_BAD_INPUT : 0;
  return v;
}
#define DUAL_JIT_TAKE(v) dual_jit_take((v), &st)

/* Input i (x), parameter i (p), JVP direction entry i (v) or VJP cotangent i (u) of point pt,
 * flagged.  Read-only for the kernel's life (outputs must not overlap inputs, dualbatch.h), so
 * through the non-coherent path: the compiler may then move a load ahead of the kernel's stores
 * (a looped gradient stores between its loads). */
static __forceinline__ __device__ double dual_jit_load(const double *a, int64_t ps, int64_t es,
                                                       int64_t pt, int64_t i, int *st) {
  return dual_jit_take(__ldg(a + (pt * ps + i * es)), st);
}
#define DUAL_JIT_LDX(i) dual_jit_load(A.x, A.x_ps, A.x_es, pt, (i), &st)
/* Loads a loop issues an iteration ahead (jit_rev_loops.c): input i unflagged, DUAL_JIT_TAKE
 * flagging it where the iteration takes it (a check at the load would wait for it there); the
 * iteration k clamped to 0 .. hi. */
#define DUAL_JIT_LDX_AHEAD(i) __ldg(A.x + (pt * A.x_ps + (int64_t)(i) * A.x_es))
static __forceinline__ __device__ int64_t dual_jit_clamp(int64_t k, int64_t hi) {
  return k < 0 ? 0 : k > hi ? hi : k;
}
#define DUAL_JIT_LDP(i) dual_jit_load(A.p, A.p_ps, A.p_es, pt, (i), &st)
#define DUAL_JIT_LDV(i) dual_jit_load(A.v, A.v_ps, A.v_es, pt, (i), &st)
#define DUAL_JIT_LDU(i) dual_jit_load(A.u, A.u_ps, A.u_es, pt, (i), &st)
/* The draws' sample: 0, or in dual_sgrad's kernels the sample loop's `sample_` (their source
 * defines DUAL_JIT_SAMPLE before including this header). */
#ifndef DUAL_JIT_SAMPLE
#define DUAL_JIT_SAMPLE 0
#endif
#define DUAL_JIT_DRAW(normal, k)                                                                 \
  dual_draw_value((normal), A.seed, A.point0 + pt, DUAL_JIT_SAMPLE, A.antithetic, (k))
/* Normal draws 2 j and 2 j + 1 into z[0], z[1] at once (the generator declares z at the pair's
 * first draw): the same bits as DUAL_JIT_DRAW of each. */
#define DUAL_JIT_NORMALS(j, z)                                                                   \
  dual_draw_normals(A.seed, A.point0 + pt, DUAL_JIT_SAMPLE, A.antithetic, (j), (z))

/* The tile loop: `pt` the thread's point (clamped), `live_` whether it exists.  Blocks have 32,
 * 64 or 128 threads (small batches use smaller blocks, spread over more multiprocessors); the
 * staging arrays are sized for DUAL_JIT_WARPS. */
#define DUAL_JIT_TILE_BEGIN                                                                      \
  const int lane_ = (int)(threadIdx.x & 31u), warp_ = (int)(threadIdx.x >> 5);                  \
  const int64_t warps_ = (int64_t)(blockDim.x >> 5);                                             \
  (void)warp_;                                                                                   \
  for (int64_t base_ = ((int64_t)blockIdx.x * warps_ + warp_) * 32; base_ < A.count;              \
       base_ += (int64_t)gridDim.x * warps_ * 32) {                                              \
    const int live_ = base_ + lane_ < A.count;                                                   \
    const int64_t pt = live_ ? base_ + lane_ : A.count - 1;                                      \
    int st = 0;
/* first: whether this is the job's first pass (it stores the status; later ones OR into it,
 * and only flags they raised: a point without any costs them no read of the status, whose
 * latency the tile loop would otherwise wait for at every tile); mask: flags to keep
 * (evaluation drops DUAL_PT_SINGULAR: no derivative, no singularity). */
#define DUAL_JIT_TILE_END(first, mask)                                                           \
    if (live_ && A.status != NULL) {                                                             \
      if (first) A.status[pt] = st & (mask);                                                     \
      else if ((st & (mask)) != 0) A.status[pt] |= st & (mask);                                  \
    }                                                                                            \
  }

/* Output value b of the point (the first pass stores it), directly or into the thread's row of
 * the warp's value staging area (ystage_, MP doubles per point; flushed by DUAL_JIT_FLUSH_Y). */
#define DUAL_JIT_OUT_VALUE(b, v, store)                                                          \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  if ((store) && live_ && A.y != NULL) A.y[pt * A.y_ps + (int64_t)(b) * A.y_es] = (v);
#define DUAL_JIT_STAGE_VALUE(b, v, MP)                                                           \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  ystage_[warp_][lane_ * (MP) + (b)] = (v);

/* Store the warp's staged values (M per point, MP apart) for its 32 points. */
#define DUAL_JIT_FLUSH_Y(M, MP)                                                                  \
  __syncwarp();                                                                                  \
  if (A.y != NULL) {                                                                             \
    const double *sw_ = ystage_[warp_];                                                          \
    for (int j_ = lane_; j_ < 32 * (M); j_ += 32) {                                              \
      const int p_ = A.y_ps != 1 ? j_ / (M) : (j_ & 31);                                         \
      const int r_ = A.y_ps != 1 ? j_ - p_ * (M) : (j_ >> 5);                                    \
      if (base_ + p_ < A.count) A.y[(base_ + p_) * A.y_ps + (int64_t)r_ * A.y_es] = sw_[p_ * (MP) + r_]; \
    }                                                                                            \
  }                                                                                              \
  __syncwarp();

/* Derivative lane k of output row b goes to stage row s_ (the thread's row of the warp's staging
 * area, KP doubles apart: KP odd, so a warp's rows fall in distinct banks).  A lane's flags cost
 * one integer max: e_ keeps the largest exponent field staged for the row, and only when it is
 * all ones (some lane NaN or infinite, which is rare) does DUAL_JIT_STAGE_FLAGS take the exact
 * flags of the row's present lanes (mask) from shared memory. */
#define DUAL_JIT_EXPONENT(t) ((unsigned)__double2hiint(t) & 0x7ff00000u)
#define DUAL_JIT_STAGE(k, t)                                                                     \
  {                                                                                              \
    const double t_ = (t);                                                                       \
    e_ = max(e_, DUAL_JIT_EXPONENT(t_));                                                         \
    s_[(k)] = t_;                                                                                \
  }
#define DUAL_JIT_STAGE_ZERO(k) s_[(k)] = 0.0;
#define DUAL_JIT_STAGE_FLAGS(KC, mask)                                                           \
  if (e_ == 0x7ff00000u) st |= dual_jit_row_flags(s_, (KC), (mask));

static __noinline__ __device__ int dual_jit_row_flags(const double *s, int kc, unsigned mask) {
  int f = 0;
  for (int k = 0; k < kc; ++k)
    if ((mask >> k) & 1u) f |= dual_jit_flags(s[k]);
  return f;
}

/* Store the warp's staged row b (KC columns from c0; `mask`: the columns staged, the others are
 * structural zeros and stored as 0.0 without a trip through shared memory) for its 32 points.
 * Row-major results (points far apart): each store instruction of the warp writes whole
 * contiguous pieces of rows; when KC divides 32 a thread keeps one column and walks the
 * points.  The loops are unrolled by 4 only: a kernel flushes up to hundreds of rows, and its
 * code must stay small enough for the instruction cache.  Column-major results (d_ps == 1): a thread keeps its point and walks the columns,
 * each store a contiguous line of 32 points. */
template <int KC, int KP>
static __noinline__ __device__ void dual_jit_flush_row(const dual_jit_args &A, const double *sw,
                                                          int64_t base, int lane, int b, int c0,
                                                          unsigned mask) {
  double *dr = A.d + (int64_t)b * A.d_rs + (int64_t)c0 * A.d_cs;
  const int64_t left = A.count - base;
  const int n = left < 32 ? (int)left : 32; /* points of the tile that exist */
  if (A.d_ps == 1) {
    if (lane < n) {
      double *dst = dr + base + lane;
#pragma unroll 4
      for (int k = 0; k < KC; ++k) dst[(int64_t)k * A.d_cs] = ((mask >> k) & 1u) ? sw[lane * KP + k] : 0.0;
    }
  } else if (32 % KC == 0) {
    const int k = lane % KC, p0 = lane / KC;
    const int present = (mask >> k) & 1u;
    double *dst = dr + (base + p0) * A.d_ps + (int64_t)k * A.d_cs;
    const int64_t step = (int64_t)(32 / KC) * A.d_ps;
#pragma unroll 4
    for (int i = 0; i < KC; ++i) {
      const int p = p0 + i * (32 / KC);
      if (p < n) *dst = present ? sw[p * KP + k] : 0.0;
      dst += step;
    }
  } else {
    for (int j = lane; j < 32 * KC; j += 32) {
      const int p = j / KC, k = j - p * KC;
      if (p < n) dr[(base + p) * A.d_ps + (int64_t)k * A.d_cs] = ((mask >> k) & 1u) ? sw[p * KP + k] : 0.0;
    }
  }
}
#define DUAL_JIT_FLUSH(b, KC, KP, c0, mask)                                                      \
  __syncwarp();                                                                                  \
  dual_jit_flush_row<(KC), (KP)>(A, stage_[warp_], base_, lane_, (b), (c0), (mask));             \
  __syncwarp();

/* Store the warp's staged derivative rows of every output at once: output b's KC columns from
 * c0 at [b * KC + k] of the thread's row (KP apart), M outputs.  Row-major results come out as
 * whole contiguous lines. */
#define DUAL_JIT_FLUSH_ALL(M, KC, KP, c0)                                                        \
  __syncwarp();                                                                                  \
  {                                                                                              \
    double *dr_ = A.d + (int64_t)(c0) * A.d_cs;                                                  \
    const double *sw_ = stage_[warp_];                                                           \
    for (int j_ = lane_; j_ < 32 * (M) * (KC); j_ += 32) {                                       \
      const int p_ = A.d_ps != 1 ? j_ / ((M) * (KC)) : (j_ & 31);                                \
      const int q_ = A.d_ps != 1 ? j_ - p_ * ((M) * (KC)) : (j_ >> 5);                           \
      const int r_ = q_ / (KC), k_ = q_ - r_ * (KC);                                             \
      if (base_ + p_ < A.count)                                                                  \
        dr_[(base_ + p_) * A.d_ps + (int64_t)r_ * A.d_rs + (int64_t)k_ * A.d_cs] = sw_[p_ * (KP) + q_]; \
    }                                                                                            \
  }                                                                                              \
  __syncwarp();

/* dual_sgrad's kernels (jit_source.c, dual_jit_source_sgrad).  An item is one sample block of a
 * point (engine/sgrad_reduce.h; A.count = points x A.sg_parts, A.sg_parts the blocks per point).
 * Inside the tile, the pass's body runs once per sample of the block with its own flags (`st`,
 * ORed into the item's after each sample) and stages the sample's outputs in the thread's stage
 * row (KP doubles: the m values, then m rows of the pass's KC lanes); the block accumulators of
 * E entries (sg_: DUAL_SGRAD_FIELDS rows of E) — E f on the first pass, then one per column —
 * take each unit, and the item stores its block's mean and m2 per entry in A.sg_part (its flags
 * in A.status[item]) for kernels/sgrad_combine.cu, which folds the blocks in order.  Every lane
 * of a warp runs as many iterations (a shorter block's lane repeats its last sample without
 * folding it), so the guarded rerun's vote stays warp-wide. */
#define DUAL_JIT_SGRAD_VALUE(b, v, KP)                                                           \
  st |= DUAL_PT_FLAGS(v);                                                                        \
  stage_[warp_][lane_ * (KP) + (b)] = (v);
#define DUAL_JIT_SGRAD_BEGIN(E)                                                                  \
  const int64_t vpt_ = pt;                                                                       \
  {                                                                                              \
    const int64_t pt = vpt_ / A.sg_parts, blk_ = vpt_ % A.sg_parts;                              \
    const int64_t w_ = A.antithetic ? 2 : 1, len_ = DUAL_SGRAD_BLOCK * w_;                       \
    const int64_t s0_ = blk_ * len_, s1_ = blk_ + 1 < A.sg_parts ? s0_ + len_ : A.samples;       \
    const int64_t last_ = A.samples - (A.sg_parts - 1) * len_; /* the last block's samples */    \
    const int64_t iters_ = last_ > len_ ? last_ : len_;                                          \
    const int64_t units_ = dual_sgrad_units(A.samples, A.antithetic), sgrad_e_ = (E);            \
    double sg_[DUAL_SGRAD_FIELDS * (E)] = {0.0};                                                 \
    int sgst_ = 0;                                                                               \
    for (int64_t i_ = 0; i_ < iters_; ++i_) {                                                    \
      const int sgon_ = s0_ + i_ < s1_;                                                          \
      const int64_t sample_ = sgon_ ? s0_ + i_ : s1_ - 1;                                        \
      int st = 0;
#define DUAL_JIT_SGRAD_FOLD(e, u)                                                                \
  if (sgon_) (void)dual_sgrad_block_entry((u), sample_, units_, A.antithetic, &sg_[(e)], sgrad_e_);
#define DUAL_JIT_SGRAD_END                                                                       \
      if (sgon_) sgst_ |= st;                                                                    \
    }                                                                                            \
    st = sgst_;
/* Entry e of the pass: the job's entry 0 (E f) or 1 + j (column j); the block's mean and m2. */
#define DUAL_JIT_SGRAD_STORE_F(e) DUAL_JIT_SGRAD_PART(e, 0)
#define DUAL_JIT_SGRAD_STORE(j, e) DUAL_JIT_SGRAD_PART(e, 1 + (j))
#define DUAL_JIT_SGRAD_PART(e, g)                                                                \
  if (live_) {                                                                                   \
    double *q_ = A.sg_part + (vpt_ * A.sg_entries + (g)) * 2;                                     \
    q_[0] = sg_[DUAL_SGRAD_BMEAN * sgrad_e_ + (e)];                                              \
    q_[1] = sg_[DUAL_SGRAD_BM2 * sgrad_e_ + (e)];                                                \
  }
/* After the stores: the tile's point is the item again (its flags at A.status[item]). */
#define DUAL_JIT_SGRAD_CLOSE }

/* dual_sgrad's sample-lane kernels (jit_source_rev.c): a lane per sample.  A warp's tile takes
 * 32 / L items (L, the samples of a block: DUAL_SGRAD_BLOCK units of W samples, W = 2 with
 * antithetic sampling, whose sample counts are even), lane q L + s running sample s of item q's
 * block; the body leaves the sample's row in the lane's row s2_ of the warp's stage2_ (KP
 * doubles: M values, then M rows of N gradient entries), and DUAL_JIT_SAMPLES_END folds each
 * item's rows entry by entry in sample order and stores the blocks' means, m2 and flags.
 * Nothing is carried from sample to sample, so a thread holds only one sample's sweep.  A
 * point's last block may hold fewer samples: its spare lanes run the last one again and fold
 * nothing (every lane runs the body, so its warp-wide vote for the guarded rerun holds). */
#define DUAL_JIT_SAMPLES_BEGIN                                                                   \
  const int lane_ = (int)(threadIdx.x & 31u), warp_ = (int)(threadIdx.x >> 5);                  \
  const int64_t warps_ = (int64_t)(blockDim.x >> 5);                                             \
  const int len_ = DUAL_SGRAD_BLOCK * (A.antithetic ? 2 : 1), per_ = 32 / len_;                  \
  const int sl_ = lane_ % len_, qs_ = lane_ / len_;                                              \
  const int64_t last_ = A.samples - (A.sg_parts - 1) * len_; /* the last block's samples */     \
  for (int64_t ibase_ = ((int64_t)blockIdx.x * warps_ + warp_) * per_; ibase_ < A.count;        \
       ibase_ += (int64_t)gridDim.x * warps_ * per_) {                                           \
    const int64_t item_ = ibase_ + qs_;                                                          \
    const int ilive_ = item_ < A.count;                                                          \
    const int64_t it_ = ilive_ ? item_ : A.count - 1;                                            \
    const int64_t pt = it_ / A.sg_parts, blk_ = it_ - pt * A.sg_parts;                          \
    const int64_t nb_ = blk_ + 1 < A.sg_parts ? len_ : last_;                                    \
    const int on_ = ilive_ && sl_ < nb_;                                                         \
    const int64_t sample_ = blk_ * len_ + (sl_ < nb_ ? sl_ : nb_ - 1);                           \
    int st = 0;
/* R1, R2: the tasks (item, entry) per lane, ceil(per_ (1 + N) / 32), for W = 1 and 2. */
#define DUAL_JIT_SAMPLES_END(KP, M, N, SCORE, R1, R2)                                            \
    sst2_[warp_][lane_] = on_ ? st : 0;                                                          \
    __syncwarp();                                                                                \
    if (A.antithetic)                                                                            \
      dual_jit_fold_blocks<2, R2>(A, stage2_[warp_], sst2_[warp_], lane_, ibase_, last_, KP, M, N, SCORE); \
    else dual_jit_fold_blocks<1, R1>(A, stage2_[warp_], sst2_[warp_], lane_, ibase_, last_, KP, M, N, SCORE); \
    __syncwarp();                                                                                \
  }

/* The fold of a warp's tile: lane l takes the tasks l, l + 32, ... (R of them; task t is entry
 * t % (1 + N) of the tile's item t / (1 + N)), reads its block's units from the samples' rows in
 * order — an antithetic pair's unit 0.5 (first + second), as dual_sgrad_block_entry — and folds
 * them: a full block by dual_sgrad_block8 (the tree at once), a point's shorter last block unit by
 * unit through dual_sgrad_block_add; both are the loop's arithmetic of DUAL_JIT_SGRAD_BEGIN, so
 * the bits are the same.  The samples are unrolled, so the units and nodes live in registers.
 * The tasks of entry 0 also OR the samples' flags (sst). */
template <int W, int R>
static __forceinline__ __device__ void dual_jit_fold_blocks(const dual_jit_args &A, const double *sw,
                                                            const int *sst, int lane, int64_t ibase,
                                                            int64_t last, int kp, int m, int n,
                                                            int score) {
  const int len = DUAL_SGRAD_BLOCK * W, per = 32 / len, E = 1 + n;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    const int t = lane + 32 * k, q = t / E, e = t - q * E;
    const int64_t qi = ibase + q;
    if (t >= per * E || qi >= A.count) continue;
    const int qn = qi % A.sg_parts + 1 < A.sg_parts ? len : (int)last; /* the block's samples */
    double uu[DUAL_SGRAD_BLOCK], pend = 0.0;
    int o = 0;
#pragma unroll
    for (int s = 0; s < len; ++s) {
      if (s >= qn) break;
      const double *r = sw + (q * len + s) * kp;
      double u = e == 0 ? r[0] : dual_sgrad_entry(r[0], r[m + e - 1], score ? r[m + n + e - 1] : 0.0, score);
      o |= sst[q * len + s];
      if (W == 2 && !(s & 1)) {
        pend = u;
        continue;
      }
      uu[s / W] = W == 2 ? 0.5 * (pend + u) : u;
    }
    double nd[DUAL_SGRAD_FIELDS] = {0.0};
    if (qn == len) {
      dual_sgrad_block8(uu, &nd[DUAL_SGRAD_BMEAN], &nd[DUAL_SGRAD_BM2]);
    } else {
      const int units = qn / W;
#pragma unroll
      for (int r = 0; r < DUAL_SGRAD_BLOCK; ++r)
        if (r < units) dual_sgrad_block_add(uu[r], r, r + 1 == units, nd, 1);
    }
    double *q2 = A.sg_part + (qi * A.sg_entries + e) * 2;
    q2[0] = nd[DUAL_SGRAD_BMEAN], q2[1] = nd[DUAL_SGRAD_BM2];
    if (e == 0 && A.status != NULL) A.status[qi] = o;
  }
}

#endif /* DUAL_JIT_KERNEL_H */
