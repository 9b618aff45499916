#!/usr/bin/env bash
# run_cpu.sh — the one command of the CPU benchmark (BENCHMARKS.md): installs what is missing
# (as root, Debian: cmake, g++, libceres-dev, libeigen3-dev, libadolc-dev, libsundials-dev,
# libcminpack-dev, pkg-config), configures
# and builds the `bench` preset, runs dualbatch_bench_cpu (Jacobians against Ceres; arguments are
# passed through, e.g. --workload ba), then dualbatch_bench_cpu_hess (Hessians against ADOL-C and a
# compiled nested-dual peer; HESS_ARGS), dualbatch_bench_cpu_grad (reverse-mode gradients against
# ADOL-C; GRAD_ARGS), dualbatch_bench_solve (batched Newton against KINSOL and hybrj1; SOLVE_ARGS)
# and the forward/reverse crossover study dualbatch_bench_crossover (CPU rows;
# CROSSOVER_ARGS; its failure is reported but does not fail the run), and tees the tables to
# bench/results/cpu-<date>.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
[ -f /usr/include/ceres/jet.h ] || [ -f /usr/local/include/ceres/jet.h ] || missing+=(libceres-dev)
[ -d /usr/include/eigen3/Eigen ] || [ -d /usr/local/include/eigen3/Eigen ] || missing+=(libeigen3-dev)
[ -f /usr/include/adolc/adolc.h ] || [ -f /usr/local/include/adolc/adolc.h ] || missing+=(libadolc-dev)
[ -f /usr/include/kinsol/kinsol.h ] || [ -f /usr/local/include/kinsol/kinsol.h ] || missing+=(libsundials-dev)
[ -f /usr/include/cminpack-1/cminpack.h ] || missing+=(libcminpack-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "run_cpu.sh: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "run_cpu.sh: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
    exit 2
  fi
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { cmake --preset bench && cmake --build --preset bench --target dualbatch_bench_cpu dualbatch_bench_cpu_hess dualbatch_bench_cpu_grad dualbatch_bench_solve -j "$(nproc)"; } \
    >"$log" 2>&1; then
  grep -m 20 -E "error|Error" "$log" | cut -c1-400 >&2 || true
  tail -n 15 "$log" | cut -c1-400 >&2
  echo "run_cpu.sh: the build failed (first errors and the last lines of the build above)" >&2
  exit 2
fi
# the crossover study is optional: a build failure is reported and the benchmarks still run
crossover=1
if ! cmake --build --preset bench --target dualbatch_bench_crossover -j "$(nproc)" >"$log" 2>&1; then
  grep -m 5 -E "error|Error" "$log" | cut -c1-400 >&2 || true
  echo "run_cpu.sh: dualbatch_bench_crossover did not build; the crossover study is skipped" >&2
  crossover=0
fi

mkdir -p bench/results
out="bench/results/cpu-$(date +%Y-%m-%d-%H%M).txt"
echo "run_cpu.sh: load before the run: $(uptime)" >&2
status=0
./build-bench/bench/dualbatch_bench_cpu "$@" | tee "$out" || status=$?
echo | tee -a "$out"
# the Hessian benchmark (hess against ADOL-C and a compiled nested-dual peer); HESS_ARGS tunes it
# shellcheck disable=SC2086
./build-bench/bench/dualbatch_bench_cpu_hess ${HESS_ARGS:-} | tee -a "$out" || status=$?
echo | tee -a "$out"
# the gradient benchmark (grad, n = 1024: reverse, forward and AUTO mode against ADOL-C); GRAD_ARGS
# tunes it (e.g. GRAD_ARGS="--reps 5 --batch-forward 3000")
# shellcheck disable=SC2086
./build-bench/bench/dualbatch_bench_cpu_grad ${GRAD_ARGS:-} | tee -a "$out" || status=$?
echo | tee -a "$out"
# batched Newton against KINSOL and hybrj1 (issue 19); SOLVE_ARGS tunes it (e.g. --points 1e4,1e6)
# (one process per system: the timings of one do not depend on the other's memory)
for system in kin_steady rob3; do
  # shellcheck disable=SC2086
  ./build-bench/bench/dualbatch_bench_solve --system "$system" ${SOLVE_ARGS:-} | tee -a "$out" || status=$?
done
if [ "$crossover" = 1 ]; then
  echo | tee -a "$out"
  # the forward/reverse crossover over the grad family (CPU rows): gradients, HVPs, Hessians;
  # CROSSOVER_ARGS tunes it
  for product in grad hvp hessian; do
    # shellcheck disable=SC2086
    ./build-bench/bench/dualbatch_bench_crossover --device cpu --product "$product" ${CROSSOVER_ARGS:-} \
      | tee -a "$out" \
      || echo "run_cpu.sh: the $product crossover study failed (exit ${PIPESTATUS[0]}); the run goes on" >&2
  done
fi
echo "run_cpu.sh: output written to $out (exit status $status)" >&2
exit "$status"
