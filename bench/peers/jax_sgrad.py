# jax_sgrad.py — the JAX peer of the sgrad benchmark (BENCHMARKS.md "sgrad"): per point the mean
# of S per-sample gradients of hess(x + 0.1 xi), xi ~ N(0, I_16), with
# jit(vmap(point estimate)) where a point's estimate is vmap(value_and_grad(hess)) over its S
# samples (jax.random keys split per point), FP64, points resident on the device.
#
#   python3 bench/peers/jax_sgrad.py --dir DIR [--batches 1e3,1e4,1e5] [--samples 256] [--reps 7]
#
# DIR holds sgrad_x.f64 ([B][16], written by dualbatch_bench_sgrad) and sgrad_ref.f64 (our f,
# gradient [16] and standard errors [16] for the first points).  Prints per B
#   ROW sgrad <B> jax device <seconds_per_call> <points_per_s> <max |z|>
# where z = (g_jax - g_ours) / sqrt(se_jax^2 + se_ours^2) over the reference points' gradient
# entries (independent random numbers: |z| stays below ~5 when both estimate the same gradient).
import argparse
import os
import statistics
import time

import numpy as np

os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)
N = 16


def hess(x):
    rosen = jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    return rosen + jnp.log(jnp.sum(jnp.exp(x)))


def make_estimator(samples):
    def point(x, key):
        xi = jax.random.normal(key, (samples, N), dtype=jnp.float64)
        f, g = jax.vmap(jax.value_and_grad(hess))(x + 0.1 * xi)
        return jnp.mean(f), jnp.mean(g, axis=0), jnp.std(g, axis=0, ddof=1) / jnp.sqrt(samples)

    return jax.jit(jax.vmap(point))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--batches", default="1e3,1e4,1e5")
    ap.add_argument("--samples", type=int, default=256)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    allx = np.fromfile(os.path.join(a.dir, "sgrad_x.f64"), "<f8").reshape(-1, N)
    ref = np.fromfile(os.path.join(a.dir, "sgrad_ref.f64"), "<f8").reshape(-1, 1 + 2 * N)
    est = make_estimator(a.samples)
    print(f"INFO jax {jax.__version__} device {jax.devices()[0].device_kind} samples {a.samples}", flush=True)
    for b in [int(float(s)) for s in a.batches.split(",")]:
        x = jax.device_put(jnp.asarray(allx[:b]))
        keys = jax.random.split(jax.random.PRNGKey(0), b)
        for _ in range(2):
            out = est(x, keys)
            jax.block_until_ready(out)
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            out = est(x, keys)
            jax.block_until_ready(out)
            times.append(time.perf_counter() - t0)
        sec = statistics.median(times)
        k = min(b, ref.shape[0])
        g, se = np.asarray(out[1])[:k], np.asarray(out[2])[:k]
        z = (g - ref[:k, 1:1 + N]) / np.sqrt(se ** 2 + ref[:k, 1 + N:] ** 2)
        print(f"ROW\tsgrad\t{b}\tjax\tdevice\t{sec:.6e}\t{b / sec:.6e}\t{np.max(np.abs(z)):.2f}", flush=True)


if __name__ == "__main__":
    main()
