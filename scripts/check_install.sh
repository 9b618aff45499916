#!/usr/bin/env bash
# check_install.sh BUILD_DIR — installs BUILD_DIR (a configured, built dualbatch tree) into a
# temporary prefix and builds a downstream C project (tests/downstream) against the installed
# tree twice, through the CMake package (shared and static library) and through pkg-config, and
# runs each; also runs the installed CLI's --version.  When the install has the Fortran module
# (dualbatch.mod) and gfortran exists, builds tests/downstream/main.f90 against it through the
# CMake package (dualbatch::dualbatch_fortran) and with gfortran -I -L directly, and runs both.
# Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check_install.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
"$prefix/bin/dualbatch" --version | head -1
cmake -S tests/downstream -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake" -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
echo -n "CMake package, shared: " && "$work/cmake/downstream_shared"
echo -n "CMake package, static: " && "$work/cmake/downstream_static"
libdir=$(dirname "$(find "$prefix" -name dualbatch.pc)")
export PKG_CONFIG_PATH=$libdir
# shellcheck disable=SC2046
cc -std=c11 -o "$work/pc_shared" tests/downstream/main.c $(pkg-config --cflags --libs dualbatch) -lm \
   -Wl,-rpath,"$(pkg-config --variable=libdir dualbatch)"
echo -n "pkg-config, shared: " && "$work/pc_shared"

if [ -f "$prefix/include/dualbatch.mod" ] && command -v gfortran >/dev/null 2>&1; then
  if [ ! -x "$work/cmake/downstream_fortran" ]; then
    echo "the install has dualbatch.mod but the CMake package built no Fortran program" >&2
    exit 1
  fi
  echo -n "CMake package, Fortran: " && "$work/cmake/downstream_fortran"
  lib=$(pkg-config --variable=libdir dualbatch)
  gfortran -o "$work/f_direct" tests/downstream/main.f90 -I"$prefix/include" -L"$lib" -ldualbatch_fortran \
           -ldualbatch -Wl,-rpath,"$lib"
  echo -n "gfortran -I -L, shared: " && "$work/f_direct"
else
  echo "no Fortran check: $( [ -f "$prefix/include/dualbatch.mod" ] && echo "no gfortran" || echo "the install has no Fortran module")"
fi
