# Builds the libFuzzer target with clang and runs it for a bounded time.
#   cmake -DSOURCE=<repo> -DBINARY=<dir> -DCLANGXX=<clang++> [-DSECONDS=30] -P run_fuzz.cmake
# New inputs go to <dir>/corpus; tests/fuzz/corpus is read as the seed. A crash leaves
# <dir>/crash-* : copy it into tests/fuzz/corpus so the unit tests replay it forever.
if(NOT SECONDS)
  set(SECONDS 30)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/fuzz/standalone -B ${BINARY}
                        -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzz build failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY} -j2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz target failed")
endif()
file(MAKE_DIRECTORY ${BINARY}/corpus)
# A fixed seed: the same exploration each run, so CI does not fail at random.
execute_process(COMMAND ${BINARY}/fuzz_settings -seed=1 -max_total_time=${SECONDS} -timeout=10
                        -rss_limit_mb=2048 -max_len=65536 -artifact_prefix=${BINARY}/
                        ${BINARY}/corpus ${SOURCE}/tests/fuzz/corpus
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a failing input: see ${BINARY}/crash-* or timeout-*")
endif()
