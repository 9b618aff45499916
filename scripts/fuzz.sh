#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer targets (preset `fuzz`: clang, ASan + UBSan) and run each for a
# fixed time from its checked-in seed corpus (tests/fuzz/corpus/<target>), in a scratch copy so the
# repository's corpus is not touched.  A finding (crash, sanitizer report, failed check, leak,
# timeout) stops with the reproducer saved in the scratch directory and a nonzero exit.
#   scripts/fuzz.sh [SECONDS [JOBS [TARGET...]]]
#     SECONDS  per target (default 20: CI's smoke run); JOBS parallel workers per target
#     (default 1); TARGETS default: compile load cli_read cache differential.
# The long run of the closing note: scripts/fuzz.sh 3600 16.  Each target prints its executions
# (summed over the workers) as "fuzz: TARGET: N executions in S s".  DUALBATCH_FUZZ_SCRATCH=DIR
# resumes from a previous run's scratch directory (its grown corpus) instead of a fresh one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang libclang-rt-14-dev libomp-dev
seconds=${1:-20}
jobs=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(compile load cli_read cache differential)
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc 2>/dev/null || echo 2)" --target $(printf 'fuzz_%s ' "${targets[@]}")
# DUALBATCH_FUZZ_SCRATCH: a previous run's scratch directory, whose corpus the run resumes from
scratch=${DUALBATCH_FUZZ_SCRATCH:-$(mktemp -d /tmp/dualbatch-fuzz-XXXXXX)}
echo "fuzz: scratch corpus and logs in $scratch"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the differential target's compiled-tier inputs compile C modules: tcc's take milliseconds
if [ -z "${DUALBATCH_CC:-}" ] && command -v tcc >/dev/null; then export DUALBATCH_CC=tcc; fi
status=0
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t"
  # text inputs stay short (the compiler's work grows with the source: lang/common.h)
  max_len=4096
  [ "$t" = compile ] && max_len=512
  start=$(date +%s)
  set +e
  (cd "$scratch" && "$OLDPWD/build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=$max_len \
     -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 -jobs="$jobs" -workers="$jobs" \
     "$scratch/$t" "$OLDPWD/tests/fuzz/corpus/$t" > "$scratch/$t.log" 2>&1)
  rc=$?
  set -e
  # with -jobs the workers log to fuzz-N.log and the main log repeats each worker's log as it
  # ends: the executions are the sum of the workers' final stats, counted once
  execs=$(cat "$scratch"/fuzz-*.log 2>/dev/null | awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}')
  rm -f "$scratch"/fuzz-*.log.done
  run=$(date +%s)
  for f in "$scratch"/fuzz-*.log; do [ -e "$f" ] && mv "$f" "$scratch/$t.$run.${f##*/}"; done
  mv "$scratch/$t.log" "$scratch/$t.$run.log"
  echo "fuzz: $t: $execs executions in $(( $(date +%s) - start )) s (rc $rc)"
  if [ $rc -ne 0 ] || grep -qE "ERROR: libFuzzer|fuzz check failed|SUMMARY: (Address|Undefined|Leak)" "$scratch/$t.$run".*log 2>/dev/null; then
    echo "fuzz: $t: FINDING — see $scratch/$t.$run.log (reproducers: $scratch/crash-* $scratch/leak-* $scratch/timeout-*)"
    grep -hE "fuzz check failed|ERROR:|SUMMARY:" "$scratch/$t.$run".*log 2>/dev/null | head -5
    status=1
  fi
done
exit $status
