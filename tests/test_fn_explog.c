/*
 * test_fn_explog.c — accuracy of the library's own exp/log/pow family (src/dual/fn_exp.h, fn_log.h,
 * fn_pow.h) against libquadmath, and their C99 Annex F special values.  Every function gets
 * FN_SAMPLES random arguments (splitmix64, fixed seed) spread over all binades and over its hard
 * ranges; the max ulp error must stay within the bound named below.  cr_log_info prints each max.
 * Build with -DFN_SAMPLES=... -DFN_SEED=... for a longer run.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <string.h>

#include "dual/fn_exp.h"
#include "dual/fn_log.h"
#include "dual/fn_pow.h"
#include "ulp_ref.h"

#ifndef FN_SAMPLES
#define FN_SAMPLES 100000 /* random arguments per function */
#endif
#ifndef FN_SEED
#define FN_SEED 0x6a09e667f3bcc909ull
#endif

/* Max ulp error allowed per function: the max measured with this generator over 6 * 10^7
 * arguments per function (three seeds, FN_SAMPLES=20000000), rounded up. */
#define EXP_MAX_ULP 0.52   /* measured 0.509 (the table-driven exp; 0.541 table-free) */
#define EXP2_MAX_ULP 0.55  /* 0.544 */
#define EXPM1_MAX_ULP 0.58 /* 0.574 */
#define LOG_MAX_ULP 0.51   /* 0.502 */
#define LOG2_MAX_ULP 0.51  /* 0.504 */
#define LOG10_MAX_ULP 0.51 /* 0.503 */
#define LOG1P_MAX_ULP 0.51 /* 0.502 */
#define POW_MAX_ULP 0.54   /* 0.521 */
#define CBRT_MAX_ULP 0.51  /* 0.5003 */
#define HYPOT_MAX_ULP 0.51 /* 0.5000 */

/* ---- random arguments ---- */

static uint64_t rng_state;

static uint64_t splitmix64(void) { return ref_next(&rng_state); }

/* uniform in [0, 1) */
static double u01(void) { return (double)(splitmix64() >> 11) * 0x1p-53; }
static double uniform(double lo, double hi) { return lo + (hi - lo) * u01(); }
static int rand_int(int lo, int hi) { return lo + (int)(splitmix64() % (uint64_t)(hi - lo + 1)); }
static double rand_sign(double x) { return (splitmix64() & 1) ? -x : x; }

/* positive, exponent uniform in [emin, emax] (emin >= -1074), mantissa uniform; below -1022 the
 * subnormal numbers of that binade */
static double rand_binade(int emin, int emax) {
  int e = rand_int(emin, emax);
  uint64_t mant = splitmix64() >> 12;
  if (e >= -1022) return ldexp(ref_from_bits(0x3ff0000000000000ull | mant), e);
  return ldexp(1.0 + (double)(mant >> (-1022 - e)) * 0x1p-52, e); /* fewer bits, exact */
}

/* any finite positive double, bits uniform (all binades, subnormals included) */
static double rand_positive(void) {
  uint64_t u;
  do u = splitmix64() >> 1;
  while (u == 0 || u >= 0x7ff0000000000000ull);
  return ref_from_bits(u);
}

/* x moved by up to n ulps */
static double nudge(double x, int n) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return ref_from_bits(u + (uint64_t)(int64_t)rand_int(-n, n));
}

/* ---- error bookkeeping ---- */

typedef struct worst {
  double err, a, b, got;
  long n;
} worst;

static void record(worst *w, double got, __float128 ref, double a, double b) {
  double e = ulp_error(got, ref);
  ++w->n;
  if (!(e <= w->err)) {
    w->err = e;
    w->a = a;
    w->b = b;
    w->got = got;
  }
}

static void report1(const char *name, const worst *w, double bound) {
  cr_log_info("%-6s max error %.4f ulp (bound %.2f) over %ld args, worst at x = %a -> %a", name,
              w->err, bound, w->n, w->a, w->got);
  cr_assert(w->err <= bound, "%s: %.4f ulp at x = %a (got %a)", name, w->err, w->a, w->got);
}

static void report2(const char *name, const worst *w, double bound) {
  cr_log_info("%-6s max error %.4f ulp (bound %.2f) over %ld args, worst at (%a, %a) -> %a", name,
              w->err, bound, w->n, w->a, w->b, w->got);
  cr_assert(w->err <= bound, "%s: %.4f ulp at (%a, %a) (got %a)", name, w->err, w->a, w->b, w->got);
}

/* ---- special values ---- */

/* same value: both NaN, or the same bits (so +0 and -0 differ) */
static int same(double got, double want) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  return memcmp(&got, &want, sizeof got) == 0;
}

#define CHECK1(f, x, want)                                                                        \
  do {                                                                                            \
    double got_ = f(x);                                                                           \
    cr_expect(same(got_, want), "%s(%a) = %a, want %a", #f, (double)(x), got_, (double)(want));   \
  } while (0)
#define CHECK2(f, x, y, want)                                                                     \
  do {                                                                                            \
    double got_ = f(x, y);                                                                        \
    cr_expect(same(got_, want), "%s(%a, %a) = %a, want %a", #f, (double)(x), (double)(y), got_,   \
              (double)(want));                                                                    \
  } while (0)

static const double inf = INFINITY;
#define QNAN ((double)NAN)

Test(fn_explog, special_exp) {
  CHECK1(dual_exp, QNAN, QNAN);
  CHECK1(dual_exp, inf, inf);
  CHECK1(dual_exp, -inf, 0.0);
  CHECK1(dual_exp, 0.0, 1.0);
  CHECK1(dual_exp, -0.0, 1.0);
  CHECK1(dual_exp, 0x1p-1074, 1.0);
  CHECK1(dual_exp, 710.0, inf);
  CHECK1(dual_exp, 1e308, inf);
  CHECK1(dual_exp, -746.0, 0.0);
  CHECK1(dual_exp, -1e308, 0.0);
  CHECK1(dual_exp, 0x1.62e42fefa39efp+9, 0x1.fffffffffff2ap+1023); /* ln(DBL_MAX) rounded down */
  CHECK1(dual_exp, 0x1.62e42fefa39f0p+9, inf);
  CHECK1(dual_exp, -0x1.74385446d71c3p+9, 0x1p-1074); /* last subnormal */
  CHECK1(dual_exp2, QNAN, QNAN);
  CHECK1(dual_exp2, inf, inf);
  CHECK1(dual_exp2, -inf, 0.0);
  CHECK1(dual_exp2, 0.0, 1.0);
  CHECK1(dual_exp2, -0.0, 1.0);
  CHECK1(dual_exp2, 1024.0, inf);
  CHECK1(dual_exp2, 1023.0, 0x1p1023);
  CHECK1(dual_exp2, -1022.0, 0x1p-1022);
  CHECK1(dual_exp2, -1074.0, 0x1p-1074);
  CHECK1(dual_exp2, -1075.0, 0.0); /* a tie, to even */
  CHECK1(dual_exp2, -1080.5, 0.0);
  CHECK1(dual_exp2, 10.0, 1024.0);
  CHECK1(dual_exp2, -1.0, 0.5);
  CHECK1(dual_expm1, QNAN, QNAN);
  CHECK1(dual_expm1, inf, inf);
  CHECK1(dual_expm1, -inf, -1.0);
  CHECK1(dual_expm1, 0.0, 0.0);
  CHECK1(dual_expm1, -0.0, -0.0);
  CHECK1(dual_expm1, 0x1p-1074, 0x1p-1074);
  CHECK1(dual_expm1, -0x1p-1074, -0x1p-1074);
  CHECK1(dual_expm1, 0x1p-60, 0x1p-60);
  CHECK1(dual_expm1, 710.0, inf);
  CHECK1(dual_expm1, -40.0, -1.0);
  CHECK1(dual_expm1, -1e308, -1.0);
}

Test(fn_explog, special_log) {
  double (*const fns[])(double) = {dual_log, dual_log2, dual_log10};
  for (int i = 0; i < 3; ++i) {
    double (*f)(double) = fns[i];
    CHECK1(f, QNAN, QNAN);
    CHECK1(f, inf, inf);
    CHECK1(f, -inf, QNAN);
    CHECK1(f, 0.0, -inf);
    CHECK1(f, -0.0, -inf);
    CHECK1(f, 1.0, 0.0); /* +0 */
    CHECK1(f, -1.0, QNAN);
    CHECK1(f, -0x1p-1074, QNAN);
  }
  for (int k = -1074; k <= 1023; ++k) CHECK1(dual_log2, ldexp(1.0, k), (double)k);
  double p10 = 1.0;
  for (int k = 0; k <= 22; ++k, p10 *= 10.0) CHECK1(dual_log10, p10, (double)k); /* 10^k exact */
  CHECK1(dual_log, 0x1p-1074, -0x1.74385446d71c3p+9);
  CHECK1(dual_log1p, QNAN, QNAN);
  CHECK1(dual_log1p, inf, inf);
  CHECK1(dual_log1p, -inf, QNAN);
  CHECK1(dual_log1p, -1.0, -inf);
  CHECK1(dual_log1p, -1.5, QNAN);
  CHECK1(dual_log1p, 0.0, 0.0);
  CHECK1(dual_log1p, -0.0, -0.0);
  CHECK1(dual_log1p, 0x1p-1074, 0x1p-1074);
  CHECK1(dual_log1p, -0x1p-1074, -0x1p-1074);
  CHECK1(dual_log1p, DBL_MAX, 0x1.62e42fefa39efp+9);
}

Test(fn_explog, special_pow) {
  const double any[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0x1p-1074, 1e300,
                        -1e300, inf, -inf, QNAN};
  const int nany = (int)(sizeof any / sizeof any[0]);
  for (int i = 0; i < nany; ++i) {
    CHECK2(dual_pow, any[i], 0.0, 1.0);  /* pow(x, +-0) = 1, even for NaN */
    CHECK2(dual_pow, any[i], -0.0, 1.0);
    CHECK2(dual_pow, 1.0, any[i], 1.0); /* pow(+1, y) = 1, even for NaN */
  }
  CHECK2(dual_pow, QNAN, 1.0, QNAN);
  CHECK2(dual_pow, 2.0, QNAN, QNAN);
  CHECK2(dual_pow, -1.0, QNAN, QNAN);
  CHECK2(dual_pow, -1.0, inf, 1.0);
  CHECK2(dual_pow, -1.0, -inf, 1.0);
  /* +-0 */
  CHECK2(dual_pow, 0.0, -3.0, inf);
  CHECK2(dual_pow, -0.0, -3.0, -inf);
  CHECK2(dual_pow, -0.0, -1.0, -inf);
  CHECK2(dual_pow, 0.0, -2.0, inf);
  CHECK2(dual_pow, -0.0, -2.0, inf);
  CHECK2(dual_pow, -0.0, -0.5, inf);
  CHECK2(dual_pow, -0.0, -0x1p60, inf);
  CHECK2(dual_pow, -0.0, -inf, inf);
  CHECK2(dual_pow, 0.0, 3.0, 0.0);
  CHECK2(dual_pow, -0.0, 3.0, -0.0);
  CHECK2(dual_pow, -0.0, 2.0, 0.0);
  CHECK2(dual_pow, -0.0, 0.5, 0.0);
  CHECK2(dual_pow, -0.0, inf, 0.0);
  /* infinite exponent */
  CHECK2(dual_pow, 0.5, -inf, inf);
  CHECK2(dual_pow, -0.5, -inf, inf);
  CHECK2(dual_pow, 2.0, -inf, 0.0);
  CHECK2(dual_pow, -2.0, -inf, 0.0);
  CHECK2(dual_pow, 0.5, inf, 0.0);
  CHECK2(dual_pow, -0.5, inf, 0.0);
  CHECK2(dual_pow, 2.0, inf, inf);
  CHECK2(dual_pow, -2.0, inf, inf);
  CHECK2(dual_pow, 0x1.fffffffffffffp-1, inf, 0.0);
  CHECK2(dual_pow, 0x1.0000000000001p+0, inf, inf);
  /* infinite base */
  CHECK2(dual_pow, -inf, -3.0, -0.0);
  CHECK2(dual_pow, -inf, -2.0, 0.0);
  CHECK2(dual_pow, -inf, -0.5, 0.0);
  CHECK2(dual_pow, -inf, 3.0, -inf);
  CHECK2(dual_pow, -inf, 2.0, inf);
  CHECK2(dual_pow, -inf, 0.5, inf);
  CHECK2(dual_pow, inf, -0x1p-1074, 0.0);
  CHECK2(dual_pow, inf, 0x1p-1074, inf);
  /* negative finite base */
  CHECK2(dual_pow, -2.0, 0.5, QNAN);
  CHECK2(dual_pow, -0x1p-1074, 0x1.8p0, QNAN);
  CHECK2(dual_pow, -2.0, 3.0, -8.0);
  CHECK2(dual_pow, -2.0, -3.0, -0.125);
  CHECK2(dual_pow, -2.0, 2.0, 4.0);
  CHECK2(dual_pow, -1.0, 0x1p53, 1.0);          /* beyond 2^53: even */
  CHECK2(dual_pow, -1.0, 0x1.fffffffffffffp52, -1.0); /* 2^53 - 1: odd */
  CHECK2(dual_pow, -1.0, 1e300, 1.0);
  CHECK2(dual_pow, -2.0, 1075.0, -inf);
  CHECK2(dual_pow, -2.0, -1075.0, -0.0);
  CHECK2(dual_pow, -2.0, -1074.0, 0x1p-1074);
  CHECK2(dual_pow, -2.0, -1073.0, -0x1p-1073);
  /* exact and extreme finite cases */
  CHECK2(dual_pow, 2.0, 1023.0, 0x1p1023);
  CHECK2(dual_pow, 2.0, 1024.0, inf);
  CHECK2(dual_pow, 2.0, -1074.0, 0x1p-1074);
  CHECK2(dual_pow, 2.0, -1075.0, 0.0);
  CHECK2(dual_pow, 0x1p-1074, 1.0, 0x1p-1074);
  CHECK2(dual_pow, 0x1p-1074, -1.0, inf);
  CHECK2(dual_pow, 0x1p-1074, 0.5, 0x1p-537);
  CHECK2(dual_pow, 4.0, 0.5, 2.0);
  CHECK2(dual_pow, 10.0, 22.0, 1e22);
  CHECK2(dual_pow, 3.0, 33.0, 5559060566555523.0);
  CHECK2(dual_pow, 1e300, 1e300, inf);
  CHECK2(dual_pow, 1e-300, 1e300, 0.0);
  CHECK2(dual_pow, DBL_MAX, -1.0, 0x1p-1024);
  CHECK2(dual_pow, DBL_MAX, 1.0, DBL_MAX);
  rng_state = FN_SEED;
  for (int i = 0; i < 1000; ++i) { /* exact results come out exact */
    double x = rand_sign(rand_positive());
    CHECK2(dual_pow, x, 1.0, x);
    CHECK2(dual_hypot, x, 0.0, fabs(x));
    CHECK2(dual_hypot, 0.0, x, fabs(x));
  }
  CHECK2(dual_pow, 0x1.0000000000001p+0, 0x1p62, inf); /* e^1024 */
  CHECK2(dual_pow, 0x1.fffffffffffffp-1, 0x1p64, 0.0); /* e^-2048 */
}

Test(fn_explog, special_cbrt_hypot) {
  CHECK1(dual_cbrt, QNAN, QNAN);
  CHECK1(dual_cbrt, inf, inf);
  CHECK1(dual_cbrt, -inf, -inf);
  CHECK1(dual_cbrt, 0.0, 0.0);
  CHECK1(dual_cbrt, -0.0, -0.0);
  CHECK1(dual_cbrt, 0x1p-1074, 0x1p-358);
  CHECK1(dual_cbrt, -0x1p-1074, -0x1p-358);
  CHECK1(dual_cbrt, 0x1p-1073, 0x1.428a2f98d728bp-358);
  for (int n = -1000; n <= 1000; ++n) CHECK1(dual_cbrt, (double)n * n * n, (double)n);
  for (int k = -1074; k <= 1023; k += 3) CHECK1(dual_cbrt, ldexp(1.0, k), ldexp(1.0, k / 3));
  const double any[] = {0.0, -0.0, 1.0, -1.0, 0x1p-1074, DBL_MAX, inf, -inf, QNAN};
  const int nany = (int)(sizeof any / sizeof any[0]);
  for (int i = 0; i < nany; ++i) { /* hypot(+-inf, y) = +inf even for a NaN y */
    CHECK2(dual_hypot, inf, any[i], inf);
    CHECK2(dual_hypot, -inf, any[i], inf);
    CHECK2(dual_hypot, any[i], inf, inf);
    CHECK2(dual_hypot, any[i], -inf, inf);
  }
  CHECK2(dual_hypot, QNAN, 1.0, QNAN);
  CHECK2(dual_hypot, 1.0, QNAN, QNAN);
  CHECK2(dual_hypot, QNAN, 0.0, QNAN);
  CHECK2(dual_hypot, 0.0, 0.0, 0.0);
  CHECK2(dual_hypot, -0.0, -0.0, 0.0);
  CHECK2(dual_hypot, -3.0, 0.0, 3.0);
  CHECK2(dual_hypot, -0.0, -5.0, 5.0);
  CHECK2(dual_hypot, 3.0, -4.0, 5.0);
  CHECK2(dual_hypot, 0x1p-1074, 0x1p-1074, 0x1p-1074); /* sqrt(2) 2^-1074 rounds to 2^-1074 */
  CHECK2(dual_hypot, 0x1p-1073, 0x1p-1073, 0x1.8p-1073);
  CHECK2(dual_hypot, 3e-320, 4e-320, 5e-320);
  CHECK2(dual_hypot, DBL_MAX, DBL_MAX, inf);
  CHECK2(dual_hypot, DBL_MAX, 1.0, DBL_MAX);
  CHECK2(dual_hypot, 0x1.8p1000, 0x1p1001, 0x1.4p1001);
}

/* ---- accuracy on random arguments ---- */

Test(fn_explog, accuracy_exp) {
  rng_state = FN_SEED ^ 1;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x;
    switch (i % 8) {
    case 0: x = uniform(-745.2, 709.8); break;
    case 1: x = rand_sign(rand_binade(-60, 9)); break;
    case 2: x = uniform(708.0, 709.8); break;                       /* near overflow */
    case 3: x = uniform(-745.2, -707.0); break;                     /* subnormal results */
    case 4: x = (rand_int(-1075, 1023) + 0.5) * 0x1.62e42fefa39efp-1 + uniform(-1e-9, 1e-9); break; /* |r| ~ ln2/2 */
    case 5: x = rand_sign(rand_binade(-1074, -20)); break;          /* tiny, subnormal */
    case 6: x = rand_int(-1075, 1023) * 0x1.62e42fefa39efp-1 + rand_sign(rand_binade(-60, -20)); break; /* r ~ 0 */
    default: x = uniform(-2.0, 2.0); break;
    }
    record(&w, dual_exp(x), expq((__float128)x), x, 0);
  }
  report1("exp", &w, EXP_MAX_ULP);
}

Test(fn_explog, accuracy_exp2) {
  rng_state = FN_SEED ^ 2;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x;
    switch (i % 8) {
    case 0: x = uniform(-1075.5, 1024.0); break;
    case 1: x = rand_sign(rand_binade(-60, 10)); break;
    case 2: x = uniform(1021.0, 1024.0); break;
    case 3: x = uniform(-1076.0, -1020.0); break;
    case 4: x = rand_int(-1076, 1023) + 0.5 + uniform(-1e-9, 1e-9); break;
    case 5: x = rand_sign(rand_binade(-1074, -20)); break;
    case 6: x = rand_int(-1076, 1023) + rand_sign(rand_binade(-60, -20)); break;
    default: x = uniform(-2.0, 2.0); break;
    }
    record(&w, dual_exp2(x), exp2q((__float128)x), x, 0);
  }
  report1("exp2", &w, EXP2_MAX_ULP);
}

Test(fn_explog, accuracy_expm1) {
  rng_state = FN_SEED ^ 3;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x;
    switch (i % 8) {
    case 0: x = uniform(-40.0, 709.8); break;
    case 1: x = rand_sign(rand_binade(-60, 9)); break;
    case 2: x = rand_sign(uniform(0.3, 0.4)); break;                /* the two paths meet */
    case 3: x = rand_sign(uniform(0.3, 1.1)); break;                /* k = +-1: cancellation */
    case 4: x = (rand_int(-56, 1023) + 0.5) * 0x1.62e42fefa39efp-1 + uniform(-1e-9, 1e-9); break;
    case 5: x = rand_sign(rand_binade(-1074, -20)); break;
    case 6: x = uniform(700.0, 709.8); break;
    default: x = uniform(-2.0, 2.0); break;
    }
    record(&w, dual_expm1(x), expm1q((__float128)x), x, 0);
  }
  report1("expm1", &w, EXPM1_MAX_ULP);
}

/* arguments for log, log2, log10 */
static double log_arg(long i) {
  switch (i % 8) {
  case 0: return rand_positive();                                      /* every binade */
  case 1: return 1.0 + rand_sign(rand_binade(-53, -1));               /* near 1 */
  case 2: return nudge(1.0, 1000);
  case 3: return ldexp(nudge(1.224744871391589, 1 << 20), rand_int(-1074, 1023)); /* centre edges */
  case 4: return ldexp(nudge(1.7320508075688772, 1 << 20), rand_int(-1074, 1023));
  case 5: return rand_binade(-1074, -1023);                            /* subnormal */
  case 6: return uniform(0.5, 2.0);
  default: return rand_binade(1000, 1023);
  }
}

Test(fn_explog, accuracy_log) {
  rng_state = FN_SEED ^ 4;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x = log_arg(i);
    record(&w, dual_log(x), logq((__float128)x), x, 0);
  }
  report1("log", &w, LOG_MAX_ULP);
}

Test(fn_explog, accuracy_log2) {
  rng_state = FN_SEED ^ 5;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x = log_arg(i);
    record(&w, dual_log2(x), log2q((__float128)x), x, 0);
  }
  report1("log2", &w, LOG2_MAX_ULP);
}

Test(fn_explog, accuracy_log10) {
  rng_state = FN_SEED ^ 6;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x = log_arg(i);
    record(&w, dual_log10(x), log10q((__float128)x), x, 0);
  }
  report1("log10", &w, LOG10_MAX_ULP);
}

Test(fn_explog, accuracy_log1p) {
  rng_state = FN_SEED ^ 7;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x;
    switch (i % 8) {
    case 0: x = rand_sign(rand_binade(-60, -1)); break;              /* near 0 */
    case 1: x = -1.0 + rand_binade(-53, -1); break;                  /* near -1 */
    case 2: x = rand_binade(-1, 1023); break;
    case 3: x = uniform(-1.0, 2.0); break;
    case 4: x = rand_sign(rand_binade(-1074, -50)); break;           /* tiny, subnormal */
    case 5: x = rand_binade(50, 70); break;                          /* around the 2^60 switch */
    case 6: x = rand_sign(rand_binade(-30, -1)) * 0.5; break;
    default: x = rand_positive(); break;
    }
    if (x <= -1.0) x = -0.5;
    record(&w, dual_log1p(x), log1pq((__float128)x), x, 0);
  }
  report1("log1p", &w, LOG1P_MAX_ULP);
}

/* b with b log|a| = t (the exponent of the result), rounded to double */
static double exponent_for(double a, double t) { return t / log(fabs(a)); }

Test(fn_explog, accuracy_pow) {
  rng_state = FN_SEED ^ 8;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double a, b;
    switch (i % 10) {
    case 0: /* any base, results over the whole range */
      do a = rand_positive();
      while (a == 1.0);
      b = exponent_for(a, uniform(-745.2, 709.8));
      break;
    case 1: { /* results at the overflow / underflow / subnormal edges */
      static const double edge[] = {709.78, -708.4, -745.13, -744.4};
      do a = rand_positive();
      while (a == 1.0);
      b = exponent_for(a, edge[rand_int(0, 3)] + uniform(-0.5, 0.5));
      break;
    }
    case 2: /* base near 1, huge exponent */
      a = 1.0 + rand_sign(rand_binade(-53, -10));
      b = exponent_for(a, uniform(-745.2, 709.8));
      break;
    case 3: /* negative base, integer exponent */
      a = -rand_binade(-20, 20);
      b = nearbyint(exponent_for(a, uniform(-745.0, 709.0)));
      break;
    case 4:
      a = -rand_binade(-3, 3);
      b = (double)rand_int(-300, 300);
      break;
    case 5: /* typical */
      a = rand_binade(-20, 20);
      b = uniform(-50.0, 50.0);
      break;
    case 6: /* subnormal base */
      a = rand_binade(-1074, -1023);
      b = rand_sign(uniform(0.0, 1.0));
      break;
    case 7: /* huge |b|: overflow / underflow unless a is within an ulp or two of 1 */
      a = (i & 16) ? nudge(1.0, 2) : rand_binade(-2, 2);
      b = rand_sign(rand_binade(30, 1023));
      break;
    case 8: /* small integers: often exact */
      a = (double)rand_int(-20, 20);
      b = (double)rand_int(-40, 40);
      break;
    default:
      a = uniform(0.0, 4.0);
      b = uniform(-8.0, 8.0);
      break;
    }
    record(&w, dual_pow(a, b), powq((__float128)a, (__float128)b), a, b);
  }
  report2("pow", &w, POW_MAX_ULP);
}

Test(fn_explog, accuracy_cbrt) {
  rng_state = FN_SEED ^ 9;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x;
    switch (i % 4) {
    case 0: x = rand_sign(rand_positive()); break;
    case 1: x = rand_sign(rand_binade(-1074, -1023)); break;
    case 2: { /* near cubes */
      double t = uniform(1.0, 2.0);
      x = rand_sign(ldexp(nudge(t * t * t, 4), rand_int(-1000, 1000)));
      break;
    }
    default: x = rand_sign(uniform(0.0, 10.0)); break;
    }
    record(&w, dual_cbrt(x), cbrtq((__float128)x), x, 0);
  }
  report1("cbrt", &w, CBRT_MAX_ULP);
}

Test(fn_explog, accuracy_hypot) {
  rng_state = FN_SEED ^ 10;
  worst w = {0};
  for (long i = 0; i < FN_SAMPLES; ++i) {
    double x, y;
    int e = rand_int(-1074, 1023);
    switch (i % 6) {
    case 0: x = rand_binade(e, e); y = rand_binade(e - 2, e); break;
    case 1: x = rand_binade(-1000, 1000); y = ldexp(x, -rand_int(0, 60)) * uniform(0.5, 2.0); break;
    case 2: x = rand_binade(1020, 1023); y = rand_binade(1015, 1023); break; /* near overflow */
    case 3: x = rand_binade(-1074, -1020); y = rand_binade(-1074, -1020); break; /* subnormal */
    case 4: x = rand_binade(-1074, 1023); y = rand_binade(-1074, 1023); break;
    default: x = rand_positive(); y = rand_positive(); break;
    }
    x = rand_sign(x);
    y = rand_sign(y);
    record(&w, dual_hypot(x, y), hypotq((__float128)x, (__float128)y), x, y);
  }
  report2("hypot", &w, HYPOT_MAX_ULP);
}
