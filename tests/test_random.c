/*
 * test_random.c — the counter-based generator (src/dual/random.h): Philox-4x32-10 against the
 * published Random123 known answers, the keying of dual_draw_bits, the end points of the unit
 * mapping, Box–Muller against long double libm, moments and a Kolmogorov–Smirnov test of the
 * uniform and normal draws, correlation of neighbouring streams, determinism.  Every statistic is
 * taken on fixed keys, so the test is deterministic; the bounds are 5 standard errors (a correct
 * generator exceeds one with probability 6e-7) except KS, asked at its 1% critical value.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dual/random.h"

/* --- known answers ---------------------------------------------------------------------------- */
/* The three "philox4x32 10" rows of Random123's tests/kat_vectors (counter[4] key[2] -> out[4]),
 * as pasted from that file into D. E. Shaw Research's own unit test, DEShawResearch/fs123
 * core123/ut/ut_philox.cpp (test_kat_philox4x32), and identical in the verbatim copies of
 * kat_vectors found in other public repositories. */
static const uint32_t KAT[3][10] = {
    {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, /* */
     0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, /* */
     0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, /* */
     0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
};

static void expect_words(const uint32_t got[4], const uint32_t want[4], const char *what) {
  for (int j = 0; j < 4; ++j)
    cr_expect_eq(got[j], want[j], "%s: word %d is 0x%08x, expected 0x%08x", what, j, got[j],
                 want[j]);
}

Test(random, philox_known_answers) {
  for (int i = 0; i < 3; ++i) {
    uint32_t out[4];
    dual_philox4x32_10(KAT[i], KAT[i] + 4, out);
    expect_words(out, KAT[i] + 6, i == 0 ? "KAT zeros" : i == 1 ? "KAT ones" : "KAT pi");
  }
}

/* The same rows through the public keying: key = seed's words, counter = (draw, sample, point). */
Test(random, draw_bits_keying) {
  uint32_t out[4];
  dual_draw_bits(0, 0, 0, 0, out);
  expect_words(out, KAT[0] + 6, "draw_bits(0, 0, 0, 0)");
  dual_draw_bits(UINT64_MAX, -1, 0xffffffffLL, -1, out);
  expect_words(out, KAT[1] + 6, "draw_bits(~0, -1, 2^32-1, -1)");
  dual_draw_bits(0x299f31d0a4093822ull, 0x0370734413198a2eLL, 0x85a308d3LL, 0x243f6a88, out);
  expect_words(out, KAT[2] + 6, "draw_bits(pi digits)");

  /* sample is taken modulo 2^32 (also when negative); point uses all 64 bits */
  uint32_t a[4], b[4];
  dual_draw_bits(42, 7, 5, 3, a);
  dual_draw_bits(42, 7, 5 + (1LL << 32), 3, b);
  expect_words(b, a, "sample + 2^32");
  dual_draw_bits(42, 7, -1, 3, a);
  dual_draw_bits(42, 7, 0xffffffffLL, 3, b);
  expect_words(b, a, "sample -1 == 2^32 - 1");
  dual_draw_bits(42, 7 + (1LL << 32), 5, 3, b);
  dual_draw_bits(42, 7, 5, 3, a);
  cr_expect(memcmp(a, b, sizeof a), "point + 2^32 must give another stream");
}

/* --- the unit mapping ------------------------------------------------------------------------- */
Test(random, bits_to_unit_end_points) {
  /* x = hi:lo>>12 (52 bits); u = (x + 1/2) 2^-52, every value exact */
  cr_expect_eq(dual_bits_to_unit(0, 0), 0x1p-53);
  cr_expect_eq(dual_bits_to_unit(0, 0xfff), 0x1p-53, "lo's low 12 bits are dropped");
  cr_expect_eq(dual_bits_to_unit(0, 0x1000), 1.5 * 0x1p-52);
  cr_expect_eq(dual_bits_to_unit(0x7fffffff, 0xffffffff), 0.5 - 0x1p-53);
  cr_expect_eq(dual_bits_to_unit(0x12345678, 0x9abcdef0),
               ((double)0x12345678 * 0x1p20 + (double)(0x9abcdef0u >> 12) + 0.5) * 0x1p-52);
  cr_expect_eq(dual_bits_to_unit(0x80000000, 0), 0.5 + 0x1p-53);
  double top = dual_bits_to_unit(0xffffffff, 0xffffffff);
  cr_expect(top == 1.0 - 0x1p-53, "top value %a, expected 1 - 2^-53", top);
  /* the mirror 1 - u of every value is exact and in the set: top and bottom swap */
  cr_expect_eq(1.0 - dual_bits_to_unit(0, 0), top);
}

/* The conversions done by bits (dual_small_int_to_double; dual_bits_to_unit) against C's own
 * integer-to-double conversion, over the ranges the draws use and beyond. */
Test(random, conversions_by_bits_match_c) {
  uint64_t r = 12345;
  for (int i = 0; i < 200000; ++i) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t v = (int64_t)(r >> 13) - ((int64_t)1 << 50); /* |v| < 2^51 */
    const int64_t small = (int64_t)(r >> 57) - 64;
    cr_assert_eq(dual_small_int_to_double(v), (double)v, "v = %lld", (long long)v);
    cr_assert_eq(dual_small_int_to_double(small), (double)small);
    const uint32_t hi = (uint32_t)(r >> 32), lo = (uint32_t)r;
    const uint64_t x = (uint64_t)hi << 20 | lo >> 12;
    cr_assert_eq(dual_bits_to_unit(hi, lo), ((double)x + 0.5) * 0x1p-52);
  }
  cr_assert_eq(dual_small_int_to_double(0), 0.0);
  cr_assert(!signbit(dual_small_int_to_double(0)), "0 converts to +0");
  cr_assert_eq(dual_small_int_to_double(((int64_t)1 << 51) - 1), 0x1p51 - 1.0);
  cr_assert_eq(dual_small_int_to_double(-((int64_t)1 << 51) + 1), -0x1p51 + 1.0);
}

/* Box–Muller wiring, in long double libm: normal draws 2j and 2j + 1 are the cosine and sine
 * branches of block 2^31 + j (dual/random.h); a uniform draw takes its own block's bits. */
Test(random, normal_matches_box_muller) {
  double worst = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    int64_t point = i * 7919LL - 5000, sample = i / 3;
    int32_t draw = i % 5;
    uint32_t b[4], c[4];
    dual_draw_block(seed, point, sample, 0x80000000u + (uint32_t)(draw / 2), b);
    double u1 = ((double)((uint64_t)b[0] << 20 | b[1] >> 12) + 0.5) * 0x1p-52;
    double u2 = ((double)((uint64_t)b[2] << 20 | b[3] >> 12) + 0.5) * 0x1p-52;
    const long double t = 6.283185307179586476925286766559L * u2;
    long double ref = sqrtl(-2.0L * logl(u1)) * (draw % 2 ? sinl(t) : cosl(t));
    double z = dual_draw_normal(seed, point, sample, draw);
    dual_draw_block(seed, point, sample, (uint32_t)draw, c);
    double uref = ((double)((uint64_t)c[0] << 20 | c[1] >> 12) + 0.5) * 0x1p-52;
    double u = dual_draw_uniform(seed, point, sample, draw);
    cr_assert_eq(u, uref, "uniform %d: %a != %a", i, u, uref);
    double err = fabs((double)(z - ref)) / (1.0 + fabs((double)ref));
    worst = fmax(worst, err);
    cr_assert(err < 1e-13, "normal %d: z %.17g vs %.17Lg", i, z, ref);
    double zz[2];
    dual_draw_normal_pair(seed, point, sample, draw / 2, zz);
    cr_assert(memcmp(&zz[draw % 2], &z, 8) == 0, "normal %d: its pair's member differs", i);
  }
  cr_log_info("Box-Muller vs long double: max error / (1 + |z|) %.3g", worst);
}

/* --- distribution ----------------------------------------------------------------------------- */
#define N_STAT 1000000
#define N_KS 100000
#define SEED 0x5eed0123456789abull

Test(random, uniform_moments) {
  double s1 = 0, s2 = 0, lo = 1, hi = 0;
  for (int64_t i = 0; i < N_STAT; ++i) {
    double u = dual_draw_uniform(SEED, i, 11, 0);
    s1 += u - 0.5, s2 += (u - 0.5) * (u - 0.5);
    lo = fmin(lo, u), hi = fmax(hi, u);
  }
  double mean = 0.5 + s1 / N_STAT, var = s2 / N_STAT - (s1 / N_STAT) * (s1 / N_STAT);
  double se_mean = sqrt(1.0 / 12 / N_STAT);
  double se_var = sqrt((1.0 / 80 - 1.0 / 144) / N_STAT); /* Var (U - 1/2)^2 = 1/80 - 1/144 */
  cr_log_info("uniform: mean %.6f (%.2f SE), variance %.6f (%.2f SE), min %.3g, 1 - max %.3g",
              mean, (mean - 0.5) / se_mean, var, (var - 1.0 / 12) / se_var, lo, 1 - hi);
  cr_expect(lo > 0 && hi < 1, "draws must lie strictly inside (0, 1)");
  cr_expect(fabs(mean - 0.5) < 5 * se_mean);
  cr_expect(fabs(var - 1.0 / 12) < 5 * se_var);
}

static double normal_at(int64_t i) { return dual_draw_normal(SEED, i % 1000, i / 1000, 2); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

Test(random, normal_distribution) {
  double *ks = malloc(N_KS * sizeof *ks);
  cr_assert(ks);
  double s1 = 0, s2 = 0, tail = 0;
  for (int64_t i = 0; i < N_STAT; ++i) {
    double z = normal_at(i);
    cr_assert(isfinite(z));
    s1 += z, s2 += z * z, tail += fabs(z) > 1.96;
    if (i < N_KS) ks[i] = z;
  }
  double mean = s1 / N_STAT, var = s2 / N_STAT - mean * mean, frac = tail / N_STAT;
  double p = erfc(1.96 / sqrt(2.0)); /* 0.04999579 */
  double se_mean = sqrt(1.0 / N_STAT), se_var = sqrt(2.0 / N_STAT);
  double se_frac = sqrt(p * (1 - p) / N_STAT);

  qsort(ks, N_KS, sizeof *ks, cmp_double);
  double d = 0;
  for (int i = 0; i < N_KS; ++i) {
    double f = 0.5 * erfc(-ks[i] / sqrt(2.0));
    d = fmax(d, fmax(f - (double)i / N_KS, (double)(i + 1) / N_KS - f));
  }
  free(ks);
  double d_crit = 1.63 / sqrt((double)N_KS);
  cr_log_info("normal: mean %.5f (%.2f SE), variance %.5f (%.2f SE), P(|z| > 1.96) %.5f "
              "(%.2f SE), KS D %.5f (1%% critical %.5f)",
              mean, mean / se_mean, var, (var - 1) / se_var, frac, (frac - p) / se_frac, d,
              d_crit);
  cr_expect(fabs(mean) < 5 * se_mean);
  cr_expect(fabs(var - 1) < 5 * se_var);
  cr_expect(fabs(frac - p) < 5 * se_frac);
  cr_expect(d < d_crit, "KS statistic %.5f above the 1%% critical value %.5f", d, d_crit);
}

/* --- independence of streams ------------------------------------------------------------------ */
#define N_CORR 1000000

Test(random, neighbouring_streams_uncorrelated) {
  enum { DRAW, POINT, SAMPLE, SEED1, NPAIR };
  static const char *const name[NPAIR] = {"draw + 1", "point + 1", "sample + 1", "seed + 1"};
  double sx = 0, sxx = 0, sy[NPAIR] = {0}, syy[NPAIR] = {0}, sxy[NPAIR] = {0};
  for (int64_t i = 0; i < N_CORR; ++i) {
    int64_t pt = 3 * i, s = 17;
    int32_t d = 4;
    double x = dual_draw_normal(SEED, pt, s, d), y[NPAIR];
    y[DRAW] = dual_draw_normal(SEED, pt, s, d + 1);
    y[POINT] = dual_draw_normal(SEED, pt + 1, s, d);
    y[SAMPLE] = dual_draw_normal(SEED, pt, s + 1, d);
    y[SEED1] = dual_draw_normal(SEED + 1, pt, s, d);
    sx += x, sxx += x * x;
    for (int k = 0; k < NPAIR; ++k) sy[k] += y[k], syy[k] += y[k] * y[k], sxy[k] += x * y[k];
  }
  double bound = 5 / sqrt((double)N_CORR);
  for (int k = 0; k < NPAIR; ++k) {
    double n = N_CORR, cxy = sxy[k] / n - sx / n * sy[k] / n;
    double r = cxy / sqrt((sxx / n - sx / n * sx / n) * (syy[k] / n - sy[k] / n * sy[k] / n));
    cr_log_info("corr(z, z at %-10s) = %+.5f (bound %.5f)", name[k], r, bound);
    cr_expect(fabs(r) < bound, "streams at %s correlated: r = %.5f", name[k], r);
  }
}

/* --- determinism ------------------------------------------------------------------------------ */
Test(random, deterministic_and_seeded) {
  int same = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    uint32_t a[4], b[4], c[4], e[4];
    dual_draw_bits(SEED, i, i / 10, (int32_t)(i % 3), a);
    dual_draw_bits(SEED, i, i / 10, (int32_t)(i % 3), b);
    cr_assert(!memcmp(a, b, sizeof a), "key %lld: bits differ between two calls", (long long)i);
    dual_draw_bits(SEED + 1, i, i / 10, (int32_t)(i % 3), c);
    dual_draw_bits(SEED ^ (1ull << 63), i, i / 10, (int32_t)(i % 3), e);
    for (int j = 0; j < 4; ++j) same += (a[j] == c[j]) + (a[j] == e[j]);
  }
  /* 8000 word pairs, each equal with probability 2^-32 for independent streams */
  cr_expect_eq(same, 0, "%d words equal across seeds", same);
}
