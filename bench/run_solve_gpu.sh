#!/usr/bin/env bash
# run_solve_gpu.sh — the GPU solver benchmark (BENCHMARKS.md, "Batched Newton"), for a machine with
# a CUDA GPU, nvcc and JAX: builds the `gpu` preset's dualbatch_bench_solve (unless
# DUAL_SKIP_BUILD=1), runs dual_newton on a GPU context on the compiled tier (host arrays, and
# device arrays as the peer has them) for kin_steady (n = 32) and rob3 (n = 3) at B = 1e4, 1e5,
# 1e6 (SOLVE_POINTS), writes the cells, starts and solutions, and runs the JAX peer
# (bench/peers/jax_solve.py: jit(vmap(newton)) with jnp.linalg.solve) on the identical cells in
# the same run.  Output: $DUAL_RESULTS/solve-gpu-<date>.txt (default bench/results).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${DUAL_RESULTS:-bench/results}"
mkdir -p "$results"
out="$results/solve-gpu-$(date -u +%Y-%m-%d-%H%M).txt"
points="$(mktemp -d)"
trap 'rm -rf "$points"' EXIT
if [ "${DUAL_SKIP_BUILD:-0}" != 1 ]; then
  if ! { cmake --preset gpu && cmake --build --preset gpu --target dualbatch_bench_solve -j "$(nproc)"; } \
      >"$points/build.log" 2>&1; then
    tail -n 30 "$points/build.log" >&2
    echo "run_solve_gpu.sh: the build failed" >&2
    exit 2
  fi
fi
batches="${SOLVE_POINTS:-1e4,1e5,1e6}"
{
  echo "# run_solve_gpu.sh, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  DUALBATCH_TIER=compile ./build-gpu/bench/dualbatch_bench_solve --device gpu --points "$batches" --repeat "${SOLVE_REPS:-5}" --dump "$points"
  python3 bench/peers/jax_solve.py --dir "$points" --batches "$batches" --reps "${SOLVE_REPS:-5}" --device gpu
} 2>&1 | tee "$out"
echo "run_solve_gpu.sh: wrote $out" >&2
