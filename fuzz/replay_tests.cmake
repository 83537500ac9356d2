# Regression tests from the fuzz corpora: each fuzz target built as a plain
# program (fuzz/replay_main.cc instead of libFuzzer, any compiler) that runs
# every file of fuzz/corpus/<target>, the seeds and every input that once
# crashed, through the target's checks. Included by tests/CMakeLists.txt,
# so they run under `make test` and under the sanitizers of `make sanitize`.

include(${PROJECT_SOURCE_DIR}/fuzz/fuzz_target_deps.cmake)

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
    ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc)
  feedcore_fuzz_target_deps(${ARG_NAME}_replay INCLUDES ${ARG_INCLUDES})
  add_test(NAME ${ARG_NAME}_replay
    COMMAND ${ARG_NAME}_replay ${PROJECT_SOURCE_DIR}/fuzz/corpus/${ARG_NAME})
  set_tests_properties(${ARG_NAME}_replay PROPERTIES
    LABELS fuzz-replay TIMEOUT 300)
endfunction()

include(${PROJECT_SOURCE_DIR}/fuzz/fuzz_targets.cmake)
