# cmake -DSOURCE_DIR=<tree> -DCTAGS=<universal-ctags> -P check_function_sizes.cmake: fails naming
# each function under runner/ or report/ over 120 lines that docs/architecture.md's "Files that
# stay long" does not list with a reason (a line "- `name` (`path`): why"). A listed function
# that is no longer long fails too, so the list stays true. The lengths are ctags' (a
# function's first line to its last, comments inside counted).
cmake_minimum_required(VERSION 3.20)
set(limit 120)
include(${CMAKE_CURRENT_LIST_DIR}/stay_long.cmake)
stay_long_lines(${SOURCE_DIR} section)
set(listed "")
foreach(line IN LISTS section)
  if(line MATCHES "^- `([^`]+)` \\(`([^`]+)`\\): *[^ ]")
    list(APPEND listed "${CMAKE_MATCH_2}:${CMAKE_MATCH_1}")
  endif()
endforeach()

execute_process(
  COMMAND ${CTAGS} -R --languages=C++ --kinds-C++=f --fields=+ne -x
          "--_xformat=%{line} %{end} %{name} %{input}" runner report
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE tags
  RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR tags STREQUAL "")
  message(FATAL_ERROR "${CTAGS} did not list the functions (status ${status}): "
                      "universal-ctags is in `make test`'s packages")
endif()
string(REPLACE "\n" ";" rows "${tags}")
set(problems "")
set(long "")
foreach(row IN LISTS rows)
  if(NOT row MATCHES "^([0-9]+) ([0-9]+) ([^ ]+) (.+)$")
    continue()
  endif()
  math(EXPR count "${CMAKE_MATCH_2} - ${CMAKE_MATCH_1} + 1")
  set(key "${CMAKE_MATCH_4}:${CMAKE_MATCH_3}")
  if(count GREATER limit)
    list(APPEND long "${key}")
    if(NOT key IN_LIST listed)
      list(APPEND problems "${CMAKE_MATCH_4}: ${CMAKE_MATCH_3}, ${count} lines")
    endif()
  endif()
endforeach()
report_stay_long(function ${limit} "${long}" "${listed}" "${problems}")
