/*
 * test_rules2.c — the second-order rules (src/dual/rules.h, dual_rule2_NAME through
 * dual_apply_rule2), one test per op expanded from src/dual/ops.def: on ~1000 random points per
 * op plus an edge grid, every second partial against quad central differences
 * (quad_ref_second_err), the documented conventions at kinks, singular points and outside the
 * domain, and the F_D2AA / F_D2AB / F_D2BB flags (an absent flag: exactly +0.0 at every point; a
 * present one: nonzero somewhere).  Each op prints one row of worst errors (stderr).
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

#include "dual/apply_rule.h"
#include "dual/ops.h"
#include "op_sampling.h"
#include "quad_ref.h"

typedef __float128 Q;

/* ---- tolerances (STYLE.md §9: loosened with derivative order) -------------------------------- */
/* Relative.  A second-order rule composes the first-order result (within test_conformance's
 * 1e-13) with one to three more roundings or one more fn.h call (< 1 ulp each); pow's a^(b-2)
 * and a^(b-1) may carry the rounding of the exponent b-2, b-1 times |log a| (where r / a^k is
 * not a normal number), as its first order does (<= 2e-13 on the sampled domain).  1e-11 leaves
 * a factor 50 over that and is still 10^10 times tighter than a wrong formula (a wrong
 * constant, sign or power is off by O(1)). */
#define RTOL2 1e-11
/* Absolute floor: below DBL_MIN a second partial is subnormal (fewer significant bits), or
 * underflows to 0 through a subnormal first partial (atan'' = -2a d^2 at |a| > 1e103). */
#define ATOL2 DBL_MIN
/* A point is a strong check when the reference's own error bound is below this fraction of the
 * tolerance; weaker points are still checked (with twice their bound added), and counted. */
#define REF_MARGIN 0.1
/* The worst error printed per op is taken over the points whose reference bound is below this
 * (relative): there it is the rule's own error, to a hundredth of an ulp. */
#define REF_SHARP 1e-18

#define N_RANDOM 1000
#define MAX_LOGGED 8 /* failure messages printed per op */

/* ---- the op table, expanded here ------------------------------------------------------------- */
typedef struct op_desc {
  const char *name;
  int arity, flags;
} op_desc;

static const op_desc OPS[DUAL_OP_COUNT] = {
#define OP(name, spelling, arity, prop, adj, flags, synopsis) {#name, arity, flags},
#include "dual/ops.def"
#undef OP
};

/* dd[k] is the second partial across the operands (I2[k], J2[k]); its flag is F_D2AA << k */
static const int I2[3] = {0, 0, 1}, J2[3] = {0, 1, 1};
static const char *const DD_NAME[3] = {"d2/da2", "d2/dadb", "d2/db2"};

/* ---- random points: tests/ref/op_sampling.h ------------------------------------------------- */

/* pow: a^(b-2), a^(b-1), a^b all well inside the double range; includes the zero b log a = -1
 * of d2/da db and bases next to the singular point 0 */
static void sample_pow(rng *r, double x[3]) {
  static const double bs[] = {0, 1, 2, 0.5, -1, -0.5, 3, -2, 1e-300, -1e-300, 1.5, 0.25, 2.5};
  for (;;) {
    double a, b;
    switch (below(r, 7)) {
    case 0: a = logu(r, 1e-3, 1e3), b = unif(r, -50, 50); break;
    case 1: a = logu(r, 1e-300, 1e300), b = unif(r, -1, 1) * fmin(60, 600 / fabs(log(a))); break;
    case 2: a = near(r, 1, sgn(r), 1e-16, 1e-2), b = slogu(r, 1e-3, 1e6); break;
    case 3: a = -logu(r, 1e-3, 1e3), b = (double)(below(r, 61) - 30); break; /* negative base */
    case 4: a = logu(r, 1e-300, 1e-5), b = unif(r, -0.2, 1) * 600 / fabs(log(a)); break;
    case 5: /* next to the zero of d2/da db */
      a = logu(r, 1e-30, 1e30), b = -1 / log(a) * (1 + slogu(r, 1e-15, 1e-2));
      break;
    default: a = logu(r, 1e-5, 1e5), b = pick(r, bs, (int)(sizeof bs / sizeof bs[0])); break;
    }
    double l = fabs(log(fabs(a)));
    if (fabs(b) * l <= 600 && fabs(b - 2) * l <= 600 && isfinite(b)) {
      x[0] = a, x[1] = b;
      return;
    }
  }
}

/* One random point of op's domain (mixtures that include large and small magnitudes and the
 * neighbourhoods of kinks, singular points and zeros of the second partials).  Returns 0 when
 * the op has no domain here (a new op: add one). */
static int sample_point(int op, rng *r, double x[3]) {
  static const double half_pi = 1.5707963267948966;
  static const double logic[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 3e300, 4.9e-324, -2.0};
  static const double small_ints[] = {0.0, -0.0, 1.0, -1.0, 2.0};
  int k = below(r, 4);
  x[0] = x[1] = x[2] = 0.0;
  switch (op) {
  case DUAL_OP_LDX:
  case DUAL_OP_LDP:
  case DUAL_OP_LDK:
  case DUAL_OP_RNORM:
  case DUAL_OP_RUNIF:
  case DUAL_OP_NOGRAD:
  case DUAL_OP_OUT:
  case DUAL_OP_NEG:
  case DUAL_OP_SQUARE:
  case DUAL_OP_ABS:
  case DUAL_OP_RELU:
  case DUAL_OP_SIGN:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = unif(r, -10, 10);
    else if (k == 2) x[0] = slogu(r, 4.9e-324, 1e-300); /* next to the kink */
    else x[0] = slogu(r, 1e-150, 1e150);
    return 1;
  case DUAL_OP_NOT: x[0] = pick(r, logic, (int)(sizeof logic / sizeof logic[0])); return 1;
  case DUAL_OP_AND:
  case DUAL_OP_OR:
    x[0] = pick(r, logic, (int)(sizeof logic / sizeof logic[0]));
    x[1] = pick(r, logic, (int)(sizeof logic / sizeof logic[0]));
    return 1;
  case DUAL_OP_ADD:
  case DUAL_OP_SUB:
  case DUAL_OP_MUL:
  case DUAL_OP_MIN:
  case DUAL_OP_MAX:
  case DUAL_OP_LT:
  case DUAL_OP_LE:
  case DUAL_OP_GT:
  case DUAL_OP_GE:
  case DUAL_OP_EQ:
  case DUAL_OP_NE:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300), x[1] = slogu(r, 1e-300, 1e300);
    else if (k == 1) { /* ties and near ties: the kink of min / max */
      x[0] = slogu(r, 1e-10, 1e10);
      int t = below(r, 3);
      x[1] = (t == 0) ? x[0] : (t == 1) ? nextafter(x[0], sgn(r) * INFINITY)
                                        : x[0] * (1 + slogu(r, 1e-16, 1e-6));
    } else if (k == 2) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else x[0] = pick(r, small_ints, 5), x[1] = pick(r, small_ints, 5);
    return 1;
  case DUAL_OP_DIV:
    if (k == 0) x[0] = slogu(r, 1e-100, 1e100), x[1] = slogu(r, 1e-100, 1e100);
    else if (k == 1) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
    else if (k == 2) x[0] = unif(r, -10, 10), x[1] = slogu(r, 1e-100, 1e-5); /* near the pole */
    else x[0] = slogu(r, 1e-250, 1e-100), x[1] = slogu(r, 1e-160, 1e-60); /* 2a/b^3 in range */
    return 1;
  case DUAL_OP_POW: sample_pow(r, x); return 1;
  case DUAL_OP_SQRT:
    if (k == 0) x[0] = logu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = logu(r, 4.9e-324, 1e-300); /* next to the singular point */
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
  case DUAL_OP_SINH:
  case DUAL_OP_COSH:
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
  case DUAL_OP_ATAN2:
    if (k == 0) x[0] = slogu(r, 1e-150, 1e150), x[1] = slogu(r, 1e-150, 1e150);
    else if (k == 1) { /* one operand much smaller: the axes, where d2/da2 or d2/db2 -> 0 */
      x[0] = slogu(r, 1e-300, 1e-100), x[1] = slogu(r, 1e-10, 1e100);
      if (next64(r) & 1) x[2] = x[0], x[0] = x[1], x[1] = x[2], x[2] = 0;
    } else if (k == 2) {
      if (next64(r) & 1) x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10);
      else { /* the diagonals |a| = |b|, the zeros of atan2's d2/da db */
        x[0] = slogu(r, 1e-100, 1e100);
        x[1] = sgn(r) * x[0] * (1 + slogu(r, 1e-16, 1e-3));
      }
    } else if (next64(r) & 1) {
      x[0] = slogu(r, 1e-300, 1e-250), x[1] = slogu(r, 1e-300, 1e-250); /* near the origin */
    } else { /* near atan2's cut a = 0, b < 0 */
      x[0] = slogu(r, 1e-300, 1e-3), x[1] = -logu(r, 1e-3, 1e3);
    }
    return 1;
  case DUAL_OP_SIN:
  case DUAL_OP_COS:
    if (k == 0) x[0] = unif(r, -10, 10);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1e22);
    else { /* near multiples of pi/2: zeros of the first and second derivatives */
      double p = (double)(below(r, 200) - 100) * half_pi;
      x[0] = (p == 0) ? slogu(r, 1e-300, 1e-3) : near(r, p, sgn(r), 1e-16, 1e-3);
    }
    return 1;
  case DUAL_OP_TAN:
    if (k == 0) x[0] = unif(r, -10, 10);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1e22);
    else { /* near the poles (k + 1/2) pi and the zeros k pi */
      double p = (double)(below(r, 400) - 200) * half_pi;
      x[0] = (p == 0) ? slogu(r, 1e-300, 1e-3) : near(r, p, sgn(r), 1e-16, 1e-3);
    }
    return 1;
  case DUAL_OP_ASIN:
  case DUAL_OP_ACOS:
  case DUAL_OP_ATANH:
    if (k == 0 || k == 3) x[0] = unif(r, -1, 1);
    else if (k == 1) { /* near the singular points +-1 */
      double s = sgn(r);
      x[0] = near(r, s, -s, 1.1e-16, 0.1);
    } else x[0] = slogu(r, 1e-300, 0.1);
    return 1;
  case DUAL_OP_ATAN:
  case DUAL_OP_ASINH:
    if (k == 0) x[0] = slogu(r, 1e-300, 1e300);
    else if (k == 1) x[0] = unif(r, -10, 10);
    else if (k == 2) x[0] = slogu(r, 1e100, 1e300);
    else x[0] = slogu(r, 1e-3, 1e3);
    return 1;
  case DUAL_OP_ACOSH:
    if (k <= 1) x[0] = near(r, 1, 1, 2.3e-16, 1); /* near the singular point 1 */
    else if (k == 2) x[0] = logu(r, 1, 1e300);
    else x[0] = unif(r, 1, 10);
    return 1;
  case DUAL_OP_TANH:
    if (k == 0) x[0] = unif(r, -20, 20);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -350, 350);
    else x[0] = unif(r, -3, 3);
    return 1;
  case DUAL_OP_ERF:
    if (k == 0) x[0] = unif(r, -6, 6);
    else if (k == 1) x[0] = slogu(r, 1e-300, 1);
    else if (k == 2) x[0] = unif(r, -26.5, 26.5);
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
    if (k <= 1) {
      x[0] = slogu(r, 1e-100, 1e100), x[1] = slogu(r, 1e-100, 1e100);
      x[2] = (k == 0) ? slogu(r, 1e-200, 1e200) : -(x[0] * x[1]); /* cancellation */
    } else x[0] = unif(r, -10, 10), x[1] = unif(r, -10, 10), x[2] = unif(r, -10, 10);
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
  default: return 0;
  }
}

/* ---- the documented conventions where the reference has no two-sided derivative ------------- */
enum conv_kind {
  CONV_NONE,   /* none documented: the point must not be non-smooth (test failure) */
  CONV_EXACT,  /* exactly v (+0 and -0 alike; infinities with their sign) */
  CONV_NAN,    /* NaN */
  CONV_APPROX  /* v within the tolerance: the formula's smooth continuation across a cut */
};
typedef struct conv {
  int kind;
  Q v;
} conv;

static conv conv_of(int kind, Q v) {
  conv c = {kind, v};
  return c;
}

static int odd_integer(double b) { return floor(b) == b && fmod(b, 2.0) != 0.0; }

/* The documented dd[k] (rules.h, "Conventions") at a point x (finite operands, value not NaN)
 * where the reference reports QREF_NOT_SMOOTH. */
static conv convention(int op, const double x[3], int k) {
  const double a = x[0], b = x[1];
  const Q inf = (Q)INFINITY;
  if (!(OPS[op].flags & (F_D2AA << k))) return conv_of(CONV_EXACT, 0); /* kinks, jumps */
  switch (op) {
  case DUAL_OP_HYPOT: return conv_of(CONV_EXACT, 0); /* the origin */
  case DUAL_OP_SQRT:
  case DUAL_OP_LOG:
  case DUAL_OP_LOG2:
  case DUAL_OP_LOG10:
  case DUAL_OP_LOG1P:
  case DUAL_OP_ACOSH: return conv_of(CONV_EXACT, -inf);
  case DUAL_OP_CBRT: return conv_of(CONV_EXACT, signbit(a) ? inf : -inf);
  case DUAL_OP_ASIN:
  case DUAL_OP_ATANH: return conv_of(CONV_EXACT, (a > 0) ? inf : -inf);
  case DUAL_OP_ACOS: return conv_of(CONV_EXACT, (a > 0) ? -inf : inf);
  case DUAL_OP_DIV: /* b = +-0 */
    if (k == 1) return conv_of(CONV_EXACT, -inf);
    if (a == 0) return conv_of(CONV_NAN, 0);
    return conv_of(CONV_EXACT, (signbit(a) != signbit(b)) ? -inf : inf);
  case DUAL_OP_ATAN2:
    if (a == 0 && b == 0) return conv_of(CONV_NAN, 0);
    if (a == 0 && b < 0) /* the cut: the smooth continuation (a^2 - b^2)/(a^2 + b^2)^2 */
      return (k == 1) ? conv_of(CONV_APPROX, -1 / ((Q)b * b)) : conv_of(CONV_EXACT, 0);
    return conv_of(CONV_NONE, 0);
  case DUAL_OP_POW:
    if (a < 0) return (k == 0) ? conv_of(CONV_NONE, 0) : conv_of(CONV_NAN, 0);
    if (a != 0) return conv_of(CONV_NONE, 0);
    if (k == 0) { /* b (b-1) a^(b-2) at a = +-0, b not a non-negative integer */
      if (b > 2) return conv_of(CONV_EXACT, 0);
      if (b > 1) return conv_of(CONV_EXACT, inf);
      if (b > 0) return conv_of(CONV_EXACT, -inf);
      return conv_of(CONV_EXACT, (signbit(a) && odd_integer(b)) ? -inf : inf);
    }
    if (b <= 0) return conv_of(CONV_NAN, 0);
    if (k == 1) return conv_of(CONV_EXACT, (b > 1) ? 0 : -inf);
    return conv_of(CONV_EXACT, 0);
  default: return conv_of(CONV_NONE, 0);
  }
}

/* ---- per-op statistics and checks ------------------------------------------------------------ */
typedef struct op_stats {
  const char *op;
  int n_points, n_checked, n_sharp, n_conv, n_domain, n_weak, n_fail;
  double worst_rel, rel_at[3];
  int rel_k;
  int nonzero[3]; /* a finite nonzero dd[k] was seen */
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

/* The scale the error of dd[k] is measured against: |d|, except for pow's d2/da db =
 * a^(b-1) + b a^(b-1) log a, a sum whose terms cancel next to b log a = -1; the rounding of
 * log a (relative to the larger term) is then all that is left, so it is measured against the
 * larger term. */
static Q error_scale(int op, const double x[3], int k, Q d) {
  Q s = fabsq(d);
  if (op == DUAL_OP_POW && k == 1 && x[0] > 0) {
    Q t = fabsq(powq(x[0], (Q)x[1] - 1) * x[1] * logq(x[0]));
    if (t > s) s = t;
  }
  return s;
}

/* dd[k] = g against the reference second partial d (bound err). */
static void check_smooth(op_stats *s, int op, const double x[3], int k, double g, Q d, Q err) {
  char pbuf[200];
  const char *pt = pt_str(x, OPS[op].arity, pbuf, sizeof pbuf);
  double want = (double)d;
  s->n_checked++;
  /* where the exact second partial is beyond the double range, or may be: +-inf */
  if (fabsq(d) - 2 * err > (Q)DBL_MAX || (isinf(g) && fabsq(d) + 2 * err >= (Q)DBL_MAX)) {
    if (g != ((d > 0) ? INFINITY : -INFINITY))
      failf(s, "%s at %s: got %.17g, want %.17g (beyond the doubles)", DD_NAME[k], pt, g, want);
    return;
  }
  Q scale = error_scale(op, x, k, d), diff = fabsq((Q)g - d);
  Q tol = (Q)RTOL2 * scale + 2 * err + (Q)ATOL2;
  /* weak: the reference's bound is not well under the tolerance (a zero partial is judged
   * against unit scale).  Counted only where the op has the flag: elsewhere the reference
   * differences a linear function, and its bound only measures quad rounding. */
  int weak = err > (Q)(REF_MARGIN * RTOL2) * (scale != 0 ? scale : (Q)1) + (Q)ATOL2;
  if (weak && (OPS[op].flags & (F_D2AA << k))) {
    s->n_weak++;
    if (getenv("DUAL_RULES2_VERBOSE"))
      cr_log_info("%s: weak reference for %s at %s: %.3g +- %.3g", s->op, DD_NAME[k], pt,
                  (double)d, (double)err);
  }
  if (err <= (Q)REF_SHARP * scale && scale > (Q)ATOL2) { /* the worst error of the rule */
    s->n_sharp++;
    double rel = (double)(diff / scale);
    if (!isnan(rel) && rel > s->worst_rel) {
      s->worst_rel = rel, s->rel_k = k;
      memcpy(s->rel_at, x, sizeof s->rel_at);
    }
  }
  if (!(diff <= tol))
    failf(s, "%s at %s: got %.17g, want %.17g (error %.3g of scale %.3g > %.1g; ref bound %.3g)",
          DD_NAME[k], pt, g, want, (double)(diff / scale), (double)scale, RTOL2, (double)err);
}

static void check_convention(op_stats *s, int op, const double x[3], int k, double g) {
  char pbuf[200];
  const char *pt = pt_str(x, OPS[op].arity, pbuf, sizeof pbuf);
  conv cv = convention(op, x, k);
  s->n_conv++;
  if (cv.kind == CONV_EXACT && !(g == (double)cv.v))
    failf(s, "%s at the non-smooth point %s: got %.17g, the documented convention is %g",
          DD_NAME[k], pt, g, (double)cv.v);
  else if (cv.kind == CONV_NAN && !isnan(g))
    failf(s, "%s at %s: got %.17g, documented NaN", DD_NAME[k], pt, g);
  else if (cv.kind == CONV_APPROX &&
           !(isinf((double)cv.v) ? g == (double)cv.v
                                 : fabsq((Q)g - cv.v) <= (Q)RTOL2 * fabsq(cv.v)))
    failf(s, "%s at %s: got %.17g, want the continuation %.17g", DD_NAME[k], pt, g,
          (double)cv.v);
  else if (cv.kind == CONV_NONE)
    failf(s, "%s at %s: no two-sided second partial and no documented convention", DD_NAME[k],
          pt);
}

/* Every check of one point. */
static void check_point(op_stats *s, int op, const double x[3]) {
  char pbuf[200];
  const int ar = OPS[op].arity > 0 ? OPS[op].arity : 1, fl = OPS[op].flags;
  const char *pt = pt_str(x, ar, pbuf, sizeof pbuf);
  double d[3] = {0, 0, 0}, dd[3] = {NAN, NAN, NAN};
  int pflags = 0;
  double r = dual_apply_rule(op, x[0], x[1], x[2], d, &pflags);
  dual_apply_rule2(op, x[0], x[1], x[2], r, d, dd);
  s->n_points++;

  /* the flags: exactly +0.0 where absent, at every point (NaN and Inf operands included) */
  static const double pzero = 0.0;
  for (int k = 0; k < 3; ++k) {
    if (!(fl & (F_D2AA << k))) {
      if (memcmp(&dd[k], &pzero, sizeof pzero) != 0)
        failf(s, "%s at %s is %.17g, but the op has no F_D2%s flag: must be exactly +0.0",
              DD_NAME[k], pt, dd[k], k == 0 ? "AA" : k == 1 ? "AB" : "BB");
    } else if (dd[k] != 0 && isfinite(dd[k])) {
      s->nonzero[k] = 1;
    }
  }

  int finite = 1;
  for (int i = 0; i < ar; ++i) finite &= isfinite(x[i]) != 0;
  if (!finite) return;
  Q v;
  quad_ref_value(op, x[0], x[1], x[2], &v);
  if (isnanq(v) && !(op == DUAL_OP_DIV && x[1] == 0)) { /* outside the domain */
    s->n_domain++;
    for (int k = 0; k < 3; ++k)
      if ((fl & (F_D2AA << k)) && !isnan(dd[k]))
        failf(s, "%s at %s (outside the domain): got %.17g, want NaN", DD_NAME[k], pt, dd[k]);
    return;
  }
  for (int k = 0; k < 3; ++k) {
    if (J2[k] >= ar) continue; /* an operand the op does not have: 0, checked above */
    Q qd, err;
    int rc = quad_ref_second_err(op, x[0], x[1], x[2], I2[k], J2[k], &qd, &err);
    if (rc == QREF_OK) check_smooth(s, op, x, k, dd[k], qd, err);
    else if (rc == QREF_NOT_SMOOTH) check_convention(s, op, x, k, dd[k]);
    else failf(s, "%s at %s: the reference cannot resolve this point (rc %d): fix the domain",
               DD_NAME[k], pt, rc);
  }
  /* the claim behind the three entries: no second partial involves c */
  for (int i = 0; ar == 3 && i < 3; ++i) {
    Q qd, err;
    if (quad_ref_second_err(op, x[0], x[1], x[2], i, 2, &qd, &err) == QREF_OK &&
        !(fabsq(qd) <= 2 * err + (Q)ATOL2))
      failf(s, "d2/d%cdc at %s: the reference says %.17g, not 0", 'a' + i, pt, (double)qd);
  }
}

/* ---- the per-op test ------------------------------------------------------------------------- */
static void print_header(void) {
  fprintf(stderr, "\n%-9s %6s %6s %6s %10s %-8s %-44s %5s %6s %5s\n", "op", "points", "checks",
          "sharp", "max rel", "entry", "at", "conv", "domain", "weak");
}

static void print_row(const op_stats *s, int op) {
  char p[200];
  const int found = s->worst_rel > 0;
  fprintf(stderr, "%-9s %6d %6d %6d %10.3g %-8s %-44s %5d %6d %5d%s\n", OPS[op].name,
          s->n_points, s->n_checked, s->n_sharp, s->worst_rel, found ? DD_NAME[s->rel_k] : "-",
          found ? pt_str(s->rel_at, OPS[op].arity, p, sizeof p) : "-", s->n_conv, s->n_domain,
          s->n_weak, s->n_fail ? "  FAIL" : "");
}

static uint64_t op_seed(int op) {
  const char *env = getenv("DUAL_RULES2_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : 20240602u;
  return seed * 0x100000001B3ull + (uint64_t)op * 0x9E3779B97F4A7C15ull;
}

static void check_op(int op) {
  static const double e1[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.75, 10.0,
                              -10.0, 100.0, 1e-300, -1e-300, DBL_MIN, 4.9e-324, -4.9e-324};
  static const double e2[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
                              1e-300, -1e-300, 10.0, 1.5, 2.5};
  static const double e3[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0};
  static const double bad[] = {NAN, INFINITY, -INFINITY};
  const int ar = OPS[op].arity > 0 ? OPS[op].arity : 1, fl = OPS[op].flags;
  const double *e = (ar == 1) ? e1 : (ar == 2) ? e2 : e3;
  const int ne = (ar == 1) ? (int)(sizeof e1 / sizeof e1[0])
                 : (ar == 2) ? (int)(sizeof e2 / sizeof e2[0]) : (int)(sizeof e3 / sizeof e3[0]);
  op_stats s;
  memset(&s, 0, sizeof s);
  s.op = OPS[op].name;
  Q probe;
  cr_assert(quad_ref_value(op, 0.5, 0.5, 0.5, &probe),
            "op %s has no quad reference: add it to tests/ref/quad_ref.c", OPS[op].name);

  rng r = {op_seed(op)};
  double x[3];
  for (int q = 0; q < N_RANDOM; ++q) {
    cr_assert(sample_point(op, &r, x), "op %s has no domain in sample_point(): add one",
              OPS[op].name);
    check_point(&s, op, x);
  }
  int n_edge = 1;
  for (int i = 0; i < ar; ++i) n_edge *= ne;
  for (int q = 0; q < n_edge; ++q) {
    int t = q;
    x[0] = x[1] = x[2] = 0.0;
    for (int j = 0; j < ar; ++j) x[j] = e[t % ne], t /= ne;
    check_point(&s, op, x);
  }
  for (int j = 0; j < ar; ++j)
    for (int t = 0; t < 3; ++t) {
      x[0] = x[1] = x[2] = 0.5;
      x[j] = bad[t];
      check_point(&s, op, x);
    }
  for (int k = 0; k < 3; ++k)
    if ((fl & (F_D2AA << k)) && !s.nonzero[k])
      failf(&s, "%s has the flag F_D2%s but was 0 (or non-finite) at every point: drop the flag",
            DD_NAME[k], k == 0 ? "AA" : k == 1 ? "AB" : "BB");
  print_row(&s, op);
  cr_assert_eq(s.n_fail, 0, "%s: %d second-order failures (the first %d are logged above)",
               OPS[op].name, s.n_fail, MAX_LOGGED);
}

ReportHook(PRE_ALL)(struct criterion_test_set *set) {
  (void)set;
  print_header();
}

/* One test per op of ops.def: an op without dual_rule2_NAME does not compile, one without a
 * domain or reference fails. */
#define OP(name, spelling, arity, prop, adj, flags, synopsis)                                    \
  Test(rules2, name, .timeout = 120) { check_op(DUAL_OP_##name); }
#include "dual/ops.def"
#undef OP

/* ---- the documented conventions, one readable case each -------------------------------------- */
enum { K_ANY, K_EXACT, K_NAN };
typedef struct expect {
  int kind;
  double v;
} expect;
#define EX(v) {K_EXACT, v}
#define ANY {K_ANY, 0}
#define ISNAN {K_NAN, 0}
#define PINF EX(INFINITY)
#define NINF EX(-INFINITY)
#define Z EX(0)

typedef struct conv_case {
  const char *what;
  int op;
  double x[3];
  expect dd[3];
} conv_case;

static const conv_case CASES[] = {
  /* kinks and jumps: 0, the kink included */
  {"abs'' at 0", DUAL_OP_ABS, {0.0}, {Z, Z, Z}},
  {"relu'' at -0", DUAL_OP_RELU, {-0.0}, {Z, Z, Z}},
  {"min at a tie", DUAL_OP_MIN, {1.5, 1.5}, {Z, Z, Z}},
  {"max at a tie", DUAL_OP_MAX, {-0.0, 0.0}, {Z, Z, Z}},
  {"select on -0", DUAL_OP_SELECT, {-0.0, 2.0, 3.0}, {Z, Z, Z}},
  {"floor at an integer", DUAL_OP_FLOOR, {2.0}, {Z, Z, Z}},
  {"sign at 0", DUAL_OP_SIGN, {0.0}, {Z, Z, Z}},
  {"<= at a tie", DUAL_OP_LE, {2.0, 2.0}, {Z, Z, Z}},
  {"hypot at the origin", DUAL_OP_HYPOT, {0.0, 0.0}, {Z, Z, Z}},
  {"hypot(-2, 0) = |a|: linear in a, 1/|a| in b", DUAL_OP_HYPOT, {-2.0, 0.0}, {Z, Z, EX(0.5)}},
  {"fma: only d2/dadb", DUAL_OP_FMA, {2.0, 3.0, 4.0}, {Z, EX(1), Z}},
  {"mul: only d2/dadb", DUAL_OP_MUL, {2.0, 3.0}, {Z, EX(1), Z}},
  /* singular points: the signed infinity of the one-sided limit */
  {"sqrt''(0)", DUAL_OP_SQRT, {0.0}, {NINF, Z, Z}},
  {"sqrt''(-0)", DUAL_OP_SQRT, {-0.0}, {NINF, Z, Z}},
  {"cbrt''(0)", DUAL_OP_CBRT, {0.0}, {NINF, Z, Z}},
  {"cbrt''(-0)", DUAL_OP_CBRT, {-0.0}, {PINF, Z, Z}},
  {"log''(0)", DUAL_OP_LOG, {0.0}, {NINF, Z, Z}},
  {"log2''(-0)", DUAL_OP_LOG2, {-0.0}, {NINF, Z, Z}},
  {"log10''(0)", DUAL_OP_LOG10, {0.0}, {NINF, Z, Z}},
  {"log1p''(-1)", DUAL_OP_LOG1P, {-1.0}, {NINF, Z, Z}},
  {"asin''(1)", DUAL_OP_ASIN, {1.0}, {PINF, Z, Z}},
  {"asin''(-1)", DUAL_OP_ASIN, {-1.0}, {NINF, Z, Z}},
  {"acos''(1)", DUAL_OP_ACOS, {1.0}, {NINF, Z, Z}},
  {"acos''(-1)", DUAL_OP_ACOS, {-1.0}, {PINF, Z, Z}},
  {"acosh''(1)", DUAL_OP_ACOSH, {1.0}, {NINF, Z, Z}},
  {"atanh''(1)", DUAL_OP_ATANH, {1.0}, {PINF, Z, Z}},
  {"atanh''(-1)", DUAL_OP_ATANH, {-1.0}, {NINF, Z, Z}},
  {"1/0", DUAL_OP_DIV, {1.0, 0.0}, {Z, NINF, PINF}},
  {"-1/0", DUAL_OP_DIV, {-1.0, 0.0}, {Z, NINF, NINF}},
  {"1/-0", DUAL_OP_DIV, {1.0, -0.0}, {Z, NINF, NINF}},
  {"0/0", DUAL_OP_DIV, {0.0, 0.0}, {Z, NINF, ISNAN}},
  {"atan2 at the origin: NaN", DUAL_OP_ATAN2, {0.0, 0.0}, {ISNAN, ISNAN, ISNAN}},
  {"atan2 on the cut: the smooth continuation", DUAL_OP_ATAN2, {0.0, -2.0}, {Z, EX(-0.25), Z}},
  /* pow at a = 0 and a < 0, consistent with its first order */
  {"pow(0, 0)", DUAL_OP_POW, {0.0, 0.0}, {Z, ISNAN, ISNAN}},
  {"pow(0, 1)", DUAL_OP_POW, {0.0, 1.0}, {Z, NINF, Z}},
  {"pow(0, 0.5)", DUAL_OP_POW, {0.0, 0.5}, {NINF, NINF, Z}},
  {"pow(0, 1.5)", DUAL_OP_POW, {0.0, 1.5}, {PINF, Z, Z}},
  {"pow(0, 2)", DUAL_OP_POW, {0.0, 2.0}, {EX(2), Z, Z}},
  {"pow(0, 2.5)", DUAL_OP_POW, {0.0, 2.5}, {Z, Z, Z}},
  {"pow(0, -1)", DUAL_OP_POW, {0.0, -1.0}, {PINF, ISNAN, ISNAN}},
  {"pow(-0, -1)", DUAL_OP_POW, {-0.0, -1.0}, {NINF, ISNAN, ISNAN}},
  {"pow(-0, -2)", DUAL_OP_POW, {-0.0, -2.0}, {PINF, ISNAN, ISNAN}},
  {"pow(-2, 3): negative base", DUAL_OP_POW, {-2.0, 3.0}, {EX(-12), ISNAN, ISNAN}},
  {"pow(1, 2.5)", DUAL_OP_POW, {1.0, 2.5}, {EX(3.75), EX(1), Z}},
  {"pow(3, 2): exactly 2", DUAL_OP_POW, {3.0, 2.0}, {EX(2), ANY, ANY}},
  {"pow(1.5, 3): exactly 6a", DUAL_OP_POW, {1.5, 3.0}, {EX(9), ANY, ANY}},
  {"pow(4, 0.5) = sqrt", DUAL_OP_POW, {4.0, 0.5}, {EX(-1.0 / 32), ANY, ANY}},
  /* outside the domain: NaN */
  {"log(-1)", DUAL_OP_LOG, {-1.0}, {ISNAN, Z, Z}},
  {"log2(-1)", DUAL_OP_LOG2, {-1.0}, {ISNAN, Z, Z}},
  {"log10(-1)", DUAL_OP_LOG10, {-1.0}, {ISNAN, Z, Z}},
  {"log1p(-2)", DUAL_OP_LOG1P, {-2.0}, {ISNAN, Z, Z}},
  {"sqrt(-1)", DUAL_OP_SQRT, {-1.0}, {ISNAN, Z, Z}},
  {"asin(2)", DUAL_OP_ASIN, {2.0}, {ISNAN, Z, Z}},
  {"acos(-2)", DUAL_OP_ACOS, {-2.0}, {ISNAN, Z, Z}},
  {"acosh(0.5)", DUAL_OP_ACOSH, {0.5}, {ISNAN, Z, Z}},
  {"atanh(2)", DUAL_OP_ATANH, {2.0}, {ISNAN, Z, Z}},
  {"pow(-2, 0.5)", DUAL_OP_POW, {-2.0, 0.5}, {ISNAN, ISNAN, ISNAN}},
  /* non-finite operands: zeros stay zeros */
  {"sin(NaN)", DUAL_OP_SIN, {NAN}, {ANY, Z, Z}},
  {"NaN/2", DUAL_OP_DIV, {NAN, 2.0}, {Z, ANY, ANY}},
  {"fma(inf, 1, NaN)", DUAL_OP_FMA, {INFINITY, 1.0, NAN}, {Z, EX(1), Z}},
};

static int matches(expect e, double v) {
  switch (e.kind) {
  case K_EXACT: return v == e.v;
  case K_NAN: return isnan(v);
  default: return 1;
  }
}

Test(conventions, documented_points) {
  int nfail = 0;
  for (size_t t = 0; t < sizeof CASES / sizeof CASES[0]; ++t) {
    const conv_case *c = &CASES[t];
    double d[3], dd[3];
    int fl = 0;
    double r = dual_apply_rule(c->op, c->x[0], c->x[1], c->x[2], d, &fl);
    dual_apply_rule2(c->op, c->x[0], c->x[1], c->x[2], r, d, dd);
    for (int k = 0; k < 3; ++k)
      if (!matches(c->dd[k], dd[k])) {
        ++nfail;
        cr_log_error("%s (%s): %s = %.17g, want %s%.17g", c->what, OPS[c->op].name, DD_NAME[k],
                     dd[k], c->dd[k].kind == K_NAN ? "NaN " : "", c->dd[k].v);
      }
  }
  cr_assert_eq(nfail, 0, "%d documented second-order conventions fail (logged above)", nfail);
}

/* ---- the reference itself: its differences agree with analytic second partials in quad ------- */
static Q analytic2(int op, Q a, Q b, int k) {
  switch (op) {
  case DUAL_OP_SIN: return -sinq(a);
  case DUAL_OP_COS: return -cosq(a);
  case DUAL_OP_TAN: return 2 * tanq(a) / (cosq(a) * cosq(a));
  case DUAL_OP_TANH: return -2 * tanhq(a) / (coshq(a) * coshq(a));
  case DUAL_OP_ERF: return -4 * a / sqrtq(M_PIq) * expq(-a * a);
  case DUAL_OP_LOG: return -1 / (a * a);
  case DUAL_OP_SQRT: return -0.25Q / (a * sqrtq(a));
  case DUAL_OP_ASIN: return a / ((1 - a * a) * sqrtq((1 - a) * (1 + a)));
  case DUAL_OP_ATAN: return -2 * a / ((1 + a * a) * (1 + a * a));
  case DUAL_OP_COSH: return coshq(a);
  case DUAL_OP_HYPOT: {
    Q h = hypotq(a, b), h3 = h * h * h;
    return (k == 0) ? b * b / h3 : (k == 1) ? -a * b / h3 : a * a / h3;
  }
  case DUAL_OP_ATAN2: {
    Q s = a * a + b * b;
    return ((k == 0) ? -2 * a * b : (k == 1) ? a * a - b * b : 2 * a * b) / (s * s);
  }
  case DUAL_OP_POW: {
    Q l = logq(a);
    return (k == 0) ? b * (b - 1) * powq(a, b - 2)
           : (k == 1) ? powq(a, b - 1) * (1 + b * l) : powq(a, b) * l * l;
  }
  case DUAL_OP_DIV: return (k == 0) ? 0 : (k == 1) ? -1 / (b * b) : 2 * a / (b * b * b);
  default: return nanq("");
  }
}

Test(reference, agrees_with_analytic_second_partials) {
  static const struct {
    int op;
    double a, b;
    int k;
  } pts[] = {
    {DUAL_OP_SIN, 1.0, 0, 0},          {DUAL_OP_SIN, 1.5707963267948966, 0, 0},
    {DUAL_OP_COS, 1e-200, 0, 0},       {DUAL_OP_TAN, 1.5707963267948, 0, 0},
    {DUAL_OP_TANH, 0.3, 0, 0},         {DUAL_OP_TANH, 30, 0, 0},
    {DUAL_OP_ERF, 3, 0, 0},            {DUAL_OP_LOG, 1e-300, 0, 0},
    {DUAL_OP_SQRT, 1e-300, 0, 0},      {DUAL_OP_ASIN, 0.99999999999999989, 0, 0},
    {DUAL_OP_ATAN, 1e100, 0, 0},       {DUAL_OP_COSH, 1e-200, 0, 0},
    {DUAL_OP_HYPOT, 3, 4, 0},          {DUAL_OP_HYPOT, 3, 4, 1},
    {DUAL_OP_HYPOT, 1e-100, 1, 2},     {DUAL_OP_HYPOT, 1e-100, 1, 0},
    {DUAL_OP_ATAN2, 1, 2, 0},          {DUAL_OP_ATAN2, 1, 2, 1},
    {DUAL_OP_ATAN2, -3, -1e-5, 1},     {DUAL_OP_ATAN2, 1e-100, -1, 2},
    {DUAL_OP_POW, 2, 3.5, 0},          {DUAL_OP_POW, 2, 3.5, 1},
    {DUAL_OP_POW, 2, 3.5, 2},          {DUAL_OP_POW, 1e-300, 0.9, 1},
    {DUAL_OP_POW, 1.0000000000000002, 1e-3, 2},                    {DUAL_OP_DIV, 3, 1e-5, 2},
    {DUAL_OP_DIV, 3, -7, 1},
  };
  for (size_t i = 0; i < sizeof pts / sizeof pts[0]; ++i) {
    int k = pts[i].k;
    Q d, err, want = analytic2(pts[i].op, pts[i].a, pts[i].b, k);
    int rc = quad_ref_second_err(pts[i].op, pts[i].a, pts[i].b, 0, I2[k], J2[k], &d, &err);
    double rel = (double)(fabsq(d - want) / fabsq(want));
    cr_expect(rc == QREF_OK && rel < 1e-18 && err < 1e-15 * fabsq(want),
              "reference %s of %s at (%g, %g): rc %d, rel err %.3g, bound %.3g", DD_NAME[k],
              OPS[pts[i].op].name, pts[i].a, pts[i].b, rc, rel, (double)(err / fabsq(want)));
  }
}
