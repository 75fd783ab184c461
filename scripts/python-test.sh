#!/usr/bin/env bash
# The Python package's test stage: `pip install .` into a fresh venv, exactly as a user
# would, then the pytest suite (tests/python) and the Python tutorial examples against that install.
# PyPI packages only: scikit-build-core and nanobind (pip's build environment), numpy, pytest and
# safetensors (the checkpoint test reads a consolidated file with it).
#   scripts/python-test.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."

venv="build-python/test-venv"
rm -rf "$venv"
mkdir -p build-python
python3 -m venv "$venv"
echo "== python-test.sh: pip install .[test] into a fresh venv ($venv)"
# The package builds in build-wheel/, beside build/ and at its depth, with CMake's default
# generator (as the presets use) rather than the Ninja that scikit-build-core picks: with
# CCACHE_BASEDIR at the repository root (scripts/test.sh), every compile command then reads exactly as
# the default preset's (same flags, same paths relative to the same depth), and ccache hands the
# default build's objects over instead of compiling the core and the plugins a second time.
# The package build uses both cores unless the caller says otherwise.
rm -rf build-wheel
CMAKE_GENERATOR="${CMAKE_GENERATOR:-Unix Makefiles}" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -C build-dir=build-wheel ".[test]"

# The configuration of whoever runs this must not change what is tested; and no plugin path is set,
# so the installed package must find its plugins by itself.
unset TESSERA_CONFIG TESSERA_PLUGIN_PATH TESSERA_LOG_LEVEL TESSERA_THREADS TESSERA_COLL TESSERA_TRACE
# Run from outside the source tree, so `import tessera` can only mean the installed package.
cd tests/python
"../../$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
