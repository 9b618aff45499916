# jax_solve_check.py — a local self-check of jax_solve.py on the CPU.  Writes the input files of
# the GPU Newton benchmark for small batches into a temporary directory the way the C benchmark
# does: the cells of bench/solve_systems.c (splitmix64 unit(b, k), kin_cell, rob_cell), their
# steady states solved from the rough guess (here by a numpy Newton on the residuals and hand
# Jacobians of solve_systems.c, independent of the JAX code), then each component moved by up to
# +-10% (bench_solve.c's perturbation).  The unperturbed steady states are the reference.  Runs
#   python3 bench/peers/jax_solve.py --dir TMP --device cpu --batches 1e3,1e4 --reps 3
# and checks that every point converged with max_rel_diff <= 1e-8.  Exits nonzero on a failure.
#   python3 bench/peers/jax_solve_check.py [--batches 1e3,1e4]
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

U = np.uint64
G, M1, M2 = U(0x9E3779B97F4A7C15), U(0xBF58476D1CE4E5B9), U(0x94D049BB133111EB)


def unit(b, k):
    """solve_systems.c's unit(b, k) for an array of cells b (uint64 arithmetic wraps mod 2^64)."""
    z = b * G + np.full_like(b, k) * M1 + M2
    z = (z ^ (z >> U(30))) * M1
    z = (z ^ (z >> U(27))) * M2
    z ^= z >> U(31)
    return (z >> U(11)).astype(np.float64) * 2.0 ** -53


def kin_cell(b):
    s = np.stack([0.05 + 0.1 * unit(b, i) for i in range(32)], 1)
    x0 = np.stack([0.3 * (0.7 + 0.6 * unit(b, 100 + i)) for i in range(32)], 1)
    return s, x0


def rob_cell(b):
    u = [unit(b, k) for k in range(7)]
    p = np.stack([0.04 * (0.5 + 1.5 * u[0]), 3e7 * (0.5 + 1.5 * u[1]),
                  1e4 * (0.5 + 1.5 * u[2]), 0.5 + u[3]], 1)
    m = p[:, 3] / 0.1
    y0 = np.stack([0.8 * m * (0.8 + 0.4 * u[4]), 1e-5 * (0.5 + u[5]),
                   0.2 * m * (0.8 + 0.4 * u[6])], 1)
    return p, y0


def kin_residual(x, s):
    """F and J of solve_systems.c's kin_residual, cell-minor ([32][B]) for contiguous updates."""
    x, f = x.T, (s - 0.1 * x).T
    J = np.zeros((32, 32, x.shape[1]))
    J[range(32), range(32)] = -0.1
    for r in range(64):
        a, b, c, E = r % 32, (7 * r + 3) % 32, (13 * r + 5) % 32, 0.1 * (r % 5)
        k = (1 + 0.01 * r) * np.exp(-E * x[31])
        rate = k * x[a] * x[b]
        f[a] -= rate
        f[b] -= rate
        f[c] += 2 * rate
        for j, d in ((a, k * x[b]), (b, k * x[a]), (31, -E * rate)):
            J[a, j] -= d
            J[b, j] -= d
            J[c, j] += 2 * d
    return f.T, J.transpose(2, 0, 1)


def rob_residual(y, p):
    k1, k2, k3, s = p.T
    y0, y1, y2 = y.T
    f = np.stack([s - k1 * y0 + k3 * y1 * y2 - 0.1 * y0,
                  k1 * y0 - k2 * y1 * y1 - k3 * y1 * y2 - 0.1 * y1, k2 * y1 * y1 - 0.1 * y2], 1)
    z = np.zeros_like(y0)
    J = np.stack([np.stack([-k1 - 0.1, k3 * y2, k3 * y1], 1),
                  np.stack([k1, -2 * k2 * y1 - k3 * y2 - 0.1, -k3 * y1], 1),
                  np.stack([z, 2 * k2 * y1, z - 0.1], 1)], 1)
    return f, J


def steady(res, x, p):
    """Damped Newton (halving until ||F|| decreases) on every cell, until every step is at the
    rounding level: the roots to full precision."""
    for _ in range(60):
        f, J = res(x, p)
        fn = np.linalg.norm(f, axis=1)
        dx = np.linalg.solve(J, -f[..., None])[..., 0]
        big = np.linalg.norm(dx, axis=1) > 1e-14 * np.linalg.norm(x, axis=1)
        if not big.any():
            x = x + dx
            break
        alpha = np.ones(len(x))
        for _ in range(40):
            bad = big & (np.linalg.norm(res(x + alpha[:, None] * dx, p)[0], axis=1) >= fn)
            if not bad.any():
                break
            alpha[bad] *= 0.5
        x = x + alpha[:, None] * dx
    f = res(x, p)[0]
    assert np.all(np.linalg.norm(f, axis=1) <= 1e-12 * np.abs(p).max(axis=1)), "numpy Newton failed"
    return x


def perturb(x, eps=0.1):
    """bench_solve.c: x0[b n + j] *= 1 + eps (2 u - 1), u from a hash of the index b n + j."""
    z = np.arange(x.size, dtype=np.uint64) * G
    z = (z ^ (z >> U(29))) * M1
    z ^= z >> U(32)
    u = (z >> U(11)).astype(np.float64) * 2.0 ** -53
    return x * (1 + eps * (2 * u - 1)).reshape(x.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", default="1e3,1e4")
    args = ap.parse_args()
    bmax = max(int(float(s)) for s in args.batches.split(","))
    cells = np.arange(bmax, dtype=np.uint64)
    with tempfile.TemporaryDirectory() as d:
        for name, cell, res in (("kin_steady", kin_cell, kin_residual),
                                ("rob3", rob_cell, rob_residual)):
            p, rough = cell(cells)
            ref = steady(res, rough, p)
            for suffix, a in (("p", p), ("x0", perturb(ref)), ("ref", ref)):
                a.astype("<f8").tofile(os.path.join(d, "solve_%s_%s.f64" % (name, suffix)))
        here = os.path.dirname(os.path.abspath(__file__))
        cmd = [sys.executable, os.path.join(here, "jax_solve.py"),
               "--dir", d, "--device", "cpu", "--batches", args.batches, "--reps", "3"]
        out = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    rows = [l.split("\t") for l in out.stdout.splitlines() if l.startswith("ROW\t")]
    fails = [r for r in rows
             if r[6] == "oom" or r[6] == "error" or int(r[7]) != int(r[2]) or float(r[9]) > 1e-8]
    if out.returncode or len(rows) != 2 * len(args.batches.split(",")) or fails:
        print("jax_solve_check: FAILED (rc %d, %d ROW lines, failing: %s)"
              % (out.returncode, len(rows), [r[1:3] for r in fails]))
        sys.exit(1)
    print("jax_solve_check: OK (every cell converged, max_rel_diff <= 1e-8)")


if __name__ == "__main__":
    main()
