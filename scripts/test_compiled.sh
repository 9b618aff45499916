#!/usr/bin/env bash
# test_compiled.sh — the CPU test suite on the CPU's compiled tier (the `compiled` test preset:
# each CPU test again with DUALBATCH_CPU_JIT_AFTER_MS=0, tests/CMakeLists.txt).  About 1,500
# modules (random sweeps thinned to every 10th program), each a run of the system C compiler:
# too long for the README's test command and CI on two cores.  The modules land in
# the build tree's cache (build-cpu/jit-cache), so a second run takes minutes.
# Usage: scripts/test_compiled.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset cpu >/dev/null
cmake --build --preset cpu -j"$jobs"
ctest --preset compiled -j"$jobs" "$@"
