# A local Redis Cluster shared by the tests of the Redis Cluster backend,
# included from tests/CMakeLists.txt. The ctest fixture `redis_cluster`
# starts it (scripts/redis-cluster start) before the first test that needs
# it and stops it after the last one, also under `ctest -j`. Not optional:
# without redis-server (scripts/install-deps) the start test fails, and
# with it every test that needs the cluster, instead of passing unrun.
#
#   feedcore_requires_redis_cluster(TEST_NAME)
#       makes TEST_NAME wait for the cluster, labels it `redis` and gives it
#       FEEDCORE_REDIS_CLUSTER_SEEDS, the file of seed addresses
#       (tests/redis_cluster_seeds.h reads it)
#   FEEDCORE_REDIS_CLUSTER_SCRIPT
#       scripts/redis-cluster, for tests that need a private cluster they
#       may break (a master killed mid-workload)

get_filename_component(FEEDCORE_REDIS_CLUSTER_SCRIPT
  "${CMAKE_CURRENT_LIST_DIR}/../../scripts/redis-cluster" ABSOLUTE)
set(FEEDCORE_REDIS_CLUSTER_DIR "${CMAKE_BINARY_DIR}/redis-cluster")

add_test(NAME redis_cluster_start
  COMMAND ${FEEDCORE_REDIS_CLUSTER_SCRIPT} start ${FEEDCORE_REDIS_CLUSTER_DIR})
add_test(NAME redis_cluster_stop
  COMMAND ${FEEDCORE_REDIS_CLUSTER_SCRIPT} stop ${FEEDCORE_REDIS_CLUSTER_DIR})
set_tests_properties(redis_cluster_start PROPERTIES
  FIXTURES_SETUP redis_cluster
  LABELS redis
  TIMEOUT 120)
set_tests_properties(redis_cluster_stop PROPERTIES
  FIXTURES_CLEANUP redis_cluster
  LABELS redis
  TIMEOUT 120)

# APPEND throughout, so that properties the test already has survive.
function(feedcore_requires_redis_cluster TEST_NAME)
  set_property(TEST ${TEST_NAME} APPEND PROPERTY
    FIXTURES_REQUIRED redis_cluster)
  set_property(TEST ${TEST_NAME} APPEND PROPERTY LABELS redis)
  set_property(TEST ${TEST_NAME} APPEND PROPERTY ENVIRONMENT
    "FEEDCORE_REDIS_CLUSTER_SEEDS=${FEEDCORE_REDIS_CLUSTER_DIR}/seeds")
endfunction()
