#!/usr/bin/env bash
# run_dispatch.sh — the adaptive-dispatch benchmark (BENCHMARKS.md, "Adaptive dispatch", issue 20),
# for a machine with a CUDA GPU: builds the `gpu` preset's dualbatch_bench_dispatch (unless
# DUAL_SKIP_BUILD=1), runs ba, kin and hess on host arrays at B = 1e2 ... 1e7 (DISPATCH_POINTS)
# on CPU, GPU and AUTO contexts (all threads), and plots time per call against B when matplotlib
# is there.  Output: $DUAL_RESULTS/dispatch-<date>.{txt,csv,png} (default bench/results).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${DUAL_RESULTS:-bench/results}"
mkdir -p "$results"
stem="$results/dispatch-$(date -u +%Y-%m-%d-%H%M)"
if [ "${DUAL_SKIP_BUILD:-0}" != 1 ]; then
  if ! { cmake --preset gpu && cmake --build --preset gpu --target dualbatch_bench_dispatch -j "$(nproc)"; } \
      >"$stem.build.log" 2>&1; then
    tail -n 30 "$stem.build.log" >&2
    echo "run_dispatch.sh: the build failed" >&2
    exit 2
  fi
  rm -f "$stem.build.log"
fi
{
  echo "# run_dispatch.sh, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  ./build-gpu/bench/dualbatch_bench_dispatch --batches "${DISPATCH_POINTS:-1e2,1e3,1e4,1e5,1e6,1e7}" \
    --min-time "${DISPATCH_MIN_TIME:-0.3}" --csv "$stem.csv"
} 2>&1 | tee "$stem.txt"
python3 bench/plot_dispatch.py --out "$stem.png" --title "$(head -n 1 "$stem.txt" | cut -c3-)" "$stem.csv" ||
  echo "run_dispatch.sh: no plot" >&2
echo "run_dispatch.sh: wrote $stem.txt, $stem.csv" >&2
