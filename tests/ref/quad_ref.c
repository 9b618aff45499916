/*
 * quad_ref.c — the independent reference of the conformance suite (see quad_ref.h): every op of
 * src/dual/ops.def evaluated in __float128 with libquadmath, and its first and second partials by
 * central differences in quad.  Written from the mathematical definitions of the ops (ops.def
 * synopses), never from src/dual/rules.h.  Compiled into the dual_test_ref library (GNU C,
 * -lquadmath).
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
  case DUAL_OP_RNORM: /* a draw: the value the engine loads (checked by test_conformance) */
  case DUAL_OP_RUNIF:
  case DUAL_OP_NOGRAD:
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

/* What every differenced reference checks first: leaves and stores are linear (their partial is
 * set by the caller), an op without a reference, non-finite operands or a NaN value.  Returns 0
 * to go on differencing, else the quad_ref_code to return. */
static int precheck(int op, Q a, Q b, Q c) {
  Q r = 0;
  switch (op) {
  case DUAL_OP_LDX:
  case DUAL_OP_OUT:
  case DUAL_OP_LDP:
  case DUAL_OP_LDK:
  case DUAL_OP_RNORM:
  case DUAL_OP_RUNIF:
  case DUAL_OP_NOGRAD: return QREF_OK; /* nograd: a zero derivative by definition */
  default: break;
  }
  if (!quad_ref_value(op, a, b, c, &r)) return QREF_NONE;
  if (!finiteq(a) || !finiteq(b) || !finiteq(c) || isnanq(r)) return QREF_NOT_SMOOTH;
  return 0;
}

/* The step for differencing at x on the scale s: a power of two near 2^-e s (e = 20 for first
 * partials), so that x + k h (k = +-1, +-2, +-4) is exact in quad as long as
 * h >= 2^(ilogb(x) - 100) (x has 53 significant bits, quad 113).  0 when that step would not be
 * small against the scale (unresolved). */
static Q diff_step(Q x, Q s, int e) {
  Q h = ldexpq(1, ilogbq(s) - e);
  if (x != 0) {
    Q hmin = ldexpq(1, ilogbq(x) - 100);
    if (h < hmin) h = hmin;
  }
  return (h > ldexpq(s, -12)) ? 0 : h;
}

int quad_ref_partial_err(int op, Q a, Q b, Q c, int which, Q *d, Q *err) {
  Q v[3] = {a, b, c};
  *d = 0;
  *err = 0;
  if (which < 0 || which > 2) return QREF_NONE;
  int rc = precheck(op, a, b, c);
  if (rc != 0) { /* leaves and stores: the loaded value itself */
    if (rc == QREF_OK && (op == DUAL_OP_LDX || op == DUAL_OP_OUT)) *d = (which == 0);
    return rc;
  }

  Q s;
  rc = step_scale(op, v, which, &s);
  if (rc != QREF_OK) return rc;
  Q x = v[which], h = diff_step(x, s, 20);
  if (h == 0) return QREF_UNRESOLVED;

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

/* ---- second partials ------------------------------------------------------------------------ */

/*
 * The function differenced for a second partial along axis i (alone or across i and j): rep()
 * minus, in addition, a term that is a function of x_i alone and linear in it near ctr, which
 * neither the second difference along i nor the mixed difference sees.  Removing it keeps a
 * tiny curvature on top of a large slope resolvable (hypot(a, b) - |a| = b^2 / (hypot + |a|),
 * softplus(a) - a), and a few more constants are removed (asin - pi/2 = -acos, ...).
 */
static Q rep2(int op, int i, const Q ctr[3], Q a, Q b, Q c) {
  Q x0 = ctr[i];
  switch (op) {
  case DUAL_OP_HYPOT: {
    if (i > 1) break;
    Q xi = (i == 0) ? a : b, xo = (i == 0) ? b : a;
    if (fabsq(ctr[i]) >= fabsq(ctr[1 - i])) return xo * xo / (hypotq(a, b) + fabsq(xi));
    return xi * xi / (hypotq(a, b) + fabsq(xo));
  }
  case DUAL_OP_SOFTPLUS:
    if (i == 0 && x0 > 1) return log1pq(expq(-a)); /* softplus(a) - a */
    break;
  case DUAL_OP_SIGMOID:
    if (i == 0 && fabsq(x0) <= 1) return tanhq(a / 2) / 2; /* sigmoid - 1/2 */
    break;
  case DUAL_OP_ERFC:
    if (i == 0 && fabsq(x0) <= 1) return -erfq(a); /* erfc - 1 */
    break;
  case DUAL_OP_ASIN: /* asin -+ pi/2 = -acos(a), acos(-a) */
    if (i == 0 && x0 > 0.5Q) return -acosq(a);
    if (i == 0 && x0 < -0.5Q) return acosq(-a);
    break;
  case DUAL_OP_ACOS: /* acos - pi/2 = -asin(a), acos - pi = -acos(-a) */
    if (i == 0 && fabsq(x0) <= 0.5Q) return -asinq(a);
    if (i == 0 && x0 < -0.5Q) return -acosq(-a);
    break;
  default: break;
  }
  return rep(op, i, ctr, a, b, c);
}

/* Ops odd along axis i about x_i = 0 once rep2 has removed a constant (sin, atan2(., b), erfc - 1,
 * ...): the second partial vanishes at 0 and is x_i f_iii(0) (1 + O(x_i^2)) next to it.  Returns
 * the scale on which f varies there (x_i / scale bounds the relative Taylor remainder), 0 if the
 * op is not odd along i. */
static Q odd_scale(int op, const Q v[3], int i) {
  switch (op) {
  case DUAL_OP_SIN:
  case DUAL_OP_TAN:
  case DUAL_OP_SINH:
  case DUAL_OP_TANH:
  case DUAL_OP_ASIN:
  case DUAL_OP_ACOS:
  case DUAL_OP_ATAN:
  case DUAL_OP_ASINH:
  case DUAL_OP_ATANH:
  case DUAL_OP_ERF:
  case DUAL_OP_ERFC:
  case DUAL_OP_SIGMOID: return (i == 0) ? 1 : 0;
  case DUAL_OP_ATAN2: return (i <= 1) ? fabsq(v[1 - i]) : 0; /* atan(a/b), -atan(b/a) */
  default: return 0;
  }
}

/* Second partial along axis i next to 0 for an odd op: x_i times the third derivative at 0, from
 * the 4-point third difference T(h) = (f(2h) - 2f(h) + 2f(-h) - f(-2h)) / 2h^3 = f_iii + O(h^2)
 * at steps h, 2h, 4h, extrapolated twice (weights ~4.4/h^3).  Plain differences cannot resolve
 * it there: the slope f'(0) h outweighs the curvature x_i h^2 in every stencil value. */
static int second_odd(int op, const Q v[3], int i, Q scale, Q *d, Q *err) {
  Q h = ldexpq(1, ilogbq(scale) - 20), f[4][2], fmax = 0; /* f[m][s] at (s ? -1 : 1) 2^m h */
  for (int m = 0; m < 4; ++m)
    for (int sg = 0; sg < 2; ++sg) {
      Q w[3] = {v[0], v[1], v[2]};
      w[i] = (sg ? -1 : 1) * (Q)(1 << m) * h;
      f[m][sg] = rep2(op, i, v, w[0], w[1], w[2]);
      if (!finiteq(f[m][sg])) return QREF_UNRESOLVED;
      if (fabsq(f[m][sg]) > fmax) fmax = fabsq(f[m][sg]);
    }
  Q t[3], r[2], x = v[i];
  for (int m = 0; m < 3; ++m) {
    Q hm = (Q)(1 << m) * h;
    t[m] = ((f[m + 1][0] - f[m + 1][1]) - 2 * (f[m][0] - f[m][1])) / (2 * hm * hm * hm);
  }
  r[0] = (4 * t[0] - t[1]) / 3, r[1] = (4 * t[1] - t[2]) / 3; /* O(h^4) */
  Q f3 = r[0] + (r[0] - r[1]) / 15;
  Q err3 = fabsq(r[0] - r[1]) / 15 + 32 * FLT128_EPSILON * fmax / (h * h * h);
  *d = x * f3;
  /* the Taylor remainder x^3 f^(5)/6 (f^(5) = 4 (T(2h) - T(h)) / 3h^2 + O(h^2)), and at least
   * x^3 f_iii / scale^2 */
  Q f5 = 4 * (t[1] - t[0]) / (3 * h * h);
  *err = fabsq(x) * err3 + fabsq(x * x * x) * (fabsq(f5) / 6 + fabsq(f3) / (scale * scale));
  return QREF_OK;
}

/* Second partial along axis i: the 5-point second difference
 * (-f(2h) + 16 f(h) - 30 f(0) + 16 f(-h) - f(-2h)) / 12h^2 (error h^4 f^(6)/90) at steps h and
 * 2h, extrapolated.  Its weights sum to ~5.8/h^2, hence the rounding term. */
static int second_along(int op, const Q v[3], int i, Q h, Q *d, Q *err) {
  static const int ks[7] = {-4, -2, -1, 0, 1, 2, 4}; /* f[k] at x + ks[k] h */
  Q f[7], fmax = 0;
  for (int k = 0; k < 7; ++k) {
    Q w[3] = {v[0], v[1], v[2]};
    w[i] = v[i] + ks[k] * h;
    f[k] = rep2(op, i, v, w[0], w[1], w[2]);
    if (!finiteq(f[k])) return QREF_UNRESOLVED;
    if (fabsq(f[k]) > fmax) fmax = fabsq(f[k]);
  }
  Q fm4 = f[0], fm2 = f[1], fm1 = f[2], f0 = f[3], f1 = f[4], f2 = f[5], f4 = f[6];
  Q d1 = (16 * (f1 + fm1) - (f2 + fm2) - 30 * f0) / (12 * h * h); /* 4th order, step h */
  Q d2 = (16 * (f2 + fm2) - (f4 + fm4) - 30 * f0) / (48 * h * h); /* 4th order, step 2h */
  *d = d1 + (d1 - d2) / 15;
  *err = fabsq(d1 - d2) / 15 + (exact_rep(op, i, v) ? 0 : 64 * FLT128_EPSILON * fmax / (h * h));
  return QREF_OK;
}

/* Mixed second partial across axes i < j: the corner difference
 * C(m) = (f(+m,+m) - f(+m,-m) - f(-m,+m) + f(-m,-m)) / (4 m^2 hi hj) = f_ij + O(m^2) at
 * m = 1, 2, 4; E(m) = (4 C(m) - C(2m)) / 3 is 4th order, extrapolated once more.  The
 * differenced function is rep2(op, i, ...): what it drops is a function of x_i alone or does not
 * vary along x_i, and the corner difference cancels both.  Weights sum to ~1.5/(hi hj). */
static int second_across(int op, const Q v[3], int i, int j, Q hi, Q hj, Q *d, Q *err) {
  static const int sg[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
  Q C[3], fmax = 0;
  for (int m = 0; m < 3; ++m) {
    Q acc = 0;
    for (int q = 0; q < 4; ++q) {
      Q w[3] = {v[0], v[1], v[2]};
      w[i] = v[i] + sg[q][0] * (1 << m) * hi;
      w[j] = v[j] + sg[q][1] * (1 << m) * hj;
      Q f = rep2(op, i, v, w[0], w[1], w[2]);
      if (!finiteq(f)) return QREF_UNRESOLVED;
      if (fabsq(f) > fmax) fmax = fabsq(f);
      acc += (sg[q][0] * sg[q][1]) * f;
    }
    C[m] = acc / (4 * (Q)(1 << (2 * m)) * hi * hj);
  }
  Q e1 = (4 * C[0] - C[1]) / 3, e2 = (4 * C[1] - C[2]) / 3;
  *d = e1 + (e1 - e2) / 15;
  int exact = exact_rep(op, i, v) && exact_rep(op, j, v);
  *err = fabsq(e1 - e2) / 15 + (exact ? 0 : 32 * FLT128_EPSILON * fmax / (hi * hj));
  return QREF_OK;
}

int quad_ref_second_err(int op, Q a, Q b, Q c, int i, int j, Q *d, Q *err) {
  Q v[3] = {a, b, c};
  *d = 0;
  *err = 0;
  if (i < 0 || i > 2 || j < 0 || j > 2) return QREF_NONE;
  if (i > j) {
    int t = i;
    i = j, j = t;
  }
  int rc = precheck(op, a, b, c);
  if (rc != 0) return rc; /* leaves and stores are linear: 0 */

  Q si, sj;
  rc = step_scale(op, v, i, &si);
  if (rc == QREF_OK) rc = step_scale(op, v, j, &sj);
  if (rc != QREF_OK) return rc;
  if (op == DUAL_OP_POW && i == 0 && j == 1) {
    /* smooth along a at a <= 0 for integer b, and along b at a = 0 for b > 0, but no
     * neighbourhood in the (a, b) plane is: a^b is undefined for a < 0 and non-integer b */
    if (!(a > 0)) return QREF_NOT_SMOOTH;
    /* the step along a, a / max(1, |b|), holds while b moves by less than max(1, |b|) */
    sj = min_q(sj, max_q(1, fabsq(b)));
  }
  if (op == DUAL_OP_ATAN2) { /* rep2 continues atan2 smoothly across its cut a = 0, b < 0 */
    if (i <= 1) si = hypotq(a, b);
    if (j <= 1) sj = hypotq(a, b);
  }
  Q os = (i == j) ? odd_scale(op, v, i) : 0;
  if (os > 0 && fabsq(v[i]) < ldexpq(os, -40)) return second_odd(op, v, i, os, d, err);

  /* steps 2^-20, 2^-18 and 2^-16 of the scale: the one with the smallest error bound (a small
   * curvature under a large slope needs the larger steps, the truncation the smaller ones) */
  rc = QREF_UNRESOLVED;
  for (int e = 20; e >= 16; e -= 2) {
    Q hi = diff_step(v[i], si, e), hj = diff_step(v[j], sj, e), dk, ek;
    if (hi == 0 || hj == 0) continue;
    int rk = (i == j) ? second_along(op, v, i, hi, &dk, &ek)
                      : second_across(op, v, i, j, hi, hj, &dk, &ek);
    if (rk != QREF_OK || (rc == QREF_OK && !(ek < *err))) continue;
    rc = QREF_OK, *d = dk, *err = ek;
  }
  return rc;
}

int quad_ref_partial(int op, Q a, Q b, Q c, int which, Q *d) {
  Q err;
  return quad_ref_partial_err(op, a, b, c, which, d, &err);
}
