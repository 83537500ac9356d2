# The conformance suite: each test source runs twice, against the
# in-process backend (<name>) and against the local Redis Cluster that the
# `redis_cluster` fixture starts (<name>_redis_cluster). Included from
# tests/CMakeLists.txt after redis_cluster/redis_cluster.cmake.
#
#   feedcore_add_conformance_test(NAME name LABEL label [TIMEOUT seconds])
function(feedcore_add_conformance_test)
  cmake_parse_arguments(ARG "" "NAME;LABEL;TIMEOUT" "" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${ARG_NAME} conformance/${ARG_NAME}.cc
    $<TARGET_OBJECTS:feedcore_doctest_main>)
  # tests/ for backend.h; src/ for the cluster's partition function, which
  # the leaderboard tests use to crowd one partition.
  target_include_directories(${ARG_NAME} PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PRIVATE
    feedcore::feedcore feedcore::redis_cluster doctest::doctest
    feedcore_warnings absl::strings)
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME} PROPERTIES
    LABELS "${ARG_LABEL};conformance"
    TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT FEEDCORE_TEST_BACKEND=memory)
  add_test(NAME ${ARG_NAME}_redis_cluster COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME}_redis_cluster PROPERTIES
    LABELS "${ARG_LABEL};conformance"
    TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT FEEDCORE_TEST_BACKEND=redis_cluster)
  feedcore_requires_redis_cluster(${ARG_NAME}_redis_cluster)
endfunction()

feedcore_add_conformance_test(NAME feed_conformance_test LABEL unit)
feedcore_add_conformance_test(NAME feed_conformance_model_test LABEL model)
feedcore_add_conformance_test(NAME leaderboard_conformance_test LABEL unit)
feedcore_add_conformance_test(NAME leaderboard_conformance_model_test
  LABEL model)
