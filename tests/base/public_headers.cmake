# Each public header compiles on its own, and pulls in only the part of the
# API it needs: a feed user does not compile the leaderboard API, nor the
# change stream's records through the social calls' options, and the
# leaderboard API does not pull in the feed engine. Run as
#   cmake -DCXX=<compiler> -DINCLUDE_DIR=<include/> -P public_headers.cmake
# with the compiler's -H listing every header each one includes.

# header -> headers it must not include, directly or not.
set(forbidden_feed_engine.h leaderboard.h change_stream.h)
set(forbidden_feed_facets.h leaderboard.h change_stream.h)
set(forbidden_change_stream.h leaderboard.h feed_engine.h)
set(forbidden_social.h change_stream.h leaderboard.h)
set(forbidden_types.h leaderboard.h feed_engine.h change_stream.h)
set(forbidden_options.h leaderboard.h feed_engine.h)
set(forbidden_leaderboard.h feed_engine.h change_stream.h)
set(forbidden_leaderboard_options.h feed_engine.h leaderboard.h)
set(forbidden_seasonal_leaderboard.h feed_engine.h)
set(forbidden_name_registry.h feed_engine.h leaderboard.h change_stream.h)

file(GLOB headers "${INCLUDE_DIR}/feedcore/*.h")
list(LENGTH headers count)
if(count LESS 10)
  message(FATAL_ERROR "found ${count} public headers in ${INCLUDE_DIR}")
endif()
set(failures "")
foreach(header IN LISTS headers)
  get_filename_component(name "${header}" NAME)
  execute_process(
    COMMAND "${CXX}" -std=c++20 -fsyntax-only -H -x c++ -I "${INCLUDE_DIR}"
            "${header}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    string(APPEND failures "${name} does not compile on its own:\n${err}\n")
    continue()
  endif()
  foreach(banned IN LISTS forbidden_${name})
    if(err MATCHES "feedcore/${banned}\n")
      string(APPEND failures "${name} includes ${banned}\n")
    endif()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
message(STATUS "${count} public headers compile alone and include what they may")
