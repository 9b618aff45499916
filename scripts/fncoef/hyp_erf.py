#!/usr/bin/env python3
"""
hyp_erf.py — coefficients and constants of src/dual/fn_hyp.h and src/dual/fn_erf.h.

Every approximation is a weighted minimax fit (Remez exchange, rational where the function has a
nearby singularity or a pole-like tail) computed with mpmath at 50 digits, where the weight makes
the fitted error the relative error of the final function value (the part the header adds
exactly, such as x in x + x^3 R(x^2), is excluded from the fit).  The coefficients are then rounded
to double one at a time, lowest order first, re-fitting the remaining ones after each rounding so
that they absorb the rounding errors; the max weighted error with the rounded coefficients is
measured on a dense grid and printed next to each fit.  Also prints the split constants sqrt(pi),
2/sqrt(pi) and 2/sqrt(pi) - 1 as double-doubles.  Prints C literals (hexadecimal floats, exact)
that the headers paste in.

Usage: python3 scripts/fncoef/hyp_erf.py        (a few minutes; needs mpmath >= 1.3)
"""
import mpmath
from mpmath import mp, mpf

mp.dps = 50


# --- rounding and printing ---------------------------------------------------------------------

def d(x):
    """x rounded to the nearest double (ties to even), as a Python float."""
    return float(mpf(x))


def hexd(x):
    """A C99/C++17 hexadecimal floating literal of the double x, e.g. -0x1.5555555555555p-3."""
    x = float(x)
    if x == 0.0:
        return "0x0p+0"
    mant, exp = x.hex().split("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return "%sp%d" % (mant, int(exp))


def dd(x):
    """(hi, lo) double-double of x."""
    hi = d(x)
    return hi, d(mpf(x) - mpf(hi))


# --- weighted rational Remez exchange ----------------------------------------------------------

def cheb_grid(a, b, n):
    """n Chebyshev extrema on [a, b], endpoints included, ascending."""
    a, b = mpf(a), mpf(b)
    pts = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * k / (n - 1)) for k in range(n)]
    pts[0], pts[-1] = a, b
    return pts


def horner(cs, t):
    s = mpf(0)
    for c in reversed(cs):
        s = s * t + c
    return s


def rat(p, q, t):
    """p(t) / (1 + t q(t)) with p = [p0 .. pn], q = [q1 .. qm]."""
    return horner(p, t) / (1 + t * horner(q, t)) if q else horner(p, t)


def sample(g, w, a, b, npts=2000):
    """The grid of the fits on [a, b]: points, function values, weights."""
    T = cheb_grid(a, b, npts)
    return T, [g(t) for t in T], [w(t) for t in T]


def remez(grid, n, m, fixp=None, fixq=None, start=None, iters=60):
    """Minimax of w(t) (P(t)/Q(t) - g(t)) on [a, b]; P of degree n, Q = 1 + q1 t + .. + qm t^m;
    fixp / fixq map indices of P (0..n) / Q (1..m) to fixed values; start = (reference, q) of an
    earlier fit to start from.  Returns (p, q, max weighted error, levelled error ratio,
    reference); p = [p0 .. pn], q = [q1 .. qm]."""
    fixp, fixq = fixp or {}, fixq or {}
    fp = [i for i in range(n + 1) if i not in fixp]
    fq = [j for j in range(1, m + 1) if j not in fixq]
    T, G, W = grid
    npts = len(T)
    M = len(fp) + len(fq) + 1
    idx = [int(round((npts - 1) * (1 - mp.cos(mp.pi * k / (M - 1))) / 2)) for k in range(M)]
    idx = [k + 1 if (W[k] == 0 and k == 0) else (k - 1 if W[k] == 0 else k) for k in idx]
    p = [mpf(fixp.get(i, 0)) for i in range(n + 1)]
    q = [mpf(fixq.get(j, 0)) for j in range(1, m + 1)]
    if start is not None:  # the earlier extrema, less the ones the fixed coefficients freed
        ref, q0 = start
        q = [mpf(fixq.get(j, q0[j - 1])) for j in range(1, m + 1)]
        drop = len(ref) - M
        idx = sorted(ref, key=lambda k: k)[:]
        while drop > 0:
            idx.pop(len(idx) // 2)
            drop -= 1
    best, stall = None, 0
    for _ in range(iters):
        den = [1 + T[k] * horner(q, T[k]) for k in idx]
        for _inner in range(8 if m else 1):
            # w P(t) - w g Q(t) -+ E Q_prev(t) = 0  (linear in the free p, q and E for the
            # previous Q); the fixed coefficients move to the right-hand side
            A, rhs = [], []
            for r, k in enumerate(idx):
                t = T[k]
                row = [W[k] * t ** i for i in fp] + [-W[k] * G[k] * t ** j for j in fq]
                row.append(-((-1) ** r) * den[r])
                A.append(row)
                known = sum(W[k] * v * t ** i for i, v in fixp.items())
                known -= sum(W[k] * G[k] * v * t ** j for j, v in fixq.items())
                rhs.append(W[k] * G[k] - known)
            sol = mp.lu_solve(mp.matrix(A), mp.matrix(rhs))
            for c, i in enumerate(fp):
                p[i] = sol[c]
            for c, j in enumerate(fq):
                q[j - 1] = sol[len(fp) + c]
            den = [1 + T[k] * horner(q, T[k]) for k in idx]
        if min(1 + t * horner(q, t) for t in T) <= 0:
            raise RuntimeError("denominator vanishes")
        err = [W[k] * (rat(p, q, T[k]) - G[k]) for k in range(npts)]
        segs = []  # one extremum per run of equal sign
        for k in range(npts):
            sg = (err[k] > 0) - (err[k] < 0)
            if sg == 0:
                continue
            if not segs or segs[-1][0] != sg:
                segs.append([sg, k])
            elif abs(err[k]) > abs(err[segs[-1][1]]):
                segs[-1][1] = k
        ext = [s[1] for s in segs]
        while len(ext) > M:
            ext.pop(0 if abs(err[ext[0]]) < abs(err[ext[-1]]) else -1)
        emax = max(abs(e) for e in err)
        emin = min(abs(err[k]) for k in ext)
        if best is None or emax < best[2] * (1 - mpf("1e-9")):
            best, stall = (list(p), list(q), emax, emax / emin, list(idx)), 0
        else:
            stall += 1  # no progress: levelled as far as the grid allows
        if len(ext) < M or stall >= 3:
            break
        idx = ext
        if emax / emin < 1 + mpf("1e-6"):
            break
    return best


def remez_rounded(grid, n, m):
    """The minimax fit, then its coefficients rounded to double one at a time, lowest order
    first (p0, q1, p1, q2, ...), re-fitting the free ones after each rounding so that they absorb
    the rounding errors.  Returns (p, q as doubles, unrounded max error, levelled ratio)."""
    p, q, emax0, ratio0, ref = remez(grid, n, m)
    order = []
    for k in range(max(n + 1, m + 1)):
        if k <= n:
            order.append(("p", k))
        if 1 <= k + 1 <= m:
            order.append(("q", k + 1))
    fixp, fixq = {}, {}
    for kind, i in order:
        if kind == "p":
            fixp[i] = mpf(d(p[i]))
        else:
            fixq[i] = mpf(d(q[i - 1]))
        if len(fixp) + len(fixq) < n + 1 + m:
            try:
                p, q, _, _, ref = remez(grid, n, m, fixp, fixq, start=(ref, q))
            except RuntimeError:  # keep the earlier fit for the remaining coefficients
                pass
    return [d(fixp[i]) for i in range(n + 1)], [d(fixq[j]) for j in range(1, m + 1)], emax0, ratio0


def check_rounded(g, w, a, b, p, q, npts=6000):
    """Max weighted error of the fit with its coefficients rounded to double."""
    pr = [mpf(d(c)) for c in p]
    qr = [mpf(d(c)) for c in q]
    T = cheb_grid(a, b, npts)
    return max(abs(w(t) * (rat(pr, qr, t) - g(t))) for t in T)


def c_horner(cs, var):
    """C text of the Horner form c0 + var * (c1 + var * (...)), with exact literals."""
    s = hexd(cs[-1])
    for c in reversed(cs[:-1]):
        inner = "(%s)" % s if ("+" in s or "*" in s) else s
        s = "%s + %s * %s" % (hexd(c), var, inner)
    return s


def fit(name, what, g, w, a, b, n, m, var="z"):
    p, q, emax, ratio = remez_rounded(sample(g, w, a, b), n, m)
    er = check_rounded(g, w, a, b, p, q)
    print("/* %s: %s\n * on [%s, %s], type (%d, %d); max weighted error 2^%.1f (levelled to %.1e), "
          "2^%.1f with the rounded coefficients */"
          % (name, what, mp.nstr(mpf(a), 6), mp.nstr(mpf(b), 6), n, m,
             float(mp.log(emax, 2)), float(ratio - 1), float(mp.log(er, 2))))
    print("P = %s" % c_horner([d(c) for c in p], var))
    if q:
        print("Q = 1.0 + %s * (%s)" % (var, c_horner([d(c) for c in q], var)))
    print()


# --- the functions fitted ----------------------------------------------------------------------

def odd_tail(F, c3):
    """(F(x) - x) / x^3 as a function of z = x^2 (c3 at z = 0), weight x^3 / F(x)."""
    def g(z):
        if z == 0:
            return mpf(c3)
        x = mp.sqrt(z)
        return (F(x) - x) / x ** 3

    def w(z):
        if z == 0:
            return mpf(0)
        x = mp.sqrt(z)
        return x ** 3 / abs(F(x))
    return g, w


def erfcx(x):
    return mp.exp(x * x) * mp.erfc(x)


def main():
    print("/* generated by scripts/fncoef/hyp_erf.py (mpmath %s) */\n" % mpmath.__version__)

    # fn_hyp.h
    g, w = odd_tail(mp.sinh, mpf(1) / 6)
    fit("SINH", "sinh(x) = x + x^3 P(z), z = x^2", g, w, 0, 1, 6, 0)

    def gc(z):
        return mpf(1) / 24 if z == 0 else (mp.cosh(mp.sqrt(z)) - 1 - z / 2) / z ** 2
    fit("COSH", "cosh(x) = 1 + z/2 + z^2 P(z), z = x^2", gc, lambda z: z * z / mp.cosh(mp.sqrt(z)),
        0, 1, 5, 0)

    g, w = odd_tail(mp.tanh, -mpf(1) / 3)
    fit("TANH", "tanh(x) = x + x^3 P(z)/Q(z), z = x^2 (|x| < 0.4)", g, w, 0, mpf("0.16"), 2, 3)

    g, w = odd_tail(mp.asinh, -mpf(1) / 6)
    fit("ASINH", "asinh(x) = x + x^3 P(z)/Q(z), z = x^2 (|x| < 0.7)", g, w, 0, mpf("0.49"), 5, 5)

    g, w = odd_tail(mp.atanh, mpf(1) / 3)
    fit("ATANH", "atanh(x) = x + x^3 P(z)/Q(z), z = x^2 (|x| < 0.4)", g, w, 0, mpf("0.16"), 4, 4)

    def ga(t):
        return -mpf(1) / 12 if t == 0 else (mp.acosh(1 + t) / mp.sqrt(2 * t) - 1) / t

    def wa(t):
        return mpf(0) if t == 0 else t / (mp.acosh(1 + t) / mp.sqrt(2 * t))
    fit("ACOSH", "acosh(1 + t) = sqrt(2t) (1 + t P(t)/Q(t)) (x = 1 + t < 2)", ga, wa, 0, 1, 5, 5,
        var="t")

    # log(a + sqrt(a^2 +- 1)) = log(2a) + log((1 + sqrt(1 +- u)) / 2), u = 1/a^2 <= 1/4
    def gds(u):
        return mpf(1) / 4 if u == 0 else mp.log((1 + mp.sqrt(1 + u)) / 2) / u

    def gdc(u):
        return -mpf(1) / 4 if u == 0 else mp.log((1 + mp.sqrt(1 - u)) / 2) / u
    fit("ASINH_D", "asinh(a) = log(2a) + u P(u)/Q(u), u = 1/a^2 (a >= 2), relative to asinh(a)",
        gds, lambda u: mpf(0) if u == 0 else u / mp.asinh(1 / mp.sqrt(u)), 0, mpf(1) / 4, 4, 4,
        var="u")
    fit("ACOSH_D", "acosh(a) = log(2a) + u P(u)/Q(u), u = 1/a^2 (a >= 2), relative to acosh(a)",
        gdc, lambda u: mpf(0) if u == 0 else u / mp.acosh(1 / mp.sqrt(u)), 0, mpf(1) / 4, 5, 5,
        var="u")

    # fn_erf.h
    efx = 2 / mp.sqrt(mp.pi) - 1

    def gs(z):
        if z == 0:
            return -2 / (3 * mp.sqrt(mp.pi))
        x = mp.sqrt(z)
        return (mp.erf(x) / x - 1 - efx) / z

    def ws(z):  # x z relative to erf(x) and, below x = 0.46875, to erfc(x)
        if z == 0:
            return mpf(0)
        x = mp.sqrt(z)
        return x * z / (min(mp.erf(x), mp.erfc(x)) if x <= mpf("0.46875") else mp.erf(x))
    fit("ERF_S", "erf(x) = x + x (EFX + z P(z)/Q(z)), z = x^2, EFX = 2/sqrt(pi) - 1 "
        "(|x| < 0.46875; erfc = 1 - x - x (EFX + z P/Q) for -0.5 < x < 0.46875)",
        gs, ws, 0, mpf("0.25"), 4, 4)

    sqrtpi = mp.sqrt(mp.pi)
    fit("ERFC_A1", "1/erfcx(x) = 0.9375 + 1.4375 x + P(x)/Q(x), relative to 1/erfcx",
        lambda x: 1 / erfcx(x) - mpf("0.9375") - mpf("1.4375") * x, erfcx, mpf("0.46875"),
        mpf("1.25"), 6, 6, var="x")
    fit("ERFC_A2", "1/erfcx(x) = 0.6875 + 1.625 x + P(x)/Q(x), relative to 1/erfcx",
        lambda x: 1 / erfcx(x) - mpf("0.6875") - mpf("1.625") * x, erfcx, mpf("1.25"), 3, 6, 6,
        var="x")
    fit("ERFC_B", "1/erfcx(x) = sqrt(pi) x + P(x)/Q(x), relative to 1/erfcx (erfc = 0 past 27.226)",
        lambda x: 1 / erfcx(x) - sqrtpi * x, erfcx, 3, mpf("27.25"), 6, 7, var="x")

    print("/* constants */")
    hi, lo = dd(sqrtpi)
    print("const double SQRTPI_HI = %s, SQRTPI_LO = %s;" % (hexd(hi), hexd(lo)))
    hi, lo = dd(efx)
    print("const double EFX_HI = %s, EFX_LO = %s; /* 2/sqrt(pi) - 1 */" % (hexd(hi), hexd(lo)))
    hi, lo = dd(2 / sqrtpi)
    print("const double TWO_SQRTPI_HI = %s, TWO_SQRTPI_LO = %s; /* 2/sqrt(pi) */"
          % (hexd(hi), hexd(lo)))


if __name__ == "__main__":
    main()
