# Warning set, sanitizers and floating-point flags shared by every C target of the project.
# dual_target_flags(target): strict warnings (STYLE.md §13), -Werror when DUAL_WERROR, the
# sanitizers when DUAL_SANITIZE.  Fortran sources (gfortran) get their own warning set, never
# as errors.  -ffp-contract=off keeps a*b+c from being fused differently in
# vectorized and remainder loops, which would break bitwise reproducibility across widths.
set(DUAL_WARNINGS -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion -Wstrict-prototypes
    -Wmissing-prototypes -Wpointer-arith -Wundef)
set(DUAL_FORTRAN_WARNINGS -Wall -Wextra -Wimplicit-interface -Wimplicit-procedure) # gfortran's
set(DUAL_SAN_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)

function(dual_target_flags target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${DUAL_WARNINGS} -ffp-contract=off -fno-math-errno>)
  if(DUAL_HAVE_FORTRAN)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANG_AND_ID:Fortran,GNU>:${DUAL_FORTRAN_WARNINGS}>")
  endif()
  if(DUAL_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>)
  endif()
  if(DUAL_NATIVE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-march=native>)
  endif()
  if(DUAL_SANITIZE)
    target_compile_options(${target} PRIVATE ${DUAL_SAN_FLAGS})
    target_link_options(${target} PRIVATE ${DUAL_SAN_FLAGS})
  endif()
  if(DUAL_FUZZ) # coverage for libFuzzer; the targets themselves link -fsanitize=fuzzer
    # (clang reports every `omp simd` loop the sanitizers keep from vectorizing)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link -Wno-pass-failed>)
  endif()
endfunction()
