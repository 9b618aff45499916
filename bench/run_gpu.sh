#!/usr/bin/env bash
# run_gpu.sh — the one command of the GPU benchmark (BENCHMARKS.md), for a machine with a CUDA GPU,
# nvcc, and JAX / PyTorch for the peers: builds the `gpu` preset (unless DUAL_SKIP_BUILD=1),
# runs dualbatch_bench_gpu (device-resident and host-array calls, width study, roofline), then the
# JAX and PyTorch peers on the identical points it wrote, and prints the tables of
# bench/gpu_table.py.  Raw lines and tables go to $DUAL_RESULTS (default bench/results).
# Arguments are passed to dualbatch_bench_gpu; PEER_BATCHES / PEER_REPS tune the peers.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${DUAL_RESULTS:-bench/results}"
mkdir -p "$results"
stamp="$(date -u +%Y-%m-%d-%H%M)"
raw="$results/gpu-$stamp.raw"
table="$results/gpu-$stamp.md"
points="$(mktemp -d)"
trap 'rm -rf "$points"' EXIT

if [ "${DUAL_SKIP_BUILD:-0}" != 1 ]; then
  if ! { cmake --preset gpu && cmake --build --preset gpu --target dualbatch_bench_gpu -j "$(nproc)"; } \
      >"$results/gpu-$stamp.build.log" 2>&1; then
    tail -n 30 "$results/gpu-$stamp.build.log" >&2
    echo "run_gpu.sh: the build failed" >&2
    exit 2
  fi
fi
commit="${DUAL_COMMIT:-}" # a copy of the tree without .git (the lent GPU machine) names it here
if [ -z "$commit" ]; then
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi
fi

build-gpu/bench/dualbatch_bench_gpu --dir "$points" --commit "$commit" "$@" | tee "$raw"
status=${PIPESTATUS[0]}
batches="${PEER_BATCHES:-1e4,1e5,1e6,1e7}"
reps="${PEER_REPS:-20}"
python3 bench/peers/jax_peer.py --dir "$points" --batches "$batches" --reps "$reps" | tee -a "$raw" \
  || echo "run_gpu.sh: the JAX peer failed" >&2
python3 bench/peers/torch_peer.py --dir "$points" --batches "$batches" --reps "$reps" | tee -a "$raw" \
  || echo "run_gpu.sh: the PyTorch peer failed" >&2
python3 bench/gpu_table.py "$raw" | tee "$table"
exit "$status"
