# header_functions.cmake — dual_header_functions(HEADER OUT): the names of the functions declared
# in the public header (every line that starts a declaration `type dual_name(`), for the checks
# that compare them with the shared library's symbols (check_exports.cmake) and the Fortran
# module's bindings (check_fortran_bindings.cmake).  Fails when it finds implausibly few.
function(dual_header_functions header out)
  file(STRINGS ${header} decls REGEX "^[a-z].*[ *]dual_[a-z0-9_]+\\(")
  set(names "")
  foreach(line ${decls})
    string(REGEX MATCH "dual_[a-z0-9_]+\\(" name "${line}")
    string(REPLACE "(" "" name "${name}")
    list(APPEND names ${name})
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(LENGTH names count)
  if(count LESS 50)
    message(FATAL_ERROR "found only ${count} declarations in ${header}: the pattern is stale")
  endif()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
