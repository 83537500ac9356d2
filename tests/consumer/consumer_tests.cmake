# Tests that build a separate program against feedcore the three ways a
# user can consume it: an installed CMake package (find_package), the source
# tree (add_subdirectory), and an installed pkg-config file; and a check
# that the shared libraries export the public API only (exports). Included from
# tests/CMakeLists.txt; each test runs run_consumer_test.cmake.
#
# The find_package and pkg_config tests install the current build, so they
# need install rules (FEEDCORE_INSTALL); the add_subdirectory test compiles
# the library a second time.

set(_feedcore_consumer_dir "${CMAKE_CURRENT_LIST_DIR}")

function(_feedcore_add_consumer_test mode)
  add_test(
    NAME consumer.${mode}
    COMMAND ${CMAKE_COMMAND}
      -DMODE=${mode}
      -DFEEDCORE_BINARY_DIR=${feedcore_BINARY_DIR}
      -DFEEDCORE_SOURCE_DIR=${feedcore_SOURCE_DIR}
      -DCONSUMER_DIR=${_feedcore_consumer_dir}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode}
      -DCXX=${CMAKE_CXX_COMPILER}
      -DREDIS_CLUSTER=${FEEDCORE_REDIS_CLUSTER}
      -DWERROR=${FEEDCORE_WERROR}
      "-DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}"
      -P ${_feedcore_consumer_dir}/run_consumer_test.cmake)
  set_tests_properties(consumer.${mode} PROPERTIES
    LABELS consumer
    TIMEOUT 900
    ${ARGN})
endfunction()

if(FEEDCORE_INSTALL)
  _feedcore_add_consumer_test(find_package)
  _feedcore_add_consumer_test(pkg_config)
endif()
# Builds the library again with -j2: reserve both cores.
_feedcore_add_consumer_test(add_subdirectory PROCESSORS 2)
_feedcore_add_consumer_test(exports PROCESSORS 2)
