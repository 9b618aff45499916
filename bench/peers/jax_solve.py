# jax_solve.py — the JAX peer of the GPU Newton benchmark: B small nonlinear systems F(x; p) = 0
# (kin_steady, n = 32, rob3, n = 3, Bratu on 15 and 48 points; bench/programs/*.db, by hand in
# bench/solve_systems.c)
# solved by jit(vmap(newton)), newton being a per-point damped Newton loop as a JAX user writes it:
# lax.while_loop over iterations, F and J = jacfwd(F) in one forward pass, dx = solve(J, -F), a
# backtracking line search on phi = ||F||^2 / 2 (Armijo c = 1e-4, halving, at most 40 reductions;
# a lax.while_loop).  Stopping tests as dual_newton's defaults: converged when ||F|| == 0, or when
# the full step has ||dx|| <= sqrt(eps) ||x|| (that step is taken without the line search); at most
# 50 steps.  No trust-region fallback (dual_newton has one).  Under vmap both loops run until the
# batch's last point is done; finished points are frozen.
#
#   python3 bench/peers/jax_solve.py --dir DIR [--systems kin_steady,rob3,bratu15,bratu48] [--batches 1e4,1e5,1e6]
#                                    [--reps 7] [--device gpu|cpu]
#
# DIR holds, per system, raw little-endian float64 files, row-major, written by the C benchmark:
#   solve_<system>_p.f64   [Bmax][np]  the cells' parameters (kin_steady: s[32]; rob3: k1 k2 k3 s)
#   solve_<system>_x0.f64  [Bmax][n]   the starting points
#   solve_<system>_ref.f64 [Bmax][n]   dualbatch's solutions (the agreement check)
# Bmax = size of x0 / (8 n); a run with batch B takes the first B rows.  Prints an INFO line, then
# per (system, B) one tab-separated line (median of --reps calls after compile + 2 warm-ups; inputs
# on the device before timing, only the jitted call timed):
#   ROW <system> <B> jax-newton <gpu|cpu> <seconds_per_call> <cells_per_s> <converged>
#       <mean_iters> <max_rel_diff>
# max_rel_diff: over converged points and components, |x - ref| / max(|ref|, 1e-300).  A batch that
# does not fit prints "oom" (other failures "error") in the cells_per_s column, "-" elsewhere.
import argparse
import os
import statistics
import sys
import time

import numpy as np

# Let one big batch use most of the GPU (JAX's default pool is 75% of it); the caller may override.
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

MAX_ITER, MAX_REDUCTIONS, ARMIJO, X_REL = 50, 40, 1e-4, 1.4901161193847656e-08

# kin_steady: reaction r consumes a and b, makes 2 of c, at rate k_r exp(-E_r x31) x_a x_b
RXN = [(r % 32, (7 * r + 3) % 32, (13 * r + 5) % 32, 0.1 * (r % 5), 1 + 0.01 * r)
       for r in range(64)]


def kin_steady(x, s):
    """F(x; s), n = 32: the reactions unrolled at trace time into one fusible elementwise graph,
    the updates in the order of solve_systems.c."""
    f = [s[i] - 0.1 * x[i] for i in range(32)]
    for a, b, c, e, k in RXN:
        rate = k * jnp.exp(-e * x[31]) * x[a] * x[b]
        f[a] = f[a] - rate
        f[b] = f[b] - rate
        f[c] = f[c] + 2 * rate
    return jnp.stack(f)


def rob3(y, p):
    """Robertson's kinetics in a flow reactor, n = 3, p = (k1, k2, k3, s)."""
    k1, k2, k3, s = p[0], p[1], p[2], p[3]
    return jnp.stack([s - k1 * y[0] + k3 * y[1] * y[2] - 0.1 * y[0],
                      k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2] - 0.1 * y[1],
                      k2 * y[1] ** 2 - 0.1 * y[2]])


def bratu(n):
    """The Bratu problem on n interior points, p = (lam,): (x_{i-1} - 2 x_i + x_{i+1}) (n + 1)^2
    + lam exp(x_i), x_0 = x_{n+1} = 0."""
    h2 = float((n + 1) ** 2)

    def F(x, p):
        z = jnp.zeros(1, x.dtype)
        left, right = jnp.concatenate([z, x[:-1]]), jnp.concatenate([x[1:], z])
        return (left - 2 * x + right) * h2 + p[0] * jnp.exp(x)
    return F


SYSTEMS = {"kin_steady": (kin_steady, 32, 32), "rob3": (rob3, 3, 4),
           "bratu15": (bratu(15), 15, 1), "bratu48": (bratu(48), 48, 1)}


def newton(F, x0, p):
    """One point: (x, converged, steps)."""
    def with_value(x):
        f = F(x, p)
        return f, f
    fjac = jax.jacfwd(with_value, has_aux=True)  # J and F in one forward pass

    def phi(x):
        f = F(x, p)
        return 0.5 * jnp.dot(f, f)

    def step(state):
        x, it, _, _ = state
        J, f = fjac(x)
        fn = jnp.linalg.norm(f)
        dx = jnp.linalg.solve(J, -f)
        ok = jnp.isfinite(fn) & jnp.all(jnp.isfinite(J)) & jnp.all(jnp.isfinite(dx))
        zero = fn == 0
        active = ok & ~zero & (it < MAX_ITER)
        last = jnp.linalg.norm(dx) <= X_REL * jnp.linalg.norm(x)  # full step, then done
        phi0 = 0.5 * fn * fn

        def trial(ls):  # one backtracking step: accept alpha or halve it
            alpha, k, _ = ls
            acc = phi(x + alpha * dx) <= phi0 - 2 * ARMIJO * alpha * phi0  # phi'(0) = -2 phi0
            return (jnp.where(acc, alpha, 0.5 * alpha), k + jnp.where(acc, 0, 1), acc)

        alpha, _, acc = lax.while_loop(lambda ls: ~ls[2] & (ls[1] <= MAX_REDUCTIONS), trial,
                                       (jnp.float64(1.0), jnp.int32(0), ~active | last))
        take = active & acc
        x = jnp.where(take, x + alpha * dx, x)
        return x, it + take.astype(jnp.int32), ~take | last, zero | (take & last)

    x, it, _, conv = lax.while_loop(lambda s: ~s[2], step,
                                    (x0, jnp.int32(0), jnp.bool_(False), jnp.bool_(False)))
    return x, conv, it


def solver(system):
    F = SYSTEMS[system][0]
    return jax.jit(jax.vmap(lambda x0, p: newton(F, x0, p)))


def read(d, name, cols, rows):
    return np.fromfile(os.path.join(d, name), "<f8", rows * cols).reshape(rows, cols)


def run_one(d, system, b, reps, device):
    """(seconds per call, converged count, mean steps, max rel diff or None): the first b cells."""
    _, n, np_ = SYSTEMS[system]
    x0 = jax.device_put(read(d, "solve_%s_x0.f64" % system, n, b), device)
    p = jax.device_put(read(d, "solve_%s_p.f64" % system, np_, b), device)
    fn = solver(system)
    x, conv, it = jax.block_until_ready(fn(x0, p))  # compile and first call
    x, conv, it = np.asarray(x), np.asarray(conv), np.asarray(it)
    for _ in range(2):
        jax.block_until_ready(fn(x0, p))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(x0, p))
        times.append(time.perf_counter() - t0)
    diff = None
    ref_name = os.path.join(d, "solve_%s_ref.f64" % system)
    if os.path.exists(ref_name) and conv.any():
        ref = read(d, "solve_%s_ref.f64" % system, n, b)[conv]
        diff = float((np.abs(x[conv] - ref) / np.maximum(np.abs(ref), 1e-300)).max())
    return statistics.median(times), int(conv.sum()), float(it.mean()), diff


def main():
    ap = argparse.ArgumentParser(description="JAX peer of the dualbatch GPU Newton benchmark")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--systems", default="kin_steady,rob3,bratu15,bratu48")
    ap.add_argument("--batches", default="1e4,1e5,1e6")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    args = ap.parse_args()
    device = jax.devices(args.device)[0]
    print("INFO\tjax-newton\tjax %s, %s (%s)"
          % (jax.__version__, device.device_kind, device.platform), flush=True)
    num = lambda v: "-" if v is None else "%.6g" % v
    for system in args.systems.split(","):
        n = SYSTEMS[system][1]
        name = os.path.join(args.dir, "solve_%s_x0.f64" % system)
        if not os.path.exists(name):
            print("jax_solve: %s: %s missing, skipped" % (system, name), file=sys.stderr)
            continue
        bmax = os.path.getsize(name) // (8 * n)
        for b in (int(float(s)) for s in args.batches.split(",")):
            if b > bmax:
                print("jax_solve: %s: B = %d > %d cells in %s, skipped"
                      % (system, b, bmax, args.dir), file=sys.stderr)
                continue
            head = "ROW\t%s\t%d\tjax-newton\t%s\t" % (system, b, args.device)
            try:
                sec, conv, iters, diff = run_one(args.dir, system, b, args.reps, device)
                vals = [num(sec), num(b / sec), str(conv), "%.4g" % iters, num(diff)]
                print(head + "\t".join(vals), flush=True)
            except Exception as e:  # noqa: BLE001  one size must not end the run
                msg = str(e)
                oom = "RESOURCE_EXHAUSTED" in msg or "out of memory" in msg.lower()
                print("jax_solve: %s B = %d: %s" % (system, b, (msg.splitlines() or [repr(e)])[0]),
                      file=sys.stderr)
                print(head + "-\t%s\t-\t-\t-" % ("oom" if oom else "error"), flush=True)


if __name__ == "__main__":
    main()
