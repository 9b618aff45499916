/*
 * quad_ref.c — the independent reference of the conformance suite (see quad_ref.h): every op of
 * src/dual/ops.def evaluated in __float128 with libquadmath, and its partials by central
 * differences in quad.  Written from the mathematical definitions of the ops (ops.def synopses),
 * never from src/dual/rules.h.  Compiled into the dual_test_ref library (GNU C, -lquadmath).
 */
#include "quad_ref.h"

#include "dual/ops.h"

typedef __float128 Q;

static int is_int_q(Q x) { return finiteq(x) && floorq(x) == x; }
static Q rel_scale(Q x) { return (x != 0) ? fabsq(x) : (Q)1; }
static Q min_q(Q x, Q y) { return (x < y) ? x : y; }
static Q max_q(Q x, Q y) { return (x > y) ? x : y; }

/* The logistic function, without overflow on either side. */
static Q sigmoid_q(Q x) {
  if (x >= 0) return 1 / (1 + expq(-x));
  Q e = expq(x);
  return e / (1 + e);
}

int quad_ref_value(int op, Q a, Q b, Q c, Q *r) {
  switch (op) {
  case DUAL_OP_LDX:
  case DUAL_OP_LDP:
  case DUAL_OP_LDK:
  case DUAL_OP_OUT: *r = a; return 1;
  case DUAL_OP_ADD: *r = a + b; return 1;
  case DUAL_OP_SUB: *r = a - b; return 1;
  case DUAL_OP_MUL: *r = a * b; return 1;
  case DUAL_OP_DIV: *r = a / b; return 1;
  case DUAL_OP_NEG: *r = -a; return 1;
  case DUAL_OP_POW: *r = powq(a, b); return 1;
  case DUAL_OP_SQUARE: *r = a * a; return 1;
  case DUAL_OP_SQRT: *r = sqrtq(a); return 1;
  case DUAL_OP_CBRT: *r = cbrtq(a); return 1;
  case DUAL_OP_EXP: *r = expq(a); return 1;
  case DUAL_OP_EXP2: *r = exp2q(a); return 1;
  case DUAL_OP_EXPM1: *r = expm1q(a); return 1;
  case DUAL_OP_LOG: *r = logq(a); return 1;
  case DUAL_OP_LOG2: *r = log2q(a); return 1;
  case DUAL_OP_LOG10: *r = log10q(a); return 1;
  case DUAL_OP_LOG1P: *r = log1pq(a); return 1;
  case DUAL_OP_HYPOT: *r = hypotq(a, b); return 1;
  case DUAL_OP_SIN: *r = sinq(a); return 1;
  case DUAL_OP_COS: *r = cosq(a); return 1;
  case DUAL_OP_TAN: *r = tanq(a); return 1;
  case DUAL_OP_ASIN: *r = asinq(a); return 1;
  case DUAL_OP_ACOS: *r = acosq(a); return 1;
  case DUAL_OP_ATAN: *r = atanq(a); return 1;
  case DUAL_OP_ATAN2: *r = atan2q(a, b); return 1;
  case DUAL_OP_SINH: *r = sinhq(a); return 1;
  case DUAL_OP_COSH: *r = coshq(a); return 1;
  case DUAL_OP_TANH: *r = tanhq(a); return 1;
  case DUAL_OP_ASINH: *r = asinhq(a); return 1;
  case DUAL_OP_ACOSH: *r = acoshq(a); return 1;
  case DUAL_OP_ATANH: *r = atanhq(a); return 1;
  case DUAL_OP_ERF: *r = erfq(a); return 1;
  case DUAL_OP_ERFC: *r = erfcq(a); return 1;
  case DUAL_OP_SIGMOID: *r = sigmoid_q(a); return 1;
  case DUAL_OP_SOFTPLUS: *r = (a > 0) ? a + log1pq(expq(-a)) : log1pq(expq(a)); return 1;
  case DUAL_OP_RELU: *r = (a > 0 || isnanq(a)) ? a : (Q)0; return 1;
  case DUAL_OP_ABS: *r = fabsq(a); return 1;
  case DUAL_OP_FMA: *r = fmaq(a, b, c); return 1;
  case DUAL_OP_MIN: *r = (a <= b || isnanq(a)) ? a : b; return 1;
  case DUAL_OP_MAX: *r = (a >= b || isnanq(a)) ? a : b; return 1;
  case DUAL_OP_SELECT: *r = (a != 0) ? b : c; return 1;
  case DUAL_OP_SIGN: *r = (a > 0) ? (Q)1 : ((a < 0) ? (Q)-1 : a); return 1;
  case DUAL_OP_FLOOR: *r = floorq(a); return 1;
  case DUAL_OP_CEIL: *r = ceilq(a); return 1;
  case DUAL_OP_LT: *r = (a < b); return 1;
  case DUAL_OP_LE: *r = (a <= b); return 1;
  case DUAL_OP_GT: *r = (a > b); return 1;
  case DUAL_OP_GE: *r = (a >= b); return 1;
  case DUAL_OP_EQ: *r = (a == b); return 1;
  case DUAL_OP_NE: *r = (a != b); return 1;
  case DUAL_OP_AND: *r = (a != 0 && b != 0); return 1;
  case DUAL_OP_OR: *r = (a != 0 || b != 0); return 1;
  case DUAL_OP_NOT: *r = (a == 0); return 1;
  default: return 0;
  }
}

/*
 * Step scale for differencing argument `which` at v: the smaller of the length on which the op
 * varies (its natural scale) and the distance to the nearest point where it is not smooth along
 * that axis.  Returns QREF_NOT_SMOOTH when v is such a point, else QREF_OK.
 */
static int step_scale(int op, const Q v[3], int which, Q *s) {
  Q a = v[0], b = v[1], x = v[which];
  switch (op) {
  case DUAL_OP_DIV:
    if (which > 1) break;
    if (b == 0) return QREF_NOT_SMOOTH; /* the pole */
    *s = (which == 1) ? fabsq(b) : rel_scale(a);
    return QREF_OK;
  case DUAL_OP_POW:
    if (which == 0) {
      Q nb = max_q(1, fabsq(b));
      if (a > 0) *s = a / nb;
      else if (a == 0 && is_int_q(b) && b >= 0) *s = 1 / nb; /* a polynomial in a */
      else if (a < 0 && is_int_q(b)) *s = -a / nb;
      else return QREF_NOT_SMOOTH; /* a = 0 with a non-integer or negative b; a < 0 domain */
      return QREF_OK;
    }
    if (which == 1) {
      if (a > 0) {
        Q l = fabsq(logq(a));
        *s = max_q(fabsq(b), (l > 0) ? min_q(1 / l, (Q)1e30) : (Q)1e30);
      } else if (a == 0 && b > 0) {
        *s = b; /* 0^b = 0 on b > 0 */
      } else {
        return QREF_NOT_SMOOTH; /* negative base (defined on integers only), or 0^b, b <= 0 */
      }
      return QREF_OK;
    }
    break;
  case DUAL_OP_SQRT:
  case DUAL_OP_LOG:
  case DUAL_OP_LOG2:
  case DUAL_OP_LOG10:
    if (which != 0) break;
    if (!(a > 0)) return QREF_NOT_SMOOTH;
    *s = a;
    return QREF_OK;
  case DUAL_OP_CBRT:
    if (which != 0) break;
    if (a == 0) return QREF_NOT_SMOOTH;
    *s = fabsq(a);
    return QREF_OK;
  case DUAL_OP_LOG1P:
    if (which != 0) break;
    if (!(a > -1)) return QREF_NOT_SMOOTH;
    *s = 1 + a;
    return QREF_OK;
  /* Where the derivative has a zero, the step must shrink with the distance to it (else the
   * relative accuracy of a tiny derivative is lost): |cos| and |sin| bound the distance to the
   * zeros of sin' and cos', sinh' = cosh has none, cosh' = sinh vanishes at 0. */
  case DUAL_OP_SIN:
    if (which != 0) break;
    *s = min_q(1, fabsq(cosq(a)));
    return QREF_OK;
  case DUAL_OP_COS:
    if (which != 0) break;
    *s = (a == 0) ? (Q)1 : min_q(1, fabsq(sinq(a)));
    return QREF_OK;
  case DUAL_OP_COSH:
    if (which != 0) break;
    *s = (a == 0) ? (Q)1 : min_q(1, fabsq(a));
    return QREF_OK;
  case DUAL_OP_EXP:
  case DUAL_OP_EXP2:
  case DUAL_OP_EXPM1:
  case DUAL_OP_SINH:
  case DUAL_OP_TANH:
  case DUAL_OP_SIGMOID:
  case DUAL_OP_SOFTPLUS:
    if (which != 0) break;
    *s = 1;
    return QREF_OK;
  case DUAL_OP_TAN:
    if (which != 0) break;
    *s = min_q(1, fabsq(cosq(a))); /* |cos| bounds the distance to the nearest pole */
    return QREF_OK;
  case DUAL_OP_ASIN:
  case DUAL_OP_ACOS:
  case DUAL_OP_ATANH:
    if (which != 0) break;
    if (!(fabsq(a) < 1)) return QREF_NOT_SMOOTH;
    *s = 1 - fabsq(a);
    return QREF_OK;
  case DUAL_OP_ATAN:
  case DUAL_OP_ASINH:
    if (which != 0) break;
    *s = hypotq(a, 1); /* distance to the branch points +-i */
    return QREF_OK;
  case DUAL_OP_ACOSH:
    if (which != 0) break;
    if (!(a > 1)) return QREF_NOT_SMOOTH;
    *s = a - 1;
    return QREF_OK;
  case DUAL_OP_ERF:
  case DUAL_OP_ERFC:
    if (which != 0) break;
    *s = 1 / max_q(1, fabsq(a)); /* exp(-a^2) varies on 1/(2|a|) */
    return QREF_OK;
  case DUAL_OP_HYPOT:
    if (which > 1) break;
    if (a == 0 && b == 0) return QREF_NOT_SMOOTH;
    /* d/da = a / hypot: the step shrinks with |a| (hypot(a, 0) = |a| has its kink there) */
    *s = (x != 0) ? fabsq(x) : fabsq(v[1 - which]);
    return QREF_OK;
  case DUAL_OP_ATAN2:
    if (which > 1) break;
    if (a == 0 && b == 0) return QREF_NOT_SMOOTH;
    if (which == 0) {
      if (b < 0 && a == 0) return QREF_NOT_SMOOTH; /* the jump from -pi to pi across the cut */
      *s = (b < 0) ? fabsq(a) : hypotq(a, b);
    } else {
      *s = (a == 0) ? fabsq(b) : hypotq(a, b);
    }
    return QREF_OK;
  case DUAL_OP_RELU:
  case DUAL_OP_ABS:
  case DUAL_OP_SIGN:
  case DUAL_OP_NOT:
    if (which != 0) break;
    if (a == 0) return QREF_NOT_SMOOTH;
    *s = fabsq(a);
    return QREF_OK;
  case DUAL_OP_FLOOR:
  case DUAL_OP_CEIL: {
    if (which != 0) break;
    Q fl = floorq(a), dist = min_q(a - fl, fl + 1 - a);
    if (dist == 0) return QREF_NOT_SMOOTH;
    *s = dist;
    return QREF_OK;
  }
  case DUAL_OP_MIN:
  case DUAL_OP_MAX:
  case DUAL_OP_LT:
  case DUAL_OP_LE:
  case DUAL_OP_GT:
  case DUAL_OP_GE:
  case DUAL_OP_EQ:
  case DUAL_OP_NE:
    if (which > 1) break;
    if (a == b) return QREF_NOT_SMOOTH;
    *s = min_q(fabsq(a - b), rel_scale(x));
    return QREF_OK;
  case DUAL_OP_AND:
  case DUAL_OP_OR:
    if (which > 1) break;
    if (x == 0) return QREF_NOT_SMOOTH;
    *s = fabsq(x);
    return QREF_OK;
  case DUAL_OP_SELECT:
    if (which == 0) {
      if (a == 0) return QREF_NOT_SMOOTH;
      *s = fabsq(a);
      return QREF_OK;
    }
    break;
  default: break;
  }
  /* Linear or polynomial in this argument, or an argument the op does not read. */
  *s = rel_scale(x);
  return QREF_OK;
}

/*
 * The function differenced for argument `which`: op(a, b, c) minus a term that is constant along
 * that axis near the centre ctr, chosen so that the differences do not cancel (e.g. erf(x) - 1 =
 * -erfc(x) for x > 1, hypot(a, b) - |b| = a^2 / (hypot + |b|)).  Branches are decided at ctr so
 * every stencil point uses the same form.
 */
static Q rep(int op, int which, const Q ctr[3], Q a, Q b, Q c) {
  Q x0 = ctr[which];
  Q r = 0;
  switch (op) {
  case DUAL_OP_ADD: return (which == 0) ? a : b;
  case DUAL_OP_SUB: return (which == 0) ? a : -b;
  case DUAL_OP_FMA: return (which == 2) ? c : a * b;
  case DUAL_OP_POW:
    if (ctr[0] > 0 && fabsq(ctr[1] * logq(ctr[0])) < 1) return expm1q(b * logq(a)); /* a^b - 1 */
    return powq(a, b);
  case DUAL_OP_EXPM1: return (fabsq(x0) > 1) ? expq(a) : expm1q(a);
  case DUAL_OP_SIN: { /* sin - 1 = -cos^2 / (1 + sin), sin + 1 = cos^2 / (1 - sin) */
    Q co = cosq(a), si = sinq(a);
    if (fabsq(sinq(x0)) < 0.5) return si;
    return (sinq(x0) > 0) ? -co * co / (1 + si) : co * co / (1 - si);
  }
  case DUAL_OP_COS: { /* cos - 1 = -sin^2 / (1 + cos), cos + 1 = sin^2 / (1 - cos) */
    Q co = cosq(a), si = sinq(a);
    if (fabsq(cosq(x0)) < 0.5) return co;
    return (cosq(x0) > 0) ? -si * si / (1 + co) : si * si / (1 - co);
  }
  case DUAL_OP_COSH: {
    Q s = sinhq(a / 2);
    return 2 * s * s; /* cosh(a) - 1 */
  }
  case DUAL_OP_TANH:
    if (x0 > 1) return -2 / (expq(2 * a) + 1);  /* tanh(a) - 1 */
    if (x0 < -1) return 2 / (expq(-2 * a) + 1); /* tanh(a) + 1 */
    return tanhq(a);
  case DUAL_OP_ATAN: return (fabsq(x0) > 1) ? -atanq(1 / a) : atanq(a);
  case DUAL_OP_ERF:
    if (x0 > 1) return -erfcq(a);
    if (x0 < -1) return erfcq(-a);
    return erfq(a);
  case DUAL_OP_ERFC: return (x0 < -1) ? -erfcq(-a) : erfcq(a);
  case DUAL_OP_SIGMOID: return (x0 > 0) ? -1 / (1 + expq(a)) : sigmoid_q(a);
  case DUAL_OP_HYPOT:
    if (which == 0) return a * a / (hypotq(a, b) + fabsq(b));
    return b * b / (hypotq(a, b) + fabsq(a));
  case DUAL_OP_ATAN2:
    /* atan2(a, b) minus a constant (0, +-pi/2 or +-pi) near ctr */
    if (fabsq(ctr[0]) > fabsq(ctr[1])) return -atanq(b / a);
    return atanq(a / b);
  default: break;
  }
  quad_ref_value(op, a, b, c, &r);
  return r;
}

/* Ops whose differenced function is computed exactly in quad at the stencil points (x + k h is
 * exact; selections, comparisons and +- of it are too): no rounding term in the error bound. */
static int exact_rep(int op, int which, const Q v[3]) {
  switch (op) {
  case DUAL_OP_POW: return (which == 0 && v[1] == 0) || (which == 1 && v[0] == 1); /* constant 1 */
  case DUAL_OP_ADD:
  case DUAL_OP_SUB:
  case DUAL_OP_NEG:
  case DUAL_OP_RELU:
  case DUAL_OP_ABS:
  case DUAL_OP_MIN:
  case DUAL_OP_MAX:
  case DUAL_OP_SELECT:
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
  case DUAL_OP_NOT: return 1;
  case DUAL_OP_FMA: return which == 2;
  default: return 0;
  }
}

int quad_ref_partial_err(int op, Q a, Q b, Q c, int which, Q *d, Q *err) {
  Q v[3] = {a, b, c}, r = 0;
  *d = 0;
  *err = 0;
  if (which < 0 || which > 2) return QREF_NONE;
  switch (op) { /* leaves and stores: the loaded value itself */
  case DUAL_OP_LDX:
  case DUAL_OP_OUT: *d = (which == 0); return QREF_OK;
  case DUAL_OP_LDP:
  case DUAL_OP_LDK: return QREF_OK;
  default: break;
  }
  if (!quad_ref_value(op, a, b, c, &r)) return QREF_NONE;
  if (!finiteq(a) || !finiteq(b) || !finiteq(c) || isnanq(r)) return QREF_NOT_SMOOTH;

  Q s;
  int rc = step_scale(op, v, which, &s);
  if (rc != QREF_OK) return rc;
  /* h: a power of two near 2^-20 s, so that x + k h (k = +-1, +-2, +-4) is exact in quad as
   * long as h >= 2^(ilogb(x) - 100) (x has 53 significant bits, quad 113). */
  Q x = v[which];
  Q h = ldexpq(1, ilogbq(s) - 20);
  if (x != 0) {
    Q hmin = ldexpq(1, ilogbq(x) - 100);
    if (h < hmin) h = hmin;
  }
  if (h > ldexpq(s, -12)) return QREF_UNRESOLVED; /* the step would not be small vs the scale */

  static const int ks[6] = {-4, -2, -1, 1, 2, 4}; /* f[i] at x + ks[i] h */
  Q f[6];
  Q fmax = 0;
  for (int i = 0; i < 6; ++i) {
    Q w[3] = {a, b, c};
    w[which] = x + ks[i] * h;
    Q fi = rep(op, which, v, w[0], w[1], w[2]);
    if (!finiteq(fi)) return QREF_UNRESOLVED;
    f[i] = fi;
    if (fabsq(fi) > fmax) fmax = fabsq(fi);
  }
  Q fm4 = f[0], fm2 = f[1], fm1 = f[2], f1 = f[3], f2 = f[4], f4 = f[5];
  Q d1 = (8 * (f1 - fm1) - (f2 - fm2)) / (12 * h); /* 4th order, step h */
  Q d2 = (8 * (f2 - fm2) - (f4 - fm4)) / (24 * h); /* 4th order, step 2h */
  *d = d1 + (d1 - d2) / 15;                        /* Richardson: 6th order */
  /* error: truncation of d1 (>= that of the extrapolated value) + rounding of the f values
   * (a few quad ulps each, amplified by the stencil weights ~ 2/h) */
  *err = fabsq(d1 - d2) / 15 + (exact_rep(op, which, v) ? 0 : 32 * FLT128_EPSILON * fmax / h);
  return QREF_OK;
}

int quad_ref_partial(int op, Q a, Q b, Q c, int which, Q *d) {
  Q err;
  return quad_ref_partial_err(op, a, b, c, which, d, &err);
}
