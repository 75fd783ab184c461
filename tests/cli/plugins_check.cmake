# Tests of `tessera plugins check FILE` (included by CMakeLists.txt): every bundled plugin passes
# every stage, and each kind of broken plugin gets its verdict, in the stage it broke in, while the
# tool itself survives and exits 1. Run without the TESSERA_* variables of whoever runs the tests.

# plugins_check_test(<name> RC <status> REGEX <regex> [REJECT <regex>] ARGS <check arguments...>)
function(plugins_check_test name)
  cmake_parse_arguments(T "" "RC;REGEX;REJECT" "ARGS" ${ARGN})
  set(extra "")
  if(DEFINED T_REJECT)
    list(APPEND extra REJECT "${T_REJECT}")
  endif()
  expect_test(cli.plugins_check_${name} RC ${T_RC} REGEX "${T_REGEX}" ${extra}
              COMMAND $<TARGET_FILE:tessera_cli> plugins check ${T_ARGS})
endfunction()

# What each bundled plugin's own stages must say (a plugin not listed is held to the common part).
set(check_backend-cpu "backend cpu +OK +conformance against 'cpu' [^\n]*: [1-9][0-9]* passed, 0 failed")
set(check_backend-meta "backend meta +SKIPPED +a shapes-only backend")
set(check_coll-direct "collective direct +OK +all_reduce, broadcast, reduce, all_gather, reduce_scatter, all_to_all, scatter, gather, barrier: [1-9][0-9]* cases right, 0 wrong")
set(check_coll-ring "collective ring +OK +all_reduce, all_gather, reduce_scatter: [1-9][0-9]* cases right, 0 wrong")
set(check_coll-tree "collective tree +OK +all_reduce, broadcast, reduce: [1-9][0-9]* cases right, 0 wrong")
set(check_coll-rd "collective rd +OK +all_reduce, all_gather, reduce_scatter: [1-9][0-9]* cases right, 0 wrong, [1-9][0-9]* not applicable[^\n]*\n  collective rabenseifner +OK +all_reduce: [1-9][0-9]* cases right, 0 wrong")
set(check_coll-bruck "collective bruck +OK +all_gather, all_to_all: [1-9][0-9]* cases right, 0 wrong")
set(check_placement-std "placement shard +OK +prefix S, arguments none: 128 layouts right, 0 wrong[^\n]*\n  placement replicate +SKIPPED +a replicate strategy[^\n]*\n  placement partial +SKIPPED +a partial strategy")
set(check_placement-balanced "placement balanced_shard +OK +prefix B, arguments none: 128 layouts right, 0 wrong")
set(check_transport-mpi "transport mpi +OK +init: process 0 of 1. all_reduce over the world's 2 ranks right")

get_target_property(bundled_plugins tessera_plugins MANUALLY_ADDED_DEPENDENCIES)
file(GLOB cuda_device_nodes /dev/nvidia[0-9]*)
foreach(target ${bundled_plugins})
  string(REPLACE "tessera-" "" plugin "${target}")
  if(plugin STREQUAL "backend-cuda" AND NOT cuda_device_nodes)
    # Without a device its init refuses the host: the check fails at load, saying why.
    plugins_check_test(${plugin} RC 1 REGEX "\n  load +FAILED +[^\n]*its init refused"
                       ARGS --timeout 60 $<TARGET_FILE:${target}>)
    continue()
  endif()
  set(own "")
  if(DEFINED check_${plugin})
    set(own "${check_${plugin}}.*")
  endif()
  plugins_check_test(${plugin} RC 0
    REGEX "\n  load +OK +${plugin} [^\n]*its init succeeded\n.*${own}  unload +OK [^\n]*\n  cycles +OK +20 load/unload cycles[^\n]*\n  exit +OK [^\n]*\nResult: PASS\n"
    REJECT "FAILED|CRASHED|HUNG|LEAK|NOT RUN"
    ARGS --timeout 60 $<TARGET_FILE:${target}>)
endforeach()

# A name on the search path works as --load takes it.
plugins_check_test(by_name RC 0 REGEX "Checking [^\n]*/libtessera-coll-ring\\.so .*Result: PASS" ARGS coll-ring)
# A test transport: one process, as the stage expects.
plugins_check_test(transport_testnet RC 0
  REGEX "transport transport-testnet +OK +init: process 0 of 1.*Result: PASS"
  ARGS $<TARGET_FILE:tessera-transport-testnet>)

# A crash in finalize is blamed on the unload stage, with its signal; the cycles never run.
plugins_check_test(finalize_segfault RC 1
  REGEX "collective bad-finalize-segfault +OK [^\n]*\n  unload +CRASHED +SIGSEGV [^\n]*the worker died during this stage\n  cycles +NOT RUN [^\n]*\nResult: FAIL \\(unload crashed. 1 stage not run\\)\n"
  ARGS $<TARGET_FILE:tessera-bad-finalize-segfault>)
# The same as JSON.
plugins_check_test(finalize_segfault_json RC 1
  REGEX "\"passed\": false.*\"signal\": \"SIGSEGV\",\n +\"stage\": \"unload\",\n +\"summary\": \"SIGSEGV[^\n]*\",\n +\"verdict\": \"crashed\".*\"stage\": \"cycles\",\n[^\n]*\n +\"verdict\": \"not_run\""
  REJECT "Checking"
  ARGS --json $<TARGET_FILE:tessera-bad-finalize-segfault>)
# An init that never returns: hung at load after --timeout, and killed.
plugins_check_test(init_hangs RC 1
  REGEX "\n  load +HUNG +no progress within 2 s: the worker was killed\nResult: FAIL \\(load hung\\)\n"
  ARGS --timeout 2 $<TARGET_FILE:tessera-bad-init-hangs>)
# An init that leaks 8 MiB a load: a leak in the cycles, not below a threshold above it.
plugins_check_test(init_leaks RC 1
  REGEX "collective bad-init-leaks +OK [^\n]*\n  unload +OK [^\n]*\n  cycles +LEAK +20 load/unload cycles: [^\n]*\\+[0-9.]+ MiB per cycle \\(above the threshold of [0-9.]+ [KM]iB\\)\n.*Result: FAIL \\(cycles leak\\)\n"
  ARGS $<TARGET_FILE:tessera-bad-init-leaks>)
plugins_check_test(init_leaks_below_threshold RC 0
  REGEX "cycles +OK +5 load/unload cycles: [^\n]*per cycle \\(threshold 16\\.0 MiB\\)\n.*Result: PASS"
  ARGS --cycles 5 --leak-threshold 16384 $<TARGET_FILE:tessera-bad-init-leaks>)
# --cycles 0: no cycles stage at all.
plugins_check_test(no_cycles RC 0 REGEX "unload +OK [^\n]*\n  exit +OK" REJECT "cycles +"
  ARGS --cycles 0 $<TARGET_FILE:tessera-bad-init-leaks>)
# A schedule missing a contribution: failed, naming the case and what the verification found.
plugins_check_test(wrong_schedule RC 1
  REGEX "collective bad-coll-missing-contribution +FAILED +all_reduce: [0-9]+ cases right, [1-9][0-9]* wrong[^\n]*\n +all_reduce p=2 count=1 sum \\(any dtype\\): schedule rejected: [^\n]*missing \\{r1\\[0\\]\\}.*Result: FAIL \\(collective bad-coll-missing-contribution failed\\)"
  ARGS $<TARGET_FILE:tessera-bad-coll-missing-contribution>)
# A kernel one ulp off: the conformance suite's failure, naming the op.
plugins_check_test(wrong_kernel RC 1
  REGEX "backend wrong +FAILED +conformance against 'cpu' [^\n]*, 1 failed[^\n]*\n +add float32: case [^\n]*got [^\n]*expected.*Result: FAIL \\(backend wrong failed\\)"
  ARGS $<TARGET_FILE:tessera-backend-wrong>)
# Layouts with a gap and with an overlap.
plugins_check_test(layout_gap RC 1
  REGEX "placement bad-layout-gap +FAILED [^\n]*\n +G\\(0\\) over 2 shards, dim of 2: [^\n]*with a gap"
  ARGS $<TARGET_FILE:tessera-bad-layout-gap>)
plugins_check_test(layout_overlap RC 1
  REGEX "placement bad-layout-overlap +FAILED [^\n]*\n +O\\(0\\) over 2 shards, dim of 2: [^\n]*with an overlap"
  ARGS $<TARGET_FILE:tessera-bad-layout-overlap>)
# A strategy that takes arguments: skipped (and saying how) without them, checked with them, and a
# refused argument is a failure.
plugins_check_test(placement_needs_arguments RC 0
  REGEX "placement block_cyclic +SKIPPED +it refuses a placement without arguments .*--placement-arguments"
  ARGS --cycles 2 $<TARGET_FILE:tessera-placement-block-cyclic>)
plugins_check_test(placement_arguments RC 0
  REGEX "placement block_cyclic +OK +prefix C, arguments '1', '4': 256 layouts right, 0 wrong"
  ARGS --cycles 2 --placement-arguments 1 --placement-arguments 4 $<TARGET_FILE:tessera-placement-block-cyclic>)
plugins_check_test(placement_refused_arguments RC 1
  REGEX "placement block_cyclic +FAILED [^\n]*\n +refuses --placement-arguments 'x': [^\n]*block size must be an integer"
  ARGS --cycles 2 --placement-arguments 4 --placement-arguments x $<TARGET_FILE:tessera-placement-block-cyclic>)
# Not a shared object: failed at load, nothing else run.
plugins_check_test(not_a_plugin RC 1
  REGEX "\n  load +FAILED +plugin '[^']*libtessera-bad-not-elf\\.so' rejected: [^\n]*\n  exit +OK [^\n]*\nResult: FAIL \\(load failed\\)\n"
  ARGS "${CMAKE_BINARY_DIR}/test-plugins/libtessera-bad-not-elf.so")

# Usage: a missing file, no file, a timeout out of range; the help, without the worker's option.
plugins_check_test(missing_file RC 1
  REGEX "^tessera: error: plugins check: no plugin file '/no/such/libtessera-x\\.so' \\(no such file\\)"
  ARGS /no/such/libtessera-x.so)
plugins_check_test(no_file RC 1 REGEX "^tessera: error: FILE is required\nRun 'tessera plugins check --help'")
plugins_check_test(zero_timeout RC 1 REGEX "^tessera: error: --timeout: [^\n]*0[^\n]*\nRun 'tessera plugins check --help'"
  ARGS --timeout 0 coll-ring)
cli_test(help_plugins_check 0
  "Usage: tessera plugins check \\[OPTIONS\\] FILE.*--timeout.*--cycles.*--leak-threshold.*--json.*Verdicts: .*Exit status: 0 when every stage is OK or SKIPPED"
  help plugins check)
set_tests_properties(cli.help_plugins_check PROPERTIES FAIL_REGULAR_EXPRESSION "worker-fd")
