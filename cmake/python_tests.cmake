# python_tests.cmake — the Python binding's tests (python/tests, pytest) as two CTest tests,
# `python_binding` (label `python`) and `python_binding_gpu` (labels `python` and `gpu`), run
# against the build tree's shared library (DUALBATCH_LIBRARY = $<TARGET_FILE:dualbatch_shared>)
# with the package from its source (PYTHONPATH = python/).  Registered only when a python3 with numpy and pytest is found at
# configure time (-DPython3_EXECUTABLE=... picks another), and not in sanitizer builds (an ASan
# library cannot be loaded into an uninstrumented interpreter).  Included by tests/CMakeLists.txt.
set(Python3_FIND_UNVERSIONED_NAMES FIRST) # the python3 on PATH (a venv, pyenv) before others
find_package(Python3 COMPONENTS Interpreter QUIET)
set(DUAL_PYTHON_TESTS OFF)
if(DUAL_SANITIZE)
  message(STATUS "dualbatch: the Python binding's tests are not registered in sanitizer builds")
elseif(NOT Python3_Interpreter_FOUND)
  message(STATUS "dualbatch: no python3 found: the Python binding's tests are not registered")
else()
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy, pytest"
                  RESULT_VARIABLE dual_py_rc OUTPUT_QUIET ERROR_QUIET)
  if(dual_py_rc EQUAL 0)
    set(DUAL_PYTHON_TESTS ON)
    message(STATUS "dualbatch: Python binding tests with ${Python3_EXECUTABLE}")
  else()
    message(STATUS "dualbatch: ${Python3_EXECUTABLE} lacks numpy or pytest: the Python binding's "
                   "tests are not registered (scripts/deps.sh installs python3-numpy python3-pytest)")
  endif()
endif()
if(DUAL_PYTHON_TESTS)
  set(dual_py_env "DUALBATCH_LIBRARY=$<TARGET_FILE:dualbatch_shared>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python;PYTHONDONTWRITEBYTECODE=1;DUALBATCH_DEVICE=;DUALBATCH_CACHE_DIR=${DUAL_JIT_CACHE}")
  set(dual_pytest ${Python3_EXECUTABLE} -m pytest -q -rs -p no:cacheprovider ${PROJECT_SOURCE_DIR}/python/tests)
  add_test(NAME python_binding COMMAND ${dual_pytest} -m "not gpu")
  set_tests_properties(python_binding PROPERTIES LABELS python TIMEOUT 600 ENVIRONMENT "${dual_py_env}")
  # the device-array tests (pytest marker `gpu`): skipped by CTest without a GPU (gpu_or_skip), and
  # when every one of them skipped (no CuPy, PyTorch or CUDA runtime to allocate with: exit 77,
  # python/tests/conftest.py)
  add_test(NAME python_binding_gpu COMMAND gpu_or_skip ${dual_pytest} -m gpu)
  set_tests_properties(python_binding_gpu PROPERTIES LABELS "python;gpu" TIMEOUT 600 SKIP_RETURN_CODE 77
                       ENVIRONMENT "${dual_py_env};DUALBATCH_ALL_SKIPPED_EXIT=77")
endif()
