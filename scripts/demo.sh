#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the main demo (`tessera tour`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target tessera_cli
# The trace goes into the build tree so the demo leaves the checkout clean.
./build/bin/tessera tour --trace build/tessera-trace.json
