# What every fuzz target (and its replay program) compiles and links with;
# shared by fuzz/CMakeLists.txt and fuzz/replay_tests.cmake.
function(feedcore_fuzz_target_deps target)
  cmake_parse_arguments(ARG "" "" "INCLUDES" ${ARGN})
  target_include_directories(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/fuzz
    ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/tests
    ${ARG_INCLUDES})
  target_compile_features(${target} PRIVATE cxx_std_20)
  # The internal library: the targets call functions that a shared
  # libfeedcore does not export.
  target_link_libraries(${target} PRIVATE
    feedcore_internal
    feedcore_warnings
    absl::flat_hash_map
    absl::status
    absl::statusor
    absl::strings
    PkgConfig::XXHASH
    Threads::Threads)
endfunction()
