#!/usr/bin/env bash
# Builds the libFuzzer targets (the `fuzz` preset, build-fuzz/) and runs each for SECONDS (default
# 30), one after another, on a copy of its seed corpus in tests/fuzz/corpus/<name>/ (what a run
# finds is never added to the repository's corpus). Installs nothing: scripts/install-deps.sh does.
#   scripts/fuzz.sh [SECONDS]
# Prints the executions and the result per fuzzer; exits non-zero when any fuzzer crashes, leaks,
# times out or runs out of memory. The input that did it is kept in build-fuzz/fuzz-artifacts/<name>/:
# a real bug, to be fixed, with that input added to the corpus and to a unit test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS '$seconds' is not a positive whole number of seconds" >&2
  exit 2
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

# The configuration of whoever runs this must not change what is fuzzed.
unset TESSERA_CONFIG TESSERA_PLUGIN_PATH TESSERA_LOG_LEVEL TESSERA_THREADS TESSERA_COLL TESSERA_TRACE
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
# The preset links the sanitizer runtime as a shared library (the plugins need its symbols); the
# linker puts libstdc++ before it, so it is preloaded to come first, as ASan requires.
asan_runtime="$(clang++ -print-file-name="libclang_rt.asan-$(uname -m).so")"
if [ ! -f "$asan_runtime" ]; then
  echo "fuzz.sh: clang's ASan runtime is missing ($asan_runtime); run scripts/install-deps.sh" >&2
  exit 1
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="build-fuzz/fuzz-artifacts"
failed=()
summary=()
for fuzzer in build-fuzz/bin/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name="$(basename "$fuzzer" _fuzzer)"
  seeds="tests/fuzz/corpus/$name"
  corpus="$work/$name"
  mkdir -p "$corpus" "$artifacts/$name"
  if [ -d "$seeds" ]; then
    cp -r "$seeds/." "$corpus/"
  else
    echo "fuzz.sh: warning: no seed corpus $seeds for ${name}_fuzzer" >&2
  fi
  log="$work/$name.log"
  echo "== fuzz.sh: ${name}_fuzzer for ${seconds} s"
  status=0
  LD_PRELOAD="$asan_runtime" "$fuzzer" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$name/" "$corpus" >"$log" 2>&1 || status=$?
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "fuzz.sh: ${name}_fuzzer FAILED (exit status $status); its input is in $artifacts/$name/" >&2
    failed+=("$name")
    summary+=("$(printf '%-16s %12s execs  FAILED (exit status %s)' "$name" "${execs:-?}" "$status")")
  else
    summary+=("$(printf '%-16s %12s execs  ok' "$name" "${execs:-?}")")
  fi
done

if [ ${#summary[@]} -eq 0 ]; then
  echo "fuzz.sh: no fuzzers were built in build-fuzz/" >&2
  exit 1
fi
echo "== fuzz.sh: ${seconds} s each"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: ${#failed[@]} fuzzer(s) failed: ${failed[*]}" >&2
  exit 1
fi
