#!/usr/bin/env bash
# test.sh — the README's test command: installs what is missing, builds with warnings as errors
# (CUDA code too when nvcc is present) and runs every test CTest knows (GPU tests skip without a
# GPU).  Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset ci >/dev/null
cmake --build --preset ci -j"$jobs"
ctest --preset ci -j"$jobs" "$@"
