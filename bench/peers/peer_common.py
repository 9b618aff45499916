# peer_common.py — what the Python peers of the GPU benchmark (jax_peer.py, torch_peer.py) share,
# framework-free (numpy only): the kin reaction tables, the point and reference files written by
# dualbatch_bench_gpu, the agreement measure, the ROW output line, the shared command line and the
# report of a batch size that failed.
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
SHAPES = {"ba": (15, 2, 2), "kin": (32, 0, 32)}


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


def load_refs(d, wl, n, m):
    """Our library's results for the first K points: m values, then J [m][n], per point."""
    name = wl + "_ref.f64"
    return read_points(d, name, m + m * n) if os.path.exists(os.path.join(d, name)) else None


def batches_to_run(d, wl, batches, who):
    """(reference results or None, the batch sizes the files hold), or None when the workload's
    files are missing; says on stderr what is skipped."""
    n, p, m = SHAPES[wl]
    names = [wl + "_x.f64"] + ([wl + "_feat.f64"] if p else [])
    if not all(os.path.exists(os.path.join(d, nm)) for nm in names):
        print("%s: %s: input files missing in %s, skipped" % (who, wl, d), file=sys.stderr)
        return None
    bmax = os.path.getsize(os.path.join(d, names[0])) // (8 * n)
    for b in batches:
        if b > bmax:
            print("%s: %s: B = %d > %d points in %s, skipped" % (who, wl, b, bmax, d),
                  file=sys.stderr)
    return load_refs(d, wl, n, m), [b for b in batches if b <= bmax]


def max_rel_diff(vals, jac, ref, n, m):
    """Max over points of the values' and each Jacobian row's max |peer - ref| / max |ref|."""
    rv, rj = ref[:, :m], ref[:, m:].reshape(-1, m, n)
    dv = np.abs(vals - rv).max(axis=1) / np.maximum(np.abs(rv).max(axis=1), 1e-300)
    dj = np.abs(jac - rj).max(axis=2) / np.maximum(np.abs(rj).max(axis=2), 1e-300)
    return float(np.max([dv.max(), dj.max()]))


def row(wl, b, tool, sec, pps, diff):
    """ROW <workload> <B> <tool> device <seconds_per_call> <points_per_s> <max_rel_diff>."""
    num = lambda v: "-" if v is None else v if isinstance(v, str) else "%.6g" % v
    print("ROW\t%s\t%d\t%s\tdevice\t%s\t%s\t%s" % (wl, b, tool, num(sec), num(pps), num(diff)),
          flush=True)


def arguments(description, kin_default):
    """The options every peer takes (a peer adds its own before parse_args)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workloads", default="ba,kin")
    ap.add_argument("--batches", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    ap.add_argument("--kin-form", choices=["loop", "stoich"], default=kin_default)
    return ap


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
