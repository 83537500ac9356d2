# Builds and runs tests/consumer/main.cc against feedcore in one of three
# ways, or checks a shared build's exports. Run with
# `cmake -D<var>=<value>... -P run_consumer_test.cmake`:
#
#   MODE                 find_package | add_subdirectory | pkg_config |
#                        exports
#   FEEDCORE_BINARY_DIR  feedcore's build tree (find_package, pkg_config)
#   FEEDCORE_SOURCE_DIR  feedcore's source tree (add_subdirectory, exports)
#   GENERATOR, BUILD_TYPE, WERROR
#                        CMake generator, CMAKE_BUILD_TYPE and
#                        FEEDCORE_WERROR of the add_subdirectory build
#   LAUNCHER             compiler launcher (ccache) of the add_subdirectory
#                        build, its elements separated by |; may be empty
#   BUILD_DIR            build tree of the add_subdirectory build (instead
#                        of WORK_DIR/build); emptied first
#   LIBRARIES            the shared libraries to check (exports), separated
#                        by |
#   REDIS_CLUSTER        whether the build has the Redis Cluster backend
#                        (find_package also asks for its component)
#   CONSUMER_DIR         this directory (tests/consumer)
#   WORK_DIR             scratch directory; emptied first
#   CXX                  C++ compiler to use
#
# find_package and pkg_config first install the already built library into
# WORK_DIR/prefix with `cmake --install`, exactly as a packager would;
# find_package configures once where pkg-config knows no hiredis.
# exports checks that the shared libraries export feedcore's public API and
# shared layer and nothing else (check_exports.cmake).
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
  # feedcore::feedcore alone needs no hiredis: configure where pkg-config
  # finds libxxhash.pc and nothing else.
  find_program(PKG_CONFIG_EXECUTABLE pkg-config REQUIRED)
  execute_process(
    COMMAND ${PKG_CONFIG_EXECUTABLE} --variable=pcfiledir libxxhash
    OUTPUT_VARIABLE xxhash_pc_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(only_xxhash "${WORK_DIR}/pkgconfig-without-hiredis")
  file(MAKE_DIRECTORY "${only_xxhash}")
  file(CREATE_LINK "${xxhash_pc_dir}/libxxhash.pc"
    "${only_xxhash}/libxxhash.pc" SYMBOLIC)
  set(ENV{PKG_CONFIG_LIBDIR} "${only_xxhash}")
  run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/without-hiredis"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DCMAKE_PREFIX_PATH=${prefix}")
  unset(ENV{PKG_CONFIG_LIBDIR})
  run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${build}"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DCMAKE_PREFIX_PATH=${prefix}"
      "-DREDIS_CLUSTER=${REDIS_CLUSTER}")
  run(${CMAKE_COMMAND} --build "${build}" -j2)
  run("${build}/consumer")
elseif(MODE STREQUAL "add_subdirectory")
  if(BUILD_DIR)
    set(build "${BUILD_DIR}")
    file(REMOVE_RECURSE "${build}")
  endif()
  # The launcher is a list, which run() would split: an initial cache
  # file carries it whole.
  string(REPLACE "|" ";" launcher "${LAUNCHER}")
  file(WRITE "${WORK_DIR}/launcher.cmake"
    "set(CMAKE_CXX_COMPILER_LAUNCHER \"${launcher}\" CACHE STRING \"\")\n")
  run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}/subdirectory" -B "${build}"
      -G "${GENERATOR}"
      -C "${WORK_DIR}/launcher.cmake"
      "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
      "-DCMAKE_CXX_COMPILER=${CXX}"
      "-DFEEDCORE_WERROR=${WERROR}"
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
  string(REPLACE "|" ";" libraries "${LIBRARIES}")
  if(NOT libraries)
    message(FATAL_ERROR "exports: -DLIBRARIES=... names no library to check")
  endif()
  include("${CONSUMER_DIR}/check_exports.cmake")
  file(GLOB headers "${FEEDCORE_SOURCE_DIR}/include/feedcore/*.h")
  file(GLOB shared_layer "${FEEDCORE_SOURCE_DIR}/src/contract/*.h")
  foreach(library ${libraries})
    feedcore_check_exports(LIBRARY "${library}" HEADERS ${headers}
      SHARED_LAYER_HEADERS ${shared_layer})
  endforeach()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
