#!/usr/bin/env python3
"""
trig.py — coefficients and constants of src/dual/fn_trig.h and src/dual/fn_atrig.h.

Every polynomial is a weighted minimax (Remez exchange) fit computed with mpmath at 60 digits,
then rounded to double one coefficient at a time, lowest order first, re-fitting the remaining
coefficients after each rounding so that later coefficients absorb the rounding error of the
earlier ones.  The weight makes the fitted error the relative error of the final function value.
The split constants (pi/2 in 33-bit pieces, double-double values of pi, pi/2, pi/4 and the atan
breakpoints) and the bits of 2/pi used by the Payne–Hanek reduction are computed at high
precision here as well.  Prints C literals (hexadecimal floats, exact) that the headers paste in.

Usage: python3 scripts/fncoef/trig.py                (about 15 s; needs mpmath >= 1.3)
       python3 scripts/fncoef/trig.py --hard-cases   (the reduction test table of test_fn_trig.c)
"""
import sys

import mpmath
from mpmath import mp, mpf

mp.dps = 60


# --- rounding and printing ---------------------------------------------------------------------

def rnd(x, bits=53):
    """x rounded to nearest with `bits` significant bits (ties to even), as an mpf."""
    if x == 0:
        return mpf(0)
    with mpmath.workprec(bits):
        return +mpf(x)


def d(x):
    """x rounded to the nearest double, as a Python float (exact)."""
    return float(rnd(x, 53))


def hexd(x):
    """A C99/C++17 hexadecimal floating literal of the double x, e.g. -0x1.5555555555555p-3."""
    x = float(x)
    if x == 0.0:
        return "0x0p+0"
    s = x.hex()  # like '-0x1.5555555555555p-3'
    mant, exp = s.split("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return "%sp%d" % (mant, int(exp))


def dd(x):
    """(hi, lo) double-double of x."""
    hi = d(x)
    lo = d(mpf(x) - mpf(hi))
    return hi, lo


# --- Remez exchange ----------------------------------------------------------------------------

def cheb_grid(a, b, n):
    """n Chebyshev points of the first kind on [a, b] (interior, denser near the ends)."""
    a, b = mpf(a), mpf(b)
    return [(a + b) / 2 - (b - a) / 2 * mpmath.cos(mp.pi * (2 * i + 1) / (2 * n)) for i in range(n)]


def polyval(cs, p0, z):
    """sum cs[j] z^(p0 + j)."""
    s = mpf(0)
    for c in reversed(cs):
        s = s * z + c
    return s * z ** p0


def remez(grid, fvals, wvals, p0, m, iters=40):
    """Minimise max |w (p - f)| over the grid, p = sum_{j<m} c_j z^(p0+j).  Returns (c, err)."""
    n = len(grid)
    # initial reference: m+1 grid points spread like Chebyshev nodes
    ref = sorted(set(int(round((n - 1) * (1 - mpmath.cos(mp.pi * (i + 0.5) / (m + 1))) / 2))
                     for i in range(m + 1)))
    assert len(ref) == m + 1
    best = None
    for _ in range(iters):
        A = mpmath.matrix(m + 1, m + 1)
        rhs = mpmath.matrix(m + 1, 1)
        for i, k in enumerate(ref):
            z = grid[k]
            for j in range(m):
                A[i, j] = wvals[k] * z ** (p0 + j)
            A[i, m] = (-1) ** i
            rhs[i] = wvals[k] * fvals[k]
        sol = mpmath.lu_solve(A, rhs)
        cs = [sol[j] for j in range(m)]
        lev = abs(sol[m])
        err = [wvals[k] * (polyval(cs, p0, grid[k]) - fvals[k]) for k in range(n)]
        emax = max(abs(e) for e in err)
        best = (cs, emax)
        if emax - lev <= emax * mpf("1e-4"):
            break
        # new reference: one extremum per sign run, then keep m+1 alternating ones
        runs = []
        k = 0
        while k < n:
            sgn = err[k] >= 0
            j = k
            km = k
            while j < n and (err[j] >= 0) == sgn:
                if abs(err[j]) > abs(err[km]):
                    km = j
                j += 1
            runs.append(km)
            k = j
        while len(runs) > m + 1:
            # drop the smaller end, keeping the global maximum
            if abs(err[runs[0]]) < abs(err[runs[-1]]):
                runs.pop(0)
            else:
                runs.pop()
        if len(runs) < m + 1:
            break  # degenerate (error below the grid's resolution)
        ref = runs
    return best


def fit(name, f, w, a, b, p0, m, npts=1500):
    """Fit p(z) = sum_{j<m} c_j z^(p0+j) to f on [a, b] with weight w, rounding the c_j to doubles
    one at a time (re-fitting the rest).  Returns the list of doubles and log2 of the max weighted
    error of the rounded polynomial (measured on a denser grid)."""
    grid = cheb_grid(a, b, npts)
    fv = [f(z) for z in grid]
    wv = [w(z) for z in grid]
    fixed = []
    for j in range(m):
        tv = [fv[k] - polyval(fixed, p0, grid[k]) for k in range(npts)]
        cs, _ = remez(grid, tv, wv, p0 + j, m - j)
        fixed.append(mpf(d(cs[0])))
    # error of the rounded polynomial on a finer grid
    g2 = cheb_grid(a, b, 4 * npts)
    e = max(abs(w(z) * (polyval(fixed, p0, z) - f(z))) for z in g2)
    print("/* %s: %d coefficients on [%s, %s], max weighted (relative) error 2^%.1f */"
          % (name, m, mpmath.nstr(a, 6), mpmath.nstr(b, 6), float(mpmath.log(e, 2))))
    return [float(c) for c in fixed], e


def emit(prefix, cs):
    for j, c in enumerate(cs):
        print("const double %s%d = %s;" % (prefix, j, hexd(c)))


# --- targets (z = x^2; series near z = 0 avoid the cancellation) -------------------------------

def odd_tail(fun, c3):
    """(fun(x) - x) / x^3 as a function of z = x^2, and the weight x^3 / fun(x)."""
    def f(z):
        if z < mpf("1e-30"):
            return c3
        x = mpmath.sqrt(z)
        return (fun(x) - x) / (z * x)

    def w(z):
        x = mpmath.sqrt(z)
        return z * x / fun(x)
    return f, w


def main():
    print("/* generated by scripts/fncoef/trig.py (mpmath %s) */" % mpmath.__version__)
    sys.stdout.flush()

    # sin(x) = x + x^3 S(x^2), |x| <= pi/4 (+ margin for the rounded quadrant)
    rmax = mpf("0.7854")
    f, w = odd_tail(mpmath.sin, mpf(-1) / 6)
    S, _ = fit("sin: (sin x - x)/x^3 = S(z)", f, w, mpf(0), rmax ** 2, 0, 7)
    emit("S", S)

    # cos(x) = 1 - x^2/2 + x^4 C(x^2)
    def fc(z):
        if z < mpf("1e-30"):
            return mpf(1) / 24
        x = mpmath.sqrt(z)
        return (mpmath.cos(x) - 1 + z / 2) / (z * z)

    def wc(z):
        return z * z / mpmath.cos(mpmath.sqrt(z))
    C, _ = fit("cos: (cos x - 1 + x^2/2)/x^4 = C(z)", fc, wc, mpf(0), rmax ** 2, 0, 6)
    emit("C", C)

    # tan(x) = x + x^3 T(x^2), |x| <= 0.55 (beyond: tan(pi/4 - y) with |y| <= 0.2354)
    f, w = odd_tail(mpmath.tan, mpf(1) / 3)
    T, _ = fit("tan: (tan x - x)/x^3 = T(z)", f, w, mpf(0), mpf("0.5501") ** 2, 0, 12)
    emit("T", T)

    # atan(t) = t + t^3 A(t^2), |t| <= 7/16
    f, w = odd_tail(mpmath.atan, mpf(-1) / 3)
    A, _ = fit("atan: (atan t - t)/t^3 = A(z)", f, w, mpf(0), mpf("0.4376") ** 2, 0, 12)
    emit("A", A)

    # asin(s) = s + s^3 P(s^2), |s| <= 1/2
    f, w = odd_tail(mpmath.asin, mpf(1) / 6)
    P, _ = fit("asin: (asin s - s)/s^3 = P(z)", f, w, mpf(0), mpf("0.5") ** 2, 0, 13)
    emit("P", P)

    # --- constants ---
    print("/* constants */")
    print("const double INVPIO2 = %s; /* 2/pi */" % hexd(d(2 / mp.pi)))
    rem = mp.pi / 2
    for i in range(1, 4):
        c = rnd(rem, 33)  # 33 bits: k * c is exact for |k| < 2^20
        print("const double PIO2_%d = %s; /* 33-bit piece %d of pi/2 */" % (i, hexd(float(c)), i))
        rem -= c
    print("const double PIO2_4 = %s; /* piece 4 of pi/2 (pi/2 - sum of the pieces: 2^%.0f) */"
          % (hexd(d(rem)), float(mpmath.log(abs(rem - d(rem)), 2))))
    for name, v in [("PIO2", mp.pi / 2), ("PIO4", mp.pi / 4), ("PI", mp.pi),
                    ("PI3O4", 3 * mp.pi / 4), ("ATAN_0P5", mpmath.atan(mpf(1) / 2)),
                    ("ATAN_1P5", mpmath.atan(mpf(3) / 2)),
                    ("PI_M_ATAN_0P5", mp.pi - mpmath.atan(mpf(1) / 2)),
                    ("PI_M_ATAN_1P5", mp.pi - mpmath.atan(mpf(3) / 2))]:
        hi, lo = dd(v)
        print("const double %s_HI = %s, %s_LO = %s;" % (name, hexd(hi), name, hexd(lo)))

    # Veltkamp splits (26 + 26 bits) of the constants that enter Dekker's exact products
    print("/* splits c = c_H + c_L of the leading coefficients and of pi/2 */")
    for name, c in [("S0", S[0]), ("T0", T[0]), ("A0", A[0]), ("P0", P[0]),
                    ("PIO2_HI", dd(mp.pi / 2)[0])]:
        cc = 134217729.0 * c  # 2^27 + 1, Python floats round like C doubles
        h = cc - (cc - c)
        print("const double %sH = %s, %sL = %s;" % (name, hexd(h), name, hexd(c - h)))

    # --- bits of 2/pi: word j (j >= 1) holds bits 64(j-1)+1 .. 64j after the binary point;
    #     word 0 is zero padding so that the window for |x| >= 2^-10 never starts before it.
    nwords = 20
    with mpmath.workprec(64 * nwords + 128):
        v = 2 / mpmath.pi
        words = [0] + [int(mpmath.floor(v * mpf(2) ** (64 * j))) % (1 << 64) for j in range(1, nwords)]
    print("#define DUAL_TRIG_2OPI_WORDS \\")
    lines = []
    for i in range(0, nwords, 3):
        lines.append("  " + ", ".join("0x%016xULL" % wd for wd in words[i:i + 3]))
    print(", \\\n".join(lines))


def hard_cases():
    """Doubles x = m 2^e (2^52 <= m < 2^53) closest to a multiple of pi/2, one per binade, from
    the continued fraction of frac(2^(e+1)/pi) (convergents, semiconvergents and multiples of the
    last convergent below 2^52 as candidate m): the worst cases for argument reduction.  Prints a
    C initializer {m, e} for tests/test_fn_trig.c: the 24 closest overall, the 16 closest below
    2^20 (Cody-Waite path) and the 8 closest in [2^20, 2^60)."""
    mp.prec = 1500
    two_opi = 2 / mp.pi
    lo, hi = 1 << 52, 1 << 53
    res = []
    for e in range(-52, 972):
        beta = two_opi * mpf(2) ** e  # x / (pi/2) = m beta
        x = beta - mpmath.floor(beta)
        p0, q0, p1, q1 = 1, 0, 0, 1
        cands = set()
        for _ in range(400):
            if x == 0:
                break
            a = int(mpmath.floor(1 / x))
            x = 1 / x - a
            if q0 + q1 < hi:  # semiconvergents q0 + j q1, j = 1 .. a
                jlo = max(1, (lo - q0 + q1 - 1) // q1)
                for j in range(jlo, min(a, (hi - 1 - q0) // q1) + 1)[:64]:
                    cands.add(q0 + j * q1)
            if q1 < lo:
                c = (lo + q1 - 1) // q1
                cands.update(cc * q1 for cc in range(c, c + 3) if cc * q1 < hi)
            p0, q0, p1, q1 = p1, q1, a * p1 + p0, a * q1 + q0
            if lo <= q1 < hi:
                cands.add(q1)
            if q1 >= hi:
                break
        best = None
        for m in cands:
            v = m * beta
            dist = abs(v - mpmath.nint(v)) * mp.pi / 2
            if best is None or dist < best[0]:
                best = (dist, m, e)
        if best:
            res.append(best)
    res.sort()
    pick = res[:24]
    pick += [r for r in res if r[2] <= 20 - 53 and r not in pick][:16]
    pick += [r for r in res if 20 - 53 < r[2] <= 60 - 53 and r not in pick][:8]
    for dist, m, e in pick:
        print("    {%dULL, %d}, /* |x mod pi/2| = 2^%.2f */" % (m, e, float(mpmath.log(dist, 2))))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--hard-cases":
        hard_cases()
    else:
        main()
