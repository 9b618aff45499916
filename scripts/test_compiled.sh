#!/usr/bin/env bash
# test_compiled.sh — the CPU test suite on the CPU's compiled tier with the system C compiler (the
# `compiled` test preset: each CPU test again with DUALBATCH_CPU_JIT_AFTER_MS=0,
# tests/CMakeLists.txt): some 3,200 modules (random sweeps thinned to every 10th program), each a
# run of `cc` (or $DUALBATCH_CC) — hours on two cores, about 25 minutes on sixteen.  The modules
# land in the build tree's cache (build-cpu/jit-cache), so a second run takes minutes.  CI runs
# the same tests with tcc as the compiler (the `compiled-tcc` preset).
# Usage: scripts/test_compiled.sh [extra ctest arguments]
exec env DUAL_CONFIGURE_PRESET=cpu DUAL_TEST_PRESET=compiled "$(dirname "$0")/test.sh" "$@"
