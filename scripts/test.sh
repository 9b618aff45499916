#!/usr/bin/env bash
# test.sh — the README's test command: installs what is missing, builds with warnings as errors
# (CUDA code too when nvcc is present) and runs every test CTest knows (GPU tests skip without a
# GPU).  Usage: scripts/test.sh [extra ctest arguments]
# (DUAL_CONFIGURE_PRESET and DUAL_TEST_PRESET pick other presets: scripts/test_compiled.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
configure=${DUAL_CONFIGURE_PRESET:-ci}
cmake --preset "$configure" >/dev/null
cmake --build --preset "$configure" -j"$jobs"
ctest --preset "${DUAL_TEST_PRESET:-ci}" -j"$jobs" "$@"
