# cmake <expect_run.cmake's options> -DEXPECT_TRACE=<path|...> -P expect_trace.cmake -- <command> <args...>
# expect_run.cmake, and then every EXPECT_TRACE (deleted before the run, so a stale one cannot pass)
# must be a Chrome trace: JSON with a traceEvents array that holds collective slices and their
# steps.
string(REPLACE "|" ";" EXPECT_TRACE "${EXPECT_TRACE}")
foreach(trace IN LISTS EXPECT_TRACE)
  file(REMOVE "${trace}")
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)
foreach(trace IN LISTS EXPECT_TRACE)
  if(NOT EXISTS "${trace}")
    message(FATAL_ERROR "the trace ${trace} was not written")
  endif()
  file(READ "${trace}" text)
  string(JSON kind ERROR_VARIABLE json_error TYPE "${text}" traceEvents)
  if(json_error OR NOT kind STREQUAL "ARRAY")
    message(FATAL_ERROR "${trace} is not a Chrome trace (no traceEvents array): ${json_error}")
  endif()
  # The recorder writes one key per line, so slices are counted by their category lines.
  string(REGEX MATCHALL "\"cat\": \"collective\"" collectives "${text}")
  string(REGEX MATCHALL "\"cat\": \"step\"" steps "${text}")
  list(LENGTH collectives collective_count)
  list(LENGTH steps step_count)
  message("${trace}: ${collective_count} collective slice(s), ${step_count} step(s)")
  if(collective_count EQUAL 0 OR step_count EQUAL 0)
    message(FATAL_ERROR "${trace} holds no collectives (only ${collective_count} collective slice(s) and "
                        "${step_count} step(s))")
  endif()
endforeach()
