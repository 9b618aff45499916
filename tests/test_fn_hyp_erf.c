/*
 * test_fn_hyp_erf.c — accuracy of the library's own hyperbolic functions, their inverses and the
 * error function (src/dual/fn_hyp.h, src/dual/fn_erf.h) against libquadmath: per function 100000
 * random arguments (splitmix64, fixed seed) over all binades and the hard ranges (tiny and
 * subnormal arguments, the overflow thresholds, acosh/atanh near 1, the erfc tail to its
 * underflow, the seams between the approximation intervals), plus the Annex F special values.
 * Prints the worst error per function (cr_log_info).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <float.h>
#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <string.h>

#include "dual/fn_erf.h"
#include "dual/fn_hyp.h"
#include "ulp_ref.h"

/* ---- bounds: the max error measured with this test at 15x N_RANDOM and five seeds (7.5 million
 * arguments per function; the value in the comment), plus 0.02, rounded up to a tenth ---------- */
#define SINH_ULPS 0.8  /* 0.772 */
#define COSH_ULPS 0.6  /* 0.560 */
#define TANH_ULPS 0.7  /* 0.645 */
#define ASINH_ULPS 0.8 /* 0.696 */
#define ACOSH_ULPS 0.8 /* 0.709 */
#define ATANH_ULPS 0.7 /* 0.648 */
#define ERF_ULPS 0.8   /* 0.772 */
#define ERFC_ULPS 0.7  /* 0.642 */

#define N_RANDOM 100000 /* random arguments per function, spread over its spans */
#define SEAM_ULPS 40    /* every seam is also checked at +-SEAM_ULPS ulps around it */
#define SEED 0x5eed0f11e5u

/* ---- splitmix64 ------------------------------------------------------------------------------ */
static uint64_t rng_next(uint64_t *s) { return ref_next(s); }

/* uniform in [0, 1) with 53 random bits */
static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1p-53; }

/* |x| log-uniform over [lo, hi] (lo > 0, subnormals included: the exponent is drawn, then all
 * 52 fraction bits) */
static double rng_log(uint64_t *s, double lo, double hi) {
  for (;;) {
    double l2lo = log2(lo), l2hi = log2(hi);
    double e = floor(l2lo + (l2hi - l2lo) * rng_unit(s));
    double m = 1.0 + rng_unit(s);
    double x = (e < -1022.0) ? ldexp(floor(m * 0x1p52), (int)e - 52 + 1) * 0.5 : ldexp(m, (int)e);
    if (x >= lo && x <= hi) return x;
  }
}

/* ---- spans of arguments ---------------------------------------------------------------------- */
enum span_kind {
  UNI,  /* uniform in [a, b] */
  LOGP, /* log-uniform in [a, b], a > 0 */
  LOGS, /* log-uniform magnitude in [a, b], random sign */
  OFFP, /* c + t, t log-uniform in [a, b] (c = the span's third value) */
  OFFM  /* c - t, t log-uniform in [a, b] */
};
typedef struct span {
  enum span_kind kind;
  double a, b, c;
} span;

static double span_draw(const span *sp, uint64_t *s) {
  switch (sp->kind) {
    case UNI: return sp->a + (sp->b - sp->a) * rng_unit(s);
    case LOGP: return rng_log(s, sp->a, sp->b);
    case LOGS: {
      double x = rng_log(s, sp->a, sp->b);
      return (rng_next(s) & 1) ? -x : x;
    }
    case OFFP: return sp->c + rng_log(s, sp->a, sp->b);
    case OFFM: return sp->c - rng_log(s, sp->a, sp->b);
  }
  return NAN;
}

typedef double (*fn_d)(double);
typedef __float128 (*fn_q)(__float128);

typedef struct fn_case {
  const char *name;
  fn_d f;
  fn_q ref;
  double bound;
  const span *spans;
  int nspans;
  const double *seams; /* arguments where the implementation changes formula (both signs) */
  int nseams;
} fn_case;

typedef struct worst {
  double err, x;
  long n;
} worst;

static void check_one(const fn_case *c, double x, worst *w) {
  double got = c->f(x);
  double e = ulp_error(got, c->ref((__float128)x));
  w->n++;
  if (e > w->err || e != e) {
    w->err = (e != e) ? INFINITY : e;
    w->x = x;
  }
}

static void run_case(const fn_case *c) {
  uint64_t s = SEED;
  worst w = {0.0, 0.0, 0};
  int per = (N_RANDOM + c->nspans - 1) / c->nspans; /* at least N_RANDOM in all */
  for (int k = 0; k < c->nspans; ++k)
    for (int i = 0; i < per; ++i) check_one(c, span_draw(&c->spans[k], &s), &w);
  for (int k = 0; k < c->nseams; ++k) {
    double v = c->seams[k];
    for (int d = -SEAM_ULPS; d <= SEAM_ULPS; ++d) {
      double x = ref_from_bits(ref_to_bits(v) + (uint64_t)(int64_t)d);
      check_one(c, x, &w);
      check_one(c, -x, &w);
    }
  }
  cr_log_info("%-6s max error %.3f ulp at x = %a (%ld arguments; bound %.1f)", c->name, w.err, w.x,
              w.n, c->bound);
  cr_expect(w.err <= c->bound, "%s: %.3f ulp at x = %a exceeds the bound %.1f", c->name, w.err,
            w.x, c->bound);
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define CASE(nm, f, ref, bound, spans, seams) \
  {nm, f, ref, bound, spans, COUNT(spans), seams, COUNT(seams)}

/* sinh, cosh: polynomial below 1, e^a -+ e^-a to 20 (e^-a refined below 2 / 1.5), e^a / 2 to the
 * overflow threshold 710.4758600739439 */
static const span HYP_SPANS[] = {
    {LOGS, 0x1p-1074, 0x1p10, 0}, {UNI, -1.5, 1.5, 0},   {UNI, -25.0, 25.0, 0},
    {UNI, 700.0, 712.0, 0},       {OFFM, 0x1p-40, 1e-3, 710.4758600739439},
    {UNI, -712.0, -700.0, 0},
};
static const double HYP_SEAMS[] = {0x1p-28, 1.0,  1.5, 2.0, 20.0, 709.782712893384,
                                   710.4758600739439};
/* tanh: rational below 0.4, 1 - 2/(e^2a + 1) to 20 (the quotient refined below 1.5), 1 beyond */
static const span TANH_SPANS[] = {
    {LOGS, 0x1p-1074, 0x1p10, 0}, {UNI, -1.0, 1.0, 0}, {UNI, -3.0, 3.0, 0}, {UNI, -22.0, 22.0, 0},
};
static const double TANH_SEAMS[] = {0x1p-28, 0.4, 1.5, 19.06, 20.0};
/* asinh: rational below 0.7, log of a double-double to 2, log(2a) + u R(u) (u = 1/a^2) to 2^26,
 * log(2a) to 2^1023, log(a) + ln 2 beyond */
static const span ASINH_SPANS[] = {
    {LOGS, 0x1p-1074, DBL_MAX, 0}, {UNI, -1.0, 1.0, 0}, {UNI, -20.0, 20.0, 0},
    {LOGS, 0.5, 0x1p30, 0},
};
static const double ASINH_SEAMS[] = {0x1p-28, 0.7, 2.0, 0x1p26, 0x1p1023};
/* acosh: sqrt(2t) (1 + t R(t)) below 2, log(2x) + u R(u) to 2^26, log(2x) beyond */
static const span ACOSH_SPANS[] = {
    {LOGP, 1.0, DBL_MAX, 0}, {OFFP, 0x1p-52, 1.0, 1.0}, {UNI, 1.0, 4.0, 0},
    {LOGP, 1.0, 0x1p30, 0},
};
static const double ACOSH_SEAMS[] = {1.0, 2.0, 0x1p26, 0x1p1023};
/* atanh: rational below 0.4, log((1 + a) / (1 - a)) / 2 of a double-double beyond */
static const span ATANH_SPANS[] = {
    {LOGS, 0x1p-1074, 1.0, 0}, {UNI, -1.0, 1.0, 0}, {OFFM, 0x1p-53, 0.5, 1.0},
    {OFFP, 0x1p-53, 0.5, -1.0},
};
static const double ATANH_SEAMS[] = {0x1p-28, 0.4, 1.0};
/* erf: rational below 0.46875, 1 - erfc to 6; erfc: rational for -0.5 < x < 0.46875, e^-x^2 / K (K
 * switches at 1.25 and 3) to the underflow (subnormal from 26.543, 0 from 27.226), 2 - erfc(-x)
 * below */
static const span ERF_SPANS[] = {
    {LOGS, 0x1p-1074, 0x1p10, 0}, {UNI, -1.0, 1.0, 0}, {UNI, -7.0, 7.0, 0},
};
static const double ERF_SEAMS[] = {0.46875, 1.25, 3.0, 6.0};
static const span ERFC_SPANS[] = {
    {LOGS, 0x1p-1074, 0x1p10, 0}, {UNI, -1.0, 1.0, 0},   {UNI, -7.0, 7.0, 0},
    {UNI, 0.0, 28.0, 0},          {UNI, 20.0, 27.5, 0}, {UNI, 26.4, 27.3, 0},
};
static const double ERFC_SEAMS[] = {0.46875, 0.5, 1.25, 3.0, 6.0, 26.543, 27.226, 27.25};

static const fn_case CASES[] = {
    CASE("sinh", dual_sinh, sinhq, SINH_ULPS, HYP_SPANS, HYP_SEAMS),
    CASE("cosh", dual_cosh, coshq, COSH_ULPS, HYP_SPANS, HYP_SEAMS),
    CASE("tanh", dual_tanh, tanhq, TANH_ULPS, TANH_SPANS, TANH_SEAMS),
    CASE("asinh", dual_asinh, asinhq, ASINH_ULPS, ASINH_SPANS, ASINH_SEAMS),
    CASE("acosh", dual_acosh, acoshq, ACOSH_ULPS, ACOSH_SPANS, ACOSH_SEAMS),
    CASE("atanh", dual_atanh, atanhq, ATANH_ULPS, ATANH_SPANS, ATANH_SEAMS),
    CASE("erf", dual_erf, erfq, ERF_ULPS, ERF_SPANS, ERF_SEAMS),
    CASE("erfc", dual_erfc, erfcq, ERFC_ULPS, ERFC_SPANS, ERFC_SEAMS),
};

Test(fn_hyp_erf, sinh) { run_case(&CASES[0]); }
Test(fn_hyp_erf, cosh) { run_case(&CASES[1]); }
Test(fn_hyp_erf, tanh) { run_case(&CASES[2]); }
Test(fn_hyp_erf, asinh) { run_case(&CASES[3]); }
Test(fn_hyp_erf, acosh) { run_case(&CASES[4]); }
Test(fn_hyp_erf, atanh) { run_case(&CASES[5]); }
Test(fn_hyp_erf, erf) { run_case(&CASES[6]); }
Test(fn_hyp_erf, erfc) { run_case(&CASES[7]); }

/* ---- Annex F special values ------------------------------------------------------------------ */
typedef struct special {
  const char *name;
  fn_d f;
  double x, want; /* compared bit for bit, except that any NaN matches any NaN */
} special;

Test(fn_hyp_erf, special_values) {
  const double inf = INFINITY, nan = NAN;
  const special T[] = {
      {"sinh", dual_sinh, 0.0, 0.0},        {"sinh", dual_sinh, -0.0, -0.0},
      {"sinh", dual_sinh, inf, inf},        {"sinh", dual_sinh, -inf, -inf},
      {"sinh", dual_sinh, nan, nan},        {"sinh", dual_sinh, 711.0, inf},
      {"sinh", dual_sinh, -711.0, -inf},    {"sinh", dual_sinh, DBL_MAX, inf},
      {"sinh", dual_sinh, 0x1p-1074, 0x1p-1074}, {"sinh", dual_sinh, -0x1p-1074, -0x1p-1074},
      {"cosh", dual_cosh, 0.0, 1.0},        {"cosh", dual_cosh, -0.0, 1.0},
      {"cosh", dual_cosh, inf, inf},        {"cosh", dual_cosh, -inf, inf},
      {"cosh", dual_cosh, nan, nan},        {"cosh", dual_cosh, 711.0, inf},
      {"cosh", dual_cosh, -DBL_MAX, inf},   {"cosh", dual_cosh, 0x1p-1074, 1.0},
      {"tanh", dual_tanh, 0.0, 0.0},        {"tanh", dual_tanh, -0.0, -0.0},
      {"tanh", dual_tanh, inf, 1.0},        {"tanh", dual_tanh, -inf, -1.0},
      {"tanh", dual_tanh, nan, nan},        {"tanh", dual_tanh, 40.0, 1.0},
      {"tanh", dual_tanh, -DBL_MAX, -1.0},  {"tanh", dual_tanh, -0x1p-1074, -0x1p-1074},
      {"asinh", dual_asinh, 0.0, 0.0},      {"asinh", dual_asinh, -0.0, -0.0},
      {"asinh", dual_asinh, inf, inf},      {"asinh", dual_asinh, -inf, -inf},
      {"asinh", dual_asinh, nan, nan},      {"asinh", dual_asinh, 0x1p-1074, 0x1p-1074},
      {"acosh", dual_acosh, 1.0, 0.0},      {"acosh", dual_acosh, inf, inf},
      {"acosh", dual_acosh, nan, nan},      {"acosh", dual_acosh, 0.5, nan},
      {"acosh", dual_acosh, 0.0, nan},      {"acosh", dual_acosh, -0.0, nan},
      {"acosh", dual_acosh, -1.0, nan},     {"acosh", dual_acosh, -inf, nan},
      {"acosh", dual_acosh, 0x1.fffffffffffffp-1, nan},
      {"atanh", dual_atanh, 0.0, 0.0},      {"atanh", dual_atanh, -0.0, -0.0},
      {"atanh", dual_atanh, 1.0, inf},      {"atanh", dual_atanh, -1.0, -inf},
      {"atanh", dual_atanh, nan, nan},      {"atanh", dual_atanh, 0x1.0000000000001p0, nan},
      {"atanh", dual_atanh, -2.0, nan},     {"atanh", dual_atanh, inf, nan},
      {"atanh", dual_atanh, -inf, nan},     {"atanh", dual_atanh, -0x1p-1074, -0x1p-1074},
      {"erf", dual_erf, 0.0, 0.0},          {"erf", dual_erf, -0.0, -0.0},
      {"erf", dual_erf, inf, 1.0},          {"erf", dual_erf, -inf, -1.0},
      {"erf", dual_erf, nan, nan},          {"erf", dual_erf, 30.0, 1.0},
      {"erf", dual_erf, -DBL_MAX, -1.0},
      {"erfc", dual_erfc, 0.0, 1.0},        {"erfc", dual_erfc, -0.0, 1.0},
      {"erfc", dual_erfc, inf, 0.0},        {"erfc", dual_erfc, -inf, 2.0},
      {"erfc", dual_erfc, nan, nan},        {"erfc", dual_erfc, 30.0, 0.0},
      {"erfc", dual_erfc, DBL_MAX, 0.0},    {"erfc", dual_erfc, -30.0, 2.0},
      {"erfc", dual_erfc, 0x1p-1074, 1.0},
  };
  for (int i = 0; i < COUNT(T); ++i) {
    double got = T[i].f(T[i].x);
    int ok = (T[i].want != T[i].want) ? (got != got) : (ref_to_bits(got) == ref_to_bits(T[i].want));
    cr_expect(ok, "%s(%a) = %a, want %a", T[i].name, T[i].x, got, T[i].want);
  }
}

/* Overflow exactly where the true value passes DBL_MAX + ulp/2: the threshold of sinh and cosh
 * is 710.4758600739439 (e^x / 2 = DBL_MAX at 710.475860073943942...). */
Test(fn_hyp_erf, overflow_threshold) {
  double below = 710.4758600739439, above = 710.475860073944;
  cr_expect(isfinite(dual_cosh(below)) && isfinite(dual_sinh(below)), "cosh/sinh(%a) overflowed",
            below);
  cr_expect(isinf(dual_cosh(above)) && isinf(dual_sinh(above)) && dual_sinh(-above) < 0,
            "cosh/sinh(%a) finite", above);
  cr_expect(isfinite(dual_cosh(710.4)), "cosh(710.4) overflowed");
}
