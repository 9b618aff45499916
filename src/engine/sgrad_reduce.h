/*
 * sgrad_reduce.h — dual_sgrad's reduction over samples, shared by the CPU driver
 * (cpu/engine_sgrad.c), the GPU interpreter (kernels/sgrad_loop.h) and the compiled tier's
 * generated kernels (jit/jit_source.c) so all produce the same bits.  After each sample the
 * point's results — its sample row — are folded into running means and sums of squared
 * deviations (a pairwise tree within blocks of 8, Chan's formula across blocks); nothing of size
 * samples x points is kept.
 *
 * A sample row holds the program's m outputs, then its m gradient rows of n entries
 * (row[m + i*n + j] = d out_i / d x_j), consecutive entries `es` doubles apart.  Pathwise
 * (m = 1): the sample's f and gradient.  Score-function (m = 2, sgrad_score.c): f, the log
 * density L of the draws, and the per-sample gradient is grad f + f grad L.  The accumulators
 * (DUAL_SGRAD_FIELDS doubles per entry) cover 1 + n entries, f first.  With
 * antithetic sampling a unit is the mean of samples 2j and 2j + 1 (the first waits in pend).
 *
 * The units fold in blocks of DUAL_SGRAD_BLOCK = 8: within a block by a fixed binary tree
 * (units 2i and 2i + 1 into a node of two, nodes of two into four, of four into eight, each by
 * Chan's formula, whose weights for equal halves, 1/2 and n/2, are exact: no division and a
 * dependence depth of three instead of Welford's eight), then the block's (mean, m2) is combined
 * into the running totals by Chan's formula, blocks in order.  So a point's samples can be
 * spread over threads block by block (the compiled tier does: each thread folds one block, and
 * dual_sgrad_combine folds the blocks in order afterwards) with the same bits as one thread
 * running them all.  Valid C11 and CUDA.
 */
#ifndef DUAL_ENGINE_SGRAD_REDUCE_H
#define DUAL_ENGINE_SGRAD_REDUCE_H

#include "dual/portable.h" /* math.h, stdint.h; NVRTC: built-ins */

/* Units of the estimate: samples, or pairs of samples with antithetic sampling. */
DUAL_INLINE int64_t dual_sgrad_units(int64_t samples, int antithetic) {
  return antithetic ? samples / 2 : samples;
}

/* Entry 1 + j of a sample's unit value: the gradient entry g = d f / d x_j, plus f * gl
 * (gl = d L / d x_j) with the score function. */
DUAL_INLINE double dual_sgrad_entry(double f, double g, double gl, int score) {
  return score ? g + f * gl : g;
}

/* Units per sample block.  Part of the estimator's definition: it fixes the bits. */
#define DUAL_SGRAD_BLOCK 8

/* Blocks of a point's `units` units. */
DUAL_INLINE int64_t dual_sgrad_blocks(int64_t units) {
  return (units + DUAL_SGRAD_BLOCK - 1) / DUAL_SGRAD_BLOCK;
}

/* Node b (nb units; mean mb, m2 qb) merged into node a (na units, *ma, *qa), the units just
 * before b's: Chan's formula.  With na == nb both weights are exact (1/2 and na/2). */
DUAL_INLINE void dual_sgrad_merge(double na, double nb, double *ma, double *qa, double mb, double qb) {
  const double n = na + nb, d = mb - *ma;
  *ma = *ma + d * (nb / n);
  *qa = *qa + qb + d * d * (na * nb / n);
}

/* Block k (0, 1, 2, ...; the blocks before it full) of nb units with (bmean, bm2) into the
 * running (*mean, *m2) of blocks 0 .. k - 1: Chan's formula. */
DUAL_INLINE void dual_sgrad_combine(int64_t k, int64_t nb, double bmean, double bm2, double *mean,
                                    double *m2) {
  if (k == 0) {
    *mean = bmean;
    *m2 = bm2;
    return;
  }
  dual_sgrad_merge((double)(k * DUAL_SGRAD_BLOCK), (double)nb, mean, m2, bmean, bm2);
}

/* Entry e of point pt from its blocks' partials in the split layout (jit/jit_args.h: block k's
 * mean and m2 at part[((pt * parts + k) * entries + e) * 2 + 0, 1]), folded in order. */
DUAL_INLINE void dual_sgrad_combine_blocks(const double *part, int64_t parts, int64_t entries,
                                           int64_t units, int64_t pt, int64_t e, double *mean,
                                           double *m2) {
  *mean = 0.0, *m2 = 0.0;
  for (int64_t k = 0; k < parts; ++k) {
    const int64_t left = units - k * DUAL_SGRAD_BLOCK;
    const double *q = part + ((pt * parts + k) * entries + e) * 2;
    dual_sgrad_combine(k, left < DUAL_SGRAD_BLOCK ? left : DUAL_SGRAD_BLOCK, q[0], q[1], mean, m2);
  }
}

/* A point's accumulators of one entry are DUAL_SGRAD_FIELDS doubles `fs` apart: the antithetic
 * first member; the open block's tree nodes (a lone unit L0, a node of two L1M / L1Q, and a node
 * of four, BMEAN / BM2, where the block's mean and m2 end up); the running mean and m2 of the
 * closed blocks. */
enum { DUAL_SGRAD_PEND = 0, DUAL_SGRAD_L0, DUAL_SGRAD_L1M, DUAL_SGRAD_L1Q, DUAL_SGRAD_BMEAN,
       DUAL_SGRAD_BM2, DUAL_SGRAD_MEAN, DUAL_SGRAD_M2, DUAL_SGRAD_FIELDS };

/* Unit r (0 .. DUAL_SGRAD_BLOCK - 1 within its block) of value u into the block's open nodes
 * (a[f * fs], f = DUAL_SGRAD_L0 .. DUAL_SGRAD_BM2): the unit is a node of one; while r's low
 * bits say a node of its size waits to its left, the two merge (equal halves).  After unit 7,
 * or after the block's last unit (`last`: the point's units end inside the block), the block's
 * mean and m2 are at BMEAN and BM2; a shorter block's open nodes merge left to right, the
 * largest first (unequal halves: weights by division). */
DUAL_INLINE void dual_sgrad_block_add(double u, int64_t r, int last, double *a, int64_t fs) {
  double m = u, q = 0.0, size = 1.0;
  if (r & 1) {
    double lm = a[DUAL_SGRAD_L0 * fs], lq = 0.0;
    dual_sgrad_merge(1.0, 1.0, &lm, &lq, m, q);
    m = lm, q = lq, size = 2.0;
    if (r & 2) {
      lm = a[DUAL_SGRAD_L1M * fs], lq = a[DUAL_SGRAD_L1Q * fs];
      dual_sgrad_merge(2.0, 2.0, &lm, &lq, m, q);
      m = lm, q = lq, size = 4.0;
      if (r & 4) {
        lm = a[DUAL_SGRAD_BMEAN * fs], lq = a[DUAL_SGRAD_BM2 * fs];
        dual_sgrad_merge(4.0, 4.0, &lm, &lq, m, q);
        m = lm, q = lq, size = 8.0;
      }
    }
  }
  if (!last && size < 8.0) { /* the node waits for its right neighbour */
    if (size == 1.0) a[DUAL_SGRAD_L0 * fs] = m;
    else if (size == 2.0) a[DUAL_SGRAD_L1M * fs] = m, a[DUAL_SGRAD_L1Q * fs] = q;
    else a[DUAL_SGRAD_BMEAN * fs] = m, a[DUAL_SGRAD_BM2 * fs] = q;
    return;
  }
  const int64_t k = r + 1; /* units in the block: the open nodes are k's set bits */
  double am = m, aq = q, an = 0.0;
  if ((k & 4) && size < 4.0) am = a[DUAL_SGRAD_BMEAN * fs], aq = a[DUAL_SGRAD_BM2 * fs], an = 4.0;
  if ((k & 2) && size < 2.0) {
    if (an == 0.0) am = a[DUAL_SGRAD_L1M * fs], aq = a[DUAL_SGRAD_L1Q * fs];
    else dual_sgrad_merge(an, 2.0, &am, &aq, a[DUAL_SGRAD_L1M * fs], a[DUAL_SGRAD_L1Q * fs]);
    an += 2.0;
  }
  if (an > 0.0) dual_sgrad_merge(an, size, &am, &aq, m, q);
  a[DUAL_SGRAD_BMEAN * fs] = am, a[DUAL_SGRAD_BM2 * fs] = aq;
}

/* A full block's units u[0 .. 7] folded at once: the merges of dual_sgrad_block_add, in its
 * order, so the same bits (the compiled tier's reverse-mode fold, jit/jit_kernel.h). */
DUAL_INLINE void dual_sgrad_block8(const double u[DUAL_SGRAD_BLOCK], double *mean, double *m2) {
  double pm[4], pq[4];
  for (int i = 0; i < 4; ++i) {
    pm[i] = u[2 * i], pq[i] = 0.0;
    dual_sgrad_merge(1.0, 1.0, &pm[i], &pq[i], u[2 * i + 1], 0.0);
  }
  dual_sgrad_merge(2.0, 2.0, &pm[0], &pq[0], pm[1], pq[1]);
  dual_sgrad_merge(2.0, 2.0, &pm[2], &pq[2], pm[3], pq[3]);
  dual_sgrad_merge(4.0, 4.0, &pm[0], &pq[0], pm[2], pq[2]);
  *mean = pm[0], *m2 = pq[0];
}


/* The block part of the fold: one entry's value u of sample `sample` into the open block's
 * accumulators a[f * fs] (an antithetic pair's first member waits in pend).  Returns the unit's
 * place in its block plus one, or 0 when the sample completed no unit.  The compiled tier's
 * kernels fold only this, one block per item (jit/jit_kernel.h). */
DUAL_INLINE int64_t dual_sgrad_block_entry(double u, int64_t sample, int64_t units, int antithetic,
                                           double *a, int64_t fs) {
  const int64_t unit = antithetic ? sample >> 1 : sample;
  if (antithetic && !(sample & 1)) {
    a[DUAL_SGRAD_PEND * fs] = u;
    return 0;
  }
  if (antithetic) u = 0.5 * (a[DUAL_SGRAD_PEND * fs] + u);
  if (unit >= units) return 0; /* (no such unit) */
  const int64_t r = unit % DUAL_SGRAD_BLOCK;
  dual_sgrad_block_add(u, r, unit + 1 == units, a, fs);
  return r + 1;
}

/* Fold one entry's value u of sample `sample` (0, 1, 2, ... in order; `units` units in all) into
 * its accumulators a[f * fs]; a block's last unit closes it into the running totals.  Entries
 * fold independently, so a caller may fold any subset of a sample's entries. */
DUAL_INLINE void dual_sgrad_fold_entry(double u, int64_t sample, int64_t units, int antithetic,
                                       double *a, int64_t fs) {
  const int64_t r1 = dual_sgrad_block_entry(u, sample, units, antithetic, a, fs);
  const int64_t unit = antithetic ? sample >> 1 : sample;
  if (r1 == 0 || (r1 < DUAL_SGRAD_BLOCK && unit + 1 < units)) return;
  dual_sgrad_combine(unit / DUAL_SGRAD_BLOCK, r1, a[DUAL_SGRAD_BMEAN * fs], a[DUAL_SGRAD_BM2 * fs],
                     &a[DUAL_SGRAD_MEAN * fs], &a[DUAL_SGRAD_M2 * fs]);
}

/* Fold sample `sample` (0, 1, 2, ... in order) of one point into its 1 + n entries'
 * accumulators: entry c's at acc + c * ces, fields fs apart. */
DUAL_INLINE void dual_sgrad_fold(const double *row, int64_t es, int32_t n, int score,
                                 int64_t sample, int64_t units, int antithetic, double *acc,
                                 int64_t ces, int64_t fs) {
  const int32_t m = score ? 2 : 1;
  const double f = row[0];
  for (int32_t c = 0; c <= n; ++c) {
    const double u = c == 0 ? f
                     : dual_sgrad_entry(f, row[(int64_t)(m + c - 1) * es],
                                        score ? row[(int64_t)(m + n + c - 1) * es] : 0.0, score);
    dual_sgrad_fold_entry(u, sample, units, antithetic, acc + (int64_t)c * ces, fs);
  }
}

/* The standard error of a mean over `units` units (>= 2) from its sum of squared deviations. */
DUAL_INLINE double dual_sgrad_se(double m2, int64_t units) {
  return sqrt(m2 / ((double)(units - 1) * (double)units));
}

#endif /* DUAL_ENGINE_SGRAD_REDUCE_H */
