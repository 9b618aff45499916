/*
 * fn_atrig.h — dual_atan, dual_atan2, dual_asin, dual_acos: the library's own inverse trigonometry.
 * atan(y/x) = atan(c) + atan((y - c x)/(x + c y)), c in {0, 1/2, 1, 3/2, inf}, the quotient as a
 * double-double; asin/acos: pi/2 - 2 asin(sqrt((1-|x|)/2)) for |x| >= 1/2; minimax polynomials
 * (scripts/fncoef/trig.py).  Max error measured by tests/test_fn_trig.c (3e6 arguments): atan
 * 0.533, atan2 0.532, asin 0.530, acos 0.517 ulp.  Valid C11 and CUDA; included by rules.h.
 */
#ifndef DUAL_FN_ATRIG_H
#define DUAL_FN_ATRIG_H

#include "fn_bits.h"

/* a * b = p + *e exactly (Veltkamp split, Dekker's product: no FMA), for |a|, |b| < 2^995 and
 * |a b| > 2^-969. */
DUAL_INLINE double dual_atrig_two_prod(double a, double b, double *e) {
  double ca = 0x1.0000002p27 * a; /* 2^27 + 1 */
  double ah = ca - (ca - a);
  double al = a - ah;
  double cb = 0x1.0000002p27 * b;
  double bh = cb - (cb - b);
  double bl = b - bh;
  double p = a * b;
  *e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
  return p;
}

/* The same with b = bh + bl already split (26 + 26 bits): a constant. */
DUAL_INLINE double dual_atrig_two_prod_c(double a, double b, double bh, double bl, double *e) {
  double ca = 0x1.0000002p27 * a;
  double ah = ca - (ca - a);
  double al = a - ah;
  double p = a * b;
  *e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
  return p;
}

/* r negated when x is negative (copysign(r, x) for r >= 0), without a branch. */
DUAL_INLINE double dual_atrig_signof(double r, double x) {
  return dual_from_bits(dual_bits(r) ^ (dual_bits(x) & 0x8000000000000000ULL));
}

/* NaN for a domain error: x itself (quieted) when x is a NaN, else the default quiet NaN. */
DUAL_INLINE double dual_atrig_nan(double x) {
  return (x != x) ? x + x : dual_from_bits(0x7FF8000000000000ULL);
}

/* Low 32 bits of the significand cleared (21 significant bits). */
DUAL_INLINE double dual_atrig_trunc32(double x) {
  return dual_from_bits(dual_bits(x) & 0xFFFFFFFF00000000ULL);
}

/* (nh + nl) / (dh + dl) = t + *tl to ~2^-70 relative, |*tl| <= ulp(t): one division; the
 * 21-bit quotient qt makes nh - qt dh exact (Sterbenz, exact products), the remainder corrects it.
 * *q = nh / dh within 1 ulp, available early (for the polynomial).  Needs |nl| <= ulp(nh),
 * |dl| <= ulp(dh) and no overflow/underflow in the products. */
DUAL_INLINE double dual_atrig_div(double nh, double nl, double dh, double dl, double *tl,
                                  double *q) {
  double rd = 1.0 / dh;
  double q0 = nh * rd;
  double qt = dual_atrig_trunc32(q0);
  *q = q0;
  double dt = dual_atrig_trunc32(dh);
  double r = ((((nh - qt * dt) - qt * (dh - dt)) + nl) - qt * dl) * rd;
  double t = qt + r;
  *tl = r - (t - qt);
  return t;
}

/* (atan(t) - t - A0 t^3) / t^5 = q(t^2), |t| <= 0.4376 */
DUAL_INLINE double dual_atrig_atan_q(double z) {
  const double A1 = 0x1.9999999999008p-3, A2 = -0x1.2492492446702p-3;
  const double A3 = 0x1.c71c71a1891aap-4, A4 = -0x1.745d11d179328p-4;
  const double A5 = 0x1.3b132feb8349p-4, A6 = -0x1.11090c52568cp-4;
  const double A7 = 0x1.e132ef34d83e7p-5, A8 = -0x1.a9fcd9dfb4488p-5;
  const double A9 = 0x1.6b224e1a2ea6ep-5, A10 = -0x1.056b928ceb577p-5;
  const double A11 = 0x1.c087f53858041p-7;
  double z2 = z * z;
  double z4 = z2 * z2;
  double z8 = z4 * z4;
  return ((A1 + z * A2) + z2 * (A3 + z * A4)) + z4 * ((A5 + z * A6) + z2 * (A7 + z * A8)) +
         z8 * ((A9 + z * A10) + z2 * A11);
}
#define DUAL_ATRIG_A0 (-0x1.5555555555552p-2)
#define DUAL_ATRIG_A0H (-0x1.5555558p-2) /* A0 = A0H + A0L, 26 + 24 bits */
#define DUAL_ATRIG_A0L 0x1.5555570p-29

/* ch + cl + atan(t + tl) for |t| <= 0.4376 <= |ch| (ch + cl: atan of a breakpoint, or pi minus
 * one): ch + t summed exactly; the rest is small next to the result, so its polynomial may use
 * tq, t within an ulp (known before t is). */
DUAL_INLINE double dual_atrig_atan_add(double ch, double cl, double t, double tl, double tq) {
  double z = tq * tq;
  double p = (tq * z) * (DUAL_ATRIG_A0 + z * dual_atrig_atan_q(z));
  double s = ch + t;
  double e = t - (s - ch);
  /* atan(t + tl) = t + p(tq) + (t + tl - tq) p'(tq) + tl, p' = 1/(1 + z) - 1 = -z + z^2 - ...;
   * t - tq is exact (Sterbenz) */
  return s + (e + (cl + ((tl - (z - z * z) * (tl + (t - tq))) + p)));
}

/* atan(t + tl) for 2^-31 <= |t| <= 0.4376: t + A0 t^3 summed exactly (t^3 and A0 t^3 as
 * double-doubles), as the cubic term reaches 7% of the result. */
DUAL_INLINE double dual_atrig_atan_small(double t, double tl) {
  double c = 0x1.0000002p27 * t;
  double th = c - (c - t);
  double tt = t - th;
  double z = t * t;
  double zl = ((th * th - z) + 2.0 * th * tt) + tt * tt; /* t^2 = z + zl */
  double ve;
  double v = dual_atrig_two_prod(z, t, &ve);
  ve += zl * t; /* t^3 = v + ve */
  double ae;
  double a = dual_atrig_two_prod_c(v, DUAL_ATRIG_A0, DUAL_ATRIG_A0H, DUAL_ATRIG_A0L, &ae);
  double s = t + a;
  double e = a - (s - t);
  double rest = (ae + ve * DUAL_ATRIG_A0) + ((tl - z * tl) + (v * z) * dual_atrig_atan_q(z));
  return s + (e + rest);
}

DUAL_FN_CLONE double dual_atan(double x) {
  const double PIO2_HI = 0x1.921fb54442d18p0, PIO2_LO = 0x1.1a62633145c07p-54;
  const double PIO4_HI = 0x1.921fb54442d18p-1, PIO4_LO = 0x1.1a62633145c07p-55;
  const double ATAN_0P5_HI = 0x1.dac670561bb4fp-2, ATAN_0P5_LO = 0x1.a2b7f222f65e2p-56;
  const double ATAN_1P5_HI = 0x1.f730bd281f69bp-1, ATAN_1P5_LO = 0x1.007887af0cbbdp-56;
  double ax = fabs(x);
  double r;
  if (!(ax <= 0x1p27)) {
    if (x != x) return x + x;
    r = PIO2_HI + (PIO2_LO - 1.0 / ax); /* atan(+inf) = pi/2 rounded; 1/ax^3 < 2^-81 */
  } else if (ax < 0x1p-27) {
    return x; /* atan(x) = x (1 - x^2/3): rounds to x; keeps -0 and subnormals */
  } else if (ax < 0.4375) {
    r = dual_atrig_atan_small(ax, 0.0);
  } else {
    /* t = (ax - c) / (1 + c ax): numerators exact (Sterbenz), denominators as double-doubles */
    double nh, dh, dl, ch, cl;
    if (ax < 0.6875) { /* c = 1/2: (2 ax - 1) / (2 + ax) */
      nh = 2.0 * ax - 1.0;
      dh = 2.0 + ax;
      dl = ax - (dh - 2.0);
      ch = ATAN_0P5_HI;
      cl = ATAN_0P5_LO;
    } else if (ax < 1.1875) { /* c = 1: (ax - 1) / (ax + 1) */
      nh = ax - 1.0;
      dh = ax + 1.0;
      dl = ax - (dh - 1.0);
      ch = PIO4_HI;
      cl = PIO4_LO;
    } else if (ax < 2.4375) { /* c = 3/2: (ax - 3/2) / (1 + 3/2 ax), 3/2 ax = ax + ax/2 */
      double m = ax + 0.5 * ax;
      double ml = 0.5 * ax - (m - ax);
      nh = ax - 1.5;
      dh = m + 1.0;
      dl = (1.0 - (dh - m)) + ml;
      ch = ATAN_1P5_HI;
      cl = ATAN_1P5_LO;
    } else { /* c = inf: -1 / ax */
      nh = -1.0;
      dh = ax;
      dl = 0.0;
      ch = PIO2_HI;
      cl = PIO2_LO;
    }
    double tl, tq;
    double t = dual_atrig_div(nh, 0.0, dh, dl, &tl, &tq);
    r = dual_atrig_atan_add(ch, cl, t, tl, tq);
  }
  return dual_atrig_signof(r, x);
}

/* atan2(ay, ax) for finite ay > 0, ax > 0 (xneg = 0) or pi - atan2(ay, ax) (xneg = 1). */
DUAL_INLINE double dual_atrig_atan2_pos(double ay, double ax, int xneg) {
  const double PI_HI = 0x1.921fb54442d18p1, PI_LO = 0x1.1a62633145c07p-53;
  const double PIO2_HI = 0x1.921fb54442d18p0, PIO2_LO = 0x1.1a62633145c07p-54;
  const double PIO4_HI = 0x1.921fb54442d18p-1, PIO4_LO = 0x1.1a62633145c07p-55;
  const double PI3O4_HI = 0x1.2d97c7f3321d2p1, PI3O4_LO = 0x1.a79394c9e8a0ap-54;
  const double ATAN_0P5_HI = 0x1.dac670561bb4fp-2, ATAN_0P5_LO = 0x1.a2b7f222f65e2p-56;
  const double ATAN_1P5_HI = 0x1.f730bd281f69bp-1, ATAN_1P5_LO = 0x1.007887af0cbbdp-56;
  const double PI_M_ATAN_0P5_HI = 0x1.56c6e7397f5aep1, PI_M_ATAN_0P5_LO = 0x1.660b64ece6f4bp-53;
  const double PI_M_ATAN_1P5_HI = 0x1.145385fa3af71p1, PI_M_ATAN_1P5_LO = 0x1.fa53523b6428fp-53;
  /* extreme ratios (the comparisons may overflow or underflow harmlessly) */
  if (ay < 0x1p-30 * ax) { /* atan(u) = u (1 - u^2/3): u = ay/ax, correctly rounded, suffices */
    double u = ay / ax;
    return xneg ? PI_HI + (PI_LO - u) : u;
  }
  if (ay > 0x1p27 * ax) { /* pi/2 - u, u = ax/ay */
    double u = ax / ay;
    return xneg ? PIO2_HI + (PIO2_LO + u) : PIO2_HI + (PIO2_LO - u);
  }
  /* one exact power-of-2 scale keeps every product below normal and finite */
  if (ax > 0x1p500) {
    ax *= 0x1p-600;
    ay *= 0x1p-600;
  } else if (ax < 0x1p-500) {
    ax *= 0x1p600;
    ay *= 0x1p600;
  }
  double nh, nl, dh, dl, ch, cl;
  int plain = 0; /* atan(t) itself: exact cubic term */
  if (ay < 0.4375 * ax) { /* c = 0: ay / ax */
    nh = ay;
    nl = 0.0;
    dh = ax;
    dl = 0.0;
    plain = !xneg;
    ch = PI_HI;
    cl = PI_LO;
  } else if (ay < 0.6875 * ax) { /* c = 1/2: (2 ay - ax) / (2 ax + ay) */
    double ax2 = 2.0 * ax;
    nh = 2.0 * ay - ax;
    nl = 0.0;
    dh = ax2 + ay;
    dl = ay - (dh - ax2);
    ch = xneg ? PI_M_ATAN_0P5_HI : ATAN_0P5_HI;
    cl = xneg ? PI_M_ATAN_0P5_LO : ATAN_0P5_LO;
  } else if (ay < 1.1875 * ax) { /* c = 1: (ay - ax) / (ax + ay) */
    nh = ay - ax;
    nl = 0.0;
    dh = ax + ay;
    double b = dh - ax;
    dl = (ax - (dh - b)) + (ay - b);
    ch = xneg ? PI3O4_HI : PIO4_HI;
    cl = xneg ? PI3O4_LO : PIO4_LO;
  } else if (ay < 2.4375 * ax) { /* c = 3/2: (ay - 3/2 ax) / (ax + 3/2 ay), exactly as halves */
    double mx = ax + 0.5 * ax;
    double mxl = 0.5 * ax - (mx - ax);
    double my = ay + 0.5 * ay;
    double myl = 0.5 * ay - (my - ay);
    double n0 = ay - mx; /* exact (Sterbenz); the numerator n0 - mxl renormalised by 2Sum */
    nh = n0 - mxl;
    double bn = nh - n0;
    nl = (n0 - (nh - bn)) - (mxl + bn);
    dh = my + ax;
    dl = (ax - (dh - my)) + myl;
    ch = xneg ? PI_M_ATAN_1P5_HI : ATAN_1P5_HI;
    cl = xneg ? PI_M_ATAN_1P5_LO : ATAN_1P5_LO;
  } else { /* c = inf: -ax / ay */
    nh = -ax;
    nl = 0.0;
    dh = ay;
    dl = 0.0;
    ch = PIO2_HI;
    cl = PIO2_LO;
  }
  double tl, tq;
  double t = dual_atrig_div(nh, nl, dh, dl, &tl, &tq);
  if (plain) return dual_atrig_atan_small(t, tl);
  /* pi - (c + atan(t)) = (pi - c) + atan(-t) */
  double sg = dual_from_bits(0x3FF0000000000000ULL | ((uint64_t)xneg << 63)); /* +-1 */
  return dual_atrig_atan_add(ch, cl, sg * t, sg * tl, sg * tq);
}

/* atan2(y, x): the angle of the point (x, y), in [-pi, pi]; C99 F.9.1.4 special cases. */
DUAL_FN_CLONE double dual_atan2(double y, double x) {
  const double PI_HI = 0x1.921fb54442d18p1, PIO2_HI = 0x1.921fb54442d18p0;
  const double PIO4_HI = 0x1.921fb54442d18p-1, PI3O4_HI = 0x1.2d97c7f3321d2p1;
  const double DMAX = 0x1.fffffffffffffp1023;
  if (x != x || y != y) return x + y;
  double ax = fabs(x), ay = fabs(y);
  int xneg = (int)(dual_bits(x) >> 63);
  double r;
  if (ay == 0.0) {
    r = xneg ? PI_HI : 0.0; /* atan2(+-0, -0 or x < 0) = +-pi, atan2(+-0, +0 or x > 0) = +-0 */
  } else if (ay > DMAX) {
    r = (ax > DMAX) ? (xneg ? PI3O4_HI : PIO4_HI) : PIO2_HI;
  } else if (ax > DMAX) {
    r = xneg ? PI_HI : 0.0;
  } else if (ax == 0.0) {
    r = PIO2_HI;
  } else {
    r = dual_atrig_atan2_pos(ay, ax, xneg);
  }
  return dual_atrig_signof(r, y);
}

/* (asin(s) - s - P0 s^3) / s^5 = q(s^2), |s| <= 1/2 */
DUAL_INLINE double dual_atrig_asin_q(double z) {
  const double P1 = 0x1.333333332e131p-4, P2 = 0x1.6db6db721268p-5;
  const double P3 = 0x1.f1c71a94f2dc5p-6, P4 = 0x1.6e8bdee042802p-6;
  const double P5 = 0x1.1c49f05c9e4b9p-6, P6 = 0x1.ca1f8d77adadp-7;
  const double P7 = 0x1.75858962c031bp-7, P8 = 0x1.613c8ddf2986ep-7;
  const double P9 = 0x1.e5f5793427addp-9, P10 = 0x1.639c733a97e62p-6;
  const double P11 = -0x1.57fd76d4a5bbap-6, P12 = 0x1.0b46b95279711p-5;
  double z2 = z * z;
  double z4 = z2 * z2;
  double z8 = z4 * z4;
  return ((P1 + z * P2) + z2 * (P3 + z * P4)) + z4 * ((P5 + z * P6) + z2 * (P7 + z * P8)) +
         z8 * ((P9 + z * P10) + z2 * (P11 + z * P12));
}

/* asin(s) = s + a + *rest with a = P0 s^3 rounded and *rest small, for s = sh + sl with
 * 2^-28 <= sh <= 1/2, s^2 = z + zl (both given), |sl| <= ulp(sh). */
DUAL_INLINE double dual_atrig_asin_k(double sh, double sl, double z, double zl, double *rest) {
  const double P0 = 0x1.5555555555577p-3;
  const double P0H = 0x1.5555558p-3, P0L = -0x1.5555448p-30; /* 26 + 24 bits */
  double ve;
  double v = dual_atrig_two_prod(z, sh, &ve);
  ve += zl * sh + z * sl; /* s^3 = v + ve */
  double ae;
  double a = dual_atrig_two_prod_c(v, P0, P0H, P0L, &ae);
  *rest = (ae + ve * P0) + (v * z) * dual_atrig_asin_q(z);
  return a;
}

/* For 1/2 <= ax < 1: z = (1 - ax)/2 (exact), s = sqrt(z) = f + c with f the 21-bit truncation
 * of the rounded root (f^2 exact) and c = (z - f^2)/(s + f); asin(s) = f + c + a + rest. */
DUAL_INLINE double dual_atrig_asin_big(double ax, double *f, double *c, double *rest) {
  double z = 0.5 - 0.5 * ax;
  double s = sqrt(z);
  double fh = dual_atrig_trunc32(s);
  double cc = (z - fh * fh) / (s + fh);
  *f = fh;
  *c = cc;
  return dual_atrig_asin_k(s, (fh - s) + cc, z, 0.0, rest);
}

/* For 2^-27 <= ax < 1/2: asin(ax) = ax + a + rest. */
DUAL_INLINE double dual_atrig_asin_small(double ax, double *rest) {
  double c = 0x1.0000002p27 * ax;
  double h = c - (c - ax);
  double l = ax - h;
  double z = ax * ax;
  double zl = ((h * h - z) + 2.0 * h * l) + l * l;
  return dual_atrig_asin_k(ax, 0.0, z, zl, rest);
}

DUAL_FN double dual_asin(double x) {
  const double PIO2_HI = 0x1.921fb54442d18p0, PIO2_LO = 0x1.1a62633145c07p-54;
  double ax = fabs(x);
  double r, rest;
  if (!(ax < 0.5)) {
    if (!(ax < 1.0)) {
      if (ax == 1.0) {
        r = PIO2_HI;
      } else {
        return dual_atrig_nan(x); /* |x| > 1, +-inf, NaN -> NaN */
      }
    } else { /* pi/2 - 2 asin(s): PIO2_HI - 2f is exact, 2f >= 2^-26 */
      double f, c;
      double a = dual_atrig_asin_big(ax, &f, &c, &rest);
      double h = PIO2_HI - 2.0 * f;
      double s = h - 2.0 * a;
      double e = ((h - s) - 2.0 * a);
      r = s + (e + (PIO2_LO - 2.0 * (c + rest)));
    }
  } else if (ax < 0x1p-27) {
    return x; /* asin(x) = x (1 + x^2/6): rounds to x; keeps -0 and subnormals */
  } else {
    double a = dual_atrig_asin_small(ax, &rest);
    double s = ax + a;
    double e = a - (s - ax);
    r = s + (e + rest);
  }
  return dual_atrig_signof(r, x);
}

DUAL_FN double dual_acos(double x) {
  const double PI_HI = 0x1.921fb54442d18p1, PI_LO = 0x1.1a62633145c07p-53;
  const double PIO2_HI = 0x1.921fb54442d18p0, PIO2_LO = 0x1.1a62633145c07p-54;
  double ax = fabs(x);
  double rest;
  if (!(ax < 0.5)) {
    if (!(ax < 1.0)) {
      if (x == 1.0) return 0.0;
      if (x == -1.0) return PI_HI;
      return dual_atrig_nan(x); /* |x| > 1, +-inf, NaN -> NaN */
    }
    double f, c;
    double a = dual_atrig_asin_big(ax, &f, &c, &rest);
    if (x > 0.0) { /* 2 asin(s) */
      double h = 2.0 * f;
      double s = h + 2.0 * a;
      double e = 2.0 * a - (s - h);
      return s + (e + 2.0 * (c + rest));
    }
    /* pi - 2 asin(s): PI_HI - 2f is exact */
    double h = PI_HI - 2.0 * f;
    double s = h - 2.0 * a;
    double e = ((h - s) - 2.0 * a);
    return s + (e + (PI_LO - 2.0 * (c + rest)));
  }
  if (ax < 0x1p-27) return PIO2_HI + (PIO2_LO - x); /* pi/2 - x - x^3/6, x^3 negligible */
  /* pi/2 - asin(x) = pi/2 - x - a - rest (sign of x carried by x, a, rest) */
  double a = dual_atrig_asin_small(ax, &rest);
  a = dual_atrig_signof(a, x);
  rest = dual_atrig_signof(rest, x);
  double s1 = PIO2_HI - x;
  double e1 = (PIO2_HI - s1) - x;
  double s2 = s1 - a;
  double e2 = (s1 - s2) - a;
  return s2 + ((e1 + e2) + (PIO2_LO - rest));
}

#endif /* DUAL_FN_ATRIG_H */
