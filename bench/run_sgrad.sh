#!/usr/bin/env bash
# run_sgrad.sh — the sgrad benchmark (BENCHMARKS.md "sgrad") on a machine with a CUDA GPU and
# JAX: builds the `gpu` preset's dualbatch_bench_sgrad (unless DUAL_SKIP_BUILD=1), times
# dual_sgrad on device-resident points, then the JAX peer on the same points (with its agreement
# check, in combined standard errors), and writes both to $DUAL_RESULTS/sgrad-<stamp>.raw.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${DUAL_RESULTS:-bench/results}"
mkdir -p "$results"
raw="$results/sgrad-$(date -u +%Y-%m-%d-%H%M).raw"
points="$(mktemp -d)"
trap 'rm -rf "$points"' EXIT
if [ "${DUAL_SKIP_BUILD:-0}" != 1 ]; then
  cmake --preset gpu >/dev/null && cmake --build --preset gpu --target dualbatch_bench_sgrad -j "$(nproc)" >/dev/null || exit 2
fi
commit="${DUAL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
batches="${SGRAD_BATCHES:-1e3,1e4,1e5}"
build-gpu/bench/dualbatch_bench_sgrad --dir "$points" --commit "$commit" --batches "$batches" "$@" | tee "$raw" || exit 1
python3 bench/peers/jax_sgrad.py --dir "$points" --batches "$batches" | tee -a "$raw" \
  || echo "run_sgrad.sh: the JAX peer failed" >&2
python3 bench/plot_throughput.py --out "${raw%.raw}-plots" --title "$commit" "$raw" \
  || echo "run_sgrad.sh: the plot failed" >&2
