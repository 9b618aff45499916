#!/usr/bin/env bash
# demo.sh — the README's first command: installs what is missing, builds the library and runs
# the demo (bundle-adjustment Jacobians for a million observations, checked against finite
# differences).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset default -DDUAL_BUILD_TESTS=OFF >/dev/null
cmake --build --preset default -j"$jobs" --target demo dualbatch_cli >/dev/null
./build/examples/demo "$@"
