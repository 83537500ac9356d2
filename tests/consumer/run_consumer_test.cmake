# Builds and runs tests/consumer/main.cc against feedcore in one of three
# ways. Run with `cmake -D<var>=<value>... -P run_consumer_test.cmake`:
#
#   MODE                 find_package | add_subdirectory | pkg_config |
#                        exports
#   FEEDCORE_BINARY_DIR  feedcore's build tree (find_package, pkg_config)
#   FEEDCORE_SOURCE_DIR  feedcore's source tree (add_subdirectory, exports)
#   REDIS_CLUSTER        ON to build the Redis Cluster backend too (exports)
#   WERROR               FEEDCORE_WERROR of the exports build
#   LAUNCHER             compiler launcher (ccache), may be empty
#   CONSUMER_DIR         this directory (tests/consumer)
#   WORK_DIR             scratch directory; emptied first
#   CXX                  C++ compiler to use
#
# find_package and pkg_config first install the already built library into
# WORK_DIR/prefix with `cmake --install`, exactly as a packager would.
# exports builds the shared libraries from the source tree and checks that
# they export feedcore's public API and nothing else (check_exports.cmake).
cmake_minimum_required(VERSION 3.25)

foreach(var MODE CONSUMER_DIR WORK_DIR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()

# Runs a command, echoing it, and stops the test if it fails.
function(run)
  string(JOIN " " printable ${ARGN})
  message(STATUS "+ ${printable}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${printable}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")

if(MODE STREQUAL "find_package" OR MODE STREQUAL "pkg_config")
  run(${CMAKE_COMMAND} --install "${FEEDCORE_BINARY_DIR}" --prefix "${prefix}")
endif()

if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${build}"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DCMAKE_PREFIX_PATH=${prefix}")
  run(${CMAKE_COMMAND} --build "${build}" -j2)
  run("${build}/consumer")
elseif(MODE STREQUAL "add_subdirectory")
  run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}/subdirectory" -B "${build}"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DFEEDCORE_SOURCE_DIR=${FEEDCORE_SOURCE_DIR}")
  run(${CMAKE_COMMAND} --build "${build}" -j2)
  run("${build}/consumer")
elseif(MODE STREQUAL "pkg_config")
  file(GLOB_RECURSE pc_files "${prefix}/feedcore.pc")
  if(NOT pc_files)
    message(FATAL_ERROR "no feedcore.pc installed under ${prefix}")
  endif()
  list(GET pc_files 0 pc_file)
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  execute_process(
    COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags --libs feedcore
    OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs feedcore failed (${rc})")
  endif()
  message(STATUS "PKG_CONFIG_PATH=${pc_dir} pkg-config --cflags --libs feedcore: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  file(MAKE_DIRECTORY "${build}")
  run("${CXX}" "${CONSUMER_DIR}/main.cc" -o "${build}/consumer" ${flags})
  run("${build}/consumer")
elseif(MODE STREQUAL "exports")
  set(targets feedcore)
  if(REDIS_CLUSTER)
    list(APPEND targets feedcore_redis_cluster)
  endif()
  run(${CMAKE_COMMAND} -S "${FEEDCORE_SOURCE_DIR}" -B "${build}"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}"
      -DBUILD_SHARED_LIBS=ON
      "-DFEEDCORE_REDIS_CLUSTER=${REDIS_CLUSTER}"
      "-DFEEDCORE_WERROR=${WERROR}"
      -DFEEDCORE_TEST=OFF -DFEEDCORE_BENCH=OFF -DFEEDCORE_EXAMPLES=OFF
      -DFEEDCORE_INSTALL=OFF)
  run(${CMAKE_COMMAND} --build "${build}" -j2 --target ${targets})
  include("${CONSUMER_DIR}/check_exports.cmake")
  file(GLOB headers "${FEEDCORE_SOURCE_DIR}/include/feedcore/*.h")
  foreach(target ${targets})
    feedcore_check_exports(
      LIBRARY "${build}/lib${target}.so"
      HEADERS ${headers})
  endforeach()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
