/*
 * test_fn_trig.c — accuracy of the library's own sin, cos, tan, sincos (src/dual/fn_trig.h) and
 * atan, atan2, asin, acos (src/dual/fn_atrig.h) against libquadmath, in ulps (tests/ref/ulp_ref.h).
 * Per function >= 100000 splitmix64 arguments (fixed seed) over all binades and the hard ranges,
 * the worst cases of argument reduction, a few huge arguments checked with mpmath, and the C99
 * Annex F special values.  The bounds asserted are the maxima measured on these arguments.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <float.h>
#include <math.h>
#include <quadmath.h>
#include <stdint.h>
#include <string.h>

#include "dual/fn_atrig.h"
#include "dual/fn_trig.h"
#include "ulp_ref.h"

/* Measured maxima (ulp), rounded up: 100000 arguments per function (this test's default) give
 * sin 0.534, cos 0.526, tan 0.530, atan 0.528, atan2 0.528, asin 0.514, acos 0.514; 3000000
 * (-DNRAND=3000000, same seed, a superset) give the bounds below.  Our conformance suite asks 4. */
#define SIN_MAX_ULP 0.55
#define COS_MAX_ULP 0.54
#define TAN_MAX_ULP 0.55
#define ATAN_MAX_ULP 0.54
#define ATAN2_MAX_ULP 0.54
#define ASIN_MAX_ULP 0.53
#define ACOS_MAX_ULP 0.52

#ifndef NRAND
#define NRAND 100000 /* per function; -DNRAND=3000000 for a longer search */
#endif

/* --- splitmix64 ----------------------------------------------------------------------------- */
static uint64_t rng;
static uint64_t next_u64(void) { return ref_next(&rng); }
static double u01(void) { return (double)(next_u64() >> 11) * 0x1p-53; }
static double uniform(double lo, double hi) { return lo + (hi - lo) * u01(); }
static int below(int n) { return (int)(next_u64() % (uint64_t)n); }
/* Any finite double, exponent field uniform: every binade equally often, subnormals included. */
static double any_binade(void) {
  uint64_t u = next_u64();
  uint64_t ef = (u >> 52) % 2047; /* 0 .. 2046 */
  return ref_from_bits((u & 0x800FFFFFFFFFFFFFULL) | (ef << 52));
}
/* |x| in [2^lo, 2^hi), random sign, random significand. */
static double binades(int lo, int hi) {
  double x = ldexp(1.0 + u01(), lo + below(hi - lo));
  return (next_u64() & 1) ? -x : x;
}
/* x moved by k ulps (as integers: crosses binades; x finite, result stays finite). */
static double ulps_away(double x, int k) {
  uint64_t u = ref_to_bits(fabs(x)) + (uint64_t)(int64_t)k;
  if (ref_to_bits(ref_from_bits(u)) >> 52 >= 0x7FF) u = ref_to_bits(DBL_MAX);
  double y = ref_from_bits(u);
  return signbit(x) ? -y : y;
}

/* --- worst cases of argument reduction ------------------------------------------------------ */
/* x = m 2^e closest to a multiple of pi/2, one per binade: python3 scripts/fncoef/trig.py
 * --hard-cases (continued fractions of 2^(e+1)/pi in mpmath). */
static const struct {
  uint64_t m;
  int e;
} hard_cases[] = {
    {6381956970095103ULL, 797}, /* |x mod pi/2| = 2^-60.89 */
    {6411027962775774ULL, -47}, /* |x mod pi/2| = 2^-60.49 */
    {6381956970095103ULL, 798}, /* |x mod pi/2| = 2^-59.89 */
    {6411027962775774ULL, -46}, /* |x mod pi/2| = 2^-59.49 */
    {7763785107565477ULL, -29}, /* |x mod pi/2| = 2^-59.03 */
    {5916243447979695ULL, 79},  /* |x mod pi/2| = 2^-58.93 */
    {6381956970095103ULL, 799}, /* |x mod pi/2| = 2^-58.89 */
    {8444920710073313ULL, 939}, /* |x mod pi/2| = 2^-58.78 */
    {6411027962775774ULL, -45}, /* |x mod pi/2| = 2^-58.49 */
    {5850965514341686ULL, 525}, /* |x mod pi/2| = 2^-58.48 */
    {8160885118204141ULL, 808}, /* |x mod pi/2| = 2^-58.14 */
    {8360820580228475ULL, 628}, /* |x mod pi/2| = 2^-58.09 */
    {8583082635084172ULL, 145}, /* |x mod pi/2| = 2^-58.05 */
    {7763785107565477ULL, -28}, /* |x mod pi/2| = 2^-58.03 */
    {7958046405119485ULL, 243}, /* |x mod pi/2| = 2^-57.99 */
    {5916243447979695ULL, 80},  /* |x mod pi/2| = 2^-57.93 */
    {6808218460873451ULL, 562}, /* |x mod pi/2| = 2^-57.91 */
    {7636753411044619ULL, 201}, /* |x mod pi/2| = 2^-57.90 */
    {6381956970095103ULL, 800}, /* |x mod pi/2| = 2^-57.89 */
    {8444920710073313ULL, 940}, /* |x mod pi/2| = 2^-57.78 */
    {6366906923947931ULL, 194}, /* |x mod pi/2| = 2^-57.53 */
    {6411027962775774ULL, -44}, /* |x mod pi/2| = 2^-57.49 */
    {5850965514341686ULL, 526}, /* |x mod pi/2| = 2^-57.48 */
    {6617649673795284ULL, 15},  /* |x mod pi/2| = 2^-57.44 */
    {6411027962775774ULL, -43}, /* |x mod pi/2| = 2^-56.49 */
    {6411027962775774ULL, -42}, /* |x mod pi/2| = 2^-55.49 */
    {6411027962775774ULL, -41}, /* |x mod pi/2| = 2^-54.49 */
    {5520028710995367ULL, -34}, /* |x mod pi/2| = 2^-54.33 */
    {7074237752028440ULL, -52}, /* |x mod pi/2| = 2^-53.86 */
    {6411027962775774ULL, -40}, /* |x mod pi/2| = 2^-53.49 */
    {5520028710995367ULL, -33}, /* |x mod pi/2| = 2^-53.33 */
    {7074237752028440ULL, -51}, /* |x mod pi/2| = 2^-52.86 */
    {6331365068168276ULL, -37}, /* |x mod pi/2| = 2^-52.71 */
    {6411027962775774ULL, -39}, /* |x mod pi/2| = 2^-52.49 */
    {6251702173560778ULL, -38}, /* |x mod pi/2| = 2^-52.29 */
    {5305678314021330ULL, -50}, /* |x mod pi/2| = 2^-52.27 */
    {6291533620864527ULL, -36}, /* |x mod pi/2| = 2^-51.97 */
    {7874374887906596ULL, -35}, /* |x mod pi/2| = 2^-51.49 */
    {5305678314021330ULL, -49}, /* |x mod pi/2| = 2^-51.27 */
    {8400657330533773ULL, -48}, /* |x mod pi/2| = 2^-50.54 */
    {7763785107565477ULL, -27}, /* |x mod pi/2| = 2^-57.03 */
    {7763785107565477ULL, -26}, /* |x mod pi/2| = 2^-56.03 */
    {4615509997160240ULL, -13}, /* |x mod pi/2| = 2^-55.89 */
    {6563124118766349ULL, -5},  /* |x mod pi/2| = 2^-55.53 */
    {7763785107565477ULL, -25}, /* |x mod pi/2| = 2^-55.03 */
    {4615509997160240ULL, -12}, /* |x mod pi/2| = 2^-54.89 */
    {6563124118766349ULL, -4},  /* |x mod pi/2| = 2^-54.53 */
    {6134899525417045ULL, -1},  /* |x mod pi/2| = 2^-54.23 */
};
#define NHARD ((int)(sizeof hard_cases / sizeof hard_cases[0]))

static double hard_case(int i) { return ldexp((double)hard_cases[i].m, hard_cases[i].e); }

/* An argument for sin, cos, tan: the mix of all binades and hard ranges. */
static double trig_arg(void) {
  switch (below(10)) {
  case 0:
  case 1:
  case 2: return any_binade();                  /* every binade, subnormals, up to DBL_MAX */
  case 3: return uniform(-100.0, 100.0);         /* the common range */
  case 4: return uniform(-0.8, 0.8);             /* no reduction, both tan branches */
  case 5: {                                      /* the doubles nearest k pi/2, and neighbours */
    __float128 k = (__float128)(next_u64() >> below(64));
    double x = (double)(k * M_PI_2q);
    x = ulps_away(x, below(7) - 3);
    return (next_u64() & 1) ? -x : x;
  }
  case 6: {                                      /* worst cases of the reduction, neighbours */
    double x = ulps_away(hard_case(below(NHARD)), below(5) - 2);
    return (next_u64() & 1) ? -x : x;
  }
  case 7: return binades(-1074, -26);            /* tiny: sin x = tan x = x, cos x = 1 */
  case 8: return binades(19, 1024);              /* Payne–Hanek, and the switch at 2^20 */
  default: {                                     /* near the largest doubles */
    double x = ulps_away(DBL_MAX, -below(1 << 20));
    return (next_u64() & 1) ? -x : x;
  }
  }
}

typedef double (*fn1)(double);
typedef __float128 (*ref1)(__float128);

struct worst {
  double err, x, y;
};
static void track(struct worst *w, double err, double x, double y) {
  if (err > w->err || (isnan(err) && !isnan(w->err))) {
    w->err = err;
    w->x = x;
    w->y = y;
  }
}

static void check_random(const char *name, fn1 f, ref1 ref, double (*gen)(void), double bound,
                         uint64_t seed) {
  rng = seed;
  struct worst w = {0, 0, 0};
  for (int i = 0; i < NRAND; ++i) {
    double x = gen();
    track(&w, ulp_error(f(x), ref((__float128)x)), x, 0);
  }
  cr_log_info("%s: max error %.4f ulp at x = %a (%d random arguments)", name, w.err, w.x, NRAND);
  cr_assert(w.err <= bound, "%s: %.4f ulp at x = %a exceeds %.2f", name, w.err, w.x, bound);
}

static void check_list(const char *name, fn1 f, ref1 ref, const double *xs, int n, double bound) {
  struct worst w = {0, 0, 0};
  for (int i = 0; i < n; ++i) track(&w, ulp_error(f(xs[i]), ref((__float128)xs[i])), xs[i], 0);
  cr_log_info("%s: max error %.4f ulp at x = %a (%d listed arguments)", name, w.err, w.x, n);
  cr_assert(w.err <= bound, "%s: %.4f ulp at x = %a exceeds %.2f", name, w.err, w.x, bound);
}

/* --- sin, cos, tan, sincos ------------------------------------------------------------------- */
Test(fn_trig, sin_random) { check_random("sin", dual_sin, sinq, trig_arg, SIN_MAX_ULP, 1); }
Test(fn_trig, cos_random) { check_random("cos", dual_cos, cosq, trig_arg, COS_MAX_ULP, 2); }
Test(fn_trig, tan_random) { check_random("tan", dual_tan, tanq, trig_arg, TAN_MAX_ULP, 3); }

/* Every worst case of the reduction, both signs, 3 ulps either side. */
Test(fn_trig, reduction_worst_cases) {
  static double xs[NHARD * 14];
  int n = 0;
  for (int i = 0; i < NHARD; ++i)
    for (int k = -3; k <= 3; ++k) {
      xs[n++] = ulps_away(hard_case(i), k);
      xs[n++] = -ulps_away(hard_case(i), k);
    }
  check_list("sin (reduction worst cases)", dual_sin, sinq, xs, n, SIN_MAX_ULP);
  check_list("cos (reduction worst cases)", dual_cos, cosq, xs, n, COS_MAX_ULP);
  check_list("tan (reduction worst cases)", dual_tan, tanq, xs, n, TAN_MAX_ULP);
}

/* Huge arguments, references from mpmath at 4000 bits (libquadmath's own Payne–Hanek agrees):
 *   python3 -c 'from mpmath import mp, mpf, sin, cos, tan, nstr; mp.prec = 4000
 *   for h in ["0x1.7e43c8800759cp+996", ...]: x = mpf(float.fromhex(h));
 *   print(h, nstr(sin(x), 36), nstr(cos(x), 36), nstr(tan(x), 36))'
 * (1e300, DBL_MAX, 6381956970095103 2^797, 2^1000, 1e22, 2^20 - 2^-32, 2^20, 2^126.9) */
static const struct {
  double x;
  const char *sin, *cos, *tan;
} mpmath_refs[] = {
    {0x1.7e43c8800759cp+996, "-0.817881912115908597045885282755426212",
     "-0.575386111957549046688244275965806151", "1.42144882387472441236684088394782388"},
    {0x1.fffffffffffffp+1023, "0.00496195478918406179050267119707470575",
     "-0.999987689426559937464870066306934395", "-0.00496201587444489490050088433616323042"},
    {0x1.6ac5b262ca1ffp+849, "1.0", "-4.6871659242546276111225828019638844e-19",
     "-2133485385753703843.67485266334447498"},
    {0x1p+1000, "-0.159201703086242438240048630820839034", "0.987246077598913484239901796329468006",
     "-0.161258379950658056695340092974024182"},
    {0x1.0f0cf064dd592p+73, "-0.852200849767188801772705893753029368",
     "0.523214785395138945497594473384709492", "-1.62877822560689887854937593693954851"},
    {0x1.ffffffffffffep+19, "0.330493139801987155792805532504574123",
     "0.943808393978260914495030092938952717", "0.350169739865228964798747927336331665"},
    {0x1p+20, "0.330493140021734671639730959071282088", "0.943808393901311984006163126321248987",
     "0.350169740126609033479207913307394755"},
    {0x1.d9cf1d4a46e3dp+126, "0.4683237268433584151910482704202184",
     "-0.883556951687635929822734174746570869", "-0.530043621918018702098176030879485816"},
};

Test(fn_trig, huge_arguments_against_mpmath) {
  struct worst w = {0, 0, 0};
  int n = (int)(sizeof mpmath_refs / sizeof mpmath_refs[0]);
  for (int i = 0; i < n; ++i) {
    double x = mpmath_refs[i].x;
    const char *refs[3] = {mpmath_refs[i].sin, mpmath_refs[i].cos, mpmath_refs[i].tan};
    fn1 fs[3] = {dual_sin, dual_cos, dual_tan};
    ref1 qs[3] = {sinq, cosq, tanq};
    double bounds[3] = {SIN_MAX_ULP, COS_MAX_ULP, TAN_MAX_ULP};
    for (int j = 0; j < 3; ++j) {
      __float128 ref = strtoflt128(refs[j], NULL);
      /* libquadmath is a valid reference up here: it agrees with mpmath to ~2^-105 relative */
      cr_assert(fabsq(qs[j]((__float128)x) - ref) <= fabsq(ref) * 0x1p-105Q + 0x1p-160Q,
                "libquadmath disagrees with mpmath for function %d at %a", j, x);
      for (int s = 0; s < 2; ++s) {
        double xs = s ? -x : x;
        __float128 r = (s && j != 1) ? -ref : ref;
        double e = ulp_error(fs[j](xs), r);
        track(&w, e, xs, 0);
        cr_assert(e <= bounds[j], "function %d at %a: %.4f ulp", j, xs, e);
      }
    }
  }
  cr_log_info("sin/cos/tan of huge arguments vs mpmath: max error %.4f ulp at x = %a", w.err, w.x);
}

/* dual_sincos shares the reduction and must equal dual_sin and dual_cos bit for bit. */
Test(fn_trig, sincos_equals_sin_and_cos) {
  rng = 4;
  for (int i = 0; i < NRAND; ++i) {
    double x = trig_arg(), s, c;
    dual_sincos(x, &s, &c);
    double s1 = dual_sin(x), c1 = dual_cos(x);
    cr_assert(ref_to_bits(s) == ref_to_bits(s1) && ref_to_bits(c) == ref_to_bits(c1),
              "sincos(%a) = (%a, %a), sin/cos = (%a, %a)", x, s, c, s1, c1);
  }
  const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -DBL_MAX};
  for (int i = 0; i < 7; ++i) {
    double s, c;
    dual_sincos(sp[i], &s, &c);
    double s1 = dual_sin(sp[i]), c1 = dual_cos(sp[i]);
    cr_assert((ref_to_bits(s) == ref_to_bits(s1) || (isnan(s) && isnan(s1))) &&
              (ref_to_bits(c) == ref_to_bits(c1) || (isnan(c) && isnan(c1))));
  }
}

/* --- atan, atan2, asin, acos ----------------------------------------------------------------- */
static double atan_arg(void) {
  static const double brk[] = {0x1p-27, 0.4375, 0.6875, 1.1875, 2.4375, 0x1p27};
  switch (below(8)) {
  case 0:
  case 1:
  case 2: return any_binade();
  case 3: return uniform(-3.0, 3.0);             /* all five reduction intervals */
  case 4: return uniform(-100.0, 100.0);
  case 5: {                                      /* at the breakpoints */
    double x = ulps_away(brk[below(6)], below(65) - 32);
    return (next_u64() & 1) ? -x : x;
  }
  case 6: return binades(-1074, -20);            /* atan x = x */
  default: return binades(20, 1024);             /* near pi/2 */
  }
}

static double unit_arg(void) {
  switch (below(8)) {
  case 0:
  case 1: return uniform(-1.0, 1.0);
  case 2: {                                      /* near +-1: 1 - 2^-k u */
    double x = 1.0 - ldexp(u01(), -below(54));
    return (next_u64() & 1) ? -x : x;
  }
  case 3: {                                      /* near +-1/2, both branches */
    double x = ulps_away(0.5, below(2049) - 1024);
    return (next_u64() & 1) ? -x : x;
  }
  case 4: return uniform(-0.55, 0.55);
  case 5: return binades(-1074, 0);              /* every binade below 1, subnormals */
  case 6: {                                      /* the last ulps below 1 */
    double x = ulps_away(1.0, -1 - below(4096));
    return (next_u64() & 1) ? -x : x;
  }
  default: return below(16) ? uniform(-1.0, 1.0) : binades(0, 1024); /* some outside: NaN */
  }
}

Test(fn_atrig, atan_random) { check_random("atan", dual_atan, atanq, atan_arg, ATAN_MAX_ULP, 5); }
Test(fn_atrig, asin_random) { check_random("asin", dual_asin, asinq, unit_arg, ASIN_MAX_ULP, 6); }
Test(fn_atrig, acos_random) { check_random("acos", dual_acos, acosq, unit_arg, ACOS_MAX_ULP, 7); }

/* A value for one coordinate of atan2: mostly finite, sometimes a special value. */
static double coord_special(void) {
  static const double sp[] = {0.0, INFINITY, 0x1p-1074, DBL_MIN, DBL_MAX, 1.0};
  double x = sp[below(6)];
  return (next_u64() & 1) ? -x : x;
}

Test(fn_atrig, atan2_random) {
  rng = 8;
  struct worst w = {0, 0, 0};
  for (int i = 0; i < NRAND; ++i) {
    double y, x;
    switch (below(8)) {
    case 0:
    case 1: /* independent: every ratio, underflow and overflow of y/x */
      y = any_binade();
      x = any_binade();
      break;
    case 2: /* every quadrant, moderate */
      y = uniform(-10.0, 10.0);
      x = uniform(-10.0, 10.0);
      break;
    case 3: /* ratio near the breakpoints and the small / large thresholds, any scale */
    case 4: {
      static const double brk[] = {0x1p-30, 0x1p-27, 0.4375, 0.6875, 1.0, 1.1875, 1.5, 2.4375,
                                   0x1p27};
      x = binades(-1074, 1024);
      double q = brk[below(9)] * (1.0 + uniform(-0x1p-20, 0x1p-20));
      y = x * q * ((next_u64() & 1) ? -1.0 : 1.0);
      if (below(2)) {
        double t = x;
        x = y;
        y = t;
      }
      break;
    }
    case 5: /* ratio uniform in each binade of [2^-40, 2^40] */
      x = binades(-600, 600);
      y = x * binades(-40, 40);
      break;
    case 6: /* near the extremes of the exponent range (scaling paths) */
      x = binades(-1074, -990) * (below(2) ? 1.0 : 0x1p1000);
      y = x * binades(-35, 35);
      break;
    default: /* special values in one or both places */
      y = below(2) ? coord_special() : binades(-1074, 1024);
      x = below(2) ? coord_special() : binades(-1074, 1024);
      break;
    }
    track(&w, ulp_error(dual_atan2(y, x), atan2q((__float128)y, (__float128)x)), y, x);
  }
  cr_log_info("atan2: max error %.4f ulp at (y, x) = (%a, %a) (%d random pairs)", w.err, w.x, w.y,
              NRAND);
  cr_assert(w.err <= ATAN2_MAX_ULP, "atan2: %.4f ulp at (%a, %a) exceeds %.2f", w.err, w.x, w.y,
            ATAN2_MAX_ULP);
}

/* --- C99 Annex F special values -------------------------------------------------------------- */
static int same(double got, double want) {
  return (isnan(got) && isnan(want)) || ref_to_bits(got) == ref_to_bits(want);
}

#define PI_D 0x1.921fb54442d18p1     /* pi rounded to nearest */
#define PIO2_D 0x1.921fb54442d18p0   /* pi/2 */
#define PIO4_D 0x1.921fb54442d18p-1  /* pi/4 */
#define PI3O4_D 0x1.2d97c7f3321d2p1  /* 3pi/4 */
#define TINY 0x1p-1074

Test(fn_trig, annex_f_special_values) {
  static const struct {
    const char *name;
    fn1 f;
    double x, want;
  } t[] = {
      {"sin", dual_sin, 0.0, 0.0},          {"sin", dual_sin, -0.0, -0.0},
      {"sin", dual_sin, INFINITY, NAN},     {"sin", dual_sin, -INFINITY, NAN},
      {"sin", dual_sin, NAN, NAN},          {"sin", dual_sin, TINY, TINY},
      {"sin", dual_sin, -DBL_MIN, -DBL_MIN}, {"sin", dual_sin, 0x1p-30, 0x1p-30},
      {"cos", dual_cos, 0.0, 1.0},          {"cos", dual_cos, -0.0, 1.0},
      {"cos", dual_cos, INFINITY, NAN},     {"cos", dual_cos, -INFINITY, NAN},
      {"cos", dual_cos, NAN, NAN},          {"cos", dual_cos, TINY, 1.0},
      {"tan", dual_tan, 0.0, 0.0},          {"tan", dual_tan, -0.0, -0.0},
      {"tan", dual_tan, INFINITY, NAN},     {"tan", dual_tan, -INFINITY, NAN},
      {"tan", dual_tan, NAN, NAN},          {"tan", dual_tan, -TINY, -TINY},
      {"atan", dual_atan, 0.0, 0.0},        {"atan", dual_atan, -0.0, -0.0},
      {"atan", dual_atan, INFINITY, PIO2_D}, {"atan", dual_atan, -INFINITY, -PIO2_D},
      {"atan", dual_atan, NAN, NAN},        {"atan", dual_atan, TINY, TINY},
      {"atan", dual_atan, 1.0, PIO4_D},     {"atan", dual_atan, -1.0, -PIO4_D},
      {"atan", dual_atan, DBL_MAX, PIO2_D},
      {"asin", dual_asin, 0.0, 0.0},        {"asin", dual_asin, -0.0, -0.0},
      {"asin", dual_asin, 1.0, PIO2_D},     {"asin", dual_asin, -1.0, -PIO2_D},
      {"asin", dual_asin, 0x1.0000000000001p0, NAN}, {"asin", dual_asin, -2.0, NAN},
      {"asin", dual_asin, INFINITY, NAN},   {"asin", dual_asin, -INFINITY, NAN},
      {"asin", dual_asin, NAN, NAN},        {"asin", dual_asin, -TINY, -TINY},
      {"acos", dual_acos, 1.0, 0.0},        {"acos", dual_acos, -1.0, PI_D},
      {"acos", dual_acos, 0.0, PIO2_D},     {"acos", dual_acos, -0.0, PIO2_D},
      {"acos", dual_acos, 0x1.0000000000001p0, NAN}, {"acos", dual_acos, -1.5, NAN},
      {"acos", dual_acos, INFINITY, NAN},   {"acos", dual_acos, -INFINITY, NAN},
      {"acos", dual_acos, NAN, NAN},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
    double got = t[i].f(t[i].x);
    cr_expect(same(got, t[i].want), "%s(%a) = %a, want %a", t[i].name, t[i].x, got, t[i].want);
  }
  double s, c;
  dual_sincos(-0.0, &s, &c);
  cr_expect(same(s, -0.0) && same(c, 1.0), "sincos(-0) = (%a, %a)", s, c);
  dual_sincos(INFINITY, &s, &c);
  cr_expect(isnan(s) && isnan(c), "sincos(inf) = (%a, %a)", s, c);
}

/* C99 F.9.1.4, every case with both signs, plus NaNs. */
Test(fn_atrig, atan2_annex_f) {
  static const struct {
    double y, x, want;
  } t[] = {
      {0.0, -0.0, PI_D},        {-0.0, -0.0, -PI_D},     /* atan2(+-0, -0) = +-pi */
      {0.0, 0.0, 0.0},          {-0.0, 0.0, -0.0},       /* atan2(+-0, +0) = +-0 */
      {0.0, -1.0, PI_D},        {-0.0, -1.0, -PI_D},     /* atan2(+-0, x < 0) = +-pi */
      {0.0, -TINY, PI_D},       {-0.0, -INFINITY, -PI_D},
      {0.0, 1.0, 0.0},          {-0.0, 1.0, -0.0},       /* atan2(+-0, x > 0) = +-0 */
      {0.0, TINY, 0.0},         {-0.0, INFINITY, -0.0},
      {-1.0, 0.0, -PIO2_D},     {-1.0, -0.0, -PIO2_D},   /* atan2(y < 0, +-0) = -pi/2 */
      {-TINY, 0.0, -PIO2_D},    {-DBL_MAX, -0.0, -PIO2_D},
      {1.0, 0.0, PIO2_D},       {1.0, -0.0, PIO2_D},     /* atan2(y > 0, +-0) = pi/2 */
      {TINY, -0.0, PIO2_D},     {DBL_MAX, 0.0, PIO2_D},
      {1.0, -INFINITY, PI_D},   {-1.0, -INFINITY, -PI_D}, /* atan2(+-y, -inf) = +-pi */
      {DBL_MAX, -INFINITY, PI_D}, {-TINY, -INFINITY, -PI_D},
      {1.0, INFINITY, 0.0},     {-1.0, INFINITY, -0.0},  /* atan2(+-y, +inf) = +-0 */
      {DBL_MAX, INFINITY, 0.0}, {-TINY, INFINITY, -0.0},
      {INFINITY, 1.0, PIO2_D},  {-INFINITY, 1.0, -PIO2_D}, /* atan2(+-inf, x) = +-pi/2 */
      {INFINITY, -DBL_MAX, PIO2_D}, {-INFINITY, -0.0, -PIO2_D},
      {INFINITY, 0.0, PIO2_D},  {-INFINITY, -TINY, -PIO2_D},
      {INFINITY, -INFINITY, PI3O4_D}, {-INFINITY, -INFINITY, -PI3O4_D}, /* +-3pi/4 */
      {INFINITY, INFINITY, PIO4_D}, {-INFINITY, INFINITY, -PIO4_D},     /* +-pi/4 */
      {NAN, 1.0, NAN},          {1.0, NAN, NAN},          {NAN, NAN, NAN},
      {NAN, INFINITY, NAN},     {-INFINITY, NAN, NAN},    {NAN, 0.0, NAN},
      {0.0, NAN, NAN},          {1.0, 1.0, PIO4_D},       {-1.0, -1.0, -PI3O4_D},
      {DBL_MAX, DBL_MAX, PIO4_D}, {TINY, TINY, PIO4_D},   {TINY, DBL_MAX, 0.0},
      {-TINY, -DBL_MAX, -PI_D}, {DBL_MAX, TINY, PIO2_D},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
    double got = dual_atan2(t[i].y, t[i].x);
    cr_expect(same(got, t[i].want), "atan2(%a, %a) = %a, want %a", t[i].y, t[i].x, got, t[i].want);
  }
}
