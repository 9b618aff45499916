#!/usr/bin/env python3
"""
explog.py -- coefficients of src/dual/fn_exp.h, fn_log.h and fn_pow.h (mpmath 1.3).

Each polynomial is a minimax (Remez exchange) fit in 60-digit arithmetic.  The coefficients are
then rounded to double one at a time, lowest degree first, refitting the remaining ones after each
rounding (after the first two only for exp) so the rounding of the large leading coefficients is
absorbed by the later ones.  The error printed is that of the double coefficients, evaluated
exactly on a dense grid.  The split constants (ln2 for the reduction, the log centres, their
thresholds and logarithms, 2/3, 1/ln2, 1/ln10, cbrt's constants) come from here too.
Every #define DUAL_EL_* in the three headers is a line of this output.

Run: python3 scripts/fncoef/explog.py      (prints C literals; about a minute)
"""
import mpmath as mp

mp.mp.dps = 60


def dbl(v):
    """mpf -> nearest double (Python float)."""
    return float(mp.mpf(v))


def hexf(v):
    return float(v).hex()


def round_bits(v, bits):
    """v rounded to `bits` significant bits (as an exact double)."""
    v = mp.mpf(v)
    e = int(mp.floor(mp.log(abs(v), 2)))
    q = mp.mpf(2) ** (e + 1 - bits)
    return float(mp.nint(v / q) * q)


def remez(f, a, b, powers, w=None, iters=30, grid=1200):
    """Minimax fit: the c minimising max |w(x) (sum c_j x^powers[j] - f(x))| on [a, b]."""
    if w is None:
        w = lambda x: mp.mpf(1)
    n = len(powers)
    ref = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf('0.37')) / (n + 1))
           for i in range(n + 1)]
    G = [a] + [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf(0.5)) / grid)
               for i in range(grid)] + [b]
    c = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(ref):
            for j, p in enumerate(powers):
                A[i, j] = x ** p
            A[i, n] = (-1) ** i / w(x)
            rhs[i] = f(x)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n)]

        def err(x):
            return w(x) * (sum(cj * x ** p for cj, p in zip(c, powers)) - f(x))

        ev = [err(x) for x in G]
        ext = []
        i = 0
        while i < len(G):
            sgn = ev[i] >= 0
            j, best = i, i
            while j < len(G) and (ev[j] >= 0) == sgn:
                if abs(ev[j]) > abs(ev[best]):
                    best = j
                j += 1
            ext.append(best)
            i = j
        pts = []
        for k in ext:  # golden-section refinement of each extremum
            lo, hi = G[max(k - 1, 0)], G[min(k + 1, len(G) - 1)]
            for _ in range(30):
                m1 = lo + (hi - lo) * mp.mpf('0.381966')
                m2 = lo + (hi - lo) * mp.mpf('0.618034')
                if abs(err(m1)) > abs(err(m2)):
                    hi = m2
                else:
                    lo = m1
            x = (lo + hi) / 2
            pts.append(x if abs(err(x)) > abs(err(G[k])) else G[k])
        while len(pts) > n + 1:
            if abs(err(pts[0])) < abs(err(pts[-1])):
                pts.pop(0)
            else:
                pts.pop()
        if len(pts) < n + 1:
            raise RuntimeError("Remez: too few alternation points")
        ref = pts
        mx = max(abs(err(x)) for x in ref)
        mn = min(abs(err(x)) for x in ref)
        if mx == 0 or (mx - mn) / mx < mp.mpf('1e-6'):
            break
    return c


def fit_double(f, a, b, powers, w=None, nfix=None):
    """Remez fit, then round coefficients to double lowest degree first, refitting the rest after
    each of the first nfix roundings (all when None); the others are rounded as they are.
    Returns the doubles and max |w (p - f)| over a dense grid."""
    if w is None:
        w = lambda x: mp.mpf(1)
    fixed = []
    free = list(powers)
    while free:
        # Refit the free terms as a polynomial in x (Haar) times x^p0, so the remainder left by
        # the coefficients already rounded is divided out: target (f - fixed)/x^p0, weight w |x|^p0.
        p0 = free[0]

        def g(x, fixed=tuple(fixed), p0=p0):
            if x == 0:
                return mp.mpf(0)  # only where the weight |x|^p0 vanishes
            return (f(x) - sum(mp.mpf(cv) * x ** p for p, cv in fixed)) / x ** p0
        c = remez(g, a, b, [p - p0 for p in free], lambda x, p0=p0: w(x) * abs(x) ** p0)
        if nfix is not None and len(fixed) == nfix:
            fixed += [(p, dbl(cv)) for p, cv in zip(free, c)]
            break
        fixed.append((p0, dbl(c[0])))
        free = free[1:]
    coef = [cv for _, cv in fixed]
    N = 4000
    worst = mp.mpf(0)
    for i in range(N + 1):
        x = a + (b - a) * i / N
        e = abs(w(x) * (sum(mp.mpf(cv) * x ** p for p, cv in fixed) - f(x)))
        worst = max(worst, e)
    return coef, worst


def show(name, coef, worst, what):
    print("/* %s: %s; max error 2^%.1f */" % (name, what, float(mp.log(worst, 2))))
    for i, cv in enumerate(coef):
        print("#define %s%d %s" % (name, i, hexf(cv)))
    print()


def split_const(name, v):
    """The double nearest v as S1 + S2 (S1 26 bits, both exact), for Dekker's product."""
    hi = dbl(v)
    c1 = round_bits(hi, 26)
    c2 = dbl(mp.mpf(hi) - c1)
    assert mp.mpf(c1) + c2 == mp.mpf(hi)
    print("#define %s_S1 %s  /* %s = S1 + S2 exactly, S1 26 bits */" % (name, hexf(c1), name))
    print("#define %s_S2 %s" % (name, hexf(c2)))


def grid_split(name, v, e, what):
    """v = H + L with H truncated to a multiple of 2^-e."""
    h = float(mp.floor(v * 2 ** e) / 2 ** e)
    print("#define %s_H %s  /* %s truncated to a multiple of 2^-%d */" % (name, hexf(h), what, e))
    print("#define %s_L %s" % (name, hexf(dbl(v - h))))


def main():
    ln2 = mp.log(2)

    # ================================================================ fn_exp.h
    print("/* ======== fn_exp.h ======== */")
    L1 = round_bits(ln2, 42)                       # k*L1 exact for |k| < 2^11
    print("#define DUAL_EL_LN2_42 %s  /* ln2 to 42 bits: k * it is exact for |k| < 2^11 */" % hexf(L1))
    print("#define DUAL_EL_LN2_42L %s /* ln2 - DUAL_EL_LN2_42 */" % hexf(dbl(ln2 - L1)))
    print("#define DUAL_EL_INV_LN2 %s" % hexf(dbl(1 / ln2)))
    print("#define DUAL_EL_LN2 %s" % hexf(dbl(ln2)))
    print("#define DUAL_EL_LN2L %s    /* ln2 - DUAL_EL_LN2 */" % hexf(dbl(ln2 - dbl(ln2))))
    split_const("DUAL_EL_LN2", ln2)
    print()

    # e^r = 1 + r + r^2/2 + r^3 Q(r), |r| <= ln2/2 + 0.0015: pow reduces y = yh + yl by yh alone,
    # |yl| <= 2^-19 |y| <= 0.0015
    a = mp.mpf('0.3481')

    def q_exp(r):                   # (e^r - 1 - r - r^2/2) / r^3 by its series
        s, t, j = mp.mpf(0), mp.mpf(1) / 6, 0
        while abs(t) > mp.mpf(10) ** -48:
            s += t
            j += 1
            t = t * r / (j + 3)
        return s
    # Refit after the first two roundings only: later refits do not converge on this symmetric
    # interval, and the others' rounding errors are far below the error of the fit.
    coef, worst = fit_double(q_exp, -a, a, list(range(0, 10)), lambda r: abs(r) ** 3, nfix=2)
    show("DUAL_EL_EXP_Q", coef, worst,
         "e^r - 1 - r - r^2/2 ~ r^3 (Q0 + Q1 r + ... + Q9 r^9), |r| <= 0.3481, abs error")

    # ================================================================ fn_log.h
    print("/* ======== fn_log.h ======== */")
    for name, v in (("DUAL_EL_INV_LN2", 1 / ln2), ("DUAL_EL_INV_LN10", 1 / mp.log(10))):
        split_const(name, v)
        print("#define %s_H %s" % (name, hexf(dbl(v))))
        print("#define %s_L %s" % (name, hexf(dbl(v - dbl(v)))))
    lg2 = mp.log10(2)
    L10 = round_bits(lg2, 42)
    print("#define DUAL_EL_LOG10_2_42 %s  /* log10(2) to 42 bits */" % hexf(L10))
    print("#define DUAL_EL_LOG10_2_42L %s" % hexf(dbl(lg2 - L10)))
    # x = 2^k m, m in [1, 2); centres c_j = 1 + {0, 3, 7, 11}/16 (near 2^(j/4)), switching at the
    # geometric means, m >= T4 taken as m/2 with c_0 = 1; thresholds on the top 20 mantissa bits
    cs = [mp.mpf(1), mp.mpf(19) / 16, mp.mpf(23) / 16, mp.mpf(27) / 16]
    bounds = [mp.sqrt(cs[i] * cs[i + 1]) for i in range(3)] + [mp.sqrt(cs[3] * 2)]
    T = [int(mp.nint((b - 1) * 2 ** 20)) for b in bounds]
    for i, t in enumerate(T, 1):
        print("#define DUAL_EL_LOG_T%d 0x%xu /* m >= %.6f */" % (i, t, 1 + t / 2 ** 20))
    lo = [mp.mpf(1)] + [1 + mp.mpf(t) / 2 ** 20 for t in T]
    hi = [1 + mp.mpf(t) / 2 ** 20 for t in T] + [mp.mpf(2)]
    smax = mp.mpf(0)
    for i in range(5):
        c, sc = (cs[i], 1) if i < 4 else (cs[0], 2)
        for m in (lo[i] / sc, hi[i] / sc):
            smax = max(smax, abs((m - c) / (m + c)))
    print("/* |s| = |m - c|/(m + c) <= %.6f */" % smax)
    # log_b(c_j) on the grid of k log_b(2) (2^-42; 2^-43 for log10) so that their sum is exact
    for j in (1, 2, 3):
        grid_split("DUAL_EL_LOGC%d" % j, mp.log(cs[j]), 42, "log(%s)" % cs[j])
        grid_split("DUAL_EL_LOG2C%d" % j, mp.log(cs[j]) / ln2, 42, "log2(%s)" % cs[j])
        grid_split("DUAL_EL_LOG10C%d" % j, mp.log10(cs[j]), 43, "log10(%s)" % cs[j])
    t = mp.mpf(2) / 3
    th = round_bits(t, 11)          # times a 42-bit product stays exact
    print("#define DUAL_EL_TWO_THIRDS_11 %s  /* 2/3 to 11 bits */" % hexf(th))
    print("#define DUAL_EL_TWO_THIRDS_11L %s" % hexf(dbl(t - th)))
    print("#define DUAL_EL_TWO_THIRDS %s" % hexf(dbl(t)))
    print()

    zm = mp.mpf('0.0478') ** 2
    assert smax < mp.mpf('0.0478')

    def atanh_over_s_m1(z):        # atanh(s)/s - 1 = z/3 + z^2/5 + ...
        return sum(z ** i / (2 * i + 1) for i in range(1, 40))
    coef, worst = fit_double(atanh_over_s_m1, mp.mpf(0), zm, list(range(1, 6)))
    show("DUAL_EL_LOG_P", coef, worst,
         "atanh(s)/s - 1 ~ z (P0 + P1 z + ... + P4 z^4), z = s^2 <= 0.0478^2, abs (= relative) error")

    def w_tail(z):                  # 3 atanh(s)/s - 3 - z = 3 z^2/5 + 3 z^3/7 + ...
        return sum(3 * z ** i / (2 * i + 1) for i in range(2, 40))
    coef, worst = fit_double(w_tail, mp.mpf(0), zm, list(range(2, 7)))
    show("DUAL_EL_LOG_R", coef, worst,
         "3 atanh(s)/s - 3 - z ~ z^2 (R0 + R1 z + ... + R4 z^4), z = s^2 <= 0.0478^2, abs error")

    # ================================================================ fn_pow.h
    print("/* ======== fn_pow.h ======== */")
    print("#define DUAL_EL_CBRT2 %s" % hexf(dbl(mp.cbrt(2))))
    print("#define DUAL_EL_CBRT_HALF %s" % hexf(dbl(mp.cbrt(mp.mpf(0.5)))))
    # (1 + d)^(1/3) = 1 + C1 d + C2 d^2 + C3 d^3 + ...
    for i, v in enumerate((mp.mpf(1) / 3, -mp.mpf(1) / 9, mp.mpf(5) / 81), 1):
        print("#define DUAL_EL_CBRT_C%d %s" % (i, hexf(dbl(v))))
    coef, worst = fit_double(lambda m: mp.cbrt(m), mp.mpf(1), mp.mpf(2), list(range(0, 6)))
    show("DUAL_EL_CBRT_P", coef, worst, "cbrt(m) ~ P0 + P1 m + ... + P5 m^5 on [1, 2], abs error")


if __name__ == "__main__":
    main()
