/*
 * cpu_kernel.h — what every generated CPU pass function (jit/jit_source.c, jit_source2.c,
 * jit_source_rev.c and jit_rev_loops.c: the CPU target) includes: the shared rules (dual/rules.h), tangent arithmetic
 * (engine/tangent_terms.h), random draws (engine/draws.h), the argument block (jit/jit_args.h),
 * and the loads, stores and point loop the generator's code calls.  Compiled by the system C compiler at run time
 * (jit/cc_compile.h), embedded in the library as text.
 *
 * Layout of a pass function: dual_cpu_p<k>(A, p0, nb) runs points p0 .. p0 + nb - 1 (nb at most
 * DUAL_CPU_BLK, which the generated source defines before including this header) through the
 * pass's straight-line body inside one `omp simd` loop, one point per iteration, so each op is a
 * vector instruction across points where the compiler can, every value and tangent lane a local
 * it keeps in registers.  Each output's value and present lanes go to the block's stage, slot by
 * slot (a slot's points contiguous: vector stores); a point whose partials were not all finite is
 * run again by the guarded body (per point, out of the loop), which rewrites its slots; then
 * each point's rows are copied to the caller's arrays whole, structural zeros included, and its
 * status word is written.  Reverse mode's functions (below: DUAL_CPU_SEG_BEGIN) run their pieces
 * as point loops of their own and store straight to the caller's arrays.
 */
#ifndef DUAL_CPU_KERNEL_H
#define DUAL_CPU_KERNEL_H

#define DUAL_FN_JIT_CPU 1 /* the elementary functions inlined, or SIMD clones (dual/fn_bits.h) */
#include "dual/portable.h"
#include "dual/ops.h" /* F_CHECK */
#include "dual/rules.h"
#include "dualbatch.h"
#include "engine/draws.h"
#include "engine/tangent_terms.h"
#include "engine/value_step.h" /* DUAL_FINITE_FLAGS, DUAL_INPUT_FLAGS */
#include "jit/jit_args.h"



/* The point loops' `omp simd` (a compiler without _Pragma, tcc, runs them as plain loops). */
#if defined(__TINYC__)
#define DUAL_CPU_SIMD
#else
#define DUAL_CPU_SIMD _Pragma("omp simd")
#endif

/* A segmented reverse-mode module's functions (jit_rev_segments.c) stay functions: gcc would
 * inline a static function called once, making the whole sweep one function to compile again. */
#if defined(__GNUC__)
#define DUAL_CPU_NOINLINE __attribute__((noinline))
#else
#define DUAL_CPU_NOINLINE
#endif

/* Nothing in the point loop has its address taken: the compiler makes such a local an array
 * across the loop's lanes, and a rule's partials (three a point) would then be stored with a
 * stride it cannot vectorize.  So a load's flags are a statement of their own, a rule's value,
 * partials and flags come back in a struct (dual_cpu_step_<name>, the rule of dual/rules.h
 * inlined), and a pair of normal draws too. */
#define DUAL_CPU_X(i) ax_[pt * axps_ + (int64_t)(i) * axes_]
#define DUAL_CPU_P(i) ap_[pt * apps_ + (int64_t)(i) * apes_]
#if defined(DUAL_CPU_LOADS_FLAGGED)
/* Reverse mode's loads (jit_source_rev.c's CPU target) are read inside expressions, as the GPU
 * kernels', and flag themselves there: the load is written twice, which the compiler reads once. */
#define DUAL_CPU_FLAGGED(v) (st |= DUAL_INPUT_FLAGS(v), (v))
#define DUAL_JIT_LDX(i) DUAL_CPU_FLAGGED(DUAL_CPU_X(i))
#define DUAL_JIT_LDP(i) DUAL_CPU_FLAGGED(DUAL_CPU_P(i))
#define DUAL_JIT_LDU(i) DUAL_CPU_FLAGGED(au_[pt * aups_ + (int64_t)(i) * aues_])
#else
#define DUAL_JIT_LDX(i) DUAL_CPU_X(i)
#define DUAL_JIT_LDP(i) DUAL_CPU_P(i)
#endif
#define DUAL_JIT_LDV(i) av_[pt * avps_ + (int64_t)(i) * aves_]
/* An input's flag (the interpreter's DUAL_LOAD_X_VALUES). */
#define DUAL_CPU_TAKEN(v) st |= DUAL_INPUT_FLAGS(v);
#define DUAL_JIT_DRAW(normal, k) dual_draw_value((normal), aseed_, apoint0_ + pt, asample_, aanti_, (k))
typedef struct dual_cpu_pair {
  double z[2];
} dual_cpu_pair;
DUAL_INLINE dual_cpu_pair dual_cpu_normals(uint64_t seed, int64_t point, int64_t sample, int antithetic, int32_t j) {
  dual_cpu_pair p;
  dual_draw_normals(seed, point, sample, antithetic, j, p.z);
  return p;
}
#define DUAL_CPU_NORMALS(j) dual_cpu_normals(aseed_, apoint0_ + pt, asample_, aanti_, (j))

/* A constant the generator writes by its bits (NaN or infinite: jit/strbuf.h). */
#define __longlong_as_double(u) dual_from_bits((uint64_t)(u))

/* One op's rule by value: its result, partials and flags. */
typedef struct dual_cpu_step {
  double r, d0, d1, d2;
  int f;
} dual_cpu_step;
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  DUAL_INLINE dual_cpu_step dual_cpu_step_##name(double a, double b, double c) {                \
    dual_cpu_step s;                                                                             \
    double d[3];                                                                                 \
    int f = 0;                                                                                   \
    s.r = dual_rule_##name(a, b, c, d, &f);                                                      \
    s.d0 = d[0], s.d1 = d[1], s.d2 = d[2], s.f = f;                                              \
    return s;                                                                                    \
  }
#include "dual/ops.def"
#undef OP
/* The value half of an instruction (engine/value_step.h's, by value): res the result, qa qb qc
 * the partials, the flags ORed into st for a checked op. */
#define DUAL_CPU_STEP(name, flags, a, b, c, res)                                                 \
  const dual_cpu_step s_ = dual_cpu_step_##name((a), (b), (c));                                  \
  (res) = s_.r;                                                                                  \
  if ((flags)&F_CHECK) st |= s_.f;                                                               \
  const double qa = s_.d0, qb = s_.d1, qc = s_.d2;                                               \
  (void)qa, (void)qb, (void)qc;

/* The same with the second partials (qaa = d2r/da2, qab, qbb), for the second-order passes
 * (jit/jit_source2.c's CPU target). */
typedef struct dual_cpu_step2 {
  double r, d0, d1, d2, e0, e1, e2;
  int f;
} dual_cpu_step2;
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  DUAL_INLINE dual_cpu_step2 dual_cpu_step2_##name(double a, double b, double c) {              \
    dual_cpu_step2 s;                                                                            \
    double d[3], dd[3];                                                                          \
    int f = 0;                                                                                   \
    s.r = dual_rule_##name(a, b, c, d, &f);                                                      \
    dual_rule2_##name(a, b, c, s.r, d, dd);                                                      \
    s.d0 = d[0], s.d1 = d[1], s.d2 = d[2], s.e0 = dd[0], s.e1 = dd[1], s.e2 = dd[2], s.f = f;    \
    return s;                                                                                    \
  }
#include "dual/ops.def"
#undef OP
#define DUAL_CPU_STEP2(name, flags, a, b, c, res)                                                \
  const dual_cpu_step2 s_ = dual_cpu_step2_##name((a), (b), (c));                                \
  (res) = s_.r;                                                                                  \
  if ((flags)&F_CHECK) st |= s_.f;                                                               \
  const double qa = s_.d0, qb = s_.d1, qc = s_.d2, qaa = s_.e0, qab = s_.e1, qbb = s_.e2;        \
  (void)qa, (void)qb, (void)qc;

/* An op's second partials by value from its value and partials (reverse mode's
 * forward-over-reverse, jit_source_rev.c's CPU target: a group of directions takes the d' of
 * partials the values' sweep computed). */
typedef struct dual_cpu_dd {
  double e0, e1, e2;
} dual_cpu_dd;
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  DUAL_INLINE dual_cpu_dd dual_cpu_rule2_##name(double a, double b, double c, double r, double d0, double d1, \
                                                double d2) {                                     \
    const double d[3] = {d0, d1, d2};                                                            \
    double dd[3];                                                                                \
    dual_rule2_##name(a, b, c, r, d, dd);                                                        \
    dual_cpu_dd e;                                                                               \
    e.e0 = dd[0], e.e1 = dd[1], e.e2 = dd[2];                                                    \
    return e;                                                                                    \
  }
#include "dual/ops.def"
#undef OP

/* The second-order passes' products and stored entries (jit_source2.h): by default the guarded
 * ones — the interpreters' products (DUAL_TM, DUAL_TT), each stored entry's exact flags; the
 * generated point loop redefines the three around itself as the plain products and a note of
 * the entry's exponent in bad_ (all ones where NaN or infinite: the point then runs again
 * through the guarded copy, which rewrites its slots and flags exactly). */
#define DUAL_RTM DUAL_TM
#define DUAL_RTT DUAL_TT
#define DUAL_CPU2_NOTE_GUARDED(x) st |= DUAL_FINITE_FLAGS(x);
#define DUAL_CPU2_NOTE_FAST(x) bad_ = dual_cpu_max(bad_, DUAL_CPU_EXPONENT(x));
#define DUAL_CPU2_NOTE DUAL_CPU2_NOTE_GUARDED
#define DUAL_CPU2_PUT(s, value)                                                                  \
  {                                                                                              \
    const double e_ = (value);                                                                   \
    DUAL_CPU2_NOTE(e_)                                                                           \
    stage_[(int64_t)(s) * DUAL_CPU_BLK + i_] = e_;                                               \
  }
/* Point i_'s stored elements from the stage (N entries of CP: array 0 for d, 1 for h, the
 * output, the element, the slot; slot -1 a structural 0.0) into the caller's d and h. */
#define DUAL_CPU2_COPY(N, CP)                                                                    \
  for (int64_t z_ = 0; z_ < (N); ++z_) {                                                         \
    const int64_t *c_ = (CP) + 4 * z_;                                                           \
    const double e_ = c_[3] >= 0 ? stage_[c_[3] * DUAL_CPU_BLK + i_] : 0.0;                      \
    if (c_[0] == 0) {                                                                            \
      if (ad_ != NULL) ad_[(p0 + i_) * adps_ + c_[1] * adrs_ + c_[2] * adcs_] = e_;              \
    } else if (ah_ != NULL) {                                                                    \
      ah_[(p0 + i_) * ahps_ + c_[1] * ahrs_ + c_[2] * ahes_] = e_;                               \
    }                                                                                            \
  }

/* The largest exponent field of three partials (all ones where one is NaN or infinite). */
#define DUAL_CPU_EXPONENT(t) ((unsigned)(dual_bits(t) >> 32) & 0x7ff00000u)
DUAL_INLINE unsigned dual_cpu_max(unsigned a, unsigned b) { return a > b ? a : b; }
#define DUAL_CPU_BAD(qa, qb, qc)                                                                 \
  bad_ = dual_cpu_max(bad_, dual_cpu_max(dual_cpu_max(DUAL_CPU_EXPONENT(qa), DUAL_CPU_EXPONENT(qb)), \
                                         DUAL_CPU_EXPONENT(qc)));

/* An output's value or lane into stage slot s at the point's place, with its NaN and infinity
 * flags (the interpreter takes them for every value and present lane it stores); the value's
 * flags alone (DUAL_CPU_FLAG) on the passes after the first, which store no value. */
#define DUAL_CPU_OUT(flags, s, v)                                                                \
  if (flags) st |= DUAL_FINITE_FLAGS(v);                                                            \
  stage_[(int64_t)(s) * DUAL_CPU_BLK + i_] = (v);
#define DUAL_CPU_FLAG(v) st |= DUAL_FINITE_FLAGS(v);

/* Point i_'s values (the first pass: M outputs, YS their slots, -1 for an output never stored)
 * and its pass's derivative rows (KC columns from C0, DS[b * KC + k] the slot of output b's
 * lane k, -1 for a structural zero) from the stage to the caller's arrays. */
#define DUAL_CPU_COPY_Y(M, YS)                                                                   \
  if (ay_ != NULL)                                                                               \
    for (int b_ = 0; b_ < (M); ++b_)                                                             \
      if ((YS)[b_] >= 0) ay_[(p0 + i_) * ayps_ + (int64_t)b_ * ayes_] = stage_[(int64_t)(YS)[b_] * DUAL_CPU_BLK + i_];
#define DUAL_CPU_COPY_D(M, KC, C0, DS)                                                           \
  if (ad_ != NULL)                                                                               \
    for (int b_ = 0; b_ < (M); ++b_) {                                                           \
      double *row_ = ad_ + (p0 + i_) * adps_ + (int64_t)b_ * adrs_ + (int64_t)(C0) * adcs_;      \
      const int32_t *ds_ = (DS) + b_ * (KC);                                                     \
      for (int k_ = 0; k_ < (KC); ++k_)                                                          \
        row_[k_ * adcs_] = ds_[k_] >= 0 ? stage_[(int64_t)ds_[k_] * DUAL_CPU_BLK + i_] : 0.0;    \
    }

/* Non-temporal stores of a block's derivative data (DUAL_CPU_ROWS), where the target has them:
 * a large batch's Jacobians go to memory without first reading every line they fill (on the
 * 2-core development machine plain stores wrote 7-10 GB/s, streaming ones 10-19).  gcc gets its
 * builtins, the instructions <immintrin.h>'s intrinsics wrap: that header is 45,000 lines, which
 * gcc parsed in every module (a third of a small module's compile at -O1).  Other compilers
 * (clang) get the intrinsics. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
typedef double dual_cpu_nt_v8 __attribute__((vector_size(64), aligned(8), may_alias));
#define DUAL_CPU_NT_LANES 8
#define DUAL_CPU_NT_PUT(dst, buf) __builtin_ia32_movntpd512((dst), *(const dual_cpu_nt_v8 *)(const void *)(buf))
#define DUAL_CPU_NT_FENCE() __builtin_ia32_sfence()
#elif defined(__GNUC__) && !defined(__clang__) && defined(__AVX__)
typedef double dual_cpu_nt_v4 __attribute__((vector_size(32), aligned(8), may_alias));
#define DUAL_CPU_NT_LANES 4
#define DUAL_CPU_NT_PUT(dst, buf) __builtin_ia32_movntpd256((dst), *(const dual_cpu_nt_v4 *)(const void *)(buf))
#define DUAL_CPU_NT_FENCE() __builtin_ia32_sfence()
#elif defined(__GNUC__) && !defined(__clang__) && defined(__SSE2__)
typedef double dual_cpu_nt_v2 __attribute__((vector_size(16), aligned(8), may_alias));
#define DUAL_CPU_NT_LANES 2
#define DUAL_CPU_NT_PUT(dst, buf) __builtin_ia32_movntpd((dst), *(const dual_cpu_nt_v2 *)(const void *)(buf))
#define DUAL_CPU_NT_FENCE() __builtin_ia32_sfence()
#elif defined(__AVX512F__)
#include <immintrin.h>
#define DUAL_CPU_NT_LANES 8
#define DUAL_CPU_NT_PUT(dst, buf) _mm512_stream_pd((dst), _mm512_loadu_pd(buf))
#define DUAL_CPU_NT_FENCE() _mm_sfence()
#elif defined(__AVX__)
#include <immintrin.h>
#define DUAL_CPU_NT_LANES 4
#define DUAL_CPU_NT_PUT(dst, buf) _mm256_stream_pd((dst), _mm256_loadu_pd(buf))
#define DUAL_CPU_NT_FENCE() _mm_sfence()
#elif defined(__SSE2__)
#include <emmintrin.h>
#define DUAL_CPU_NT_LANES 2
#define DUAL_CPU_NT_PUT(dst, buf) _mm_stream_pd((dst), _mm_loadu_pd(buf))
#define DUAL_CPU_NT_FENCE() _mm_sfence()
#else
#define DUAL_CPU_NT_LANES 0
#define DUAL_CPU_NT_PUT(dst, buf) ((void)(dst), (void)(buf))
#define DUAL_CPU_NT_FENCE() ((void)0)
#endif

/* Whether a pass of every column (M outputs, KC columns) streams: asked for, with non-temporal
 * stores, and each point's M x KC derivative entries contiguous and the points back to back, so
 * that the block's points make one contiguous run. */
#define DUAL_CPU_CAN_STREAM(stream, M, KC)                                                       \
  ((stream) && DUAL_CPU_NT_LANES > 0 && ad_ != NULL && adcs_ == 1 && adrs_ == (KC) &&             \
   adps_ == (int64_t)(M) * (KC))

/* Point i_'s derivative rows of a pass of KC columns from C0 (M outputs): its NNZ present
 * entries (NZ: entry b * KC + k, then its stage slot) set in rows_ (all zeros between points),
 * the rows copied out whole — streamed (stream_, the block's points back to back: one run of
 * non-temporal stores, DUAL_CPU_NT_LANES at a time from an aligned address; the few values before
 * it and the remainder carried in nt_ plain), a row at a time where the columns are contiguous,
 * else entry by entry — then the entries cleared again. */
#define DUAL_CPU_ROWS_BEGIN(ME)                                                                  \
  double rows_[ME];                                                                              \
  memset(rows_, 0, sizeof rows_);                                                                \
  double *out_ = stream_ ? ad_ + p0 * adps_ : NULL;                                              \
  double nt_[DUAL_CPU_NT_LANES > 0 ? DUAL_CPU_NT_LANES : 1];                                     \
  int nnt_ = 0;
#define DUAL_CPU_ROWS(M, KC, C0, NNZ, NZ)                                                        \
  if (ad_ != NULL) {                                                                             \
    for (int z_ = 0; z_ < (NNZ); ++z_) rows_[(NZ)[2 * z_]] = stage_[(int64_t)(NZ)[2 * z_ + 1] * DUAL_CPU_BLK + i_]; \
    if (stream_) {                                                                               \
      dual_cpu_stream_put(&out_, nt_, &nnt_, rows_, (int64_t)(M) * (KC));                        \
    } else if (adcs_ == 1) {                                                                     \
      for (int b_ = 0; b_ < (M); ++b_)                                                           \
        memcpy(ad_ + (p0 + i_) * adps_ + (int64_t)b_ * adrs_ + (C0), rows_ + b_ * (KC), sizeof(double) * (KC)); \
    } else {                                                                                     \
      for (int b_ = 0; b_ < (M); ++b_)                                                           \
        for (int k_ = 0; k_ < (KC); ++k_)                                                        \
          ad_[(p0 + i_) * adps_ + (int64_t)b_ * adrs_ + (int64_t)((C0) + k_) * adcs_] = rows_[b_ * (KC) + k_]; \
    }                                                                                            \
    for (int z_ = 0; z_ < (NNZ); ++z_) rows_[(NZ)[2 * z_]] = 0.0;                                \
  }
/* A streamed pass's point i_ whole (ME = M x KC entries, a multiple of 8: DUAL_CPU_CAN_STREAM8),
 * 8 entries a vector where the row reaches a 64-byte boundary: the first h8_ entries (up to the
 * boundary; every point's row has the same offset, its rows back to back) and the last ones
 * plain, each vector between composed in a register from its present entries and stored
 * non-temporal — no row buffer to fill, copy and clear: kin's Jacobian (181 present entries of
 * 1024) in bench_cpu on the 2-core AMD EPYC development machine (2026-11-30) 1.19x on 1 thread,
 * 1.16x on 2, where the copy-out had taken half of the pass function's samples (perf).
 * DUAL_CPU_ROWS8_BEGIN cuts the pass's
 * present entries (NNZ (entry, slot) pairs of NZ, by entry) at the block's offset: vector c
 * holds pairs cs8_[c] .. cs8_[c + 1] - 1 of cp8_ (entry in the vector, slot).  AVX-512 with gcc
 * only (dual_cpu_nt_v8); elsewhere DUAL_CPU_ROWS. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#define DUAL_CPU_CAN_STREAM8(ME) (stream_ && (ME) % 8 == 0)
#define DUAL_CPU_ROWS8_BEGIN(ME, NNZ, NZ)                                                        \
  int32_t cs8_[(ME) / 8 + 1], cp8_[2 * (NNZ) + 2];                                               \
  int h8_ = 0, nc8_ = 0;                                                                         \
  if (stream8_) {                                                                                \
    h8_ = (int)((8u - (((uintptr_t)(ad_ + p0 * adps_) >> 3) & 7u)) & 7u);                        \
    nc8_ = ((ME) - h8_) / 8;                                                                     \
    int z_ = 0, n_ = 0;                                                                          \
    while (z_ < (NNZ) && (NZ)[2 * z_] < h8_) ++z_;                                               \
    for (int c_ = 0; c_ < nc8_; ++c_) {                                                          \
      cs8_[c_] = n_;                                                                             \
      for (; z_ < (NNZ) && (NZ)[2 * z_] < h8_ + 8 * c_ + 8; ++z_, ++n_)                          \
        cp8_[2 * n_] = (NZ)[2 * z_] - (h8_ + 8 * c_), cp8_[2 * n_ + 1] = (NZ)[2 * z_ + 1];       \
    }                                                                                            \
    cs8_[nc8_] = n_;                                                                             \
  }                                                                                              \
  (void)cs8_, (void)cp8_;
#define DUAL_CPU_ROWS8(ME, DS)                                                                   \
  {                                                                                              \
    double *o_ = ad_ + (p0 + i_) * adps_;                                                        \
    for (int e_ = 0; e_ < h8_; ++e_) o_[e_] = (DS)[e_] >= 0 ? stage_[(int64_t)(DS)[e_] * DUAL_CPU_BLK + i_] : 0.0; \
    for (int c_ = 0; c_ < nc8_; ++c_) {                                                          \
      dual_cpu_nt_v8 v_ = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};                              \
      for (int z_ = cs8_[c_]; z_ < cs8_[c_ + 1]; ++z_)                                           \
        v_[cp8_[2 * z_]] = stage_[(int64_t)cp8_[2 * z_ + 1] * DUAL_CPU_BLK + i_];                \
      __builtin_ia32_movntpd512(o_ + h8_ + 8 * c_, v_);                                          \
    }                                                                                            \
    for (int e_ = h8_ + 8 * nc8_; e_ < (ME); ++e_)                                               \
      o_[e_] = (DS)[e_] >= 0 ? stage_[(int64_t)(DS)[e_] * DUAL_CPU_BLK + i_] : 0.0;              \
  }
#else
#define DUAL_CPU_CAN_STREAM8(ME) 0
#define DUAL_CPU_ROWS8_BEGIN(ME, NNZ, NZ)
#define DUAL_CPU_ROWS8(ME, DS) {}
#endif
#define DUAL_CPU_ROWS_END                                                                        \
  if (stream_) {                                                                                 \
    for (int j_ = 0; j_ < nnt_; ++j_) *out_++ = nt_[j_];                                         \
    DUAL_CPU_NT_FENCE();                                                                         \
  }                                                                                              \
  (void)out_, (void)nt_, (void)nnt_;

/* Append n values to a non-temporal run at *out (carry: up to DUAL_CPU_NT_LANES - 1 values not
 * yet written, *nc of them): plain stores up to the first aligned address, then whole vectors. */
DUAL_INLINE void dual_cpu_stream_put(double **out, double *carry, int *nc, const double *src, int64_t n) {
  int64_t i = 0;
  if (DUAL_CPU_NT_LANES == 0) {
    for (; i < n; ++i) *(*out)++ = src[i];
    return;
  }
  while (*nc > 0 && i < n) {
    carry[(*nc)++] = src[i++];
    if (*nc == DUAL_CPU_NT_LANES) {
      DUAL_CPU_NT_PUT(*out, carry);
      *out += DUAL_CPU_NT_LANES, *nc = 0;
    }
  }
  if (*nc > 0) return;
  while (i < n && ((uintptr_t)*out & (sizeof(double) * DUAL_CPU_NT_LANES - 1)) != 0) *(*out)++ = src[i++];
  for (; i + DUAL_CPU_NT_LANES <= n; i += DUAL_CPU_NT_LANES) {
    DUAL_CPU_NT_PUT(*out, src + i);
    *out += DUAL_CPU_NT_LANES;
  }
  while (i < n) carry[(*nc)++] = src[i++];
}

/* A's fields as locals (the body and the guarded body read them so): the compiler then knows
 * that the loop's stores do not move them, and keeps them out of the loop. */
#define DUAL_CPU_ARGS                                                                            \
  const double *const ax_ = A->x, *const ap_ = A->p, *const av_ = A->v, *const au_ = A->u;      \
  double *const ay_ = A->y, *const ad_ = A->d, *const ah_ = A->h;                               \
  const int64_t axps_ = A->x_ps, axes_ = A->x_es, apps_ = A->p_ps, apes_ = A->p_es;              \
  const int64_t avps_ = A->v_ps, aves_ = A->v_es, ayps_ = A->y_ps, ayes_ = A->y_es;              \
  const int64_t aups_ = A->u_ps, aues_ = A->u_es;                                                \
  const int64_t adps_ = A->d_ps, adrs_ = A->d_rs, adcs_ = A->d_cs;                               \
  const int64_t ahps_ = A->h_ps, ahrs_ = A->h_rs, ahes_ = A->h_es;                               \
  const uint64_t aseed_ = A->seed;                                                               \
  const int64_t apoint0_ = A->point0, asample_ = A->sample;                                     \
  const int32_t aanti_ = A->antithetic;                                                          \
  (void)asample_, (void)ax_, (void)ap_, (void)av_, (void)ay_, (void)ad_, (void)axps_, (void)axes_, (void)apps_,  \
      (void)apes_, (void)avps_, (void)aves_, (void)ayps_, (void)ayes_, (void)adps_, (void)adrs_, \
      (void)adcs_, (void)aseed_, (void)apoint0_, (void)aanti_, (void)ah_, (void)ahps_, (void)ahrs_, (void)ahes_, \
      (void)au_, (void)aups_, (void)aues_;

/* The point loop of a pass function: `pt` the point. */
#define DUAL_CPU_LOOP_BEGIN                                                                      \
  DUAL_CPU_ARGS                                                                                  \
  int st_[DUAL_CPU_BLK];                                                                         \
  unsigned bad_b_[DUAL_CPU_BLK];                                                                 \
  DUAL_CPU_SIMD for (int64_t i_ = 0; i_ < nb; ++i_) {                                            \
    const int64_t pt = p0 + i_;                                                                  \
    int st = 0;                                                                                  \
    unsigned bad_ = 0u;
#define DUAL_CPU_LOOP_END                                                                        \
    st_[i_] = st;                                                                                \
    bad_b_[i_] = bad_;                                                                           \
  }
/* After the loop, for each point i_ (the generator writes the loop): its flags, those of the
 * guarded rerun where a partial was NaN or infinite (bad_b_[i_] all ones), and its status word
 * (first: the job's first pass stores it, later ones OR theirs in; mask: the flags kept). */
#define DUAL_CPU_BAD_POINT(i) (bad_b_[(i)] == 0x7ff00000u)
#define DUAL_CPU_STATUS(i, st, first, mask)                                                      \
  if (A->status == NULL) {                                                                       \
  } else if (first) {                                                                            \
    A->status[p0 + (i)] = (st) & (mask);                                                         \
  } else {                                                                                       \
    A->status[p0 + (i)] |= (st) & (mask);                                                        \
  }

/* A segmented first-order pass (jit_source.c: emit_segment_cpu, a long program's pass cut into
 * functions): the pass function zeroes the block's flags and partials' exponents
 * (DUAL_CPU_FSEGS_BEGIN) and calls each segment's function, a point loop of its own
 * (DUAL_CPU_FSEG_BEGIN/END) that ORs its flags and maxes its exponents in; after the last one
 * they are what one loop over the whole body leaves (DUAL_CPU_LOOP_END). */
#define DUAL_CPU_FSEGS_BEGIN                                                                     \
  DUAL_CPU_ARGS                                                                                  \
  int st_[DUAL_CPU_BLK];                                                                         \
  unsigned bad_b_[DUAL_CPU_BLK];                                                                 \
  for (int64_t i_ = 0; i_ < nb; ++i_) st_[i_] = 0, bad_b_[i_] = 0u;
#define DUAL_CPU_FSEG_BEGIN                                                                      \
  DUAL_CPU_ARGS                                                                                  \
  DUAL_CPU_SIMD for (int64_t i_ = 0; i_ < nb; ++i_) {                                            \
    const int64_t pt = p0 + i_;                                                                  \
    int st = 0;                                                                                  \
    unsigned bad_ = 0u;                                                                          \
    (void)pt;
#define DUAL_CPU_FSEG_END                                                                        \
    st_[i_] |= st;                                                                               \
    bad_b_[i_] = dual_cpu_max(bad_b_[i_], bad_);                                                 \
  }

/* Reverse mode's pieces (jit_source_rev.c, jit_rev_loops.c: the CPU target): each piece of a
 * pass function — its whole body, or in a looped module each straight piece and each iteration
 * of a loop — is one `omp simd` loop over the block's points, its flags ORed into the point's
 * st_b_ entry (the function zeroes them first and stores them as the status after). */
#define DUAL_CPU_SEG_BEGIN                                                                       \
  DUAL_CPU_SIMD for (int64_t i_ = 0; i_ < nb; ++i_) {                                            \
    const int64_t pt = p0 + i_;                                                                  \
    int st = 0;                                                                                  \
    (void)pt;
#define DUAL_CPU_SEG_END                                                                         \
    st_b_[i_] |= st;                                                                             \
  }
/* Its stores are unconditional (a store under a condition, even one the loop never changes,
 * keeps gcc 12 from vectorizing a loop whose stores are scatters): y and d, where the caller
 * passed none, are a sink of one element (strides 0) whose value nobody reads. */
#define DUAL_CPU_REV_ARGS                                                                        \
  double sink_[1];                                                                               \
  const int has_y_ = ay_ != NULL, has_d_ = ad_ != NULL, has_h_ = ah_ != NULL;                    \
  double *const ry_ = has_y_ ? ay_ : sink_, *const rd_ = has_d_ ? ad_ : sink_;                   \
  double *const rh_ = has_h_ ? ah_ : sink_;                                                      \
  const int64_t ryps_ = has_y_ ? ayps_ : 0, ryes_ = has_y_ ? ayes_ : 0;                          \
  const int64_t rdps_ = has_d_ ? adps_ : 0, rdrs_ = has_d_ ? adrs_ : 0, rdcs_ = has_d_ ? adcs_ : 0; \
  const int64_t rhps_ = has_h_ ? ahps_ : 0, rhrs_ = has_h_ ? ahrs_ : 0, rhes_ = has_h_ ? ahes_ : 0; \
  (void)ry_, (void)ryps_, (void)ryes_, (void)rd_, (void)rdps_, (void)rdrs_, (void)rdcs_, (void)rh_, \
      (void)rhps_, (void)rhrs_, (void)rhes_;
/* Output b's value, flagged (reverse mode's only pass stores it). */
#define DUAL_CPU_OUT_VALUE(b, v)                                                                 \
  st |= DUAL_FINITE_FLAGS(v);                                                                    \
  ry_[pt * ryps_ + (int64_t)(b) * ryes_] = (v);
/* Entry j of output b's gradient (Jacobian row), straight to d, flagged when the caller passed a
 * d (as the GPU's DUAL_JIT2_PUT_D). */
#define DUAL_CPU_PUT_D(b, j, value)                                                              \
  {                                                                                              \
    const double g_ = (value);                                                                   \
    st |= has_d_ ? DUAL_FINITE_FLAGS(g_) : 0;                                                    \
    rd_[(int64_t)(b) * rdrs_ + pt * rdps_ + (int64_t)(j) * rdcs_] = g_;                          \
  }
/* Forward-over-reverse's entries E0 and E1 (-1: none; the full layout's mirror) of output b's
 * Hessian, or entry E0 of its HVP, flagged always (as the GPU's DUAL_JIT2_STAGE_H). */
#define DUAL_CPU_PUT_H(b, E0, E1, value)                                                         \
  {                                                                                              \
    const double h_ = (value);                                                                   \
    st |= DUAL_FINITE_FLAGS(h_);                                                                 \
    rh_[pt * rhps_ + (int64_t)(b) * rhrs_ + (int64_t)(E0) * rhes_] = h_;                         \
    if ((E1) >= 0) rh_[pt * rhps_ + (int64_t)(b) * rhrs_ + (int64_t)(E1) * rhes_] = h_;          \
  }
/* a where c is nonzero, else b, for a c the point loop does not change (iteration k_'s): both
 * read, one kept by bit masks.  (A choice with a load in one arm is a masked gather, and a ?:
 * on a scalar condition between vectors a statement, that gcc 12 does not vectorize.) */
DUAL_INLINE double dual_cpu_sel(int c, double a, double b) {
  const uint64_t m = 0 - (uint64_t)(c != 0);
  return dual_from_bits((dual_bits(a) & m) | (dual_bits(b) & ~m));
}
/* Iteration k - s, clamped to the loop's first (iteration 0 reads its inputs anyway). */
DUAL_INLINE int64_t dual_cpu_back(int64_t k, int64_t s) { return k >= s ? k - s : 0; }

#endif /* DUAL_CPU_KERNEL_H */
