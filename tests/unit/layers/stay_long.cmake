# What check_sizes.cmake and check_function_sizes.cmake share: docs/architecture.md's "Files that
# stay long" section, and the one way both report against it.

# The lines of the section, in `out`.
function(stay_long_lines source_dir out)
  file(STRINGS ${source_dir}/docs/architecture.md doc_lines)
  set(in_section FALSE)
  set(lines "")
  foreach(line IN LISTS doc_lines)
    if(line MATCHES "^## ")
      set(in_section FALSE)
      if(line STREQUAL "## Files that stay long")
        set(in_section TRUE)
      endif()
    elseif(in_section)
      list(APPEND lines "${line}")
    endif()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# Fails naming `problems` plus each entry of `listed` that is not in `long` (over `limit` lines
# of `what`, "file" or "function"), so the list stays true; else says all is well.
function(report_stay_long what limit long listed problems)
  foreach(entry IN LISTS listed)
    if(NOT entry IN_LIST long)
      list(APPEND problems "${entry}: listed in \"Files that stay long\" but not over ${limit} "
                           "lines (or gone): take it off the list")
    endif()
  endforeach()
  if(problems)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR
            "${what} lengths against docs/architecture.md's \"Files that stay long\":\n  ${text}\n"
            "Split a long ${what} into parts named for what they hold, or list it there with the "
            "reason")
  endif()
  message(STATUS "no ${what} under runner/ or report/ over ${limit} lines but those listed")
endfunction()
