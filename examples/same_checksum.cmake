# Runs PROGRAM simulated and under mpirun in each of LAYOUTS ("PROCESSESxRANKS", comma separated,
# e.g. "2x2,4x1"); every run must succeed and print the same line matching CHECKSUM (a regex).
# With NAMES_PROCESSES set, each mpirun run must also say "on P process", proving it spanned them.
# ARGS (a list) are the program's arguments in every run.
#   cmake -DPROGRAM=... -DMPIEXEC=... -DLAYOUTS=2x4 -DCHECKSUM="checksum [^\n]*" [-DTIMEOUT=120]
#         [-DNAMES_PROCESSES=ON] ["-DARGS=--steps;2"] -P same_checksum.cmake
if(NOT TIMEOUT)
  set(TIMEOUT 300)
endif()
set(ENV{TESSERA_TRANSPORT} local)
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE simulated ERROR_VARIABLE simulated_err RESULT_VARIABLE rc
                TIMEOUT ${TIMEOUT})
unset(ENV{TESSERA_TRANSPORT})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the simulated run failed (exit code ${rc}):\n${simulated}${simulated_err}")
endif()
string(REGEX MATCH "${CHECKSUM}" expected "${simulated}")
if(expected STREQUAL "")
  message(FATAL_ERROR "the simulated run printed no line matching '${CHECKSUM}':\n${simulated}")
endif()
message("simulated: ${expected}")

string(REPLACE "," ";" layouts "${LAYOUTS}")
foreach(layout IN LISTS layouts)
  if(NOT layout MATCHES "^([0-9]+)x([0-9]+)$")
    message(FATAL_ERROR "layout '${layout}' is not PROCESSESxRANKS, e.g. 2x4")
  endif()
  set(processes ${CMAKE_MATCH_1})
  set(ENV{TESSERA_RANKS_PER_PROCESS} ${CMAKE_MATCH_2})
  execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${processes} ${PROGRAM} ${ARGS}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT ${TIMEOUT})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${layout} run failed (exit code ${rc}):\n${out}${err}")
  endif()
  string(REGEX MATCH "${CHECKSUM}" got "${out}")
  message("${layout}: ${got}")
  if(NOT got STREQUAL expected)
    message(FATAL_ERROR "the ${layout} run printed '${got}', the simulated run '${expected}'")
  endif()
  if(NAMES_PROCESSES AND NOT out MATCHES "on ${processes} process")
    message(FATAL_ERROR "the ${layout} run did not span ${processes} processes:\n${out}")
  endif()
endforeach()
