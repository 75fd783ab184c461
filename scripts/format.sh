#!/usr/bin/env bash
# Formats every C, C++ and CUDA source of the repository in place with clang-format 14 (the
# version Debian 12 ships; the format.check test checks the same folders and extensions).
#   scripts/format.sh            the whole tree
#   scripts/format.sh FILE...    only those files
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format="$(command -v clang-format-14 || command -v clang-format || true)"
if [ -z "$clang_format" ]; then
  echo "format.sh: clang-format not found; scripts/install-deps.sh installs it" >&2
  exit 1
fi
if [ $# -gt 0 ]; then
  "$clang_format" -i --style=file "$@"
  exit 0
fi
find bench core examples plugins python/src sdk tests tools -type f \
  \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 |
  xargs -0 "$clang_format" -i --style=file
