#!/usr/bin/env bash
# run_hvp.sh — Hessian-vector products at n = 1024 (issue 17) on a machine with a CUDA GPU and
# JAX: builds the `gpu` preset's dualbatch_bench_hvp (unless DUAL_SKIP_BUILD=1), times dual_hvp
# of the grad function on device-resident points (checked against the hand-derived H v), then
# JAX's jvp of grad on the same points, and writes both to $DUAL_RESULTS/hvp-<stamp>.raw.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${DUAL_RESULTS:-bench/results}"
mkdir -p "$results"
raw="$results/hvp-$(date -u +%Y-%m-%d-%H%M).raw"
points="$(mktemp -d)"
trap 'rm -rf "$points"' EXIT
if [ "${DUAL_SKIP_BUILD:-0}" != 1 ]; then
  cmake --preset gpu >/dev/null && cmake --build --preset gpu --target dualbatch_bench_hvp -j "$(nproc)" >/dev/null || exit 2
fi
commit="${DUAL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
batches="${HVP_BATCHES:-1e3,1e4,1e5}"
build-gpu/bench/dualbatch_bench_hvp --dir "$points" --commit "$commit" --batches "$batches" "$@" | tee "$raw" || exit 1
python3 bench/peers/jax_hvp.py --dir "$points" --batches "$batches" | tee -a "$raw" \
  || echo "run_hvp.sh: the JAX peer failed" >&2
python3 bench/plot_throughput.py --out "${raw%.raw}-plots" --title "$commit" "$raw" \
  || echo "run_hvp.sh: the plot failed" >&2
