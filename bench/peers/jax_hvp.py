# jax_hvp.py — the JAX peer of the HVP benchmark (bench/bench_hvp.c): per point H v of the grad
# workload's function (n = 1024) as the forward derivative of its gradient along v,
# jit(vmap(lambda x, v: jvp(grad(f), (x,), (v,))[1])), FP64, points resident on the device.
#
#   python3 bench/peers/jax_hvp.py --dir DIR [--batches 1e3,1e4,1e5] [--reps 7]
#
# DIR holds hvp_x.f64 and hvp_v.f64 ([B][1024], written by dualbatch_bench_hvp) and hvp_ref.f64
# (our H v for the first points).  Prints per B
#   ROW hvp <B> jax device <seconds_per_call> <points_per_s> <max row-scaled difference from ours>
import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
N = 1024


def grad_fn(x):
    return jnp.sum(jnp.sin(x) * jnp.roll(x, -1)) + jnp.log1p(jnp.sum(x * x))


def hvp(x, v):
    return jax.jvp(jax.grad(grad_fn), (x,), (v,))[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batches", default="1e3,1e4,1e5")
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    allx = np.fromfile(os.path.join(a.dir, "hvp_x.f64"), "<f8").reshape(-1, N)
    allv = np.fromfile(os.path.join(a.dir, "hvp_v.f64"), "<f8").reshape(-1, N)
    ref = np.fromfile(os.path.join(a.dir, "hvp_ref.f64"), "<f8").reshape(-1, N)
    fn = jax.jit(jax.vmap(hvp))
    print(f"INFO jax {jax.__version__} device {jax.devices()[0].device_kind}", flush=True)
    for b in [int(float(s)) for s in a.batches.split(",")]:
        x, v = jax.device_put(jnp.asarray(allx[:b])), jax.device_put(jnp.asarray(allv[:b]))
        for _ in range(2):
            out = fn(x, v)
            jax.block_until_ready(out)
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            out = fn(x, v)
            jax.block_until_ready(out)
            times.append(time.perf_counter() - t0)
        sec = statistics.median(times)
        k = min(b, ref.shape[0])
        got = np.asarray(out)[:k]
        diff = np.abs(got - ref[:k]).max(axis=1) / np.maximum(np.abs(ref[:k]).max(axis=1), 1e-300)
        print(f"ROW\thvp\t{b}\tjax\tdevice\t{sec:.6e}\t{b / sec:.6e}\t{diff.max():.3g}", flush=True)


if __name__ == "__main__":
    main()
