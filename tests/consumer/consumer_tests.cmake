# Tests that build a separate program against feedcore the three ways a
# user can consume it: an installed CMake package (find_package), the source
# tree (add_subdirectory), and an installed pkg-config file; and, in a build
# of shared libraries, a check that they export the public API only
# (exports). Included from tests/CMakeLists.txt; each test runs
# run_consumer_test.cmake.
#
# The find_package and pkg_config tests install the current build and
# compile only their one-file program, so they need install rules
# (FEEDCORE_INSTALL). The add_subdirectory test configures the source tree
# as part of a program's own, with this build's compiler, flags, generator
# and compiler launcher, in a tree beside this one (<build>-add_subdirectory,
# at the same depth, so that ccache finds every object this build already
# compiled). The exports test reads the shared libraries this build made
# (CI's sanitizer build, make asan, is a shared build).

set(_feedcore_consumer_dir "${CMAKE_CURRENT_LIST_DIR}")

function(_feedcore_add_consumer_test mode)
  cmake_parse_arguments(ARG "" "" "ARGS;PROPERTIES" ${ARGN})
  add_test(
    NAME consumer.${mode}
    COMMAND ${CMAKE_COMMAND}
      -DMODE=${mode}
      -DCONSUMER_DIR=${_feedcore_consumer_dir}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/consumer/${mode}
      -DCXX=${CMAKE_CXX_COMPILER}
      ${ARG_ARGS}
      -P ${_feedcore_consumer_dir}/run_consumer_test.cmake)
  set_tests_properties(consumer.${mode} PROPERTIES
    LABELS consumer
    TIMEOUT 900
    ${ARG_PROPERTIES})
endfunction()

if(FEEDCORE_INSTALL)
  _feedcore_add_consumer_test(find_package
    ARGS -DFEEDCORE_BINARY_DIR=${feedcore_BINARY_DIR}
         -DREDIS_CLUSTER=${FEEDCORE_REDIS_CLUSTER})
  _feedcore_add_consumer_test(pkg_config
    ARGS -DFEEDCORE_BINARY_DIR=${feedcore_BINARY_DIR})
endif()
# A compiler launcher is a list; add_test would split it into arguments.
string(REPLACE ";" "|" _feedcore_launcher "${CMAKE_CXX_COMPILER_LAUNCHER}")
# Builds the library again with -j2: reserve both cores.
_feedcore_add_consumer_test(add_subdirectory
  ARGS -DFEEDCORE_SOURCE_DIR=${feedcore_SOURCE_DIR}
       -DGENERATOR=${CMAKE_GENERATOR}
       -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
       -DWERROR=${FEEDCORE_WERROR}
       "-DLAUNCHER=${_feedcore_launcher}"
       -DBUILD_DIR=${CMAKE_BINARY_DIR}-add_subdirectory
  PROPERTIES PROCESSORS 2)
if(BUILD_SHARED_LIBS)
  set(_feedcore_shared_libraries $<TARGET_FILE:feedcore>)
  if(FEEDCORE_REDIS_CLUSTER)
    list(APPEND _feedcore_shared_libraries
      $<TARGET_FILE:feedcore_redis_cluster>)
  endif()
  string(REPLACE ";" "|" _feedcore_shared_libraries
    "${_feedcore_shared_libraries}")
  # Labelled exports, not consumer: it builds nothing, so the sanitizer
  # build runs it.
  _feedcore_add_consumer_test(exports
    ARGS -DFEEDCORE_SOURCE_DIR=${feedcore_SOURCE_DIR}
         "-DLIBRARIES=${_feedcore_shared_libraries}"
    PROPERTIES LABELS exports)
endif()
