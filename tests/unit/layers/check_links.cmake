# cmake -DPROBLEMS=<file> -P check_links.cmake: fails with the link lines that run up the layer
# order of docs/architecture.md, as CMake found them when it configured the build
# (tests/unit/layers/CMakeLists.txt).
file(READ ${PROBLEMS} problems)
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "a library links one above it in docs/architecture.md \"Layers\":\n"
                      "${problems}\nLink down the order, or change the documented order.")
endif()
message(STATUS "every library of docs/architecture.md links only down its order")
