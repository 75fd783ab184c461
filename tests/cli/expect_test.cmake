# expect_test(<name> RC <status> [REGEX <regex>] [REJECT <regex>] [ENV <VAR=value>...] [INHERIT_ENV]
#             [FILE <path> [FILE_REGEX <regex>]] [NO_FILE <path>] COMMAND <command> <args...>)
# A CTest test that runs the command through expect_run.cmake (see there): exit status, output that
# must and must not match, a file the run must write (with content matching FILE_REGEX) and one it
# must not. ENV sets variables for the run the way a user sets them, in the environment of a fresh
# process; every other TESSERA_* variable is unset for the run, unless INHERIT_ENV (then the test may
# set its ENVIRONMENT property itself). Regexes and values must not contain ';' (CMake's list
# separator): use '.' instead.
set(TESSERA_EXPECT_RUN "${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake")

function(expect_test name)
  cmake_parse_arguments(T "INHERIT_ENV" "RC;REGEX;REJECT;FILE;FILE_REGEX;NO_FILE" "ENV;COMMAND" ${ARGN})
  set(defines -DEXPECT_RC=${T_RC})
  foreach(key REGEX REJECT FILE FILE_REGEX NO_FILE)
    if(DEFINED T_${key})
      set(variable EXPECT_${key})
      if(key STREQUAL "REJECT")
        set(variable REJECT_REGEX)
      elseif(key STREQUAL "NO_FILE")
        set(variable REJECT_FILE)
      endif()
      list(APPEND defines "-D${variable}=${T_${key}}")
    endif()
  endforeach()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defines} -P ${TESSERA_EXPECT_RUN} -- ${T_COMMAND})
  # A variable the person running the tests happens to have set must not change what is tested.
  set(environment "")
  if(NOT T_INHERIT_ENV)
    foreach(variable TESSERA_CONFIG TESSERA_PLUGIN_PATH TESSERA_LOG_LEVEL TESSERA_THREADS TESSERA_COLL TESSERA_TUNER
                     TESSERA_TRACE)
      list(APPEND environment "${variable}=unset:")
    endforeach()
  endif()
  foreach(assignment ${T_ENV})
    string(FIND "${assignment}" "=" equals)
    string(SUBSTRING "${assignment}" 0 ${equals} variable)
    math(EXPR value_start "${equals} + 1")
    string(SUBSTRING "${assignment}" ${value_start} -1 value)
    list(APPEND environment "${variable}=set:${value}")
  endforeach()
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
  if(environment)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT_MODIFICATION "${environment}")
  endif()
endfunction()
