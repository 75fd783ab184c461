#!/usr/bin/env bash
# The thread-pool, mode, world and collective tests under ThreadSanitizer (build-tsan/, the tsan
# preset): test_ranks (modes, worlds, user threads, set_threads while ops run), test_comm
# (collectives), test_observe (counters and traces) and test_dtensor's shared-replica and concurrent-read
# cases (copy-on-write from several threads; one tensor replicated and exported by several threads
# at once), test_autograd's thread cases (grad mode and graphs per thread). Only those suites and the plugins they load
# are built, so a cold build fits in a few minutes on 2 cores. Fails on the first TSan report
# (halt_on_error; scripts/tsan.supp suppresses uninstrumented third-party code only) or failing test.
#   scripts/tsan.sh [extra ctest arguments, e.g. -R concurrency]
set -euo pipefail
cd "$(dirname "$0")/.."

# ccache, when installed, makes a rebuild cheap (a launcher the caller set is kept).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
fi

cmake --preset tsan >/dev/null
cmake --build --preset tsan
# TSAN_OPTIONS comes from the test preset; a report makes the test process exit non-zero.
ctest --preset tsan -j2 "$@"
