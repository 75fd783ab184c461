#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, run the whole test suite.
#   scripts/test.sh            every stage below, in order (what CI runs)
#   scripts/test.sh default    the default preset (build/): all tests, the quick check while working
#   scripts/test.sh tidy       clang-tidy over the default preset's compile database (scripts/tidy.sh)
#   scripts/test.sh asan       the suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh tsan       the thread-pool, mode and collective tests under ThreadSanitizer (build-tsan/)
#   scripts/test.sh fuzz       every libFuzzer target for 30 s (build-fuzz/); FUZZ_SECONDS overrides
#   scripts/test.sh python     pip install . into a fresh venv, then the pytest suite (tests/python)
# A stage fails on the first failing test, sanitizer report or fuzzer crash.
set -euo pipefail
cd "$(dirname "$0")/.."

run_preset() {
  local preset="$1"
  echo "== test.sh: $preset preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j2
}

all_stages=(default tidy python asan tsan fuzz)

run_stage() {
  case "$1" in
    default | asan) run_preset "$1" ;;
    # Needs build/ configured only (the default stage has done it; configuring again is quick).
    tidy) echo "== test.sh: tidy"; cmake --preset default >/dev/null; bash scripts/tidy.sh build || [ $? -eq 77 ] ;;
    tsan) echo "== test.sh: tsan"; bash scripts/tsan.sh ;;
    fuzz) echo "== test.sh: fuzz"; bash scripts/fuzz.sh ${FUZZ_SECONDS:+"$FUZZ_SECONDS"} ;;  # fuzz.sh owns the default
    python) echo "== test.sh: python"; bash scripts/python-test.sh ;;
  esac
}

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=("${all_stages[@]}")
for stage in "${stages[@]}"; do  # a typo fails before minutes of building
  if [[ ! " ${all_stages[*]} " == *" $stage "* ]]; then
    echo "test.sh: unknown stage '$stage'; expected one of ${all_stages[*]} (or none for all)" >&2
    exit 2
  fi
done

bash scripts/install-deps.sh

# Every stage compiles through ccache (a launcher the caller set is kept). The python stage's
# `pip install .` compiles the core and the plugins with the default preset's compiler and flags in a
# build directory of its own at the same depth (scripts/python-test.sh): with the build directory
# left out of the hash (CCACHE_NOHASHDIR; it reaches only the debug info's compilation directory),
# paths under the repository written relative to the build directory (CCACHE_BASEDIR; each unity
# file lies in its build directory) and the compiler named alike (CMake's Ninja and Makefile
# generators pick g++ and c++, which ccache hashes apart), it takes those objects from the cache.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
  export CC="${CC:-gcc}" CXX="${CXX:-g++}"
fi
for stage in "${stages[@]}"; do run_stage "$stage"; done
