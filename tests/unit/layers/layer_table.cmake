# read_layer_table(<doc> <rows> <libraries>): the rows of docs/architecture.md's "## Layers"
# table, from the bottom up: each row's first cell (a folder, `runner/driver/`, or file
# patterns, `runner/experiment/lab_session.*`, comma-joined when there are several) into <rows> and its library into <libraries>. The one
# reader of the documented order, for the include check (check_layers.cmake) and the link check
# (CMakeLists.txt).
function(read_layer_table doc rows_var libraries_var)
  file(STRINGS ${doc} lines)
  set(in_layers FALSE)
  set(rows "")
  set(libraries "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^## Layers")
      set(in_layers TRUE)
    elseif(line MATCHES "^## ")
      set(in_layers FALSE)
    elseif(in_layers AND line MATCHES "^\\| (`[^|]+)\\| `([a-z_]+)`")
      # Every backticked pattern of the first cell, comma-joined: one row may hold two files.
      set(library "${CMAKE_MATCH_2}")
      string(REGEX MATCHALL "`[^`]+`" patterns "${CMAKE_MATCH_1}")
      string(REPLACE "`" "" patterns "${patterns}")
      string(REPLACE ";" "," patterns "${patterns}")
      list(APPEND rows "${patterns}")
      list(APPEND libraries "${library}")
    endif()
  endforeach()
  set(${rows_var} "${rows}" PARENT_SCOPE)
  set(${libraries_var} "${libraries}" PARENT_SCOPE)
endfunction()
