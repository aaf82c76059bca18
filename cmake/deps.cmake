# Finds the header-only CUTLASS/CuTe dependency. Nothing is vendored: scripts/setup installs the
# nvidia-cutlass wheel into .deps/cutlass (headers under cutlass_library/source/include), or
# -DCUTLASS_DIR= points at any CUTLASS checkout or install.

set(_fc_cutlass_candidates)
if(CUTLASS_DIR)
  list(APPEND _fc_cutlass_candidates "${CUTLASS_DIR}/include" "${CUTLASS_DIR}")
endif()
if(DEFINED ENV{CUTLASS_DIR})
  list(APPEND _fc_cutlass_candidates "$ENV{CUTLASS_DIR}/include" "$ENV{CUTLASS_DIR}")
endif()
list(APPEND _fc_cutlass_candidates
  "${PROJECT_SOURCE_DIR}/.deps/cutlass/cutlass_library/source/include"
  "${PROJECT_SOURCE_DIR}/.deps/cutlass-include")

set(FLASHCUTE_CUTLASS_INCLUDE "")
foreach(_dir IN LISTS _fc_cutlass_candidates)
  if(EXISTS "${_dir}/cute/tensor.hpp" AND EXISTS "${_dir}/cutlass/cutlass.h")
    set(FLASHCUTE_CUTLASS_INCLUDE "${_dir}")
    break()
  endif()
endforeach()
if(NOT FLASHCUTE_CUTLASS_INCLUDE)
  message(FATAL_ERROR
    "CUTLASS/CuTe headers not found (looked in: ${_fc_cutlass_candidates}).\n"
    "Run scripts/setup, or pass -DCUTLASS_DIR=<a CUTLASS checkout>.")
endif()
file(STRINGS "${FLASHCUTE_CUTLASS_INCLUDE}/cutlass/version.h" _fc_cutlass_ver REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*CUTLASS_MAJOR ([0-9]+).*CUTLASS_MINOR ([0-9]+).*CUTLASS_PATCH ([0-9]+).*" "\\1.\\2.\\3" _fc_cutlass_ver "${_fc_cutlass_ver}")
message(STATUS "flashcute: CUTLASS ${_fc_cutlass_ver} headers at ${FLASHCUTE_CUTLASS_INCLUDE}")

add_library(flashcute_cutlass INTERFACE)
target_include_directories(flashcute_cutlass SYSTEM INTERFACE "${FLASHCUTE_CUTLASS_INCLUDE}")
# wgmma N shapes that are not multiples of 64 (the SM90 forward's d 256 row uses block_n 80). Every
# CuTe user gets the same definition, so all translation units see the same atom selectors.
target_compile_definitions(flashcute_cutlass INTERFACE CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED)
