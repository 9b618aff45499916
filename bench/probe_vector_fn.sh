#!/usr/bin/env bash
# probe_vector_fn.sh — which of the library's elementary functions (src/dual/fn_*.h), inlined into
# an `omp simd` point loop as the CPU compiled tier's generated code inlines them, let the loop
# vectorize with the tier's compiler flags (jit/cc_compile.h): the answer decides which are
# DUAL_FN_CLONE (dual/fn_bits.h: a SIMD clone, called lane by lane from a vectorized loop).
# Usage: bench/probe_vector_fn.sh [compiler]   (default: cc); prints, for the bodies inlined and
# for the tier's build of them (DUAL_FN_JIT_CPU), the functions whose loops vectorize and not.
set -euo pipefail
cc=${1:-cc}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
one=(exp exp2 expm1 log log2 log10 log1p cbrt sinh cosh tanh asinh acosh atanh erf erfc atan asin acos sin cos tan)
two=(pow hypot atan2)
flags="-std=c11 -O2 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp-simd -fno-strict-aliasing"
# gcc (as jit/cc_compile.c tells it: not clang, and GCC, gcc or the FSF's copyright in --version)
v=$("$cc" --version 2>/dev/null || true)
if ! grep -q clang <<< "$v" && grep -q "GCC\\|gcc\\|Free Software Foundation" <<< "$v"; then flags="$flags -mtune-ctrl=use_gather"; fi
echo "compiler: $(head -1 <<< "$v")"
# probe NAME PREAMBLE: a loop per function after PREAMBLE; prints the functions whose loops vectorize
probe() {
  {
    printf '%s\n' "$2"
    for f in "${one[@]}"; do
      printf 'void loop_%s(const double *x, double *y, long n) {\n#pragma omp simd\n  for (long i = 0; i < n; ++i) y[i] = dual_%s(x[i]);\n}\n' "$f" "$f"
    done
    for f in "${two[@]}"; do
      printf 'void loop_%s(const double *x, double *y, long n) {\n#pragma omp simd\n  for (long i = 0; i < n; ++i) y[i] = dual_%s(x[i], x[i + n]);\n}\n' "$f" "$f"
    done
  } > "$dir/p.c"
  "$cc" $flags -I "$root/src/dual" -I "$root/src" -c "$dir/p.c" -o "$dir/p.o" -fopt-info-vec-optimized 2> "$dir/log" || true
  local vec="" scalar=""
  for f in "${one[@]}" "${two[@]}"; do
    local line
    line=$(grep -n "^void loop_$f(" "$dir/p.c" | cut -d: -f1)
    if grep -q "p.c:$((line + 2)):.*loop vectorized" "$dir/log"; then vec="$vec $f"; else scalar="$scalar $f"; fi
  done
  echo "$1: vectorized:$vec"
  echo "$1: scalar:$scalar"
}
# every function's body inlined (always), the library's ordinary definitions
probe inlined "$(printf '#include "dual/fn_bits.h"\n#undef DUAL_FN\n#define DUAL_FN static inline __attribute__((always_inline, unused))\n#include "dual/fn_exp.h"\n#include "dual/fn_log.h"\n#include "dual/fn_pow.h"\n#include "dual/fn_trig.h"\n#include "dual/fn_atrig.h"\n#include "dual/fn_hyp.h"\n#include "dual/fn_erf.h"')"
# as the CPU compiled tier's generated code gets them (DUAL_FN_JIT_CPU: inlined, or SIMD clones)
probe tier "$(printf '#define DUAL_FN_JIT_CPU 1\n#include "dual/fn.h"')"
