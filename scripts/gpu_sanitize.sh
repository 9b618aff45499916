#!/usr/bin/env bash
# gpu_sanitize.sh — the GPU tests under NVIDIA compute-sanitizer, on a machine with a GPU: every
# tests/test_gpu_* binary of a `gpu` preset build, on both GPU tiers (DUALBATCH_TIER=interpret,
# compile; test_gpu_jit sets its own), under memcheck (out-of-bounds and misaligned accesses,
# leaks of device memory), racecheck (shared-memory hazards) and initcheck (reads of
# uninitialized device memory).  The runs go in parallel (JOBS at once; the GPU is shared) with
# the random-program sweeps thinned (DUALBATCH_TEST_SWEEP_DIV, default 10: the kernels are the
# same, the sanitizers 10-100x slower).  A run is one Criterion test of one binary (its --list),
# so the slow cases spread over the jobs and a timeout names its test.  Each run's log and a
# summary line per run go to LOGDIR.
#   scripts/gpu_sanitize.sh [LOGDIR [JOBS [TOOL...]]]     (default: build-gpu/sanitize, 6, all three)
# DUALBATCH_SANITIZE_TIMEOUT bounds one run (seconds, default 3000) and DUALBATCH_SANITIZE_DEADLINE
# (a time in seconds since the epoch) all of them: a run ends by it, and one not started by then
# is reported as not run.  TESTS (a regular expression) picks test binaries, RUNS (another) the
# runs among them, matched against "BINARY TIER TOOL SUITE/TEST" (TIER: interpret, compile, own).
# test_gpu_jit's fresh processes are exec'd (tests/tools/gpu_jit_child), so compute-sanitizer
# follows them (--target-processes all).  DUALBATCH_TEST_UNTIMED=1 tells the tests that compare
# speeds (test_gpu_dispatch's calibration) that the sanitizer's slowdown makes them meaningless.
# DUALBATCH_SANITIZE_GPUS (a comma list of ordinals, e.g. 0,1) spreads the runs over those GPUs
# round-robin (CUDA_VISIBLE_DEVICES per run; test_gpu_devices keeps every GPU visible).
# Exit 0 only when every run finished with "ERROR SUMMARY: 0 errors" and its test did not fail
# (a test may skip itself: test_gpu_engine's no-device case where there is a device, a compiled-
# kernel case on the interpreter tier; but not all of them, as without a GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
logdir=${1:-build-gpu/sanitize}
jobs=${2:-6}
shift $(( $# > 2 ? 2 : $# ))
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck initcheck)
command -v compute-sanitizer >/dev/null || { echo "gpu_sanitize: compute-sanitizer not found" >&2; exit 2; }
mkdir -p "$logdir"
cache=$(mktemp -d /tmp/dualbatch-sanitize-cache-XXXXXX)
runs=()
for bin in build-gpu/tests/test_gpu_*; do
  [ -x "$bin" ] || continue
  name=${bin##*/}
  [[ "$name" =~ ${TESTS:-.} ]] || continue
  tiers=(interpret compile)
  [ "$name" = test_gpu_jit ] && tiers=(own)
  # "suite: N tests" then one "├── test" line per test
  cases=$("$bin" --list 2>&1 | awk '/^[A-Za-z_0-9]+: [0-9]+ tests?$/ {s = substr($1, 1, length($1) - 1); next}
                                    s != "" && NF >= 2 {print s "/" $NF}')
  [ -n "$cases" ] || { echo "gpu_sanitize: $bin --list gave no tests" >&2; exit 2; }
  for tier in "${tiers[@]}"; do
    for tool in "${tools[@]}"; do
      for c in $cases; do
        [[ "$name $tier $tool $c" =~ ${RUNS:-.} ]] && runs+=("$name $tier $tool $c")
      done
    done
  done
done
[ ${#runs[@]} -gt 0 ] || { echo "gpu_sanitize: no test matches TESTS and RUNS" >&2; exit 2; }
run_one() {
  local index=$1 name=$2 tier=$3 tool=$4 tcase=$5 logdir=$6 cache=$7
  local log="$logdir/$name.$tier.$tool.${tcase//\//.}.log" knobs="" t0=$SECONDS
  if [ -n "${DUALBATCH_SANITIZE_GPUS:-}" ] && [ "$name" != test_gpu_devices ]; then
    local gpus
    IFS=, read -r -a gpus <<< "$DUALBATCH_SANITIZE_GPUS"
    export CUDA_VISIBLE_DEVICES=${gpus[$(( index % ${#gpus[@]} ))]}
  fi
  [ "$tier" = compile ] && knobs="DUALBATCH_JIT_SECOND=0 DUALBATCH_JIT_REVERSE=0 DUALBATCH_JIT_SGRAD=0"
  local tierenv=$tier
  [ "$tier" = own ] && tierenv=""
  local limit=${DUALBATCH_SANITIZE_TIMEOUT:-3000}
  if [ -n "${DUALBATCH_SANITIZE_DEADLINE:-}" ]; then
    local left=$(( DUALBATCH_SANITIZE_DEADLINE - $(date +%s) ))
    if [ "$left" -lt 5 ]; then echo "$name [$tier] $tool $tcase: not run (deadline)"; return; fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  env DUALBATCH_DEVICE= DUALBATCH_CACHE_DIR="$cache" OMP_WAIT_POLICY=passive DUALBATCH_TIER="$tierenv" \
      DUALBATCH_TEST_UNTIMED=1 \
      DUALBATCH_TEST_SWEEP_DIV="${DUALBATCH_TEST_SWEEP_DIV:-10}" $knobs \
      timeout "$limit" compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 99 --print-limit 20 \
      "build-gpu/tests/$name" --filter "$tcase" --verbose > "$log" 2>&1
  local rc=$?
  local errors
  # memcheck and initcheck end each process with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)"
  errors=$(grep -hoE "ERROR SUMMARY: [0-9]+ error|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ error" "$log" |
           awk '{s += ($1 == "ERROR") ? $3 : substr($6, 2)} END {print s + 0}')
  local summaries
  summaries=$(grep -cE "ERROR SUMMARY|RACECHECK SUMMARY" "$log")
  local tests
  tests=$(grep -hE "^\[====\] Synthesis" "$log" | tail -1 | sed 's/.*Synthesis: //')
  echo "$name [$tier] $tool $tcase: rc $rc, $errors errors in $summaries processes, $((SECONDS - t0)) s; $tests"
}
export -f run_one
for i in "${!runs[@]}"; do printf '%d %s\n' "$i" "${runs[$i]}"; done |
  xargs -P "$jobs" -I{} bash -c 'run_one $1 "$2" "$3" "$4" "$5" "$6" "$7"' _ {} "$logdir" "$cache" \
  | tee "$logdir/summary.txt"
rm -rf "$cache"
bad=$(grep -vcE ": rc 0, 0 errors in [1-9][0-9]* processes, [0-9]+ s; Tested: [0-9]+ \| Passing: [0-9]+ \| Failing: 0 \| Crashing: 0" "$logdir/summary.txt")
skipped=$(grep -cE "Tested: 0 " "$logdir/summary.txt")
echo "gpu_sanitize: ${#runs[@]} runs, $bad not clean, $skipped skipped by their test"
[ "$bad" -eq 0 ] && [ "$skipped" -lt "${#runs[@]}" ]
