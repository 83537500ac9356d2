# Tools that make feedcore's own build faster when they are installed
# (scripts/install-deps installs both); a build without them is the same
# build, only slower. Included for the top-level project only, so a program
# that embeds feedcore keeps its own compiler launcher and linker.
#
#   ccache  every compile goes through it, unless CMAKE_CXX_COMPILER_LAUNCHER
#           is already set (-DFEEDCORE_CCACHE=OFF turns it off). Paths under
#           the source tree are hashed relative to the build directory
#           (CCACHE_BASEDIR), and the build directory itself is not hashed
#           into debug builds (CCACHE_NOHASHDIR), so build trees at the same
#           depth — build/ and build-nocluster/ of one clone, or the same
#           tree of a clone in another folder — share cached objects.
#   lld     links instead of the default linker (-DFEEDCORE_LLD=OFF keeps
#           the default): the sanitizer builds link over a hundred
#           executables with debug line tables.

option(FEEDCORE_CCACHE "Compile through ccache when it is installed" ON)
option(FEEDCORE_LLD "Link with lld when the compiler accepts -fuse-ld=lld" ON)

if(FEEDCORE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(FEEDCORE_CCACHE_PROGRAM ccache)
  find_program(FEEDCORE_ENV_PROGRAM env)
  if(FEEDCORE_CCACHE_PROGRAM AND FEEDCORE_ENV_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER
      ${FEEDCORE_ENV_PROGRAM}
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_NOHASHDIR=true
      ${FEEDCORE_CCACHE_PROGRAM})
  endif()
endif()

if(FEEDCORE_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld FEEDCORE_HAVE_LLD)
  if(FEEDCORE_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
