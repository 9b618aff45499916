#!/usr/bin/env bash
# check_mpi.sh BUILD_DIR — the MPI examples as CI runs them: installs Debian's OpenMPI when it is
# missing (scripts/deps.sh), configures BUILD_DIR (a configured dualbatch tree) again so that CMake
# finds it, builds examples/mpi and runs the CTest label `mpi`: each example on 2 ranks, checking
# the gathered results against one process bit for bit.  Fails when MPI is still not found or the
# tests are not all there (mpi_cells, and mpi_newton_cells with Fortran).  Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check_mpi.sh BUILD_DIR}
jobs=$(nproc 2>/dev/null || echo 2)
scripts/deps.sh openmpi-bin libopenmpi-dev
cmake "$build" -DDUAL_WITH_MPI=ON | grep "dualbatch: CUDA"
targets=(mpi_cells)
grep -q "^DUAL_WITH_FORTRAN:BOOL=ON" "$build/CMakeCache.txt" && command -v gfortran >/dev/null && targets+=(mpi_newton_cells)
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
registered=$(ctest --test-dir "$build" -N -L '^mpi$' | grep -c "Test *#" || true)
if [ "$registered" -ne ${#targets[@]} ]; then
  echo "check_mpi: ${#targets[@]} MPI examples built but $registered tests registered" >&2
  exit 1
fi
# -V: each rank's line and the verdict (the figures: errors against the closed forms, bitwise)
ctest --test-dir "$build" -L '^mpi$' -V | grep -E "rank|ranks,|Test +#|tests passed|tests failed|rror|STOP"
