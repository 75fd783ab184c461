# Runs the Llama example simulated, as 2 processes x 2 ranks and as 4 processes x 1 rank; every run
# must succeed and print the same final parameters checksum.
set(ENV{TESSERA_TRANSPORT} local)
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE simulated RESULT_VARIABLE rc0 TIMEOUT 300)
unset(ENV{TESSERA_TRANSPORT})
set(ENV{TESSERA_RANKS_PER_PROCESS} 2)
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2 ${PROGRAM}
                OUTPUT_VARIABLE two_by_two RESULT_VARIABLE rc1 TIMEOUT 300)
set(ENV{TESSERA_RANKS_PER_PROCESS} 1)
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np 4 ${PROGRAM}
                OUTPUT_VARIABLE four_by_one RESULT_VARIABLE rc2 TIMEOUT 300)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "a run failed (exit codes ${rc0}, ${rc1}, ${rc2})\nsimulated:\n${simulated}\n2x2:\n${two_by_two}\n4x1:\n${four_by_one}")
endif()
string(REGEX MATCH "final parameters checksum [0-9a-f]+" a "${simulated}")
string(REGEX MATCH "final parameters checksum [0-9a-f]+" b "${two_by_two}")
string(REGEX MATCH "final parameters checksum [0-9a-f]+" c "${four_by_one}")
message("simulated: ${a}\n2x2:       ${b}\n4x1:       ${c}")
if(a STREQUAL "" OR NOT a STREQUAL b OR NOT a STREQUAL c)
  message(FATAL_ERROR "checksums differ")
endif()
