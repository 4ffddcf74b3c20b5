# cmake -DSOURCE_DIR=<tree> -P check_layers.cmake: every include of the code (runner/ and
# report/) goes down or across the layer order docs/architecture.md documents ("## Layers",
# from the bottom up), never up; it fails naming each file and include that runs up.
#
# The order is read from the document itself, so the document and the code cannot drift apart:
# a row's first cell is a folder (`runner/driver/`) or a file pattern (`runner/stage/lab_session.*`),
# and a file belongs to the most specific row that matches it.

include(${CMAKE_CURRENT_LIST_DIR}/layer_table.cmake)
read_layer_table(${SOURCE_DIR}/docs/architecture.md layers layer_libraries)
list(LENGTH layers layer_count)
if(layer_count LESS 2)
  message(FATAL_ERROR "docs/architecture.md has no \"## Layers\" table to check the includes against")
endif()

# The row of `rel` (a path relative to the tree): its index in the order, -1 for none.
function(layer_of rel out)
  set(best -1)
  set(best_length 0)
  set(index 0)
  foreach(pattern IN LISTS layers)
    string(LENGTH "${pattern}" length)
    if(pattern MATCHES "\\.\\*$")
      string(REGEX REPLACE "\\.\\*$" "" stem "${pattern}")
      string(REGEX REPLACE "\\.[^./]*$" "" rel_stem "${rel}")
      set(matches FALSE)
      if(rel_stem STREQUAL stem)
        set(matches TRUE)
      endif()
    else()
      string(FIND "${rel}" "${pattern}" at)
      set(matches FALSE)
      if(at EQUAL 0)
        set(matches TRUE)
      endif()
    endif()
    if(matches AND length GREATER best_length)
      set(best ${index})
      set(best_length ${length})
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  set(${out} ${best} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE code RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/runner/*.h ${SOURCE_DIR}/runner/*.cpp
     ${SOURCE_DIR}/report/*.h ${SOURCE_DIR}/report/*.cpp)
set(found "")
foreach(rel IN LISTS code)
  layer_of("${rel}" mine)
  if(mine EQUAL -1)
    list(APPEND found "${rel}: in no row of the table; add its folder")
    continue()
  endif()
  file(STRINGS ${SOURCE_DIR}/${rel} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "\"([^\"]+)\"")
      continue()
    endif()
    set(header "${CMAKE_MATCH_1}")
    # The include path is the tree and runner/ (CMakeLists.txt).
    if(EXISTS ${SOURCE_DIR}/runner/${header})
      set(target "runner/${header}")
    elseif(EXISTS ${SOURCE_DIR}/${header})
      set(target "${header}")
    else()
      continue()
    endif()
    layer_of("${target}" theirs)
    if(theirs GREATER mine)
      list(GET layers ${mine} my_row)
      list(GET layers ${theirs} their_row)
      list(APPEND found "${rel}: includes ${target} (${their_row} is above ${my_row})")
    endif()
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR
          "an include runs up the layer order of docs/architecture.md \"Layers\":\n  ${text}\n"
          "Move the shared part down, or change the documented order in the same commit if "
          "the design changed.")
endif()
message(STATUS "every include of runner/ and report/ follows docs/architecture.md's order")
