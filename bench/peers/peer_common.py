# peer_common.py — what the Python peers of the GPU benchmark (jax_peer.py, torch_peer.py) share,
# framework-free (numpy only): the kin reaction tables, the point and reference files written by
# dualbatch_bench_gpu, the agreement measure, the ROW output line, the shared command line and the
# report of a batch size that failed.
#
# Files in --dir, raw little-endian float64, point-major (written by the dualbatch harness):
#   <wl>_x.f64     the points' active inputs, [B][n] (ba: n = 15, kin: n = 32, hess: n = 16,
#                  grad: n = 1024)
#   <wl>_feat.f64  the parameters, [B][p] (ba only: feat[2])
#   <wl>_ref.f64   dualbatch's results for the first K points (optional; the agreement check):
#                  ba, kin: per point the m values, then J [m][n] row-major (m + m n columns);
#                  hess:    per point f, then the gradient [16], then the Hessian [16][16]
#                           row-major, full (1 + 16 + 256 = 273 columns);
#                  grad:    per point f, then the gradient [1024] (1 + 1024 columns; from the CPU
#                           engine when dualbatch's GPU reverse mode failed).
# grad (reverse mode, 16 KiB of inputs per point) runs at its own batch sizes (--grad-batches).
import argparse
import os
import sys

import numpy as np

# kin: reaction r consumes A[r] and B[r], makes 2 of C[r], at rate K[r] exp(-E[r] x31) x_A x_B.
R = np.arange(64)
A, B, C = R % 32, (7 * R + 3) % 32, (13 * R + 5) % 32
K, E = 1 + 0.01 * R, 0.1 * (R % 5)
S = np.zeros((32, 64))  # stoichiometric matrix: f = -0.1 x + S @ rate
np.add.at(S, (A, R), -1.0)
np.add.at(S, (B, R), -1.0)
np.add.at(S, (C, R), 2.0)

# workload -> (input columns n, parameter columns, outputs m)
SHAPES = {"ba": (15, 2, 2), "kin": (32, 0, 32), "hess": (16, 0, 1), "grad": (1024, 0, 1)}


def ref_columns(wl):
    """Columns per point of <wl>_ref.f64: m values + J [m][n] (grad: f, gradient [n]); hess: f,
    gradient [n], H [n][n]."""
    n, _, m = SHAPES[wl]
    return 1 + n + n * n if wl == "hess" else m + m * n


def read_points(d, name, cols, count=None):
    """The first count rows (all without count) of a raw little-endian float64 [rows][cols] file."""
    data = np.fromfile(os.path.join(d, name), "<f8", -1 if count is None else count * cols)
    return data.reshape(-1, cols)


def read_inputs(d, wl, b):
    """The first b points of a workload: [x] or [x, feat], on the host."""
    n, p, _ = SHAPES[wl]
    host = [read_points(d, wl + "_x.f64", n, b)]
    if p:
        host.append(read_points(d, wl + "_feat.f64", p, b))
    return host


def load_refs(d, wl):
    """Our library's results for the first K points, ref_columns(wl) per point (see the top)."""
    name = wl + "_ref.f64"
    return read_points(d, name, ref_columns(wl)) if os.path.exists(os.path.join(d, name)) else None


def batches_to_run(d, wl, batches, who):
    """(reference results or None, the batch sizes the files hold), or None when the workload's
    files are missing; says on stderr what is skipped."""
    n, p, _ = SHAPES[wl]
    names = [wl + "_x.f64"] + ([wl + "_feat.f64"] if p else [])
    if not all(os.path.exists(os.path.join(d, nm)) for nm in names):
        print("%s: %s: input files missing in %s, skipped" % (who, wl, d), file=sys.stderr)
        return None
    bmax = os.path.getsize(os.path.join(d, names[0])) // (8 * n)
    for b in batches:
        if b > bmax:
            print("%s: %s: B = %d > %d points in %s, skipped" % (who, wl, b, bmax, d),
                  file=sys.stderr)
    return load_refs(d, wl), [b for b in batches if b <= bmax]


def max_rel_diff(vals, jac, ref, n, m):
    """Max over points of the values' and each Jacobian row's max |peer - ref| / max |ref|."""
    rv, rj = ref[:, :m], ref[:, m:].reshape(-1, m, n)
    dv = np.abs(vals - rv).max(axis=1) / np.maximum(np.abs(rv).max(axis=1), 1e-300)
    dj = np.abs(jac - rj).max(axis=2) / np.maximum(np.abs(rj).max(axis=2), 1e-300)
    return float(np.max([dv.max(), dj.max()]))


def hess_max_rel_diff(vals, grads, hess, ref, n=16):
    """hess: max over points of |f - ref f| / |ref f|, max |g - ref g| / max |ref g| and each
    Hessian row's max |H - ref H| / max |ref H row| (rows scaled as Jacobian rows above)."""
    rf, rg, rh = ref[:, 0], ref[:, 1:1 + n], ref[:, 1 + n:].reshape(-1, n, n)
    tiny = 1e-300
    df = np.abs(vals.reshape(-1) - rf) / np.maximum(np.abs(rf), tiny)
    dg = np.abs(grads - rg).max(axis=1) / np.maximum(np.abs(rg).max(axis=1), tiny)
    dh = np.abs(hess - rh).max(axis=2) / np.maximum(np.abs(rh).max(axis=2), tiny)
    return float(np.max([df.max(), dg.max(), dh.max()]))


def grad_max_rel_diff(grads, ref, n=1024):
    """grad: max over points of max |g - ref g| / max |ref g| (the point's gradient scaled as a
    Jacobian row above; the value is not compared: grad(f) does not return it)."""
    rg = ref[:, 1:1 + n]
    dg = np.abs(grads - rg).max(axis=1) / np.maximum(np.abs(rg).max(axis=1), 1e-300)
    return float(dg.max())


def row(wl, b, tool, sec, pps, diff):
    """ROW <workload> <B> <tool> device <seconds_per_call> <points_per_s> <max_rel_diff>."""
    num = lambda v: "-" if v is None else v if isinstance(v, str) else "%.6g" % v
    print("ROW\t%s\t%d\t%s\tdevice\t%s\t%s\t%s" % (wl, b, tool, num(sec), num(pps), num(diff)),
          flush=True)


def arguments(description, kin_default):
    """The options every peer takes (a peer adds its own before parse_args).  --hess-form: how the
    value, gradient and Hessian of hess are asked for (hess_forms): "hessian" the framework's
    hessian plus its value-and-gradient function in one function of x (tool jax / pytorch); "aux"
    the Hessian as the forward Jacobian of value-and-gradient, the value and gradient riding along
    as its aux output (tool jax-aux / pytorch-aux); "both" (default) times both."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workloads", default="ba,kin,hess,grad")
    ap.add_argument("--batches", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--grad-batches", default="1e3,1e4,1e5",
                    help="batch sizes of grad (the others use --batches)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--kin-form", choices=["loop", "stoich"], default=kin_default)
    ap.add_argument("--hess-form", choices=["hessian", "aux", "both"], default="both")
    return ap


def batch_sizes(wl, args):
    """The batch sizes to time for a workload: --grad-batches for grad, --batches otherwise."""
    return [int(float(s)) for s in (args.grad_batches if wl == "grad" else args.batches).split(",")]


def hess_forms(wl, args):
    """[(form, tool-name suffix)] to time: hess per --hess-form, other workloads [(None, "")]."""
    if wl != "hess":
        return [(None, "")]
    forms = ["hessian", "aux"] if args.hess_form == "both" else [args.hess_form]
    return [(f, "" if f == "hessian" else "-" + f) for f in forms]


def timed_row(who, wl, b, tool, call, oom_markers):
    """ROW of call() -> (seconds, diff); a failure (one size must not end the run) is reported on
    stderr and as an "oom" or "error" ROW."""
    try:
        sec, diff = call()
        row(wl, b, tool, sec, b / sec, diff)
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        oom = any(k in msg or k in msg.lower() for k in oom_markers)
        print("%s: %s B = %d %s: %s" % (who, wl, b, tool, msg.splitlines()[0] if msg else repr(e)),
              file=sys.stderr)
        row(wl, b, tool, None, "oom" if oom else "error", None)
