#!/usr/bin/env bash
# run_hess_study.sh — the compiled tier's forward-over-reverse study for hess (bench/NOTES.md):
# Hessians per second, device arrays, at B = 1e4 and 1e6 for each number of directions per pass
# (DUALBATCH_JIT_WIDTH; WIDTHS overrides "4 8 16") and resident blocks asked of the compiler
# (DUALBATCH_JIT_MINBLOCKS; BLOCKS overrides "0", the compiler's choice) and groups of directions
# per kernel (DUALBATCH_JIT_GROUPS; KGROUPS overrides "0", all in one kernel), each compiled afresh with its compile traced
# (registers, spills, blocks per multiprocessor), then JAX's jit(vmap(hessian)) on the same
# points in the same run.  Needs build-gpu (cmake --preset gpu; cmake --build --preset gpu).
# Usage: bench/run_hess_study.sh   (BATCHES, REPS override 1e4,1e6 and 10)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench="$root/build-gpu/bench/dualbatch_bench_gpu"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
batches="${BATCHES:-1e4,1e6}"
reps="${REPS:-10}"
mkdir -p "$work/points"
for w in ${WIDTHS:-4 8 16}; do
  for b in ${BLOCKS:-0}; do
    for gr in ${KGROUPS:-0}; do
      c="w$w-b$b-g$gr"
      CUDA_CACHE_DISABLE=1 DUALBATCH_JIT_TRACE=1 DUALBATCH_JIT_WIDTH="$w" DUALBATCH_JIT_MINBLOCKS="$b" \
        DUALBATCH_JIT_GROUPS="$gr" DUALBATCH_CACHE_DIR="$work/cache-$c" \
        "$bench" --workload hess --no-host --reps "$reps" --batches "$batches" --dir "$work/points" 2>&1 \
        | tee "$work/raw-$c.txt" | grep -E "^ROW|^dualbatch jit|compiled tier vs" \
        | sed "s/^ROW\thess\t\([0-9]*\)\tdualbatch-compiled-for/ROW\thess\t\1\tcompiled-for-$c/; s/^dualbatch jit:/JITTRACE\t$c/"
    done
  done
done
if ! cat "$work"/raw-*.txt | grep -q '^ROW'; then
  echo "run_hess_study.sh: the benchmark printed no rows; its output:" >&2
  tail -n 20 "$work"/raw-*.txt >&2
fi
python3 "$root/bench/peers/jax_peer.py" --dir "$work/points" --workloads hess --batches "$batches" \
  --reps "$reps" || echo "run_hess_study.sh: the JAX peer failed" >&2
