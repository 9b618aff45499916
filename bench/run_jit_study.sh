#!/usr/bin/env bash
# run_jit_study.sh — the compiled GPU tier's shape study (bench/NOTES.md): ba and kin Jacobians,
# device arrays, at B = 1e4 and 1e6, for each tangent width per pass (DUALBATCH_JIT_WIDTH) and
# each resident-blocks request to the compiler (DUALBATCH_JIT_MINBLOCKS, 0 = the compiler's
# choice), each variant compiled afresh (its own cache directory, NVRTC's cache off) with the
# compile steps traced.  BA_WIDTHS, BA_BLOCKS, KIN_WIDTHS, KIN_BLOCKS override the lists.
# Prints ROW lines whose tool is compiled-w<width>-b<blocks> (bench/gpu_table.py lists them).
# Needs build-gpu/bench/dualbatch_bench_gpu (cmake --preset gpu; cmake --build --preset gpu).
# Usage: bench/run_jit_study.sh [ba|kin ...]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="$root/build-gpu/bench/dualbatch_bench_gpu"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
workloads="${*:-ba kin}"
for wl in $workloads; do
  case "$wl" in
    ba) widths="${BA_WIDTHS:-4 8 16}"; blocks="${BA_BLOCKS:-0 4}" ;;
    kin) widths="${KIN_WIDTHS:-8 16 32}"; blocks="${KIN_BLOCKS:-0 2}" ;;
    *) echo "run_jit_study.sh: no study for $wl" >&2; continue ;;
  esac
  for w in $widths; do
    for b in $blocks; do
      CUDA_CACHE_DISABLE=1 DUALBATCH_JIT_TRACE=1 DUALBATCH_JIT_WIDTH="$w" DUALBATCH_JIT_MINBLOCKS="$b" \
        DUALBATCH_CACHE_DIR="$cache/$wl-$w-$b" \
        "$bench" --workload "$wl" --no-host --reps 10 --batches 1e4,1e6 2>&1 \
        | grep -E "^ROW.*dualbatch-compiled|^dualbatch jit|compiled tier vs" \
        | sed "s/dualbatch-compiled/compiled-w$w-b$b/; s/^dualbatch jit:/JITTRACE\t$wl-w$w-b$b/"
    done
  done
done
