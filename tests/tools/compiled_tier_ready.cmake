# compiled_tier_ready.cmake — the setup of the `compiled` label's tests (the CPU suite on the
# compiled tier): the CPU's compiled tier can compile here, and its module's results are the
# interpreter's, to the printed bit.  Without it a missing or broken C compiler would let every
# `[compile]` test pass on the interpreter (AUTO falls back with a note); CTest runs none of them
# when this fails.
#   cmake -DCLI=<dualbatch> -DDIR=<scratch directory> -P compiled_tier_ready.cmake
file(MAKE_DIRECTORY ${DIR})
file(WRITE ${DIR}/ready.dbs "input x[2]\noutput y = sin(x[0]) * exp(x[1]) / (1 + x[0] * x[0])\n")
file(WRITE ${DIR}/ready.in "0.5,-1.25\n3,0.125\n")
foreach(tier interpret compile)
  execute_process(COMMAND ${CLI} jacobian ${DIR}/ready.dbs --device cpu --tier ${tier} --in ${DIR}/ready.in
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out_${tier} ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the CPU's ${tier} tier failed (is the C compiler there? DUALBATCH_CC=$ENV{DUALBATCH_CC}):\n${err}")
  endif()
endforeach()
if(NOT out_compile STREQUAL out_interpret OR out_compile STREQUAL "")
  message(FATAL_ERROR "compiled:\n${out_compile}\ninterpreted:\n${out_interpret}")
endif()
message(STATUS "the compiled CPU tier compiles (DUALBATCH_CC=$ENV{DUALBATCH_CC}):\n${out_compile}")
