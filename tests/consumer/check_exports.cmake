# feedcore_check_exports(LIBRARY path HEADERS header...
#                        SHARED_LAYER_HEADERS header...)
# Fails, listing them, when the shared library at `path` exports a symbol
# outside feedcore's public API and its shared layer. The public API is
# every name declared in `HEADERS` (include/feedcore/), the shared layer
# every name declared in `SHARED_LAYER_HEADERS` (src/contract/, which
# libfeedcore exports for libfeedcore_redis_cluster); a symbol is accepted
# when it is
#   - in namespace feedcore (or its vtable, typeinfo or a thunk) and the
#     first name after feedcore:: is one the public headers declare, or
#   - in feedcore::internal and the first name after it is one the shared
#     layer's headers declare, or
#   - weak (W, V, u): an instantiation of a template or inline function of
#     the standard library or abseil that the compiler had to emit (clang
#     gives a standard-library template default visibility even when its
#     arguments are feedcore's hidden internal types), or
#   - one of the linker's own (_init, _fini, _edata, _end, __bss_start).
# Every identifier of `headers`, comments left out.
function(_feedcore_declared_names out)
  set(declared)
  foreach(header ${ARGN})
    file(READ "${header}" text)
    string(REGEX REPLACE "//[^\n]*" "" text "${text}")
    string(REGEX MATCHALL "[A-Za-z_][A-Za-z0-9_]*" names "${text}")
    list(APPEND declared ${names})
  endforeach()
  list(REMOVE_DUPLICATES declared)
  set(${out} ${declared} PARENT_SCOPE)
endfunction()

function(feedcore_check_exports)
  cmake_parse_arguments(ARG "" "LIBRARY" "HEADERS;SHARED_LAYER_HEADERS"
    ${ARGN})
  _feedcore_declared_names(public_names ${ARG_HEADERS})
  list(REMOVE_ITEM public_names internal)
  _feedcore_declared_names(shared_layer_names ${ARG_SHARED_LAYER_HEADERS})

  find_program(NM_EXECUTABLE nm REQUIRED)
  execute_process(
    COMMAND ${NM_EXECUTABLE} -D --defined-only -C "${ARG_LIBRARY}"
    OUTPUT_VARIABLE symbols
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm -D --defined-only ${ARG_LIBRARY} failed (${rc})")
  endif()
  # Brackets ([abi:cxx11]) and semicolons would break CMake's lists.
  string(REPLACE "[" "(" symbols "${symbols}")
  string(REPLACE "]" ")" symbols "${symbols}")
  string(REPLACE ";" "," symbols "${symbols}")
  string(REPLACE "\n" ";" symbols "${symbols}")

  set(offending)
  set(count 0)
  foreach(line ${symbols})
    if(NOT line MATCHES "^[0-9a-fA-F]* ([A-Za-z]) (.*)$")
      continue()
    endif()
    set(type "${CMAKE_MATCH_1}")
    set(name "${CMAKE_MATCH_2}")
    math(EXPR count "${count} + 1")
    string(REGEX REPLACE
      "^((construction )?vtable for |typeinfo( name)? for |VTT for |guard variable for |(non-virtual |virtual |covariant return )thunk to )+"
      "" entity "${name}")
    if(type MATCHES "^[WwVvu]$" AND entity MATCHES "^std::")
    elseif(entity MATCHES "^feedcore::internal::([A-Za-z_][A-Za-z0-9_]*)")
      if(NOT CMAKE_MATCH_1 IN_LIST shared_layer_names)
        list(APPEND offending "${type} ${name}")
      endif()
    elseif(name MATCHES "feedcore::internal::")
      list(APPEND offending "${type} ${name}")
    elseif(entity MATCHES "^feedcore::([A-Za-z_][A-Za-z0-9_]*)")
      if(NOT CMAKE_MATCH_1 IN_LIST public_names)
        list(APPEND offending "${type} ${name}")
      endif()
    elseif(type MATCHES "^[WwVvu]$")
    elseif(name MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
    else()
      list(APPEND offending "${type} ${name}")
    endif()
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "${ARG_LIBRARY} exports no symbols at all")
  endif()
  if(offending)
    list(LENGTH offending n)
    list(JOIN offending "\n  " listed)
    message(FATAL_ERROR
      "${ARG_LIBRARY} exports ${n} symbols outside feedcore's public API "
      "(include/feedcore/) and shared layer (src/contract/):\n  ${listed}")
  endif()
  message(STATUS "${ARG_LIBRARY}: ${count} exported symbols, all public API")
endfunction()
