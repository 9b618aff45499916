/*
 * test_sgrad_reduce.c — dual_sgrad's reduction (engine/sgrad_reduce.h) on its own: folding N
 * values sample by sample (a pairwise tree within blocks of DUAL_SGRAD_BLOCK, Chan's formula
 * across)
 * gives the mean and the sum of squared deviations of a long-double two-pass computation to a
 * few ulps, plain and antithetic, for N around the block boundaries; and the split path — each
 * block folded on its own, then the blocks combined in order, as the compiled tier's small
 * batches do (kernels/sgrad_combine.cu) — gives the same bits as the sequential fold.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/sgrad_reduce.h"
#include "random_program.h" /* rp_uniform */

enum { MAXN = 300 };

/* Two-pass mean and sum of squared deviations in long double. */
static void two_pass(const double *u, int64_t n, long double *mean, long double *m2) {
  long double s = 0.0L, q = 0.0L;
  for (int64_t i = 0; i < n; ++i) s += u[i];
  *mean = s / n;
  for (int64_t i = 0; i < n; ++i) q += (u[i] - *mean) * (u[i] - *mean);
  *m2 = q;
}

/* The sequential fold of `samples` sample values (antithetic: pairs) into one entry. */
static void fold_all(const double *v, int64_t samples, int anti, double *mean, double *m2) {
  double a[DUAL_SGRAD_FIELDS];
  memset(a, 0, sizeof a);
  const int64_t units = dual_sgrad_units(samples, anti);
  for (int64_t s = 0; s < samples; ++s) dual_sgrad_fold_entry(v[s], s, units, anti, a, 1);
  *mean = a[DUAL_SGRAD_MEAN], *m2 = a[DUAL_SGRAD_M2];
}

/* The split path: block k folded alone (its samples only, as an item of the compiled tier's
 * split launch), then the blocks' (mean, m2) combined in order. */
static void fold_split(const double *v, int64_t samples, int anti, double *mean, double *m2) {
  const int64_t units = dual_sgrad_units(samples, anti), w = anti ? 2 : 1;
  const int64_t blocks = dual_sgrad_blocks(units);
  *mean = 0.0, *m2 = 0.0;
  for (int64_t k = 0; k < blocks; ++k) {
    double a[DUAL_SGRAD_FIELDS];
    memset(a, 0, sizeof a);
    const int64_t s0 = k * DUAL_SGRAD_BLOCK * w, s1 = k + 1 < blocks ? s0 + DUAL_SGRAD_BLOCK * w : samples;
    for (int64_t s = s0; s < s1; ++s) dual_sgrad_fold_entry(v[s], s, units, anti, a, 1);
    const int64_t nb = units - k * DUAL_SGRAD_BLOCK < DUAL_SGRAD_BLOCK ? units - k * DUAL_SGRAD_BLOCK : DUAL_SGRAD_BLOCK;
    dual_sgrad_combine(k, nb, a[DUAL_SGRAD_BMEAN], a[DUAL_SGRAD_BM2], mean, m2);
  }
}

Test(sgrad_reduce, blocks_match_a_two_pass_reference_and_the_split_path) {
  uint64_t rng = 2027;
  double v[2 * MAXN], u[MAXN];
  const int64_t sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 100, 256, 299};
  int checked = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
    for (int anti = 0; anti <= 1; ++anti) {
      const int64_t units = sizes[i], samples = anti ? 2 * units : units;
      const double shift = (double)(int)(i % 3) * 1e3; /* a large mean: the case two-pass sums guard against */
      for (int64_t s = 0; s < samples; ++s) v[s] = shift + rp_uniform(&rng, -2.0, 2.0);
      for (int64_t k = 0; k < units; ++k) u[k] = anti ? 0.5 * (v[2 * k] + v[2 * k + 1]) : v[k];
      long double rm, rq;
      two_pass(u, units, &rm, &rq);
      double mean, m2, smean, sm2;
      fold_all(v, samples, anti, &mean, &m2);
      fold_split(v, samples, anti, &smean, &sm2);
      cr_assert(fabsl(mean - rm) <= 4 * DBL_EPSILON * fabsl(rm) + 1e-300, "N %lld anti %d: mean %.17g, ref %.17Lg",
                (long long)units, anti, mean, rm);
      cr_assert(fabsl(m2 - rq) <= 1e-12 * rq,
                "N %lld anti %d: m2 %.17g, ref %.17Lg", (long long)units, anti, m2, rq);
      cr_assert(memcmp(&mean, &smean, 8) == 0 && memcmp(&m2, &sm2, 8) == 0,
                "N %lld anti %d: the split path differs: %.17g %.17g vs %.17g %.17g", (long long)units,
                anti, smean, sm2, mean, m2);
      if (units == 1) cr_assert(m2 == 0.0);
      ++checked;
    }
  cr_assert_eq(checked, 28);
}

/* Chan's formula on two blocks by hand: {1, 2, ..., 8} and {20, 30}. */
Test(sgrad_reduce, chan_formula_by_hand) {
  double v[10];
  for (int i = 0; i < 8; ++i) v[i] = i + 1;
  v[8] = 20.0, v[9] = 30.0;
  double mean, m2;
  fold_all(v, 10, 0, &mean, &m2);
  /* sum = 36 + 50 = 86, mean 8.6; sum of squares 204 + 400 + 900 = 1504; m2 = 1504 - 10 * 8.6^2 */
  cr_assert(fabs(mean - 8.6) <= 2e-15, "mean %.17g", mean);
  cr_assert(fabs(m2 - (1504.0 - 10.0 * 8.6 * 8.6)) <= 1e-12, "m2 %.17g", m2);
  cr_assert(fabs(dual_sgrad_se(m2, 10) - sqrt((1504.0 - 739.6) / 90.0)) <= 1e-14);
}

/* Chan's formula written out for this test: node b (nb units) after node a (na units). */
static void chan(double na, double nb, double *ma, double *qa, double mb, double qb) {
  const double d = mb - *ma;
  *ma = *ma + d * (nb / (na + nb));
  *qa = *qa + qb + d * d * (na * nb / (na + nb));
}

/* The block's definition (dualbatch.h, dual_sgrad): a full block of 8 units is the tree
 * ((u0 u1)(u2 u3))((u4 u5)(u6 u7)); a block of k < 8 units (the point's last) keeps the nodes of
 * k's binary digits, merged left to right.  Written out here node by node, for the first block
 * of 8 units and for points of 7, 6, 5 and 3 units, it must give the fold's bits (and the full
 * block's dual_sgrad_block8 too). */
Test(sgrad_reduce, blocks_are_the_pairwise_tree) {
  uint64_t rng = 99;
  for (int trial = 0; trial < 200; ++trial) {
    double u[8];
    for (int i = 0; i < 8; ++i) u[i] = 1e2 * (trial % 3) + rp_uniform(&rng, -3.0, 3.0);
    double pm[4], pq[4], qm[2], qq[2];
    for (int i = 0; i < 4; ++i) pm[i] = u[2 * i], pq[i] = 0.0, chan(1, 1, &pm[i], &pq[i], u[2 * i + 1], 0.0);
    for (int i = 0; i < 2; ++i)
      qm[i] = pm[2 * i], qq[i] = pq[2 * i], chan(2, 2, &qm[i], &qq[i], pm[2 * i + 1], pq[2 * i + 1]);
    double em = qm[0], eq = qq[0];
    chan(4, 4, &em, &eq, qm[1], qq[1]);
    double mean, m2;
    fold_all(u, 8, 0, &mean, &m2);
    cr_assert(memcmp(&mean, &em, 8) == 0 && memcmp(&m2, &eq, 8) == 0, "8 units: %.17g %.17g vs %.17g %.17g",
              mean, m2, em, eq);
    dual_sgrad_block8(u, &mean, &m2); /* the whole block at once (the compiled tier's fold) */
    cr_assert(memcmp(&mean, &em, 8) == 0 && memcmp(&m2, &eq, 8) == 0, "block8: %.17g %.17g", mean, m2);
    /* 7 units: (u0..u3) then (u4 u5) then u6 */
    double sm = qm[0], sq = qq[0];
    chan(4, 2, &sm, &sq, pm[2], pq[2]);
    chan(6, 1, &sm, &sq, u[6], 0.0);
    fold_all(u, 7, 0, &mean, &m2);
    cr_assert(memcmp(&mean, &sm, 8) == 0 && memcmp(&m2, &sq, 8) == 0, "7 units");
    /* 6 units: (u0..u3) then (u4 u5); 5: (u0..u3) then u4; 3: (u0 u1) then u2 */
    sm = qm[0], sq = qq[0];
    chan(4, 2, &sm, &sq, pm[2], pq[2]);
    fold_all(u, 6, 0, &mean, &m2);
    cr_assert(memcmp(&mean, &sm, 8) == 0 && memcmp(&m2, &sq, 8) == 0, "6 units");
    sm = qm[0], sq = qq[0];
    chan(4, 1, &sm, &sq, u[4], 0.0);
    fold_all(u, 5, 0, &mean, &m2);
    cr_assert(memcmp(&mean, &sm, 8) == 0 && memcmp(&m2, &sq, 8) == 0, "5 units");
    sm = pm[0], sq = pq[0];
    chan(2, 1, &sm, &sq, u[2], 0.0);
    fold_all(u, 3, 0, &mean, &m2);
    cr_assert(memcmp(&mean, &sm, 8) == 0 && memcmp(&m2, &sq, 8) == 0, "3 units");
  }
}
