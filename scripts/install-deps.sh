#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera's build, tests and benchmarks need.
# Idempotent: when everything is present it prints nothing and changes nothing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libboost-dev libboost-graph-dev
  # Boost.Context: the coroutines that run each rank's program in ts::spawn.
  libboost-context-dev
  libspdlog-dev libfmt-dev
  # OpenBLAS: only bench_matmul's yardstick (the CPU backend computes its own products).
  libopenblas-dev
  doctest-dev
  libtomlplusplus-dev
  nlohmann-json3-dev
  libdlpack-dev
  libcli11-dev
  libbenchmark-dev
  # scripts/test.sh compiles through ccache: the python stage's `pip install .` reuses the plugin
  # objects the default stage compiled (same compiler and flags) instead of compiling them again.
  ccache
  # The world across processes (plugins/transport-mpi, the MPI tests): Open MPI.
  libopenmpi-dev openmpi-bin
  # The Python package (scripts/python-test.sh): venvs and the headers its module compiles against.
  python3 python3-venv python3-dev
  # The fuzzers (scripts/fuzz.sh): clang, and libFuzzer with clang's sanitizer runtimes.
  clang libclang-rt-14-dev
  # The format.check test and scripts/format.sh: the tree is formatted by Debian 12's clang-format 14.
  clang-format
  # scripts/tidy.sh (the tidy stage of scripts/test.sh): clang-tidy 14 and its run-clang-tidy.
  clang-tidy
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
