# torch_peer.py — the PyTorch peer of the GPU benchmark: per-point values and FP64 Jacobians of
# the ba and kin workloads (BENCHMARKS.md "Workloads") with torch.func.vmap(torch.func.jacfwd(f)),
# the value, gradient and Hessian of hess with torch.func.vmap of torch.func.hessian, and the
# gradient of grad (n = 1024, reverse mode) with torch.func.vmap(torch.func.grad(f)).
#
#   python3 bench/peers/torch_peer.py --dir DIR [--workloads ba,kin,hess,grad]
#                                     [--batches 1e4,1e5,1e6,1e7] [--grad-batches 1e3,1e4,1e5]
#                                     [--reps 20] [--device gpu|cpu]
#                                     [--kin-form stoich|loop] [--hess-form both|hessian|aux]
#                                     [--compile]
#
# DIR holds the points written by the C benchmark (ba_x.f64, ba_feat.f64, kin_x.f64, hess_x.f64,
# grad_x.f64) and our library's results for the first K points (ba_ref.f64, kin_ref.f64,
# hess_ref.f64, grad_ref.f64; layouts in peer_common.py).  Prints an INFO line, then
# per (workload, B) one tab-separated line
#   ROW <workload> <B> pytorch device <seconds_per_call> <points_per_s> <max_rel_diff>
# (median of --reps calls after 3 warm-up calls); --compile adds rows for tool "pytorch-compile"
# (the same function through torch.compile; "pytorch-aux-compile" for hess's aux form).
# Diagnostics go to stderr.  kin is written with gathers and a product with the 32x64
# stoichiometric matrix (--kin-form stoich, the default: a dozen kernels per call in eager mode) or
# reaction by reaction (loop: about a thousand kernels).
# hess returns f, the gradient and the full 16x16 Hessian per point, asked for in two ways, each
# timed by default (--hess-form both): tool "pytorch", vmap of
# x -> (grad_and_value(f)(x), hessian(f)(x)) (torch.func.hessian is jacfwd over jacrev; eager mode
# runs the two separately); tool "pytorch-aux", H = jacfwd(grad_and_value(f)) with f and g as its
# aux output (hessian's own composition, one pass for all three).
import gc
import itertools
import statistics
import time

import torch
from torch.func import grad, grad_and_value, hessian, jacfwd, vmap

from peer_common import (A, B, C, E, K, S, SHAPES, arguments, batch_sizes, batches_to_run,
                         grad_max_rel_diff, hess_forms, hess_max_rel_diff, max_rel_diff,
                         read_inputs, timed_row)


def ba(x, feat):
    """Reprojection residual r[2] of one observation, x = (cam[11], X[3], w): programs/ba.db."""
    rot, C, f, u, k1, k2 = x[0:3], x[3:6], x[6], x[7:9], x[9], x[10]
    X, w = x[11:14], x[14]
    d = X - C
    theta2 = torch.sum(rot * rot)
    big = theta2 > 0
    theta = torch.sqrt(torch.where(big, theta2, torch.ones_like(theta2)))  # finite at theta2 = 0
    ct, st = torch.cos(theta), torch.sin(theta)
    a = rot * (1 / theta)  # unit axis
    t = torch.sum(a * d) * (1 - ct)
    rodrigues = d * ct + torch.linalg.cross(a, d) * st + a * t
    first_order = d + torch.linalg.cross(rot, d)
    xc = torch.where(big, rodrigues, first_order)
    p = xc[0:2] / xc[2]
    s = p[0] * p[0] + p[1] * p[1]
    L = 1 + k1 * s + k2 * s * s
    return w * (p * L * f + u - feat)




def kin_stoich(device):
    """Mass-action kinetics f[32] as gathers and one product with the stoichiometric matrix."""
    a, b, k, e, s = (torch.as_tensor(v, device=device) for v in (A, B, K, E, S))

    def f(x):
        rate = k * torch.exp(-e * x[31]) * x[a] * x[b]
        return -0.1 * x + s @ rate

    return f


def kin_loop(device):
    """The same kinetics reaction by reaction, as programs/kin.db (eager: one kernel per op)."""
    def f(x):
        y = [-0.1 * x[i] for i in range(32)]
        for r in range(64):
            a, b, c = int(A[r]), int(B[r]), int(C[r])
            rate = float(K[r]) * torch.exp(-float(E[r]) * x[31]) * x[a] * x[b]
            y[a] = y[a] - rate
            y[b] = y[b] - rate
            y[c] = y[c] + 2 * rate
        return torch.stack(y)

    return f


def hess_fn(x):
    """hess (programs/hess.db): Rosenbrock chain over x[0..15] plus log sum exp x, a scalar."""
    u = x[1:] - x[:-1] * x[:-1]
    v = 1 - x[:-1]
    return torch.sum(100 * (u * u) + v * v) + torch.log(torch.sum(torch.exp(x)))


def grad_fn(x):
    """grad (programs/grad.db): sum sin(x_i) x_(i+1 mod n) + log1p(sum x_i^2), a scalar."""
    return torch.sum(torch.sin(x) * torch.roll(x, -1)) + torch.log1p(torch.sum(x * x))


def gradient_only(f):
    """x -> (grad f(x),): the gradient by reverse mode (torch.func.grad), as a one-element tuple
    so that measure() sees a tuple of per-point outputs as for the other workloads."""
    g = grad(f)
    return lambda x: (g(x),)


def value_grad_hessian(f, form):
    """x -> (f(x), grad f(x), hessian f(x)) for a scalar f of one vector."""
    if form == "hessian":
        gv, hess = grad_and_value(f), hessian(f)

        def g(x):
            gr, v = gv(x)
            return v, gr, hess(x)

        return g

    def gv_aux(x):  # "aux": H = d/dx of the gradient, f and g carried along
        gr, v = grad_and_value(f)(x)
        return gr, (v, gr)

    jac = jacfwd(gv_aux, has_aux=True)

    def g(x):
        H, (v, gr) = jac(x)
        return v, gr, H

    return g


def values_and_jacobian(f):
    """x -> (f(x), df/dx) in one forward-mode pass: the value rides along as jacfwd's aux output."""
    def pair(*a):
        y = f(*a)
        return y, y

    jac = jacfwd(pair, has_aux=True)

    def g(*a):
        J, y = jac(*a)
        return y, J

    return g




def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(fn, args, reps, k, device):
    """Median seconds per call, and the first k points' (values, Jacobian) on the host."""
    out = fn(*args)  # first call (compiles under --compile)
    first = [o[:k].cpu().numpy() for o in out]
    del out  # at most one result alive: kin's Jacobian at B = 1e7 is 82 GB
    for _ in range(2):
        fn(*args)
    sync(device)
    times = []
    for _ in range(reps):
        sync(device)
        t0 = time.perf_counter()
        out = fn(*args)
        sync(device)
        times.append(time.perf_counter() - t0)
        del out
    return statistics.median(times), first


def run_one(wl, b, args, device, ref, compiled, form):
    n, _, m = SHAPES[wl]
    host = read_inputs(args.dir, wl, b)
    if wl == "hess":
        fn = vmap(value_grad_hessian(hess_fn, form))
    elif wl == "grad":
        fn = vmap(gradient_only(grad_fn))
    else:
        if wl == "ba":
            f = ba
        else:
            f = (kin_loop if args.kin_form == "loop" else kin_stoich)(device)
        fn = vmap(values_and_jacobian(f))
    if compiled:
        fn = torch.compile(fn, dynamic=False)
    xs = [torch.from_numpy(h).to(device) for h in host]
    del host
    k = 0 if ref is None else min(len(ref), b)
    sec, out = measure(fn, xs, args.reps, k, device)
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
    ap = arguments("PyTorch peer of the dualbatch GPU benchmark", "stoich")
    ap.add_argument("--compile", action="store_true",
                    help="also time torch.compile of the same function (tool pytorch-compile)")
    args = ap.parse_args()

    device = torch.device("cuda" if args.device == "gpu" else "cpu")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print("INFO\tpytorch\ttorch %s, %s (%s), kin form %s, hess form %s"
          % (torch.__version__, name, device.type, args.kin_form, args.hess_form), flush=True)
    tools = [("pytorch", False)] + ([("pytorch-compile", True)] if args.compile else [])
    for wl in args.workloads.split(","):
        todo = batches_to_run(args.dir, wl, batch_sizes(wl, args), "torch_peer")
        if todo is None:
            continue
        ref, sizes = todo
        for b in sizes:
            for (tool, compiled), (form, suffix) in itertools.product(tools, hess_forms(wl, args)):
                name = tool.replace("pytorch", "pytorch" + suffix)
                timed_row("torch_peer", wl, b, name,
                          lambda: run_one(wl, b, args, device, ref, compiled, form),
                          ("out of memory",))
                gc.collect()
                if device.type == "cuda":
                    torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
