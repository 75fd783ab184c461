# Runs COMMAND (a ;-list) and passes only when it exits non-zero, by itself, within the time limit,
# with output matching EXPECT and no "FAIL:" line (world_check prints one when a wrong or unchecked
# result got through): an error must be reported, fatal, and never a hang or a wrong answer
# (ctest's own regex options drop the exit code).
if(NOT DEFINED LIMIT)
  set(LIMIT 90)
endif()
execute_process(COMMAND ${COMMAND} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT ${LIMIT})
message("${out}${err}")
# A time limit reached is a hang. Any other non-number is a signal: fatal, as wanted (Open MPI's
# mpiexec itself has been seen to crash in its own teardown after MPI_Abort, once the error was
# printed); the output must still name the error below.
if(rc MATCHES "timeout")
  message(FATAL_ERROR "the processes did not exit by themselves within ${LIMIT} s (${rc})")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit code, got 0")
endif()
if("${out}${err}" MATCHES "FAIL:")
  message(FATAL_ERROR "a process printed a result it should not have computed")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}'")
endif()
# EACH_PROCESS=<P>: every process 0..P-1 must have reported the error itself ("... on process <p>: ").
if(DEFINED EACH_PROCESS)
  math(EXPR last "${EACH_PROCESS} - 1")
  foreach(p RANGE ${last})
    if(NOT "${out}${err}" MATCHES "on process ${p}: ")
      message(FATAL_ERROR "process ${p} did not report the error itself")
    endif()
  endforeach()
endif()
