# The Debian package (`make package`: cpack -G DEB in a Release build):
# feedcore-server and feedcore-check, the server's configuration as a
# conffile, its systemd unit, and the library with its headers, CMake
# package and pkg-config file for building against it. Dependencies are
# computed from the programs' shared libraries (dpkg-shlibdeps); the
# maintainer scripts (packaging/debian/) create the system user and
# /var/lib/feedcore. The examples are left out (component examples).
#
# The configuration goes where the system looks for it: /etc/feedcore when
# installed under /usr (the package), PREFIX/etc/feedcore under any other
# prefix (`cmake --install --prefix`), decided at install time, since cpack
# installs under its own prefix. The unit goes to PREFIX/lib/systemd/system.
if(TARGET feedcore-server)
  set(FEEDCORE_CONFIG_FILE ${PROJECT_SOURCE_DIR}/server/feedcore.conf)
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(feedcore_config_dir /etc/feedcore)
    else()
      set(feedcore_config_dir \"\${CMAKE_INSTALL_PREFIX}/etc/feedcore\")
    endif()
    file(INSTALL DESTINATION \"\${feedcore_config_dir}\" TYPE FILE
      FILES \"${FEEDCORE_CONFIG_FILE}\")
    " COMPONENT server)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/feedcore-server.service
    DESTINATION lib/systemd/system COMPONENT server)
endif()
install(FILES docs/server.md docs/reliability.md docs/formats.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT server)

set(CPACK_PACKAGE_NAME feedcore)
set(CPACK_PACKAGE_VENDOR feedcore)
set(CPACK_PACKAGE_CONTACT "feedcore maintainers <feedcore@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
  "feedcore-server serves activity feeds and leaderboards over the Redis protocol (RESP2/RESP3); feedcore-check checks and repairs its append-only directory. Also the feedcore C++ library and headers.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# One package of every component but the examples.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL Unspecified server)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The maintainer scripts' adduser and addgroup.
set(CPACK_DEBIAN_PACKAGE_DEPENDS adduser)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles
  ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
  ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
  ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

# Checks of the package (label package: cpack into a temporary directory,
# then dpkg-deb; the programs and libraries must be built) and of the
# example configuration against the server's flags (label unit).
if(FEEDCORE_TEST AND TARGET feedcore-server AND TARGET feedcore-check)
  find_program(FEEDCORE_PACKAGE_PYTHON3 python3
    PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT FEEDCORE_PACKAGE_PYTHON3)
    set(FEEDCORE_PACKAGE_PYTHON3 python3)
  endif()
  add_test(NAME package_test
    COMMAND ${FEEDCORE_PACKAGE_PYTHON3}
      ${PROJECT_SOURCE_DIR}/packaging/package_test.py ${PROJECT_BINARY_DIR})
  set_tests_properties(package_test PROPERTIES
    LABELS package TIMEOUT 300 ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
  add_test(NAME server_config_test
    COMMAND ${FEEDCORE_PACKAGE_PYTHON3}
      ${PROJECT_SOURCE_DIR}/packaging/config_test.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(server_config_test PROPERTIES
    LABELS unit TIMEOUT 60 ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
