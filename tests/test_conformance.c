/*
 * test_conformance.c — the per-op conformance suite, expanded from src/dual/ops.def: one test per
 * op checks its value against the quad-precision reference (tests/ref/quad_ref.c) within a few
 * ulp, every partial against quad central differences, the documented kink / singular / domain
 * conventions and per-point flags, and bitwise identical results for every width and thread
 * count.  Each op prints one row of a table of worst errors (stderr).
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/logging.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dual/random.h" /* the draws' expected values */
#include "dual/ops.h"
#include "dualbatch.h"
#include "op_sampling.h"
#include "quad_ref.h"

typedef __float128 Q;

/* ---- tolerances (STYLE.md §9) ------------------------------------------------------------------ */
/* Values: the acceptance bound; glibc's double functions are within 1-3 ulp (libm-test-ulps) and
 * the composed ops (sigmoid, softplus) add one or two roundings. */
#define VALUE_ULPS 4
/* + - * / sqrt and the selections are correctly rounded or exact (IEEE 754); the quad reference
 * rounds innocuously for them (113 >= 2*53 + 2 bits, Figueroa 1995). */
#define VALUE_ULPS_EXACT 0
/* fma: the reference rounds a*b+c twice (to 113 bits, then to 53): at most one ulp off. */
#define VALUE_ULPS_FMA 1
/* Partials, relative: a rule combines 2-5 libm results and roundings (~1e-15) plus argument
 * rounding amplified by the op: erf' = c exp(-a*a) carries |a|^2 2^-53 <= 8e-14 at |a| = 26.5,
 * pow's b a^(b-1) carries |log a| ulp(b-1)/2 <= 8e-14 where the result is finite. */
#define DERIV_RTOL 1e-13
/* Partials, absolute floor: below DBL_MIN a partial is subnormal (fewer significant bits) or
 * flushed to 0 by an overflowing denominator (atan' = 1/(1+a*a) for |a| > 1.3e154). */
#define DERIV_ATOL DBL_MIN
/* A point is a strong check when the reference's own error bound (quad_ref_partial_err) is
 * below this fraction of the tolerance; weaker points are still checked, and counted. */
#define REF_MARGIN 0.1

/* Random points per op (each op also gets its edge grid and non-finite inputs). */
#define N_RANDOM 1200
static const int WIDTHS[] = {1, 2, 4, 8, 16, 32};
#define N_WIDTHS ((int)(sizeof WIDTHS / sizeof WIDTHS[0]))
#define MAX_LOGGED 8 /* failure messages printed per op */

/* ---- the op table, expanded here ---------------------------------------------------------------- */
typedef struct op_desc {
  const char *name, *spelling;
  int arity;
} op_desc;

static const op_desc OPS[DUAL_OP_COUNT] = {
#define OP(name, spelling, arity, prop, adj, flags, synopsis) {#name, spelling, arity},
#include "dual/ops.def"
#undef OP
};

static int value_ulps(int op) {
  switch (op) {
  case DUAL_OP_ADD: case DUAL_OP_SUB: case DUAL_OP_MUL: case DUAL_OP_DIV: case DUAL_OP_NEG:
  case DUAL_OP_SQUARE: case DUAL_OP_SQRT: case DUAL_OP_ABS: case DUAL_OP_RELU: case DUAL_OP_MIN:
  case DUAL_OP_MAX: case DUAL_OP_SELECT: case DUAL_OP_SIGN: case DUAL_OP_FLOOR: case DUAL_OP_CEIL:
  case DUAL_OP_LT: case DUAL_OP_LE: case DUAL_OP_GT: case DUAL_OP_GE: case DUAL_OP_EQ:
  case DUAL_OP_NE: case DUAL_OP_AND: case DUAL_OP_OR: case DUAL_OP_NOT: case DUAL_OP_NOGRAD:
    return VALUE_ULPS_EXACT;
  case DUAL_OP_FMA: return VALUE_ULPS_FMA;
  default: return VALUE_ULPS;
  }
}

/* Per-op loosening of DERIV_RTOL, each with its reason.  None needed so far. */
static double deriv_rtol(int op) {
  (void)op;
  return DERIV_RTOL;
}

/* ---- ulp distance -------------------------------------------------------------------------------- */
/* Doubles mapped to integers in the same order (-0 and +0 both to 0), so that adjacent doubles
 * differ by 1 (DBL_MAX and inf too). */
static int64_t ordered(double x) {
  int64_t i;
  memcpy(&i, &x, sizeof i);
  return (i < 0) ? INT64_MIN - i : i;
}
/* Distance in ulps; 0 when both are NaN, UINT64_MAX when only one is. */
static uint64_t ulp_distance(double x, double y) {
  if (isnan(x) || isnan(y)) return (isnan(x) && isnan(y)) ? 0 : UINT64_MAX;
  int64_t a = ordered(x), b = ordered(y);
  return (a > b) ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

/* ---- random points: tests/ref/op_sampling.h ------------------------------------------------- */

static const double LOGIC_VALUES[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 3e300, 4.9e-324, -2.0};
#define N_LOGIC ((int)(sizeof LOGIC_VALUES / sizeof LOGIC_VALUES[0]))

/* pow: keep a^b and b a^(b-1) well inside the double range */
static void sample_pow(rng *r, double x[3]) {
  static const double bs[] = {0, 1, 2, 0.5, -1, -0.5, 3, -2, 1e-300, -1e-300, 1.5, 0.25};
  for (;;) {
    double a, b;
    switch (below(r, 6)) {
    case 0: a = logu(r, 1e-3, 1e3), b = unif(r, -50, 50); break;
    case 1: a = logu(r, 1e-300, 1e300), b = unif(r, -1, 1) * fmin(60, 600 / fabs(log(a))); break;
    case 2: a = near(r, 1, sgn(r), 1e-16, 1e-2), b = slogu(r, 1e-3, 1e6); break;
    case 3: a = -logu(r, 1e-3, 1e3), b = (double)(below(r, 61) - 30); break; /* negative base */
    case 4: a = logu(r, 1e-300, 1e-5), b = unif(r, -0.2, 1) * 600 / fabs(log(a)); break;
    default: a = logu(r, 1e-5, 1e5), b = pick(r, bs, (int)(sizeof bs / sizeof bs[0])); break;
    }
    double l = fabs(log(fabs(a)));
    if (fabs(b) * l <= 600 && fabs(b - 1) * l <= 600) {
      x[0] = a, x[1] = b;
      return;
    }
  }
}

/* One random point from op's domain table (mixtures that include the neighbourhoods of kinks and
 * singular points).  Returns 0 when the op has no domain here (a new op: add one). */
static int sample_point(int op, rng *r, double x[3]) {
  static const double half_pi = 1.5707963267948966;
  int k = below(r, 4);
  x[0] = x[1] = x[2] = 0.0;
  switch (op) {
  case DUAL_OP_ADD:
  case DUAL_OP_SUB:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300), x[1] = slogu(r, 1e-300, 1e300);
    else if (k == 1) { /* cancellation */
      x[0] = slogu(r, 1e-10, 1e10);
      x[1] = x[0] * (1 + slogu(r, 1e-16, 1e-3)) * (op == DUAL_OP_ADD ? -1 : 1);
    } else if (k == 2) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else x[0] = slogu(r, 1e-5, 1e5), x[1] = slogu(r, 1e-300, 1e-200);
    return 1;
  case DUAL_OP_MUL:
    if (k == 0) x[0] = slogu(r, 1e-150, 1e150), x[1] = slogu(r, 1e-150, 1e150);
    else if (k == 1) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else if (k == 2) x[0] = slogu(r, 1e-200, 1e200), x[1] = slogu(r, 1e-100, 1e100);
    else x[0] = slogu(r, 1e-300, 1e-150), x[1] = slogu(r, 1e-10, 1e10);
    return 1;
  case DUAL_OP_DIV:
    if (k <= 1) x[0] = slogu(r, 1e-100, 1e100), x[1] = slogu(r, 1e-100, 1e100);
    else if (k == 2) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else x[0] = unif(r, -10, 10), x[1] = slogu(r, 1e-150, 1e-5); /* near the pole */
    return 1;
  case DUAL_OP_NEG:
  case DUAL_OP_RELU:
  case DUAL_OP_ABS:
  case DUAL_OP_SIGN:
  case DUAL_OP_NOGRAD:
    if (k <= 1) x[0] = slogu(r, 1e-300, 1e300);
    else if (k == 2) x[0] = unif(r, -1, 1);
    else x[0] = slogu(r, 4.9e-324, 1e-300);
    return 1;
  case DUAL_OP_POW: sample_pow(r, x); return 1;
  case DUAL_OP_SQUARE:
    x[0] = (k <= 1) ? slogu(r, 1e-150, 1e150) : unif(r, -10, 10);
    return 1;
  case DUAL_OP_SQRT:
    if (k == 0) x[0] = logu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = logu(r, 4.9e-324, 1e-300);
    else if (k == 2) x[0] = near(r, 1, sgn(r), 1e-16, 0.1);
    else x[0] = unif(r, 0, 10);
    return 1;
  case DUAL_OP_CBRT:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = slogu(r, 4.9e-324, 1e-300);
    else if (k == 2) x[0] = sgn(r) * near(r, 1, sgn(r), 1e-16, 0.1);
    else x[0] = unif(r, -10, 10);
    return 1;
  case DUAL_OP_EXP:
    if (k == 0) x[0] = unif(r, -708, 709);
    else if (k == 1) x[0] = unif(r, -5, 5);
    else if (k == 2) x[0] = slogu(r, 1e-300, 1e-3);
    else x[0] = unif(r, -40, 40);
    return 1;
  case DUAL_OP_EXP2:
    if (k == 0) x[0] = unif(r, -1022, 1023);
    else if (k == 1) x[0] = unif(r, -5, 5);
    else if (k == 2) x[0] = slogu(r, 1e-300, 1e-3);
    else x[0] = unif(r, -60, 60);
    return 1;
  case DUAL_OP_EXPM1:
    if (k == 0) x[0] = unif(r, -50, 709);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -1, 1);
    else x[0] = unif(r, -700, 5);
    return 1;
  case DUAL_OP_LOG:
  case DUAL_OP_LOG2:
  case DUAL_OP_LOG10:
    if (k == 0) x[0] = logu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = near(r, 1, sgn(r), 1e-16, 0.1);
    else if (k == 2) x[0] = unif(r, 0, 10);
    else x[0] = logu(r, 1e-307, 1e-290); /* near the singular point 0 */
    return 1;
  case DUAL_OP_LOG1P:
    if (k == 0) x[0] = near(r, -1, 1, 1.2e-16, 1); /* near the singular point -1 */
    else if (k == 1) x[0] = slogu(r, 1e-300, 0.5);
    else if (k == 2) x[0] = logu(r, 0.5, 1e300);
    else x[0] = unif(r, -0.99, 5);
    return 1;
  case DUAL_OP_HYPOT:
    if (k == 0) x[0] = slogu(r, 1e-150, 1e150), x[1] = slogu(r, 1e-150, 1e150);
    else if (k == 1) {
      x[0] = slogu(r, 1e-300, 1e-100), x[1] = slogu(r, 1e-10, 1e100);
      if (next64(r) & 1) x[2] = x[0], x[0] = x[1], x[1] = x[2], x[2] = 0;
    } else if (k == 2) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else x[0] = slogu(r, 1e-300, 1e-250), x[1] = slogu(r, 1e-300, 1e-250); /* near the origin */
    return 1;
  case DUAL_OP_SIN:
  case DUAL_OP_COS:
    if (k == 0) x[0] = unif(r, -10, 10);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1e22);
    else { /* near multiples of pi/2: zeros of the value and of the derivative */
      double p = (double)(below(r, 200) - 100) * half_pi;
      x[0] = (p == 0) ? slogu(r, 1e-300, 1e-3) : near(r, p, sgn(r), 1e-16, 1e-3);
    }
    return 1;
  case DUAL_OP_TAN:
    if (k == 0) x[0] = unif(r, -10, 10);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1e22);
    else if (k == 2) { /* near the poles (k + 1/2) pi */
      double p = (double)(2 * (below(r, 200) - 100) + 1) * half_pi;
      x[0] = near(r, p, sgn(r), 1e-16, 1e-3);
    } else {
      double p = (double)(below(r, 200) - 100) * 2 * half_pi;
      x[0] = (p == 0) ? slogu(r, 1e-300, 1e-3) : near(r, p, sgn(r), 1e-16, 1e-3);
    }
    return 1;
  case DUAL_OP_ASIN:
  case DUAL_OP_ACOS:
  case DUAL_OP_ATANH:
    if (k == 0) x[0] = unif(r, -1, 1);
    else if (k == 1) { /* near the singular points +-1 */
      double s = sgn(r);
      x[0] = near(r, s, -s, 1.1e-16, 0.1);
    } else if (k == 2) x[0] = slogu(r, 1e-300, 0.1);
    else x[0] = unif(r, -1, 1);
    return 1;
  case DUAL_OP_ATAN:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = unif(r, -10, 10);
    else if (k == 2) x[0] = slogu(r, 1e150, 1e300);
    else x[0] = slogu(r, 1e-3, 1e3);
    return 1;
  case DUAL_OP_ATAN2:
    if (k == 0) x[0] = slogu(r, 1e-150, 1e150), x[1] = slogu(r, 1e-150, 1e150);
    else if (k == 1) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else if (k == 2) { /* near the branch cut a = 0, b < 0, and near the origin */
      if (next64(r) & 1) x[0] = slogu(r, 1e-300, 1e-3), x[1] = -logu(r, 1e-3, 1e3);
      else x[0] = slogu(r, 1e-300, 1e-200), x[1] = slogu(r, 1e-300, 1e-200);
    } else x[0] = slogu(r, 1e-100, 1e100), x[1] = slogu(r, 1e-300, 1e-200);
    return 1;
  case DUAL_OP_SINH:
  case DUAL_OP_COSH:
    if (k == 0) x[0] = unif(r, -710, 710);
    else if (k == 1) x[0] = unif(r, -5, 5);
    else if (k == 2) x[0] = slogu(r, 1e-300, 1e-3);
    else x[0] = unif(r, -30, 30);
    return 1;
  case DUAL_OP_TANH:
    if (k == 0) x[0] = unif(r, -20, 20);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -400, 400);
    else x[0] = unif(r, -3, 3);
    return 1;
  case DUAL_OP_ASINH:
    x[0] = (k <= 1) ? slogu(r, 1e-300, 1e300) : unif(r, -10, 10);
    return 1;
  case DUAL_OP_ACOSH:
    if (k <= 1) x[0] = near(r, 1, 1, 2.3e-16, 1); /* near the singular point 1 */
    else if (k == 2) x[0] = logu(r, 1, 1e300);
    else x[0] = unif(r, 1, 10);
    return 1;
  case DUAL_OP_ERF:
    if (k == 0) x[0] = unif(r, -6, 6);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -27, 27);
    else x[0] = unif(r, -2, 2);
    return 1;
  case DUAL_OP_ERFC:
    if (k == 0) x[0] = unif(r, -6, 26.5);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -30, 26.5);
    else x[0] = unif(r, -2, 10);
    return 1;
  case DUAL_OP_SIGMOID:
  case DUAL_OP_SOFTPLUS:
    if (k == 0) x[0] = unif(r, -40, 40);
    else if (k == 1) x[0] = unif(r, -700, 700);
    else if (k == 2) x[0] = slogu(r, 1e-300, 1);
    else x[0] = unif(r, -5, 5);
    return 1;
  case DUAL_OP_FMA:
    if (k == 0) {
      x[0] = slogu(r, 1e-100, 1e100), x[1] = slogu(r, 1e-100, 1e100);
      x[2] = slogu(r, 1e-200, 1e200);
    } else if (k == 1) { /* cancellation: c ~ -a*b, and c = -RN(a*b) (fma = rounding error) */
      x[0] = slogu(r, 1e-50, 1e50), x[1] = slogu(r, 1e-50, 1e50);
      x[2] = -(x[0] * x[1]) * ((next64(r) & 1) ? 1.0 : 1 + slogu(r, 1e-16, 1e-8));
    } else {
      x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10), x[2] = unif(r, -10, 10);
    }
    return 1;
  case DUAL_OP_MIN:
  case DUAL_OP_MAX:
  case DUAL_OP_LT:
  case DUAL_OP_LE:
  case DUAL_OP_GT:
  case DUAL_OP_GE:
  case DUAL_OP_EQ:
  case DUAL_OP_NE:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300), x[1] = slogu(r, 1e-300, 1e300);
    else if (k == 1) { /* ties and near ties: the kink */
      x[0] = slogu(r, 1e-10, 1e10);
      int t = below(r, 3);
      x[1] = (t == 0) ? x[0] : (t == 1) ? nextafter(x[0], sgn(r) * INFINITY)
                                        : x[0] * (1 + slogu(r, 1e-16, 1e-6));
    } else if (k == 2) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else { /* small integers and signed zeros: many exact ties */
      static const double v[] = {0.0, -0.0, 1.0, -1.0, 2.0};
      x[0] = pick(r, v, 5), x[1] = pick(r, v, 5);
    }
    return 1;
  case DUAL_OP_SELECT: {
    static const double conds[] = {0.0, -0.0, 1.0, -1.0, 2.5, 1e-300, 4.9e-324, -7.0};
    x[0] = pick(r, conds, (int)(sizeof conds / sizeof conds[0]));
    if (k <= 1) x[1] = slogu(r, 1e-300, 1e300), x[2] = slogu(r, 1e-300, 1e300);
    else x[1] = unif(r, -10, 10), x[2] = unif(r, -10, 10);
    return 1;
  }
  case DUAL_OP_FLOOR:
  case DUAL_OP_CEIL:
    if (k == 0) x[0] = unif(r, -1e3, 1e3);
    else if (k == 1) { /* integers and near integers: the jumps */
      double n = (double)(below(r, 2001) - 1000);
      x[0] = (next64(r) & 1) ? n : n + sgn(r) * logu(r, 1e-13, 0.4);
    } else if (k == 2) x[0] = slogu(r, 1e15, 1e300);
    else x[0] = slogu(r, 1e-300, 1);
    return 1;
  case DUAL_OP_AND:
  case DUAL_OP_OR:
    x[1] = pick(r, LOGIC_VALUES, N_LOGIC);
    /* fall through */
  case DUAL_OP_NOT: x[0] = pick(r, LOGIC_VALUES, N_LOGIC); return 1;
  default: return 0;
  }
}

/* ---- the documented conventions at non-smooth points (DESIGN.md, ops.def, rules.h comments) -- */
enum conv_kind {
  CONV_NONE,      /* none documented: the point must not be non-smooth (test failure) */
  CONV_EXACT,     /* the partial is exactly v */
  CONV_NONFINITE, /* singular point: the partial is +-inf or NaN and DUAL_PT_SINGULAR is set */
  CONV_NAN        /* documented NaN (no derivative exists), no flag besides DUAL_PT_NAN */
};
typedef struct conv {
  int kind;
  double v;
} conv;

static conv conv_of(int kind, double v) {
  conv c = {kind, v};
  return c;
}

/* The documented partial d op / d x[which] at a point where the reference has no two-sided
 * derivative (x finite, op(x) not NaN). */
static conv convention(int op, const double x[3], int which) {
  double a = x[0], b = x[1];
  switch (op) {
  /* kinks: the documented side; piecewise-constant ops: exactly 0 */
  case DUAL_OP_ABS:
  case DUAL_OP_RELU:
  case DUAL_OP_SIGN:
  case DUAL_OP_FLOOR:
  case DUAL_OP_CEIL:
  case DUAL_OP_LT:
  case DUAL_OP_LE:
  case DUAL_OP_GT:
  case DUAL_OP_GE:
  case DUAL_OP_EQ:
  case DUAL_OP_NE:
  case DUAL_OP_AND:
  case DUAL_OP_OR:
  case DUAL_OP_NOT: return conv_of(CONV_EXACT, 0.0);
  case DUAL_OP_MIN:
  case DUAL_OP_MAX: return conv_of(CONV_EXACT, which == 0 ? 1.0 : 0.0); /* ties take a */
  case DUAL_OP_SELECT: return conv_of(CONV_EXACT, 0.0); /* the condition's partial is 0 */
  case DUAL_OP_HYPOT: return conv_of(CONV_EXACT, 0.0);  /* slope 0 at the origin */
  case DUAL_OP_ATAN2:
    if (a == 0 && b == 0) return conv_of(CONV_NONFINITE, 0);
    /* across the cut (a = +-0, b < 0) the angle jumps; the synopsis formula b/(a^2+b^2) */
    if (which == 0 && a == 0 && b < 0) return conv_of(CONV_EXACT, 1.0 / b);
    return conv_of(CONV_NONE, 0);
  case DUAL_OP_SQRT:
  case DUAL_OP_CBRT:
  case DUAL_OP_LOG:
  case DUAL_OP_LOG2:
  case DUAL_OP_LOG10:
  case DUAL_OP_LOG1P:
  case DUAL_OP_ASIN:
  case DUAL_OP_ACOS:
  case DUAL_OP_ACOSH:
  case DUAL_OP_ATANH:
  case DUAL_OP_DIV: return conv_of(CONV_NONFINITE, 0);
  case DUAL_OP_POW:
    if (which == 0 && a == 0) {
      if (b > 1) return conv_of(CONV_EXACT, 0.0); /* b a^(b-1) = 0: the right-side slope */
      return conv_of(CONV_NONFINITE, 0);          /* 0 < b < 1, or b < 0 (pole) */
    }
    if (which == 1 && a == 0) return (b < 0) ? conv_of(CONV_NONFINITE, 0) : conv_of(CONV_NAN, 0);
    if (which == 1 && a < 0) return conv_of(CONV_NAN, 0); /* "NaN for a negative base" */
    return conv_of(CONV_NONE, 0);
  default: return conv_of(CONV_NONE, 0);
  }
}

/* ---- per-point reference ------------------------------------------------------------------------- */
enum { PT_RANDOM, PT_EDGE, PT_BAD };

typedef struct point_ref {
  double x[3];
  int kind;
  int finite;   /* every operand finite */
  Q value;      /* reference value */
  int rc[3];    /* quad_ref_partial_err codes */
  Q d[3], err[3];
  conv cv[3];   /* for QREF_NOT_SMOOTH */
  int singular; /* DUAL_PT_SINGULAR expected */
  int domain;   /* DUAL_PT_DOMAIN expected */
} point_ref;

typedef struct op_stats {
  const char *op;
  int n_points, n_conv, n_poisoned, n_weak, n_fail;
  uint64_t worst_ulp;
  double ulp_at[3];
  double worst_rel;
  double rel_at[3];
  int rel_which;
} op_stats;

static void failf(op_stats *s, const char *fmt, ...) {
  char buf[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (++s->n_fail <= MAX_LOGGED) cr_log_error("%s: %s", s->op, buf);
}

static const char *pt_str(const double x[3], int arity, char *buf, size_t cap) {
  if (arity <= 1) snprintf(buf, cap, "(%.17g)", x[0]);
  else if (arity == 2) snprintf(buf, cap, "(%.17g, %.17g)", x[0], x[1]);
  else snprintf(buf, cap, "(%.17g, %.17g, %.17g)", x[0], x[1], x[2]);
  return buf;
}

static void make_ref(int op, int arity, point_ref *pr) {
  const double *x = pr->x;
  pr->finite = 1;
  for (int i = 0; i < arity; ++i) pr->finite &= isfinite(x[i]) != 0;
  quad_ref_value(op, x[0], x[1], x[2], &pr->value);
  /* NaN from finite operands is a domain error, except 0/0 (the singular point of /) */
  pr->domain = pr->finite && isnanq(pr->value) && !(op == DUAL_OP_DIV && x[1] == 0);
  pr->singular = 0;
  for (int i = 0; i < arity; ++i) {
    pr->rc[i] = quad_ref_partial_err(op, x[0], x[1], x[2], i, &pr->d[i], &pr->err[i]);
    pr->cv[i] = conv_of(CONV_NONE, 0);
    if (pr->rc[i] == QREF_NOT_SMOOTH && pr->finite && !pr->domain) {
      pr->cv[i] = convention(op, x, i);
      if (pr->cv[i].kind == CONV_NONFINITE) pr->singular = 1;
    }
  }
}

/* ---- programs and runs ------------------------------------------------------------------------------ */
static dual_context *new_context(void) {
  dual_context *ctx = NULL;
  cr_assert_eq(dual_context_create(&ctx, DUAL_DEVICE_CPU), DUAL_SUCCESS, "context: %s",
               ctx ? dual_context_last_error(ctx) : "?");
  return ctx;
}

/* y = op(args), each argument an active input when its bit is set in `mask`, else a parameter. */
static dual_program *build_op(dual_context *ctx, int op, int mask) {
  static const char *names[3] = {"a", "b", "c"};
  dual_builder *b = NULL;
  dual_program *prog = NULL;
  int32_t ids[3], y;
  cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
  for (int i = 0; i < OPS[op].arity; ++i)
    if (mask & (1 << i)) dual_builder_input(b, names[i], &ids[i]);
  for (int i = 0; i < OPS[op].arity; ++i)
    if (!(mask & (1 << i))) dual_builder_param(b, names[i], &ids[i]);
  dual_builder_apply(b, OPS[op].spelling, OPS[op].arity, ids, &y);
  dual_builder_output(b, "y", y);
  int st = dual_builder_finish(b, &prog);
  dual_builder_destroy(&b);
  cr_assert_eq(st, DUAL_SUCCESS, "%s: building the program failed: %s", OPS[op].name,
               dual_context_last_error(ctx));
  return prog;
}

typedef struct run_buf {
  double *y, *J;
  int32_t *st;
} run_buf;

static run_buf run_alloc(int64_t B, int m, int n) {
  run_buf r;
  r.y = calloc((size_t)(B * m) + 1, sizeof(double));
  r.J = calloc((size_t)(B * m * n) + 1, sizeof(double));
  r.st = calloc((size_t)B + 1, sizeof(int32_t));
  cr_assert(r.y && r.J && r.st);
  return r;
}
static void run_free(run_buf *r) {
  free(r->y), free(r->J), free(r->st);
  r->y = r->J = NULL, r->st = NULL;
}

static void jacobian(dual_context *ctx, const dual_program *prog, int64_t B, const double *x,
                     int n, const double *p, int np, int m, run_buf *out) {
  int st = dual_jacobian(ctx, prog, B, n ? x : NULL, n > 0 ? n : 1, np ? p : NULL,
                         np > 0 ? np : 1, out->y, m, out->J, (int64_t)m * n > 0 ? m * n : 1,
                         out->st);
  cr_assert_eq(st, DUAL_SUCCESS, "dual_jacobian: %s", dual_context_last_error(ctx));
}

/* Bitwise equality, except that all NaNs are equal: IEEE 754 leaves the sign and payload of a
 * NaN result unspecified, and the compiler may commute a + b (which picks the NaN that
 * propagates) differently in the loops of different widths. */
static int same_doubles(const double *u, const double *v, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (memcmp(&u[i], &v[i], sizeof(double)) != 0 && !(isnan(u[i]) && isnan(v[i]))) return 0;
  return 1;
}

/* Bitwise comparison of two runs (NaNs equal). */
static int same_bits(const run_buf *r, const run_buf *s, int64_t B, int m, int n) {
  return same_doubles(r->y, s->y, B * m) && same_doubles(r->J, s->J, B * m * n) &&
         memcmp(r->st, s->st, sizeof(int32_t) * (size_t)B) == 0;
}

/* ---- checks ---------------------------------------------------------------------------------------- */
static const char *flag_names(int32_t f, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s%s%s%s", f ? "" : "-", (f & DUAL_PT_NAN) ? "NAN " : "",
           (f & DUAL_PT_INF) ? "INF " : "", (f & DUAL_PT_DOMAIN) ? "DOMAIN " : "",
           (f & DUAL_PT_SINGULAR) ? "SINGULAR " : "", (f & DUAL_PT_BAD_INPUT) ? "BAD_INPUT" : "");
  return buf;
}

/* Flags of one point against what the reference says.  With derivatives (J != NULL) a singular
 * point sets DUAL_PT_SINGULAR; values only (eval) never do (no derivative, no singularity). */
static void check_flags(op_stats *s, int op, const point_ref *pr, double y, const double *J, int n,
                        int32_t st, const char *mode) {
  char pbuf[160], f1[40], f2[40], f3[40];
  int want_nan = isnan(y), want_inf = isinf(y);
  for (int j = 0; j < n; ++j) want_nan |= isnan(J[j]) != 0, want_inf |= isinf(J[j]) != 0;
  int32_t must = 0, must_not = 0;
  *(want_nan ? &must : &must_not) |= DUAL_PT_NAN;
  *(want_inf ? &must : &must_not) |= DUAL_PT_INF;
  *(pr->finite ? &must_not : &must) |= DUAL_PT_BAD_INPUT;
  if (pr->finite) {
    *(pr->domain ? &must : &must_not) |= DUAL_PT_DOMAIN;
    *(pr->singular && J != NULL ? &must : &must_not) |= DUAL_PT_SINGULAR;
  }
  if ((st & must) != must || (st & must_not) != 0)
    failf(s, "%s flags at %s: got %s; missing %s; unexpected %s", mode,
          pt_str(pr->x, OPS[op].arity, pbuf, sizeof pbuf), flag_names(st, f1, sizeof f1),
          flag_names(must & ~st, f2, sizeof f2), flag_names(st & must_not, f3, sizeof f3));
}

static void check_value(op_stats *s, int op, const point_ref *pr, double y) {
  char pbuf[160];
  double want = (double)pr->value;
  uint64_t u = ulp_distance(y, want);
  if (pr->finite && u > s->worst_ulp && u != UINT64_MAX) {
    s->worst_ulp = u;
    memcpy(s->ulp_at, pr->x, sizeof s->ulp_at);
  }
  if (u > (uint64_t)value_ulps(op))
    failf(s, "value at %s: got %.17g, want %.17g (%llu ulp > %d)",
          pt_str(pr->x, OPS[op].arity, pbuf, sizeof pbuf), y, want, (unsigned long long)u,
          value_ulps(op));
}

/* Partial `which` of one point, got g, in a run where `st` is the point's flag word. */
static void check_partial(op_stats *s, int op, const point_ref *pr, int which, double g,
                          int32_t st, int mask) {
  char pbuf[160];
  const char *pt = pt_str(pr->x, OPS[op].arity, pbuf, sizeof pbuf);
  if (!pr->finite || pr->domain) return; /* flags only */
  switch (pr->rc[which]) {
  case QREF_OK: {
    Q d = pr->d[which], diff = fabsq((Q)g - d);
    double want = (double)d, rtol = deriv_rtol(op);
    if (isnan(g) && pr->singular) { /* NaN from inf*0 at a flagged singular point */
      s->n_poisoned++;
      return;
    }
    if (isinf(want)) { /* the true partial overflows the double range */
      if (g != want) failf(s, "d/d%c at %s (mask %d): got %.17g, want %g", 'a' + which, pt, mask, g, want);
      return;
    }
    Q tol = (Q)rtol * fabsq(d) + 2 * pr->err[which] + (Q)DERIV_ATOL;
    /* an exactly zero partial is judged against a unit scale */
    if (pr->err[which] > (Q)(REF_MARGIN * rtol) * (d != 0 ? fabsq(d) : (Q)1) + (Q)DERIV_ATOL) {
      s->n_weak++;
      if (getenv("DUAL_CONFORMANCE_VERBOSE"))
        cr_log_info("%s: weak reference for d/d%c at %s: %.3g +- %.3g", s->op, 'a' + which, pt,
                    (double)d, (double)pr->err[which]);
    }
    if (fabsq(d) > (Q)DERIV_ATOL) {
      double rel = (double)(diff / fabsq(d));
      if (!isnan(rel) && rel > s->worst_rel) {
        s->worst_rel = rel, s->rel_which = which;
        memcpy(s->rel_at, pr->x, sizeof s->rel_at);
      }
    }
    if (!(diff <= tol))
      failf(s, "d/d%c at %s (mask %d): got %.17g, want %.17g (rel err %.3g > %.1g)", 'a' + which,
            pt, mask, g, want, (double)(diff / fabsq(d)), rtol);
    return;
  }
  case QREF_NOT_SMOOTH: {
    conv cv = pr->cv[which];
    s->n_conv++;
    if (cv.kind == CONV_EXACT && !(g == cv.v))
      failf(s, "d/d%c at the kink %s (mask %d): got %.17g, the documented convention is %.17g",
            'a' + which, pt, mask, g, cv.v);
    else if (cv.kind == CONV_NONFINITE && (isfinite(g) || !(st & DUAL_PT_SINGULAR)))
      failf(s, "d/d%c at the singular point %s (mask %d): got %.17g (SINGULAR %s); want a "
            "non-finite partial and DUAL_PT_SINGULAR", 'a' + which, pt, mask, g,
            (st & DUAL_PT_SINGULAR) ? "set" : "not set");
    else if (cv.kind == CONV_NAN && !isnan(g))
      failf(s, "d/d%c at %s (mask %d): got %.17g, documented NaN", 'a' + which, pt, mask, g);
    else if (cv.kind == CONV_NONE)
      failf(s, "d/d%c at %s: no two-sided derivative and no documented convention (reference: "
            "finite %d, domain %d, value %.17g)", 'a' + which, pt, pr->finite, pr->domain,
            (double)pr->value);
    return;
  }
  default:
    failf(s, "d/d%c at %s: the reference cannot resolve this point (rc %d): fix the domain table",
          'a' + which, pt, pr->rc[which]);
  }
}

/* ---- the per-op test ----------------------------------------------------------------------------- */
static void print_header(void) {
  fprintf(stderr, "\n%-9s %-9s %6s %7s %-44s %10s %-3s %-44s %5s %5s %5s\n", "op", "spelling",
          "points", "max ulp", "at", "max rel d", "d/", "at", "kinks", "nan*0", "weak");
}

static void print_row(const op_stats *s, int op) {
  char p1[160], p2[160], w[4] = "-";
  int ar = OPS[op].arity;
  if (s->worst_rel > 0) snprintf(w, sizeof w, "d%c", 'a' + s->rel_which);
  fprintf(stderr, "%-9s %-9s %6d %7llu %-44s %10.3g %-3s %-44s %5d %5d %5d%s\n", OPS[op].name,
          OPS[op].spelling[0] ? OPS[op].spelling : "(int)", s->n_points,
          (unsigned long long)s->worst_ulp, s->worst_ulp ? pt_str(s->ulp_at, ar, p1, sizeof p1) : "-",
          s->worst_rel, w, s->worst_rel > 0 ? pt_str(s->rel_at, ar, p2, sizeof p2) : "-", s->n_conv,
          s->n_poisoned, s->n_weak, s->n_fail ? "  FAIL" : "");
}

static uint64_t op_seed(int op) {
  const char *env = getenv("DUAL_CONFORMANCE_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : 20240601u;
  return seed * 0x100000001B3ull + (uint64_t)op * 0x9E3779B97F4A7C15ull;
}

static point_ref *make_points(int op, int64_t *count) {
  static const double e1[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                              1e-300, -1e-300, DBL_MIN, 4.9e-324, -4.9e-324, 0.75, 10.0, -10.0, 100.0};
  static const double e2[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                              1e-300, -1e-300, 10.0};
  static const double e3[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0};
  static const double bad[] = {NAN, INFINITY, -INFINITY};
  const int ar = OPS[op].arity;
  const double *e = (ar == 1) ? e1 : (ar == 2) ? e2 : e3;
  const int ne = (ar == 1) ? (int)(sizeof e1 / sizeof e1[0])
                 : (ar == 2) ? (int)(sizeof e2 / sizeof e2[0]) : (int)(sizeof e3 / sizeof e3[0]);
  int64_t n_edge = 1;
  for (int i = 0; i < ar; ++i) n_edge *= ne;
  int64_t B = N_RANDOM + n_edge + 3 * ar;
  point_ref *pts = calloc((size_t)B, sizeof *pts);
  cr_assert(pts);
  rng r = {op_seed(op)};
  int64_t q = 0;
  for (int i = 0; i < N_RANDOM; ++i, ++q) {
    cr_assert(sample_point(op, &r, pts[q].x), "op %s has no domain in sample_point(): add one",
              OPS[op].name);
    pts[q].kind = PT_RANDOM;
  }
  for (int64_t i = 0; i < n_edge; ++i, ++q) {
    int64_t t = i;
    for (int j = 0; j < ar; ++j) pts[q].x[j] = e[t % ne], t /= ne;
    pts[q].kind = PT_EDGE;
  }
  for (int j = 0; j < ar; ++j)
    for (int t = 0; t < 3; ++t, ++q) {
      for (int i = 0; i < ar; ++i) pts[q].x[i] = 0.5;
      pts[q].x[j] = bad[t];
      pts[q].kind = PT_BAD;
    }
  for (int64_t i = 0; i < B; ++i) make_ref(op, ar, &pts[i]);
  *count = B;
  return pts;
}

/* Evaluate op with the arguments in `mask` active and check everything; y_all holds the values
 * of the first (all-active) run, which every other run must reproduce bitwise. */
static void run_mask(dual_context *ctx, op_stats *s, int op, const point_ref *pts, int64_t B,
                     int mask, double *y_all) {
  const int ar = OPS[op].arity;
  int n = 0, np = 0, col[3];
  for (int i = 0; i < ar; ++i) col[i] = (mask & (1 << i)) ? n++ : -1;
  np = ar - n;
  double *x = calloc((size_t)(B * n) + 1, sizeof(double));
  double *p = calloc((size_t)(B * np) + 1, sizeof(double));
  cr_assert(x && p);
  for (int64_t q = 0; q < B; ++q) {
    int ix = 0, ip = 0;
    for (int i = 0; i < ar; ++i) {
      if (col[i] >= 0) x[q * n + ix++] = pts[q].x[i];
      else p[q * np + ip++] = pts[q].x[i];
    }
  }
  dual_program *prog = build_op(ctx, op, mask);

  /* every width, then automatic width on one thread: bitwise identical */
  run_buf base = run_alloc(B, 1, n), other = run_alloc(B, 1, n);
  for (int w = 0; w < N_WIDTHS; ++w) {
    cr_assert_eq(dual_context_set_width(ctx, WIDTHS[w]), DUAL_SUCCESS);
    jacobian(ctx, prog, B, x, n, p, np, 1, w == 0 ? &base : &other);
    if (w > 0 && !same_bits(&base, &other, B, 1, n))
      failf(s, "mask %d: width %d differs bitwise from width 1", mask, WIDTHS[w]);
  }
  cr_assert_eq(dual_context_set_width(ctx, 0), DUAL_SUCCESS);
  cr_assert_eq(dual_context_set_threads(ctx, 1), DUAL_SUCCESS);
  jacobian(ctx, prog, B, x, n, p, np, 1, &other);
  if (!same_bits(&base, &other, B, 1, n))
    failf(s, "mask %d: automatic width on one thread differs bitwise from width 1", mask);
  cr_assert_eq(dual_context_set_threads(ctx, 0), DUAL_SUCCESS);

  /* values only: the same values, flags without derivatives */
  double *ye = calloc((size_t)B + 1, sizeof(double));
  int32_t *se = calloc((size_t)B + 1, sizeof(int32_t));
  cr_assert(ye && se);
  cr_assert_eq(dual_eval(ctx, prog, B, n ? x : NULL, n > 0 ? n : 1, np ? p : NULL, np > 0 ? np : 1,
                         ye, 1, se), DUAL_SUCCESS, "dual_eval: %s", dual_context_last_error(ctx));
  if (memcmp(ye, base.y, sizeof(double) * (size_t)B) != 0)
    failf(s, "mask %d: dual_eval values differ bitwise from dual_jacobian values", mask);
  if (mask == (1 << ar) - 1) memcpy(y_all, base.y, sizeof(double) * (size_t)B);
  else if (memcmp(y_all, base.y, sizeof(double) * (size_t)B) != 0)
    failf(s, "mask %d: values differ bitwise from the all-active program", mask);

  /* reverse mode: the op's adjoint rule (ops.def "adj") against the same reference */
  run_buf rev = run_alloc(B, 1, n);
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_REVERSE), DUAL_SUCCESS);
  jacobian(ctx, prog, B, x, n, p, np, 1, &rev);
  cr_assert_eq(dual_context_last_ad_mode(ctx), DUAL_AD_REVERSE);
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_AUTO), DUAL_SUCCESS);

  for (int64_t q = 0; q < B; ++q) {
    const point_ref *pr = &pts[q];
    const double *J = base.J + q * n, *JR = rev.J + q * n;
    if (mask == (1 << ar) - 1) check_value(s, op, pr, base.y[q]);
    check_flags(s, op, pr, base.y[q], J, n, base.st[q], "jacobian");
    check_flags(s, op, pr, rev.y[q], JR, n, rev.st[q], "reverse jacobian");
    check_flags(s, op, pr, ye[q], NULL, 0, se[q], "eval");
    for (int i = 0; i < ar; ++i)
      if (col[i] >= 0) {
        check_partial(s, op, pr, i, J[col[i]], base.st[q], mask);
        check_partial(s, op, pr, i, JR[col[i]], rev.st[q], mask);
      }
  }
  if (memcmp(rev.y, base.y, sizeof(double) * (size_t)B) != 0)
    failf(s, "mask %d: reverse-mode values differ bitwise from forward mode", mask);
  free(ye), free(se), free(x), free(p);
  run_free(&base), run_free(&other), run_free(&rev);
  dual_program_destroy(&prog);
}

/* The builder folds an op on constants with the same rule the engines run: the folded value
 * must equal the engine's bitwise.  Checked on the first N_FOLD random points whose value is
 * finite (the builder refuses to fold the others). */
#define N_FOLD 24
static void check_folding(dual_context *ctx, op_stats *s, int op, const point_ref *pts,
                          const double *y_all) {
  char pbuf[160];
  int done = 0;
  for (int q = 0; q < N_RANDOM && done < N_FOLD; ++q) {
    if (!isfinite(y_all[q]) || pts[q].domain) continue;
    dual_builder *b = NULL;
    dual_program *prog = NULL;
    int32_t ids[3], y;
    double v = NAN;
    cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
    for (int i = 0; i < OPS[op].arity; ++i) dual_builder_constant(b, pts[q].x[i], &ids[i]);
    dual_builder_apply(b, OPS[op].spelling, OPS[op].arity, ids, &y);
    dual_builder_output(b, "y", y);
    int st = dual_builder_finish(b, &prog);
    dual_builder_destroy(&b);
    if (st != DUAL_SUCCESS) {
      failf(s, "folding at %s: the builder failed: %s", pt_str(pts[q].x, OPS[op].arity, pbuf, sizeof pbuf),
            dual_context_last_error(ctx));
      continue;
    }
    cr_assert_eq(dual_eval(ctx, prog, 1, NULL, 1, NULL, 1, &v, 1, NULL), DUAL_SUCCESS);
    if (memcmp(&v, &y_all[q], sizeof v) != 0)
      failf(s, "folding at %s: folded %.17g, engine %.17g", pt_str(pts[q].x, OPS[op].arity, pbuf, sizeof pbuf),
            v, y_all[q]);
    dual_program_destroy(&prog);
    ++done;
  }
}

/* LDX / LDP / LDK / OUT: y = (x, p, k...) straight from the leaves. */
static void check_internal(int op, op_stats *s) {
  static const double ks[] = {2.5, -0.0, 4.9e-324, DBL_MAX, -1e300};
  enum { NK = (int)(sizeof ks / sizeof ks[0]), M = 3 + NK };
  dual_context *ctx = new_context();
  dual_builder *b = NULL;
  dual_program *prog = NULL;
  int32_t ix, ip, ik;
  cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
  dual_builder_input(b, "x", &ix);
  dual_builder_param(b, "p", &ip);
  dual_builder_output(b, "x", ix);
  dual_builder_output(b, "p", ip);
  dual_builder_output(b, "x2", ix);
  for (int i = 0; i < NK; ++i) {
    dual_builder_constant(b, ks[i], &ik);
    dual_builder_output(b, "k", ik);
  }
  int st = dual_builder_finish(b, &prog);
  dual_builder_destroy(&b);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));

  rng r = {op_seed(op)};
  const int64_t B = N_RANDOM;
  double *x = malloc(sizeof(double) * B), *p = malloc(sizeof(double) * B);
  cr_assert(x && p);
  static const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 4.9e-324, DBL_MAX};
  for (int64_t q = 0; q < B; ++q) {
    x[q] = (q < 7) ? special[q] : slogu(&r, 1e-300, 1e300);
    p[q] = (q >= 7 && q < 14) ? special[q - 7] : slogu(&r, 1e-300, 1e300);
  }
  run_buf base = run_alloc(B, M, 1), other = run_alloc(B, M, 1);
  for (int w = 0; w < N_WIDTHS; ++w) {
    cr_assert_eq(dual_context_set_width(ctx, WIDTHS[w]), DUAL_SUCCESS);
    jacobian(ctx, prog, B, x, 1, p, 1, M, w == 0 ? &base : &other);
    if (w > 0 && !same_bits(&base, &other, B, M, 1))
      failf(s, "width %d differs bitwise from width 1", WIDTHS[w]);
  }
  char fb[80];
  for (int64_t q = 0; q < B; ++q) {
    const double *y = base.y + q * M, *J = base.J + q * M;
    double want[M], dwant[M];
    Q v;
    quad_ref_value(DUAL_OP_LDX, x[q], 0, 0, &v), want[0] = want[2] = (double)v;
    quad_ref_value(DUAL_OP_LDP, p[q], 0, 0, &v), want[1] = (double)v;
    for (int i = 0; i < NK; ++i) quad_ref_value(DUAL_OP_LDK, ks[i], 0, 0, &v), want[3 + i] = (double)v;
    Q d;
    quad_ref_partial(DUAL_OP_LDX, x[q], 0, 0, 0, &d), dwant[0] = dwant[2] = (double)d;
    quad_ref_partial(DUAL_OP_LDP, p[q], 0, 0, 0, &d), dwant[1] = (double)d;
    for (int i = 0; i < NK; ++i) quad_ref_partial(DUAL_OP_LDK, ks[i], 0, 0, 0, &d), dwant[3 + i] = (double)d;
    s->n_points++;
    for (int i = 0; i < M; ++i) {
      if (memcmp(&y[i], &want[i], sizeof(double)) != 0 && !(isnan(y[i]) && isnan(want[i])))
        failf(s, "output %d at x=%g p=%g: got %.17g, want %.17g", i, x[q], p[q], y[i], want[i]);
      if (!(J[i] == dwant[i]))
        failf(s, "dy%d/dx at x=%g p=%g: got %.17g, want %g", i, x[q], p[q], J[i], dwant[i]);
    }
    int32_t must = (isfinite(x[q]) && isfinite(p[q])) ? 0 : DUAL_PT_BAD_INPUT;
    must |= (isnan(x[q]) || isnan(p[q])) ? DUAL_PT_NAN : 0;
    must |= (isinf(x[q]) || isinf(p[q])) ? DUAL_PT_INF : 0;
    if (base.st[q] != must)
      failf(s, "flags at x=%g p=%g: got %s, want %s", x[q], p[q],
            flag_names(base.st[q], fb, 40), flag_names(must, fb + 40, 40));
  }
  free(x), free(p);
  run_free(&base), run_free(&other);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

/* RNORM / RUNIF: a program y = (w, x * w + w) of a draw w, evaluated in forward mode at every
 * width and in reverse mode under two seeds: y0 is the generator's value for (seed, point,
 * sample 0, draw 0) (dual/random.h, itself checked against Philox's published known answers in
 * test_random.c), the derivative dy1/dx = w, and the draw carries no derivative. */
static void check_draws(int op, op_stats *s) {
  dual_context *ctx = new_context();
  dual_builder *b = NULL;
  dual_program *prog = NULL;
  int32_t ix, iw, t[2];
  cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
  dual_builder_input(b, "x", &ix);
  cr_assert_eq(op == DUAL_OP_RNORM ? dual_builder_normal(b, &iw) : dual_builder_uniform(b, &iw), DUAL_SUCCESS);
  dual_builder_output(b, "w", iw);
  const int32_t xw[2] = {ix, iw};
  dual_builder_apply(b, "*", 2, xw, &t[0]);
  t[1] = iw;
  dual_builder_apply(b, "+", 2, t, &t[0]);
  dual_builder_output(b, "xw", t[0]);
  int st = dual_builder_finish(b, &prog);
  dual_builder_destroy(&b);
  cr_assert_eq(st, DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
  cr_assert_eq(dual_program_num_draws(prog), 1);
  rng r = {op_seed(op)};
  const int64_t B = N_RANDOM;
  double *x = malloc(sizeof(double) * B);
  cr_assert(x);
  for (int64_t q = 0; q < B; ++q) x[q] = unif(&r, -10, 10);
  static const uint64_t seeds[2] = {0, 0x9e3779b97f4a7c15ULL};
  run_buf base = run_alloc(B, 2, 1), other = run_alloc(B, 2, 1);
  for (int k = 0; k < 2; ++k) {
    cr_assert_eq(dual_context_set_seed(ctx, seeds[k]), DUAL_SUCCESS);
    for (int w = 0; w <= N_WIDTHS; ++w) { /* every width, then reverse mode */
      cr_assert_eq(dual_context_set_ad_mode(ctx, w < N_WIDTHS ? DUAL_AD_FORWARD : DUAL_AD_REVERSE), DUAL_SUCCESS);
      if (w < N_WIDTHS) cr_assert_eq(dual_context_set_width(ctx, WIDTHS[w]), DUAL_SUCCESS);
      jacobian(ctx, prog, B, x, 1, NULL, 0, 2, w == 0 ? &base : &other);
      if (w > 0 && !same_bits(&base, &other, B, 2, 1))
        failf(s, "seed %d: %s differs bitwise from width 1", k, w < N_WIDTHS ? "a width" : "reverse mode");
    }
    for (int64_t q = 0; q < B; ++q) {
      const double want = op == DUAL_OP_RNORM ? dual_draw_normal(seeds[k], q, 0, 0)
                                              : dual_draw_uniform(seeds[k], q, 0, 0);
      s->n_points++;
      if (base.y[q * 2] != want)
        failf(s, "seed %d point %lld: draw %.17g, want %.17g", k, (long long)q, base.y[q * 2], want);
      if (base.J[q * 2] != 0.0 || base.J[q * 2 + 1] != want)
        failf(s, "seed %d point %lld: derivatives %g, %g, want 0, %.17g", k, (long long)q,
              base.J[q * 2], base.J[q * 2 + 1], want);
    }
  }
  cr_assert_eq(dual_context_set_ad_mode(ctx, DUAL_AD_AUTO), DUAL_SUCCESS);
  free(x);
  run_free(&base), run_free(&other);
  dual_program_destroy(&prog);
  dual_context_destroy(&ctx);
}

static void check_op(int op) {
  op_stats s;
  memset(&s, 0, sizeof s);
  s.op = OPS[op].name;
  Q probe;
  cr_assert(quad_ref_value(op, 0.5, 0.5, 0.5, &probe),
            "op %s has no quad reference: add it to tests/ref/quad_ref.c", OPS[op].name);
  if (op == DUAL_OP_RNORM || op == DUAL_OP_RUNIF) {
    check_draws(op, &s);
  } else if (OPS[op].spelling[0] == '\0') {
    check_internal(op, &s);
  } else {
    int64_t B;
    point_ref *pts = make_points(op, &B);
    s.n_points = (int)B;
    double *y_all = calloc((size_t)B, sizeof(double));
    cr_assert(y_all);
    dual_context *ctx = new_context();
    for (int mask = (1 << OPS[op].arity) - 1; mask > 0; --mask) run_mask(ctx, &s, op, pts, B, mask, y_all);
    check_folding(ctx, &s, op, pts, y_all);
    dual_context_destroy(&ctx);
    free(y_all);
    free(pts);
  }
  print_row(&s, op);
  cr_assert_eq(s.n_fail, 0, "%s ('%s'): %d conformance failures (the first %d are logged above)",
               OPS[op].name, OPS[op].spelling, s.n_fail, MAX_LOGGED);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  print_header();
}

/* The adjoint rule every op must have: the transpose of its tangent rule (ops.def). */
static int expected_adj(int op) {
  switch (dual_op_table[op].prop) {
  case DUAL_PROP_LOAD: return op == DUAL_OP_LDX ? DUAL_ADJ_GRAD : DUAL_ADJ_NONE;
  case DUAL_PROP_OUT: return DUAL_ADJ_SEED;
  case DUAL_PROP_LIN:
  case DUAL_PROP_MUL: return DUAL_ADJ_LIN;
  case DUAL_PROP_ADD: return DUAL_ADJ_ADD;
  case DUAL_PROP_SUB: return DUAL_ADJ_SUB;
  case DUAL_PROP_NEG: return DUAL_ADJ_NEG;
  case DUAL_PROP_CHOOSE: return DUAL_ADJ_CHOOSE;
  case DUAL_PROP_NONE: return DUAL_ADJ_NONE;
  default: return DUAL_ADJ_MISSING;
  }
}

/* Every op of the table has a reference, a domain, (public ones) a builder spelling, and an
 * adjoint rule. */
Test(conformance, table_is_covered) {
  for (int op = 0; op < DUAL_OP_COUNT; ++op) {
    Q v;
    double x[3];
    rng r = {1};
    cr_expect(quad_ref_value(op, 0.5, 0.5, 0.5, &v), "%s has no quad reference", OPS[op].name);
    cr_expect(dual_op_table[op].adj == expected_adj(op), "%s: its adjoint rule (ops.def adj) is "
              "not the transpose of its tangent rule", OPS[op].name);
    if (OPS[op].spelling[0] != '\0') {
      cr_expect(sample_point(op, &r, x), "%s has no domain in sample_point()", OPS[op].name);
      cr_expect_eq(dual_op_by_spelling(OPS[op].spelling), op, "%s: spelling lookup", OPS[op].name);
    }
  }
}

/* One test per op of ops.def. */
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  Test(conformance, name, .timeout = 120) { check_op(DUAL_OP_##name); }
#include "dual/ops.def"
#undef OP

/* ---- the documented conventions, one readable case each ---------------------------------------- */
enum { K_ANY, K_EXACT, K_NAN, K_NONFINITE, K_POSINF, K_NEGINF };
typedef struct expect {
  int kind;
  double v;
} expect;
#define EX(v) {K_EXACT, v}
#define ANY {K_ANY, 0}
#define ISNAN {K_NAN, 0}
#define NONFIN {K_NONFINITE, 0}
#define PINF {K_POSINF, 0}
#define NINF {K_NEGINF, 0}

typedef struct conv_case {
  const char *what, *op;
  int arity;
  double x[3];
  expect value, d[3];
  int32_t must, must_not;
} conv_case;

#define CLEAN (DUAL_PT_NAN | DUAL_PT_INF | DUAL_PT_DOMAIN | DUAL_PT_SINGULAR | DUAL_PT_BAD_INPUT)
#define SING (DUAL_PT_SINGULAR)
#define DOM (DUAL_PT_DOMAIN | DUAL_PT_NAN)
#define NOT_SD (DUAL_PT_SINGULAR | DUAL_PT_DOMAIN)

static const conv_case CASES[] = {
  /* kinks take the documented side */
  {"d|x|/dx at 0 is 0", "abs", 1, {0.0}, EX(0), {EX(0)}, 0, CLEAN},
  {"d|x|/dx at -0 is 0", "abs", 1, {-0.0}, EX(0), {EX(0)}, 0, CLEAN},
  {"relu'(0) = 0", "relu", 1, {0.0}, EX(0), {EX(0)}, 0, CLEAN},
  {"relu'(-0) = 0", "relu", 1, {-0.0}, EX(0), {EX(0)}, 0, CLEAN},
  {"hypot has slope 0 at the origin", "hypot", 2, {0.0, 0.0}, EX(0), {EX(0), EX(0)}, 0, CLEAN},
  {"hypot(a, 0) = |a| has slope sign(a)", "hypot", 2, {-2.0, 0.0}, EX(2), {EX(-1), EX(0)}, 0, CLEAN},
  {"min(a, a) takes a's tangent", "min", 2, {1.5, 1.5}, EX(1.5), {EX(1), EX(0)}, 0, CLEAN},
  {"max(a, a) takes a's tangent", "max", 2, {1.5, 1.5}, EX(1.5), {EX(1), EX(0)}, 0, CLEAN},
  {"min(-0, 0) is a tie: a's tangent", "min", 2, {-0.0, 0.0}, EX(-0.0), {EX(1), EX(0)}, 0, CLEAN},
  {"min: NaN wins with its tangent (a)", "min", 2, {NAN, 1.0}, ISNAN, {EX(1), EX(0)},
   DUAL_PT_NAN | DUAL_PT_BAD_INPUT, 0},
  {"min: NaN wins with its tangent (b)", "min", 2, {1.0, NAN}, ISNAN, {EX(0), EX(1)},
   DUAL_PT_NAN | DUAL_PT_BAD_INPUT, 0},
  {"max: NaN wins with its tangent (b)", "max", 2, {1.0, NAN}, ISNAN, {EX(0), EX(1)},
   DUAL_PT_NAN | DUAL_PT_BAD_INPUT, 0},
  {"select: false branch, condition partial 0", "select", 3, {0.0, 2.0, 3.0}, EX(3),
   {EX(0), EX(0), EX(1)}, 0, CLEAN},
  {"select: -0 is false", "select", 3, {-0.0, 2.0, 3.0}, EX(3), {EX(0), EX(0), EX(1)}, 0, CLEAN},
  {"select: a subnormal is true", "select", 3, {4.9e-324, 2.0, 3.0}, EX(2), {EX(0), EX(1), EX(0)},
   0, CLEAN},
  {"select: NaN is true (as in C)", "select", 3, {NAN, 2.0, 3.0}, EX(2), {EX(0), EX(1), EX(0)},
   DUAL_PT_BAD_INPUT, DUAL_PT_NAN},
  {"atan2 across the cut: the synopsis slope b/(a^2+b^2)", "atan2", 2, {-0.0, -2.0},
   EX(-3.141592653589793), {EX(-0.5), EX(0)}, 0, CLEAN},
  {"pow(0, 0) = 1 with slope 0 in a; d/db has no limit: NaN", "pow", 2, {0.0, 0.0}, EX(1),
   {EX(0), ISNAN}, DUAL_PT_NAN, 0},
  {"pow(0, b > 1): the right-side slope 0", "pow", 2, {0.0, 1.5}, EX(0), {EX(0), EX(0)}, 0, CLEAN},
  {"pow(-2, 3) = -8: d/da = 12, d/db NaN (negative base)", "pow", 2, {-2.0, 3.0}, EX(-8),
   {EX(12), ISNAN}, DUAL_PT_NAN, NOT_SD},
  /* singular points: a non-finite partial and DUAL_PT_SINGULAR */
  {"sqrt'(0)", "sqrt", 1, {0.0}, EX(0), {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"sqrt'(-0)", "sqrt", 1, {-0.0}, EX(-0.0), {NONFIN}, SING, DUAL_PT_DOMAIN},
  {"cbrt'(0)", "cbrt", 1, {0.0}, EX(0), {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"log'(0)", "log", 1, {0.0}, NINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"log2'(0)", "log2", 1, {0.0}, NINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"log10'(0)", "log10", 1, {0.0}, NINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"log1p'(-1)", "log1p", 1, {-1.0}, NINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"asin'(1)", "asin", 1, {1.0}, EX(1.5707963267948966), {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"asin'(-1)", "asin", 1, {-1.0}, EX(-1.5707963267948966), {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"acos'(1)", "acos", 1, {1.0}, EX(0), {NINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"acos'(-1)", "acos", 1, {-1.0}, EX(3.141592653589793), {NINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"acosh'(1)", "acosh", 1, {1.0}, EX(0), {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"atanh'(1)", "atanh", 1, {1.0}, PINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"atanh'(-1)", "atanh", 1, {-1.0}, NINF, {PINF}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"pow(0, 0.5): d/da", "pow", 2, {0.0, 0.5}, EX(0), {PINF, ANY}, SING, DUAL_PT_DOMAIN},
  {"pow(0, -1): the pole", "pow", 2, {0.0, -1.0}, PINF, {NONFIN, ANY}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"1/0: the pole", "/", 2, {1.0, 0.0}, PINF, {NONFIN, NONFIN}, SING | DUAL_PT_INF, DUAL_PT_DOMAIN},
  {"atan2(0, 0): no derivative", "atan2", 2, {0.0, 0.0}, EX(0), {ISNAN, ISNAN}, SING | DUAL_PT_NAN,
   DUAL_PT_DOMAIN},
  /* outside the domain: NaN and DUAL_PT_DOMAIN */
  {"log(-1)", "log", 1, {-1.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"log2(-1)", "log2", 1, {-1.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"log10(-1)", "log10", 1, {-1.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"log1p(-2)", "log1p", 1, {-2.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"sqrt(-1)", "sqrt", 1, {-1.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"asin(2)", "asin", 1, {2.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"acos(-2)", "acos", 1, {-2.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"acosh(0.5)", "acosh", 1, {0.5}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"atanh(2)", "atanh", 1, {2.0}, ISNAN, {ANY}, DOM, DUAL_PT_BAD_INPUT},
  {"pow(-2, 0.5)", "pow", 2, {-2.0, 0.5}, ISNAN, {ANY, ANY}, DOM, DUAL_PT_BAD_INPUT},
  /* piecewise-constant ops: exactly zero derivative */
  {"floor'(2.5) = 0", "floor", 1, {2.5}, EX(2), {EX(0)}, 0, CLEAN},
  {"floor'(2) = 0 at the jump", "floor", 1, {2.0}, EX(2), {EX(0)}, 0, CLEAN},
  {"ceil'(-2.5) = 0", "ceil", 1, {-2.5}, EX(-2), {EX(0)}, 0, CLEAN},
  {"ceil'(3) = 0 at the jump", "ceil", 1, {3.0}, EX(3), {EX(0)}, 0, CLEAN},
  {"sign'(0) = 0", "sign", 1, {0.0}, EX(0), {EX(0)}, 0, CLEAN},
  {"sign'(-3) = 0", "sign", 1, {-3.0}, EX(-1), {EX(0)}, 0, CLEAN},
  {"< has zero derivative", "<", 2, {1.0, 2.0}, EX(1), {EX(0), EX(0)}, 0, CLEAN},
  {"<= at a tie", "<=", 2, {2.0, 2.0}, EX(1), {EX(0), EX(0)}, 0, CLEAN},
  {"> at a tie", ">", 2, {2.0, 2.0}, EX(0), {EX(0), EX(0)}, 0, CLEAN},
  {">= has zero derivative", ">=", 2, {1.0, 2.0}, EX(0), {EX(0), EX(0)}, 0, CLEAN},
  {"== on -0 and 0", "==", 2, {-0.0, 0.0}, EX(1), {EX(0), EX(0)}, 0, CLEAN},
  {"!= has zero derivative", "!=", 2, {1.0, 2.0}, EX(1), {EX(0), EX(0)}, 0, CLEAN},
  {"&&", "&&", 2, {3.0, 0.0}, EX(0), {EX(0), EX(0)}, 0, CLEAN},
  {"||", "||", 2, {0.0, -0.5}, EX(1), {EX(0), EX(0)}, 0, CLEAN},
  {"!", "!", 1, {0.0}, EX(1), {EX(0)}, 0, CLEAN},
  /* non-finite inputs */
  {"sin(NaN)", "sin", 1, {NAN}, ISNAN, {ANY}, DUAL_PT_BAD_INPUT | DUAL_PT_NAN, 0},
  {"exp(inf)", "exp", 1, {INFINITY}, PINF, {PINF}, DUAL_PT_BAD_INPUT | DUAL_PT_INF, DUAL_PT_NAN},
  {"1 + -inf", "+", 2, {1.0, -INFINITY}, NINF, {EX(1), EX(1)}, DUAL_PT_BAD_INPUT | DUAL_PT_INF,
   DUAL_PT_NAN},
  {"fma(2, 3, NaN)", "fma", 3, {2.0, 3.0, NAN}, ISNAN, {EX(3), EX(2), EX(1)},
   DUAL_PT_BAD_INPUT | DUAL_PT_NAN, 0},
  /* overflow of a finite computation: INF only */
  {"exp(710) overflows", "exp", 1, {710.0}, PINF, {PINF}, DUAL_PT_INF, NOT_SD | DUAL_PT_NAN},
};

static int matches(expect e, double v) {
  switch (e.kind) {
  case K_EXACT: return v == e.v && signbit(v) == signbit(e.v);
  case K_NAN: return isnan(v);
  case K_NONFINITE: return !isfinite(v);
  case K_POSINF: return v == INFINITY;
  case K_NEGINF: return v == -INFINITY;
  default: return 1;
  }
}

static const char *expect_str(expect e, char *buf, size_t cap) {
  static const char *names[] = {"anything", "", "NaN", "non-finite", "+inf", "-inf"};
  if (e.kind == K_EXACT) snprintf(buf, cap, "%.17g", e.v);
  else snprintf(buf, cap, "%s", names[e.kind]);
  return buf;
}

/* Each case with every operand an active input, at every width. */
Test(conventions, documented_points) {
  dual_context *ctx = new_context();
  int nfail = 0;
  for (size_t t = 0; t < sizeof CASES / sizeof CASES[0]; ++t) {
    const conv_case *c = &CASES[t];
    int op = dual_op_by_spelling(c->op);
    cr_assert(op >= 0 && OPS[op].arity == c->arity, "case '%s': bad op %s", c->what, c->op);
    dual_program *prog = build_op(ctx, op, (1 << c->arity) - 1);
    for (int w = 0; w < N_WIDTHS; ++w) {
      double y = 0, J[3] = {0, 0, 0};
      int32_t st = 0;
      char b1[64], b2[64], f1[40], f2[40];
      cr_assert_eq(dual_context_set_width(ctx, WIDTHS[w]), DUAL_SUCCESS);
      cr_assert_eq(dual_jacobian(ctx, prog, 1, c->x, c->arity, NULL, 1, &y, 1, J, c->arity, &st),
                   DUAL_SUCCESS);
      int ok = matches(c->value, y);
      if (!ok)
        cr_log_error("%s: %s value: got %.17g, want %s", c->what, c->op, y, expect_str(c->value, b1, sizeof b1));
      for (int i = 0; i < c->arity; ++i)
        if (!matches(c->d[i], J[i])) {
          ok = 0;
          cr_log_error("%s: d/d%c (width %d): got %.17g, want %s", c->what, 'a' + i, WIDTHS[w],
                       J[i], expect_str(c->d[i], b1, sizeof b1));
        }
      if ((st & c->must) != c->must || (st & c->must_not) != 0) {
        ok = 0;
        cr_log_error("%s: flags %s; must have %s, must not have %s", c->what,
                     flag_names(st, f1, sizeof f1), flag_names(c->must, f2, sizeof f2),
                     flag_names(c->must_not, b2, sizeof b2));
      }
      if (!ok) {
        ++nfail;
        break; /* one report per case */
      }
    }
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
  cr_assert_eq(nfail, 0, "%d of %d documented conventions fail (logged above)", nfail,
               (int)(sizeof CASES / sizeof CASES[0]));
}

/* select takes only the chosen branch's tangent: a singular or NaN tangent in the other branch
 * must not leak (r = select(c, sqrt(x), y) and select(c, y, log(x)), c a parameter). */
Test(conventions, select_ignores_the_unchosen_branch) {
  static const char *inner[] = {"sqrt", "log"};
  dual_context *ctx = new_context();
  for (int v = 0; v < 2; ++v) {
    dual_builder *b = NULL;
    dual_program *prog = NULL;
    int32_t x, y, c, f, r, args[3];
    cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
    dual_builder_input(b, "x", &x);
    dual_builder_input(b, "y", &y);
    dual_builder_param(b, "c", &c);
    dual_builder_apply(b, inner[v], 1, &x, &f);
    args[0] = c, args[1] = (v == 0) ? f : y, args[2] = (v == 0) ? y : f;
    dual_builder_apply(b, "select", 3, args, &r);
    dual_builder_output(b, "r", r);
    cr_assert_eq(dual_builder_finish(b, &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    dual_builder_destroy(&b);
    /* (x, y) and c such that the other branch is chosen, at x = 0 (singular) and x = -1 (NaN) */
    const double xs[4] = {0.0, 2.0, -1.0, 2.0};
    const double cs[2] = {v == 0 ? 0.0 : 1.0, v == 0 ? 0.0 : 1.0};
    for (int w = 0; w < N_WIDTHS; ++w) {
      double yv[2], J[4];
      int32_t st[2];
      cr_assert_eq(dual_context_set_width(ctx, WIDTHS[w]), DUAL_SUCCESS);
      cr_assert_eq(dual_jacobian(ctx, prog, 2, xs, 2, cs, 1, yv, 1, J, 2, st), DUAL_SUCCESS);
      for (int q = 0; q < 2; ++q) {
        cr_expect(yv[q] == 2.0 && J[2 * q] == 0.0 && J[2 * q + 1] == 1.0,
                  "select(c, %s(x), y) at x = %g, width %d: got %g, J = (%g, %g), want 2, (0, 1)",
                  inner[v], xs[2 * q], WIDTHS[w], yv[q], J[2 * q], J[2 * q + 1]);
        cr_expect((st[q] & (DUAL_PT_NAN | DUAL_PT_INF)) == 0,
                  "select(c, %s(x), y) at x = %g: NaN/Inf flagged although the outputs are finite",
                  inner[v], xs[2 * q]);
      }
    }
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* min(x, x) and max(x, x) with the very same operand: slope 1. */
Test(conventions, min_max_of_one_value) {
  static const char *ops[] = {"min", "max"};
  dual_context *ctx = new_context();
  for (int v = 0; v < 2; ++v) {
    dual_builder *b = NULL;
    dual_program *prog = NULL;
    int32_t x, r, args[2];
    cr_assert_eq(dual_builder_create(ctx, &b), DUAL_SUCCESS);
    dual_builder_input(b, "x", &x);
    args[0] = args[1] = x;
    dual_builder_apply(b, ops[v], 2, args, &r);
    dual_builder_output(b, "r", r);
    cr_assert_eq(dual_builder_finish(b, &prog), DUAL_SUCCESS, "%s", dual_context_last_error(ctx));
    dual_builder_destroy(&b);
    double xv = -1.25, yv, J;
    int32_t st;
    cr_assert_eq(dual_jacobian(ctx, prog, 1, &xv, 1, NULL, 1, &yv, 1, &J, 1, &st), DUAL_SUCCESS);
    cr_expect(yv == xv && J == 1.0 && st == 0, "%s(x, x): got %g, slope %g, flags %d", ops[v], yv,
              J, st);
    dual_program_destroy(&prog);
  }
  dual_context_destroy(&ctx);
}

/* The reference itself: its central differences agree with analytic derivatives written in quad
 * (a check of quad_ref.c's step choice and cancellation-free forms, not of the library). */
static Q analytic(int op, Q a, Q b, int which) {
  switch (op) {
  case DUAL_OP_SIN: return cosq(a);
  case DUAL_OP_COS: return -sinq(a);
  case DUAL_OP_TAN: return 1 / (cosq(a) * cosq(a));
  case DUAL_OP_TANH: return 1 / (coshq(a) * coshq(a));
  case DUAL_OP_ERF: return 2 / sqrtq(M_PIq) * expq(-a * a);
  case DUAL_OP_ERFC: return -2 / sqrtq(M_PIq) * expq(-a * a);
  case DUAL_OP_LOG: return 1 / a;
  case DUAL_OP_ASIN: return 1 / sqrtq((1 - a) * (1 + a));
  case DUAL_OP_ACOSH: return 1 / sqrtq((a - 1) * (a + 1));
  case DUAL_OP_ATAN: return 1 / (1 + a * a);
  case DUAL_OP_SIGMOID: return expq(-fabsq(a)) / ((1 + expq(-fabsq(a))) * (1 + expq(-fabsq(a))));
  case DUAL_OP_HYPOT: return (which == 0 ? a : b) / hypotq(a, b);
  case DUAL_OP_ATAN2: return (which == 0 ? b : -a) / (a * a + b * b);
  case DUAL_OP_POW: return (which == 0) ? b * powq(a, b - 1) : powq(a, b) * logq(a);
  case DUAL_OP_EXPM1: return expq(a);
  case DUAL_OP_COSH: return sinhq(a);
  default: return nanq("");
  }
}

Test(reference, agrees_with_analytic_derivatives) {
  static const struct {
    int op;
    double a, b;
    int which;
  } pts[] = {
    {DUAL_OP_SIN, 1.0, 0, 0},      {DUAL_OP_SIN, 1e20, 0, 0},      {DUAL_OP_SIN, 1.5707963267948966, 0, 0},
    {DUAL_OP_COS, 1e-200, 0, 0},   {DUAL_OP_COS, 3.141592653589793, 0, 0},
    {DUAL_OP_TAN, 1.5707963267948966, 0, 0},                       {DUAL_OP_TANH, 30, 0, 0},
    {DUAL_OP_TANH, -5, 0, 0},      {DUAL_OP_ERF, 26, 0, 0},        {DUAL_OP_ERFC, -3, 0, 0},
    {DUAL_OP_LOG, 1e-300, 0, 0},   {DUAL_OP_ASIN, 0.99999999999999989, 0, 0},
    {DUAL_OP_ACOSH, 1.0000000000000002, 0, 0},                     {DUAL_OP_ATAN, 1e200, 0, 0},
    {DUAL_OP_SIGMOID, 700, 0, 0},  {DUAL_OP_SIGMOID, -700, 0, 0},
    {DUAL_OP_HYPOT, 1e-100, 1, 0}, {DUAL_OP_HYPOT, 1e-100, 1, 1},  {DUAL_OP_ATAN2, 1, 1e-100, 0},
    {DUAL_OP_ATAN2, 1e-100, -1, 1}, {DUAL_OP_ATAN2, -3, -1e-5, 1},
    {DUAL_OP_POW, 1.0000000000000002, 1e-3, 1},                    {DUAL_OP_POW, 2, 1e-20, 0},
    {DUAL_OP_POW, 1e-300, 0.9, 0}, {DUAL_OP_POW, 1e-300, -0.9, 0}, {DUAL_OP_EXPM1, -50, 0, 0},
    {DUAL_OP_COSH, 1e-200, 0, 0},  {DUAL_OP_COSH, 700, 0, 0},
  };
  for (size_t i = 0; i < sizeof pts / sizeof pts[0]; ++i) {
    Q d, err, want = analytic(pts[i].op, pts[i].a, pts[i].b, pts[i].which);
    int rc = quad_ref_partial_err(pts[i].op, pts[i].a, pts[i].b, 0, pts[i].which, &d, &err);
    double rel = (double)(fabsq(d - want) / fabsq(want));
    cr_expect(rc == QREF_OK && rel < 1e-20 && err < 1e-16 * fabsq(want),
              "reference d%s/d%c at (%g, %g): rc %d, rel err %.3g, bound %.3g", OPS[pts[i].op].name,
              'a' + pts[i].which, pts[i].a, pts[i].b, rc, rel, (double)(err / fabsq(want)));
  }
}
