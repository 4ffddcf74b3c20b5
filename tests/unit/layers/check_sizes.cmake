# cmake -DSOURCE_DIR=<tree> -P check_sizes.cmake: fails naming each file under runner/ or report/
# over 600 lines that docs/architecture.md's "Files that stay long" does not list with a reason
# (a line "- `path`: why"). A listed file that is no longer long fails too, so the list stays true.
cmake_minimum_required(VERSION 3.20)  # IN_LIST in -P scripts
set(limit 600)
file(STRINGS ${SOURCE_DIR}/docs/architecture.md doc_lines)
set(in_section FALSE)
set(listed "")
foreach(line IN LISTS doc_lines)
  if(line MATCHES "^## ")
    if(line STREQUAL "## Files that stay long")
      set(in_section TRUE)
    else()
      set(in_section FALSE)
    endif()
  elseif(in_section AND line MATCHES "^- `([^`]+)`: *[^ ]")
    list(APPEND listed "${CMAKE_MATCH_1}")
  endif()
endforeach()

file(GLOB_RECURSE sources ${SOURCE_DIR}/runner/*.cpp ${SOURCE_DIR}/runner/*.h
     ${SOURCE_DIR}/report/*.cpp ${SOURCE_DIR}/report/*.h)
set(problems "")
set(long "")
foreach(file IN LISTS sources)
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
  # file(STRINGS) drops empty lines; the count is of newlines, as `wc -l` counts.
  file(READ ${file} text)
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" count)
  if(count GREATER limit)
    list(APPEND long "${rel}")
    if(NOT rel IN_LIST listed)
      list(APPEND problems "${rel}: ${count} lines")
    endif()
  endif()
endforeach()
foreach(rel IN LISTS listed)
  if(NOT rel IN_LIST long)
    list(APPEND problems "${rel}: listed in \"Files that stay long\" but not over ${limit} lines "
                         "(or gone): take it off the list")
  endif()
endforeach()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR
          "file lengths against docs/architecture.md's \"Files that stay long\":\n  ${text}\nSplit a "
          "long file into files named for what they hold, or list it there with the reason")
endif()
message(STATUS "no file under runner/ or report/ over ${limit} lines but those listed")
