# jax_peer.py — the JAX peer of the GPU benchmark: per-point values and FP64 Jacobians of the
# ba and kin workloads (BENCHMARKS.md "Workloads") with jit(vmap(jacfwd(f))), the value,
# gradient and Hessian of hess with jit(vmap(...)) of jax.hessian, and the gradient of grad
# (n = 1024, reverse mode) with jit(vmap(grad(f))), timed on one device.
#
#   python3 bench/peers/jax_peer.py --dir DIR [--workloads ba,kin,hess,grad]
#                                   [--batches 1e4,1e5,1e6,1e7] [--grad-batches 1e3,1e4,1e5]
#                                   [--reps 20] [--device gpu|cpu] [--kin-form loop|stoich]
#                                   [--hess-form both|hessian|aux]
#
# DIR holds the points written by the C benchmark (ba_x.f64, ba_feat.f64, kin_x.f64, hess_x.f64,
# grad_x.f64) and our library's results for the first K points (ba_ref.f64, kin_ref.f64,
# hess_ref.f64, grad_ref.f64; layouts in peer_common.py).  Prints an INFO line, then
# per (workload, B) one tab-separated line
#   ROW <workload> <B> jax device <seconds_per_call> <points_per_s> <max_rel_diff>
# (median of --reps calls after compile + 2 warm-up calls).  Diagnostics go to stderr.
# kin is traced either reaction by reaction (--kin-form loop, the default: one elementwise graph
# that XLA fuses) or as gathers and a product with the 32x64 stoichiometric matrix (stoich).
# hess returns f, the gradient and the full 16x16 Hessian per point, asked for in two ways, each
# timed by default (--hess-form both): tool "jax", one jitted function of x returning
# (f, g) = value_and_grad(f)(x) and H = jax.hessian(f)(x) (jacfwd over jacrev); tool "jax-aux",
# H = jacfwd(value_and_grad(f)) with f and g as its aux output (jax.hessian's own composition,
# the value and gradient computed once).
import os
import statistics
import time

import numpy as np

from peer_common import (A, B, C, E, K, S, SHAPES, arguments, batch_sizes, batches_to_run,
                         grad_max_rel_diff, hess_forms, hess_max_rel_diff, max_rel_diff,
                         read_inputs, timed_row)

# Let one big batch use most of the GPU (JAX's default pool is 75% of it); the caller may override.
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)


def ba(x, feat):
    """Reprojection residual r[2] of one observation, x = (cam[11], X[3], w): programs/ba.db."""
    rot, C, f, u, k1, k2 = x[0:3], x[3:6], x[6], x[7:9], x[9], x[10]
    X, w = x[11:14], x[14]
    d = X - C
    theta2 = jnp.sum(rot * rot)
    big = theta2 > 0
    theta = jnp.sqrt(jnp.where(big, theta2, 1.0))  # the unused branch stays finite at theta2 = 0
    ct, st = jnp.cos(theta), jnp.sin(theta)
    a = rot * (1 / theta)  # unit axis
    t = jnp.sum(a * d) * (1 - ct)
    rodrigues = d * ct + jnp.cross(a, d) * st + a * t
    first_order = d + jnp.cross(rot, d)
    xc = jnp.where(big, rodrigues, first_order)
    p = xc[0:2] / xc[2]
    s = p[0] * p[0] + p[1] * p[1]
    L = 1 + k1 * s + k2 * s * s
    return w * (p * L * f + u - feat)




def kin_loop(x):
    """Mass-action kinetics f[32], unrolled at trace time into one elementwise graph (fusible)."""
    f = [-0.1 * x[i] for i in range(32)]
    for r in range(64):
        rate = K[r] * jnp.exp(-E[r] * x[31]) * x[A[r]] * x[B[r]]
        f[A[r]] = f[A[r]] - rate
        f[B[r]] = f[B[r]] - rate
        f[C[r]] = f[C[r]] + 2 * rate
    return jnp.stack(f)


def kin_stoich(x):
    """The same kinetics as gathers and one product with the constant stoichiometric matrix."""
    rate = K * jnp.exp(-E * x[31]) * x[A] * x[B]
    return -0.1 * x + S @ rate


def hess_fn(x):
    """hess (programs/hess.db): Rosenbrock chain over x[0..15] plus log sum exp x, a scalar."""
    u = x[1:] - x[:-1] * x[:-1]
    v = 1 - x[:-1]
    return jnp.sum(100 * (u * u) + v * v) + jnp.log(jnp.sum(jnp.exp(x)))


def grad_fn(x):
    """grad (programs/grad.db): sum sin(x_i) x_(i+1 mod n) + log1p(sum x_i^2), a scalar."""
    return jnp.sum(jnp.sin(x) * jnp.roll(x, -1)) + jnp.log1p(jnp.sum(x * x))


def gradient_only(f):
    """x -> (grad f(x),): the gradient by reverse mode (jax.grad), as a one-element tuple so that
    measure() sees a tuple of per-point outputs as for the other workloads."""
    g = jax.grad(f)
    return lambda x: (g(x),)


def value_grad_hessian(f, form):
    """x -> (f(x), grad f(x), hessian f(x)) for a scalar f of one vector."""
    if form == "hessian":
        vg, hess = jax.value_and_grad(f), jax.hessian(f)

        def g(x):
            v, gr = vg(x)
            return v, gr, hess(x)

        return g

    def vg_aux(x):  # "aux": H = d/dx of the gradient, f and g carried along
        v, gr = jax.value_and_grad(f)(x)
        return gr, (v, gr)

    jac = jax.jacfwd(vg_aux, has_aux=True)

    def g(x):
        H, (v, gr) = jac(x)
        return v, gr, H

    return g


def values_and_jacobian(f):
    """x -> (f(x), df/dx) in one forward-mode pass: the value rides along as jacfwd's aux output."""
    def pair(*a):
        y = f(*a)
        return y, y

    jac = jax.jacfwd(pair, has_aux=True)

    def g(*a):
        J, y = jac(*a)
        return y, J

    return g




def measure(fn, args, reps, k):
    """Median seconds per call, and the first k points' (values, Jacobian) on the host."""
    out = jax.block_until_ready(fn(*args))  # compile and first call
    first = [np.asarray(o[:k]) for o in out]
    del out  # at most one result alive: kin's Jacobian at B = 1e7 is 82 GB
    for _ in range(2):
        jax.block_until_ready(fn(*args))
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
        del out
    return statistics.median(times), first


def run_one(wl, b, args, device, ref, form):
    n, _, m = SHAPES[wl]
    host = read_inputs(args.dir, wl, b)
    if wl == "hess":
        fn = jax.jit(jax.vmap(value_grad_hessian(hess_fn, form)))
    elif wl == "grad":
        fn = jax.jit(jax.vmap(gradient_only(grad_fn)))
    else:
        f = ba if wl == "ba" else (kin_loop if args.kin_form == "loop" else kin_stoich)
        fn = jax.jit(jax.vmap(values_and_jacobian(f)))
    xs = [jax.device_put(h, device) for h in host]
    del host
    k = 0 if ref is None else min(len(ref), b)
    sec, out = measure(fn, xs, args.reps, k)
    if not k:
        diff = None
    elif wl == "hess":
        diff = hess_max_rel_diff(*out, ref[:k], n)
    elif wl == "grad":
        diff = grad_max_rel_diff(*out, ref[:k], n)
    else:
        diff = max_rel_diff(*out, ref[:k], n, m)
    return sec, diff




def main():
    ap = arguments("JAX peer of the dualbatch GPU benchmark", "loop")
    args = ap.parse_args()

    device = jax.devices(args.device)[0]
    print("INFO\tjax\tjax %s, %s (%s), kin form %s, hess form %s"
          % (jax.__version__, device.device_kind, device.platform, args.kin_form, args.hess_form),
          flush=True)
    for wl in args.workloads.split(","):
        todo = batches_to_run(args.dir, wl, batch_sizes(wl, args), "jax_peer")
        if todo is None:
            continue
        ref, sizes = todo
        for b in sizes:
            for form, suffix in hess_forms(wl, args):
                timed_row("jax_peer", wl, b, "jax" + suffix,
                          lambda: run_one(wl, b, args, device, ref, form),
                          ("RESOURCE_EXHAUSTED", "out of memory"))

if __name__ == "__main__":
    main()
