#!/usr/bin/env bash
# run_gpu.sh — the one command of the GPU benchmark (BENCHMARKS.md), for a machine with a CUDA GPU,
# nvcc, and JAX / PyTorch for the peers: builds the `gpu` preset (unless DUAL_SKIP_BUILD=1),
# runs dualbatch_bench_gpu (device-resident and host-array calls, width study, roofline; ba, kin,
# hess, and grad by reverse mode at its own batch sizes), then the JAX and PyTorch peers on the
# identical points it wrote, and prints the tables of bench/gpu_table.py; last the forward/reverse
# crossover studies on the GPU's compiled tier (dualbatch_bench_crossover --device gpu: gradients,
# HVPs, Hessians; their own tables; a failure there is reported and does not fail the run).  Raw lines and tables go
# to $DUAL_RESULTS (default bench/results).  Arguments are passed to dualbatch_bench_gpu;
# PEER_BATCHES / GRAD_PEER_BATCHES / PEER_REPS tune the peers, CROSSOVER_ARGS the crossover study.
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
  if ! cmake --build --preset gpu --target dualbatch_bench_crossover -j "$(nproc)" \
      >>"$results/gpu-$stamp.build.log" 2>&1; then
    echo "run_gpu.sh: dualbatch_bench_crossover did not build (see $results/gpu-$stamp.build.log)" >&2
  fi
fi
commit="${DUAL_COMMIT:-}" # a copy of the tree without .git (the lent GPU machine) names it here
if [ -z "$commit" ]; then
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi
fi

build-gpu/bench/dualbatch_bench_gpu --dir "$points" --commit "$commit" "$@" | tee "$raw"
status=${PIPESTATUS[0]}
# the compiled tier's cold compile and warm (disk cache) load, each in a fresh process; cold
# runs with CUDA_CACHE_DISABLE=1, since NVRTC (12.9+) keeps results in the driver's compute cache
jitcache="$(mktemp -d)"
for wl in ba kin hess grad; do
  for phase in cold warm; do
    nocache=0
    [ "$phase" = cold ] && nocache=1
    CUDA_CACHE_DISABLE=$nocache DUALBATCH_JIT_TRACE=1 \
      build-gpu/bench/dualbatch_bench_gpu --jit-time "$wl" "$jitcache/$wl" 2>&1 \
      | sed "s/^JIT\t/JIT\t$phase\t/; s/^dualbatch jit:/JITTRACE\t$wl $phase/" | tee -a "$raw"
  done
done
rm -rf "$jitcache"
batches="${PEER_BATCHES:-1e4,1e5,1e6,1e7}"
grad_batches="${GRAD_PEER_BATCHES:-1e3,1e4,1e5}"
reps="${PEER_REPS:-20}"
python3 bench/peers/jax_peer.py --dir "$points" --batches "$batches" --grad-batches "$grad_batches" \
  --reps "$reps" | tee -a "$raw" || echo "run_gpu.sh: the JAX peer failed" >&2
python3 bench/peers/torch_peer.py --dir "$points" --batches "$batches" --grad-batches "$grad_batches" \
  --reps "$reps" | tee -a "$raw" || echo "run_gpu.sh: the PyTorch peer failed" >&2
python3 bench/gpu_table.py "$raw" | tee "$table"
# throughput against batch size, one PNG per workload (skipped with a message without matplotlib)
python3 bench/plot_throughput.py --out "$results/plots-$stamp" --title "$commit" "$raw" \
  || echo "run_gpu.sh: the plots failed" >&2
crossover=build-gpu/bench/dualbatch_bench_crossover
if [ -x "$crossover" ]; then
  for product in grad hvp hessian; do # gradients, HVPs, Hessians (nested forward vs forward-over-reverse)
    # on the compiled tier, which AUTO's GPU model is fitted to (under AUTO a mode's first calls
    # interpret while its kernel compiles, so rows would mix tiers); a program over a compile
    # rule shows as failed.  CROSSOVER_TIER=interpret measures the interpreter.
    # shellcheck disable=SC2086
    DUALBATCH_TIER="${CROSSOVER_TIER:-compile}" \
      "$crossover" --device gpu --product "$product" --commit "$commit" ${CROSSOVER_ARGS:-} \
      | tee -a "$results/gpu-$stamp.crossover.md" \
      || echo "run_gpu.sh: the $product crossover study failed (exit ${PIPESTATUS[0]}); the run goes on" >&2
  done
else
  echo "run_gpu.sh: $crossover missing: the crossover study is skipped" >&2
fi
exit "$status"
