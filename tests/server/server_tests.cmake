# Tests of feedcore-server (examples/feed-server), included from
# tests/CMakeLists.txt when the examples are built.
#
#   unit    the RESP parser, the command dispatcher and the saving
#           commands, no network
#   server  the real server on a free 127.0.0.1 port, driven by redis-cli
#           (Debian redis-tools) and the Python redis package
#           (python3-redis); both come from scripts/install-deps, and the
#           tests fail, saying so, when either is missing

feedcore_add_test(NAME resp_parser_test LABEL unit
  LIBS feedcore_server_core)
feedcore_add_test(NAME command_dispatcher_test LABEL unit
  LIBS feedcore_server_core)
feedcore_add_test(NAME snapshot_commands_test LABEL unit
  LIBS feedcore_server_core)

# The Python redis package is Debian's (python3-redis), so the tests run
# with the system interpreter, not whichever python3 comes first in PATH.
find_program(FEEDCORE_SYSTEM_PYTHON3 python3
  PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT FEEDCORE_SYSTEM_PYTHON3)
  set(FEEDCORE_SYSTEM_PYTHON3 python3)
endif()

# The same search as examples/feed-server/CMakeLists.txt, which is read
# after this file (the result is cached, so both agree).
find_path(FEEDCORE_ASIO_INCLUDE_DIR asio.hpp
  DOC "Standalone Asio headers (Debian: libasio-dev)")
if(FEEDCORE_ASIO_INCLUDE_DIR)
  foreach(test_name redis_cli_test redis_py_test snapshot_test)
    add_test(NAME server_${test_name}
      COMMAND ${FEEDCORE_SYSTEM_PYTHON3}
        ${CMAKE_CURRENT_SOURCE_DIR}/server/${test_name}.py
        $<TARGET_FILE:feedcore-server>)
    # No __pycache__ in the source tree.
    set_tests_properties(server_${test_name} PROPERTIES
      LABELS server
      TIMEOUT 120
      ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
  endforeach()
else()
  # Said loudly instead of skipped: the server should always be built.
  add_test(NAME server_not_built
    COMMAND ${CMAKE_COMMAND} -E echo
      "feedcore-server was not built: install libasio-dev (scripts/install-deps)")
  set_tests_properties(server_not_built PROPERTIES
    LABELS server WILL_FAIL ON)
endif()
