#!/usr/bin/env bash
# Makes the Python environment the bindings are built and tested in: a venv at build-python/venv
# with the PyPI packages the Python build and tests use (nanobind, scikit-build-core, numpy,
# pytest, safetensors; never torch).
# Idempotent: an existing venv with every package is left as it is. Prints the venv's python.
#   scripts/python-env.sh            -> build-python/venv/bin/python
set -euo pipefail
cd "$(dirname "$0")/.."

venv="build-python/venv"
packages=(nanobind scikit-build-core numpy pytest safetensors)
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p build-python
  python3 -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import nanobind, scikit_build_core, numpy, pytest, safetensors" 2>/dev/null; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >&2
fi
echo "$PWD/$venv/bin/python"
