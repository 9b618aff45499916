#!/usr/bin/env bash
# deps.sh — install the Debian packages dualbatch needs to build and test, if any are missing.
# Used by scripts/demo.sh, scripts/test.sh and .ci/run (g++: test_jit_host compiles generated
# kernels as host C++; gfortran: the Fortran module, its examples and tests; python3 with venv,
# numpy, pytest, setuptools and wheel: the Python binding's tests and scripts/check_python.sh, which
# pip-installs it without a package index; tcc: test_cpu_jit builds the CPU compiled tier's modules
# with a second C compiler).  Needs root or sudo only when installing.
set -euo pipefail
need=()
for pkg in cmake gcc g++ gfortran make pkg-config libcriterion-dev tcc \
           python3 python3-venv python3-numpy python3-pytest python3-setuptools python3-wheel "$@"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "dualbatch: installing ${need[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
