# Regression tests from the fuzz corpora: every file of fuzz/corpus/<target>,
# the seeds and every input that once crashed, run once through the target's
# checks as the ctest <target>_replay. Included by tests/CMakeLists.txt, so
# they run under `make test` and under the sanitizers of `make sanitize`.
#
# In a build with the libFuzzer targets (FEEDCORE_FUZZ=ON, fuzz/), the test
# runs the libFuzzer binary itself over the corpus without mutating it
# (-runs=0), so each target is compiled once. Elsewhere each target is built
# as a plain program (fuzz/replay_main.cc instead of libFuzzer, any
# compiler).

if(FEEDCORE_FUZZ)
  function(feedcore_fuzz_target)
    cmake_parse_arguments(ARG "" "NAME" "SOURCES;INCLUDES" ${ARGN})
    # The binary is defined later, by fuzz/CMakeLists.txt.
    add_test(NAME ${ARG_NAME}_replay
      COMMAND ${ARG_NAME} -runs=0
        ${PROJECT_SOURCE_DIR}/fuzz/corpus/${ARG_NAME})
    set_tests_properties(${ARG_NAME}_replay PROPERTIES
      LABELS fuzz-replay TIMEOUT 300)
  endfunction()
  include(${PROJECT_SOURCE_DIR}/fuzz/fuzz_targets.cmake)
  return()
endif()

include(${PROJECT_SOURCE_DIR}/fuzz/fuzz_target_deps.cmake)

add_library(feedcore_fuzz_replay_main OBJECT
  ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
target_compile_features(feedcore_fuzz_replay_main PRIVATE cxx_std_20)
target_link_libraries(feedcore_fuzz_replay_main
  PRIVATE feedcore_warnings feedcore_test_flags)

function(feedcore_fuzz_target)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;INCLUDES" ${ARGN})
  set(sources)
  foreach(source ${ARG_SOURCES})
    if(IS_ABSOLUTE ${source})
      list(APPEND sources ${source})
    else()
      list(APPEND sources ${PROJECT_SOURCE_DIR}/fuzz/${source})
    endif()
  endforeach()
  add_executable(${ARG_NAME}_replay ${sources}
    $<TARGET_OBJECTS:feedcore_fuzz_replay_main>)
  feedcore_fuzz_target_deps(${ARG_NAME}_replay INCLUDES ${ARG_INCLUDES})
  target_link_libraries(${ARG_NAME}_replay PRIVATE feedcore_test_flags)
  add_test(NAME ${ARG_NAME}_replay
    COMMAND ${ARG_NAME}_replay ${PROJECT_SOURCE_DIR}/fuzz/corpus/${ARG_NAME})
  set_tests_properties(${ARG_NAME}_replay PROPERTIES
    LABELS fuzz-replay TIMEOUT 300)
endfunction()

include(${PROJECT_SOURCE_DIR}/fuzz/fuzz_targets.cmake)
