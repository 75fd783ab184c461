#!/usr/bin/env bash
# Runs clang-tidy 14 (Debian 12's) with the repository's .clang-tidy over the C and C++ sources of
# a configured build tree; every finding is an error (exit status 1; 77 when clang-tidy is another
# major version). The tidy stage of scripts/test.sh runs it on build/.
#   scripts/tidy.sh [BUILD_DIR]      BUILD_DIR defaults to build/ (cmake --preset default)
# Jobs: TIDY_JOBS (default 2). The output of every run is kept in BUILD_DIR/tidy/findings.txt.
#
# It works from the build's compile_commands.json. In the default (unity) build the core, the tools
# and the test suites are compiled as unity sources that each include several .cpp files, so a
# header is parsed once per unit rather than once per .cpp file; the header filter below reports
# findings in the included files as well. Only configuring is needed, not building: CMake writes
# the unity sources when it generates the build. CUDA sources (nvcc entries) are left out:
# clang-tidy cannot read nvcc's flags.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
jobs="${TIDY_JOBS:-2}"
wanted_major=14

clang_tidy="$(command -v clang-tidy-$wanted_major || command -v clang-tidy || true)"
run_clang_tidy="$(command -v run-clang-tidy-$wanted_major || command -v run-clang-tidy || true)"
if [ -z "$clang_tidy" ] || [ -z "$run_clang_tidy" ]; then
  echo "tidy.sh: clang-tidy or run-clang-tidy not found; scripts/install-deps.sh installs them (Debian package clang-tidy)" >&2
  exit 1
fi
version="$("$clang_tidy" --version | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -n1)"
if [ "$version" != "$wanted_major" ]; then
  echo "tidy.sh: skipped: $clang_tidy is version '$version'; the tree is checked with clang-tidy $wanted_major"
  exit 77
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy.sh: $build/compile_commands.json not found; configure first (cmake --preset default)" >&2
  exit 1
fi

# A copy of the compile database without the CUDA entries. (The unity sources are checked as CMake
# made them: merging several into one unit saves time but puts files side by side that the build
# never compiles together, whose file-local names may clash.) The precompiled test header is
# included from a copy beside that database: next to the original, clang would find GCC's .gch and
# refuse it.
work="$build/tidy"
rm -rf "$work"
mkdir -p "$work"
python3 - "$build/compile_commands.json" "$work" <<'PY'
import json, os, re, shutil, sys
source, work = sys.argv[1], sys.argv[2]
build = os.path.dirname(source)
kept = []
for entry in json.load(open(source)):
    # CUDA, and the precompiled test header's own unit (only includes; its headers are checked
    # with the suites that include them).
    if entry["file"].endswith((".cu", "cmake_pch.hxx.cxx")):
        continue
    kept.append(entry)
for entry in kept:
    # GCC-only options clang does not know (GCC-only warning flags are answered by the
    # -Wno-unknown-warning-option below).
    command = re.sub(r" -fvect-cost-model=\S+", "", entry["command"])
    for header in set(re.findall(r"-include (\S+cmake_pch\.hxx)(?=\s)", command)):
        copy = os.path.join(work, "pch", os.path.relpath(header, build))
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        shutil.copyfile(header, copy)
        command = command.replace(f"-include {header} ", f"-include {copy} ")
    entry["command"] = command
json.dump(kept, open(os.path.join(work, "compile_commands.json"), "w"), indent=1)
print(f"tidy.sh: {len(kept)} compile commands")
PY

folders='bench|core|examples|plugins|python/src|sdk|tests|tools'
log="$work/findings.txt"
status=0
"$run_clang_tidy" -clang-tidy-binary "$clang_tidy" -p "$work" -j "$jobs" -quiet \
  -header-filter "^$root/($folders)/" -extra-arg=-Wno-unknown-warning-option >"$log" 2>&1 || status=$?
# run-clang-tidy asks for colour; the escapes are stripped before reading the findings.
findings="$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^/[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u || true)"
if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
  if [ -n "$findings" ]; then
    echo "tidy.sh: clang-tidy findings (fix them, or NOLINT(check) with the reason for a false positive):"
    echo "$findings" | sed "s|^$root/||"
  else
    sed 's/\x1b\[[0-9;]*m//g' "$log"
  fi
  echo "tidy.sh: failed (full output: $log)"
  exit 1
fi
echo "tidy.sh: clean"
