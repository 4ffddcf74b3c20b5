# What `make run` configures (PGSLOW_BUILD_TESTS=OFF) must not need the test-only packages
# (scripts/install-deps.sh test): configured here with GoogleTest and Google Benchmark made
# unfindable, it must succeed, look for no test tool, and still define the pgslow target.
# cmake -DSOURCE=<tree> -DBINARY=<scratch folder> -DGENERATOR=<generator> -P configure_run_only.cmake
file(REMOVE_RECURSE ${BINARY})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
          -DPGSLOW_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON
          -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring with -DPGSLOW_BUILD_TESTS=OFF needs a test-only package:\n${out}")
endif()
file(READ ${BINARY}/CMakeCache.txt cache)
foreach(entry GTest_DIR GTEST_INCLUDE_DIR benchmark_DIR PGSLOW_CLANGXX PGSLOW_CLANG_FORMAT)
  if(cache MATCHES "\n${entry}:")
    message(FATAL_ERROR "-DPGSLOW_BUILD_TESTS=OFF still looks for ${entry} (CMakeCache.txt)")
  endif()
endforeach()
if(GENERATOR STREQUAL "Ninja")
  file(READ ${BINARY}/build.ninja rules)
  set(pgslow_rule "\nbuild pgslow:")
else()
  file(READ ${BINARY}/Makefile rules)
  set(pgslow_rule "\npgslow:")
endif()
string(FIND "${rules}" "${pgslow_rule}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "-DPGSLOW_BUILD_TESTS=OFF defines no pgslow target")
endif()
file(REMOVE_RECURSE ${BINARY})
message(STATUS "configured the pgslow target without GoogleTest, Google Benchmark or clang")
