#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, run the main demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target quickstart
./build/bin/quickstart
