# cmake -DSOURCE_DIR=<tree> -P check_includes.cmake: fails naming each file of the engine
# (runner/ except cli/ and workshop/) that includes a renderer (report/...).
file(GLOB_RECURSE engine_files ${SOURCE_DIR}/runner/*.h ${SOURCE_DIR}/runner/*.cpp)
set(found "")
foreach(file IN LISTS engine_files)
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${file})
  if(rel MATCHES "^runner/(cli|workshop)/")
    continue()
  endif()
  file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](runner/)?report/")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    list(APPEND found "${rel}: ${line}")
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR
          "the engine includes a renderer:\n  ${text}\nreport/ holds only views: move what the "
          "engine needs into runner/results/ (docs/architecture.md)")
endif()
message(STATUS "no file under runner/ outside cli/ and workshop/ includes report/")
